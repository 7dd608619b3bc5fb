"""What marks a directory as a database: the name of its manifest.

A leaf (it imports nothing), so the command line can tell a database directory from any
other before it loads the engine (cli/options.py), with the name the store writes.
"""

from __future__ import annotations

MANIFEST = "manifest.json"
