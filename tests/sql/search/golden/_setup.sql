CREATE TABLE docs (id BIGINT, title VARCHAR, body VARCHAR, year INT);
INSERT INTO docs VALUES
  (1, 'alpha', 'alpha beta', 1990),
  (2, 'beta', 'beta gamma', 1995),
  (3, 'gamma', 'alpha alpha delta', 2001),
  (4, 'delta', 'delta', 2005),
  (5, 'alpha beta', 'gamma alpha beta', 2010),
  (6, 'epsilon', 'epsilon beta alpha', 2015),
  (7, 'beta', 'alpha', 2020),
  (8, 'gamma delta', 'beta beta beta', 1985);
CREATE VIEW meta AS SELECT column1 AS id, column2 AS category FROM (VALUES (1, 'odd'), (2, 'even'), (3, 'odd'), (4, 'even'), (5, 'odd'));
CREATE VIEW plain AS SELECT id, title, body FROM docs WHERE id <= 6;
