CREATE FULLTEXT INDEX ON docs (body);
SET fts.force_plan = 'indexed';
EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'alpha');
