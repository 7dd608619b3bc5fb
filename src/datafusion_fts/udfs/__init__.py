"""Functions registered on DataFusion sessions: the ``fts_search`` table function."""

from .fts_search import install

__all__ = ["install"]
