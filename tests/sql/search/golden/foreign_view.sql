EXPLAIN SELECT id, score() FROM plain WHERE MATCH(body, 'alpha beta') ORDER BY score() DESC LIMIT 2;
