"""The aggregated (ε, δ) LP on ℤ (:mod:`optmech.problems.approx_periodic`) against today's ``optmech solve``.

For each case (ε = 0.1, δ = 0.01, |x|; ε = 1, δ = 1e-6, |x| and x²) and Δ ∈ {16, 32, 64, 128, 256},
each variant (solver, ``band``, ``min_shift``) builds the aggregated relaxation on N = T + Δ
(T = ⌈Δ(n + 1)⌉), solves it once with HiGHS through optmech's wrapper (budget δ − 1e-14, masses
scaled as the family does; HiGHS ``time_limit`` 180 s), and reports the certified bracket: the lower
end is :func:`optmech.certify.dual_lower_bound` of the LP (weak duality, outward rounding), the upper
end :func:`optmech.families.approx.upper_from_pmf` of its primal (audited at every shift 1..Δ, mixed
with a (0, δ/2) law when the audit exceeds δ).

Through the harness (``benchmarks/harness.py``), one case per (ε, δ, cost, Δ, variant), generated
with ``add_case`` in a loop and named ``ε E δ D COST Δ N: VARIANT``, each repeat in its own process
after an untimed warm-up (the same variant at Δ = 2: imports and HiGHS's start-up; the former
runner ran everything in one process, so its first solve paid them), killed after 2 × 180 + 60 s.
No baseline: the comparison with today's ``optmech solve`` is its own cases, ``ε E δ D COST Δ N:
optmech solve (60 s)`` (the former ``--cli``: ``optmech solve --privacy approx --domain integer ...
--time-limit 60 --json`` in a child process, its bracket and wall time).  The note gives the LP's
rows, the build/solve/audit seconds and the bracket.

The former rule "skip a variant at larger Δ once it took more than ``--limit`` (60 s)" cannot be
kept: the harness's cases are fixed before any runs, so every (Δ, variant) runs (each under its
kill deadline).  Select what to run with ``--only`` instead, e.g. ``--only "Δ 16:"`` or ``--only
"ipm b1 ob2 ms.5 N=T"``.  ``--set time_limit=T`` sets HiGHS's time limit of every selected case.

Measured (2-core machine shared with other jobs, former runner): the variant "ipm b1 ob2 ms.5 N=T"
(IPX with crossover, central band 1 period, outer band 2, shifts |v| >= Δ/2, N = T) is exact at
ε = 0.1, δ = 0.01 (gap ~1e-12) and within 1.6e-8 at ε = 1, δ = 1e-6 (the solver's accuracy):
Δ = 64 in 8-10 s, Δ = 128 in 107-127 s (ε = 1) and over 150 s (ε = 0.1); the time still grows like
Δ^3.5, a constant factor 4-6 below the exact LP.  Results:
``benchmarks/results/bench_approx_periodic.jsonl``::

    python -m benchmarks.harness run benchmarks/bench_approx_periodic.py --repeats 1 --only "Δ 16:"
    python benchmarks/bench_approx_periodic.py [same options]              # the same
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import add_case, main  # noqa: E402

CASES = [(0.1, 0.01, "abs"), (1.0, 1e-6, "abs"), (1.0, 1e-6, "square")]
DELTAS = [16, 32, 64, 128, 256]
#: HiGHS time limit per solve (the former ``--time-limit``), and the limit of ``optmech solve``.
TIME_LIMIT, CLI_TIME_LIMIT = 180.0, 60.0
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
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=time_limit * 3 + 60)
    wall = time.perf_counter() - t0
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"rc": p.returncode, "wall_s": wall, "error": p.stderr[-300:]}
    lo, up = r.get("lower_bound"), r.get("upper_bound")
    gap = (up - lo) / up if isinstance(lo, (int, float)) and isinstance(up, (int, float)) and up else None
    return {"rc": p.returncode, "wall_s": wall, "lower": lo, "upper": up, "gap": gap, "status": r.get("status"),
            "certified": bool(r.get("certified"))}


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


def periodic_warmup(epsilon: float, delta: float, cost: str, variant: str) -> None:
    """Untimed: the same variant at Δ = 2 (imports, HiGHS's start-up)."""
    from optmech.costs import parse_cost

    kw = variants(2)[variant]
    certified_bracket(parse_cost(cost), epsilon, delta, 2, time_limit=30.0, **kw)


def periodic_case(epsilon: float, delta: float, cost: str, sensitivity: int, variant: str,
                  time_limit: float = TIME_LIMIT) -> dict:
    """One variant at one Δ: :func:`certified_bracket`; the note gives the LP size, seconds and bracket."""
    from optmech.costs import parse_cost

    r = certified_bracket(parse_cost(cost), epsilon, delta, sensitivity, time_limit=time_limit,
                          **variants(sensitivity)[variant])
    r = {"epsilon": epsilon, "delta": delta, "cost": cost, "sensitivity": sensitivity, "variant": variant} | r
    r["note"] = (f"{r['size'].get('rows')} rows; build {r['build_s']:.2f} + solve {r['solve_s']:.2f} + audit "
                 f"{r['audit_s']:.2f} s; [{r['lower']:.12g}, {r['upper']:.12g}] ({r['status']})")
    return r


def cli_harness_case(epsilon: float, delta: float, cost: str, sensitivity: int,
                     time_limit: float = CLI_TIME_LIMIT) -> dict:
    """Today's ``optmech solve`` (the former ``--cli``), through :func:`cli_case`."""
    r = cli_case(epsilon, delta, cost, sensitivity, time_limit)
    if "error" in r:
        raise RuntimeError(f"optmech solve exited {r['rc']} without JSON: {r['error']}")
    r["note"] = (f"optmech solve: {r.get('status')} in {r['wall_s']:.2f} s wall; "
                 f"[{r.get('lower')}, {r.get('upper')}]")
    return r


for _eps, _dl, _cost in CASES:
    for _D in DELTAS:
        _head = f"ε {_eps:g} δ {_dl:g} {_cost} Δ {_D}"
        _base = {"epsilon": _eps, "delta": _dl, "cost": _cost, "sensitivity": _D}
        for _variant in variants(_D):
            add_case(periodic_case, f"{_head}: {_variant}", params=_base | {"variant": _variant,
                                                                             "time_limit": TIME_LIMIT},
                     warmup=periodic_warmup, timeout=2 * TIME_LIMIT + 60)
        add_case(cli_harness_case, f"{_head}: optmech solve ({CLI_TIME_LIMIT:g} s)",
                 params=_base | {"time_limit": CLI_TIME_LIMIT}, timeout=3 * CLI_TIME_LIMIT + 90)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
