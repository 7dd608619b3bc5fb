"""The postings format's block constants, shared by the kernels that build, encode and
read blocks (``cimport``) and visible to Python (``from datafusion_fts.kernels.invert
import BLOCK_SIZE``)."""

cpdef enum:
    # Postings per block: a term's postings are cut in blocks of this many (the last one
    # partial), each with its last row and impact points, encoded and skipped as a unit.
    BLOCK_SIZE = 128
    # (tf, dl) points each block keeps to bound its best score (see block_metadata).
    BLOCK_IMPACTS = 4
    # A point's tf and dl are kept in 16 bits: a tf of IMPACT_MAX stands for any tf from it
    # up (bm25.block_bound_factors bounds it by the limit of BM25's tf factor), and a longer
    # length is kept as IMPACT_MAX (shorter than it was: the bound only loosens). 8 bytes a
    # block instead of 16: at 1M rows with positions the index is 165 -> 157 MB.
    IMPACT_MAX = 0xFFFF
