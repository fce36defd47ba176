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

With ``--widen`` (default on) the naive LP is also re-solved on windows scaled by 2, 4, 8, …
until its objective is within ``--widen-tol`` of the bracket, stops improving (the solver's
feasibility tolerance, 1e-7 by default, then dominates; ``--naive-tight`` sets 1e-10) or a time
budget runs out: the cost of getting an *accurate* answer the naive way.

Run ``python benchmarks/bench_naive.py`` (``--help`` for options); writes
``benchmarks/results/naive.json``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    ASYMMETRIC_COST,
    RESULTS_DIR,
    fmt,
    markdown_table,
    rel_distance_to_bracket,
    result_summary,
    run_isolated,
    short_error,
    write_json,
)

#: (case name, cost text, target speed-up naive/optmech).
CASES: list[tuple[str, str, float]] = [
    ("asymmetric", ASYMMETRIC_COST, 10.0),
    ("abs", "abs", 1000.0),
]


# -- child-process workers ---------------------------------------------------------------------


def optmech_case(cost: str, delta: int, epsilon: float, target_gap: float, symmetry: str,
                 repeats: int) -> dict:
    """Solve with optmech ``repeats`` times (after an untimed warm-up that loads the solver)."""
    import optmech
    from optmech.costs import parse_cost
    from optmech.spec import IntegerLattice, Problem, PureDP

    def problem(d: int) -> Problem:
        return Problem(privacy=PureDP(epsilon), cost=parse_cost(cost), sensitivity=d,
                       domain=IntegerLattice(), target_gap=target_gap, symmetry=symmetry)

    optmech.solve(problem(2))  # warm-up: imports highspy, loads the solver profile
    seconds, walls, r = [], [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        r = optmech.solve(problem(delta))
        walls.append(time.perf_counter() - t0)
        seconds.append(float(r.seconds))
    assert r is not None
    return {
        **result_summary(r),
        "seconds_all": seconds,
        "wall_all": walls,
        "seconds_median": statistics.median(seconds),
        "wall_median": statistics.median(walls),
    }


def naive_case(cost: str, delta: int, epsilon: float, window: list[int], tight: bool = False) -> dict:
    """Build and solve the naive cvxpy LP on ``window``; times exclude imports (warmed up).

    ``tight`` passes HiGHS feasibility tolerances of 1e-10 (its defaults are 1e-7), as optmech's
    default profile does; the default is the plain ``prob.solve(solver=cp.HIGHS)``.
    """
    import cvxpy as cp
    import numpy as np

    from optmech.costs import parse_cost

    # warm-up: import cvxpy's HiGHS interface and canonicalisation code on a tiny LP
    q = cp.Variable(3)
    cp.Problem(cp.Minimize(cp.sum(q)), [q >= 0, cp.sum(q) == 1, q[:-1] <= 2 * q[1:]]).solve(solver=cp.HIGHS)

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


# -- driver ------------------------------------------------------------------------------------


def run_case(name: str, cost: str, target_ratio: float, args: argparse.Namespace) -> dict:
    """One cost: optmech, naive on the same window, optionally naive on widened windows."""
    out: dict = {"case": name, "cost": cost, "delta": args.delta, "epsilon": args.epsilon,
                 "target_gap": args.target_gap, "target_ratio": target_ratio}
    om = run_isolated(optmech_case, dict(cost=cost, delta=args.delta, epsilon=args.epsilon,
                                         target_gap=args.target_gap, symmetry=args.symmetry,
                                         repeats=args.repeats), args.hard_timeout)
    out["optmech"] = om
    if not om["ok"]:
        print(f"  [{name}] optmech failed: {short_error(om)}", flush=True)
        return out
    print(f"  [{name}] optmech: [{om['lower_bound']:.12g}, {om['upper_bound']:.12g}] gap "
          f"{om['relative_gap']:.3g} in {om['seconds_median']:.4g} s ({om['lp']['builder']})", flush=True)
    window = [int(v) for v in om["window"]]
    nv = run_isolated(naive_case, dict(cost=cost, delta=args.delta, epsilon=args.epsilon, window=window,
                                       tight=args.naive_tight), args.hard_timeout)
    out["naive"] = nv
    if not nv["ok"]:
        print(f"  [{name}] naive failed: {short_error(nv)}", flush=True)
        return out
    _score(nv, om)
    out["ratio_seconds"] = nv["total_s"] / om["seconds_median"] if om["seconds_median"] > 0 else math.inf
    out["ratio_wall"] = nv["total_s"] / om["wall_median"] if om["wall_median"] > 0 else math.inf
    out["pass_ratio"] = out["ratio_seconds"] >= target_ratio
    out["pass_gap"] = bool(om["certified"]) and om["relative_gap"] <= args.target_gap
    print(f"  [{name}] naive on the same window: {nv['objective']:.12g} ({nv['rel_error']:.3g} {nv['side']}) "
          f"in {nv['total_s']:.4g} s; ratio {out['ratio_seconds']:.3g}x", flush=True)
    if args.widen:
        out["widened"] = widen(cost, window, om, args, name)
    return out


def _score(nv: dict, om: dict) -> None:
    err, side = rel_distance_to_bracket(nv["objective"], om["lower_bound"], om["upper_bound"])
    nv["rel_error"], nv["side"] = err, side


def widen(cost: str, window: list[int], om: dict, args: argparse.Namespace, name: str) -> list[dict]:
    """Naive LP on windows scaled ×2, ×4, … until within ``--widen-tol``, out of budget, or stalled.

    Stalled means the distance to the bracket shrank by less than half from one window to the
    next: the truncation error is gone and what is left is the solver's tolerance.
    """
    rows: list[dict] = []
    previous = math.inf
    spent, m = 0.0, 1
    while m < args.widen_max_factor:
        m *= 2
        w = [window[0] * m, window[1] * m]
        budget = args.widen_budget - spent
        if budget <= 1:
            break
        nv = run_isolated(naive_case, dict(cost=cost, delta=args.delta, epsilon=args.epsilon, window=w,
                                           tight=args.naive_tight), min(args.hard_timeout, budget))
        spent += nv["wall_s_parent"]
        nv["factor"] = m
        rows.append(nv)
        if not nv["ok"]:
            print(f"  [{name}] naive ×{m} failed: {short_error(nv)}", flush=True)
            break
        _score(nv, om)
        nv["ratio_seconds"] = nv["total_s"] / om["seconds_median"] if om["seconds_median"] > 0 else math.inf
        print(f"  [{name}] naive ×{m} window {w}: rel. error {nv['rel_error']:.3g} ({nv['side']}) in "
              f"{nv['total_s']:.4g} s", flush=True)
        if nv["rel_error"] <= args.widen_tol:
            break
        if nv["rel_error"] > 0.5 * previous:
            nv["stalled"] = True
            print(f"  [{name}] naive stalled at rel. distance {nv['rel_error']:.3g} (solver tolerance, "
                  "not truncation; try --naive-tight)", flush=True)
            break
        previous = nv["rel_error"]
    return rows


def print_tables(cases: list[dict], args: argparse.Namespace) -> None:
    """The timing table, the accuracy table and (with --widen) the widened-window table."""
    t_rows, a_rows, w_rows = [], [], []
    for c in cases:
        om, nv = c.get("optmech", {}), c.get("naive", {})
        if not om.get("ok"):
            t_rows.append([c["case"], "FAILED: " + short_error(om)] + ["—"] * 8)
            continue
        lp = om["lp"]
        naive_ok = nv.get("ok", False)
        t_rows.append([
            c["case"], f"{om['window']}", f"{lp.get('builder')} {lp.get('rows')}×{lp.get('cols')}",
            fmt(om["seconds_median"]), fmt(om["wall_median"]),
            f"{nv['constraint_rows']}" if naive_ok else "—",
            fmt(nv.get("build_s")) if naive_ok else "—",
            fmt(nv.get("total_s")) if naive_ok else ("FAILED: " + short_error(nv) if nv else "—"),
            (fmt(c["ratio_seconds"], ".3g") + "×") if naive_ok else "—",
            f"≥{c['target_ratio']:g}× " + ("PASS" if c.get("pass_ratio") else "FAIL"),
        ])
        a_rows.append([
            c["case"], f"[{om['lower_bound']:.12g}, {om['upper_bound']:.12g}]",
            fmt(om["relative_gap"], ".3g"), ("PASS" if c.get("pass_gap") else "FAIL"),
            fmt(nv.get("objective"), ".12g") if naive_ok else "—",
            fmt(nv.get("rel_error"), ".3g") if naive_ok else "—",
            nv.get("side", "—") if naive_ok else "—",
        ])
        for w in c.get("widened", []):
            w_rows.append([
                c["case"], f"×{w['factor']}", f"{w.get('window', '—')}",
                fmt(w.get("constraint_rows"), "d"), fmt(w.get("total_s")) if w["ok"] else "FAILED: " + short_error(w),
                fmt(w.get("rel_error"), ".3g") + (" (stalled)" if w.get("stalled") else ""), w.get("side", "—"),
                (fmt(w.get("ratio_seconds"), ".3g") + "×") if w["ok"] else "—",
            ])
    print(f"\n### Timing (integer domain, Δ={args.delta}, ε={args.epsilon:g}, target gap {args.target_gap:g})\n")
    print(markdown_table(["case", "window", "optmech LP", "optmech s", "optmech wall s", "naive rows",
                          "naive build s", "naive total s", "naive/optmech", "target"], t_rows))
    print("\n### Accuracy\n")
    print(markdown_table(["case", "optmech certified [lower, upper]", "optmech gap", "gap ≤ target",
                          "naive objective", "naive rel. distance", "side"], a_rows))
    if w_rows:
        print(f"\n### Naive on widened windows (until rel. distance ≤ {args.widen_tol:g})\n")
        print(markdown_table(["case", "factor", "window", "naive rows", "naive total s", "rel. distance",
                              "side", "naive/optmech"], w_rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--delta", type=int, default=50, help="integer sensitivity Δ")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--target-gap", type=float, default=1e-9, help="optmech's target relative gap")
    ap.add_argument("--symmetry", choices=["auto", "off"], default="auto", help="optmech's symmetry option")
    ap.add_argument("--repeats", type=int, default=3, help="optmech solves per case (median reported)")
    ap.add_argument("--cases", default=",".join(c[0] for c in CASES), help="comma-separated subset")
    ap.add_argument("--widen", action=argparse.BooleanOptionalAction, default=True,
                    help="also solve the naive LP on widened windows until accurate")
    ap.add_argument("--naive-tight", action="store_true",
                    help="give the naive HiGHS solve feasibility tolerances 1e-10 instead of its defaults")
    ap.add_argument("--widen-tol", type=float, default=1e-6, help="stop widening at this rel. distance")
    ap.add_argument("--widen-max-factor", type=int, default=64, help="largest window scale factor")
    ap.add_argument("--widen-budget", type=float, default=300.0, help="seconds for all widened solves of a case")
    ap.add_argument("--hard-timeout", type=float, default=600.0, help="kill a single solve after this many s")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "naive.json")
    args = ap.parse_args(argv)

    wanted = {s.strip() for s in args.cases.split(",") if s.strip()}
    results = []
    for name, cost, target in CASES:
        if name not in wanted:
            continue
        print(f"case {name}: cost {cost!r}", flush=True)
        try:
            results.append(run_case(name, cost, target, args))
        except Exception as exc:  # noqa: BLE001 - report and go on with the next case
            results.append({"case": name, "cost": cost, "target_ratio": target,
                            "optmech": {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}})
            print(f"  [{name}] driver error: {type(exc).__name__}: {exc}", flush=True)
    print_tables(results, args)
    path = write_json(args.json, {"benchmark": "naive", "settings": vars(args) | {"json": str(args.json)},
                                  "cases": results})
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
