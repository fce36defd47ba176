"""(ε, δ) on ℤ at scale (issue 37): the issue's target cases under their time limits, in one run.

Each case is solved with its time limit by this checkout and, with ``--baseline PATH`` (another
checkout: ``git worktree add /tmp/optmech-base <commit>``), by that one in the same run; each solve
runs in its own process after an untimed warm-up at Δ = 2.  Recorded: the certified relative gap
reached, the seconds, the status, and beside them the best closed-form law's cost relative to the
certified upper bound (the discrete Laplace, or on ℕ the truncated geometric moved onto ℕ: what a
practitioner would deploy without optmech).  ``--naive`` adds the naive hockey-stick LP
(``bench_approx_scale.naive_case``: every shift, every point, scipy + HiGHS, not certified) for the
cases whose LP fits ``--naive-max-delta``.

Cases (cost, ε, δ, Δ, time limit, domain):

* |x| at ε = 0.1, δ = 0.01, Δ ∈ {64, 128, 256} under 10 s and 60 s (target: Δ = 256 to 1e-8 in 10 s);
* |x| and x² at ε = 1, δ = 1e-8, Δ = 1024 under 60 s (target 1e-6); δ = 1e-10 at Δ = 256;
* ``where(x >= 0, x, 2*abs(x))`` on ℕ (``--domain nonnegative``), ε = 0.1, δ = 0.01, Δ ∈ {16, 32, 256}
  under 60 s (target: Δ = 256 to 1e-6).

Run ``python benchmarks/bench_approx_issue37.py [--baseline /tmp/optmech-base]``; writes
``benchmarks/results/approx_issue37.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, fmt, markdown_table, result_summary, run_isolated, short_error, write_json  # noqa: E402

ASYM = "where(x >= 0, x, 2*abs(x))"
#: (name, cost, ε, δ, Δ, time limit, domain)
CASES = [
    ("abs e0.1", "abs", 0.1, 0.01, 64, 10.0, "integer"),
    ("abs e0.1", "abs", 0.1, 0.01, 128, 60.0, "integer"),
    ("abs e0.1", "abs", 0.1, 0.01, 256, 10.0, "integer"),
    ("abs e0.1", "abs", 0.1, 0.01, 256, 60.0, "integer"),
    ("abs e1 d1e-8", "abs", 1.0, 1e-8, 1024, 60.0, "integer"),
    ("square e1 d1e-8", "square", 1.0, 1e-8, 1024, 60.0, "integer"),
    ("abs e1 d1e-10", "abs", 1.0, 1e-10, 256, 60.0, "integer"),
    ("asym on N", ASYM, 0.1, 0.01, 16, 60.0, "nonnegative"),
    ("asym on N", ASYM, 0.1, 0.01, 32, 60.0, "nonnegative"),
    ("asym on N", ASYM, 0.1, 0.01, 256, 60.0, "nonnegative"),
]


def case(cost: str, epsilon: float, delta: float, sensitivity: int, time_limit: float, domain: str,
         tree: str | None = None) -> dict:
    """One solve in a child process; ``tree``: another checkout to import."""
    if tree:
        sys.path.insert(0, tree)
    import optmech
    from optmech.errors import SpecError
    from optmech.spec import Problem

    def problem(d: int):
        return Problem.from_params({"privacy": "approx", "epsilon": epsilon, "delta": delta, "sensitivity": d,
                                    "domain": domain, "cost": cost, "target_gap": 1e-8})

    try:
        optmech.solve(problem(2))
    except SpecError as exc:  # the baseline may refuse the domain or δ
        return {"seconds": math.nan, "relative_gap": math.nan, "status": "refused", "message": str(exc)}
    t0 = time.perf_counter()
    r = optmech.solve(problem(sensitivity), time_limit=time_limit)
    out = {**result_summary(r), "wall_s": time.perf_counter() - t0, "upper_bound": r.upper_bound,
           "lower_bound": r.lower_bound}
    closed = [ref for ref in r.references if getattr(ref, "kind", "") == "upper" and ref.valid
              and math.isfinite(ref.value) and ref.name in ("discrete_laplace", "truncated_geometric_nonnegative")]
    if closed:
        best = min(closed, key=lambda ref: ref.value)
        out["closed_form"] = {"name": best.name, "value": best.value, "over_upper": best.value / r.upper_bound - 1.0}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=None, help="another checkout of optmech, run on the same cases")
    ap.add_argument("--naive", action="store_true", help="also the naive hockey-stick LP (ε = 0.1, δ = 0.01 cases)")
    ap.add_argument("--naive-max-delta", type=int, default=64)
    ap.add_argument("--only", default=None, help="comma-separated substrings of case names (e.g. d1e-8)")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "approx_issue37.json")
    args = ap.parse_args(argv)
    rows, results = [], []
    for name, cost, eps, dlt, D, limit, domain in CASES:
        if args.only and not any(w in name for w in args.only.split(",")):
            continue
        kw = dict(cost=cost, epsilon=eps, delta=dlt, sensitivity=D, time_limit=limit, domain=domain)
        runs = {"now": run_isolated(case, kw, hard_timeout=limit + 240)}
        if args.baseline:
            runs["base"] = run_isolated(case, dict(kw, tree=args.baseline), hard_timeout=limit + 240)
        if args.naive and domain == "integer" and (eps, dlt) == (0.1, 0.01) and D <= args.naive_max_delta:
            from bench_approx_scale import naive_case

            runs["naive"] = run_isolated(naive_case, {"cost": cost, "sensitivity": D, "time_limit": limit},
                                         hard_timeout=limit + 240)
        results.append({"case": name, "cost": cost, "epsilon": eps, "delta": dlt, "sensitivity": D,
                        "time_limit": limit, "domain": domain, "runs": runs})

        def cell(res: dict | None) -> str:
            if res is None:
                return "—"
            if not res.get("ok", True) and "seconds" not in res:
                return short_error(res, 60)
            gap = res.get("relative_gap", math.nan)
            return f"{fmt(gap, '.2g')} in {fmt(res.get('seconds', math.nan), '.3g')} s ({res.get('status', '?')})"

        cf = runs["now"].get("closed_form")
        rows.append([name, D, f"{limit:g}", domain, cell(runs["now"]), cell(runs.get("base")),
                     (f"{fmt(runs['naive'].get('seconds'), '.3g')} s" if "naive" in runs else "—"),
                     (f"{cf['name']} +{100 * cf['over_upper']:.2f} %" if cf else "—")])
        print(markdown_table(["case", "Δ", "limit s", "domain", "gap (now)", "gap (baseline)", "naive LP",
                              "closed form vs upper"], rows[-1:]), flush=True)
    table = markdown_table(["case", "Δ", "limit s", "domain", "gap (now)", "gap (baseline)", "naive LP",
                            "closed form vs upper"], rows)
    print(table)
    write_json(args.json, {"cases": results, "table": table})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
