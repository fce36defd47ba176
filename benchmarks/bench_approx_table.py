"""(ε, δ) bound tables: the full 96-row table of issue 4, and the largest Δ / smallest δ per row.

1. The table: costs ℓ1 (`abs`) and ℓ2 (`square`) × Δ ∈ {1, 2, 5} × ε ∈ {0.01, 0.1, 0.5, 1} ×
   δ ∈ {0.005, 0.01, 0.05, 0.1}: 96 rows, each with a certified V* bracket, the paper's bounds and
   the relaxed LP, computed by ``optmech.table.build_table`` on ``--workers`` processes (default 2,
   the CI machine).  Targets: the whole table in ≤ 60 s on 2 cores, every row with relative gap
   ≤ 1e-8.
2. Scaling of one row (ℓ1, ε = 0.1): the largest Δ (δ = 0.01) and the smallest δ (Δ = 1 and Δ = 5)
   for which a row stays under 10 s, each row in its own child process.

Run ``python benchmarks/bench_approx_table.py`` (``--quick`` skips part 2); writes
``benchmarks/results/approx_table.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, fmt, markdown_table, run_isolated, short_error, write_json  # noqa: E402

COSTS = ["abs", "square"]
SENSITIVITIES = [1, 2, 5]
EPSILONS = [0.01, 0.1, 0.5, 1.0]
DELTAS = [0.005, 0.01, 0.05, 0.1]


def table_case(workers: int) -> dict:
    from optmech.table import build_table

    out = {}
    t0 = time.perf_counter()
    for cost in COSTS:
        out[cost] = build_table("approx", cost=cost, sensitivities=SENSITIVITIES, epsilons=EPSILONS, deltas=DELTAS,
                                workers=workers, target_gap=1e-9, progress=False)
    return {"seconds": time.perf_counter() - t0, "rows": out}


def row_case(cost: str, sensitivity: int, epsilon: float, delta: float) -> dict:
    from optmech.table import approx_row

    t0 = time.perf_counter()
    row = approx_row(cost, sensitivity, epsilon, delta, 1, "default", 60.0, 1e-9)
    return {"wall_s": time.perf_counter() - t0, **row}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="only the 96-row table")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "approx_table.json")
    args = ap.parse_args(argv)

    # the table spawns its own worker processes, so it runs here rather than in an isolated child
    t0 = time.perf_counter()
    try:
        res = {"ok": True, **table_case(args.workers)}
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        res = {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}
    res["wall_s_parent"] = time.perf_counter() - t0
    payload: dict = {"table": res}
    if not res.get("ok"):
        print("table failed:", short_error(res))
    else:
        rows = [r for cost in COSTS for r in res["rows"][cost]]
        gaps = [r.get("relative_gap") for r in rows]
        bad = [r for r in rows if not r.get("certified") or r.get("relative_gap", 1) > 1e-8]
        invalid = sum(1 for r in rows if not r.get("lb_theorem_valid"))
        print(f"96-row table on {args.workers} workers: {res['seconds']:.1f} s wall ({res['wall_s_parent']:.1f} s with start-up); "
              f"{len(rows)} rows, {len(rows) - len(bad)} certified with gap <= 1e-8, max gap {max(g for g in gaps if g is not None):.2e}; "
              f"theorem bound invalid in {invalid} rows; slowest row {max(r['seconds'] for r in rows):.2f} s")
        print(f"targets: <= 60 s ({'met' if res['seconds'] <= 60 else 'NOT met'}), every gap <= 1e-8 "
              f"({'met' if not bad else 'NOT met'})")
        sample = [r for r in res["rows"]["abs"] if r["sensitivity"] == 5 and r["delta"] in (0.01, 0.1)]
        print()
        print(markdown_table(
            ["Δ", "ε", "δ", "lb_theorem (valid)", "lb_relaxed_lp", "V* lower", "V* upper", "uniform", "laplace",
             "staircase", "best simple / V*"],
            [[r["sensitivity"], r["epsilon"], r["delta"], f"{fmt(r['lb_theorem'], '.6g')} ({fmt(r['lb_theorem_valid'])})",
              fmt(r["lb_relaxed_lp"], ".8g"), fmt(r["v_star_lower"], ".10g"), fmt(r["v_star_upper"], ".10g"),
              fmt(r["ub_uniform"], ".6g"), fmt(r["ub_laplace"], ".6g"), fmt(r["ub_staircase"], ".6g"),
              fmt(r["ratio_best_simple_to_v_star"], ".4f")] for r in sample]))
    if not args.quick:
        scaling = []
        for label, sweep in (("Δ (ε = 0.1, δ = 0.01)", [(D, 0.1, 0.01) for D in (10, 12, 14, 16, 18, 20, 25)]),
                             ("δ (Δ = 1, ε = 0.1)", [(1, 0.1, dl) for dl in (1e-3, 1e-4, 1e-5, 3e-6, 1e-6)]),
                             ("δ (Δ = 5, ε = 0.1)", [(5, 0.1, dl) for dl in (1e-3, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5)])):
            for D, e, dl in sweep:
                r = run_isolated(row_case, dict(cost="abs", sensitivity=D, epsilon=e, delta=dl), 120)
                scaling.append({"series": label, "sensitivity": D, "epsilon": e, "delta": dl, **r})
                ok = r.get("ok") and r.get("certified") and r["wall_s"] <= 10
                print(f"  {label}: Δ={D}, δ={dl:g}: " + (f"{r['wall_s']:.2f} s, gap {r['relative_gap']:.1e}" if r.get("ok")
                                                        else short_error(r)))
                if not ok:
                    break
        payload["scaling"] = scaling
    write_json(args.json, payload)
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
