CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'alpha') AND MATCH(title, 'beta');
