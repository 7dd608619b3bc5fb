CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT d.id, m.category, score() FROM docs d JOIN meta m ON d.id = m.id WHERE MATCH(d.body, 'alpha') ORDER BY score() DESC LIMIT 2;
