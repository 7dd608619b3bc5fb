"""A database's tables (docs/design.md: "The Python API"; "Concurrency"): the state its
readers see (:mod:`.table_state`) and its one writer (:mod:`.writer`), which
``database.py`` wires together with the store, the logs and the session."""
