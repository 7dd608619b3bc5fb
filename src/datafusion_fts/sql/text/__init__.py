"""A statement's text as written: its kinds from tokens (``classify``), sqlglot's parse of
it (``dialect``), edits placed by position (``splice``), what a SELECT reads
(``select_sources``) and statements by shape (``shapes``). No lowering, no database."""
