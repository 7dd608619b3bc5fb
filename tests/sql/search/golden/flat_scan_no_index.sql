EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 3;
