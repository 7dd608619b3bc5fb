"""Functions registered on DataFusion sessions: the ``fts_search`` table function and the
text functions (``highlight``, ``snippet``, ``fts_match``, ``fts_tokenize``)."""

from .install import FUNCTIONS, install

__all__ = ["FUNCTIONS", "install"]
