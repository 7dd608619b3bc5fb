CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, 'alpha') ORDER BY id LIMIT 2;
