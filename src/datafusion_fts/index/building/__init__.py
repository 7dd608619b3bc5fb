"""Building segments: a range of rows analyzed and inverted (``build_range``, ``builder``),
segments merged, progress reported (``build_progress``), and the allocator's policy while
builds run (``malloc_policy``)."""
