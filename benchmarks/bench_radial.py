"""Pure ε-DP on ℝ^d, cost a power of the sensitivity's own norm: the radial family against the cell LP.

1. Targets of issue 21: ℝ², each of ℓ1, ℓ2, ℓ∞ with the matching norm as cost, ε ∈ {0.5, 1, 2}:
   certified relative gap ≤ 1e-3 within 60 s; ℝ³, the same norms, ε = 2: ≤ 1e-2 within 120 s.  Each
   case is ``optmech.solve`` with its defaults (target gap 1e-6) in its own process; the squares
   (l1sq, l2sq, linfsq) run beside them.
2. The baseline, in the same run: the cell LP of :mod:`optmech.families.pure_nd` on the same problems
   (``symmetry="orbits"``, its default resolution: 4 cells per Δ in d = 2, 2 in d = 3), which is what
   solved them before the radial family, under ``--baseline-deadline`` a case.
3. Convergence: the radial lower bound's distance to the staircase at n = 16..1024 nodes per Δ
   (ε = 1, d = 2, ℓ1): it should fall 4× per doubling (second order).

Run ``python benchmarks/bench_radial.py`` (``--quick``: ε = 1 only in the baseline); writes
``benchmarks/results/radial.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, fmt, markdown_table, run_isolated, short_error, write_json  # noqa: E402

NORMS = ("l1", "l2", "linf")
SQUARE = {"l1": "l1sq", "l2": "l2sq", "linf": "linfsq"}


def solve_case(eps: float, d: int, norm: str, cost: str, symmetry: str = "auto") -> dict:
    import optmech
    from optmech.spec import Continuous, Problem, PureDP

    optmech.solve(Problem(PureDP(1.0), "l1", sensitivity=1.0, domain=Continuous(), dim=2, target_gap=1e-3))  # warm-up
    t0 = time.perf_counter()
    r = optmech.solve(Problem(PureDP(eps), cost, sensitivity=1.0, domain=Continuous(), dim=d, norm=norm,
                              symmetry=symmetry), time_limit=600)
    st = next((x.value for x in r.references if x.name == "staircase"), None)
    return {"wall_s": time.perf_counter() - t0, "lower": r.lower_bound, "upper": r.upper_bound,
            "gap": r.relative_gap, "certified": r.certified, "status": r.status, "builder": r.lp.get("builder"),
            "resolution": r.lp.get("resolution"), "staircase": st}


def convergence_case(n: int) -> dict:
    from optmech.certify import dual_lower_bound
    from optmech.mechanisms.multidim import staircase_nd_optimal_cost
    from optmech.problems.radial import build_radial, periods_needed
    from optmech.solvers.chain import ChainBackend

    t0 = time.perf_counter()
    r = build_radial(1.0, 2, 1, n, periods_needed(1.0, 2, 1))
    raw = ChainBackend().solve(r.lp, {})
    lo = dual_lower_bound(r.lp, raw.row_dual, raw.objective).value
    v = staircase_nd_optimal_cost("l1", 1.0, 1.0, 2)
    return {"n": n, "seconds": time.perf_counter() - t0, "lower": lo, "staircase": v, "rel_distance": (v - lo) / v,
            "columns": r.lp.cols}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="baseline at ε = 1 (d = 2) and ε = 2 (d = 3) only")
    ap.add_argument("--baseline-deadline", type=float, default=180.0, help="hard deadline per cell-LP case, s")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "radial.json")
    args = ap.parse_args(argv)
    out: dict = {"targets": [], "baseline": [], "convergence": []}
    cases = [(eps, 2, 1e-3, 60.0) for eps in (0.5, 1.0, 2.0)] + [(2.0, 3, 1e-2, 120.0)]
    rows = []
    for eps, d, gap_target, time_target in cases:
        for norm in NORMS:
            for cost in (norm, SQUARE[norm]):
                r = run_isolated(solve_case, dict(eps=eps, d=d, norm=norm, cost=cost), 600)
                rec = {"eps": eps, "d": d, "norm": norm, "cost": cost, "gap_target": gap_target,
                       "time_target_s": time_target, **r}
                rec["met"] = bool(r.get("ok") and r["certified"] and r["gap"] <= gap_target and r["wall_s"] <= time_target)
                out["targets"].append(rec)
                rows.append([d, eps, norm, cost, fmt(r.get("wall_s"), ".2f") if r.get("ok") else short_error(r),
                             r.get("resolution", ""), fmt(r.get("lower"), ".9f"), fmt(r.get("upper"), ".9f"),
                             fmt(r.get("gap"), ".2e"), "yes" if rec["met"] else "NO"])
    print("\nTargets (radial family, default target gap 1e-6)\n")
    print(markdown_table(["d", "ε", "norm", "cost", "seconds", "nodes/Δ", "lower", "upper", "gap", "target met"], rows))

    base_cases = ([(1.0, 2), (2.0, 3)] if args.quick else [(0.5, 2), (1.0, 2), (2.0, 2), (2.0, 3)])
    rows = []
    for eps, d in base_cases:
        for norm in NORMS:
            r = run_isolated(solve_case, dict(eps=eps, d=d, norm=norm, cost=norm, symmetry="orbits"),
                             args.baseline_deadline)
            rad = next(t for t in out["targets"] if t["eps"] == eps and t["d"] == d and t["cost"] == norm)
            rec = {"eps": eps, "d": d, "norm": norm, "deadline_s": args.baseline_deadline, **r}
            if r.get("ok") and rad.get("ok"):
                rec["time_ratio"] = r["wall_s"] / rad["wall_s"]
                rec["contains_radial"] = bool(r["lower"] <= rad["lower"] and rad["upper"] <= r["upper"] * (1 + 1e-12))
            out["baseline"].append(rec)
            rows.append([d, eps, norm,
                         fmt(r.get("wall_s"), ".1f") if r.get("ok") else
                         (f"> {args.baseline_deadline:g} s" if r.get("error_type") == "HardTimeout" else short_error(r)),
                         fmt(r.get("gap"), ".3g"), fmt(rad.get("wall_s"), ".2f"), fmt(rad.get("gap"), ".2e"),
                         fmt(rec.get("time_ratio"), ".0f"), {True: "yes", False: "NO"}.get(rec.get("contains_radial"), "—")])
    print("\nBaseline: the cell LP (symmetry orbits, default resolution) on the same problems\n")
    print(markdown_table(["d", "ε", "norm", "cell LP s", "cell LP gap", "radial s", "radial gap", "time ratio",
                          "cell bracket ⊇ radial"], rows))

    rows, prev = [], None
    for n in (16, 32, 64, 128, 256, 512, 1024):
        r = run_isolated(convergence_case, dict(n=n), 300)
        ratio = prev / r["rel_distance"] if r.get("ok") and prev else None
        out["convergence"].append({**r, "ratio_to_previous": ratio})
        if r.get("ok"):
            prev = r["rel_distance"]
            rows.append([n, r["columns"], fmt(r["seconds"], ".2f"), fmt(r["lower"], ".12f"), fmt(r["rel_distance"], ".3e"),
                         "—" if ratio is None else f"{ratio:.2f}"])
    print("\nConvergence (ε = 1, d = 2, ℓ1): (V_staircase − lower)/V by nodes per Δ\n")
    print(markdown_table(["n", "columns", "seconds", "certified lower", "(V − lower)/V", "÷ (prev n)"], rows))
    write_json(args.json, out)
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
