"""Segments and what reads them: postings and their codec (``segment``), a table's segments
as one (``segment_set``, ``shares``, ``term_statistics``), BM25 (``bm25``), expansions of
prefix and fuzzy terms, tiered merging (``tiers``); building in ``building/``, the fresh tier
in ``fresh/``."""
