"""The paper's method (Sections 3-5): policies, Algorithm 1's collection, return histograms, fingerprints, PVNs
(Algorithm 2), the ascent and its active rounds (Algorithm 3)."""
