"""storage/files."""
