"""The few Parquet metadata structures a row fetch needs, read from Thrift's compact
protocol by compiled loops: where each column chunk's offset index lies (the footer),
where each data page starts (the offset index), and what each page header says.

pyarrow parses the footer too, but exposes neither the offset index nor page headers:
without them, fetching one row means decoding its whole row group. Every read here is
bounds-checked against the bytes given (a damaged file yields an error code, never a
read outside them); field ids are those of ``parquet.thrift``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Compact-protocol type codes.
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
_MAX_DEPTH = 32  # nesting a skipped value may have (parquet's own structures need < 8)

# Columns of the page-header table that :func:`page_headers` fills.
H_LEN, H_TYPE, H_USIZE, H_CSIZE, H_HAS_CRC, H_CRC = 0, 1, 2, 3, 4, 5
H_VALUES, H_ENCODING, H_NULLS, H_DEF_BYTES, H_REP_BYTES, H_COMPRESSED, H_DEF_ENCODING = 6, 7, 8, 9, 10, 11, 12
H_FIELDS = 13
# Page types.
DATA_PAGE, INDEX_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def uvarint(buf, pos, end):
    """(value, next position) of the unsigned LEB128 at ``pos``; position -1 if damaged."""
    value = np.int64(0)
    shift = 0
    while pos < end and shift < 64:
        b = np.int64(buf[pos])
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
    return np.int64(0), -1


@njit(cache=True, nogil=True)
def zigzag(v):
    return ((v >> 1) & 0x7FFFFFFFFFFFFFFF) ^ -(v & 1)


@njit(cache=True, nogil=True)
def _field_header(buf, pos, end, last_id):
    """(field id, type, next position) of a struct's next field; type 0 ends the struct."""
    if pos < 0 or pos >= end:
        return 0, 0, -1
    b = np.int64(buf[pos])
    pos += 1
    ftype = b & 0x0F
    if ftype == 0:
        return 0, 0, pos
    delta = b >> 4
    if delta:
        return last_id + delta, ftype, pos
    v, pos = uvarint(buf, pos, end)
    return zigzag(v), ftype, pos


@njit(cache=True, nogil=True)
def _list_header(buf, pos, end):
    """(size, element type, next position) of a list or set."""
    if pos < 0 or pos >= end:
        return 0, 0, -1
    b = np.int64(buf[pos])
    pos += 1
    size = b >> 4
    if size == 15:
        size, pos = uvarint(buf, pos, end)
    return size, b & 0x0F, pos


_ELEMENT_BOOL = 13  # a boolean inside a list or map: a byte of its own
_IN_STRUCT, _IN_LIST, _IN_MAP = 0, 1, 2


@njit(cache=True, nogil=True)
def _skip(buf, pos, end, ctype, depth):
    """The position after a value of compact type ``ctype`` (-1 if damaged). Nested
    values are walked with an explicit stack (numba's cache cannot reload a recursive
    function), at most ``_MAX_DEPTH - depth`` deep."""
    kind = np.empty(_MAX_DEPTH, dtype=np.int64)
    left = np.empty(_MAX_DEPTH, dtype=np.int64)  # a struct's last field id; else values left
    key_type = np.empty(_MAX_DEPTH, dtype=np.int64)
    value_type = np.empty(_MAX_DEPTH, dtype=np.int64)
    top = -1
    t = ctype
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
                n, pos = uvarint(buf, pos, end)
                kind[top], left[top] = _IN_MAP, 2 * n
                if n > 0:
                    if pos < 0 or pos >= end:
                        return -1
                    kind_byte = np.int64(buf[pos])
                    pos += 1
                    key_type[top], value_type[top] = kind_byte >> 4, kind_byte & 0x0F
            else:
                n, element, pos = _list_header(buf, pos, end)
                kind[top], left[top], key_type[top] = _IN_LIST, n, element
        elif t == _TRUE or t == _FALSE:  # a field's boolean lives in its header
            pass
        elif t == _BYTE or t == _ELEMENT_BOOL:
            pos = pos + 1 if pos + 1 <= end else -1
        elif t == _I16 or t == _I32 or t == _I64:
            pos = uvarint(buf, pos, end)[1]
        elif t == _DOUBLE:
            pos = pos + 8 if pos + 8 <= end else -1
        elif t == _BINARY:
            n, pos = uvarint(buf, pos, end)
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
                fid, t, pos = _field_header(buf, pos, end, left[top])
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


@njit(cache=True, nogil=True)
def _int_fields(buf, pos, end, out):
    """Read a struct whose wanted fields are integers or booleans: field id f (< len(out))
    goes to ``out[f]``; other fields are skipped. Returns the position after it."""
    fid = 0
    while True:
        fid, ftype, pos = _field_header(buf, pos, end, fid)
        if pos < 0 or ftype == 0:
            return pos
        if 0 < fid < out.shape[0] and (ftype == _I16 or ftype == _I32 or ftype == _I64):
            v, pos = uvarint(buf, pos, end)
            out[fid] = zigzag(v)
        elif 0 < fid < out.shape[0] and (ftype == _TRUE or ftype == _FALSE):
            out[fid] = 1 if ftype == _TRUE else 0
        else:
            pos = _skip(buf, pos, end, ftype, 1)


@njit(cache=True, nogil=True)
def page_headers(buf, starts, ends, out):
    """Parse the page header at each ``starts[i]`` (within ``ends[i]``) into row i of
    ``out`` (columns ``H_*``). Returns the index of the first damaged header, or -1."""
    top = np.empty(5, dtype=np.int64)
    sub = np.empty(9, dtype=np.int64)
    for i in range(starts.shape[0]):
        pos, end = starts[i], ends[i]
        top[:] = -1
        out[i, H_HAS_CRC] = 0
        out[i, H_VALUES] = -1
        out[i, H_ENCODING] = -1
        out[i, H_NULLS] = -1
        out[i, H_DEF_BYTES] = 0
        out[i, H_REP_BYTES] = 0
        out[i, H_COMPRESSED] = 1
        out[i, H_DEF_ENCODING] = -1
        has_crc = 0  # (any crc value is valid, -1 included: its presence is what counts)
        fid = 0
        while True:
            fid, ftype, pos = _field_header(buf, pos, end, fid)
            if pos < 0 or ftype == 0:
                break
            if 1 <= fid <= 4 and ftype == _I32:
                v, pos = uvarint(buf, pos, end)
                top[fid] = zigzag(v)
                has_crc |= fid == 4
            elif ftype == _STRUCT and (fid == 5 or fid == 7 or fid == 8):
                sub[:] = -1
                pos = _int_fields(buf, pos, end, sub)
                out[i, H_VALUES] = sub[1]
                if fid == 5:  # DataPageHeader
                    out[i, H_ENCODING] = sub[2]
                    out[i, H_DEF_ENCODING] = sub[3]
                elif fid == 7:  # DictionaryPageHeader
                    out[i, H_ENCODING] = sub[2]
                else:  # DataPageHeaderV2
                    out[i, H_NULLS] = sub[2]
                    out[i, H_ENCODING] = sub[4]
                    out[i, H_DEF_BYTES] = sub[5]
                    out[i, H_REP_BYTES] = sub[6]
                    out[i, H_COMPRESSED] = 0 if sub[7] == 0 else 1
            else:
                pos = _skip(buf, pos, end, ftype, 0)
        if pos < 0 or top[1] < 0 or top[2] < 0 or top[3] < 0 or top[3] > end - pos:
            return i
        if out[i, H_DEF_BYTES] < 0 or out[i, H_REP_BYTES] < 0:
            return i
        if out[i, H_DEF_BYTES] + out[i, H_REP_BYTES] > top[3]:
            return i
        out[i, H_LEN] = pos - starts[i]
        out[i, H_TYPE] = top[1]
        out[i, H_USIZE] = top[2]
        out[i, H_CSIZE] = top[3]
        out[i, H_HAS_CRC] = has_crc
        out[i, H_CRC] = top[4] & 0xFFFFFFFF
    return -1


@njit(cache=True, nogil=True)
def offset_index_locations(buf, n_groups, n_columns, offsets, lengths):
    """From a serialized FileMetaData, each row group's and column's OffsetIndex position
    and length into ``offsets``/``lengths`` (-1 where absent). Returns False if damaged
    or shaped otherwise than ``n_groups`` x ``n_columns``."""
    end = buf.shape[0]
    offsets[:, :] = -1
    lengths[:, :] = -1
    pos = 0
    fid = 0
    while True:
        fid, ftype, pos = _field_header(buf, pos, end, fid)
        if pos < 0:
            return False
        if ftype == 0:
            return True
        if fid != 4 or ftype != _LIST:
            pos = _skip(buf, pos, end, ftype, 0)
            continue
        n, etype, pos = _list_header(buf, pos, end)
        if pos < 0 or n != n_groups or etype != _STRUCT:
            return False
        for g in range(n):  # RowGroup
            gfid = 0
            while True:
                gfid, gtype, pos = _field_header(buf, pos, end, gfid)
                if pos < 0:
                    return False
                if gtype == 0:
                    break
                if gfid != 1 or gtype != _LIST:
                    pos = _skip(buf, pos, end, gtype, 1)
                    continue
                m, ctype, pos = _list_header(buf, pos, end)
                if pos < 0 or m != n_columns or ctype != _STRUCT:
                    return False
                for c in range(m):  # ColumnChunk
                    cfid = 0
                    while True:
                        cfid, cft, pos = _field_header(buf, pos, end, cfid)
                        if pos < 0:
                            return False
                        if cft == 0:
                            break
                        if (cfid == 4 or cfid == 5) and (cft == _I64 or cft == _I32):
                            v, pos = uvarint(buf, pos, end)
                            if cfid == 4:
                                offsets[g, c] = zigzag(v)
                            else:
                                lengths[g, c] = zigzag(v)
                        else:
                            pos = _skip(buf, pos, end, cft, 2)


@njit(cache=True, nogil=True)
def page_locations(buf, pos, end):
    """An OffsetIndex's data pages: (file offsets, sizes with header, first rows within
    the row group); an empty result with size -1 at index 0 when damaged."""
    bad = np.full(1, -1, dtype=np.int64)
    fid = 0
    found = False
    offsets = np.zeros(0, dtype=np.int64)
    sizes = np.zeros(0, dtype=np.int64)
    firsts = np.zeros(0, dtype=np.int64)
    loc = np.empty(4, dtype=np.int64)
    while True:
        fid, ftype, pos = _field_header(buf, pos, end, fid)
        if pos < 0:
            return bad, bad, bad
        if ftype == 0:
            break
        if fid != 1 or ftype != _LIST:
            pos = _skip(buf, pos, end, ftype, 0)
            continue
        n, etype, pos = _list_header(buf, pos, end)
        if pos < 0 or etype != _STRUCT or n < 0 or n > end - pos:
            return bad, bad, bad
        offsets = np.empty(n, dtype=np.int64)
        sizes = np.empty(n, dtype=np.int64)
        firsts = np.empty(n, dtype=np.int64)
        for i in range(n):
            loc[:] = -1
            pos = _int_fields(buf, pos, end, loc)
            if pos < 0 or loc[1] < 0 or loc[2] <= 0 or loc[3] < 0:
                return bad, bad, bad
            if i and (loc[3] <= firsts[i - 1] or loc[1] < offsets[i - 1] + sizes[i - 1]):
                return bad, bad, bad
            offsets[i], sizes[i], firsts[i] = loc[1], loc[2], loc[3]
        found = True
    if not found:
        return bad, bad, bad
    return offsets, sizes, firsts


# Columns of the span table :func:`page_spans` fills: where each page's definition levels
# and values lie in the buffer of raw pages, whether its values are compressed (and to
# how many bytes), what its CRC covers, and its header's counts.
(S_LEV_LO, S_LEV_HI, S_VAL_LO, S_VAL_HI, S_USIZE, S_PACKED, S_V1, S_VALUES, S_ENCODING,
 S_HAS_CRC, S_CRC, S_CRC_LO, S_CRC_HI) = range(13)
S_FIELDS = 13
# Why a page cannot be read (the second value :func:`page_spans` returns).
BAD_HEADER, NOT_DATA, LEVELS_NOT_RLE = 1, 2, 3
_RLE = 3


@njit(cache=True, nogil=True)
def page_spans(buf, sizes, compressed, max_def, out):
    """Parse the pages laid end to end in ``buf`` (``sizes[i]`` bytes each, header
    included) into row i of ``out`` (columns ``S_*``); ``compressed[i]``: whether page
    i's column chunk has a codec. Flat columns only: data pages (v1 or v2) without
    repetition levels. Returns (-1, 0), or (the first bad page, why: ``BAD_HEADER``,
    ``NOT_DATA``, ``LEVELS_NOT_RLE``)."""
    n = sizes.shape[0]
    ends = np.cumsum(sizes)
    starts = ends - sizes
    heads = np.empty((n, H_FIELDS), dtype=np.int64)
    bad = page_headers(buf, starts, ends, heads)
    if bad >= 0:
        return bad, BAD_HEADER
    for i in range(n):
        v2 = heads[i, H_TYPE] == DATA_PAGE_V2
        if not (v2 or heads[i, H_TYPE] == DATA_PAGE) or heads[i, H_REP_BYTES] != 0:
            return i, NOT_DATA
        if max_def > 0 and not v2 and heads[i, H_DEF_ENCODING] != _RLE:
            return i, LEVELS_NOT_RLE
        body = starts[i] + heads[i, H_LEN]
        levels = heads[i, H_DEF_BYTES] if v2 else 0
        out[i, S_LEV_LO] = body if v2 else -1
        out[i, S_LEV_HI] = body + levels if v2 else -1
        out[i, S_VAL_LO] = body + levels
        out[i, S_VAL_HI] = body + heads[i, H_CSIZE]
        out[i, S_USIZE] = heads[i, H_USIZE] - levels
        out[i, S_PACKED] = compressed[i] and (not v2 or heads[i, H_COMPRESSED] != 0)
        out[i, S_V1] = not v2
        out[i, S_VALUES] = heads[i, H_VALUES]
        out[i, S_ENCODING] = heads[i, H_ENCODING]
        out[i, S_HAS_CRC] = heads[i, H_HAS_CRC]
        out[i, S_CRC] = heads[i, H_CRC]
        out[i, S_CRC_LO] = body
        out[i, S_CRC_HI] = body + heads[i, H_CSIZE]
    return -1, 0
