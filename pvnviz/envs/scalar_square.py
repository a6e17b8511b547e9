"""``x ** 2`` on a NumPy *scalar*, reproduced bit for bit on whole arrays: what the classic-control step functions
(``pvnviz.envs.classic``) need to equal gymnasium's own, which squares one episode's scalars at a time.

gymnasium's classic control writes ``thdot**2`` on ``np.float64`` / ``np.float32`` scalars. NumPy computes a
scalar power with the C library's ``pow`` / ``powf``, which is not correctly rounded: glibc's results are within
0.52 ULP (``pow``) and 0.82 ULP (``powf``), so when the exact square lies very close to the midpoint between two
floats, ``pow`` may return the other neighbour. An array's ``x ** 2`` is ``x * x``, correctly rounded, so it
differs from the scalar result in about 1 element in 1,300. (``np.power`` with an array exponent uses SIMD code
that differs more often still.)

:func:`square_f64` and :func:`square_f32` therefore compute the exact square (float64: Dekker's product as a
double-double; float32: the square of a float32 is exact in float64), keep the correctly rounded result wherever
the exact square is farther than ``*_MIDPOINT_WINDOW`` ULP from a rounding midpoint (there ``pow`` cannot round
differently), and call the C library's own ``pow`` through a NumPy scalar for the few elements near a midpoint
(about 6 % in float64, 2 % in float32). The windows hold with a margin: on this machine's glibc, of 4e8 random
float64 in [-20, 20] every mismatch lay within 0.0085 ULP of a midpoint, and of every float32 in [2^-40, 4)
within 0.0017 ULP; squares outside those ranges always take the scalar path.
"""

from __future__ import annotations

import numpy as np

F64_MIDPOINT_WINDOW = 0.03  # ULP; glibc documents pow's error as at most 0.52 ULP (0.02 past the midpoint)
F32_MIDPOINT_WINDOW = 0.01  # ULP; the largest distance seen over every float32 in [2^-40, 4) is 0.0017
_DEKKER_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitting constant for float64
_F64_SAFE = (2.0**-900, 2.0**900)  # squares whose Dekker error term is exact (no underflow, no overflow)
_F32_SAFE = (2.0**-80, 16.0)  # squares of the float32 range scanned: [2^-40, 4)


def _near_midpoint(error: np.ndarray, square: np.ndarray, exponent_mask: int, ulps_per_power: float, window: float):
    """Where ``|error|`` (exact square minus ``square``, in float64) is within ``window`` ULP of half an ULP of
    ``square`` (float64 or float32, positive); also where ``square`` is a power of two (its gap below is half)."""
    bits = square.view(np.int64 if square.dtype == np.float64 else np.int32)
    power = (bits & exponent_mask).view(square.dtype).astype(np.float64)  # 2**exponent of ``square``
    mantissa_zero = (bits & ~exponent_mask) == 0  # a power of two (or 0, where error is 0 too)
    in_ulps = np.abs(error) * ulps_per_power / np.maximum(power, 2.0**-1022)
    return (np.abs(in_ulps - 0.5) < window) | mantissa_zero


def square_f64(x: np.ndarray) -> np.ndarray:
    """``np.float64(v) ** 2`` for every element ``v`` of the float64 array ``x`` (any shape), bit for bit."""
    x = np.asarray(x, dtype=np.float64)
    square = x * x
    c = _DEKKER_SPLIT * x
    high = c - (c - x)
    low = x - high
    error = ((high * high - square) + 2.0 * high * low) + low * low  # x**2 == square + error exactly
    near = _near_midpoint(error, square, 0x7FF0000000000000, 2.0**52, F64_MIDPOINT_WINDOW)
    outside = ~((square >= _F64_SAFE[0]) & (square <= _F64_SAFE[1]))  # also NaN and inf
    near &= ~outside
    if near.any():  # Python floats' ** is the C library's pow, as NumPy float64 scalars' is (quicker to call)
        square[near] = x[near].astype(object) ** 2
    if outside.any():  # NumPy scalars: inf on overflow, where a Python float raises
        square[outside] = [v**2 for v in x[outside]]
    return square


def square_f32(x: np.ndarray) -> np.ndarray:
    """``np.float32(v) ** 2`` for every element ``v`` of the float32 array ``x`` (any shape), bit for bit."""
    x = np.asarray(x, dtype=np.float32)
    exact = np.square(x.astype(np.float64))  # exact: 48 significant bits at most
    square = exact.astype(np.float32)
    error = exact - square  # exact too
    near = _near_midpoint(error, square, 0x7F800000, 2.0**23, F32_MIDPOINT_WINDOW)
    near |= ~((exact >= _F32_SAFE[0]) & (exact < _F32_SAFE[1]))
    if near.any():
        square[near] = [v**2 for v in x[near]]  # NumPy float32 scalars: the C library's powf, as gymnasium
    return square
