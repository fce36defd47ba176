"""optmech against the naive cvxpy formulation of the integer pure-DP noise LP.

The naive formulation is what a researcher would write first: a cvxpy ``Variable`` p over the
integers of a window [k_lo, k_hi], constraints ``p >= 0``, ``sum(p) == 1`` and, for every offset
d = 1..Δ, the ratio constraints ``p[:-d] <= e^ε p[d:]`` and ``p[d:] <= e^ε p[:-d]`` (all pairs
|i - j| <= Δ), objective ``sum_k L(k) p_k``, solved by HiGHS through cvxpy.  It uses the same
window that optmech ended with (``r.truncation["window"]``).

The naive problem on a finite window drops every constraint that crosses the window's edge
and forces all mass inside, so its optimum is neither a bound nor a DP mechanism on ℤ; its
objective is compared with optmech's certified bracket [lower, upper] as the relative distance
to the interval (0 when inside; "below" means under the certified lower bound).

The ``widened`` cases also re-solve the naive LP on windows scaled by 2, 4, 8, … until its
objective is within ``widen_tol`` of the bracket, stops improving (the solver's feasibility
tolerance, 1e-7 by default, then dominates; ``tight=true`` sets 1e-10) or a time budget runs out:
the cost of getting an *accurate* answer the naive way.

Run through the harness (``benchmarks/harness.py``): every repeat of each side in a fresh process
after an untimed warm-up, the median of ``--repeats``, one JSON line per case in
``benchmarks/results/bench_naive.jsonl``::

    python -m benchmarks.harness run benchmarks/bench_naive.py [--repeats 3] [--only abs]
    python -m benchmarks.harness run benchmarks/bench_naive.py --set tight=true   # naive at tolerances 1e-10
    python benchmarks/bench_naive.py [same options]                                # the same

Cases per cost: ``<cost>`` (the naive LP on optmech's window) and ``<cost>, widened`` (the whole
widening search, one repeat).  Parameters (``--set KEY=VALUE``): ``delta`` (50), ``epsilon`` (1),
``target_gap`` (1e-9), ``symmetry`` ("auto"), ``tight`` (false), ``widen_tol`` (1e-6),
``widen_max_factor`` (64), ``widen_budget`` (300 s).  Targets: naive/optmech ≥ 10× (asymmetric),
≥ 1000× (|x|), i.e. an optmech/baseline ratio ≤ 0.1 and ≤ 0.001; optmech's certified gap ≤ 1e-9.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ASYMMETRIC_COST, rel_distance_to_bracket, result_summary  # noqa: E402
from harness import add_case, main, peer  # noqa: E402

#: (case name, cost text, target speed-up naive/optmech).
CASES: list[tuple[str, str, float]] = [
    ("asymmetric", ASYMMETRIC_COST, 10.0),
    ("abs", "abs", 1000.0),
]

#: The parameters of every case (``--set KEY=VALUE`` overrides them).
DEFAULTS: dict = dict(delta=50, epsilon=1.0, target_gap=1e-9, symmetry="auto", tight=False, widen_tol=1e-6,
                      widen_max_factor=64, widen_budget=300.0)


# -- the two sides ---------------------------------------------------------------------


def _problem(cost: str, delta: int, epsilon: float, target_gap: float, symmetry: str) -> object:
    from optmech.costs import parse_cost
    from optmech.spec import IntegerLattice, Problem, PureDP

    return Problem(privacy=PureDP(epsilon), cost=parse_cost(cost), sensitivity=delta,
                   domain=IntegerLattice(), target_gap=target_gap, symmetry=symmetry)


def optmech_warmup(cost: str, epsilon: float, target_gap: float, symmetry: str) -> None:
    """Untimed: imports highspy and loads the solver profile (a Δ = 2 solve)."""
    import optmech

    optmech.solve(_problem(cost, 2, epsilon, target_gap, symmetry))


def optmech_case(cost: str, delta: int, epsilon: float, target_gap: float, symmetry: str) -> dict:
    """One optmech solve: its certified bracket and the window the naive LP then uses."""
    import optmech

    r = optmech.solve(_problem(cost, delta, epsilon, target_gap, symmetry))
    out = result_summary(r)
    met = bool(r.certified) and float(r.relative_gap) <= target_gap
    out["note"] = f"gap ≤ {target_gap:g}: {'met' if met else 'NOT met'}"
    return out


def naive_warmup() -> None:
    """Untimed: import cvxpy's HiGHS interface and canonicalisation code on a tiny LP."""
    import cvxpy as cp

    q = cp.Variable(3)
    cp.Problem(cp.Minimize(cp.sum(q)), [q >= 0, cp.sum(q) == 1, q[:-1] <= 2 * q[1:]]).solve(solver=cp.HIGHS)


def naive_same_window(cost: str, delta: int, epsilon: float, tight: bool, target_ratio: float, ours: dict) -> dict:
    """The naive LP on the window optmech ended with, scored against optmech's certified bracket."""
    nv = naive_case(cost, delta, epsilon, [int(v) for v in ours["window"]], tight)
    _score(nv, ours)
    nv["note"] = (f"naive value {nv['rel_error']:.2g} {nv['side']} the bracket; target ratio ≤ "
                  f"{1 / target_ratio:g}")
    return nv


def naive_widened(cost: str, delta: int, epsilon: float, tight: bool, widen_tol: float, widen_max_factor: int,
                  widen_budget: float, ours: dict) -> dict:
    """The naive LP on windows ×2, ×4, … of optmech's until within ``widen_tol`` of the bracket, stalled
    (the distance shrank by less than half: the solver's tolerance, not truncation, is left) or out of
    ``widen_budget`` seconds; the timed figure is the whole search, what an accurate answer costs."""
    window = [int(v) for v in ours["window"]]
    rows: list[dict] = []
    previous, spent, m = math.inf, 0.0, 1
    while m < widen_max_factor and spent < widen_budget:
        m *= 2
        t0 = time.perf_counter()
        nv = naive_case(cost, delta, epsilon, [window[0] * m, window[1] * m], tight)
        spent += time.perf_counter() - t0
        _score(nv, ours)
        nv["factor"] = m
        rows.append(nv)
        if nv["rel_error"] <= widen_tol:
            break
        if nv["rel_error"] > 0.5 * previous:
            nv["stalled"] = True
            break
        previous = nv["rel_error"]
    last = rows[-1]
    why = "stalled (solver tolerance; try --set tight=true)" if last.get("stalled") else (
        "within tolerance" if last["rel_error"] <= widen_tol else "out of factors or budget")
    return {"windows": rows, "objective": last["objective"], "rel_error": last["rel_error"], "side": last["side"],
            "note": f"×{last['factor']}: {last['rel_error']:.2g} {last['side']} the bracket, {why}"}


def naive_case(cost: str, delta: int, epsilon: float, window: list[int], tight: bool = False) -> dict:
    """Build and solve the naive cvxpy LP on ``window`` (imports warmed up by :func:`naive_warmup`).

    ``tight`` passes HiGHS feasibility tolerances of 1e-10 (its defaults are 1e-7), as optmech's
    default profile does; the default is the plain ``prob.solve(solver=cp.HIGHS)``.
    """
    import cvxpy as cp
    import numpy as np

    from optmech.costs import parse_cost

    L = parse_cost(cost)
    t0 = time.perf_counter()
    k = np.arange(window[0], window[1] + 1, dtype=float)
    c = np.asarray(L(k), dtype=float)
    p = cp.Variable(k.size)
    e = math.exp(epsilon)
    cons = [p >= 0, cp.sum(p) == 1]
    for d in range(1, min(delta, k.size - 1) + 1):
        cons += [p[:-d] <= e * p[d:], p[d:] <= e * p[:-d]]
    prob = cp.Problem(cp.Minimize(c @ p), cons)
    t1 = time.perf_counter()
    opts = dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10) if tight else {}
    value = prob.solve(solver=cp.HIGHS, **opts)
    t2 = time.perf_counter()
    n_rows = int(sum(con.size for con in cons))
    stats = prob.solver_stats
    return {
        "status": prob.status,
        "tight_tolerances": tight,
        "objective": float(value) if value is not None else math.nan,
        "window": list(window),
        "points": int(k.size),
        "constraint_rows": n_rows,
        "build_s": t1 - t0,
        "solve_s": t2 - t1,
        "total_s": t2 - t0,
        "solver_time_s": float(stats.solve_time) if stats and stats.solve_time is not None else None,
    }


def _score(nv: dict, om: dict) -> None:
    err, side = rel_distance_to_bracket(nv["objective"], om["lower_bound"], om["upper_bound"])
    nv["rel_error"], nv["side"] = err, side


for _name, _cost, _target in CASES:
    _params = {"cost": _cost, **DEFAULTS, "target_ratio": _target}
    add_case(optmech_case, _name, params=_params, warmup=optmech_warmup,
             baseline=peer("cvxpy", naive_same_window, label="naive cvxpy LP", warmup=naive_warmup))
    add_case(optmech_case, f"{_name}, widened", params=_params, warmup=optmech_warmup, max_repeats=1, timeout=900.0,
             baseline=peer("cvxpy", naive_widened, label="naive cvxpy LP, widened", warmup=naive_warmup))


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
