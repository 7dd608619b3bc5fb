"""Thrift compact-protocol integers and the Parquet page tables' layout, compiled in line
where parquet_values.pyx reads page bodies (described in parquet_thrift.pyx)."""

from libc.stdint cimport int64_t, uint8_t, uint64_t

cdef enum:
    # Columns of the page-header table that ``page_headers`` fills.
    H_LEN = 0
    H_TYPE = 1
    H_USIZE = 2
    H_CSIZE = 3
    H_HAS_CRC = 4
    H_CRC = 5
    H_VALUES = 6
    H_ENCODING = 7
    H_NULLS = 8
    H_DEF_BYTES = 9
    H_REP_BYTES = 10
    H_COMPRESSED = 11
    H_DEF_ENCODING = 12
    H_FIELDS = 13

cdef enum:
    # Page types.
    DATA_PAGE = 0
    INDEX_PAGE = 1
    DICTIONARY_PAGE = 2
    DATA_PAGE_V2 = 3

cdef enum:
    # Columns of the span table ``page_spans`` fills: where each page's definition levels
    # and values lie in the buffer of raw pages, whether its values are compressed (and
    # to how many bytes), what its CRC covers, and its header's counts.
    S_LEV_LO = 0
    S_LEV_HI = 1
    S_VAL_LO = 2
    S_VAL_HI = 3
    S_USIZE = 4
    S_PACKED = 5
    S_V1 = 6
    S_VALUES = 7
    S_ENCODING = 8
    S_HAS_CRC = 9
    S_CRC = 10
    S_CRC_LO = 11
    S_CRC_HI = 12
    S_FIELDS = 13

cdef enum:
    # Why a page cannot be read (the second value ``page_spans`` returns).
    BAD_HEADER = 1
    NOT_DATA = 2
    LEVELS_NOT_RLE = 3


cdef inline int64_t uvarint(const uint8_t* buf, int64_t pos, int64_t end, int64_t* value) noexcept nogil:
    """The position after the unsigned LEB128 at ``pos`` (its value into ``value``);
    -1 (and value 0) if damaged."""
    cdef uint64_t v = 0, b
    cdef int shift = 0
    while pos < end and shift < 64:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            value[0] = <int64_t>v
            return pos
        shift += 7
    value[0] = 0
    return -1


cdef inline int64_t zigzag(int64_t v) noexcept nogil:
    """The signed integer a zigzag-encoded one stands for."""
    return <int64_t>((<uint64_t>v >> 1) ^ (0 - (<uint64_t>v & 1)))
