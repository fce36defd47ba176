"""Budgets that are promises (issue 19): the memory estimate bounds the measured peak of the
process and names the builder that runs; ``--time-limit T`` bounds the whole command, building
and certifying included, within T + max(1 s, 10 % of T) plus the interpreter's start-up.

The subprocess tests run ``python -m optmech solve`` as a user would and read the child's own
peak resident set (``benchmarks/_common.py::run_measured``); ``benchmarks/bench_budgets.py`` prints the same comparisons on
larger problems.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import pytest

import optmech

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from _common import run_measured  # noqa: E402
from optmech.budget import (BASELINE_BYTES, LPPlan, Pace, TimeLimitReached, lp_bytes, margin_seconds,
                            memory_budget)
from optmech.certify import LowerCertificate
from optmech.errors import ProblemTooLarge, SolveFailed
from optmech.families import family_for
from optmech.families.base import Built, Context, Stop
from optmech.loop import make_context, run
from optmech.spec import Problem

EXPR = "abs(x-3)+0.1*x**2"  # asymmetric and non-monotone: the general 1-D builder
ENV = {k: v for k, v in os.environ.items() if k != "OPTMECH_MAX_MEMORY_GB"}


def _solve(args: list[str], env: dict | None = None, timeout: float = 120.0) -> dict:
    """``python -m optmech solve --epsilon 1 ARGS --json`` in a child: exit status, wall, peak RSS, JSON."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "optmech", "solve", "--epsilon", "1", *args, "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or ENV, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    wall = time.perf_counter() - t0
    return {"rc": p.returncode, "wall": wall, "out": out, "err": err, "json": json.loads(out) if out.strip() else None}


def _peak_of(args: list[str], env: dict | None = None) -> tuple[dict, int]:
    """Like :func:`_solve`, with the child's own peak resident set in bytes (through the benchmarks'
    bare launcher: a child started straight from this test process would report the test
    process's resident set, which ``ru_maxrss`` carries across ``fork`` and ``exec``)."""
    r = run_measured(["-m", "optmech", "solve", "--epsilon", "1", *args, "--json"], env or ENV, timeout=300)
    assert r["rc"] == 0 and r["peak_bytes"] > 0, r
    return json.loads(r["stdout"]), r["peak_bytes"]


@pytest.fixture(scope="module")
def startup() -> float:
    """The interpreter's start-up, imports and output: a tiny solve's wall time minus the seconds the
    solve reports (from its start to its Result), the smaller of two."""
    best = math.inf
    for _ in range(2):
        r = _solve(["--sensitivity", "1", "--domain", "integer", "--cost", "abs"])
        best = min(best, r["wall"] - r["json"]["seconds"])
    return best


# -- memory ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["--sensitivity", "1000", "--domain", "integer", "--cost", EXPR, "--time-limit", "60"],
    ["--sensitivity", "100000", "--domain", "integer", "--cost", "abs"],
    ["--privacy", "approx", "--delta", "1e-4", "--sensitivity", "12", "--cost", "abs"],
], ids=["general", "periodic", "approx"])
def test_the_estimate_bounds_the_measured_peak_and_names_the_builder(args):
    res, peak = _peak_of(args)
    budget = res["lp"]["budget"]
    assert res["certified"], res["message"]
    assert peak <= budget["estimated_peak_bytes"], (peak / 2**20, budget["estimated_peak_bytes"] / 2**20)
    assert budget["builder"] == res["lp"]["builder"]
    assert budget["memory_limit_bytes"] == memory_budget()


CASES = [
    {"epsilon": 1, "sensitivity": 40, "domain": "integer", "cost": "where(x > 0, x, 2*abs(x))"},
    {"epsilon": 1, "sensitivity": 40, "domain": "integer", "cost": "abs"},
    {"epsilon": 1, "sensitivity": 3, "domain": "integer", "cost": "x**2+abs(x)"},
    {"epsilon": 1, "sensitivity": 1, "cost": "abs", "resolution": 16},
    {"epsilon": 1, "sensitivity": 1, "cost": "where(x > 0, x, 2*abs(x))", "resolution": 16},
    {"privacy": "approx", "epsilon": 1, "delta": 1e-3, "sensitivity": 4, "cost": "abs"},
    {"privacy": "approx", "epsilon": 1, "delta": 1e-3, "sensitivity": 4, "cost": EXPR},
    {"privacy": "approx", "epsilon": 1, "delta": 1e-2, "sensitivity": 2, "cost": "l1", "dim": 2},
    {"epsilon": 1, "dim": 2, "cost": "l1", "domain": "integer", "sensitivity": 2},
    {"epsilon": 1, "dim": 2, "cost": "abs(x1)+2*abs(x2)", "domain": "integer", "sensitivity": 2},
    {"epsilon": 1, "dim": 2, "cost": "abs(x1-1)+abs(x2)", "domain": "integer", "sensitivity": 1},
    {"epsilon": 1, "dim": 2, "cost": "l1", "resolution": 2},
    {"privacy": "lipschitz", "epsilon": 1, "cost": "abs", "domain": "integer"},
    {"privacy": "lipschitz", "epsilon": 1, "cost": "l2", "dim": 2, "norm": "l2"},
    {"utility": "wasserstein", "input": "poisson:5:0:30", "epsilon": 1, "sensitivity": 2},
    {"utility": "wasserstein", "input": "poisson:5:0:30", "epsilon": 1, "sensitivity": 2, "privacy": "approx",
     "delta": 1e-3},
]


@pytest.mark.parametrize("params", CASES, ids=lambda p: "-".join(str(v) for v in p.values())[:40])
def test_every_family_plans_the_lp_its_build_makes(params):
    """Each family's plan names the builder its build() uses and bounds the LP's shape."""
    problem = Problem.from_params(params)
    ctx = make_context(None, 60)
    fam = family_for(problem)(problem, ctx)
    fam.initial_uppers()
    size = fam.start()
    assert not isinstance(size, Stop)
    plan = fam.plan(size)
    built = fam.build(size)
    got = built.lp.size()
    assert plan.builder == built.builder
    assert (plan.rows, plan.cols, plan.nonzeros) >= (0, 0, 0)
    assert plan.rows >= got["rows"] and plan.cols >= got["cols"] and plan.nonzeros >= got["nonzeros"], (plan, got)
    assert fam.estimate_bytes(size) == plan.peak_bytes()
    assert plan.peak_bytes() >= BASELINE_BYTES + lp_bytes(**got, builder=plan.builder) * (plan.solver != "chain")


@pytest.mark.parametrize("params", [CASES[0], CASES[5], CASES[8], CASES[14]], ids=["pure", "approx", "nd", "w1"])
def test_the_result_reports_the_estimate_and_its_builder(params):
    r = optmech.solve(Problem.from_params(params), time_limit=60)
    b = r.lp["budget"]
    assert b["builder"] == r.lp["builder"] and b["estimated_peak_bytes"] >= BASELINE_BYTES
    assert b["time_limit_s"] == 60 and r.to_dict()["lp"]["budget"] == b


def test_the_memory_check_names_the_builder_that_would_run():
    """Δ = 100000 with a cost that is not symmetric and monotone: the general builder, not the periodic one."""
    for cost, builder in ((EXPR, "general builder"), ("abs", "periodic builder")):
        problem = Problem.from_params({"epsilon": 1, "sensitivity": 10**5, "domain": "integer", "cost": cost})
        fam = None
        os.environ["OPTMECH_MAX_MEMORY_GB"] = "0.1"
        try:
            with pytest.raises(ProblemTooLarge, match=builder):
                fam = family_for(problem)(problem, make_context(None, 60))
        finally:
            del os.environ["OPTMECH_MAX_MEMORY_GB"]
        assert fam is None


def test_enclosure_blocks_change_no_value(monkeypatch):
    """Expression enclosures are computed in blocks (bounded memory); the certificates are unchanged."""
    import optmech.problems.lattice as lattice
    from optmech.families.pure1d import laplace_upper

    for params, grid in (({"epsilon": 1, "sensitivity": 1, "cost": "where(x > 0, x, 2*abs(x))"}, lattice.Grid1D.cells(1.0, 40)),
                         ({"epsilon": 1, "sensitivity": 1, "domain": "integer", "cost": EXPR}, lattice.Grid1D.integer(200))):
        p = Problem.from_params(params)
        monkeypatch.setattr(lattice, "ENCLOSURE_CHUNK", 50)
        a = laplace_upper(p, grid).value
        monkeypatch.setattr(lattice, "ENCLOSURE_CHUNK", 10**12)
        b = laplace_upper(p, grid).value
        assert a == b


def test_the_uniform_reference_is_skipped_when_it_cannot_fit():
    from optmech.families.relaxed import approx_references

    ctx = make_context(None, 0.2)
    bounds = approx_references("abs", 1.0, 1e-6, 30, ctx=ctx, with_relaxed_lp=False)
    uni = [b for b in bounds if b.name == "uniform"][0]
    assert math.isnan(uni.value) and not uni.valid and "not computed" in uni.note and "time limit" in uni.note
    assert [b for b in approx_references("abs", 1.0, 1e-2, 3) if b.name == "uniform"][0].valid  # no ctx: computed


# -- time: the loop's rules on a fake family -----------------------------------------------------------
def _mk(v: float) -> LowerCertificate:
    return LowerCertificate(value=v, normalisation_multiplier=1.0, clipped_rows=0, error_term=0.0, solver_objective=v)


class _Up:
    def __init__(self, v, certified=True):
        self.value, self.certified = v, certified


class _LP:
    def size(self):
        return {"rows": 1, "cols": 1, "nonzeros": 1}


class _Raw:
    objective, seconds, backend, method, x = 0.0, 0.0, "fake", "fake", None


class TimedFamily:
    """Steps that take ``build_s`` seconds to build; plans that predict ``predict_s`` per phase."""

    name, max_steps = "timed", 10

    def __init__(self, build_s=0.0, predict_s=None, floor=None, upper=None):
        self.build_s, self.predict_s, self.floor, self.up = build_s, predict_s, floor, upper

    def initial_uppers(self):
        return [] if self.up is None else [_Up(self.up)]

    def start(self):
        return 0

    def plan(self, i):
        p = self.predict_s
        return LPPlan(rows=1, cols=1, nonzeros=1, builder="fake", build_seconds=p, certify_seconds=p)

    def estimate_bytes(self, i):
        return self.plan(i).peak_bytes()

    def size_message(self, i, need, budget):
        return "too large"

    def build(self, i):
        time.sleep(self.build_s)
        return Built(lp=_LP(), size={"i": i}, model=i, builder="fake")

    def lower(self, built, raw):
        return _mk(1.0 - 0.5 ** (built.model + 1))

    def upper(self, built, raw):
        return _Up(2.0)

    def extra_uppers(self, step):
        return []

    def diagnostics(self, built, raw, upper):
        return {}

    def grow(self, step, best):
        return step.built.model + 1

    def references(self, lo, up):
        return []

    def report(self, best, last, status):
        return {}

    def fallback_lower(self):
        return (self.floor, "a floor") if self.floor is not None else (None, "")


def _ctx(limit, calls=None):
    ctx = Context(profile=None, time_limit=limit, t0=time.perf_counter(), solve_lp=None)

    def solve(lp, share=1.0):
        left = share * (ctx.time_limit - ctx.elapsed() - ctx.reserve)
        if calls is not None:
            calls.append(left)
        if left <= 0:
            exc = SolveFailed("fake: time_limit (no time left for this attempt)")
            exc.attempts = [("fake", "fake", "time_limit", "no time left")]
            raise exc
        return _Raw()

    ctx.solve_lp = solve
    return ctx


def test_a_first_lp_that_cannot_fit_is_one_line_or_the_bracket_without_lp():
    with pytest.raises(TimeLimitReached, match="time_limit: the fake LP") as e:
        run(TimedFamily(predict_s=10.0), _ctx(5.0), 1e-9)
    assert isinstance(e.value, SolveFailed) and "\n" not in str(e.value)
    r = run(TimedFamily(predict_s=10.0, floor=0.5, upper=3.0), _ctx(5.0), 1e-9)
    assert (r.best.lower, r.best.upper_value, r.status, r.history) == (0.5, 3.0, "gap_not_reached", [])
    assert r.message.startswith("time limit reached before the first LP") and r.best.certified


def test_the_solver_gets_the_time_left_after_the_certification_and_the_report():
    calls: list[float] = []
    r = run(TimedFamily(predict_s=0.1), _ctx(100.0, calls), 1e-9)
    assert r.history and calls
    # the first solve: 100 s minus 1.5 × 0.1 s certification minus the report's 0.5 s
    assert 99.0 < calls[0] <= 100.0 - 0.15 - 0.5


def test_a_family_that_needs_more_time_after_the_last_solve_gets_it_kept_back():
    """``final_seconds()`` (the references a family computes after its last solve) replaces the
    report's 0.5 s when larger: the solver gets that much less."""
    calls: list[float] = []
    fam = TimedFamily(predict_s=0.1)
    fam.final_seconds = lambda: 7.0
    run(fam, _ctx(100.0, calls), 1e-9)
    assert 92.0 < calls[0] <= 100.0 - 0.15 - 7.0


def test_the_approx_family_keeps_back_the_discrete_gaussian_reference():
    """The (ε, δ) family on ℤ computes the discrete Gaussian after its last solve up to Δ = 64 (0.44 s
    measured at Δ = 64): its time is kept back, growing like Δ², and nothing beyond 64."""
    from optmech.budget import FINAL_SECONDS
    from optmech.families.approx import DISCRETE_GAUSSIAN_MAX_SENSITIVITY, ApproxFamily
    from optmech.spec import ApproxDP, IntegerLattice, Problem

    def final(d):
        prob = Problem(privacy=ApproxDP(0.1, 0.01), cost="abs", sensitivity=d, domain=IntegerLattice())
        return ApproxFamily(prob, None).final_seconds()

    assert final(64) > 0.44 + FINAL_SECONDS and final(8) < final(32) < final(64)
    assert final(DISCRETE_GAUSSIAN_MAX_SENSITIVITY + 1) == FINAL_SECONDS


def test_a_step_that_would_not_fit_is_skipped_and_the_bracket_kept():
    """Measured steps of 0.3 s predict the next; the loop stops before one would pass the limit."""
    t = time.perf_counter()
    r = run(TimedFamily(build_s=0.3, predict_s=0.0), _ctx(2.0), 1e-9)
    assert time.perf_counter() - t <= 2.0
    assert r.history and r.best.certified and r.status == "gap_not_reached" and "time limit" in r.message


def test_pace_scales_measured_steps_by_their_work():
    pace = Pace()
    small = LPPlan(rows=100, cols=100, nonzeros=800, builder="x")
    big = LPPlan(rows=200, cols=200, nonzeros=1600, builder="x")
    pace.record(small, 1.0, 2.0)
    pred = pace.predict(big, 0.5)
    assert pred.build == pytest.approx(1.5 * 2**1.25) and pred.certify == pytest.approx(3.0 * 2**1.25)
    assert pred.total == pytest.approx(pred.build + 2 * pred.setup + pred.certify + 0.5)
    assert margin_seconds(5) == 1.0 and margin_seconds(60) == 6.0


# -- time: the command ---------------------------------------------------------------------------------
def test_time_limit_bounds_the_command_with_a_certified_bracket(startup):
    """An asymmetric cost on ℝ to a relative gap of 1e-12 needs LPs of millions of columns (the third LP, 2e5
    columns, takes ~30 s on 2 cores and reaches 3e-9), so the limit ends it on any machine; with 3 s the
    command ends within the stated margin."""
    T = 3.0
    r = _solve(["--sensitivity", "1", "--cost", "where(x > 0, x, 2*abs(x))", "--target-gap", "1e-12",
                "--time-limit", str(T)])
    assert r["wall"] <= T + margin_seconds(T) + startup, r
    assert r["rc"] == 0 and r["json"]["certified"] and r["json"]["status"] == "gap_not_reached"
    assert "time limit" in r["json"]["message"]


def test_time_limit_bounds_the_command_with_a_one_line_error(startup):
    """Δ = 100000 (the memory budget raised past its estimate): not even the first upper bound fits in 1 s; one
    line, exit 4."""
    T = 1.0
    r = _solve(["--sensitivity", "100000", "--domain", "integer", "--cost", EXPR, "--time-limit", str(T)],
               env=ENV | {"OPTMECH_MAX_MEMORY_GB": "1000"})
    assert r["wall"] <= T + margin_seconds(T) + startup, r
    assert r["rc"] == 4 and r["out"] == "" and r["err"].count("\n") == 1
    assert r["err"].startswith("optmech: solver failed: time_limit")


@pytest.mark.slow
def test_time_limit_after_some_steps_keeps_the_best_bracket(startup):
    """The continuous asymmetric problem at a 1e-9 target refines for minutes; 10 s: some steps, then the bracket
    (at the default target it is done within a second on an idle machine)."""
    T = 10.0
    r = _solve(["--sensitivity", "1", "--cost", "where(x > 0, x, 2*abs(x))", "--target-gap", "1e-9", "--time-limit",
                str(T)])
    assert r["wall"] <= T + margin_seconds(T) + startup, r
    res = r["json"]
    assert r["rc"] == 0 and res["certified"] and res["history"] and res["status"] == "gap_not_reached"
    assert "time limit" in res["message"]
