CREATE FULLTEXT INDEX ON docs (title, body);
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, 'alpha') AND year > 2000 AND title <> 'beta' ORDER BY score() DESC LIMIT 2;
