"""The aggregated (ε, δ) LP on ℤ (:mod:`optmech.problems.approx_periodic`) against today's ``optmech solve``.

For each case (ε = 0.1, δ = 0.01, |x|; ε = 1, δ = 1e-6, |x| and x²) and Δ in ``--deltas``, each
variant (solver, ``band``, ``min_shift``) builds the aggregated relaxation on N = T + Δ
(T = ⌈Δ(n + 1)⌉), solves it once with HiGHS through optmech's wrapper (budget δ − 1e-14, masses
scaled as the family does), and reports the certified bracket: the lower end is
:func:`optmech.certify.dual_lower_bound` of the LP (weak duality, outward rounding), the upper end
:func:`optmech.families.approx.upper_from_pmf` of its primal (audited at every shift 1..Δ, mixed
with a (0, δ/2) law when the audit exceeds δ).  A variant is skipped at the next Δ once it took
more than ``--limit`` seconds.  ``--cli`` also runs ``optmech solve --privacy approx --domain
integer ... --time-limit 60 --json`` per case and Δ (each in its own process) and records its
bracket and wall time.

Measured (2-core machine shared with other jobs): the variant "ipm b1 ob2 ms.5 N=T" (IPX with crossover,
central band 1 period, outer band 2, shifts |v| >= Δ/2, N = T) is exact at ε = 0.1, δ = 0.01 (gap ~1e-12)
and within 1.6e-8 at ε = 1, δ = 1e-6 (the solver's accuracy): Δ = 64 in 8-10 s, Δ = 128 in 107-127 s
(ε = 1) and over 150 s (ε = 0.1); the time still grows like Δ^3.5, a constant factor 4-6 below the exact LP.

Run ``python benchmarks/bench_approx_periodic.py``; writes
``benchmarks/results/approx_periodic.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import subprocess
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, markdown_table, write_json  # noqa: E402

CASES = [(0.1, 0.01, "abs"), (1.0, 1e-6, "abs"), (1.0, 1e-6, "square")]
#: HiGHS options per solver name (tight tolerances: at δ = 1e-6 the default 1e-7 lets the primal exceed δ).
SOLVERS = {
    "simplex": {"solver": "simplex", "primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    "ipm": {"solver": "ipm", "primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    "ipm-nox": {"solver": "ipm", "run_crossover": "off", "ipm_optimality_tolerance": 1e-10},
}
#: Budget slack of the solve (the duals are certified against δ), as in :mod:`optmech.families.approx`.
SLACK = 1e-14


def certified_bracket(cost, epsilon: float, delta: float, sensitivity: int, *, N: int | None = None,
                      solver: str = "simplex", exact: bool = False, time_limit: float | None = None,
                      reach: float = 1.0, **build_kw) -> dict:
    """Build (aggregated, or ``exact``: build_approx with edge rows and every shift), solve, certify.

    Returns a dict with ``lower`` (certified), ``upper`` (audited pmf, certified when ``certified``),
    ``objective`` (the solver's, uncertified), ``gap`` ((upper − lower)/upper), ``build_s``,
    ``solve_s``, ``audit_s``, ``size`` and ``status``.  Default N = T + reach·Δ (T = ⌈Δ(n + 1)⌉).
    """
    from optmech.certify import dual_lower_bound
    from optmech.families.approx import upper_from_pmf
    from optmech.problems.approx import build_approx
    from optmech.problems.approx_periodic import build_aggregated, support_estimate
    from optmech.solvers.highs import HighsBackend

    D = int(sensitivity)
    if N is None:
        N = support_estimate(epsilon, delta, D) + int(round(reach * D))
    t0 = time.perf_counter()
    if exact:
        alp = build_approx(cost, epsilon, delta, D, N, edge_rows=True)
    else:
        alp = build_aggregated(cost, epsilon, delta, D, N, **build_kw)
    lp = alp.lp
    ru = lp.row_upper.copy()
    ru[lp.row_blocks["budget"]] = delta - SLACK
    scale = 2.0 ** math.ceil(math.log2(2 * alp.R + 1))
    solved = dataclasses.replace(lp, row_upper=ru, meta=dict(lp.meta, solve_scale=scale))
    t1 = time.perf_counter()
    opts = dict(SOLVERS[solver])
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    raw = HighsBackend().solve(solved, opts)
    t2 = time.perf_counter()
    out = {"size": lp.size(), "build_s": t1 - t0, "solve_s": t2 - t1, "status": str(raw.status),
           "objective": raw.objective, "N": N, "zone_periods": lp.meta.get("zone_periods")}
    if raw.x is None or raw.row_dual is None:
        return out | {"lower": -math.inf, "upper": math.inf, "gap": math.inf, "audit_s": 0.0, "certified": False}
    lower = dual_lower_bound(lp, raw.row_dual, raw.objective).value
    up = upper_from_pmf(cost, alp.box_masses(raw.x), alp.R, epsilon, delta, D)
    t3 = time.perf_counter()
    upper = up.value if up.certified else math.inf
    gap = (upper - lower) / upper if math.isfinite(upper) and upper > 0 else math.inf
    return out | {"lower": lower, "upper": upper, "gap": gap, "audit_s": t3 - t2, "certified": bool(up.certified),
                  "mixed": up.mixed, "far_and_layer": alp.far_mass(raw.x) + alp.layer_mass(raw.x),
                  "total_s": t3 - t0}


def cli_case(epsilon: float, delta: float, cost: str, D: int, time_limit: float = 60.0) -> dict:
    """Today's ``optmech solve`` on the case (its own process): bracket, status, wall seconds."""
    cmd = [sys.executable, "-m", "optmech", "solve", "--privacy", "approx", "--domain", "integer", "--sensitivity",
           str(D), "--epsilon", str(epsilon), "--delta", str(delta), "--cost", cost, "--time-limit", str(time_limit),
           "--json"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit * 3 + 60)
    wall = time.perf_counter() - t0
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"rc": p.returncode, "wall_s": wall, "error": p.stderr[-300:]}
    lo, up = r.get("lower_bound"), r.get("upper_bound")
    gap = (up - lo) / up if isinstance(lo, (int, float)) and isinstance(up, (int, float)) and up else None
    return {"rc": p.returncode, "wall_s": wall, "lower": lo, "upper": up, "gap": gap, "status": r.get("status")}


def variants(D: int) -> dict[str, dict]:
    """The variants measured: solver × band × min_shift."""
    return {
        "simplex b2": {"solver": "simplex", "band": 2},
        "ipm b2": {"solver": "ipm", "band": 2},
        "ipm b1": {"solver": "ipm", "band": 1},
        "ipm b1 ms.5": {"solver": "ipm", "band": 1, "min_shift": max(1, D // 2)},
        "simplex b2 ms.5": {"solver": "simplex", "band": 2, "min_shift": max(1, D // 2)},
        "ipm b2 ms.5": {"solver": "ipm", "band": 2, "min_shift": max(1, D // 2)},
        "ipm-nox b2 ms.5": {"solver": "ipm-nox", "band": 2, "min_shift": max(1, D // 2)},
        "ipm b2 ob1 ms.5": {"solver": "ipm", "band": 2, "outer_band": 1, "min_shift": max(1, D // 2)},
        "ipm b1 ob2 ms.5": {"solver": "ipm", "band": 1, "outer_band": 2, "min_shift": max(1, D // 2)},
        "simplex b1 ob2 ms.5": {"solver": "simplex", "band": 1, "outer_band": 2, "min_shift": max(1, D // 2)},
        "ipm b1 ob2 ms.5 N=T": {"solver": "ipm", "band": 1, "outer_band": 2, "min_shift": max(1, D // 2), "reach": 0.0},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deltas", default="16,32,64,128,256")
    ap.add_argument("--limit", type=float, default=60.0, help="skip a variant at larger Δ after a solve over this")
    ap.add_argument("--cli", action="store_true", help="also run today's optmech solve (--time-limit 60)")
    ap.add_argument("--time-limit", type=float, default=180.0, help="HiGHS time limit per solve")
    ap.add_argument("--only", default="", help="comma-separated variant names")
    ap.add_argument("--cases", default="", help="comma-separated case indices (0-2)")
    ap.add_argument("--out", default=str(RESULTS_DIR / "approx_periodic.json"))
    args = ap.parse_args(argv)
    from optmech.costs import parse_cost

    deltas = [int(x) for x in args.deltas.split(",")]
    cases = [CASES[int(i)] for i in args.cases.split(",")] if args.cases else CASES
    rows, records = [], []
    for eps, dl, cname in cases:
        slow: set[str] = set()
        for D in deltas:
            names = variants(D)
            if args.only:
                names = {k: v for k, v in names.items() if k in args.only.split(",")}
            for name, kw in names.items():
                if name in slow:
                    continue
                r = certified_bracket(parse_cost(cname), eps, dl, D, time_limit=args.time_limit, **kw)
                rec = {"epsilon": eps, "delta": dl, "cost": cname, "sensitivity": D, "variant": name} | r
                records.append(rec)
                rows.append([f"{eps:g}", f"{dl:g}", cname, D, name, r["size"]["rows"], f"{r['total_s']:.2f}"
                             if "total_s" in r else "-", f"{r['solve_s']:.2f}", f"{r['lower']:.12g}",
                             f"{r['upper']:.12g}", f"{r['gap']:.2g}"])
                print(" | ".join(str(c) for c in rows[-1]), flush=True)
                if r["solve_s"] > args.limit:
                    slow.add(name)
            if args.cli:
                r = cli_case(eps, dl, cname, D)
                records.append({"epsilon": eps, "delta": dl, "cost": cname, "sensitivity": D, "variant": "optmech solve"}
                               | r)
                rows.append([f"{eps:g}", f"{dl:g}", cname, D, "optmech solve (60 s)", "-", f"{r['wall_s']:.2f}", "-",
                             f"{r.get('lower')}", f"{r.get('upper')}", f"{r.get('gap')}"])
                print(" | ".join(str(c) for c in rows[-1]), flush=True)
    print(markdown_table(["ε", "δ", "cost", "Δ", "variant", "rows", "total s", "solve s", "lower", "upper", "gap"], rows))
    write_json(Path(args.out), {"records": records, "cases": CASES})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
