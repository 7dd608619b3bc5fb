"""Statements that search: MATCH and ``score()`` lowered to the planner's searches
(``lower_statement``: the fast path ``lower_select``, the general plan ``lower_marks``),
their templates by shape, answers made without DataFusion (``direct_groups``), text
functions, and ``execute``, which runs them and the project's own statements."""
