"""Builds the compiled kernels (src/datafusion_fts/kernels/*.pyx) when the package is
installed, so no query ever waits for a compiler (docs/design.md: "Kernels")."""

from __future__ import annotations

import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

KERNELS = Path("src/datafusion_fts/kernels")

# Every loop indexes arrays its caller sized and checked, and divides non-negative
# integers or floats (a float 0/0 is NaN, as in numpy): no bounds, wraparound or
# zero-division checks in the loops.
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
    "cdivision": True,
    "embedsignature": True,
}

# -ffp-contract=off: a multiply-add stays two roundings even where CFLAGS allow FMA
# (-march=haswell fused BOOST's `a - w*b` and changed scores); -O3 vectorizes integer
# loops and float maps, never a float sum's order (no -ffast-math), so scores are the same
# bits on every machine.
COMPILE_ARGS = ["-O3", "-ffp-contract=off", "-fno-strict-aliasing"]

extensions = [
    Extension(f"datafusion_fts.kernels.{source.stem}", [str(source)], extra_compile_args=COMPILE_ARGS)
    for source in sorted(KERNELS.glob("*.pyx"))
]

setup(
    options={"build_ext": {"parallel": os.cpu_count() or 1}},  # (the C compiles side by side)
    ext_modules=cythonize(
        extensions,
        compiler_directives=DIRECTIVES,
        include_path=["src"],
        nthreads=os.cpu_count() or 1,
    )
)
