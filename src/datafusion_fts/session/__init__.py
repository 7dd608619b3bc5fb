"""The DataFusion session kept in step with the database (docs/design.md: "Managed tables
in DataFusion", "Tables indexed in place"): the session's schema provider, where a
managed table's name resolves (``catalog.py``); the tables' views in it
(``table_views.py``); the files and stores of the session's own tables
(``sources.py``, ``stores.py``); the tables DataFusion makes from a definition
(``defined_tables.py``) and values as their columns declare them
(``declared_types.py``). SQL reads the tables through it; nothing here parses SQL."""
