"""(ε, δ) on ℝ^d with ℓ2 sensitivity: the ℓ2 staircase g(‖x‖₂) is an upper end (issue 38, first item).

It is ε-DP for ℓ2 shifts ≤ Δ (|‖x‖₂ − ‖x + v‖₂| ≤ ‖v‖₂ and the 1-D profile's ratio is at most e^ε over
a distance Δ), hence (ε, δ)-DP; its expected ‖x‖₂ and ‖x‖₂² are recomputed here from the piecewise
constant radial profile with mpmath, independently of optmech.mechanisms.multidim.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from optmech import solve
from optmech.spec import ApproxDP, Continuous, Problem


def staircase_moment(eps: float, gamma: float, d: int, m: int, sensitivity: float = 1.0) -> float:
    """E‖X‖₂^m for the density ∝ b^{⌊r/Δ − γ⌋ + 1} (b = e^{−ε}) in ℝ^d, by exact piecewise integration."""
    mpmath.mp.dps = 40
    b = mpmath.e ** (-mpmath.mpf(eps))
    g, D = mpmath.mpf(gamma), mpmath.mpf(sensitivity)

    def piece(lo, hi, k):  # ∫_lo^hi r^(d-1+m) dr and ∫ r^(d-1) dr, weight b^k
        return (b**k * (hi ** (d + m) - lo ** (d + m)) / (d + m), b**k * (hi**d - lo**d) / d)

    num, den = piece(0, g * D, 0)
    for k in range(1, 400):
        n_, d_ = piece((g + k - 1) * D, (g + k) * D, k)
        num, den = num + n_, den + d_
    return float(num / den)


@pytest.mark.parametrize("cost, m", [("l2", 1), ("l2sq", 2)])
def test_l2_staircase_is_the_upper_end_at_large_epsilon(cost, m):
    r = solve(Problem(privacy=ApproxDP(8.0, 1e-3), cost=cost, dim=2, norm="l2", domain=Continuous()), time_limit=3)
    refs = {x.name: x for x in r.references}
    st = refs["staircase"]
    assert st.valid and st.kind == "upper"
    v = staircase_moment(8.0, st.parameters["gamma"], 2, m)
    assert math.isclose(st.value, v, rel_tol=1e-10)
    assert r.upper_bound <= v * (1 + 1e-9)  # every valid closed form is an upper end
    assert r.lower_bound <= r.upper_bound


def test_l2_staircase_profile_is_epsilon_private():
    """f(x)/f(x + v) <= e^ε for random x and ‖v‖₂ <= Δ (the profile's own ratio over a distance <= Δ)."""
    from optmech.mechanisms.multidim import StaircaseND

    mech = StaircaseND(epsilon=2.0, sensitivity=1.0, gamma=0.3, dim=3, norm="l2")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20000, 3)) * 3
    v = rng.normal(size=(20000, 3))
    v *= (rng.random((20000, 1)) / np.linalg.norm(v, axis=1, keepdims=True))
    b = math.exp(-2.0)

    def logf(y):  # log of the unnormalised profile b^{⌊r − γ⌋ + 1}
        r = np.linalg.norm(y, axis=1)
        return (np.floor(r - 0.3) + 1) * math.log(b)

    assert np.all(logf(x) - logf(x + v) <= 2.0 + 1e-12)
    assert mech.dim == 3
