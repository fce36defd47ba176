"""Scaling of optmech on the integer domain: the largest Δ solved within a time limit.

Series, each a geometric sweep of the sensitivity Δ at ε = 1 and target gap 1e-8:

* ``general``: the asymmetric cost ``where(x > 0, x, 2*abs(x))`` with ``symmetry="off"``
  (the general builder); target: Δ >= 30 000 within 60 s, time growing at most like Δ^1.2 from
  Δ = 1000 on (issue 23).
* ``nonmonotone``: ``min(abs(x), 0.5*abs(x - 3Δ) + Δ)`` (two basins, scaled with Δ), same target.
* ``abs``: |x| with ``symmetry="auto"`` (the symmetric monotone fast path); target:
  Δ >= 100000 within 60 s.
* ``naive``: the all-pairs LP (p_i <= e^ε p_j for every |i − j| <= Δ on the window optmech uses,
  4Δ + 3 points, mass outside dropped) built with scipy and solved by HiGHS's dual simplex, not
  certified: what one writes first.  No target; its growth exponent is reported.

``--baseline PATH`` runs the ``general`` and ``nonmonotone`` series a second time on another
checkout of optmech (e.g. ``git worktree add /tmp/optmech-base <commit>``), in the same run, as
``general@base`` and ``nonmonotone@base``.

A series stops at the first Δ that exceeds the limit, fails the gap or raises; with
``--refine N`` it then bisects (geometrically) N times between the last pass and that failure.
Each solve runs in its own process, gets ``time_limit=limit`` and is killed after a hard
deadline if it does not return.  The growth exponent is the least-squares slope of
log(seconds) against log(Δ) over the passing points.

Run ``python benchmarks/bench_scale.py`` (``--quick`` for a capped sweep of about a minute);
writes ``benchmarks/results/scale.json``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    ASYMMETRIC_COST,
    RESULTS_DIR,
    fmt,
    highs_solve_csc,
    markdown_table,
    result_summary,
    run_isolated,
    short_error,
    write_json,
)

#: name -> cost (``{D}`` is replaced by Δ), symmetry option, Δ sweep, target largest Δ, largest Δ of the
#: --quick sweep.
SERIES: dict[str, dict] = {
    "general": {
        "cost": ASYMMETRIC_COST, "symmetry": "off",
        "deltas": [100, 300, 1000, 3000, 10_000, 30_000, 100_000],
        "target": 30_000, "quick_max": 3000,
    },
    "nonmonotone": {
        "cost": "min(abs(x), 0.5*abs(x - 3*{D}) + {D})", "symmetry": "off",
        "deltas": [100, 300, 1000, 3000, 10_000, 30_000, 100_000],
        "target": 30_000, "quick_max": 3000,
    },
    "naive": {
        "cost": ASYMMETRIC_COST, "symmetry": "off", "naive": True,
        "deltas": [10, 30, 100, 300, 1000],
        "target": 0, "quick_max": 100,
    },
    "abs": {
        "cost": "abs", "symmetry": "auto",
        "deltas": [100, 1000, 10_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000],
        "target": 100_000, "quick_max": 10_000,
    },
}


def naive_case(cost: str, delta: int, epsilon: float) -> dict:
    """The all-pairs LP on 4Δ + 3 points (mass outside dropped), HiGHS dual simplex; not certified."""
    import numpy as np
    import scipy.sparse as sp

    from optmech.costs import parse_cost

    t0 = time.perf_counter()
    N = 4 * delta + 3
    x = np.arange(N) - (2 * delta + 1)
    i, d = np.meshgrid(np.arange(N), np.arange(1, delta + 1), indexing="ij")
    i, j = i.ravel(), (i + d).ravel()
    keep = j < N
    i, j = i[keep], j[keep]
    E = math.exp(epsilon)
    m = len(i)
    rows = np.concatenate([np.arange(2 * m)] * 2)
    cols = np.concatenate([i, j, j, i])
    vals = np.concatenate([np.ones(2 * m), -E * np.ones(2 * m)])
    A = sp.vstack([sp.csc_matrix(np.ones((1, N))), sp.csc_matrix((vals, (rows, cols)), shape=(2 * m, N))]).tocsc()
    h = highs_solve_csc(A, parse_cost(cost)(x.astype(float)), np.zeros(N), np.ones(N),
                        np.concatenate([[1.0], np.full(2 * m, -np.inf)]), np.concatenate([[1.0], np.zeros(2 * m)]), 600.0)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "relative_gap": math.nan, "certified": False, "status": str(h.getModelStatus()),
            "message": "naive all-pairs LP, not certified", "objective": h.getInfo().objective_function_value,
            "lp": {"builder": "naive all-pairs", "rows": int(A.shape[0]), "cols": N, "nonzeros": int(A.nnz)},
            "window": [int(x[0]), int(x[-1])], "refinements": 1, "wall_s": seconds}


def scale_case(cost: str, symmetry: str, delta: int, epsilon: float, target_gap: float,
               time_limit: float, tree: str | None = None) -> dict:
    """One solve in a child process, after an untimed warm-up at Δ = 2 (loads the solver); ``tree``
    is another checkout of optmech to import instead of this one."""
    if tree:
        sys.path.insert(0, tree)
    import optmech
    from optmech.costs import parse_cost
    from optmech.spec import IntegerLattice, Problem, PureDP

    def problem(d: int) -> Problem:
        return Problem(privacy=PureDP(epsilon), cost=parse_cost(cost), sensitivity=d,
                       domain=IntegerLattice(), target_gap=target_gap, symmetry=symmetry)

    optmech.solve(problem(2))
    t0 = time.perf_counter()
    r = optmech.solve(problem(delta), time_limit=time_limit)
    wall = time.perf_counter() - t0
    return {**result_summary(r), "wall_s": wall}


def loglog_slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log y against log x; ``None`` with fewer than two points."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def judge(res: dict, target_gap: float, limit: float, naive: bool = False) -> tuple[bool, str]:
    """Whether a case passed, and why not (a naive case needs only an optimal status in time)."""
    if not res.get("ok"):
        return False, short_error(res, 120)
    if naive:
        ok = res["status"].endswith("kOptimal") and res["seconds"] <= limit
        return ok, "" if ok else f"{res['status']} after {res['seconds']:.1f} s"
    if not res["certified"]:
        return False, f"uncertified ({res['status']}: {res['message']})"
    if not res["relative_gap"] <= target_gap:
        return False, f"gap {res['relative_gap']:.3g} > {target_gap:g} ({res['message']})"
    if res["seconds"] > limit:
        return False, f"{res['seconds']:.1f} s > {limit:g} s"
    return True, ""


def run_series(name: str, spec: dict, args: argparse.Namespace, tree: str | None = None) -> dict:
    """Sweep one series, stop at the first failure, then refine between pass and failure (on the
    checkout ``tree`` when given)."""
    deltas = [d for d in spec["deltas"] if not args.quick or d <= spec["quick_max"]]
    if args.max_delta:
        deltas = [d for d in deltas if d <= args.max_delta]
    hard = args.limit * 1.5 + 30
    points: list[dict] = []

    def one(delta: int) -> bool:
        print(f"  [{name}] Δ={delta} …", end="", flush=True)
        cost = spec["cost"].replace("{D}", str(delta))
        try:
            if spec.get("naive"):
                res = run_isolated(naive_case, dict(cost=cost, delta=delta, epsilon=args.epsilon), hard)
            else:
                res = run_isolated(scale_case, dict(cost=cost, symmetry=spec["symmetry"], delta=delta,
                                                    epsilon=args.epsilon, target_gap=args.target_gap,
                                                    time_limit=args.limit, tree=tree), hard)
        except Exception as exc:  # noqa: BLE001
            res = {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}
        ok, why = judge(res, args.target_gap, args.limit, bool(spec.get("naive")))
        res.update(delta=delta, passed=ok, reason=why)
        points.append(res)
        if res.get("ok"):
            print(f" {res['seconds']:.3g} s, gap {res['relative_gap']:.3g}, {res['lp'].get('builder')} "
                  f"({res['lp'].get('solver', 'highs')}) "
                  f"{res['lp'].get('rows')}×{res['lp'].get('cols')}" + ("" if ok else f"  FAIL: {why}"), flush=True)
        else:
            print(f" FAILED after {res['wall_s_parent']:.1f} s: {why}", flush=True)
        return ok

    last_pass, first_fail = None, None
    for d in deltas:
        if one(d):
            last_pass = d
        else:
            first_fail = d
            break
    refine = 0 if args.quick else args.refine
    lo, hi = last_pass, first_fail
    for _ in range(refine):
        if lo is None or hi is None:
            break
        mid = int(round(math.sqrt(lo * hi)))
        if mid <= lo or mid >= hi:
            break
        if one(mid):
            lo = mid
        else:
            hi = mid
    passed = sorted((p for p in points if p["passed"]), key=lambda p: p["delta"])
    xs, ys = [p["delta"] for p in passed], [p["seconds"] for p in passed]
    big = [(x, y) for x, y in zip(xs, ys) if y >= args.fit_min_seconds]
    from_1000 = [(x, y) for x, y in zip(xs, ys) if x >= 1000]
    largest = max(xs) if xs else None
    fail_pt = next((p for p in points if p["delta"] == hi and not p["passed"]), None)
    return {
        "series": name,
        "cost": spec["cost"],
        "symmetry": spec["symmetry"],
        "target_delta": spec["target"],
        "largest_delta_passed": largest,
        "first_failure": hi,
        "first_failure_reason": fail_pt["reason"] if fail_pt else None,
        "pass_target": largest is not None and largest >= spec["target"],
        "slope_all": loglog_slope(xs, ys),
        "slope_ge_min_seconds": loglog_slope([b[0] for b in big], [b[1] for b in big]),
        "slope_last3": loglog_slope(xs[-3:], ys[-3:]),
        "slope_from_1000": loglog_slope([b[0] for b in from_1000], [b[1] for b in from_1000]),
        "points": sorted(points, key=lambda p: p["delta"]),
    }


def _verdict(s: dict, quick: bool) -> str:
    """PASS/FAIL against the target; a capped --quick sweep that never failed proves nothing."""
    if s["pass_target"]:
        return "PASS"
    if quick and s["first_failure"] is None:
        return "not reached (--quick cap)"
    return "FAIL"


def print_tables(series: list[dict], args: argparse.Namespace) -> None:
    """One table per series and a summary table."""
    for s in series:
        rows = []
        for p in s["points"]:
            if p.get("ok"):
                lp = p["lp"]
                rows.append([p["delta"], f"{p['window']}", f"{lp.get('builder')}",
                             f"{lp.get('rows')}×{lp.get('cols')}", lp.get("nonzeros"), p["refinements"],
                             fmt(p["seconds"]), fmt(p["relative_gap"], ".3g"), fmt(p["certified"]),
                             "PASS" if p["passed"] else "FAIL: " + p["reason"]])
            else:
                rows.append([p["delta"], "—", "—", "—", "—", "—", fmt(p.get("wall_s_parent")) + " (wall)",
                             "—", "—", "FAIL: " + p["reason"]])
        print(f"\n### {s['series']}: cost `{s['cost']}`, symmetry={s['symmetry']} "
              f"(ε={args.epsilon:g}, target gap {args.target_gap:g}, limit {args.limit:g} s)\n")
        print(markdown_table(["Δ", "window", "builder", "rows×cols", "nnz", "LPs", "seconds", "gap", "certified",
                              "result"], rows))
    print("\n### Summary\n")
    print(markdown_table(
        ["series", "largest Δ passed", "first failure", "why", "target", "slope (all)",
         f"slope (≥{args.fit_min_seconds:g} s)", "slope (last 3)", "slope (Δ ≥ 1000)"],
        [[s["series"], fmt(s["largest_delta_passed"]), fmt(s["first_failure"]),
          (s.get("first_failure_reason") or "—")[:80],
          f"≥{s['target_delta']} " + _verdict(s, args.quick),
          fmt(s["slope_all"], ".2f"), fmt(s["slope_ge_min_seconds"], ".2f"), fmt(s["slope_last3"], ".2f"),
          fmt(s.get("slope_from_1000"), ".2f")]
         for s in series]))
    if args.quick:
        print("\n(--quick: sweep capped; the targets need the full run)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="cap the sweeps (general Δ<=1000, abs Δ<=10000) and skip refinement")
    ap.add_argument("--series", default=",".join(SERIES), help="comma-separated subset of " + ", ".join(SERIES))
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--target-gap", type=float, default=1e-8)
    ap.add_argument("--limit", type=float, default=60.0, help="seconds allowed per solve")
    ap.add_argument("--refine", type=int, default=2, help="bisection steps after the first failure")
    ap.add_argument("--max-delta", type=int, default=None, help="skip Δ above this")
    ap.add_argument("--fit-min-seconds", type=float, default=0.1,
                    help="also fit the slope only over passing solves at least this long")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "scale.json")
    ap.add_argument("--baseline", default=None,
                    help="another checkout of optmech: the general and nonmonotone series run on it too")
    args = ap.parse_args(argv)

    out = []
    names = [s.strip() for s in args.series.split(",") if s.strip()]
    runs = [(n, None) for n in names]
    if args.baseline:
        runs += [(n, args.baseline) for n in names if n in ("general", "nonmonotone")]
    for name, tree in runs:
        if name not in SERIES:
            print(f"unknown series {name!r}; known: {', '.join(SERIES)}", file=sys.stderr)
            continue
        label = name if tree is None else f"{name}@base"
        print(f"series {label}", flush=True)
        try:
            res = run_series(label, SERIES[name], args, tree)
            out.append(res)
        except Exception as exc:  # noqa: BLE001
            print(f"  [{label}] driver error: {type(exc).__name__}: {exc}", flush=True)
            out.append({"series": label, "error": f"{type(exc).__name__}: {exc}", "points": [],
                        "largest_delta_passed": None, "first_failure": None, "target_delta": SERIES[name]["target"],
                        "first_failure_reason": None, "pass_target": False, "slope_all": None, "slope_ge_min_seconds": None, "slope_last3": None,
                        "cost": SERIES[name]["cost"], "symmetry": SERIES[name]["symmetry"]})
    print_tables(out, args)
    path = write_json(args.json, {"benchmark": "scale", "settings": vars(args) | {"json": str(args.json)},
                                  "series": out})
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
