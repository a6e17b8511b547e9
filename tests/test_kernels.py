"""The numeric kernels are pinned in every process that imports pvnviz first (pvnviz.kernels): AVX2's for NumPy,
OpenBLAS and torch's own, MKL's COMPATIBLE branch for torch's BLAS. So results re-derived here match the ones
the docs report whatever x86-64 CPU runs the tests."""

import ctypes
import os
import platform
import subprocess
import sys

import pytest

from pvnviz import kernels

X86 = platform.machine().lower() in ("x86_64", "amd64")

PROBE = """
import ctypes, json, os
import pvnviz
import numpy, torch
torch.ones(2, 2) @ torch.ones(2, 2)  # MKL reads MKL_CBWR on its first call
mkl = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cpu.so'))
from numpy._core._multiarray_umath import __cpu_features__ as features
maps = open('/proc/self/maps').read().split()
(blas,) = sorted({p for p in maps if 'numpy.libs/libscipy_openblas64' in p and p.endswith('.so')})
corename = getattr(ctypes.CDLL(blas), 'scipy_openblas_get_corename64_')
corename.restype = ctypes.c_char_p
print(json.dumps({'blas': corename().decode(), 'x86_v4': features.get('X86_V4'),
                  'torch': torch.backends.cpu.get_cpu_capability(),
                  'mkl_branch': mkl.mkl_serv_cbwr_get(1)}))  # MKL_CBWR_BRANCH: 1 off, 2 auto, 3 COMPATIBLE
"""


def _probe(env: dict[str, str]) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not X86, reason="the pins are x86-64's")
def test_a_process_importing_pvnviz_first_runs_avx2_kernels():
    env = {k: v for k, v in os.environ.items() if k not in kernels.PINS and k != "NPY_DISABLE_CPU_FEATURES"}
    seen = _probe(env)
    assert seen["blas"] == "Haswell"
    assert seen["torch"] == "AVX2"
    assert seen["mkl_branch"] == 3  # COMPATIBLE: the same sums on Intel and non-Intel CPUs
    assert not seen["x86_v4"]  # NumPy's AVX-512 dispatch group is off (or the CPU has none)


@pytest.mark.skipif(not X86, reason="the pins are x86-64's")
def test_a_variable_already_set_wins():
    env = {k: v for k, v in os.environ.items() if k not in kernels.PINS and k != "NPY_DISABLE_CPU_FEATURES"}
    env["OPENBLAS_CORETYPE"] = "Sandybridge"
    env["MKL_CBWR"] = "AUTO"
    seen = _probe(env)
    assert seen["blas"] == "Sandybridge" and seen["mkl_branch"] == 2
    chosen = {"ATEN_CPU_CAPABILITY": "default"}
    assert "ATEN_CPU_CAPABILITY" not in _pin_fresh(chosen) and chosen["ATEN_CPU_CAPABILITY"] == "default"


def _pin_fresh(environ: dict[str, str]) -> list[str]:
    """``kernels.pin`` as a process would run it before NumPy loads (this test process has NumPy already)."""
    saved = {name: sys.modules.pop(name) for name in ("numpy", "torch") if name in sys.modules}
    try:
        return kernels.pin(environ)
    finally:
        sys.modules.update(saved)


def test_pinning_is_too_late_once_numpy_is_loaded_and_then_sets_nothing():
    import numpy  # noqa: F401

    environ: dict[str, str] = {}
    assert kernels.pin(environ) == [] and environ == {}


@pytest.mark.skipif(not X86, reason="the pins are x86-64's")
def test_the_tests_themselves_run_pinned_kernels():
    """conftest.py imports pvnviz before anything loads NumPy: this very process computes with AVX2's kernels."""
    maps = open("/proc/self/maps").read().split()
    (blas,) = sorted({p for p in maps if "numpy.libs/libscipy_openblas64" in p and p.endswith(".so")})  # NumPy's
    corename = ctypes.CDLL(blas).scipy_openblas_get_corename64_
    corename.restype = ctypes.c_char_p
    assert corename().decode() == os.environ.get("OPENBLAS_CORETYPE", "Haswell")
