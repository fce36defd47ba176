"""Pure ε-DP on ℤ^d: the orbit-reduced lattice LP against the all-pairs unreduced formulation.

1. Targets of issue 5 (integer lattice, ℓ1 sensitivity and cost): d = 3, Δ = 4, ε = 2 with a
   certified relative gap ≤ 1e-6 within 30 s; d = 4, Δ = 3 (ε = 2) within 120 s.  Each solve runs in
   its own child process (``optmech.solve``, default target gap 1e-6).
2. The baseline: the same relaxation written the way one would first write it — one variable per
   lattice point of the ℓ1 ball, one row per ordered pair at ℓ1 distance ≤ Δ (no orbits, no
   unit-step recursion) — solved by HiGHS on the same ball, against optmech's LP on that ball, at
   sizes where the baseline finishes within ``--baseline-budget`` seconds.  Reported as a time ratio
   and the two LP values (which must agree).
3. Continuous d = 2, ℓ1: gap against resolution.  ``optmech.solve`` on ℝ² (ℓ1 sensitivity 1, ℓ1
   cost) at fixed resolutions n ∈ {2, 4, 8} (cells of width 1/n) for ε ∈ {0.5, 1, 2}, each case in
   its own process under ``--continuous-deadline``; the certified bracket is set against the
   closed-form optimum V* = ``staircase_nd_optimal_cost("l1", ε, 1, 2)`` ([Geng13] (3.7)).  The
   upper bound comes from a fine ℓ1-shell (layered) mechanism and sits within ~1e-5 of V*; the gap
   is the lower bound's cell-minimum pricing, whose distance (V* − lower)/V* should about halve
   when n doubles (the ratio between consecutive n is printed).

Run ``python benchmarks/bench_lattice_nd.py`` (``--quick`` skips d = 4 and n = 8;
``--skip-lattice`` / ``--skip-continuous`` run one part alone); writes
``benchmarks/results/lattice_nd.json`` (``targets``, ``baseline``, ``continuous``).  A part that is
skipped keeps what the file already held for it, under its key, with the metadata of the run that
produced it under ``carried_over[key]``.
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
    read_json,
    rel_distance_to_bracket,
    run_isolated,
    short_error,
    write_json,
)

#: ε values and resolutions (cells per unit of sensitivity) of the continuous d = 2 section.
CONT_EPS = (0.5, 1.0, 2.0)
CONT_RES = (2, 4, 8)


def solve_case(d: int, D: int, eps: float, symmetry: str = "auto") -> dict:
    import optmech
    from optmech.spec import IntegerLattice, Problem, PureDP

    optmech.solve(Problem(privacy=PureDP(1.0), cost="abs", sensitivity=2, domain=IntegerLattice()))  # warm-up
    t0 = time.perf_counter()
    r = optmech.solve(Problem(privacy=PureDP(eps), cost="l1", sensitivity=D, domain=IntegerLattice(), dim=d,
                              symmetry=symmetry), time_limit=600)
    st = next((x.value for x in r.references if x.name == "discrete_staircase"), None)
    return {"wall_s": time.perf_counter() - t0, "lower": r.lower_bound, "upper": r.upper_bound, "gap": r.relative_gap,
            "certified": r.certified, "orbits": r.lp.get("orbits"), "rows": r.lp["rows"], "half_width": r.truncation["half_width"],
            "builder": r.lp.get("builder"),
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


def continuous_case(eps: float, n: int) -> dict:
    """One continuous d = 2, ℓ1 solve at the fixed resolution ``n`` (Δ = 1), against V*."""
    import optmech
    from optmech.mechanisms.multidim import staircase_nd_optimal_cost
    from optmech.spec import Continuous, Problem, PureDP

    # the cell LP (symmetry "orbits"): with "auto" this problem goes to the radial family (bench_radial.py)
    optmech.solve(Problem(privacy=PureDP(1.0), cost="l1", sensitivity=1.0, domain=Continuous(1), dim=2,
                          symmetry="orbits"))  # warm-up
    t0 = time.perf_counter()
    r = optmech.solve(Problem(privacy=PureDP(eps), cost="l1", sensitivity=1.0, domain=Continuous(n), dim=2,
                              symmetry="orbits"))
    wall = time.perf_counter() - t0
    v = float(staircase_nd_optimal_cost("l1", eps, 1.0, 2))
    lo, up = float(r.lower_bound), float(r.upper_bound)
    dist, side = rel_distance_to_bracket(v, lo, up)
    return {"wall_s": wall, "seconds": float(r.seconds), "lower_bound": lo, "upper_bound": up,
            "relative_gap": float(r.relative_gap), "certified": bool(r.certified), "status": r.status,
            "message": r.message, "lp": dict(r.lp), "half_width": r.truncation["half_width"],
            "closed_form": v, "inside": side == "inside", "side": side, "distance_to_bracket": dist,
            "lower_rel_to_closed_form": (v - lo) / v, "upper_rel_to_closed_form": (up - v) / v}


def run_continuous(eps_values: tuple[float, ...], resolutions: tuple[int, ...], deadline: float) -> tuple[list, str]:
    """The continuous d = 2 section: results for the JSON and the printed table.

    Within one ε the resolutions run in increasing order; after a case that fails (deadline
    included) the larger ones are skipped, since they can only take longer.
    """
    results, rows = [], []
    for eps in eps_values:
        prev = None
        failed = False
        for n in resolutions:
            if failed:
                results.append({"eps": eps, "n": n, "ok": False, "error_type": "Skipped",
                                "error": "a smaller resolution at this ε already failed"})
                rows.append([eps, n, "skipped (smaller n failed)"] + [""] * 10)
                continue
            r = run_isolated(continuous_case, dict(eps=eps, n=n), deadline)
            if not r.get("ok"):
                results.append({"eps": eps, "n": n, "deadline_s": deadline, **r})
                failed = True
                killed = r.get("error_type") == "HardTimeout"
                rows.append([eps, n, f"> {deadline:g} s (killed)" if killed else short_error(r)] + [""] * 10)
                continue
            d = r["lower_rel_to_closed_form"]
            # (V − lower)/V at the previous (half) resolution over this one: ≈ 2 for an O(1/n) error
            ratio = prev / d if prev is not None and d > 0 else None
            results.append({"eps": eps, "n": n, "deadline_s": deadline, **r, "ratio_to_previous_n": ratio})
            prev = d
            rows.append([eps, n, fmt(r["wall_s"], ".1f"), f"{r['lp']['rows']} × {r['lp']['cols']}", r["half_width"],
                         fmt(r["lower_bound"], ".6f"), fmt(r["upper_bound"], ".6f"),
                         fmt(r["closed_form"], ".6f"), "yes" if r["inside"] else f"NO ({r['side']})",
                         fmt(r["relative_gap"], ".3e"), fmt(d, ".4f"), "—" if ratio is None else f"{ratio:.2f}",
                         fmt(r["upper_rel_to_closed_form"], ".1e")])
    table = markdown_table(["ε", "n", "seconds", "LP rows × cols", "R", "lower", "upper", "closed form V*", "inside",
                            "gap", "(V−lower)/V", "÷ (prev n)", "(upper−V)/V"], rows)
    return results, table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="skip d = 4 (lattice) and n = 8 (continuous)")
    ap.add_argument("--skip-lattice", action="store_true", help="skip the lattice targets and the all-pairs baseline")
    ap.add_argument("--skip-continuous", action="store_true", help="skip the continuous d = 2 section")
    ap.add_argument("--baseline-budget", type=float, default=300.0)
    ap.add_argument("--skip-baseline", action="store_true", help="skip the all-pairs baseline (section 2)")
    ap.add_argument("--continuous-deadline", type=float, default=300.0, help="hard deadline per continuous case, s")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "lattice_nd.json")
    args = ap.parse_args(argv)
    out: dict = {"sections_run": [k for k, skip in (("lattice", args.skip_lattice), ("continuous", args.skip_continuous))
                                  if not skip]}
    if not args.skip_lattice:
        out.update(run_lattice(args))
    if not args.skip_continuous:
        res = CONT_RES[:-1] if args.quick else CONT_RES
        print(f"\nContinuous d = 2, ℓ1 (Δ = 1): gap against resolution (deadline {args.continuous_deadline:g} s a case)\n",
              flush=True)
        out["continuous"], table = run_continuous(CONT_EPS, res, args.continuous_deadline)
        print(table)
    prev = read_json(args.json)
    carried = [k for k in ("targets", "baseline", "continuous", "full_lp") if k not in out and k in prev]
    if carried:
        # per key, the metadata of the run that produced it (itself carried over, perhaps)
        before = prev.get("carried_over") if isinstance(prev.get("carried_over"), dict) else {}
        out["carried_over"] = {k: before.get(k, prev.get("metadata")) for k in carried}
        for k in carried:
            out[k] = prev[k]
    write_json(args.json, out)
    print(f"\nwrote {args.json}" + (f" (kept {', '.join(carried)} from the previous run)" if carried else ""))
    return 0


def run_lattice(args: argparse.Namespace) -> dict:
    """Sections 1 and 2: the lattice targets and the all-pairs baseline (printed; returned for the JSON)."""
    # (d, Δ, ε, target s); issue 5: d = 3, Δ = 4 and d = 4, Δ = 3; issue 21: d = 3, Δ = 10 and d = 5, Δ = 4
    cases = [(3, 4, 2.0, 30.0), (3, 10, 2.0, 60.0), (5, 4, 2.0, 60.0)] + ([] if args.quick else [(4, 3, 2.0, 120.0)])
    out = {"targets": [], "baseline": [], "full_lp": []}
    rows = []
    for d, D, eps, target in cases:
        r = run_isolated(solve_case, dict(d=d, D=D, eps=eps), 900)
        out["targets"].append({"d": d, "D": D, "eps": eps, "target_s": target, **r})
        if r.get("ok"):
            met = r["certified"] and r["gap"] <= 1e-6 and r["wall_s"] <= target
            rows.append([d, D, eps, fmt(r["wall_s"], ".1f"), fmt(r["gap"], ".2e"), r["builder"], r["rows"], r["half_width"],
                         fmt(r["lower"], ".10g"), fmt(r["staircase"], ".10g"), f"≤ {target:g} s: {'met' if met else 'NOT met'}"])
        else:
            rows.append([d, D, eps, short_error(r), "", "", "", "", "", "", ""])
    print(markdown_table(["d", "Δ", "ε", "seconds", "gap", "builder", "rows", "R", "lower bound", "ℓ1 lattice staircase",
                          "target"], rows))
    # the full lattice LP (symmetry "orbits": what solved these before the coupled layer LP), same run
    frows = []
    for d, D, eps, _ in cases[:2]:
        r = run_isolated(solve_case, dict(d=d, D=D, eps=eps, symmetry="orbits"), args.baseline_budget)
        out["full_lp"].append({"d": d, "D": D, "eps": eps, **r})
        frows.append([d, D, eps, fmt(r.get("wall_s"), ".1f") if r.get("ok") else
                      (f"> {args.baseline_budget:g} s" if r.get("error_type") == "HardTimeout" else short_error(r)),
                      fmt(r.get("gap"), ".2e"), r.get("rows", "")])
    print()
    print(markdown_table(["d", "Δ", "ε", "full LP seconds", "full LP gap", "rows"], frows))
    if args.skip_baseline:
        out.pop("baseline")  # kept from the previous run by main()
        return out
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
    return out


if __name__ == "__main__":
    raise SystemExit(main())
