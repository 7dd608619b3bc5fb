"""storage/stores."""
