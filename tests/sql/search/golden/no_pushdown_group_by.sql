CREATE FULLTEXT INDEX ON docs (body);
EXPLAIN SELECT year, count(*) FROM docs WHERE MATCH(body, 'alpha') GROUP BY year ORDER BY year LIMIT 2;
