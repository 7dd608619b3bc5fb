CREATE FULLTEXT INDEX ON docs (title, body);
EXPLAIN WITH best AS (SELECT id, score() AS s FROM docs WHERE MATCH(body, 'alpha') ORDER BY s DESC LIMIT 3)
SELECT best.id, best.s FROM best WHERE best.id IN (SELECT id FROM docs WHERE MATCH(title, 'beta'));
