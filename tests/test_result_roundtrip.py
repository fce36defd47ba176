"""Result.from_json(r.to_json()) rebuilds what matters, for the 1-D, d-D and (ε,δ) paths."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import optmech
from optmech.costs import parse_cost
from optmech.result import Result, Status
from optmech.spec import ApproxDP, IntegerLattice, Problem, PureDP


def _same(a: Result, b: Result) -> None:
    assert (a.lower_bound, a.upper_bound, a.certified, a.message) == (b.lower_bound, b.upper_bound, b.certified, b.message)
    assert a.status == b.status and isinstance(b.status, Status)
    assert a.problem == b.problem and a.claims == b.claims and a.history == b.history
    assert [r.to_dict() for r in a.references] == [r.to_dict() for r in b.references]
    assert a.relative_gap == b.relative_gap or (math.isinf(a.relative_gap) and math.isinf(b.relative_gap))


@pytest.mark.parametrize("problem", [
    Problem(PureDP(1.0), parse_cost("where(x > 0, x, 2*abs(x))"), 3.0, IntegerLattice()),
    Problem(ApproxDP(1.0, 0.05), parse_cost("abs"), 2.0, IntegerLattice()),
    Problem(PureDP(1.0), parse_cost("abs(x)/(1 + (abs(x)/50)**2)"), 1.0, IntegerLattice()),
])
def test_round_trip_with_the_mechanism(problem):
    r = optmech.solve(problem)
    back = Result.from_json(r.to_json(include_mechanism=True))
    _same(r, back)
    assert back.mechanism_dict() == r.mechanism_dict()
    k = np.arange(-200, 201)  # window and tails
    assert np.array_equal(back.mechanism.law.weight(k), r.mechanism.law.weight(k))


def test_round_trip_in_two_dimensions():
    r = optmech.solve(Problem(PureDP(1.0), "l1", 2.0, IntegerLattice(), dim=2))
    back = Result.from_json(r.to_json(include_mechanism=True))
    _same(r, back)
    assert back.mechanism_dict() == r.mechanism_dict() and back.mechanism.dim == 2
    assert back.mechanism.sample(10, rng=0).shape == (10, 2)


def test_status_is_a_string_enum():
    assert Status("optimal") == "optimal" and json.dumps(Status.INFIMUM_AT_INFINITY) == '"infimum_at_infinity"'
    assert str(Status.GAP_NOT_REACHED) == "gap_not_reached"


def test_from_json_of_the_cli_output(tmp_path):
    out = subprocess.run([sys.executable, "-m", "optmech", "solve", "--epsilon", "1", "--sensitivity", "2", "--domain",
                          "integer", "--cost", "abs", "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = Result.from_json(out.stdout)
    assert r.certified and r.status == Status.OPTIMAL and r.mechanism is None


@pytest.mark.parametrize("text, what", [("[1]", "JSON object"), ("{}", "missing"), ("nope", "not JSON"),
                                       ('{"problem": {}, "status": "done", "lower_bound": 0, "upper_bound": 1, '
                                        '"certified": true}', "unknown status")])
def test_from_json_refuses_other_text(text, what):
    with pytest.raises(optmech.SpecError, match=what):
        Result.from_json(text)
