CREATE FULLTEXT INDEX ON docs (title, body);
EXPLAIN SELECT id FROM docs WHERE MATCH((title, body), '+alph* -gama~1 "beta"^2 title:delta') LIMIT 3;
