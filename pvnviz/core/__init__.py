"""The paper's method (Sections 3-5): policies, return histograms, fingerprints, PVNs, ascent, rounds."""
