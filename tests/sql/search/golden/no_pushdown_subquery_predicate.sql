CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, 'alpha') AND id IN (SELECT id FROM meta WHERE category = 'odd') ORDER BY score() DESC LIMIT 2;
