"""Return histograms (``pvnviz.core.histogram``): bin widths and midpoints, the pmf of known returns by hand,
the expectation."""

import numpy as np
import pytest

from pvnviz.core.histogram import ReturnBins


def test_bins_pmf_and_expectation():
    bins = ReturnBins(0.0, 100.0, 41)
    assert bins.width == pytest.approx(100 / 41)
    assert bins.midpoints[0] == pytest.approx(bins.width / 2) and bins.midpoints[-1] == pytest.approx(
        100 - bins.width / 2
    )
    returns = np.array([[0.0, 100.0, 50.0, 50.0], [10.0, 10.0, 10.0, 10.0]])
    pmf = bins.pmf(returns)
    np.testing.assert_allclose(pmf.sum(1), 1.0)
    assert pmf[0, 0] == 0.25 and pmf[0, -1] == 0.25 and pmf[0, 20] == 0.5  # G_max is in the last bin
    assert bins.expected(pmf[1]) == pytest.approx(bins.midpoints[bins.index(10.0)])
    with pytest.raises(ValueError, match="num_bins"):
        ReturnBins(0, 1, 0)
