"""Which workers run the app's live runs (``pvnviz.workers.pool``): a Ray cluster if the environment names one.

Kept apart from ``pvnviz.workers.pool`` and ``pvnviz.workers.ray_pool`` so that neither imports the other's module.
"""

from __future__ import annotations

import os

from pvnviz.workers.pool import RAY_ADDRESS_ENV, Backend, LocalPool


def make_backend() -> Backend:
    """The workers the environment asks for: a Ray cluster at ``PVN_RAY_ADDRESS``, else a local pool."""
    address = os.environ.get(RAY_ADDRESS_ENV, "").strip()
    if address:
        from pvnviz.workers.ray_pool import RayPool

        return RayPool(address)
    return LocalPool()
