"""One column's terms answered by the document-at-a-time kernels: the query shapes they take
(``term_slots``) and their top-k over a segment set's parts (``term_topk``), which
:class:`..indexed_search.IndexedSearch` and prepared searches run."""
