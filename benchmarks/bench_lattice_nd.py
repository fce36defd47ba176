"""Pure ε-DP on ℤ^d: the orbit-reduced lattice LP against the all-pairs unreduced formulation.

1. Targets of issue 5 (integer lattice, ℓ1 sensitivity and cost): d = 3, Δ = 4, ε = 2 with a
   certified relative gap ≤ 1e-6 within 30 s; d = 4, Δ = 3 (ε = 2) within 120 s; issue 21: d = 3,
   Δ = 10 within 60 s and d = 5, Δ = 4 within 60 s.  Cases ``target d <d>, Δ <Δ>``: one
   ``optmech.solve`` (default target gap 1e-6) after an untimed warm-up solve.  The first two also
   run, as their baseline in the same run (``against(full_lp)``), the full lattice LP
   (``symmetry="orbits"``: what solved them before the coupled layer LP); these two cases run under
   a 300 s deadline per repeat (the former ``--baseline-budget``).
2. ``all-pairs d <d>, Δ <Δ>, R <R>``: the same relaxation written the way one would first write it —
   one variable per lattice point of the ℓ1 ball, one row per ordered pair at ℓ1 distance ≤ Δ (no
   orbits, no unit-step recursion) — solved by HiGHS (the baseline, ``against(all_pairs)``) against
   optmech's LP on the same ball (``build_pure_nd`` and ``solve_lp``, our side), each timed end to
   end (building included), 300 s deadline.  Reported: the time ratio and the two LP values (which
   must agree: the baseline's note gives their relative difference).
3. Continuous d = 2, ℓ1: gap against resolution (``continuous ε <ε>, n <n>``).  ``optmech.solve`` on
   ℝ² (ℓ1 sensitivity 1, ℓ1 cost, ``symmetry="orbits"``: the cell LP; with "auto" this problem goes
   to the radial family, see ``bench_radial.py``) at fixed resolutions n ∈ {2, 4, 8} (cells of
   width 1/n) for ε ∈ {0.5, 1, 2}, 300 s deadline (the former ``--continuous-deadline``); the
   certified bracket is set against the closed-form optimum V* = ``staircase_nd_optimal_cost("l1",
   ε, 1, 2)`` ([Geng13] (3.7)).  The upper bound comes from a fine ℓ1-shell (layered) mechanism and
   sits within ~1e-5 of V*; the gap is the lower bound's cell-minimum pricing, whose distance
   ``lower_rel_to_closed_form`` = (V* − lower)/V* should about halve when n doubles (compare
   consecutive n).

Through the harness (``benchmarks/harness.py``: a fresh process per repeat, the median of
``--repeats``)::

    python -m benchmarks.harness run benchmarks/bench_lattice_nd.py [--repeats 1] [--only target]
    python -m benchmarks.harness run benchmarks/bench_lattice_nd.py --only all-pairs --only continuous
    python benchmarks/bench_lattice_nd.py [same options]                 # the same

The former runner's ``--skip-lattice`` / ``--skip-continuous`` / ``--skip-baseline`` are ``--only``
selections; every case of a series runs (the harness does not stop a series at its first failure,
so the all-pairs case at R = 30 and the continuous ε = 0.5, n = 8 case take their full 300 s
deadline).  Results: ``benchmarks/results/bench_lattice_nd.jsonl``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import rel_distance_to_bracket  # noqa: E402
from harness import add_case, against, main  # noqa: E402

#: (d, Δ, ε, target s); issue 5: d = 3, Δ = 4 and d = 4, Δ = 3; issue 21: d = 3, Δ = 10 and d = 5, Δ = 4
TARGETS = [(3, 4, 2.0, 30.0), (3, 10, 2.0, 60.0), (5, 4, 2.0, 60.0), (4, 3, 2.0, 120.0)]
#: (d, Δ, ε, R) of the all-pairs comparison
ALL_PAIRS = [(2, 2, 1.0, 40), (3, 2, 1.0, 16), (3, 2, 1.0, 24), (3, 3, 1.0, 30)]
#: ε values and resolutions (cells per unit of sensitivity) of the continuous d = 2 section.
CONT_EPS = (0.5, 1.0, 2.0)
CONT_RES = (2, 4, 8)


def warm_lattice() -> None:
    """Untimed: a small integer solve (imports, solver start-up)."""
    import optmech
    from optmech.spec import IntegerLattice, Problem, PureDP

    optmech.solve(Problem(privacy=PureDP(1.0), cost="abs", sensitivity=2, domain=IntegerLattice()))


def _lattice_solve(d: int, D: int, eps: float, symmetry: str) -> dict:
    import optmech
    from optmech.spec import IntegerLattice, Problem, PureDP

    r = optmech.solve(Problem(privacy=PureDP(eps), cost="l1", sensitivity=D, domain=IntegerLattice(), dim=d,
                              symmetry=symmetry), time_limit=600)
    st = next((x.value for x in r.references if x.name == "discrete_staircase"), None)
    return {"lower": r.lower_bound, "upper": r.upper_bound, "gap": r.relative_gap, "certified": bool(r.certified),
            "orbits": r.lp.get("orbits"), "rows": r.lp["rows"], "half_width": r.truncation["half_width"],
            "builder": r.lp.get("builder"), "staircase": st}


def target_case(d: int, D: int, eps: float, target_s: float) -> dict:
    """The target solve (``symmetry="auto"``); its time against the target is the solve's wall time."""
    t0 = time.perf_counter()
    out = _lattice_solve(d, D, eps, "auto")
    wall = time.perf_counter() - t0
    met = out["certified"] and out["gap"] <= 1e-6 and wall <= target_s
    out.update(wall_s=wall, met=met, note=f"gap ≤ 1e-6 in ≤ {target_s:g} s: {'met' if met else 'NOT met'} "
               f"({out['builder']}, {out['rows']} rows, R {out['half_width']}; ℓ1 lattice staircase "
               f"{out['staircase']})")
    return out


def full_lp(d: int, D: int, eps: float) -> dict:
    """The baseline of the first two targets: the full lattice LP (``symmetry="orbits"``)."""
    out = _lattice_solve(d, D, eps, "orbits")
    out["note"] = f"full LP: {out['rows']} rows"
    return out


def all_pairs(d: int, D: int, eps: float, R: int, ours: dict) -> dict:
    """The baseline: all pairs, no orbits, on the ℓ1 ball of radius R (built and solved by HiGHS)."""
    import itertools

    import numpy as np
    import scipy.sparse as sp

    from optmech.lp import LinearProgram
    from optmech.problems.pure_nd import orbit_points
    from optmech.solvers import solve_lp

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
    diff = abs(raw.objective - ours["value"]) / abs(ours["value"])
    return {"value": raw.objective, "rows": m, "points": n, "value_rel_diff": diff,
            "note": f"{n} points, {m} rows; values agree to {diff:.1e}"}


def ball_lp(d: int, D: int, eps: float, R: int) -> dict:
    """Our side of the all-pairs comparison: optmech's orbit LP on the same ball, built and solved."""
    from optmech.problems.pure_nd import build_pure_nd
    from optmech.solvers import solve_lp

    alp = build_pure_nd("l1", eps, D, R, dim=d)
    raw = solve_lp(alp.lp)
    return {"value": raw.objective, "rows": alp.lp.rows, "orbits": len(alp.orbits.reps),
            "note": f"{len(alp.orbits.reps)} orbits, {alp.lp.rows} rows (uncertified LP value)"}


def warm_continuous() -> None:
    """Untimed: the cell LP at one cell per Δ."""
    import optmech
    from optmech.spec import Continuous, Problem, PureDP

    optmech.solve(Problem(privacy=PureDP(1.0), cost="l1", sensitivity=1.0, domain=Continuous(1), dim=2,
                          symmetry="orbits"))


def continuous_case(eps: float, n: int) -> dict:
    """One continuous d = 2, ℓ1 solve at the fixed resolution ``n`` (Δ = 1), against V*."""
    import optmech
    from optmech.mechanisms.staircase_nd import staircase_nd_optimal_cost
    from optmech.spec import Continuous, Problem, PureDP

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
            "lower_rel_to_closed_form": (v - lo) / v, "upper_rel_to_closed_form": (up - v) / v,
            "note": f"V* {v:.6f} {side}; (V*−lower)/V* {(v - lo) / v:.4f}; (upper−V*)/V* {(up - v) / v:.1e}"}


for _k, (_d, _D, _eps, _t) in enumerate(TARGETS):
    _base = against(full_lp, label="full lattice LP (orbits)") if _k < 2 else None
    add_case(target_case, f"target d {_d}, Δ {_D}", baseline=_base, warmup=warm_lattice,
             timeout=300.0 if _base else 900.0, params={"d": _d, "D": _D, "eps": _eps, "target_s": _t})

for _d, _D, _eps, _R in ALL_PAIRS:
    add_case(ball_lp, f"all-pairs d {_d}, Δ {_D}, R {_R}", baseline=against(all_pairs, label="all-pairs LP (HiGHS)", warmup=warm_lattice),
             warmup=warm_lattice, timeout=300.0, params={"d": _d, "D": _D, "eps": _eps, "R": _R})

for _eps in CONT_EPS:
    for _n in CONT_RES:
        add_case(continuous_case, f"continuous ε {_eps:g}, n {_n}", warmup=warm_continuous, timeout=300.0,
                 params={"eps": _eps, "n": _n})


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
