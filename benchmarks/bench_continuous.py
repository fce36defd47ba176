"""optmech on the continuous domain: certified gap and time for |x| and x² at Δ = 1.

For each cost in {abs, square} and ε in {0.1, 1, 5, 10}, solve with ``Continuous()`` (automatic
resolution) and ``target_gap=1e-4``; the target is a certified relative gap <= 1e-4 within 10 s
per case.  The closed-form staircase value [Geng13, Thm 2.5, 2.7] from ``r.references`` is printed
with whether it lies inside the certified bracket (it is the true optimum, so it must).

Run ``python benchmarks/bench_continuous.py``; writes ``benchmarks/results/continuous.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    RESULTS_DIR,
    fmt,
    markdown_table,
    rel_distance_to_bracket,
    result_summary,
    run_isolated,
    short_error,
    write_json,
)

COSTS = ["abs", "square"]
EPSILONS = [0.1, 1.0, 5.0, 10.0]


def continuous_case(cost: str, epsilon: float, delta: float, target_gap: float,
                    resolution: int | None, time_limit: float | None) -> dict:
    """One continuous solve in a child process, after an untimed warm-up (loads the solver)."""
    import optmech
    from optmech.costs import parse_cost
    from optmech.spec import Continuous, IntegerLattice, Problem, PureDP

    optmech.solve(Problem(privacy=PureDP(1.0), cost=parse_cost("abs"), sensitivity=2, domain=IntegerLattice()))
    problem = Problem(privacy=PureDP(epsilon), cost=parse_cost(cost), sensitivity=delta,
                      domain=Continuous(resolution=resolution), target_gap=target_gap)
    t0 = time.perf_counter()
    r = optmech.solve(problem, time_limit=time_limit)
    wall = time.perf_counter() - t0
    refs = [{"name": ref.name, "value": float(ref.value), "inside_bracket": bool(ref.inside_bracket),
             "exact": bool(getattr(ref, "exact", True))} for ref in r.references]
    return {**result_summary(r), "wall_s": wall, "references": refs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--costs", default=",".join(COSTS), help="comma-separated costs")
    ap.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS), help="comma-separated ε values")
    ap.add_argument("--delta", type=float, default=1.0, help="sensitivity Δ")
    ap.add_argument("--target-gap", type=float, default=1e-4)
    ap.add_argument("--resolution", type=int, default=None, help="fixed cells per Δ (default: automatic)")
    ap.add_argument("--limit", type=float, default=10.0, help="target seconds per case")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="time_limit passed to optmech.solve (default: none, so the natural time is measured)")
    ap.add_argument("--hard-timeout", type=float, default=300.0, help="kill a case after this many seconds")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "continuous.json")
    args = ap.parse_args(argv)

    costs = [c.strip() for c in args.costs.split(",") if c.strip()]
    epsilons = [float(e) for e in args.epsilons.split(",") if e.strip()]
    cases: list[dict] = []
    for cost in costs:
        for eps in epsilons:
            print(f"  cost {cost}, ε={eps:g} …", end="", flush=True)
            try:
                res = run_isolated(continuous_case, dict(cost=cost, epsilon=eps, delta=args.delta,
                                                         target_gap=args.target_gap, resolution=args.resolution,
                                                         time_limit=args.time_limit), args.hard_timeout)
            except Exception as exc:  # noqa: BLE001
                res = {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}
            res.update(cost=cost, epsilon=eps, delta=args.delta)
            if res.get("ok"):
                stair = next((r for r in res["references"] if r["name"] == "staircase"), None)
                res["staircase"] = stair
                if stair is not None:
                    d, side = rel_distance_to_bracket(stair["value"], res["lower_bound"], res["upper_bound"])
                    stair["rel_distance"], stair["side"] = d, side
                res["pass_gap"] = bool(res["certified"]) and res["relative_gap"] <= args.target_gap
                res["pass_time"] = res["seconds"] <= args.limit
                res["passed"] = res["pass_gap"] and res["pass_time"]
                print(f" gap {res['relative_gap']:.3g} in {res['seconds']:.3g} s", flush=True)
            else:
                res["passed"] = False
                print(f" FAILED: {short_error(res)}", flush=True)
            cases.append(res)

    rows = []
    for c in cases:
        if not c.get("ok"):
            rows.append([c["cost"], f"{c['epsilon']:g}", "FAILED: " + short_error(c)] + ["—"] * 8)
            continue
        st = c.get("staircase") or {}
        verdict = "PASS" if c["passed"] else "FAIL (" + ", ".join(
            w for w, ok in (("gap", c["pass_gap"]), ("time", c["pass_time"])) if not ok) + ")"
        rows.append([
            c["cost"], f"{c['epsilon']:g}", f"[{c['lower_bound']:.10g}, {c['upper_bound']:.10g}]",
            fmt(c["relative_gap"], ".3g"), fmt(c["seconds"], ".3g"), fmt(c.get("cells_per_period") or c.get("steps_per_period")),
            f"{c['lp'].get('builder')} {c['lp'].get('rows')}×{c['lp'].get('cols')}",
            fmt(st.get("value"), ".10g"), fmt(st.get("inside_bracket")), st.get("side", "—"), verdict,
        ])
    print(f"\n### Continuous domain (Δ={args.delta:g}, target gap {args.target_gap:g}, "
          f"≤{args.limit:g} s per case)\n")
    print(markdown_table(["cost", "ε", "certified [lower, upper]", "gap", "seconds", "cells/Δ", "LP",
                          "staircase", "inside (optmech)", "side (recomputed)", "result"], rows))
    n_pass = sum(1 for c in cases if c.get("passed"))
    print(f"\n{n_pass}/{len(cases)} cases meet gap ≤ {args.target_gap:g} within {args.limit:g} s")
    path = write_json(args.json, {"benchmark": "continuous", "settings": vars(args) | {"json": str(args.json)},
                                  "cases": cases})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
