"""The compiled kernels: every loop over tokens, postings, blocks, pages or rows that no
pyarrow/numpy primitive expresses (docs/design.md: "Kernels").

They are Cython modules compiled to C when the package is built or installed
(``setup.py``), so a query never waits for a compiler and a process that imports the
package loads no compiler either. Each module holds one concern; what another module
calls in its inner loops is declared in the module's ``.pxd`` file (and compiled in line
where it is called).

Conventions, held by every kernel:
- Arguments and results are C-contiguous numpy arrays of the dtypes their signatures
  name (typed memoryviews): the shapes are written once, in the signature. The
  per-query search kernels, which take two dozen arrays per segment part, read them as
  plain buffers with the same checks instead (``buffers.pxd``: ~0.05 us an array, where a
  memoryview costs ~0.25 us).
- A kernel allocates its results while holding the GIL and runs its loops without it
  (``with nogil``), so search threads run in parallel.
- Results are exactly those of the algorithms the docstrings describe: integer
  arithmetic on non-negative values, float64 in the order written (no fast-math, no
  fused multiply-add), so every plan's scores are bit-identical.
"""
