"""Sampling throughput: optmech's vectorised samplers against diffprivlib's Staircase.

diffprivlib (IBM, 0.6.x) is the only production library with a staircase sampler.  Its users
call ``Staircase(epsilon=ε, sensitivity=Δ).randomise(value)`` once per value, in a Python loop;
that is the baseline.  optmech draws ``Staircase(epsilon=ε, sensitivity=Δ, gamma=γ).sample(n, rng)``
in one vectorised call.  Both use γ = 1/(1 + e^{ε/2}) (diffprivlib's default, optmech's optimum
for |x| [Geng13, Thm 2.5]), so the laws are the same, which the run checks with KS tests: each
sample against the exact cdf, and the two samples against each other.

Also reported: samples/s in secure mode (``rng="secure"``: ChaCha20 keyed from OS entropy), the
discrete staircase, and the d-D ℓ1 staircase sampler (d = 2, 5).  Target: optmech ≥ 100× the
diffprivlib loop.

Through the harness (``benchmarks/harness.py``): one case per optmech sampler, each with the
diffprivlib loop as its :func:`peer` baseline (in its own process, in the same run).  The compared
figure is the samples/s each side measures inside its call (``metric=("rate", "higher")``: best
rate over repeats lasting at least ``min_seconds``), not the harness's seconds (≈ ``min_seconds``
on both sides by construction), so the table's ratio column is ``× diffprivlib`` (optmech's rate
over the loop's; above 1, optmech is faster).  The baseline's note repeats it and, for the
``staircase`` case, gives the target; it also KS-tests its sample against the exact cdf and against a
200 000-draw optmech sample of the same law (the two-sample test).  Needs ``pip install
".[crosscheck]"`` for the baseline (without it the baseline is recorded as failed)::

    python -m benchmarks.harness run benchmarks/bench_sampling.py --repeats 1 [--only staircase]
    python benchmarks/bench_sampling.py [same options]                   # the same

Parameters (``--set KEY=VALUE``): ``epsilon`` (1), ``sensitivity`` (1; the discrete staircase
uses max(Δ, 10)), ``n`` (1e6 samples per optmech call), ``n_baseline`` (50 000 ``randomise()``
calls per baseline repeat), ``min_seconds`` (2).  Results:
``benchmarks/results/bench_sampling.jsonl``.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import add_case, main, peer  # noqa: E402

#: (case name, kind, dim)
CASES = [("staircase", "staircase", 1), ("secure", "secure", 1), ("discrete staircase", "discrete_staircase", 1),
         ("staircase_nd d 2", "staircase_nd", 2), ("staircase_nd d 5", "staircase_nd", 5)]


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


def diffprivlib_case(epsilon: float, sensitivity: float, n_baseline: int, min_seconds: float, kind: str,
                     ours: dict) -> dict:
    """The baseline: ``randomise`` in a Python loop; its rate, KS tests (vs the cdf, vs optmech) and the ratio."""
    import numpy as np
    from scipy import stats

    from optmech.mechanisms import Staircase

    from diffprivlib.mechanisms import Staircase as DplStaircase

    mech = DplStaircase(epsilon=epsilon, sensitivity=sensitivity, random_state=1)
    mech.randomise(0.0)  # warm-up

    def loop(m):
        return np.array([mech.randomise(0.0) for _ in range(m)])

    rate, x = _rate(loop, n_baseline, min_seconds)
    law = Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=float(mech.gamma))
    ks_cdf = float(stats.kstest(x, law.cdf).pvalue)
    ks_two = float(stats.ks_2samp(x, law.sample(200_000, np.random.default_rng(2))).pvalue)
    ratio = ours["rate"] / rate
    note = f"diffprivlib {rate:.3g}/s; × diffprivlib {ratio:.0f}"
    if kind == "staircase":
        note += f" (target ≥ 100×: {'met' if ratio >= 100 else 'NOT met'})"
    note += f"; KS p vs cdf {ks_cdf:.3f}, two-sample vs optmech {ks_two:.3f}"
    return {"rate": rate, "gamma": float(mech.gamma), "ratio": ratio, "ks_pvalue_vs_cdf": ks_cdf,
            "ks_two_sample_pvalue": ks_two, "note": note}


def diffprivlib_warmup() -> None:
    """Untimed: import diffprivlib."""
    import diffprivlib.mechanisms  # noqa: F401


def optmech_case(kind: str, epsilon: float, sensitivity: float, n: int, min_seconds: float, dim: int = 1) -> dict:
    """optmech's vectorised sampler of ``kind``: its best rate and checks (KS vs cdf; E‖X‖₁ in d-D)."""
    import numpy as np
    from scipy import stats

    from optmech.mechanisms import DiscreteStaircase, Staircase

    gamma = 1.0 / (1.0 + math.exp(epsilon / 2.0))
    rng = np.random.default_rng(2)
    out: dict = {}
    if kind == "discrete_staircase":
        sensitivity = max(sensitivity, 10.0)
    if kind in ("staircase", "secure"):
        mech = Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=gamma)
        draw = (lambda m: mech.sample(m, rng)) if kind == "staircase" else (lambda m: mech.sample(m, "secure"))
        rate, x = _rate(draw, n, min_seconds)
        out["ks_pvalue_vs_cdf"] = float(stats.kstest(x[:200_000], mech.cdf).pvalue)
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
    note = f"{rate:.3g} samples/s"
    if "ks_pvalue_vs_cdf" in out:
        note += f"; KS p vs cdf {out['ks_pvalue_vs_cdf']:.3f}"
    if "mc_l1_rel_err" in out:
        note += f"; E‖X‖₁ MC rel. err {out['mc_l1_rel_err']:+.1e} (se {out['mc_l1_rel_se']:.1e})"
    return {"rate": rate, "sensitivity": sensitivity, **out, "note": note}


def warm_optmech() -> None:
    """Untimed: import the samplers and scipy.stats."""
    import scipy.stats  # noqa: F401

    import optmech.mechanisms  # noqa: F401
    import optmech.mechanisms.multidim  # noqa: F401


for _name, _kind, _dim in CASES:
    add_case(optmech_case, _name, warmup=warm_optmech, timeout=600.0, metric=("rate", "higher"),
             baseline=peer("diffprivlib", diffprivlib_case, label="diffprivlib Staircase.randomise loop",
                           warmup=diffprivlib_warmup),
             params={"kind": _kind, "epsilon": 1.0, "sensitivity": 1.0, "n": 10**6, "n_baseline": 50_000,
                     "min_seconds": 2.0, "dim": _dim})


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))


