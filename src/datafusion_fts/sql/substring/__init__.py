"""The user's own substring predicates (LIKE, ILIKE, regular expressions) answered over an
n-gram index's candidate rows: found in the statement (``lower_substring``), remembered by
shape (``substring_shapes``) and run (``run_substring``)."""
