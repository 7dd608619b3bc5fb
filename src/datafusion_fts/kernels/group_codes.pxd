"""The codes of a column (storage/coded_rows.py, typed by its ``narrow``): the loops that
count or gather them, here and over postings (postings_codec.count_postings), take any."""

from libc.stdint cimport int32_t, uint8_t, uint16_t

ctypedef fused code:
    uint8_t
    uint16_t
    int32_t
