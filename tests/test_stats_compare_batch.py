"""compare over many k at once: the sign-flip test of every k shares its random signs, and
the bootstrap sums are one matrix product; both against plainly correct code."""

import naive_stats as naive
import numpy as np
import pytest

from passatk.stats import _compare as C
from passatk.stats import _kernels as SK


@pytest.mark.parametrize("g,b", [(7, 50), (300, 2100)])
def test_resampled_sums_are_the_kernels_resamples(g, b):
    rng = np.random.default_rng(g)
    cols = rng.normal(size=(g, 5))
    want = SK.boot_means(cols, np.uint64(99), b) * g
    got = C._resampled_sums(cols, np.uint64(99), b)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    idx = SK.boot_indices(g, np.uint64(99), b)  # and the sums are those of these indices
    np.testing.assert_allclose(got[3], cols[idx[3]].sum(axis=0), rtol=1e-12)


def test_signflip_of_all_k_agrees_with_enumeration():
    rng = np.random.default_rng(5)
    d = {1: rng.normal(0.2, 1, 16), 2: rng.normal(0.0, 1, 16), 3: rng.normal(0.6, 1, 16)}
    exact = {kv: float(naive.signflip_exact(list(x))) for kv, x in d.items()}
    small = C._signflip_all(d, 999, rng)
    assert all(small[kv] == pytest.approx((exact[kv], True), rel=1e-15) for kv in d)
    big = {kv: np.concatenate([x, x[::-1] * 0.0]) for kv, x in d.items()}  # N = 32 > 20
    got = C._signflip_all(big, 40_000, np.random.default_rng(1))
    for kv in d:  # zeros change no sum: the same p, within Monte Carlo error
        p, is_exact = got[kv]
        assert not is_exact
        assert abs(p - exact[kv]) <= 4 * np.sqrt(exact[kv] * (1 - exact[kv]) / 40_000) + 1e-4
