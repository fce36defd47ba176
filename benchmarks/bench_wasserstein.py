"""optmech's W1 noise LP against the same problem written naively in cvxpy (dense convolution).

``optmech.solve_wasserstein(X, ε, m)`` gives a certified bracket on the smallest 1-Wasserstein
distance W1(X, X + θ) = Σ_k |F_X(k) − F_{X+θ}(k)| over ε-DP noise θ on ℤ with integer
sensitivity m.  The naive formulation is what one writes first: a cvxpy ``Variable`` p on the
noise window −K..K (``--naive-window first``, the default: the window the first version of optmech
used and the README's figures were measured on, ``initial_half_width`` at the target gap, wide
enough for the naive value to come within ~1e-6 of the optimum; ``--naive-window optmech``: the
half-width optmech ended with, ``r.truncation["half_width"]``, which is much smaller now that the
LP prices the tail beyond its window),
``p >= 0``, ``sum(p) == 1``, for d = 1..m the ratio constraints ``p[:-d] <= e^ε p[d:]`` and
``p[d:] <= e^ε p[:-d]``, the output cdf ``F_Y = C @ p`` with C the dense
(len(k_out) × (2K+1)) convolution-and-cumsum matrix (C[k, j] = F_X(k − j), built with numpy
as the cumulative sum of the convolution matrix), and the objective ``sum(abs(F_X − C @ p))``
over the whole output range x_lo − K .. x_hi + K, solved by ``prob.solve(solver=cp.HIGHS)``
(CLARABEL when cvxpy has no HiGHS).  Its time is build + solve, end to end (after a warm-up
that imports cvxpy's solver interface).

Through the harness (``benchmarks/harness.py``: a fresh process per repeat after an untimed
warm-up on each side, the median of ``--repeats``).  Comparison cases ``poisson5_m15`` (the
issue's), ``poisson5_m5``, ``poisson20_m30``, ``poisson20_m60``: our side is one
``solve_wasserstein`` (bracket, LP size ``r.lp``, the half-width it ended with), the baseline
(:func:`peer` cvxpy) the naive LP built and solved end to end, placed against optmech's bracket
(relative distance to the interval, 0 inside; "below" means under the certified lower bound, so it
is not the true optimum).  The naive problem's size: the dense C in the note; with ``--set
details=true`` also cvxpy's canonical LP (``get_problem_data``) and the optimum's W1 recomputed by
optmech's evaluator with its ratio violations (computed inside the timed call, so compare times
without it).  Parameters (``--set``): ``target_gap`` (1e-6), ``naive_window`` ("first" or
"optmech"), ``half_width`` (0: from the window), ``naive_solver`` ("auto", "HIGHS", "CLARABEL"),
``tight`` (false; true: HiGHS tolerances 1e-10), ``details`` (false).

``scale m=<m>`` (optmech issue 23): the sensitivity sweep on Poisson(200) restricted to [0, 600],
ε = 1, target gap 1e-8, m in 60, 125, 250, 500 (the last is the target case: certified gap <= 1e-8
within 60 s), on this tree and on a baseline commit (``COMMIT``; both with ``time_limit`` 300 s,
``--set time_limit=...``); the growth exponent of each tree is the least-squares slope of
log(seconds) against log(m) over the cases whose note says the target was met (read off the
records).  ``scale δ 0.01, m=<m>``: the same under (ε, δ)-DP, m in 15, 30, 45 (the hockey-stick LP
keeps 2m·N slacks; m = 60 is out of reach)::

    python -m benchmarks.harness run benchmarks/bench_wasserstein.py --only poisson [--repeats 3]
    python -m benchmarks.harness run benchmarks/bench_wasserstein.py --only poisson --set tight=true
    python -m benchmarks.harness run benchmarks/bench_wasserstein.py --only "scale m" --baseline-commit <sha>
    python benchmarks/bench_wasserstein.py [same options]               # the same

Results: ``benchmarks/results/bench_wasserstein.jsonl``.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import rel_distance_to_bracket, result_summary  # noqa: E402
from harness import COMMIT, add_case, main, peer  # noqa: E402

#: Window half-width for the naive LP when optmech's result does not say which one it used.
FALLBACK_HALF_WIDTH = 225

#: (case name, input spec, ε, m).  The first is the issue's case.
CASES: list[tuple[str, str, float, int]] = [
    ("poisson5_m15", "poisson:5:0:30", 2.0, 15),
    ("poisson5_m5", "poisson:5:0:30", 2.0, 5),
    ("poisson20_m30", "poisson:20:0:60", 2.0, 30),
    ("poisson20_m60", "poisson:20:0:60", 2.0, 60),
]


#: The scale sweep (``--scale``): input, ε, target gap; m from ``--sweep``.  m = 500 is the target case.
SCALE_INPUT, SCALE_EPSILON, SCALE_GAP = "poisson:200:0:600", 1.0, 1e-8
SCALE_SWEEP = (60, 125, 250, 500)
#: ``--scale --delta D``: the (ε, δ) sweep (its hockey-stick LP has 2m·N slacks; m = 60 is out of reach).
SCALE_SWEEP_APPROX = (15, 30, 45)


def _half_width(r) -> tuple[int, str]:
    """The window half-width optmech ended with, and where it was found."""
    trunc = r.truncation if isinstance(r.truncation, dict) else {}
    if trunc.get("half_width") is not None:
        return int(trunc["half_width"]), "r.truncation['half_width']"
    for h in reversed(r.history or []):
        if isinstance(h, dict) and h.get("half_width") is not None:
            return int(h["half_width"]), "r.history[-1]['half_width']"
    return FALLBACK_HALF_WIDTH, "fallback"


def naive_warmup(naive_solver: str = "auto") -> None:
    """Untimed: import cvxpy's solver interface and the canonicalisation code on a tiny LP."""
    import cvxpy as cp

    solver = naive_solver if naive_solver != "auto" else ("HIGHS" if "HIGHS" in cp.installed_solvers() else "CLARABEL")
    q = cp.Variable(3)
    cp.Problem(cp.Minimize(cp.sum(cp.abs(q - 0.5))), [q >= 0, cp.sum(q) == 1, q[:-1] <= 2 * q[1:]]).solve(
        solver=getattr(cp, solver))


def naive_case(spec: str, epsilon: float, m: int, K: int, solver: str = "auto", tight: bool = False,
               details: bool = False) -> dict:
    """Build and solve the naive dense cvxpy W1 LP on the window −K..K (imports warmed up by :func:`naive_warmup`).

    ``details``: also the canonical LP cvxpy hands to the solver and the optimum's W1 recomputed by
    optmech's evaluator with its ratio violations (inside the call the harness times, so off by default).

    ``tight`` passes HiGHS feasibility tolerances of 1e-10 (its defaults are 1e-7), as optmech's
    default profile does; the default is the plain ``prob.solve(solver=cp.HIGHS)``.
    """
    import warnings

    import cvxpy as cp
    import numpy as np
    import scipy.sparse as sp

    from optmech.inputs import parse_input_spec

    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"cvxpy\..*")  # inf·0 in its bound propagation
    if solver == "auto":
        solver = "HIGHS" if "HIGHS" in cp.installed_solvers() else "CLARABEL"
    inp = parse_input_spec(spec)
    pX = np.asarray(inp.p, dtype=float)
    x_lo, x_hi = int(inp.lo), int(inp.hi)

    t0 = time.perf_counter()
    N = 2 * K + 1
    k_out = np.arange(x_lo - K, x_hi + K + 1)  # every k where F_X and F_Y can differ
    dense_x = np.zeros(x_hi - x_lo + 1)
    dense_x[inp.k - x_lo] = pX
    FX = np.cumsum(dense_x)
    FX_out = np.where(k_out < x_lo, 0.0, np.where(k_out >= x_hi, 1.0, FX[np.clip(k_out - x_lo, 0, len(FX) - 1)]))
    # convolution matrix A[y, j] = p_X(k_out[y] − (j − K)), then the cumulative sum down each column
    A = np.zeros((len(k_out), N))
    for jj in range(N):
        A[jj: jj + len(dense_x), jj] = dense_x
    C = np.cumsum(A, axis=0)
    p = cp.Variable(N)
    e = math.exp(epsilon)
    cons = [p >= 0, cp.sum(p) == 1]
    for d in range(1, min(m, N - 1) + 1):
        cons += [p[:-d] <= e * p[d:], p[d:] <= e * p[:-d]]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.abs(FX_out - C @ p))), cons)
    t1 = time.perf_counter()
    opts = (dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10)
            if tight and solver == "HIGHS" else {})
    value = prob.solve(solver=getattr(cp, solver), **opts)
    t2 = time.perf_counter()

    stats = prob.solver_stats
    sm = prob.size_metrics
    # the canonical LP cvxpy hands to the solver (untimed; recomputed after the solve)
    canon: dict = {}
    recomputed = viol = realised_eps = None
    try:
        if not details:
            raise _Skip
        data, _, _ = prob.get_problem_data(getattr(cp, solver))
        Acan = data.get("A")
        if Acan is not None:
            canon = {"rows": int(Acan.shape[0]), "cols": int(Acan.shape[1]),
                     "nonzeros": int(sp.csc_array(Acan).nnz)}
    except _Skip:
        canon = {"skipped": "--set details=true"}
    except Exception as exc:  # noqa: BLE001 - a size is not worth failing the case for
        canon = {"error": f"{type(exc).__name__}: {exc}"}
    # the naive optimum's W1 recomputed by optmech's evaluator: checks the formulation
    if details and p.value is not None:
        from optmech.problems.wasserstein import w1_of_pmf

        pv = np.maximum(np.asarray(p.value, dtype=float), 0.0)
        recomputed = float(w1_of_pmf(inp, -K, pv / pv.sum()))
        viol, ratio = 0.0, 0.0
        for d in range(1, min(m, N - 1) + 1):
            for a, b in ((pv[:-d], pv[d:]), (pv[d:], pv[:-d])):
                viol = max(viol, float(np.max(a - e * b)))
                with np.errstate(divide="ignore", invalid="ignore"):
                    rr = np.where(a > 0, a / b, 0.0)
                ratio = max(ratio, float(np.max(rr)))
        realised_eps = math.log(ratio) if ratio > 0 else None
    return {
        "status": prob.status,
        "solver": solver,
        "tight_tolerances": tight,
        "objective_recomputed_w1": recomputed,
        "max_ratio_violation": viol,
        "realised_epsilon_in_window": realised_eps,
        "objective": float(value) if value is not None else math.nan,
        "half_width": K,
        "window_points": N,
        "output_points": int(len(k_out)),
        "C_shape": [int(C.shape[0]), int(C.shape[1])],
        "C_nonzeros": int(np.count_nonzero(C)),
        "constraint_rows": int(sum(con.size for con in cons)),
        "size_metrics": {
            "num_scalar_variables": int(sm.num_scalar_variables),
            "num_scalar_eq_constr": int(sm.num_scalar_eq_constr),
            "num_scalar_leq_constr": int(sm.num_scalar_leq_constr),
            "num_scalar_data": int(sm.num_scalar_data),
        },
        "canonical": canon,
        "mass_at_window_edge": float(np.sum(np.abs(p.value[:m])) + np.sum(np.abs(p.value[-m:])))
        if p.value is not None else None,
        "build_s": t1 - t0,
        "solve_s": t2 - t1,
        "total_s": t2 - t0,
        "solver_time_s": float(stats.solve_time) if stats and stats.solve_time is not None else None,
    }


# -- the cases ----------------------------------------------------------------------------------


class _Skip(Exception):
    """Internal: the untimed-details branch of :func:`naive_case` is off."""


def first_window(spec: str, epsilon: float, m: int, target_gap: float) -> int:
    """The window half-width the first version of optmech solved on (and the README's figures used)."""
    from optmech.families.wasserstein import initial_half_width
    from optmech.inputs import parse_input_spec

    inp = parse_input_spec(spec)
    return max(initial_half_width(inp, epsilon, m, target_gap), inp.hi - inp.lo + m)


def warm_w1(spec: str, epsilon: float) -> None:
    """Untimed: a W1 solve at m = 2 (imports highspy, loads the profile)."""
    from optmech.drive import solve_wasserstein
    from optmech.inputs import parse_input_spec

    solve_wasserstein(parse_input_spec(spec), epsilon, 2, target_gap=1e-3)


def w1_case(spec: str, epsilon: float, m: int, target_gap: float) -> dict:
    """Our side of the comparison: one ``solve_wasserstein``; bracket, LP size, the window it ended with."""
    from optmech.drive import solve_wasserstein
    from optmech.inputs import parse_input_spec

    inp = parse_input_spec(spec)
    r = solve_wasserstein(inp, epsilon, m, target_gap=target_gap)
    K, K_source = _half_width(r)
    return result_summary(r) | {"half_width": K, "half_width_source": K_source, "input_support": [int(inp.lo), int(inp.hi)],
                                "history_half_widths": [h.get("half_width") for h in r.history],
                                "note": f"LP {r.lp.get('rows')}×{r.lp.get('cols')}, {r.lp.get('nonzeros')} nnz; K = {K}"}


def naive(spec: str, epsilon: float, m: int, target_gap: float, naive_window: str, half_width: int,
          naive_solver: str, tight: bool, details: bool, ours: dict) -> dict:
    """The baseline: the naive dense cvxpy LP on the window ``naive_window`` (or ``half_width`` > 0),
    placed against optmech's certified bracket."""
    K = half_width or (int(ours["half_width"]) if naive_window == "optmech"
                       else first_window(spec, epsilon, m, target_gap))
    nv = naive_case(spec, epsilon, m, K, solver=naive_solver, tight=tight, details=details)
    err, side = rel_distance_to_bracket(nv["objective"], ours["lower_bound"], ours["upper_bound"])
    nv["rel_distance"], nv["side"] = err, side
    nv["note"] = (f"naive ({nv['solver']}{', tight' if tight else ''}) K = {K}: {err:.3g} {side} the bracket; "
                  f"dense C {nv['C_shape'][0]}×{nv['C_shape'][1]}, {nv['C_nonzeros']} nnz")
    return nv


def scale_case(m: int, delta: float, time_limit: float) -> dict:
    """One solve of the ``scale`` sweep (the same function on this tree and on the baseline commit)."""
    from optmech.inputs import parse_input_spec

    try:
        from optmech.drive import solve_wasserstein
    except ImportError:  # older trees
        from optmech.solve_wasserstein import solve_wasserstein
    r = solve_wasserstein(parse_input_spec(SCALE_INPUT), SCALE_EPSILON, m, target_gap=SCALE_GAP,
                          time_limit=time_limit, delta=delta)
    met = bool(r.certified) and r.relative_gap <= SCALE_GAP
    return {"lower": r.lower_bound, "upper": r.upper_bound, "gap": r.relative_gap, "certified": bool(r.certified),
            "status": str(getattr(r.status, "value", r.status)), "solve_seconds": float(r.seconds),
            "lp": {k: r.lp.get(k) for k in ("rows", "cols", "nonzeros")},
            "half_width": (r.history[-1].get("size") or {}).get("half_width") if r.history else None,
            "steps": len(r.history), "reached_target": met,
            "note": f"gap ≤ {SCALE_GAP:g}: {'met' if met else 'NOT met'}; LP {r.lp.get('rows')}×{r.lp.get('cols')}"}


def warm_scale(delta: float) -> None:
    """Untimed: the sweep's input at m = 2."""
    from optmech.inputs import parse_input_spec

    try:
        from optmech.drive import solve_wasserstein
    except ImportError:
        from optmech.solve_wasserstein import solve_wasserstein
    solve_wasserstein(parse_input_spec(SCALE_INPUT), SCALE_EPSILON, 2, target_gap=1e-3, delta=delta)


for _name, _spec, _eps, _m in CASES:
    add_case(w1_case, _name, warmup=warm_w1, timeout=600.0,
             baseline=peer("cvxpy", naive, label="naive dense cvxpy LP", warmup=naive_warmup),
             params={"spec": _spec, "epsilon": _eps, "m": _m, "target_gap": 1e-6, "naive_window": "first",
                     "half_width": 0, "naive_solver": "auto", "tight": False, "details": False})
for _m in SCALE_SWEEP:
    add_case(scale_case, f"scale m={_m}", baseline=COMMIT, warmup=warm_scale, timeout=600.0,
             params={"m": _m, "delta": 0.0, "time_limit": 300.0})
for _m in SCALE_SWEEP_APPROX:
    add_case(scale_case, f"scale δ 0.01, m={_m}", baseline=COMMIT, warmup=warm_scale, timeout=600.0,
             params={"m": _m, "delta": 0.01, "time_limit": 300.0})


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
