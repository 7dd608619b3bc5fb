# The tokenizer's UTF-8 helpers, compiled in line where they are called (here and in
# kernels/expansion.pyx).

from libc.stdint cimport int32_t, int64_t, uint8_t


cdef inline int64_t decode(const uint8_t* data, int64_t i, int64_t end,
                           int64_t* after) noexcept nogil:
    """The code point at ``data[i]`` (a lead byte >= 0x80), 0 for malformed input; sets
    ``after[0]`` to the index after it.

    Continuation bits are taken as they come (a stray continuation byte reads as a 2-byte
    lead, an overlong form keeps its value): the tokenizer's terms depend on exactly this
    reading, so it never changes."""
    cdef int64_t b0 = data[i]
    cdef int64_t cp
    if b0 < 0xE0:
        if i + 2 > end:
            after[0] = end
            return 0
        after[0] = i + 2
        return ((b0 & 0x1F) << 6) | (data[i + 1] & 0x3F)
    if b0 < 0xF0:
        if i + 3 > end:
            after[0] = end
            return 0
        after[0] = i + 3
        return ((b0 & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)
    if i + 4 > end:
        after[0] = end
        return 0
    after[0] = i + 4
    cp = (((b0 & 0x07) << 18) | ((data[i + 1] & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6)
          | (data[i + 3] & 0x3F))
    return cp if cp < 0x110000 else 0


cdef inline int64_t put_utf8(uint8_t* buf, int64_t at, int32_t cp) noexcept nogil:
    """Write code point ``cp`` as UTF-8 at ``buf[at]``; return the new end."""
    if cp < 0x80:
        buf[at] = <uint8_t>cp
        return at + 1
    if cp < 0x800:
        buf[at] = <uint8_t>(0xC0 | (cp >> 6))
        buf[at + 1] = <uint8_t>(0x80 | (cp & 0x3F))
        return at + 2
    if cp < 0x10000:
        buf[at] = <uint8_t>(0xE0 | (cp >> 12))
        buf[at + 1] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
        buf[at + 2] = <uint8_t>(0x80 | (cp & 0x3F))
        return at + 3
    buf[at] = <uint8_t>(0xF0 | (cp >> 18))
    buf[at + 1] = <uint8_t>(0x80 | ((cp >> 12) & 0x3F))
    buf[at + 2] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
    buf[at + 3] = <uint8_t>(0x80 | (cp & 0x3F))
    return at + 4
