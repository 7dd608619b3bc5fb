CREATE FULLTEXT INDEX ON docs (body);
INSERT INTO docs VALUES (9, 'zeta', 'alpha zeta', 2021), (10, 'eta', 'eta', 2022);
OPTIMIZE docs;
EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 2;
