"""Exact samplers: throughput of ``Mechanism.exact_sampler()`` against OpenDP's exact samplers.

optmech's exact samplers (:mod:`optmech.exact`) draw from integer and rational arithmetic on
ChaCha20 words, so the output law equals the pmf exactly.  Measured per case, each in its own
process: the one-off build (``m.exact_sampler()``, then a first small draw in case a table is built
lazily; the process's first ChaCha20 stream, which imports randomgen, is timed apart), then
samples/s of ``ex.sample(n, rng=seed)`` (best of ``--repeats`` after that warm-up),
``m.sample(n, rng=seed, exact=True)`` (the same sampler through the mechanism) and, as a reference,
the floating-point ``m.sample(n, rng=seed)``.  A d-D case counts one d-vector as one sample.

The baseline, in the same run: OpenDP's exact vectorised samplers (``make_laplace`` /
``make_gaussian`` on ``vector_domain(atom_domain(T=int))``), applied to a list of n zeros; their
time includes the conversion of the Python list in and out, which is part of calling them (also
measured alone, through ``make_identity``, and taken out in a second ratio, in brackets).  The
discrete Laplace of scale s (p(k) ∝ e^{-|k|/s}) is optmech's ``DiscreteLaplace(epsilon=1,
sensitivity=s)``; OpenDP's discrete Gaussian of scale σ is ``DiscreteGaussian(sigma=σ)``.  OpenDP's
float Laplace (``atom_domain(T=float)``) is a reference row.  Without opendp installed (CI) those
rows are skipped with a note.

Cases and targets: exact discrete Laplace, scale 1, 2, 20, ≥ 10× OpenDP; exact discrete Gaussian,
σ = 2 (ratio reported, no target); exact discrete staircase (|x|, ε = 0.5, Δ = 20) ≥ 1e6 samples/s;
the solved asymmetric optimum (``where(x > 0, x, 2*abs(x))``, ε = 0.5, Δ = 20) ≥ 1e6 samples/s, solve
time and certified bracket recorded; the ℓ1 lattice staircase on ℤ³ (ε = 1, Δ = 4) ≥ 2e5 vectors/s.
Each draw is also checked against the law's exact moments (mean z-score, relative error of the
variance; E‖X‖₁ in d-D).

Through the harness (``benchmarks/harness.py``), one case per optmech sampler, OpenDP as a
:func:`peer` baseline of the cases that have one (run in its own process, after optmech's, in
the same run).  The compared figure is the samples/s each side measures inside its call
(``metric=("rate", "higher")``: ``rate``, best of ``repeats`` draws of ``n``, after the warm-ups
above), not the harness's seconds (the whole case: build, warm-ups, the exact, via-mechanism and
float draws), so the table's ratio column is ``× OpenDP`` (optmech's rate over OpenDP's; above 1,
optmech is faster).  The baseline's note repeats it (in brackets without the list conversion,
measured by the baseline through ``make_identity`` in its process) and gives the target; optmech's note gives the
rate target.  The discrete Gaussian's baseline also measures OpenDP's float Laplace (scale 2, the
reference row).  Without opendp the baseline is recorded as failed (``ModuleNotFoundError``)::

    python -m benchmarks.harness run benchmarks/bench_exact.py --repeats 1 [--only dstair]
    python -m benchmarks.harness run benchmarks/bench_exact.py --repeats 1 --set n=200000 --set n_baseline=50000  # the former --quick
    python benchmarks/bench_exact.py [same options]                    # the same

Parameters (``--set KEY=VALUE``): ``n`` (1e6 samples per optmech call), ``repeats`` (5 optmech
calls per sampler), ``n_baseline`` (2e5 per OpenDP call), ``repeats_baseline`` (3).  Results:
``benchmarks/results/bench_exact.jsonl``.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ASYMMETRIC_COST  # noqa: E402
from harness import add_case, main, peer  # noqa: E402

#: name -> (label, opendp baseline name or None, target kind, target value)
CASES = {
    "dlap_s1": ("exact discrete Laplace, scale 1 (ε = 1, Δ = 1)", "opendp_dlap_s1", "ratio", 10.0),
    "dlap_s2": ("exact discrete Laplace, scale 2 (ε = 1, Δ = 2)", "opendp_dlap_s2", "ratio", 10.0),
    "dlap_s20": ("exact discrete Laplace, scale 20 (ε = 1, Δ = 20)", "opendp_dlap_s20", "ratio", 10.0),
    "dgauss_s2": ("exact discrete Gaussian, σ = 2", "opendp_dgauss_s2", None, None),
    "dstair": ("exact discrete staircase, |x|, ε = 0.5, Δ = 20", None, "rate", 1e6),
    "solved_asym": (f"exact solved optimum, {ASYMMETRIC_COST}, ε = 0.5, Δ = 20", None, "rate", 1e6),
    "dstair_nd3": ("exact ℓ1 lattice staircase, d = 3, ε = 1, Δ = 4", None, "rate", 2e5),
    "tdlap_s10": ("exact truncated discrete Laplace, (ε, δ) = (1, 1e-6), Δ = 10 (T = 137); OpenDP has no truncated "
                  "law: its untruncated discrete Laplace of the same scale is the baseline", "opendp_dlap_s10", "rate",
                  1e6),
}

#: name -> (label, builder, scale)
BASELINES = {
    "opendp_dlap_s1": ("OpenDP make_laplace, int, scale 1", "dlap", 1.0),
    "opendp_dlap_s2": ("OpenDP make_laplace, int, scale 2", "dlap", 2.0),
    "opendp_dlap_s10": ("OpenDP make_laplace, int, scale 10", "dlap", 10.0),
    "opendp_dlap_s20": ("OpenDP make_laplace, int, scale 20", "dlap", 20.0),
    "opendp_dgauss_s2": ("OpenDP make_gaussian, int, scale 2", "dgauss", 2.0),
    "opendp_flap_s2": ("OpenDP make_laplace, float, scale 2 (reference)", "flap", 2.0),
    "opendp_roundtrip": ("OpenDP make_identity, int (the list round trip alone)", "identity", 0.0),
}


def _best_rate(fn, n: int, repeats: int) -> tuple[float, list[float], object]:
    """Best samples/s of ``fn(n, i)`` over ``repeats`` calls (i = 0..repeats-1), all rates, last output."""
    rates, out = [], None
    for i in range(repeats):
        t0 = time.perf_counter()
        out = fn(n, i)
        rates.append(n / (time.perf_counter() - t0))
    return max(rates), rates, out


def _make_mechanism(case: str) -> tuple[object, dict]:
    """The mechanism of ``case`` and what building it recorded (the solve for the solved case)."""
    import optmech
    from optmech.mechanisms import DiscreteLaplace, DiscreteStaircase
    from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND
    from optmech.mechanisms.gaussian import DiscreteGaussian

    info: dict = {}
    if case.startswith("dlap_s"):
        s = int(case[len("dlap_s"):])
        return DiscreteLaplace(epsilon=1, sensitivity=s), {"scale": s}
    if case == "tdlap_s10":
        from optmech.mechanisms import TruncatedDiscreteLaplace

        m = TruncatedDiscreteLaplace(epsilon=1.0, delta=1e-6, sensitivity=10)
        return m, {"half_width": m.half_width, "delta": m.delta}
    if case == "dgauss_s2":
        m = DiscreteGaussian(sigma=2.0, epsilon=1.0)
        return m, {"sigma": 2.0, "epsilon": 1.0, "delta": float(m.delta)}
    if case == "dstair":
        m = DiscreteStaircase.optimal("abs", epsilon=0.5, sensitivity=20)
        return m, {"r": int(m.r)}
    if case == "dstair_nd3":
        m = DiscreteStaircaseND.optimal("l1", epsilon=1, sensitivity=4, dim=3)
        return m, {"r": int(m.r)}
    if case == "solved_asym":
        problem = optmech.Problem(privacy=optmech.PureDP(0.5), sensitivity=20, cost=ASYMMETRIC_COST,
                                  domain=optmech.IntegerLattice())
        t0 = time.perf_counter()
        r = optmech.solve(problem)
        info = {"cost": ASYMMETRIC_COST, "solve_wall_s": time.perf_counter() - t0, "solve_seconds": float(r.seconds),
                "lower_bound": float(r.lower_bound), "upper_bound": float(r.upper_bound),
                "relative_gap": float(r.relative_gap), "certified": bool(r.certified), "status": r.status,
                "mechanism_type": type(r.mechanism).__name__}
        return r.mechanism, info
    raise ValueError(case)


def _moments_check(m, x) -> dict:
    """The draws against the law's exact moments: mean z-score and variance relative error (1-D),
    E‖X‖₁ relative error and its standard error (d-D)."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    if x.ndim == 2:
        l1 = np.abs(x).sum(axis=1)
        ev = float(m.expected_cost("l1"))
        return {"l1_rel_err": float(l1.mean() / ev - 1.0), "l1_rel_se": float(l1.std() / math.sqrt(l1.size) / ev)}
    mean, var = float(m.mean()), float(m.var())
    return {"mean_z": float((x.mean() - mean) / math.sqrt(var / x.size)), "var_rel_err": float(x.var() / var - 1.0),
            "exact_mean": mean, "exact_var": var}


def optmech_case(case: str, n: int, repeats: int, target_kind: str | None, target: float | None) -> dict:
    """Build ``case``'s exact sampler and measure its rate, through the mechanism and the float sampler's."""
    import numpy as np

    import optmech.exact  # noqa: F401  (imports out of the build time)
    import optmech.exact.inversion  # noqa: F401
    import optmech.exact.laws  # noqa: F401
    from optmech.exact.bits import bit_source

    t0 = time.perf_counter()
    bit_source(0).words(1)  # the first ChaCha20 stream imports randomgen (≈10 ms): once a process, not per sampler
    stream_init_s = time.perf_counter() - t0

    import optmech
    import optmech.mechanisms  # noqa: F401  (imports out of the construction time)
    import optmech.mechanisms.discrete_staircase_nd  # noqa: F401
    import optmech.mechanisms.gaussian  # noqa: F401

    if case == "solved_asym":  # warm-up solve: the solver's imports out of the solve time
        optmech.solve(optmech.Problem(privacy=optmech.PureDP(1.0), sensitivity=1, cost=ASYMMETRIC_COST,
                                      domain=optmech.IntegerLattice()))
    t0 = time.perf_counter()
    m, info = _make_mechanism(case)
    construct_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    ex = m.exact_sampler()
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ex.sample(16, rng=1)  # warm-up: anything built on the first draw
    first_draw_s = time.perf_counter() - t0
    cached = m.exact_sampler() is ex
    same = bool(np.array_equal(ex.sample(1000, rng=5), m.sample(1000, rng=5, exact=True)))

    rate, rates, x = _best_rate(lambda k, i: ex.sample(k, rng=1000 + i), n, repeats)
    rate_via_mech, _, _ = _best_rate(lambda k, i: m.sample(k, rng=2000 + i, exact=True), n, repeats)
    m.sample(16, rng=0)  # warm-up of the float sampler
    rate_float, rates_float, _ = _best_rate(lambda k, i: m.sample(k, rng=3000 + i), n, repeats)
    note = f"{rate:.3g} samples/s (float {rate_float:.3g}/s), build {build_s * 1e3:.2f} + {first_draw_s * 1e3:.2f} ms"
    if target_kind == "rate":
        note += f"; ≥ {target:.0e}/s: {'met' if rate >= target else 'NOT met'}"
    ok = cached is True and same
    note += "" if ok else "; exact_sampler not cached or exact=True draws differ"
    extra = {}
    if case == "solved_asym":
        extra = {"lower": info["lower_bound"], "upper": info["upper_bound"], "gap": info["relative_gap"],
                 "certified": info["certified"]}
    return {"note": note, **extra, "mechanism": repr(m), "dim": int(getattr(m, "dim", 1)), "n": n,
            "repeats": repeats,
            "stream_init_s": stream_init_s, "construct_s": construct_s, "build_s": build_s,
            "first_draw_s": first_draw_s,
            "build_total_s": build_s + first_draw_s, "cached": bool(cached), "sample_exact_same_draws": same,
            "rate": rate, "rates": rates, "rate_via_sample_exact": rate_via_mech,
            "rate_float": rate_float, "rates_float": rates_float,
            "dtype": str(x.dtype), "shape": list(x.shape), "law": ex.law,
            "exact_epsilon": float(ex.privacy().epsilon), **info, **_moments_check(m, x)}


def opendp_case(kind: str, scale: float, n: int, repeats: int) -> dict:
    """One OpenDP measurement (``BASELINES``' kinds): build, warm-up, best rate over ``repeats`` calls on n zeros."""
    import importlib.metadata as im

    import opendp.prelude as dp

    dp.enable_features("contrib")
    t0 = time.perf_counter()
    if kind == "dlap":
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=scale)
        zero = 0
    elif kind == "dgauss":
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=scale)
        zero = 0
    elif kind == "identity":  # the Python list in and out, no noise: what the conversion costs
        dp.enable_features("honest-but-curious")
        meas = dp.t.make_identity(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
        zero = 0
    elif kind == "flap":
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float),
                                 scale=scale)
        zero = 0.0
    else:
        raise ValueError(kind)
    build_s = time.perf_counter() - t0
    data = [zero] * n
    meas([zero] * 16)  # warm-up
    rate, rates, x = _best_rate(lambda k, i: meas(data), n, repeats)
    out = {"opendp": im.version("opendp"), "n": n, "repeats": repeats, "build_s": build_s, "rate": rate,
           "rates": rates, "map_at_1": float(meas.map(1))}
    if kind in ("dlap", "dgauss"):  # the same law as the optmech case: its exact moments
        from optmech.mechanisms import DiscreteLaplace
        from optmech.mechanisms.gaussian import DiscreteGaussian

        m = (DiscreteLaplace(epsilon=1, sensitivity=int(scale)) if kind == "dlap"
             else DiscreteGaussian(sigma=scale, epsilon=1.0))
        out.update(_moments_check(m, x))
    return out


def opendp_baseline(case: str, n_baseline: int, repeats_baseline: int, target_kind: str | None,
                    target: float | None, ours: dict) -> dict:
    """The peer side: OpenDP's sampler of the same law, the list round trip alone (and, for the discrete
    Gaussian, the float Laplace reference), in this process; the ratio to optmech's rate."""
    base_name = CASES[case][1]
    _, kind, scale = BASELINES[base_name]
    out = {"label": BASELINES[base_name][0], **opendp_case(kind, scale, n_baseline, repeats_baseline)}
    trip = opendp_case("identity", 0.0, n_baseline, repeats_baseline)
    out["roundtrip_rate"] = trip["rate"]
    if case == "dgauss_s2":
        out["float_laplace_s2"] = opendp_case("flap", 2.0, n_baseline, repeats_baseline)
    ratio = ours["rate"] / out["rate"]
    out["ratio"] = ratio
    text = f"× OpenDP {ratio:.0f}"
    if trip["rate"] > out["rate"]:
        # OpenDP's rate with the list conversion taken out (time per sample minus the round trip's)
        out["rate_excluding_list_conversion"] = 1.0 / (1.0 / out["rate"] - 1.0 / trip["rate"])
        out["ratio_excluding_list_conversion"] = ours["rate"] / out["rate_excluding_list_conversion"]
        text += f" ({out['ratio_excluding_list_conversion']:.0f} w/o list conversion)"
    if target_kind == "ratio":
        text += f"; ≥ {target:g}×: {'met' if ratio >= target else 'NOT met'}"
    out["note"] = f"OpenDP {out['rate']:.3g}/s; {text}"
    return out


def opendp_warmup() -> None:
    """Untimed: import OpenDP (its shared library) before the timed call."""
    import opendp.prelude  # noqa: F401


for _case, (_label, _base, _tkind, _target) in CASES.items():
    add_case(optmech_case, _case, timeout=300.0, metric=("rate", "higher"),
             baseline=peer("opendp", opendp_baseline, label="OpenDP exact sampler", warmup=opendp_warmup)
             if _base else None,
             params={"case": _case, "n": 10**6, "repeats": 5, "n_baseline": 200_000, "repeats_baseline": 3,
                     "target_kind": _tkind, "target": _target})


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
