"""The one engine: every family through ``optmech.solve(Problem(...))``, one loop with one set of rules,
one Result (a library Mechanism, one history record type, a JSON round trip), one flat-parameter mapping."""

from __future__ import annotations

import math

import numpy as np
import pytest

import optmech
from optmech import ApproxDP, Continuous, IntegerLattice, Lipschitz, Problem, PureDP, Result, Wasserstein
from optmech.budget import DEFAULT_TIME_LIMIT
from optmech.errors import ProblemTooLarge, SolveFailed, SpecError
from optmech.families import family_for
from optmech.families.base import Built, Context, Stop
from optmech.inputs import parse_input_spec
from optmech.loop import STALL_LIMIT, make_context, run
from optmech.mechanisms.base import Mechanism

POISSON = parse_input_spec("poisson:3:0:10")

#: (id, problem, family class name, sample shape of 4 draws)
CASES = [
    ("pure_Z", Problem(PureDP(1.0), "abs", sensitivity=2, domain=IntegerLattice()), "Pure1DFamily", (4,)),
    ("pure_R", Problem(PureDP(1.0), "square", domain=Continuous(), target_gap=1e-3), "Pure1DFamily", (4,)),
    ("approx_Z", Problem(ApproxDP(1.0, 0.05), "abs", sensitivity=2, domain=IntegerLattice()), "ApproxFamily", (4,)),
    ("approx_Z2", Problem(ApproxDP(1.0, 0.1), "l1", sensitivity=1, domain=IntegerLattice(), dim=2), "ApproxFamily",
     (4, 2)),
    ("pure_Z2", Problem(PureDP(1.0), "l1", sensitivity=2, domain=IntegerLattice(), dim=2), "PureNDFamily", (4, 2)),
    ("wasserstein", Problem(PureDP(1.0), objective=Wasserstein(POISSON), sensitivity=2, domain=IntegerLattice()),
     "WassersteinFamily", (4,)),
    ("wasserstein_approx", Problem(ApproxDP(1.0, 0.05), objective=Wasserstein(POISSON, surrogate=True), sensitivity=2,
                                   domain=IntegerLattice()), "WassersteinFamily", (4,)),
    ("lipschitz_Z", Problem(Lipschitz(1.0), "abs", domain=IntegerLattice()), "LipschitzFamily", (4,)),
    ("lipschitz_R", Problem(Lipschitz(1.0), "abs", domain=Continuous(20), target_gap=0.05), "LipschitzFamily", (4,)),
    ("lipschitz_l1_product", Problem(Lipschitz(1.0), "l1", dim=2, domain=IntegerLattice()), "LipschitzFamily", (4, 2)),
    ("lipschitz_radial", Problem(Lipschitz(1.0), "l2", dim=2, norm="l2", domain=Continuous(10), target_gap=0.05),
     "LipschitzFamily", (4, 2)),
]


@pytest.fixture(scope="module")
def solved():
    return {name: optmech.solve(problem) for name, problem, _, _ in CASES}


@pytest.mark.parametrize("name,problem,family,shape", CASES, ids=[c[0] for c in CASES])
def test_every_family_solves_through_one_entry_point(solved, name, problem, family, shape):
    assert family_for(problem).__name__ == family
    r = solved[name]
    assert r.certified and r.lower_bound <= r.upper_bound
    assert isinstance(r.mechanism, Mechanism)
    x = r.mechanism.sample(4, rng=0)
    assert x.shape == shape and np.all(np.isfinite(x))
    assert np.array_equal(x, r.mechanism.sample(4, rng=0))  # seeded: reproducible
    assert r.mechanism.privacy().epsilon <= problem.epsilon * (1 + 1e-12)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_result_round_trips_on_the_fields_that_matter(solved, name):
    r = solved[name]
    back = Result.from_json(r.to_json(include_mechanism=True))
    assert (back.lower_bound, back.upper_bound, back.certified, back.status, back.message) == \
        (r.lower_bound, r.upper_bound, r.certified, r.status, r.message)
    assert back.problem == r.problem and back.claims == r.claims and back.history == r.history
    assert [x.to_dict() for x in back.references] == [x.to_dict() for x in r.references]
    assert back.mechanism_dict() == r.mechanism_dict()
    assert np.array_equal(back.mechanism.sample(3, rng=1), r.mechanism.sample(3, rng=1))


def test_one_history_record_type_for_every_family(solved):
    keys = {"iteration", "size", "lp", "solver_objective", "lower_bound", "upper_bound", "upper_certified",
            "relative_gap", "seconds", "diagnostics"}
    for name, r in solved.items():
        assert r.history, name
        for h in r.history:
            assert set(h) == keys, name
            assert h["lower_bound"] <= h["upper_bound"] * (1 + 1e-9) or not h["upper_certified"], name


def test_references_inside_the_bracket_use_one_tolerance(solved):
    from optmech.certify import reference_inside

    for r in solved.values():
        for ref in r.references:
            assert ref.inside_bracket == reference_inside(ref.value, r.lower_bound, r.upper_bound, ref.exact)


# -- Problem: the one flat-parameter mapping --------------------------------------------------------
@pytest.mark.parametrize("name,problem,family,shape", CASES, ids=[c[0] for c in CASES])
def test_params_round_trip(name, problem, family, shape):
    p = problem.to_params()
    assert Problem.from_params(p) == problem
    assert Problem.from_params({k: str(v) if isinstance(v, (int, float)) else v for k, v in p.items()}) == problem


@pytest.mark.parametrize("params,fragment", [
    ({"epsilon": 1, "delta": 0.1}, "delta applies only"),
    ({"epsilon": 1, "privacy": "approx", "delta": 0.1, "domain": "continuous", "dim": 2, "cost": "linf"}, "l2sq and expressions"),
    ({"epsilon": 1, "privacy": "lipschitz", "sensitivity": 2}, "no sensitivity"),
    ({"epsilon": 1, "privacy": "lipschitz", "delta": 0.1}, "Lipschitz privacy has no delta"),
    ({"epsilon": 1, "utility": "wasserstein", "input": "poisson:3:0:10", "cost": "abs"}, "--cost does not apply"),
    ({"epsilon": 1, "utility": "wasserstein"}, "exactly one of --input-pmf"),
    ({"epsilon": 1, "utility": "wasserstein", "input": "poisson:3:0:10", "privacy": "lipschitz"}, "pure or approx"),
    ({"epsilon": 1, "utility": "wasserstein", "input": "poisson:3:0:10", "domain": "continuous"}, "integer lattice"),
    ({"epsilon": 1, "domain": "integer", "resolution": 4}, "--domain continuous"),
    ({"epsilon": 1, "privacy": "lipschitz", "dim": 2, "norm": "l2", "cost": "l2", "domain": "integer"}, "continuous"),
    ({"epsilon": 1, "colour": "red"}, "unknown problem parameter 'colour'"),
    ({"privacy": "pure"}, "epsilon is required"),
    ({"epsilon": "x"}, "epsilon must be a number"),
])
def test_invalid_combinations_are_refused_in_one_place(params, fragment):
    with pytest.raises(SpecError) as err:
        Problem.from_params(params)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_replace_keeps_the_cost_or_takes_a_new_one():
    import dataclasses

    p = Problem(PureDP(1.0), "abs", domain=IntegerLattice())
    assert dataclasses.replace(p, privacy=PureDP(2.0)).cost.spec == "abs"
    assert dataclasses.replace(p, cost="square").cost.spec == "square"


# -- the loop's rules, on a family whose LPs are fakes ----------------------------------------------
class _Lower:
    def __init__(self, v):
        self.value, self.rounding_loss = v, 0.0


class _Upper:
    def __init__(self, v, ok=True):
        self.value, self.certified = v, ok


class FakeFamily:
    """Step i has lower bound lows[i] and upper bound ups[i] (None: uncertified)."""

    name = "fake"
    max_steps = 10

    def __init__(self, lows, ups, *, fail_at=None, grow_stop_at=None, big=False):
        self.lows, self.ups, self.fail_at, self.grow_stop_at, self.big = lows, ups, fail_at, grow_stop_at, big

    def initial_uppers(self):
        return []

    def start(self):
        return 0

    def estimate_bytes(self, size):
        return 1e30 if self.big else 0.0

    def size_message(self, size, need, budget):
        return "fake LP too large"

    def build(self, i):
        return Built(lp=_LP(i), size={"i": i}, model=i, builder="fake")

    def lower(self, built, raw):
        return _Lower(self.lows[built.model])

    def upper(self, built, raw):
        u = self.ups[built.model]
        return _Upper(math.inf, False) if u is None else _Upper(u)

    def extra_uppers(self, step):
        return []

    def diagnostics(self, built, raw, upper):
        return {}

    def grow(self, step, best):
        if step.iteration == self.grow_stop_at:
            return Stop("no step can help")
        return step.built.model + 1

    def references(self, lo, up):
        return []

    def report(self, best, last, status):
        return {}


class _LP:
    def __init__(self, i):
        self.i = i

    def size(self):
        return {"rows": 0, "cols": 0, "nonzeros": 0}


class _Raw:
    objective, seconds, backend, method = 0.0, 0.0, "fake", "fake"


def _ctx(fail_at=None):
    def solve(lp, share=1.0):
        if lp.i == fail_at:
            raise SolveFailed("fake failure")
        return _Raw()

    import time

    return Context(profile=None, time_limit=1e6, t0=time.perf_counter(), solve_lp=solve)


def test_best_bracket_keeps_each_side_independently():
    fam = FakeFamily([1.0, 0.5, 0.9], [3.0, 2.0, None], grow_stop_at=2)
    r = run(fam, _ctx(), 1e-9)
    assert (r.best.lower, r.best.upper_value) == (1.0, 2.0)  # lower of step 0, upper of step 1
    assert r.status == "gap_not_reached" and r.message == "no step can help"
    assert [h["iteration"] for h in r.history] == [0, 1, 2]


def test_target_gap_ends_the_loop():
    r = run(FakeFamily([1.0, 1.99999], [2.0, 2.0]), _ctx(), 1e-4)
    assert r.status == "optimal" and len(r.history) == 2


def test_a_solver_failure_first_is_an_error_later_keeps_the_bracket():
    with pytest.raises(SolveFailed):
        run(FakeFamily([1.0], [2.0]), _ctx(fail_at=0), 1e-9)
    r = run(FakeFamily([1.0, 1.5], [2.0, 2.0]), _ctx(fail_at=1), 1e-9)
    assert r.best.lower == 1.0 and r.message.startswith("refinement stopped: fake failure")


def test_the_first_lp_over_the_memory_budget_is_refused():
    with pytest.raises(ProblemTooLarge, match="fake LP too large"):
        run(FakeFamily([1.0], [2.0], big=True), _ctx(), 1e-9)


def test_a_stalled_lower_bound_stops_the_loop():
    fam = FakeFamily([1.0] * 10, [2.0] * 10)
    r = run(fam, _ctx(), 1e-9)
    assert len(r.history) == STALL_LIMIT + 1 and "stopped improving" in r.message


def test_no_certified_upper_bound_is_uncertified():
    r = run(FakeFamily([1.0, 1.0], [None, None], grow_stop_at=1), _ctx(), 1e-9)
    assert r.status == "uncertified"


def test_one_default_time_budget():
    assert make_context(None, None).time_limit == DEFAULT_TIME_LIMIT == 300.0
    with pytest.raises(SpecError):
        make_context(None, -1.0)


def test_solve_takes_target_gap_and_refuses_non_problems():
    r = optmech.solve(Problem(PureDP(1.0), "abs", sensitivity=2, domain=IntegerLattice()), target_gap=1e-3)
    assert r.problem["target_gap"] == 1e-3 and r.relative_gap <= 1e-3
    with pytest.raises(SpecError):
        optmech.solve({"epsilon": 1.0})


def test_the_default_domain_is_the_reals_except_where_only_the_lattice_is_solved():
    assert isinstance(Problem.from_params({"epsilon": 1}).domain, Continuous)
    assert isinstance(Problem.from_params({"epsilon": 1, "privacy": "approx", "delta": 0.1}).domain, IntegerLattice)
    w = Problem.from_params({"epsilon": 1, "utility": "surrogate", "input": "uniform:0:5"})
    assert isinstance(w.domain, IntegerLattice) and w.objective.surrogate
