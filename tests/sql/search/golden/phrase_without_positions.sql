CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, '"alpha beta"') ORDER BY score() DESC LIMIT 5;
