CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true);
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(title, 'alpha beta') AND (MATCH(body, 'beta') OR MATCH(body, '"alpha beta"')) AND NOT MATCH(body, 'gamma') ORDER BY score() DESC LIMIT 4;
