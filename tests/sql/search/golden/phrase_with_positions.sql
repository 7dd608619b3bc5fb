CREATE FULLTEXT INDEX ON docs (body) WITH (positions = true);
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, '"alpha beta"~1') ORDER BY score() DESC LIMIT 5;
