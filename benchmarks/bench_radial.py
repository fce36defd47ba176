"""Pure ε-DP on ℝ^d, cost a power of the sensitivity's own norm: the radial family against the cell LP.

1. Targets of issue 21: ℝ², each of ℓ1, ℓ2, ℓ∞ with the matching norm as cost, ε ∈ {0.5, 1, 2}:
   certified relative gap ≤ 1e-3 within 60 s; ℝ³, the same norms, ε = 2: ≤ 1e-2 within 120 s.  Each
   case (``d <d>, ε <ε>, <cost>``) is ``optmech.solve`` with its defaults (target gap 1e-6), after an
   untimed warm-up solve; the squares (l1sq, l2sq, linfsq) run beside them (no baseline).
2. The baseline of the matching-norm cases, in the same run (``against(cell_lp)``): the cell LP of
   :mod:`optmech.families.pure_nd` on the same problem (``symmetry="orbits"``, its default
   resolution: 4 cells per Δ in d = 2, 2 in d = 3), which is what solved them before the radial
   family; these cases run under a 180 s deadline per repeat (the former ``--baseline-deadline``),
   so a cell LP that does not finish is recorded as a ``Timeout``; the note says whether the cell
   LP's bracket contains the radial one.
3. Convergence (``convergence n=<n>``): the radial lower bound's distance to the staircase at
   n = 16..1024 nodes per Δ (ε = 1, d = 2, ℓ1); it should fall 4× per doubling (second order): the
   ratio of consecutive cases' ``rel_distance``.

Through the harness (``benchmarks/harness.py``: a fresh process per repeat, the median of
``--repeats``)::

    python -m benchmarks.harness run benchmarks/bench_radial.py [--repeats 1] [--only "d 2, ε 1, l2"]
    python -m benchmarks.harness run benchmarks/bench_radial.py --only convergence
    python benchmarks/bench_radial.py [same options]                   # the same

(the former ``--quick``, the baseline at ε = 1 in d = 2 and ε = 2 in d = 3 only, is
``--only "d 2, ε 1," --only "d 3,"``).  Results: ``benchmarks/results/bench_radial.jsonl``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import add_case, against, main  # noqa: E402

NORMS = ("l1", "l2", "linf")
SQUARE = {"l1": "l1sq", "l2": "l2sq", "linf": "linfsq"}
#: (ε, d, gap target, time target s) of issue 21
TARGETS = [(0.5, 2, 1e-3, 60.0), (1.0, 2, 1e-3, 60.0), (2.0, 2, 1e-3, 60.0), (2.0, 3, 1e-2, 120.0)]


def warm() -> None:
    """Untimed: a coarse radial solve on ℝ² (imports, solver start-up)."""
    import optmech
    from optmech.spec import Continuous, Problem, PureDP

    optmech.solve(Problem(PureDP(1.0), "l1", sensitivity=1.0, domain=Continuous(), dim=2, target_gap=1e-3))


def _solve(eps: float, d: int, norm: str, cost: str, symmetry: str) -> dict:
    import optmech
    from optmech.spec import Continuous, Problem, PureDP

    r = optmech.solve(Problem(PureDP(eps), cost, sensitivity=1.0, domain=Continuous(), dim=d, norm=norm,
                              symmetry=symmetry), time_limit=600)
    st = next((x.value for x in r.references if x.name == "staircase"), None)
    return {"lower": r.lower_bound, "upper": r.upper_bound, "gap": r.relative_gap, "certified": bool(r.certified),
            "status": str(r.status), "builder": r.lp.get("builder"), "resolution": r.lp.get("resolution"),
            "staircase": st}


def radial_case(eps: float, d: int, norm: str, cost: str, gap_target: float, time_target_s: float) -> dict:
    """The radial family's solve (``symmetry="auto"``); the target's time is the solve's wall time."""
    import time

    t0 = time.perf_counter()
    out = _solve(eps, d, norm, cost, "auto")
    wall = time.perf_counter() - t0
    met = out["certified"] and out["gap"] <= gap_target and wall <= time_target_s
    out.update(wall_s=wall, met=met, note=f"gap ≤ {gap_target:g} in ≤ {time_target_s:g} s: "
               f"{'met' if met else 'NOT met'} ({out['resolution']} nodes/Δ)")
    return out


def cell_lp(eps: float, d: int, norm: str, cost: str, ours: dict) -> dict:
    """The baseline: the cell LP (``symmetry="orbits"``, default resolution) on the same problem."""
    out = _solve(eps, d, norm, cost, "orbits")
    inside = bool(out["lower"] <= ours["lower"] and ours["upper"] <= out["upper"] * (1 + 1e-12))
    out.update(contains_radial=inside, note=f"cell bracket ⊇ radial: {'yes' if inside else 'NO'}")
    return out


def convergence_case(n: int) -> dict:
    """One radial LP at ``n`` nodes per Δ (ε = 1, d = 2, ℓ1, chain backend) and its certified lower bound."""
    from optmech.certify import dual_lower_bound
    from optmech.mechanisms.staircase_nd import staircase_nd_optimal_cost
    from optmech.problems.radial import build_radial, periods_needed
    from optmech.solvers.chain import ChainBackend

    r = build_radial(1.0, 2, 1, n, periods_needed(1.0, 2, 1))
    raw = ChainBackend().solve(r.lp, {})
    lo = dual_lower_bound(r.lp, raw.row_dual, raw.objective).value
    v = staircase_nd_optimal_cost("l1", 1.0, 1.0, 2)
    return {"n": n, "lower_certified": lo, "staircase": v, "rel_distance": (v - lo) / v, "columns": r.lp.cols,
            "note": f"(V − lower)/V = {(v - lo) / v:.3e}"}


for _eps, _d, _gap, _time in TARGETS:
    for _norm in NORMS:
        for _cost in (_norm, SQUARE[_norm]):
            _base = against(cell_lp, label="cell LP (orbits)") if _cost == _norm else None
            add_case(radial_case, f"d {_d}, ε {_eps:g}, {_cost}", baseline=_base, warmup=warm,
                     timeout=180.0 if _base else 600.0,
                     params={"eps": _eps, "d": _d, "norm": _norm, "cost": _cost, "gap_target": _gap,
                             "time_target_s": _time})

for _n in (16, 32, 64, 128, 256, 512, 1024):
    add_case(convergence_case, f"convergence n={_n}", params={"n": _n}, timeout=300.0)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
