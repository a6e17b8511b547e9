"""pvnviz: the compute package of PVN Lab.

Implements Policy Evaluation Networks (Harb, Schaul, Precup, Bacon, ICML 2020):
exact tabular MDPs and the value polytope (Section 6.1), batched environments,
policies, fingerprints, PVNs and gradient ascent (Sections 3-5, 6.2, 6.3).
Core modules never import streamlit or plotly; figure builders live in
``pvnviz.figures``.
"""

from pvnviz import kernels as _kernels

_kernels.pin()  # before NumPy or torch load: the same numbers on every x86-64 CPU (pvnviz.kernels)
