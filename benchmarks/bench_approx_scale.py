"""Scaling of (ε, δ)-DP on ℤ: one row (ε = 0.1, δ = 0.01) swept over the sensitivity Δ.

Series (target gap 1e-8; issue 23's target: Δ = 256 within 10 s for both costs):

* ``abs``: |x| with ``symmetry="auto"`` (the ±x reduction);
* ``asymmetric``: ``where(x > 0, x, 2*abs(x))`` with ``symmetry="off"``;
* ``naive``: the full hockey-stick LP as one first writes it (every shift 1..Δ both ways, every
  point of the window 2Δ(n + 2) that optmech's previous code used, one epigraph variable per
  shift and point, mass outside dropped), built with scipy and solved by HiGHS's dual simplex; not
  certified.  Cost |x|.

``--baseline PATH`` runs ``abs`` and ``asymmetric`` a second time on another checkout of optmech
(``git worktree add /tmp/optmech-base <commit>``), in the same run, as ``abs@base`` and
``asymmetric@base``.  A series stops at the first Δ over ``--limit`` seconds (60 by default, so
that the growth is measured past the 10 s target), failing the gap, or raising.  Each solve runs in
its own process after an untimed warm-up.  The growth exponent is the least-squares slope of
log(seconds) against log(Δ) over the passing points with Δ >= 16.  A second pass solves every Δ with
``time_limit=10`` and records the certified gap reached (from Δ = 32 on the loop starts on the
coarse lattices kℤ, so large Δ gets a bracket within the limit).

Run ``python benchmarks/bench_approx_scale.py``; writes ``benchmarks/results/approx_scale.json``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (ASYMMETRIC_COST, RESULTS_DIR, fmt, markdown_table, result_summary, run_isolated,  # noqa: E402
                     short_error, write_json, highs_solve_csc)
from bench_scale import loglog_slope  # noqa: E402

EPSILON, DELTA = 0.1, 0.01
SERIES = {
    "abs": {"cost": "abs", "symmetry": "auto"},
    "asymmetric": {"cost": ASYMMETRIC_COST, "symmetry": "off"},
    "naive": {"cost": "abs", "symmetry": "off", "naive": True},
}
DELTAS = [8, 16, 32, 64, 128, 256]
TARGET_DELTA, TARGET_SECONDS = 256, 10.0


def approx_case(cost: str, symmetry: str, sensitivity: int, target_gap: float, time_limit: float,
                tree: str | None = None) -> dict:
    """One solve in a child process after a warm-up at Δ = 2; ``tree``: another checkout to import."""
    if tree:
        sys.path.insert(0, tree)
    import optmech
    from optmech.costs import parse_cost
    from optmech.spec import ApproxDP, IntegerLattice, Problem

    def problem(d: int) -> Problem:
        return Problem(privacy=ApproxDP(EPSILON, DELTA), cost=parse_cost(cost), sensitivity=d, domain=IntegerLattice(),
                       target_gap=target_gap, symmetry=symmetry)

    optmech.solve(problem(2))
    t0 = time.perf_counter()
    r = optmech.solve(problem(sensitivity), time_limit=time_limit)
    return {**result_summary(r), "wall_s": time.perf_counter() - t0}


def naive_case(cost: str, sensitivity: int, time_limit: float) -> dict:
    """The full hockey-stick LP on [−N, N], N = 2Δ(n + 2), every shift ±1..±Δ; HiGHS; not certified."""
    import numpy as np
    import scipy.sparse as sp

    from optmech.costs import parse_cost
    from optmech.mechanisms.approx_bounds import thm8_n

    t0 = time.perf_counter()
    D = sensitivity
    N = int(2 * D * (math.ceil(thm8_n(EPSILON, DELTA)) + 2))
    M = 2 * N + 1
    e = math.exp(EPSILON)
    blocks, budgets, n_t = [], [], 0
    for v in [s for s in range(-D, D + 1) if s]:
        x = np.arange(M)
        y = x + v
        inside = (y >= 0) & (y < M)
        k = len(x)
        r = np.arange(k)
        cols = np.concatenate([x, y[inside], M + n_t + r])
        rows = np.concatenate([r, r[inside], r])
        vals = np.concatenate([np.ones(k), np.full(int(inside.sum()), -e), -np.ones(k)])
        blocks.append((rows, cols, vals, k))
        budgets.append(np.arange(M + n_t, M + n_t + k))
        n_t += k
    n_cols = M + n_t
    off = 1
    rr, cc, vv = [np.zeros(M, dtype=np.int64)], [np.arange(M)], [np.ones(M)]
    for rows, cols, vals, k in blocks:
        rr.append(rows + off)
        cc.append(cols)
        vv.append(vals)
        off += k
    for b in budgets:
        rr.append(np.full(len(b), off))
        cc.append(b)
        vv.append(np.ones(len(b)))
        off += 1
    A = sp.csc_matrix((np.concatenate(vv), (np.concatenate(rr), np.concatenate(cc))), shape=(off, n_cols))
    n_hs = off - 1 - len(budgets)
    inf = np.inf
    h = highs_solve_csc(A, np.concatenate([parse_cost(cost)((np.arange(M) - N).astype(float)), np.zeros(n_t)]),
                        np.zeros(n_cols), np.ones(n_cols),
                        np.concatenate([[1.0], np.full(n_hs + len(budgets), -inf)]),
                        np.concatenate([[1.0], np.zeros(n_hs), np.full(len(budgets), DELTA)]), time_limit)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "relative_gap": math.nan, "certified": False, "status": str(h.getModelStatus()),
            "message": "naive full hockey-stick LP, not certified", "objective": h.getInfo().objective_function_value,
            "lp": {"builder": "naive hockey-stick", "rows": int(off), "cols": int(n_cols), "nonzeros": int(A.nnz)},
            "window": [-N, N], "refinements": 1, "wall_s": seconds}


def judge(res: dict, args: argparse.Namespace, naive: bool) -> tuple[bool, str]:
    if not res.get("ok"):
        return False, short_error(res, 120)
    if res["seconds"] > args.limit:
        return False, f"{res['seconds']:.1f} s > {args.limit:g} s"
    if naive:
        ok = res["status"].endswith("kOptimal")
        return ok, "" if ok else res["status"]
    if not res["certified"] or not res["relative_gap"] <= args.target_gap:
        return False, f"gap {res['relative_gap']:.3g} ({res['status']}: {res['message']})"
    return True, ""


def run_series(name: str, spec: dict, args: argparse.Namespace, tree: str | None = None) -> dict:
    points = []
    for D in [d for d in DELTAS if d <= args.max_delta]:
        print(f"  [{name}] Δ={D} …", end="", flush=True)
        hard = args.limit * 1.5 + 30
        try:
            if spec.get("naive"):
                res = run_isolated(naive_case, dict(cost=spec["cost"], sensitivity=D, time_limit=args.limit), hard)
            else:
                res = run_isolated(approx_case, dict(cost=spec["cost"], symmetry=spec["symmetry"], sensitivity=D,
                                                     target_gap=args.target_gap, time_limit=args.limit, tree=tree), hard)
        except Exception as exc:  # noqa: BLE001
            res = {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}
        ok, why = judge(res, args, bool(spec.get("naive")))
        res.update(delta=D, passed=ok, reason=why)
        points.append(res)
        if res.get("ok"):
            print(f" {res['seconds']:.3g} s, gap {res['relative_gap']:.3g}, {res['lp'].get('rows')} rows"
                  + ("" if ok else f"  FAIL: {why}"), flush=True)
        else:
            print(f" FAILED: {why}", flush=True)
        if not ok:
            break
    passed = [p for p in points if p["passed"]]
    fit = [p for p in passed if p["delta"] >= 16]
    in_target = [p["delta"] for p in passed if p["seconds"] <= TARGET_SECONDS]
    return {"series": name + ("@base" if tree else ""), "cost": spec["cost"], "symmetry": spec["symmetry"],
            "largest_delta_passed": max((p["delta"] for p in passed), default=None),
            "largest_delta_within_10s": max(in_target, default=None),
            "pass_target": TARGET_DELTA in in_target,
            "slope": loglog_slope([p["delta"] for p in fit], [p["seconds"] for p in fit]),
            "points": points}


def within_limit(name: str, spec: dict, args: argparse.Namespace) -> dict:
    """Every Δ with ``time_limit=TARGET_SECONDS``: the certified gap reached (coarse levels for large Δ)."""
    points = []
    for D in [d for d in DELTAS if d <= args.max_delta]:
        print(f"  [{name}, {TARGET_SECONDS:g} s] Δ={D} …", end="", flush=True)
        try:
            res = run_isolated(approx_case, dict(cost=spec["cost"], symmetry=spec["symmetry"], sensitivity=D,
                                                 target_gap=args.target_gap, time_limit=TARGET_SECONDS),
                               TARGET_SECONDS * 3 + 30)
        except Exception as exc:  # noqa: BLE001
            res = {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}
        res.update(delta=D)
        points.append(res)
        print(f" {res['seconds']:.3g} s, gap {res['relative_gap']:.3g}" if res.get("ok") else f" FAILED: {short_error(res)}",
              flush=True)
    return {"series": f"{name} within {TARGET_SECONDS:g} s", "points": points}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--series", default=",".join(SERIES))
    ap.add_argument("--target-gap", type=float, default=1e-8)
    ap.add_argument("--limit", type=float, default=60.0, help="seconds allowed per solve")
    ap.add_argument("--max-delta", type=int, default=max(DELTAS))
    ap.add_argument("--baseline", default=None, help="another checkout of optmech: abs and asymmetric run on it too")
    ap.add_argument("--skip-limited", action="store_true",
                    help=f"skip the pass that records the certified gap of every Δ within {TARGET_SECONDS:g} s")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "approx_scale.json")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.series.split(",") if n.strip()]
    out = []
    for n in names:
        out.append(run_series(n, SERIES[n], args))
        if args.baseline and not SERIES[n].get("naive"):
            out.append(run_series(n, SERIES[n], args, tree=args.baseline))
    limited = [] if args.skip_limited else [within_limit(n, SERIES[n], args) for n in names if not SERIES[n].get("naive")]
    print("\n### (ε, δ) = (0.1, 0.01) on ℤ: seconds per Δ to the target gap\n")
    print(markdown_table(
        ["series"] + [f"Δ={d}" for d in DELTAS if d <= args.max_delta] + ["largest Δ in 10 s", "growth exponent"],
        [[s["series"]] + [next((fmt(p["seconds"]) + ("" if p["passed"] else " ✗") for p in s["points"]
                                if p["delta"] == d and p.get("ok")), "—") for d in DELTAS if d <= args.max_delta]
         + [fmt(s["largest_delta_within_10s"]), fmt(s["slope"], ".2f")] for s in out]))
    if limited:
        print(f"\n### certified gap (seconds) with time_limit = {TARGET_SECONDS:g} s\n")
        print(markdown_table(
            ["series"] + [f"Δ={d}" for d in DELTAS if d <= args.max_delta],
            [[s["series"]] + [f"{fmt(p['relative_gap'], '.2g')} ({fmt(p['seconds'], '.3g')})" if p.get("ok") else "✗"
                              for p in s["points"]] for s in limited]))
    write_json(args.json, {"epsilon": EPSILON, "delta": DELTA, "target_gap": args.target_gap, "limit": args.limit,
                           "target": {"sensitivity": TARGET_DELTA, "seconds": TARGET_SECONDS}, "series": out,
                           "within_target_seconds": limited})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
