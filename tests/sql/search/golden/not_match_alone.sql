CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT id, score() FROM docs WHERE NOT MATCH(body, 'alpha');
