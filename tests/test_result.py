"""The saved mechanism: a JSON round trip that keeps a refined, non-uniform cell grid."""

from __future__ import annotations

import json
import math

import numpy as np

import optmech
from optmech.certify import audit_pure
from optmech.result import mechanism_from_dict
from optmech.spec import Continuous, Problem, PureDP


def test_continuous_mechanism_round_trip_keeps_the_refined_grid() -> None:
    eps = 5.0
    r = optmech.solve(Problem(PureDP(eps), "abs", sensitivity=1.0, domain=Continuous()))
    assert r.certified and not r.mechanism.law.grid.uniform  # large ε: the grid was refined
    saved = json.loads(json.dumps(r.to_dict(include_mechanism=True)))
    mech = mechanism_from_dict(saved["mechanism"]).law
    np.testing.assert_array_equal(mech.grid.edges, r.mechanism.law.grid.edges)

    k = np.arange(mech.k_lo - 40 * mech.grid.W, mech.k_hi + 40 * mech.grid.W + 1)
    mass = mech.mass(k)
    assert math.isclose(math.fsum(mass), 1.0, abs_tol=1e-12)
    # densities of cells within W indices of each other stay within e^ε (the UB's constraint)
    assert audit_pure(int(k[0]), mech.density(k), mech.grid.W, eps, exact=True).passed
    # E|X| of the piecewise-constant density, cell by cell, lies in the bracket
    left, right = mech.grid.left(k), mech.grid.right(k)
    mean_abs = np.where(left >= 0, (left + right) / 2, np.where(right <= 0, -(left + right) / 2,
                                                               (left**2 + right**2) / (2 * (right - left))))
    cost = math.fsum(mass * mean_abs)
    assert r.lower_bound <= cost <= r.upper_bound * (1 + 1e-12)
