CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT id, score() FROM docs WHERE (MATCH(body, 'delta') OR year < 1990) AND year <> 2005 ORDER BY score() DESC LIMIT 3;
