"""optmech's W1 noise LP against the same problem written naively in cvxpy (dense convolution).

``optmech.solve_wasserstein(X, ε, m)`` gives a certified bracket on the smallest 1-Wasserstein
distance W1(X, X + θ) = Σ_k |F_X(k) − F_{X+θ}(k)| over ε-DP noise θ on ℤ with integer
sensitivity m.  The naive formulation is what one writes first: a cvxpy ``Variable`` p on the
noise window −K..K (``--naive-window first``, the default: the window the first version of optmech
used and the README's figures were measured on, ``initial_half_width`` at the target gap, wide
enough for the naive value to come within ~1e-6 of the optimum; ``--naive-window optmech``: the
half-width optmech ended with, ``r.truncation["half_width"]``, which is much smaller now that the
LP prices the tail beyond its window),
``p >= 0``, ``sum(p) == 1``, for d = 1..m the ratio constraints ``p[:-d] <= e^ε p[d:]`` and
``p[d:] <= e^ε p[:-d]``, the output cdf ``F_Y = C @ p`` with C the dense
(len(k_out) × (2K+1)) convolution-and-cumsum matrix (C[k, j] = F_X(k − j), built with numpy
as the cumulative sum of the convolution matrix), and the objective ``sum(abs(F_X − C @ p))``
over the whole output range x_lo − K .. x_hi + K, solved by ``prob.solve(solver=cp.HIGHS)``
(CLARABEL when cvxpy has no HiGHS).  Its time is build + solve, end to end (after a warm-up
that imports cvxpy's solver interface).

optmech's time is ``r.seconds`` (median of ``--repeats`` after an untimed warm-up solve), its
LP size ``r.lp``.  The naive problem's size is the dense matrix C, cvxpy's ``size_metrics`` and
the canonical LP cvxpy hands to the solver (``get_problem_data``, computed after the timing).

The naive window forces all mass into −K..K and drops the ratio constraints that cross its
edge, so its optimum is neither a bound nor an ε-DP law on ℤ; its objective is placed relative
to optmech's certified bracket (relative distance to the interval, 0 inside; "below" means under
the certified lower bound, so it is not the true optimum).

Run ``python benchmarks/bench_wasserstein.py`` (``--help`` for options); writes
``benchmarks/results/wasserstein.json``.

``--scale`` (optmech issue 23) runs instead the sensitivity sweep on Poisson(200) restricted to
[0, 600], ε = 1, target gap 1e-8, m in ``--sweep`` (default 60, 125, 250, 500; the last is the
target case: certified gap <= 1e-8 within 60 s), on this tree and on a baseline checkout
(``--baseline``, default ``/tmp/optmech-base`` when it exists), alternating the trees, each solve
in a fresh ``python`` subprocess with ``PYTHONPATH`` set to the tree and an untimed warm-up solve
first (the time is the Result's ``seconds``; the baseline gets ``--base-time-limit`` and a hard
kill after ``--hard-timeout``; a refused or failed case is reported and skipped).  It reports the
growth exponent of each tree: the least-squares slope of log(seconds) against log(m) over the
cases that reached the target.  Writes ``benchmarks/results/wasserstein_scale.json``.  With
``--delta D`` the sweep is (ε, δ)-DP (m in 15, 30, 45 by default) and writes
``benchmarks/results/wasserstein_scale_approx.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    REPO_ROOT,
    RESULTS_DIR,
    fmt,
    markdown_table,
    rel_distance_to_bracket,
    result_summary,
    run_isolated,
    short_error,
    write_json,
)

#: Window half-width for the naive LP when optmech's result does not say which one it used.
FALLBACK_HALF_WIDTH = 225

#: (case name, input spec, ε, m).  The first is the issue's case.
CASES: list[tuple[str, str, float, int]] = [
    ("poisson5_m15", "poisson:5:0:30", 2.0, 15),
    ("poisson5_m5", "poisson:5:0:30", 2.0, 5),
    ("poisson20_m30", "poisson:20:0:60", 2.0, 30),
    ("poisson20_m60", "poisson:20:0:60", 2.0, 60),
]


#: The scale sweep (``--scale``): input, ε, target gap; m from ``--sweep``.  m = 500 is the target case.
SCALE_INPUT, SCALE_EPSILON, SCALE_GAP = "poisson:200:0:600", 1.0, 1e-8
SCALE_SWEEP = (60, 125, 250, 500)
#: ``--scale --delta D``: the (ε, δ) sweep (its hockey-stick LP has 2m·N slacks; m = 60 is out of reach).
SCALE_SWEEP_APPROX = (15, 30, 45)
DEFAULT_BASELINE = Path("/tmp/optmech-base")

#: One solve in a fresh interpreter (``PYTHONPATH`` = the tree measured): warm-up, then the timed solve.
SCALE_CHILD = r"""
import json, sys, time
spec, eps, m, gap, limit = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
delta = float(sys.argv[6])
from optmech.inputs import parse_input_spec
try:
    from optmech.drive import solve_wasserstein
except ImportError:
    from optmech.solve_wasserstein import solve_wasserstein
inp = parse_input_spec(spec)
solve_wasserstein(inp, eps, 2, target_gap=1e-3, delta=delta)
t0 = time.perf_counter()
r = solve_wasserstein(inp, eps, m, target_gap=gap, time_limit=limit, delta=delta)
wall = time.perf_counter() - t0
print(json.dumps({"seconds": float(r.seconds), "wall": wall, "lower": r.lower_bound, "upper": r.upper_bound,
                  "gap": r.relative_gap, "certified": bool(r.certified), "status": str(getattr(r.status, "value", r.status)),
                  "lp": {k: r.lp.get(k) for k in ("rows", "cols", "nonzeros")},
                  "half_width": (r.history[-1].get("size") or {}).get("half_width") if r.history else None,
                  "steps": len(r.history)}))
"""


def scale_solve(tree: Path, m: int, time_limit: float, hard_timeout: float, delta: float = 0.0) -> dict:
    """One timed solve of the sweep's case on ``tree`` in a subprocess; ``{"error": ...}`` when it fails."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    args = [sys.executable, "-c", SCALE_CHILD, SCALE_INPUT, str(SCALE_EPSILON), str(m), str(SCALE_GAP), str(time_limit),
            repr(float(delta))]
    try:
        out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=hard_timeout, cwd=str(tree))
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {hard_timeout:g} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def growth_exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) against log(m) (None with fewer than two points)."""
    if len(points) < 2:
        return None
    xs = [math.log(m) for m, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else None


def run_scale(args: argparse.Namespace) -> int:
    """The ``--scale`` mode (module docstring)."""
    trees = {"new": REPO_ROOT}
    base = Path(args.baseline) if args.baseline else (DEFAULT_BASELINE if DEFAULT_BASELINE.is_dir() else None)
    if base is not None:
        trees["base"] = base.resolve()
    sweep = [int(v) for v in args.sweep.split(",") if v.strip()]
    cases = []
    for m in sweep:
        runs: dict[str, list[dict]] = {tag: [] for tag in trees}
        for i in range(max(1, args.repeats)):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))
            for tag in order:
                limit = args.time_limit if tag == "new" else args.base_time_limit
                if runs[tag] and "error" in runs[tag][-1]:
                    continue  # refused or killed once: not again
                res = scale_solve(trees[tag], m, limit, args.hard_timeout, args.delta)
                runs[tag].append(res)
                msg = (res["error"] if "error" in res else
                       f"[{res['lower']:.12g}, {res['upper']:.12g}] gap {res['gap']:.3g} ({res['status']}) in "
                       f"{res['seconds']:.3g} s, LP {res['lp']['rows']}x{res['lp']['cols']} "
                       f"({res['lp']['nonzeros']} nnz), K = {res['half_width']}")
                print(f"  m = {m} [{tag}] {msg}", flush=True)
        case: dict = {"m": m}
        for tag, rs in runs.items():
            good = [r for r in rs if "error" not in r]
            case[tag] = {"runs": rs,
                         "seconds_median": statistics.median([r["seconds"] for r in good]) if good else None,
                         "reached_target": bool(good) and all(r["gap"] <= SCALE_GAP and r["certified"] for r in good)}
        cases.append(case)
    exponents = {}
    for tag in trees:
        pts = [(c["m"], c[tag]["seconds_median"]) for c in cases if c[tag]["reached_target"]]
        exponents[tag] = {"exponent": growth_exponent(pts), "points": pts}
    rows = []
    for c in cases:
        row = [c["m"]]
        for tag in ("new", "base"):
            if tag not in trees:
                row += ["—", "—"]
                continue
            good = [r for r in c[tag]["runs"] if "error" not in r]
            if not good:
                row += ["refused/failed: " + c[tag]["runs"][-1]["error"][:80], "—"]
                continue
            r = good[-1]
            row += [f"{c[tag]['seconds_median']:.3g}" + ("" if c[tag]["reached_target"] else f" (gap {r['gap']:.2g})"),
                    f"{r['lp']['rows']}×{r['lp']['cols']}, {r['lp']['nonzeros']}"]
        nb, bb = c["new"]["seconds_median"], c.get("base", {}).get("seconds_median")
        ratio = f"{bb / nb:.3g}×" if nb and bb else "—"
        if nb and bb and not c["base"]["reached_target"]:
            ratio = "> " + ratio + " (baseline short of the target)"
        row.append(ratio)
        rows.append(row)
    privacy = f"ε = {SCALE_EPSILON:g}" + (f", δ = {args.delta:g}" if args.delta > 0 else "")
    print(f"\n### W1 sensitivity sweep: {SCALE_INPUT}, {privacy}, target gap {SCALE_GAP:g}\n")
    print(markdown_table(["m", "optmech s", "LP rows×cols, nnz", "baseline s", "baseline LP rows×cols, nnz",
                          "baseline/optmech"], rows))
    for tag, e in exponents.items():
        ex = e["exponent"]
        print(f"growth exponent ({tag}): " + (f"{ex:.2f}" if ex is not None else "—")
              + f" over m = {[m for m, _ in e['points']]}")
    path = write_json(args.json, {"benchmark": "wasserstein_scale",
                                  "settings": vars(args) | {"json": str(args.json), "input": SCALE_INPUT,
                                                            "epsilon": SCALE_EPSILON, "delta": args.delta,
                                                            "target_gap": SCALE_GAP,
                                                            "trees": {k: str(v) for k, v in trees.items()}},
                                  "cases": cases, "growth_exponents": exponents})
    print(f"\nwrote {path}")
    return 0


# -- child-process workers ---------------------------------------------------------------------


def _half_width(r) -> tuple[int, str]:
    """The window half-width optmech ended with, and where it was found."""
    trunc = r.truncation if isinstance(r.truncation, dict) else {}
    if trunc.get("half_width") is not None:
        return int(trunc["half_width"]), "r.truncation['half_width']"
    for h in reversed(r.history or []):
        if isinstance(h, dict) and h.get("half_width") is not None:
            return int(h["half_width"]), "r.history[-1]['half_width']"
    return FALLBACK_HALF_WIDTH, "fallback"


def optmech_case(spec: str, epsilon: float, m: int, target_gap: float, repeats: int) -> dict:
    """Solve with optmech ``repeats`` times (after an untimed warm-up that loads the solver)."""
    from optmech.inputs import parse_input_spec
    from optmech.drive import solve_wasserstein

    inp = parse_input_spec(spec)
    solve_wasserstein(inp, epsilon, 2, target_gap=1e-3)  # warm-up: imports highspy, loads the profile
    seconds, walls, r = [], [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        r = solve_wasserstein(inp, epsilon, m, target_gap=target_gap)
        walls.append(time.perf_counter() - t0)
        seconds.append(float(r.seconds))
    assert r is not None
    K, K_source = _half_width(r)
    return result_summary(r) | {
        "half_width": K,
        "half_width_source": K_source,
        "history_half_widths": [h.get("half_width") for h in r.history],
        "input_support": [int(inp.lo), int(inp.hi)],
        "seconds_all": seconds,
        "wall_all": walls,
        "seconds_median": statistics.median(seconds),
        "wall_median": statistics.median(walls),
    }


def naive_case(spec: str, epsilon: float, m: int, K: int, solver: str = "auto", tight: bool = False) -> dict:
    """Build and solve the naive dense cvxpy W1 LP on the window −K..K (imports warmed up).

    ``tight`` passes HiGHS feasibility tolerances of 1e-10 (its defaults are 1e-7), as optmech's
    default profile does; the default is the plain ``prob.solve(solver=cp.HIGHS)``.
    """
    import warnings

    import cvxpy as cp
    import numpy as np
    import scipy.sparse as sp

    from optmech.inputs import parse_input_spec

    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"cvxpy\..*")  # inf·0 in its bound propagation
    if solver == "auto":
        solver = "HIGHS" if "HIGHS" in cp.installed_solvers() else "CLARABEL"
    inp = parse_input_spec(spec)
    pX = np.asarray(inp.p, dtype=float)
    x_lo, x_hi = int(inp.lo), int(inp.hi)

    # warm-up: import cvxpy's solver interface and the canonicalisation code on a tiny LP
    q = cp.Variable(3)
    cp.Problem(cp.Minimize(cp.sum(cp.abs(q - 0.5))), [q >= 0, cp.sum(q) == 1, q[:-1] <= 2 * q[1:]]).solve(
        solver=getattr(cp, solver))

    t0 = time.perf_counter()
    N = 2 * K + 1
    k_out = np.arange(x_lo - K, x_hi + K + 1)  # every k where F_X and F_Y can differ
    dense_x = np.zeros(x_hi - x_lo + 1)
    dense_x[inp.k - x_lo] = pX
    FX = np.cumsum(dense_x)
    FX_out = np.where(k_out < x_lo, 0.0, np.where(k_out >= x_hi, 1.0, FX[np.clip(k_out - x_lo, 0, len(FX) - 1)]))
    # convolution matrix A[y, j] = p_X(k_out[y] − (j − K)), then the cumulative sum down each column
    A = np.zeros((len(k_out), N))
    for jj in range(N):
        A[jj: jj + len(dense_x), jj] = dense_x
    C = np.cumsum(A, axis=0)
    p = cp.Variable(N)
    e = math.exp(epsilon)
    cons = [p >= 0, cp.sum(p) == 1]
    for d in range(1, min(m, N - 1) + 1):
        cons += [p[:-d] <= e * p[d:], p[d:] <= e * p[:-d]]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.abs(FX_out - C @ p))), cons)
    t1 = time.perf_counter()
    opts = (dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10)
            if tight and solver == "HIGHS" else {})
    value = prob.solve(solver=getattr(cp, solver), **opts)
    t2 = time.perf_counter()

    stats = prob.solver_stats
    sm = prob.size_metrics
    # the canonical LP cvxpy hands to the solver (untimed; recomputed after the solve)
    canon: dict = {}
    try:
        data, _, _ = prob.get_problem_data(getattr(cp, solver))
        Acan = data.get("A")
        if Acan is not None:
            canon = {"rows": int(Acan.shape[0]), "cols": int(Acan.shape[1]),
                     "nonzeros": int(sp.csc_array(Acan).nnz)}
    except Exception as exc:  # noqa: BLE001 - a size is not worth failing the case for
        canon = {"error": f"{type(exc).__name__}: {exc}"}
    # the naive optimum's W1 recomputed by optmech's evaluator (untimed): checks the formulation
    recomputed = viol = realised_eps = None
    if p.value is not None:
        from optmech.problems.wasserstein import w1_of_pmf

        pv = np.maximum(np.asarray(p.value, dtype=float), 0.0)
        recomputed = float(w1_of_pmf(inp, -K, pv / pv.sum()))
        viol, ratio = 0.0, 0.0
        for d in range(1, min(m, N - 1) + 1):
            for a, b in ((pv[:-d], pv[d:]), (pv[d:], pv[:-d])):
                viol = max(viol, float(np.max(a - e * b)))
                with np.errstate(divide="ignore", invalid="ignore"):
                    rr = np.where(a > 0, a / b, 0.0)
                ratio = max(ratio, float(np.max(rr)))
        realised_eps = math.log(ratio) if ratio > 0 else None
    return {
        "status": prob.status,
        "solver": solver,
        "tight_tolerances": tight,
        "objective_recomputed_w1": recomputed,
        "max_ratio_violation": viol,
        "realised_epsilon_in_window": realised_eps,
        "objective": float(value) if value is not None else math.nan,
        "half_width": K,
        "window_points": N,
        "output_points": int(len(k_out)),
        "C_shape": [int(C.shape[0]), int(C.shape[1])],
        "C_nonzeros": int(np.count_nonzero(C)),
        "constraint_rows": int(sum(con.size for con in cons)),
        "size_metrics": {
            "num_scalar_variables": int(sm.num_scalar_variables),
            "num_scalar_eq_constr": int(sm.num_scalar_eq_constr),
            "num_scalar_leq_constr": int(sm.num_scalar_leq_constr),
            "num_scalar_data": int(sm.num_scalar_data),
        },
        "canonical": canon,
        "mass_at_window_edge": float(np.sum(np.abs(p.value[:m])) + np.sum(np.abs(p.value[-m:])))
        if p.value is not None else None,
        "build_s": t1 - t0,
        "solve_s": t2 - t1,
        "total_s": t2 - t0,
        "solver_time_s": float(stats.solve_time) if stats and stats.solve_time is not None else None,
    }


# -- driver ------------------------------------------------------------------------------------


def first_window(spec: str, epsilon: float, m: int, target_gap: float) -> int:
    """The window half-width the first version of optmech solved on (and the README's figures used)."""
    from optmech.families.wasserstein import initial_half_width
    from optmech.inputs import parse_input_spec

    inp = parse_input_spec(spec)
    return max(initial_half_width(inp, epsilon, m, target_gap), inp.hi - inp.lo + m)


def run_case(name: str, spec: str, epsilon: float, m: int, args: argparse.Namespace) -> dict:
    out: dict = {"case": name, "input": spec, "epsilon": epsilon, "m": m, "target_gap": args.target_gap}
    om = run_isolated(optmech_case, dict(spec=spec, epsilon=epsilon, m=m, target_gap=args.target_gap,
                                         repeats=args.repeats), args.hard_timeout)
    out["optmech"] = om
    if not om["ok"]:
        print(f"  [{name}] optmech failed: {short_error(om)}", flush=True)
        K = args.half_width or first_window(spec, epsilon, m, args.target_gap)
    else:
        print(f"  [{name}] optmech: [{om['lower_bound']:.12g}, {om['upper_bound']:.12g}] gap "
              f"{om['relative_gap']:.3g} in {om['seconds_median']:.4g} s, LP {om['lp'].get('rows')}×"
              f"{om['lp'].get('cols')} ({om['lp'].get('nonzeros')} nnz), K = {om['half_width']}", flush=True)
        K = args.half_width or (om["half_width"] if args.naive_window == "optmech"
                                else first_window(spec, epsilon, m, args.target_gap))
    nv = run_isolated(naive_case, dict(spec=spec, epsilon=epsilon, m=m, K=K, solver=args.naive_solver,
                                       tight=args.naive_tight),
                      args.hard_timeout)
    out["naive"] = nv
    if not nv["ok"]:
        print(f"  [{name}] naive failed: {short_error(nv)}", flush=True)
        return out
    if om["ok"]:
        err, side = rel_distance_to_bracket(nv["objective"], om["lower_bound"], om["upper_bound"])
        nv["rel_distance"], nv["side"] = err, side
        out["ratio_seconds"] = nv["total_s"] / om["seconds_median"] if om["seconds_median"] > 0 else math.inf
        out["ratio_wall"] = nv["total_s"] / om["wall_median"] if om["wall_median"] > 0 else math.inf
        print(f"  [{name}] naive ({nv['solver']}): {nv['objective']:.12g} ({err:.3g} {side}) in "
              f"{nv['total_s']:.4g} s (build {nv['build_s']:.3g} s); ratio {out['ratio_seconds']:.3g}x", flush=True)
    return out


def print_tables(cases: list[dict]) -> None:
    t_rows, a_rows = [], []
    for c in cases:
        om, nv = c.get("optmech", {}), c.get("naive", {})
        om_ok, nv_ok = om.get("ok", False), nv.get("ok", False)
        lp = om.get("lp", {}) if om_ok else {}
        can = nv.get("canonical", {}) if nv_ok else {}
        t_rows.append([
            c["case"], c["input"], fmt(c["epsilon"], "g"), c["m"],
            fmt(om.get("half_width")) if om_ok else "—", fmt(nv.get("half_width")) if nv_ok else "—",
            fmt(om.get("seconds_median")) if om_ok else "FAILED: " + short_error(om),
            f"{lp.get('rows')}×{lp.get('cols')}, {lp.get('nonzeros')}" if om_ok else "—",
            fmt(nv.get("total_s")) if nv_ok else "FAILED: " + short_error(nv),
            fmt(nv.get("build_s")) if nv_ok else "—",
            (f"{nv['C_shape'][0]}×{nv['C_shape'][1]}, {nv['C_nonzeros']}") if nv_ok else "—",
            (f"{can.get('rows')}×{can.get('cols')}, {can.get('nonzeros')}") if nv_ok and "rows" in can else "—",
            (fmt(c.get("ratio_seconds"), ".3g") + "×") if c.get("ratio_seconds") is not None else "—",
        ])
        a_rows.append([
            c["case"],
            f"[{om['lower_bound']:.12g}, {om['upper_bound']:.12g}]" if om_ok else "—",
            fmt(om.get("relative_gap"), ".3g") if om_ok else "—",
            fmt(om.get("certified")) if om_ok else "—",
            fmt(nv.get("objective"), ".12g") if nv_ok else "—",
            fmt(nv.get("rel_distance"), ".3g") if nv_ok else "—",
            nv.get("side", "—") if nv_ok else "—",
        ])
    print("\n### Timing and size\n")
    print(markdown_table(["case", "input", "ε", "m", "optmech K", "naive K", "optmech s", "optmech LP rows×cols, nnz",
                          "naive s", "naive build s", "naive dense C, nnz", "naive canonical LP rows×cols, nnz",
                          "naive/optmech"], t_rows))
    print("\n### Accuracy\n")
    print(markdown_table(["case", "optmech certified [lower, upper]", "optmech gap", "certified",
                          "naive objective", "naive rel. distance", "side"], a_rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--target-gap", type=float, default=1e-6, help="optmech's target relative gap")
    ap.add_argument("--repeats", type=int, default=3, help="optmech solves per case (median reported)")
    ap.add_argument("--cases", default=",".join(c[0] for c in CASES), help="comma-separated subset")
    ap.add_argument("--half-width", type=int, default=0,
                    help="naive window half-width K (0: the one --naive-window names)")
    ap.add_argument("--naive-window", choices=["first", "optmech"], default="first",
                    help="the naive LP's window when --half-width is 0: the first version's (the README's figures) "
                         "or the one optmech ended with")
    ap.add_argument("--naive-solver", choices=["auto", "HIGHS", "CLARABEL"], default="auto",
                    help="cvxpy solver for the naive LP (auto: HIGHS if available, else CLARABEL)")
    ap.add_argument("--naive-tight", action="store_true",
                    help="give the naive HiGHS solve feasibility tolerances 1e-10 instead of its defaults")
    ap.add_argument("--hard-timeout", type=float, default=600.0, help="kill a single case after this many s")
    ap.add_argument("--json", type=Path, default=None,
                    help="output (default results/wasserstein.json, with --scale results/wasserstein_scale.json)")
    ap.add_argument("--scale", action="store_true", help="run the sensitivity sweep against the baseline instead")
    ap.add_argument("--sweep", default=None, help="--scale: the sensitivities m (default "
                    f"{','.join(map(str, SCALE_SWEEP))}; with --delta {','.join(map(str, SCALE_SWEEP_APPROX))})")
    ap.add_argument("--delta", type=float, default=0.0,
                    help="--scale: (ε, δ)-DP with this δ (0: pure ε-DP); results in wasserstein_scale_approx.json")
    ap.add_argument("--baseline", default=None, help="--scale: checkout of the code to compare with "
                                                     f"(default {DEFAULT_BASELINE} when it exists)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="--scale: optmech's time limit per solve")
    ap.add_argument("--base-time-limit", type=float, default=240.0, help="--scale: the baseline's time limit per solve")
    args = ap.parse_args(argv)
    if args.scale:
        approx = args.delta > 0
        args.sweep = args.sweep or ",".join(map(str, SCALE_SWEEP_APPROX if approx else SCALE_SWEEP))
        args.json = args.json or RESULTS_DIR / ("wasserstein_scale_approx.json" if approx else "wasserstein_scale.json")
        if "--repeats" not in (argv if argv is not None else sys.argv):
            args.repeats = 1
        return run_scale(args)
    args.json = args.json or RESULTS_DIR / "wasserstein.json"

    wanted = {s.strip() for s in args.cases.split(",") if s.strip()}
    results = []
    for name, spec, epsilon, m in CASES:
        if name not in wanted:
            continue
        print(f"case {name}: input {spec}, ε = {epsilon:g}, m = {m}", flush=True)
        try:
            results.append(run_case(name, spec, epsilon, m, args))
        except Exception as exc:  # noqa: BLE001 - report and go on with the next case
            results.append({"case": name, "input": spec, "epsilon": epsilon, "m": m,
                            "optmech": {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}})
            print(f"  [{name}] driver error: {type(exc).__name__}: {exc}", flush=True)
    print_tables(results)
    path = write_json(args.json, {"benchmark": "wasserstein", "settings": vars(args) | {"json": str(args.json)},
                                  "cases": results})
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
