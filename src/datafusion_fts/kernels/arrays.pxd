"""Result arrays of the kernels: a kernel allocates its results at their largest size
before its loops (it cannot allocate without the GIL) and trims them after."""


cdef inline object fitted(object arr, Py_ssize_t k):
    """``arr[:k]`` as an array of its own, ``arr`` itself when possible: copied when short
    (cheaper than a resize), else shrunk in place, which needs no new pages (the copies of
    a large result cost more in page faults than the loop that filled it). Nothing may
    view ``arr`` (release the kernel's memoryviews of it first)."""
    if k == arr.shape[0]:
        return arr
    if k < 4096:
        return arr[:k].copy()
    arr.resize(k, refcheck=False)
    return arr
