"""(ε, δ) bound tables: the full 96-row table of issue 4, and the largest Δ / smallest δ per row.

1. ``table``: costs ℓ1 (``abs``) and ℓ2 (``square``) × Δ ∈ {1, 2, 5} × ε ∈ {0.01, 0.1, 0.5, 1} ×
   δ ∈ {0.005, 0.01, 0.05, 0.1}: 96 rows, each with a certified V* bracket, the paper's bounds and
   the relaxed LP, computed by ``optmech.table.build_table`` on ``workers`` processes (default 2,
   the CI machine).  Targets: the whole table in ≤ 60 s on 2 cores, every row with relative gap
   ≤ 1e-8.
2. Scaling of one row (ℓ1, ε = 0.1): ``row Δ=D, δ=d`` cases, one ``optmech.table.approx_row`` each,
   while Δ grows (δ = 0.01) or δ shrinks (Δ = 1 and Δ = 5).  Target: the largest Δ / smallest δ for
   which a row stays under 10 s (each case's note says whether it did; every case of a series runs,
   the harness has no "stop at the first failure", so read the series up to its first "NOT met").

No baseline (the harness times optmech alone; a fresh process per repeat, the median of
``--repeats``; the table spawns its worker processes inside the timed call)::

    python -m benchmarks.harness run benchmarks/bench_approx_table.py [--repeats 1] [--only table]
    python -m benchmarks.harness run benchmarks/bench_approx_table.py --only "row Δ=1,"   # the δ series at Δ = 1
    python benchmarks/bench_approx_table.py [same options]                                # the same

Parameters (``--set KEY=VALUE``): ``workers`` (2, the table).  Results:
``benchmarks/results/bench_approx_table.jsonl``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import add_case, case, main  # noqa: E402

COSTS = ["abs", "square"]
SENSITIVITIES = [1, 2, 5]
EPSILONS = [0.01, 0.1, 0.5, 1.0]
DELTAS = [0.005, 0.01, 0.05, 0.1]

#: (series, [(Δ, ε, δ), ...]) of part 2, ℓ1 cost.
SCALING: list[tuple[str, list[tuple[int, float, float]]]] = [
    ("Δ (ε = 0.1, δ = 0.01)", [(D, 0.1, 0.01) for D in (10, 12, 14, 16, 18, 20, 25)]),
    ("δ (Δ = 1, ε = 0.1)", [(1, 0.1, dl) for dl in (1e-3, 1e-4, 1e-5, 3e-6, 1e-6)]),
    ("δ (Δ = 5, ε = 0.1)", [(5, 0.1, dl) for dl in (1e-3, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5)]),
]


def warm_import() -> None:
    """Untimed: import the table module (and the LP stack behind it)."""
    import optmech.table  # noqa: F401


@case(name="table", params={"workers": 2}, warmup=warm_import, timeout=900.0)
def table_case(workers: int) -> dict:
    """The 96-row table on ``workers`` processes: gaps, certification, the theorem bound's validity."""
    from optmech.table import build_table

    by_cost = {}
    for cost in COSTS:
        by_cost[cost] = build_table("approx", cost=cost, sensitivities=SENSITIVITIES, epsilons=EPSILONS, deltas=DELTAS,
                                    workers=workers, target_gap=1e-9, progress=False)
    rows = [r for cost in COSTS for r in by_cost[cost]]
    gaps = [r.get("relative_gap") for r in rows]
    finite = [g for g in gaps if g is not None]
    bad = [r for r in rows if not r.get("certified") or (r.get("relative_gap") or 1.0) > 1e-8]
    invalid = sum(1 for r in rows if not r.get("lb_theorem_valid"))
    slowest = max((r.get("seconds") or 0.0) for r in rows) if rows else None
    sample = [{k: r.get(k) for k in ("sensitivity", "epsilon", "delta", "lb_theorem", "lb_theorem_valid",
                                     "lb_relaxed_lp", "v_star_lower", "v_star_upper", "ub_uniform", "ub_laplace",
                                     "ub_staircase", "ratio_best_simple_to_v_star")}
              for r in by_cost["abs"] if r["sensitivity"] == 5 and r["delta"] in (0.01, 0.1)]
    note = (f"{len(rows)} rows, {len(rows) - len(bad)} certified with gap ≤ 1e-8 "
            f"({'met' if not bad else 'NOT met'}); theorem bound invalid in {invalid}; slowest row "
            f"{slowest:.2f} s; target ≤ 60 s (see optmech s)")
    return {"rows": len(rows), "certified_rows": len(rows) - len(bad), "gap": max(finite) if finite else None,
            "certified": not bad and bool(rows), "theorem_invalid_rows": invalid, "slowest_row_s": slowest,
            "sample": sample, "note": note}


def row_case(cost: str, sensitivity: int, epsilon: float, delta: float) -> dict:
    """One row of the table in its own process (the timed figure: the whole row, bounds included)."""
    from optmech.table import approx_row

    row = approx_row(cost, sensitivity, epsilon, delta, 1, "default", 60.0, 1e-9)
    return {**row, "lower": row.get("v_star_lower"), "upper": row.get("v_star_upper"), "gap": row.get("relative_gap"), "certified": bool(row.get("certified")),
            "note": f"row seconds {row.get('seconds', float('nan')):.2f} (target ≤ 10 s per row; see optmech s)"}


for _series, _sweep in SCALING:
    for _D, _e, _dl in _sweep:
        add_case(row_case, f"row Δ={_D}, δ={_dl:g} ({_series})", warmup=warm_import, timeout=120.0,
                 params={"cost": "abs", "sensitivity": _D, "epsilon": _e, "delta": _dl})


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
