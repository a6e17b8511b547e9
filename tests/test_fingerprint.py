"""Network fingerprinting (``pvnviz.core.fingerprint``): a policy's fingerprint is its output at the probing
states, against the NumPy forward pass."""

import numpy as np
import torch

from pvnviz.core.fingerprint import Fingerprint, initial_probes
from pvnviz.core.policies import PolicyArch, forward_numpy, glorot_params

ARCH = PolicyArch(4, 2, (30,), True)


def test_fingerprint_is_the_policy_output_at_the_probes():
    rng = np.random.default_rng(1)
    probes = initial_probes(20, 4, "noise", rng)
    params = glorot_params(ARCH, 6, rng)
    fp = Fingerprint(ARCH, probes)(torch.from_numpy(params)).detach().numpy()
    assert fp.shape == (6, 40)
    expected = forward_numpy(ARCH, params, np.broadcast_to(probes, (6, 20, 4))).reshape(6, 40)
    np.testing.assert_allclose(fp, expected, rtol=1e-5, atol=1e-6)
