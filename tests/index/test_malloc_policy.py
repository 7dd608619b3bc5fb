"""During builds freed large blocks leave the heap (index/malloc_policy.py): after the
policy, a block of a few MiB freed and asked for again is a fresh mapping, where glibc's
moving threshold would have served it from the heap and kept it there once freed.

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
from datafusion_fts.index.malloc_policy import THRESHOLD_BYTES, return_large_blocks

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
if sys.argv[1] == "policy":
    assert return_large_blocks()
size = 4 * THRESHOLD_BYTES
first = np.empty(size, dtype=np.uint8)
del first  # (glibc alone now raises its threshold past ``size``)
before = libc.mallinfo2().hblkhd
again = np.empty(size, dtype=np.uint8)
print(libc.mallinfo2().hblkhd - before >= size)
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
@pytest.mark.parametrize("policy, mapped", [("policy", "True"), ("glibc", "False")])
def test_a_large_block_freed_and_asked_again_is_mapped_only_with_the_policy(policy: str, mapped: str) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, policy], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == mapped
