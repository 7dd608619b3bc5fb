"""The arrays of a kernel called per query and segment part, read as buffers rather than
typed memoryviews: a memoryview argument costs ~0.25 us to acquire (Cython builds an
object and parses the format), a buffer ~0.05 us, and the search kernels take two dozen
arrays a call (a rare term's kernel call took 8 us instead of numba's 4).

Each getter checks what a typed memoryview would: one dimension, C-contiguous, the
item's kind and size, writable when it writes. The buffers stay held until
:func:`release` (in a ``finally``), as a memoryview's would.
"""

from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_FORMAT, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport int64_t, uint8_t, uint32_t

cdef enum:
    MAX_ARRAYS = 24


cdef struct Arrays:
    # The buffers a call holds (``n`` of them).
    Py_buffer views[MAX_ARRAYS]
    int n


cdef inline char _kind(char f) noexcept:
    """A buffer format character's kind: 'i' signed, 'u' unsigned, 'f' float, 0 other."""
    if f == b'b' or f == b'h' or f == b'i' or f == b'l' or f == b'q' or f == b'n':
        return b'i'
    if f == b'B' or f == b'H' or f == b'I' or f == b'L' or f == b'Q' or f == b'N':
        return b'u'
    if f == b'e' or f == b'f' or f == b'd':
        return b'f'
    return 0


cdef inline void* _data(Arrays* held, object a, char kind, Py_ssize_t itemsize, bint writable, Py_ssize_t* length,
                        str name) except? NULL:
    """The data of ``a``, a 1-d C-contiguous array of ``name`` (``length``: its length)."""
    cdef Py_buffer* view
    if held.n == MAX_ARRAYS:
        raise RuntimeError("a kernel holds too many arrays")
    view = &held.views[held.n]
    PyObject_GetBuffer(a, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (PyBUF_WRITABLE if writable else 0))
    held.n += 1
    if view.ndim != 1 or view.itemsize != itemsize or view.format[0] == 0 or view.format[1] != 0 or \
            _kind(view.format[0]) != kind:
        raise ValueError(f"a kernel's argument is not a one-dimensional array of {name}: "
                         f"{view.ndim} dimensions of {getattr(a, 'dtype', type(a).__name__)}")
    if length != NULL:
        length[0] = view.shape[0]
    return view.buf


cdef inline const uint32_t* u32(Arrays* held, object a, Py_ssize_t* length=NULL) except? NULL:
    return <const uint32_t*>_data(held, a, b'u', 4, False, length, "uint32")


cdef inline const uint8_t* u8(Arrays* held, object a, Py_ssize_t* length=NULL) except? NULL:
    return <const uint8_t*>_data(held, a, b'u', 1, False, length, "uint8")


cdef inline const int64_t* i64(Arrays* held, object a, Py_ssize_t* length=NULL) except? NULL:
    return <const int64_t*>_data(held, a, b'i', 8, False, length, "int64")


cdef inline const double* f64(Arrays* held, object a, Py_ssize_t* length=NULL) except? NULL:
    return <const double*>_data(held, a, b'f', 8, False, length, "float64")


cdef inline uint32_t* u32_out(Arrays* held, object a) except? NULL:
    return <uint32_t*>_data(held, a, b'u', 4, True, NULL, "uint32")


cdef inline int64_t* i64_out(Arrays* held, object a) except? NULL:
    return <int64_t*>_data(held, a, b'i', 8, True, NULL, "int64")


cdef inline double* f64_out(Arrays* held, object a) except? NULL:
    return <double*>_data(held, a, b'f', 8, True, NULL, "float64")


cdef inline void release(Arrays* held) noexcept:
    """Release the buffers ``held``."""
    cdef int i
    for i in range(held.n):
        PyBuffer_Release(&held.views[i])
    held.n = 0
