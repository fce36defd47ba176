"""The 1-D audit bounds each hockey-stick term's rounding by the term itself (issue 37).

Every value of :func:`optmech.audit.hockey_stick_1d` must be at least the exact sum
Σ_x (p(x) − c·p(x + v))_+ in rational arithmetic, c the float e^ε the audit uses (rounded down, so
the exact e^ε gives a smaller sum), renormalised when the float masses sum below 1; and at near-ties
p(x) ≈ e^ε p(x + v) — the bulk of an (ε, δ) optimum — its slack must be relative to the sum, not to
the masses.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from optmech.audit import hockey_stick_1d


def exact(p: np.ndarray, v: int, c: float) -> F:
    n = len(p)
    total = sum(F(float(x)) for x in p)
    s = F(0)
    for x in range(n):
        q = F(float(p[x + v])) if 0 <= x + v < n else F(0)
        s += max(F(float(p[x])) - F(c) * q, F(0))
    if total < 1:
        s = s / total
    return min(s, F(1))


@pytest.mark.parametrize("seed", range(6))
def test_audit_is_an_upper_bound_with_relative_slack(seed):
    rng = np.random.default_rng(seed)
    worst = 0.0
    for trial in range(40):
        n = int(rng.integers(3, 25))
        eps = float(rng.uniform(0, 2))
        c = float(np.nextafter(np.nextafter(math.exp(eps), 0.0), 0.0))
        p = rng.random(n)
        if trial % 2 == 0:  # near-ties at the 1e-15 level, as at an optimum
            for x in range(n - 1):
                p[x + 1] = p[x] / math.exp(eps) * (1 + rng.choice([-1, 1]) * 1e-15)
        if trial % 5 == 0:
            p[::2] *= 1e-12
        p = p / p.sum()
        shifts = np.array([v for v in range(-4, 5) if v])
        got = hockey_stick_1d(p, shifts, eps)
        for j, v in enumerate(shifts):
            ex = exact(p, int(v), c)
            assert got[j] >= ex
            if ex > 0:
                worst = max(worst, (got[j] - float(ex)) / float(ex))
    assert worst < 1e-13


def test_tiny_masses_take_the_plain_widening():
    p = np.array([1.0, 1e-280, 3e-300, 0.0, 2.0])
    p = p / p.sum()
    got = hockey_stick_1d(p, np.array([1, -1, 2]), 0.5)
    c = float(np.nextafter(np.nextafter(math.exp(0.5), 0.0), 0.0))
    for j, v in enumerate([1, -1, 2]):
        assert got[j] >= exact(p, v, c)
