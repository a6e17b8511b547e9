"""The same numbers on every x86-64 CPU: the numeric libraries' kernels pinned before they load.

NumPy, its OpenBLAS and torch's MKL choose their kernels by the CPU they run on, and an AVX-512 kernel sums in
another order than an AVX2 one. One last-bit difference, amplified by training a PVN or by an ascent, becomes
another result: the polytope's rounds on seeds 0-23 end near the optimum on 24 seeds with AVX-512 kernels and
on 23 with AVX2's (``tests/test_polytope_rounds.py``), and CartPole's seed 0 ends at 64.1 or 64.4 by which
MKL branch trained its PVN. So every process that imports ``pvnviz`` before NumPy or torch (``python -m
pvnviz``, the workers, the tests' ``conftest.py``) runs:

- NumPy's and torch's own kernels at AVX2, which every x86-64 CPU since 2013 has, and which compute alike on
  every CPU that has it;
- OpenBLAS's Haswell kernels (AVX2 too);
- MKL's COMPATIBLE branch: MKL picks its kernels by the CPU's vendor and model, and Intel guarantees the same
  results across Intel and non-Intel CPUs only on this branch (its AVX2 branch is honoured on Intel CPUs
  alone). Torch's PVN training costs the same time with it here (CartPole ``paper``, seeds 0-1: 28.8 s
  against 29.1 s on the AVX2 branch).

A variable already set in the environment is left as it is, so ``OPENBLAS_CORETYPE=SkylakeX python -m pvnviz
...`` still chooses. This module imports nothing numeric.
"""

from __future__ import annotations

import os
import platform
import sys

# variable -> value: read by each library once, when it loads
PINS = {
    "OPENBLAS_CORETYPE": "Haswell",  # NumPy's OpenBLAS (a DYNAMIC_ARCH build)
    "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels
    "MKL_CBWR": "COMPATIBLE",  # torch's MKL: Intel's conditional numerical reproducibility, any vendor
    "ONEDNN_MAX_CPU_ISA": "AVX2",  # torch's oneDNN
}
# NumPy's own SIMD dispatch groups above AVX2 (NumPy 2.4 names); disabled only where the CPU has AVX-512,
# since NumPy warns about disabling a group the CPU lacks
NUMPY_GROUPS_ABOVE_AVX2 = "X86_V4 AVX512_ICL AVX512_SPR"


def _has_avx512() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return " avx512f" in f.read(200_000)
    except OSError:
        return False


def pin(environ: dict[str, str] | None = None) -> list[str]:
    """Set each unset pin in ``environ`` (``os.environ``) on x86-64; the names set. Too late, and so nothing is
    set, once NumPy or torch is loaded in this process: a library reads its variable only when it loads."""
    environ = os.environ if environ is None else environ
    if platform.machine().lower() not in ("x86_64", "amd64") or "numpy" in sys.modules or "torch" in sys.modules:
        return []
    wanted = dict(PINS)
    if "NPY_ENABLE_CPU_FEATURES" not in environ and _has_avx512():
        wanted["NPY_DISABLE_CPU_FEATURES"] = NUMPY_GROUPS_ABOVE_AVX2
    chosen = [name for name in wanted if name not in environ]
    for name in chosen:
        environ[name] = wanted[name]
    return chosen
