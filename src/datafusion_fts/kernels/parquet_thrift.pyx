# distutils: extra_compile_args = -fwrapv
"""The few Parquet metadata structures a row fetch needs, read from Thrift's compact
protocol by compiled loops: where each column chunk's offset index lies (the footer),
where each data page starts (the offset index), and what each page header says.

pyarrow parses the footer too, but exposes neither the offset index nor page headers:
without them, fetching one row means decoding its whole row group. Every read here is
bounds-checked against the bytes given (a damaged file yields an error code, never a
read outside them); field ids are those of ``parquet.thrift``. Integers a damaged file
makes overflow wrap around (``-fwrapv``), never undefined behaviour.
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

# The tables' columns and the codes (parquet_thrift.pxd), for Python callers too.
globals().update(
    H_LEN=H_LEN, H_TYPE=H_TYPE, H_USIZE=H_USIZE, H_CSIZE=H_CSIZE, H_HAS_CRC=H_HAS_CRC, H_CRC=H_CRC,
    H_VALUES=H_VALUES, H_ENCODING=H_ENCODING, H_NULLS=H_NULLS, H_DEF_BYTES=H_DEF_BYTES,
    H_REP_BYTES=H_REP_BYTES, H_COMPRESSED=H_COMPRESSED, H_DEF_ENCODING=H_DEF_ENCODING, H_FIELDS=H_FIELDS,
    DATA_PAGE=DATA_PAGE, INDEX_PAGE=INDEX_PAGE, DICTIONARY_PAGE=DICTIONARY_PAGE, DATA_PAGE_V2=DATA_PAGE_V2,
    S_LEV_LO=S_LEV_LO, S_LEV_HI=S_LEV_HI, S_VAL_LO=S_VAL_LO, S_VAL_HI=S_VAL_HI, S_USIZE=S_USIZE,
    S_PACKED=S_PACKED, S_V1=S_V1, S_VALUES=S_VALUES, S_ENCODING=S_ENCODING, S_HAS_CRC=S_HAS_CRC, S_CRC=S_CRC,
    S_CRC_LO=S_CRC_LO, S_CRC_HI=S_CRC_HI, S_FIELDS=S_FIELDS,
    BAD_HEADER=BAD_HEADER, NOT_DATA=NOT_DATA, LEVELS_NOT_RLE=LEVELS_NOT_RLE,
)

cdef enum:
    # Compact-protocol type codes.
    _TRUE = 1
    _FALSE = 2
    _BYTE = 3
    _I16 = 4
    _I32 = 5
    _I64 = 6
    _DOUBLE = 7
    _BINARY = 8
    _LIST = 9
    _SET = 10
    _MAP = 11
    _STRUCT = 12
    _ELEMENT_BOOL = 13  # a boolean inside a list or map: a byte of its own
    _MAX_DEPTH = 32  # nesting a skipped value may have (parquet's own structures need < 8)
    _IN_STRUCT = 0
    _IN_LIST = 1
    _IN_MAP = 2
    _RLE = 3  # (the Encoding of RLE definition levels)


cdef inline int64_t _field_header(const uint8_t* buf, int64_t pos, int64_t end, int64_t last_id,
                                  int64_t* fid, int64_t* ftype) noexcept nogil:
    """The position after a struct's next field header (its id and type into ``fid`` and
    ``ftype``; type 0 ends the struct); -1 if damaged."""
    cdef int64_t b, v
    fid[0] = 0
    ftype[0] = 0
    if pos < 0 or pos >= end:
        return -1
    b = buf[pos]
    pos += 1
    if b & 0x0F == 0:
        return pos
    ftype[0] = b & 0x0F
    if b >> 4:
        fid[0] = last_id + (b >> 4)
        return pos
    pos = uvarint(buf, pos, end, &v)
    fid[0] = zigzag(v)
    return pos


cdef inline int64_t _list_header(const uint8_t* buf, int64_t pos, int64_t end, int64_t* size,
                                 int64_t* etype) noexcept nogil:
    """The position after a list's or set's header (its size and element type into
    ``size`` and ``etype``); -1 if damaged."""
    cdef int64_t b
    size[0] = 0
    etype[0] = 0
    if pos < 0 or pos >= end:
        return -1
    b = buf[pos]
    pos += 1
    size[0] = b >> 4
    if size[0] == 15:
        pos = uvarint(buf, pos, end, size)
    etype[0] = b & 0x0F
    return pos


cdef int64_t _skip(const uint8_t* buf, int64_t pos, int64_t end, int64_t ctype, int64_t depth) noexcept nogil:
    """The position after a value of compact type ``ctype`` (-1 if damaged). Nested values
    are walked with an explicit stack, at most ``_MAX_DEPTH - depth`` deep (a damaged
    file's nesting costs no C stack)."""
    cdef int64_t kind[_MAX_DEPTH]
    cdef int64_t left[_MAX_DEPTH]  # a struct's last field id; else values left
    cdef int64_t key_type[_MAX_DEPTH]
    cdef int64_t value_type[_MAX_DEPTH]
    cdef int64_t top = -1, t = ctype, n, element, kind_byte, fid
    while True:
        if pos < 0:
            return -1
        if t == _STRUCT or t == _LIST or t == _SET or t == _MAP:
            top += 1
            if top + depth >= _MAX_DEPTH:
                return -1
            if t == _STRUCT:
                kind[top], left[top] = _IN_STRUCT, 0
            elif t == _MAP:
                pos = uvarint(buf, pos, end, &n)
                kind[top], left[top] = _IN_MAP, 2 * n
                key_type[top], value_type[top] = 0, 0  # (no entries: never read)
                if n > 0:
                    if pos < 0 or pos >= end:
                        return -1
                    kind_byte = buf[pos]
                    pos += 1
                    key_type[top], value_type[top] = kind_byte >> 4, kind_byte & 0x0F
            else:
                pos = _list_header(buf, pos, end, &n, &element)
                kind[top], left[top], key_type[top] = _IN_LIST, n, element
        elif t == _TRUE or t == _FALSE:  # a field's boolean lives in its header
            pass
        elif t == _BYTE or t == _ELEMENT_BOOL:
            pos = pos + 1 if pos + 1 <= end else -1
        elif t == _I16 or t == _I32 or t == _I64:
            pos = uvarint(buf, pos, end, &n)
        elif t == _DOUBLE:
            pos = pos + 8 if pos + 8 <= end else -1
        elif t == _BINARY:
            pos = uvarint(buf, pos, end, &n)
            pos = pos + n if pos >= 0 and 0 <= n <= end - pos else -1
        else:
            return -1
        if pos < 0:
            return -1
        # The next value to skip, closing the containers that are done.
        while True:
            if top < 0:
                return pos
            if kind[top] == _IN_STRUCT:
                pos = _field_header(buf, pos, end, left[top], &fid, &t)
                if pos < 0:
                    return -1
                if t == 0:
                    top -= 1
                    continue
                left[top] = fid
                break
            if left[top] <= 0:
                top -= 1
                continue
            left[top] -= 1
            if kind[top] == _IN_LIST:
                t = key_type[top]
            else:  # a map alternates keys and values
                t = value_type[top] if left[top] % 2 == 0 else key_type[top]
            if t == _TRUE or t == _FALSE:
                t = _ELEMENT_BOOL
            break


cdef int64_t _int_fields(const uint8_t* buf, int64_t pos, int64_t end, int64_t* out, int64_t n_out) noexcept nogil:
    """Read a struct whose wanted fields are integers or booleans: field id f (< ``n_out``)
    goes to ``out[f]``; other fields are skipped. Returns the position after it."""
    cdef int64_t fid = 0, ftype, v
    while True:
        pos = _field_header(buf, pos, end, fid, &fid, &ftype)
        if pos < 0 or ftype == 0:
            return pos
        if 0 < fid < n_out and (ftype == _I16 or ftype == _I32 or ftype == _I64):
            pos = uvarint(buf, pos, end, &v)
            out[fid] = zigzag(v)
        elif 0 < fid < n_out and (ftype == _TRUE or ftype == _FALSE):
            out[fid] = 1 if ftype == _TRUE else 0
        else:
            pos = _skip(buf, pos, end, ftype, 1)


cdef bint _page_header(const uint8_t* buf, int64_t n_buf, int64_t start, int64_t end, int64_t* row) noexcept nogil:
    """Parse the page header at ``start`` (within ``end``) into ``row`` (columns ``H_*``);
    False if it is damaged."""
    cdef int64_t top[5]
    cdef int64_t sub[9]
    cdef int64_t j, pos = start, has_crc = 0, fid = 0, ftype, v
    for j in range(5):
        top[j] = -1
    row[H_HAS_CRC] = 0
    row[H_VALUES] = -1
    row[H_ENCODING] = -1
    row[H_NULLS] = -1
    row[H_DEF_BYTES] = 0
    row[H_REP_BYTES] = 0
    row[H_COMPRESSED] = 1
    row[H_DEF_ENCODING] = -1
    if end > n_buf:  # (a header said to lie past the bytes given)
        return False
    # (has_crc: any crc value is valid, -1 included: its presence is what counts)
    while True:
        pos = _field_header(buf, pos, end, fid, &fid, &ftype)
        if pos < 0 or ftype == 0:
            break
        if 1 <= fid <= 4 and ftype == _I32:
            pos = uvarint(buf, pos, end, &v)
            top[fid] = zigzag(v)
            has_crc |= fid == 4
        elif ftype == _STRUCT and (fid == 5 or fid == 7 or fid == 8):
            for j in range(9):
                sub[j] = -1
            pos = _int_fields(buf, pos, end, sub, 9)
            row[H_VALUES] = sub[1]
            if fid == 5:  # DataPageHeader
                row[H_ENCODING] = sub[2]
                row[H_DEF_ENCODING] = sub[3]
            elif fid == 7:  # DictionaryPageHeader
                row[H_ENCODING] = sub[2]
            else:  # DataPageHeaderV2
                row[H_NULLS] = sub[2]
                row[H_ENCODING] = sub[4]
                row[H_DEF_BYTES] = sub[5]
                row[H_REP_BYTES] = sub[6]
                row[H_COMPRESSED] = 0 if sub[7] == 0 else 1
        else:
            pos = _skip(buf, pos, end, ftype, 0)
    if pos < 0 or top[1] < 0 or top[2] < 0 or top[3] < 0 or top[3] > end - pos:
        return False
    if row[H_DEF_BYTES] < 0 or row[H_REP_BYTES] < 0:
        return False
    if row[H_DEF_BYTES] + row[H_REP_BYTES] > top[3]:
        return False
    row[H_LEN] = pos - start
    row[H_TYPE] = top[1]
    row[H_USIZE] = top[2]
    row[H_CSIZE] = top[3]
    row[H_HAS_CRC] = has_crc
    row[H_CRC] = top[4] & 0xFFFFFFFFLL
    return True


cdef _check_table(const int64_t[:, ::1] table, Py_ssize_t rows, Py_ssize_t columns):
    """Refuse a table of another shape than ``rows`` x ``columns`` (a caller's error)."""
    if table.shape[0] != rows or table.shape[1] != columns:
        raise ValueError(f"a table of {rows} x {columns} wanted, not {table.shape[0]} x {table.shape[1]}")


def page_headers(const uint8_t[::1] buf, const int64_t[::1] starts, const int64_t[::1] ends,
                 int64_t[:, ::1] out) -> int:
    """Parse the page header at each ``starts[i]`` (within ``ends[i]``) into row i of
    ``out`` (columns ``H_*``). Returns the index of the first damaged header, or -1."""
    cdef int64_t n = starts.shape[0], i, bad = -1
    if ends.shape[0] != n:
        raise ValueError("as many ends as starts wanted")
    _check_table(out, n, H_FIELDS)
    with nogil:
        for i in range(n):
            if not _page_header(&buf[0], buf.shape[0], starts[i], ends[i], &out[i, 0]):
                bad = i
                break
    return bad


cdef bint _offset_index_locations(const uint8_t* buf, int64_t end, int64_t n_groups, int64_t n_columns,
                                  int64_t* offsets, int64_t* lengths) noexcept nogil:
    """:func:`offset_index_locations` on raw pointers (``n_groups`` x ``n_columns``)."""
    cdef int64_t pos = 0, fid = 0, ftype, n, etype, g, gfid, gtype, m, ctype, c, cfid, cft, v
    while True:
        pos = _field_header(buf, pos, end, fid, &fid, &ftype)
        if pos < 0:
            return False
        if ftype == 0:
            return True
        if fid != 4 or ftype != _LIST:
            pos = _skip(buf, pos, end, ftype, 0)
            continue
        pos = _list_header(buf, pos, end, &n, &etype)
        if pos < 0 or n != n_groups or etype != _STRUCT:
            return False
        for g in range(n):  # RowGroup
            gfid = 0
            while True:
                pos = _field_header(buf, pos, end, gfid, &gfid, &gtype)
                if pos < 0:
                    return False
                if gtype == 0:
                    break
                if gfid != 1 or gtype != _LIST:
                    pos = _skip(buf, pos, end, gtype, 1)
                    continue
                pos = _list_header(buf, pos, end, &m, &ctype)
                if pos < 0 or m != n_columns or ctype != _STRUCT:
                    return False
                for c in range(m):  # ColumnChunk
                    cfid = 0
                    while True:
                        pos = _field_header(buf, pos, end, cfid, &cfid, &cft)
                        if pos < 0:
                            return False
                        if cft == 0:
                            break
                        if (cfid == 4 or cfid == 5) and (cft == _I64 or cft == _I32):
                            pos = uvarint(buf, pos, end, &v)
                            if cfid == 4:
                                offsets[g * n_columns + c] = zigzag(v)
                            else:
                                lengths[g * n_columns + c] = zigzag(v)
                        else:
                            pos = _skip(buf, pos, end, cft, 2)


def offset_index_locations(const uint8_t[::1] buf, int64_t n_groups, int64_t n_columns,
                           int64_t[:, ::1] offsets, int64_t[:, ::1] lengths) -> bool:
    """From a serialized FileMetaData, each row group's and column's OffsetIndex position
    and length into ``offsets``/``lengths`` (-1 where absent, both ``n_groups`` x
    ``n_columns``). Returns False if damaged or shaped otherwise."""
    _check_table(offsets, n_groups, n_columns)
    _check_table(lengths, n_groups, n_columns)
    cdef bint ok
    offsets[:, :] = -1
    lengths[:, :] = -1
    with nogil:
        ok = _offset_index_locations(&buf[0], buf.shape[0], n_groups, n_columns, &offsets[0, 0], &lengths[0, 0])
    return ok


cdef int64_t _page_list(const uint8_t* buf, int64_t pos, int64_t end, int64_t n, int64_t* offsets,
                        int64_t* sizes, int64_t* firsts) noexcept nogil:
    """The ``n`` PageLocations of an OffsetIndex into ``offsets``, ``sizes`` and ``firsts``
    (each page after the one before it); the position after them, or -1 if damaged."""
    cdef int64_t loc[4]
    cdef int64_t i
    for i in range(n):
        loc[0], loc[1], loc[2], loc[3] = -1, -1, -1, -1
        pos = _int_fields(buf, pos, end, loc, 4)
        if pos < 0 or loc[1] < 0 or loc[2] <= 0 or loc[3] < 0:
            return -1
        if i and (loc[3] <= firsts[i - 1] or loc[1] < offsets[i - 1] + sizes[i - 1]):
            return -1
        offsets[i], sizes[i], firsts[i] = loc[1], loc[2], loc[3]
    return pos


def page_locations(const uint8_t[::1] buf, int64_t pos, int64_t end) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An OffsetIndex's data pages: (file offsets, sizes with header, first rows within
    the row group); an empty result with size -1 at index 0 when damaged."""
    if not 0 <= end <= buf.shape[0]:
        raise ValueError(f"an end of {end} in {buf.shape[0]} bytes")
    found = None
    cdef int64_t[::1] offsets, sizes, firsts
    cdef const uint8_t* b = &buf[0]
    cdef int64_t fid = 0, ftype, n, etype
    with nogil:
        while True:
            pos = _field_header(b, pos, end, fid, &fid, &ftype)
            if pos < 0 or ftype == 0:
                break
            if fid != 1 or ftype != _LIST:
                pos = _skip(b, pos, end, ftype, 0)
                continue
            pos = _list_header(b, pos, end, &n, &etype)
            if pos < 0 or etype != _STRUCT or n < 0 or n > end - pos:
                pos = -1
                break
            with gil:
                found = np.empty((3, n), dtype=np.int64)
                offsets, sizes, firsts = found[0], found[1], found[2]
            pos = _page_list(b, pos, end, n, &offsets[0], &sizes[0], &firsts[0])
            if pos < 0:
                break
    if pos < 0 or found is None:
        bad = np.full(1, -1, dtype=np.int64)
        return bad, bad, bad
    return found[0], found[1], found[2]


def page_spans(const uint8_t[::1] buf, const int64_t[::1] sizes, const uint8_t[::1] compressed, int64_t max_def,
               int64_t[:, ::1] out) -> tuple[int, int]:
    """Parse the pages laid end to end in ``buf`` (``sizes[i]`` bytes each, header
    included) into row i of ``out`` (columns ``S_*``); ``compressed[i]``: whether page
    i's column chunk has a codec (a bool array). Flat columns only: data pages (v1 or v2)
    without repetition levels. Returns (-1, 0), or (the first bad page, why:
    ``BAD_HEADER``, ``NOT_DATA``, ``LEVELS_NOT_RLE``)."""
    cdef int64_t n = sizes.shape[0], i, bad = -1, why = 0, start, body, levels
    cdef const uint8_t* b = &buf[0]
    cdef int64_t* heads
    cdef int64_t* head
    cdef bint v2
    if compressed.shape[0] != n:
        raise ValueError("a compressed flag per page wanted")
    _check_table(out, n, S_FIELDS)
    heads = <int64_t*>malloc(max(n, 1) * H_FIELDS * sizeof(int64_t))
    if heads == NULL:
        raise MemoryError()
    with nogil:
        start = 0  # (page i's: the sizes before it)
        for i in range(n):
            if not _page_header(b, buf.shape[0], start, start + sizes[i], heads + i * H_FIELDS):
                bad, why = i, BAD_HEADER
                break
            start += sizes[i]
        start = 0
        for i in range(n if bad < 0 else 0):
            head = heads + i * H_FIELDS
            v2 = head[H_TYPE] == DATA_PAGE_V2
            if not (v2 or head[H_TYPE] == DATA_PAGE) or head[H_REP_BYTES] != 0:
                bad, why = i, NOT_DATA
                break
            if max_def > 0 and not v2 and head[H_DEF_ENCODING] != _RLE:
                bad, why = i, LEVELS_NOT_RLE
                break
            body = start + head[H_LEN]
            levels = head[H_DEF_BYTES] if v2 else 0
            out[i, S_LEV_LO] = body if v2 else -1
            out[i, S_LEV_HI] = body + levels if v2 else -1
            out[i, S_VAL_LO] = body + levels
            out[i, S_VAL_HI] = body + head[H_CSIZE]
            out[i, S_USIZE] = head[H_USIZE] - levels
            out[i, S_PACKED] = compressed[i] != 0 and (not v2 or head[H_COMPRESSED] != 0)
            out[i, S_V1] = not v2
            out[i, S_VALUES] = head[H_VALUES]
            out[i, S_ENCODING] = head[H_ENCODING]
            out[i, S_HAS_CRC] = head[H_HAS_CRC]
            out[i, S_CRC] = head[H_CRC]
            out[i, S_CRC_LO] = body
            out[i, S_CRC_HI] = body + head[H_CSIZE]
            start += sizes[i]
    free(heads)
    return bad, why
