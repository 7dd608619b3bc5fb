"""While an index is built, freed large blocks leave the heap; after it, they stay there
for the next queries (index/building/malloc_policy.py). A block of a few MiB freed and asked for
again is a fresh mapping only inside the policy: glibc's moving threshold, and the one
set once a build ends, serve it from the heap.

Run in a fresh process: in a long one, a large free chunk left at the top of the heap by
earlier work may serve the request whatever the threshold."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

SCRIPT = """
import ctypes, sys
import numpy as np
import pyarrow as pa
from datafusion_fts.index.building.malloc_policy import BUILD_THRESHOLD, large_blocks_returned

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2


def mapped_again() -> bool:
    size = 4 * BUILD_THRESHOLD
    first = np.empty(size, dtype=np.uint8)
    del first  # (glibc alone now raises its threshold past ``size``)
    before = libc.mallinfo2().hblkhd
    again = np.empty(size, dtype=np.uint8)
    return libc.mallinfo2().hblkhd - before >= size


if sys.argv[1] == "during":
    with large_blocks_returned() as changed:
        assert changed
        print(mapped_again())
elif sys.argv[1] == "after":
    with large_blocks_returned():
        with large_blocks_returned():  # (two builds at once: the policy holds until both end)
            pass
        assert mapped_again()
    print(mapped_again())
elif sys.argv[1] == "after a build":
    import tempfile
    import datafusion_fts as fts
    db = fts.connect(tempfile.mkdtemp())
    db.create_table("t", pa.table({"body": ["alpha beta"] * 1000})).create_index("body")
    print(mapped_again())
else:
    print(mapped_again())
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
@pytest.mark.parametrize("when, mapped", [("during", "True"), ("after", "False"), ("after a build", "False"),
                                          ("glibc", "False")])
def test_a_large_block_freed_and_asked_again_is_mapped_only_during_a_build(when: str, mapped: str) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, when], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == mapped
