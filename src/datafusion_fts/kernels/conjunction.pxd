"""What the term kernels share about their slots (the conjunction's, the disjunctions'
too): the slot kinds, visible to Python (``from datafusion_fts.kernels.conjunction import
REQUIRED``), and the slot arguments every one of them takes, read once per call."""

from libc.stdint cimport int64_t

from datafusion_fts.kernels.buffers cimport Arrays, f64, i64

cpdef enum:
    REQUIRED = 0
    OPTIONAL = 1
    EXCLUDED = 2


cdef struct Slots:
    # A segment part's term index (postings and blocks by term id), its rows' length
    # norms, and per slot its term id, kind, weight and multiplier; the included
    # (``n_inc``) and deleted (``n_del``) local rows, ascending.
    const int64_t* post_offsets
    const int64_t* block_offsets
    const double* norms
    const int64_t* tids
    const int64_t* kinds
    const double* weights
    const double* mults
    const int64_t* included
    const int64_t* deleted
    Py_ssize_t n
    Py_ssize_t n_inc
    Py_ssize_t n_del


cdef inline Slots slots_of(Arrays* held, object post_offsets, object block_offsets, object norms, object tids,
                           object kinds, object weights, object mults, object included, object deleted) except *:
    """The slot arguments of a term kernel's call as :class:`Slots` (``n``: the slots, as
    many as ``kinds``), their buffers ``held`` while it runs."""
    cdef Slots s
    s.post_offsets, s.block_offsets = i64(held, post_offsets), i64(held, block_offsets)
    s.norms, s.tids, s.kinds = f64(held, norms), i64(held, tids), i64(held, kinds, &s.n)
    s.weights, s.mults = f64(held, weights), f64(held, mults)
    s.included, s.deleted = i64(held, included, &s.n_inc), i64(held, deleted, &s.n_del)
    return s
