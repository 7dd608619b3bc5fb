CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true);
SET fts.force_plan = 'flat_scan';
EXPLAIN SELECT id, score() FROM docs WHERE MATCH(body, 'alpha beta') ORDER BY score() DESC LIMIT 5;
