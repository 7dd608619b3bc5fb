"""The fresh tier: inserted rows indexed in memory as runs (``fresh_runs``), and what a
reader replayed of their write-ahead logs (``fresh_logs``)."""
