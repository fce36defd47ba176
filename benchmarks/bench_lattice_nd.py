"""Pure ε-DP on ℤ^d: the orbit-reduced lattice LP against the all-pairs unreduced formulation.

1. Targets of issue 5 (integer lattice, ℓ1 sensitivity and cost): d = 3, Δ = 4, ε = 2 with a
   certified relative gap ≤ 1e-6 within 30 s; d = 4, Δ = 3 (ε = 2) within 120 s.  Each solve runs in
   its own child process (``optmech.solve``, default target gap 1e-6).
2. The baseline: the same relaxation written the way one would first write it — one variable per
   lattice point of the ℓ1 ball, one row per ordered pair at ℓ1 distance ≤ Δ (no orbits, no
   unit-step recursion) — solved by HiGHS on the same ball, against optmech's LP on that ball, at
   sizes where the baseline finishes within ``--baseline-budget`` seconds.  Reported as a time ratio
   and the two LP values (which must agree).

Run ``python benchmarks/bench_lattice_nd.py`` (``--quick`` skips d = 4); writes
``benchmarks/results/lattice_nd.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, fmt, markdown_table, run_isolated, short_error, write_json  # noqa: E402


def solve_case(d: int, D: int, eps: float) -> dict:
    import optmech
    from optmech.spec import IntegerLattice, Problem, PureDP

    optmech.solve(Problem(privacy=PureDP(1.0), cost="abs", sensitivity=2, domain=IntegerLattice()))  # warm-up
    t0 = time.perf_counter()
    r = optmech.solve(Problem(privacy=PureDP(eps), cost="l1", sensitivity=D, domain=IntegerLattice(), dim=d), time_limit=600)
    st = next((x.value for x in r.references if x.name == "discrete_staircase"), None)
    return {"wall_s": time.perf_counter() - t0, "lower": r.lower_bound, "upper": r.upper_bound, "gap": r.relative_gap,
            "certified": r.certified, "orbits": r.lp.get("orbits"), "rows": r.lp["rows"], "half_width": r.truncation["half_width"],
            "staircase": st}


def baseline_case(d: int, D: int, eps: float, R: int) -> dict:
    """All pairs, no orbits, on the ℓ1 ball of radius R; and optmech's LP on the same ball."""
    import itertools

    import numpy as np
    import scipy.sparse as sp

    from optmech.lp import LinearProgram
    from optmech.problems.pure_nd import build_pure_nd, orbit_points
    from optmech.solvers import solve_lp

    t0 = time.perf_counter()
    orb = orbit_points(d, R, reduced=False, shape="ball")
    pts = orb.reps
    n = len(pts)
    shifts = np.array([v for v in itertools.product(range(-D, D + 1), repeat=d) if 0 < sum(map(abs, v)) <= D])
    nb = orb.index(pts[:, None, :] + shifts[None, :, :])
    i, k = np.nonzero(nb >= 0)
    j = nb[i, k]
    m = len(i)
    e = float(np.exp(eps))
    A = sp.vstack([sp.csr_array((np.ones(n + 1), (np.zeros(n + 1, dtype=int), np.arange(n + 1))), shape=(1, n + 1)),
                   sp.csr_array((np.concatenate([np.ones(m), -e * np.ones(m)]), (np.concatenate([np.arange(m)] * 2),
                                 np.concatenate([i, j]))), shape=(m, n + 1))], format="csc")
    c = np.append(np.abs(pts).sum(axis=1).astype(float), R + 1.0)
    lp = LinearProgram(c=c, A=sp.csc_array(A), row_lower=np.concatenate([[1.0], np.full(m, -np.inf)]),
                       row_upper=np.concatenate([[1.0], np.zeros(m)]), col_lower=np.zeros(n + 1), col_upper=np.ones(n + 1),
                       meta={"normalisation_row": 0})
    raw = solve_lp(lp)
    t_base = time.perf_counter() - t0
    t0 = time.perf_counter()
    alp = build_pure_nd("l1", eps, D, R, dim=d)
    raw2 = solve_lp(alp.lp)
    t_opt = time.perf_counter() - t0
    return {"baseline_s": t_base, "optmech_s": t_opt, "baseline_value": raw.objective, "optmech_value": raw2.objective,
            "baseline_rows": m, "optmech_rows": alp.lp.rows, "points": n, "orbits": len(alp.orbits.reps)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="skip d = 4")
    ap.add_argument("--baseline-budget", type=float, default=300.0)
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "lattice_nd.json")
    args = ap.parse_args(argv)
    cases = [(3, 4, 2.0, 30.0)] + ([] if args.quick else [(4, 3, 2.0, 120.0)])
    out = {"targets": [], "baseline": []}
    rows = []
    for d, D, eps, target in cases:
        r = run_isolated(solve_case, dict(d=d, D=D, eps=eps), 900)
        out["targets"].append({"d": d, "D": D, "eps": eps, "target_s": target, **r})
        if r.get("ok"):
            met = r["certified"] and r["gap"] <= 1e-6 and r["wall_s"] <= target
            rows.append([d, D, eps, fmt(r["wall_s"], ".1f"), fmt(r["gap"], ".2e"), r["orbits"], r["rows"], r["half_width"],
                         fmt(r["lower"], ".10g"), fmt(r["staircase"], ".10g"), f"≤ {target:g} s: {'met' if met else 'NOT met'}"])
        else:
            rows.append([d, D, eps, short_error(r), "", "", "", "", "", "", ""])
    print(markdown_table(["d", "Δ", "ε", "seconds", "gap", "orbits", "rows", "R", "lower bound", "ℓ1 lattice staircase", "target"], rows))
    brows = []
    for d, D, eps, R in [(2, 2, 1.0, 40), (3, 2, 1.0, 16), (3, 2, 1.0, 24), (3, 3, 1.0, 30)]:
        r = run_isolated(baseline_case, dict(d=d, D=D, eps=eps, R=R), args.baseline_budget)
        out["baseline"].append({"d": d, "D": D, "eps": eps, "R": R, **r})
        if r.get("ok"):
            brows.append([d, D, R, r["points"], r["orbits"], r["baseline_rows"], r["optmech_rows"], fmt(r["baseline_s"], ".2f"),
                          fmt(r["optmech_s"], ".2f"), fmt(r["baseline_s"] / r["optmech_s"], ".0f"),
                          fmt(abs(r["baseline_value"] - r["optmech_value"]) / r["optmech_value"], ".1e")])
        else:
            brows.append([d, D, R, "", "", "", "", short_error(r), "", "", ""])
            break
    print()
    print(markdown_table(["d", "Δ", "R", "points", "orbits", "all-pairs rows", "optmech rows", "all-pairs s", "optmech s",
                          "ratio", "value rel. diff"], brows))
    write_json(args.json, out)
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
