"""The kinds of a term kernel's slots (the conjunction's, the disjunctions' too), visible
to Python (``from datafusion_fts.kernels.conjunction import REQUIRED``)."""

cpdef enum:
    REQUIRED = 0
    OPTIONAL = 1
    EXCLUDED = 2
