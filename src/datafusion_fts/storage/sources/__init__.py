"""storage/sources."""
