"""Where long work executes: the app's live runs in worker processes (local pool or Ray) behind a fair queue,
and Algorithm 1's chunks on a Ray cluster (``collect_ray``).

Workers sit above what they run: ``tasks.TASKS`` names functions of ``runs``, ``polytope`` and ``envs``
(imported by name in the worker), and nothing of those packages imports ``workers``.
"""
