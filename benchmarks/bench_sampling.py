"""Sampling throughput: optmech's vectorised samplers against diffprivlib's Staircase.

diffprivlib (IBM, 0.6.x) is the only production library with a staircase sampler.  Its users
call ``Staircase(epsilon=ε, sensitivity=Δ).randomise(value)`` once per value, in a Python loop;
that is the baseline.  optmech draws ``Staircase(epsilon=ε, sensitivity=Δ, gamma=γ).sample(n, rng)``
in one vectorised call.  Both use γ = 1/(1 + e^{ε/2}) (diffprivlib's default, optmech's optimum
for |x| [Geng13, Thm 2.5]), so the laws are the same, which the run checks with KS tests: each
sample against the exact cdf, and the two samples against each other.

Also reported: samples/s in secure mode (``rng="secure"``: ChaCha20 keyed from OS entropy), the
discrete staircase, and the d-D ℓ1 staircase sampler (d = 2, 5).  Target: optmech ≥ 100× the
diffprivlib loop.  Run ``python benchmarks/bench_sampling.py``; writes
``benchmarks/results/sampling.json``.  Needs ``pip install ".[crosscheck]"`` for the baseline
(the optmech rows run without it).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, fmt, markdown_table, run_isolated, short_error, write_json  # noqa: E402


def _rate(fn, n: int, min_seconds: float) -> tuple[float, object]:
    """Best samples/s over repeats of fn(n) lasting at least ``min_seconds`` in total."""
    best, out, spent = 0.0, None, 0.0
    while spent < min_seconds:
        t0 = time.perf_counter()
        out = fn(n)
        dt = time.perf_counter() - t0
        spent += dt
        best = max(best, n / dt)
    return best, out


def diffprivlib_case(epsilon: float, sensitivity: float, n: int, min_seconds: float) -> dict:
    import numpy as np

    from diffprivlib.mechanisms import Staircase as DplStaircase

    mech = DplStaircase(epsilon=epsilon, sensitivity=sensitivity, random_state=1)
    mech.randomise(0.0)  # warm-up

    def loop(m):
        return np.array([mech.randomise(0.0) for _ in range(m)])

    rate, x = _rate(loop, n, min_seconds)
    return {"rate": rate, "gamma": float(mech.gamma), "samples": x.tolist()}


def optmech_case(kind: str, epsilon: float, sensitivity: float, n: int, min_seconds: float, dim: int = 1) -> dict:
    import numpy as np
    from scipy import stats

    from optmech.mechanisms import DiscreteStaircase, Staircase

    gamma = 1.0 / (1.0 + math.exp(epsilon / 2.0))
    rng = np.random.default_rng(2)
    out: dict = {}
    if kind in ("staircase", "secure"):
        mech = Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=gamma)
        draw = (lambda m: mech.sample(m, rng)) if kind == "staircase" else (lambda m: mech.sample(m, "secure"))
        rate, x = _rate(draw, n, min_seconds)
        out["ks_pvalue_vs_cdf"] = float(stats.kstest(x[:200_000], mech.cdf).pvalue)
        out["samples"] = x[:200_000].tolist()
    elif kind == "discrete_staircase":
        mech = DiscreteStaircase(epsilon=epsilon, sensitivity=int(sensitivity), r=max(1, int(sensitivity) // 2))
        rate, x = _rate(lambda m: mech.sample(m, rng), n, min_seconds)
    elif kind == "staircase_nd":
        from optmech.mechanisms.multidim import StaircaseND, optimal_gamma_nd

        mech = StaircaseND(epsilon=epsilon, sensitivity=sensitivity, dim=dim,
                           gamma=optimal_gamma_nd("l1", epsilon, dim, sensitivity))
        rate, x = _rate(lambda m: mech.sample(m, rng), n, min_seconds)
        l1 = np.abs(x).sum(axis=1)
        out["mc_l1_rel_err"] = float(l1.mean() / mech.expected_cost("l1") - 1.0)
        out["mc_l1_rel_se"] = float(l1.std() / math.sqrt(l1.size) / mech.expected_cost("l1"))
    else:
        raise ValueError(kind)
    return {"rate": rate, **out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--sensitivity", type=float, default=1.0)
    ap.add_argument("--n", type=int, default=10**6, help="samples per optmech call")
    ap.add_argument("--n-baseline", type=int, default=50_000, help="randomise() calls per baseline repeat")
    ap.add_argument("--min-seconds", type=float, default=2.0, help="time spent per case (best rate reported)")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "sampling.json")
    args = ap.parse_args(argv)
    from scipy import stats

    eps, sens = args.epsilon, args.sensitivity
    base = run_isolated(diffprivlib_case, dict(epsilon=eps, sensitivity=sens, n=args.n_baseline,
                                               min_seconds=args.min_seconds), 600)
    cases = [("staircase", 1), ("secure", 1), ("discrete_staircase", 1), ("staircase_nd", 2), ("staircase_nd", 5)]
    results = {}
    for kind, dim in cases:
        sens_k = max(sens, 10.0) if kind == "discrete_staircase" else sens
        results[f"{kind}-{dim}"] = run_isolated(optmech_case, dict(kind=kind, epsilon=eps, sensitivity=sens_k, n=args.n,
                                                                   min_seconds=args.min_seconds, dim=dim), 600)
    rows = []
    b_rate = base.get("rate") if base.get("ok") else None
    ks_two = None
    if base.get("ok") and results["staircase-1"].get("ok"):
        ks_two = float(stats.ks_2samp(base["samples"], results["staircase-1"]["samples"]).pvalue)
    ks_base = None
    if base.get("ok"):
        from optmech.mechanisms import Staircase

        ks_base = float(stats.kstest(base["samples"], Staircase(epsilon=eps, sensitivity=sens, gamma=base["gamma"]).cdf).pvalue)
        rows.append(["diffprivlib Staircase.randomise loop (baseline)", 1, fmt(b_rate, ".3g"), "1", fmt(ks_base, ".3f"), "—"])
    else:
        rows.append(["diffprivlib Staircase.randomise loop (baseline)", 1, short_error(base), "—", "—", "—"])
    labels = {"staircase": "optmech Staircase.sample", "secure": "optmech Staircase.sample, secure",
              "discrete_staircase": f"optmech DiscreteStaircase.sample (Δ={max(sens, 10.0):g})",
              "staircase_nd": "optmech StaircaseND.sample"}
    for (kind, dim) in cases:
        r = results[f"{kind}-{dim}"]
        if not r.get("ok"):
            rows.append([labels[kind], dim, short_error(r), "—", "—", "—"])
            continue
        ratio = r["rate"] / b_rate if b_rate else None
        extra = ""
        if "mc_l1_rel_err" in r:
            extra = f"E‖X‖₁ MC rel. err {r['mc_l1_rel_err']:+.1e} (se {r['mc_l1_rel_se']:.1e})"
        ks = r.get("ks_pvalue_vs_cdf")
        rows.append([labels[kind], dim, fmt(r["rate"], ".3g"), fmt(ratio, ".0f") if ratio else "—",
                     fmt(ks, ".3f") if ks is not None else "—", extra or "—"])
    print(f"ε = {eps:g}, Δ = {sens:g}, γ = 1/(1+e^(ε/2)); samples/s are the best of repeats over ≥ {args.min_seconds:g} s")
    print(markdown_table(["sampler", "d", "samples/s", "× baseline", "KS p vs cdf", "check"], rows))
    if ks_two is not None:
        print(f"\ntwo-sample KS p-value, diffprivlib vs optmech (same ε, Δ, γ): {ks_two:.3f}")
    for r in (base, *results.values()):
        r.pop("samples", None)
    write_json(args.json, {"epsilon": eps, "sensitivity": sens, "baseline": base, "cases": results,
                           "ks_two_sample_pvalue": ks_two, "ks_baseline_vs_cdf": ks_base})
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
