"""storage/parquet."""
