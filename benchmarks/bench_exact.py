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

Run ``python benchmarks/bench_exact.py`` (≈1 min; ``--quick`` ≈20 s: smaller n); writes
``benchmarks/results/exact.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ASYMMETRIC_COST, RESULTS_DIR, fmt, markdown_table, run_isolated, short_error, write_json  # noqa: E402

#: name -> (label, opendp baseline name or None, target kind, target value)
CASES = {
    "dlap_s1": ("exact discrete Laplace, scale 1 (ε = 1, Δ = 1)", "opendp_dlap_s1", "ratio", 10.0),
    "dlap_s2": ("exact discrete Laplace, scale 2 (ε = 1, Δ = 2)", "opendp_dlap_s2", "ratio", 10.0),
    "dlap_s20": ("exact discrete Laplace, scale 20 (ε = 1, Δ = 20)", "opendp_dlap_s20", "ratio", 10.0),
    "dgauss_s2": ("exact discrete Gaussian, σ = 2", "opendp_dgauss_s2", None, None),
    "dstair": ("exact discrete staircase, |x|, ε = 0.5, Δ = 20", None, "rate", 1e6),
    "solved_asym": (f"exact solved optimum, {ASYMMETRIC_COST}, ε = 0.5, Δ = 20", None, "rate", 1e6),
    "dstair_nd3": ("exact ℓ1 lattice staircase, d = 3, ε = 1, Δ = 4", None, "rate", 2e5),
}

#: name -> (label, builder, scale)
BASELINES = {
    "opendp_dlap_s1": ("OpenDP make_laplace, int, scale 1", "dlap", 1.0),
    "opendp_dlap_s2": ("OpenDP make_laplace, int, scale 2", "dlap", 2.0),
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


def optmech_case(case: str, n: int, repeats: int) -> dict:
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
    return {"mechanism": repr(m), "dim": int(getattr(m, "dim", 1)), "n": n, "repeats": repeats,
            "stream_init_s": stream_init_s, "construct_s": construct_s, "build_s": build_s,
            "first_draw_s": first_draw_s,
            "build_total_s": build_s + first_draw_s, "cached": bool(cached), "sample_exact_same_draws": same,
            "rate": rate, "rates": rates, "rate_via_sample_exact": rate_via_mech,
            "rate_float": rate_float, "rates_float": rates_float,
            "dtype": str(x.dtype), "shape": list(x.shape), "law": ex.law,
            "exact_epsilon": float(ex.privacy().epsilon), **info, **_moments_check(m, x)}


def opendp_case(kind: str, scale: float, n: int, repeats: int) -> dict:
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


def _check_text(r: dict) -> str:
    if "mean_z" in r:
        return f"mean z {r['mean_z']:+.1f}, var {r['var_rel_err']:+.1e}"
    if "l1_rel_err" in r:
        return f"E‖X‖₁ {r['l1_rel_err']:+.1e} (se {r['l1_rel_se']:.0e})"
    return "—"


def _ratio_text(rec: dict) -> str:
    if not rec["ratio"]:
        return "—"
    if rec.get("ratio_excluding_list_conversion"):
        return f"{rec['ratio']:.0f} ({rec['ratio_excluding_list_conversion']:.0f})"
    return f"{rec['ratio']:.0f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n = 2e5 for optmech, 5e4 for OpenDP")
    ap.add_argument("--n", type=int, default=None, help="samples per optmech call (default 1e6; 2e5 with --quick)")
    ap.add_argument("--n-baseline", type=int, default=None,
                    help="samples per OpenDP call (default 2e5; 5e4 with --quick)")
    ap.add_argument("--repeats", type=int, default=5, help="optmech calls per sampler (best rate reported)")
    ap.add_argument("--repeats-baseline", type=int, default=3, help="OpenDP calls per case (best rate reported)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of: " + ",".join(CASES))
    ap.add_argument("--skip-opendp", action="store_true", help="no OpenDP rows")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "exact.json")
    args = ap.parse_args(argv)
    n = args.n or (200_000 if args.quick else 10**6)
    n_base = args.n_baseline or (50_000 if args.quick else 200_000)
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; choose from {list(CASES)}")

    have_opendp = importlib.util.find_spec("opendp") is not None and not args.skip_opendp
    opendp_note = None if have_opendp else ("skipped: --skip-opendp" if args.skip_opendp
                                             else "skipped: opendp is not importable (pip install opendp)")
    wanted = [CASES[c][1] for c in cases if CASES[c][1]]
    wanted += (["opendp_flap_s2"] if "dgauss_s2" in cases else []) + (["opendp_roundtrip"] if wanted else [])
    baselines: dict[str, dict] = {}
    for name in wanted:
        label, kind, scale = BASELINES[name]
        if not have_opendp:
            baselines[name] = {"ok": False, "skipped": True, "note": opendp_note, "label": label}
            continue
        print(f"running {name} …", flush=True)
        baselines[name] = {"label": label, "kind": kind, "scale": scale,
                           **run_isolated(opendp_case, dict(kind=kind, scale=scale, n=n_base,
                                                            repeats=args.repeats_baseline), 300)}

    results: dict[str, dict] = {}
    for case in cases:
        label, base_name, target_kind, target = CASES[case]
        print(f"running {case} …", flush=True)
        r = run_isolated(optmech_case, dict(case=case, n=n, repeats=args.repeats), 300)
        rec = {"name": case, "label": label, "baseline_name": base_name, "target_kind": target_kind,
               "target": target, **r}
        b = baselines.get(base_name) if base_name else None
        rec["baseline_rate"] = b["rate"] if b and b.get("ok") else None
        rec["ratio"] = r["rate"] / rec["baseline_rate"] if r.get("ok") and rec["baseline_rate"] else None
        trip = baselines.get("opendp_roundtrip", {})
        if rec["ratio"] and trip.get("ok") and trip["rate"] > rec["baseline_rate"]:
            # OpenDP's rate with the list conversion taken out (time per sample minus the round trip's)
            rec["baseline_rate_excluding_list_conversion"] = 1.0 / (1.0 / rec["baseline_rate"] - 1.0 / trip["rate"])
            rec["ratio_excluding_list_conversion"] = r["rate"] / rec["baseline_rate_excluding_list_conversion"]
        if target_kind == "ratio":
            rec["met"] = None if rec["ratio"] is None else bool(rec["ratio"] >= target)
        elif target_kind == "rate":
            rec["met"] = bool(r.get("ok") and r["rate"] >= target)
        else:
            rec["met"] = None
        results[case] = rec

    rows = []
    for case, rec in results.items():
        if not rec.get("ok"):
            rows.append([rec["label"], short_error(rec), "—", "—", "—", "—", "—", "—", "—"])
            continue
        if rec["target_kind"] == "ratio":
            tgt = f"≥ {rec['target']:g}× OpenDP: " + {True: "met", False: "NO", None: "— (no baseline)"}[rec["met"]]
        elif rec["target_kind"] == "rate":
            tgt = f"≥ {rec['target']:.0e}/s: " + ("met" if rec["met"] else "NO")
        else:
            tgt = "—"
        rows.append([rec["label"], fmt(rec["rate"], ".3g"), fmt(rec["rate_float"], ".3g"),
                     f"{rec['build_s'] * 1e3:.2f} + {rec['first_draw_s'] * 1e3:.2f}",
                     fmt(rec["baseline_rate"], ".3g"),
                     _ratio_text(rec),
                     tgt,
                     _check_text(rec), "yes" if rec["cached"] and rec["sample_exact_same_draws"] else "NO"])
    print(f"\noptmech n = {n:,} per call, best of {args.repeats}; OpenDP n = {n_base:,} per call, best of "
          f"{args.repeats_baseline}; samples/s (d-D: vectors/s)\n")
    print(markdown_table(["exact sampler", "samples/s", "float sampler /s", "build ms (+ first draw)",
                          "OpenDP /s", "× OpenDP (w/o list)", "target", "moments check", "cached, exact=True same"], rows))

    rows = []
    for name, b in baselines.items():
        if b.get("skipped"):
            rows.append([b["label"], b["note"], "—", "—"])
        elif not b.get("ok"):
            rows.append([b["label"], short_error(b), "—", "—"])
        else:
            rows.append([b["label"], fmt(b["rate"], ".3g"), f"{b['build_s'] * 1e3:.2f}", _check_text(b)])
    if rows:
        print("\nOpenDP, same run (list of n zeros in, list out)\n")
        print(markdown_table(["OpenDP measurement", "samples/s", "build ms", "moments check"], rows))
    if "solved_asym" in results and results["solved_asym"].get("ok"):
        s = results["solved_asym"]
        print(f"\nsolved optimum: solve {s['solve_wall_s']:.3f} s wall (r.seconds {s['solve_seconds']:.3f}), "
              f"certified {s['certified']}, bracket [{s['lower_bound']:.11f}, {s['upper_bound']:.11f}], "
              f"gap {s['relative_gap']:.1e}; exact-law ε = {s['exact_epsilon']:.12g}")
    met = [r["met"] for r in results.values() if r.get("met") is not None]
    print(f"\ntargets met: {sum(met)}/{len(met)}")
    write_json(args.json, {"quick": args.quick, "n": n, "n_baseline": n_base, "repeats": args.repeats,
                           "repeats_baseline": args.repeats_baseline, "opendp_note": opendp_note,
                           "cases": list(results.values()), "baselines": baselines})
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
