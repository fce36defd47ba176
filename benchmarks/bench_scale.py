"""Scaling of optmech on the integer domain: the largest Δ solved within a time limit.

Series, each a geometric sweep of the sensitivity Δ at ε = 1 and target gap 1e-8, ``time_limit``
60 s per solve:

* ``general``: the asymmetric cost ``where(x > 0, x, 2*abs(x))`` with ``symmetry="off"``
  (the general builder); target: Δ >= 30 000 within 60 s, time growing at most like Δ^1.2 from
  Δ = 1000 on (issue 23).
* ``nonmonotone``: ``min(abs(x), 0.5*abs(x - 3Δ) + Δ)`` (two basins, scaled with Δ), same target.
* ``abs``: |x| with ``symmetry="auto"`` (the symmetric monotone fast path); target:
  Δ >= 100000 within 60 s.
* ``naive``: the all-pairs LP (p_i <= e^ε p_j for every |i − j| <= Δ on the window optmech uses,
  4Δ + 3 points, mass outside dropped) built with scipy and solved by HiGHS's dual simplex, not
  certified: what one writes first.  No target.

Through the harness (``benchmarks/harness.py``), each repeat of each side in its own process after
an untimed warm-up solve at Δ = 2, killed after 1.5 × 60 + 30 s (the former hard deadline):

* ``general Δ D`` and ``nonmonotone Δ D`` against :data:`harness.COMMIT` (``--baseline-commit SHA``
  or ``--baseline-tree PATH``: the former ``--baseline`` checkout, the ``@base`` series);
* ``abs Δ D``: no baseline (as before);
* ``naive Δ D`` (Δ = 10, 30, 100, 300, 1000): optmech's ``general`` solve at that Δ, with the naive
  all-pairs LP as the callable baseline (the former ``naive`` series, now side by side with
  optmech's).

Each case's note says whether it passed (certified, gap <= ``target_gap``, seconds <= the limit; a
naive solve only needs an optimal status in time) and, at a series' target Δ, whether the target is
met.  What the former runner did and the harness does not: it stopped a series at its first
failure (every Δ now runs: read a series up to its first "NOT met"), bisected ``--refine`` times
between the last pass and the first failure (the cases are fixed: add a Δ to ``SERIES`` to
refine), and printed the growth exponents (the least-squares slope of log(seconds) against log(Δ)
over the passing points, :func:`loglog_slope`: compute them from the records; issue 23's measure
is the slope over Δ >= 1000).  ``--set time_limit=T`` changes the limit of every selected case
(the kill deadline stays 120 s; raise it with ``--timeout``).  Results:
``benchmarks/results/bench_scale.jsonl``::

    python -m benchmarks.harness run benchmarks/bench_scale.py --baseline-commit <sha> --repeats 1 [--only "general Δ 1000"]
    python benchmarks/bench_scale.py [same options]              # the same
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ASYMMETRIC_COST, highs_solve_csc, result_summary  # noqa: E402
from harness import COMMIT, add_case, against, main  # noqa: E402

#: name -> cost (``{D}`` is replaced by Δ), symmetry option, Δ sweep, target largest Δ.
SERIES: dict[str, dict] = {
    "general": {
        "cost": ASYMMETRIC_COST, "symmetry": "off",
        "deltas": [100, 300, 1000, 3000, 10_000, 30_000, 100_000],
        "target": 30_000,
    },
    "nonmonotone": {
        "cost": "min(abs(x), 0.5*abs(x - 3*{D}) + {D})", "symmetry": "off",
        "deltas": [100, 300, 1000, 3000, 10_000, 30_000, 100_000],
        "target": 30_000,
    },
    "naive": {
        "cost": ASYMMETRIC_COST, "symmetry": "off", "naive": True,
        "deltas": [10, 30, 100, 300, 1000],
        "target": 0,
    },
    "abs": {
        "cost": "abs", "symmetry": "auto",
        "deltas": [100, 1000, 10_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000],
        "target": 100_000,
    },
}
EPSILON, TARGET_GAP, TIME_LIMIT = 1.0, 1e-8, 60.0
#: Each repeat is killed after this many seconds (the former runner's 1.5 × limit + 30 s).
HARD_TIMEOUT = 1.5 * TIME_LIMIT + 30


def naive_case(cost: str, delta: int, epsilon: float) -> dict:
    """The all-pairs LP on 4Δ + 3 points (mass outside dropped), HiGHS dual simplex; not certified."""
    import numpy as np
    import scipy.sparse as sp

    from optmech.costs import parse_cost

    t0 = time.perf_counter()
    N = 4 * delta + 3
    x = np.arange(N) - (2 * delta + 1)
    i, d = np.meshgrid(np.arange(N), np.arange(1, delta + 1), indexing="ij")
    i, j = i.ravel(), (i + d).ravel()
    keep = j < N
    i, j = i[keep], j[keep]
    E = math.exp(epsilon)
    m = len(i)
    rows = np.concatenate([np.arange(2 * m)] * 2)
    cols = np.concatenate([i, j, j, i])
    vals = np.concatenate([np.ones(2 * m), -E * np.ones(2 * m)])
    A = sp.vstack([sp.csc_matrix(np.ones((1, N))), sp.csc_matrix((vals, (rows, cols)), shape=(2 * m, N))]).tocsc()
    h = highs_solve_csc(A, parse_cost(cost)(x.astype(float)), np.zeros(N), np.ones(N),
                        np.concatenate([[1.0], np.full(2 * m, -np.inf)]), np.concatenate([[1.0], np.zeros(2 * m)]), 600.0)
    seconds = time.perf_counter() - t0
    out = {"seconds": seconds, "relative_gap": math.nan, "certified": False, "status": str(h.getModelStatus()),
           "message": "naive all-pairs LP, not certified", "objective": h.getInfo().objective_function_value,
           "lp": {"builder": "naive all-pairs", "rows": int(A.shape[0]), "cols": N, "nonzeros": int(A.nnz)},
           "window": [int(x[0]), int(x[-1])], "refinements": 1, "wall_s": seconds}
    ok, why = judge({"ok": True, **out}, TARGET_GAP, TIME_LIMIT, naive=True)
    out["note"] = f"naive all-pairs LP {out['lp']['rows']}×{N}: " + ("optimal in time" if ok else why)
    return out


def _problem(cost: str, symmetry: str, delta: int, epsilon: float, target_gap: float):
    from optmech.costs import parse_cost
    from optmech.spec import IntegerLattice, Problem, PureDP

    return Problem(privacy=PureDP(epsilon), cost=parse_cost(cost.replace("{D}", str(delta))), sensitivity=delta,
                   domain=IntegerLattice(), target_gap=target_gap, symmetry=symmetry)


def scale_warmup(cost: str, symmetry: str, epsilon: float, target_gap: float) -> None:
    """Untimed: a solve at Δ = 2 (imports, solver start-up)."""
    import optmech

    optmech.solve(_problem(cost, symmetry, 2, epsilon, target_gap))


def scale_case(cost: str, symmetry: str, delta: int, epsilon: float, target_gap: float, time_limit: float,
               target: int = 0) -> dict:
    """One solve under ``time_limit`` (``{D}`` in ``cost`` is Δ); the note judges it (and the target at Δ = ``target``)."""
    import optmech

    t0 = time.perf_counter()
    r = optmech.solve(_problem(cost, symmetry, delta, epsilon, target_gap), time_limit=time_limit)
    out = {**result_summary(r), "wall_s": time.perf_counter() - t0}
    ok, why = judge({"ok": True, **out}, target_gap, time_limit)
    lp = out["lp"]
    note = (f"gap ≤ {target_gap:g} in ≤ {time_limit:g} s: " + ("met" if ok else f"NOT met ({why})")
            + f"; {lp.get('builder')} ({lp.get('solver', 'highs')}) {lp.get('rows')}×{lp.get('cols')}")
    if target and delta == target:
        note += f"; target Δ ≥ {target}: {'met' if ok else 'NOT met'}"
    out["note"] = note
    return out


def loglog_slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log y against log x; ``None`` with fewer than two points."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def judge(res: dict, target_gap: float, limit: float, naive: bool = False) -> tuple[bool, str]:
    """Whether a case passed, and why not (a naive case needs only an optimal status in time)."""
    if not res.get("ok"):
        return False, f"{res.get('error_type', 'Error')}: {res.get('error', '')}"[:120]
    if naive:
        ok = res["status"].endswith("kOptimal") and res["seconds"] <= limit
        return ok, "" if ok else f"{res['status']} after {res['seconds']:.1f} s"
    if not res["certified"]:
        return False, f"uncertified ({res['status']}: {res['message']})"
    if not res["relative_gap"] <= target_gap:
        return False, f"gap {res['relative_gap']:.3g} > {target_gap:g} ({res['message']})"
    if res["seconds"] > limit:
        return False, f"{res['seconds']:.1f} s > {limit:g} s"
    return True, ""


for _name, _spec in SERIES.items():
    for _D in _spec["deltas"]:
        _params = {"cost": _spec["cost"], "symmetry": _spec["symmetry"], "delta": _D, "epsilon": EPSILON,
                   "target_gap": TARGET_GAP, "time_limit": TIME_LIMIT, "target": _spec["target"]}
        if _spec.get("naive"):
            add_case(scale_case, f"naive Δ {_D}", params=_params, warmup=scale_warmup, timeout=HARD_TIMEOUT,
                     baseline=against(naive_case, label="naive all-pairs LP", timeout=HARD_TIMEOUT))
        else:
            add_case(scale_case, f"{_name} Δ {_D}", params=_params, warmup=scale_warmup, timeout=HARD_TIMEOUT,
                     baseline=COMMIT if _name in ("general", "nonmonotone") else None)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
