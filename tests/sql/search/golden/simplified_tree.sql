CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, '+(alpha beta)') AND MATCH(body, '+delta') AND NOT MATCH(body, 'gamma OR epsilon') ORDER BY score() DESC LIMIT 3;
