"""``recommend --compositions k``: each candidate calibrated for k identical releases under a total (ε, δ).

A practitioner who releases the same statistic k times (or k statistics of the same sensitivity) under
one total budget (ε, δ) needs, for each candidate noise, the *per-release* calibration whose k-fold
composition meets (ε, δ), and the per-release expected cost that calibration costs.

How each candidate is calibrated
--------------------------------
- **Total δ = 0.**  k releases of laws whose privacy loss reaches its maximum ε_i with positive
  probability compose to exactly k·ε_i (the losses add, and the maxima are reached together), so pure
  ε-DP in total needs ε_i = ε/k per release: the table is the single-release table at ε/k.
- **Total δ > 0.**  A one-parameter family per candidate (scale b of the Laplace and the discrete
  Laplace, with ε_i = Δ/b; ε_i of the staircase and the discrete staircase, their shape re-optimised for
  the cost at each ε_i; σ of the analytic and the discrete Gaussian), and the smallest scale whose k-fold
  composition has δ(ε) <= δ by privacy-loss-distribution accounting
  (:func:`optmech.interop.accounting.calibrate_for_compositions`, dp_accounting's pessimistic PLDs built
  from the exact laws; to 0.1 % in the scale).  The search runs between the single-release calibration
  (which no k >= 2 composition can afford) and the basic-composition one ((ε/k, δ/k) per release, which
  always suffices).  The truncated discrete Laplace has two parameters (ε_i and its δ_i); like the optimum
  below it takes δ_i = δ/(2k) and searches ε_i.
- **The optimum.**  The LP optimum is computed for one release at a given (ε_i, δ_i); under composition
  there is no single-release problem whose optimum is known to be optimal for the composition.  We take
  δ_i = δ/(2k) and search ε_i upward from ε/k (a gallop by factors 1.01, 1.02, 1.04, ..., then bisection;
  four solves of the (ε_i, δ_i) problem, each audited law accounted by PLD).  This is a *heuristic* per-release budget split, stated as such: the row is a
  certified-private mechanism with a certified cost, not an optimum under composition.

Laws without a privacy loss distribution here (the truncated Laplace on ℝ, the rounded Tulap) are
listed with the reason.
"""

from __future__ import annotations

from typing import Any, Callable

from optmech.errors import SpecError

__all__ = ["compose_candidates", "OPTIMUM_STEPS"]

#: Solves of the optimum's search beyond ε/k (each one solve and one PLD): a gallop up from ε/k by factors
#: 1 + GALLOP_START·2^j, then bisection between the last success and the first failure.
OPTIMUM_STEPS = 4
#: The gallop's first relative step above ε/k.
GALLOP_START = 0.01


def compose_candidates(problem, rec, k: int, *, solver: str | None = None, time_limit: float | None = None,
                       at_share=None) -> dict:
    """The composition table of ``rec`` (a :class:`~optmech.recommendation.Recommendation`) for ``k`` releases.

    ``at_share`` is the Recommendation for one release at ε/k, which a total δ = 0 needs (module docstring).
    """
    eps = float(problem.epsilon)
    delta = float(getattr(problem.privacy, "delta", 0.0) or 0.0)
    notes = ["single-release optimality does not imply optimality under composition: the per-release "
             "calibrations below are each candidate's best under PLD accounting"
             + (", and the optimum's row uses a heuristic budget split (delta_i = delta/(2k))" if delta > 0 else "")]
    if delta == 0:
        if at_share is None:
            raise SpecError("a pure-DP composition table needs the recommendation at epsilon/k")
        return _pure(at_share, eps, k, notes)
    cost = problem.cost
    sens = float(problem.sensitivity)
    integer = problem.to_params()["domain"] != "continuous"
    rows = []
    for r in rec.rows:
        name = r["mechanism"]
        try:
            if name == "optimum":
                rows.append(_optimum(problem, eps, delta, k, solver, time_limit))
                continue
            family = _family(name, eps, delta, sens, k, cost, integer)
            if family is None:
                rows.append({"mechanism": name, "error": "no privacy loss distribution for this law here"})
                continue
            make, lo, hi, describe = family
            from optmech.interop.accounting import calibrate_for_compositions

            scale, mech, achieved = calibrate_for_compositions(make, lo, hi, k, eps, delta)
            rows.append({"mechanism": name, "per_release": describe(scale, mech), "parameters": {"scale": scale},
                         "expected_cost": float(mech.expected_cost(cost)), "composed_delta": float(achieved)})
        except SpecError as exc:
            rows.append({"mechanism": name, "error": str(exc)})
    ok = [r for r in rows if "error" not in r]
    ok.sort(key=lambda r: r["expected_cost"])
    rows = ok + [r for r in rows if "error" in r]
    return {"compositions": k, "epsilon": eps, "delta": delta, "rows": rows,
            "best": ok[0]["mechanism"] if ok else "none", "notes": notes}


def _pure(sub, eps: float, k: int, notes: list[str]) -> dict:
    rows = [{"mechanism": r["mechanism"], "per_release": f"ε_i = {eps / k:.6g}", "parameters": r["parameters"],
             "expected_cost": r["expected_cost"], "composed_delta": 0.0} for r in sub.rows]
    notes = notes + ["total δ = 0: pure ε-DP composes to exactly k·ε_i for these laws (their privacy losses reach "
                     "ε_i together), so each release runs at ε/k; the V* bracket at ε/k is "
                     f"[{sub.lower:.6g}, {sub.upper:.6g}]"]
    return {"compositions": k, "epsilon": eps, "delta": 0.0, "rows": rows, "best": sub.choice, "notes": notes}


def _family(name: str, eps: float, delta: float, sens: float, k: int, cost, integer: bool
            ) -> tuple[Callable[[float], Any], float, float, Callable[[float, Any], str]] | None:
    """``(make(scale), lo, hi, describe)`` of a candidate's one-parameter family, or None."""
    from optmech.mechanisms import DiscreteLaplace, Laplace
    from optmech.mechanisms.factory import make_mechanism

    lo_b, hi_b = sens / eps, k * sens / eps   # ε_i = Δ/b from ε (one release) down to ε/k (basic composition)
    if name == "laplace":
        return (lambda b: Laplace(epsilon=sens / b, sensitivity=sens), lo_b, hi_b,
                lambda b, m: f"scale b = {b:.6g} (ε_i = {sens / b:.6g})")
    if name in ("discrete_laplace", "geometric"):
        s = int(sens)
        return (lambda b: DiscreteLaplace(epsilon=s / b, sensitivity=s), lo_b, hi_b,
                lambda b, m: f"ε_i = {s / b:.6g} (λ = e^(-ε_i/Δ))")
    if name in ("staircase", "discrete_staircase"):
        spec = cost.spec if hasattr(cost, "spec") else str(cost)

        def make(b: float):
            return make_mechanism(name, epsilon=sens / b, sensitivity=int(sens) if integer else sens, cost=spec)[0]

        return (make, lo_b, hi_b, lambda b, m: f"ε_i = {sens / b:.6g} (shape re-optimised)")
    if name == "truncated_geometric" and integer:
        from optmech.mechanisms import TruncatedDiscreteLaplace

        s, d_i = int(sens), delta / (2 * k)
        return (lambda b: TruncatedDiscreteLaplace(epsilon=s / b, delta=d_i, sensitivity=s), lo_b, hi_b,
                lambda b, m: f"ε_i = {s / b:.6g}, δ_i = {d_i:.3g}, T = {m.half_width}")
    if name in ("analytic_gaussian", "gaussian") and not integer:
        from optmech.mechanisms.approx.gaussian import Gaussian, analytic_gaussian_sigma

        lo_s = analytic_gaussian_sigma(eps, delta, sens)
        hi_s = analytic_gaussian_sigma(eps / k, delta / k, sens) * 1.001
        return (lambda sg: Gaussian(sigma=sg, epsilon=eps, sensitivity=sens), lo_s, hi_s,
                lambda sg, m: f"σ = {sg:.6g}")
    if name == "discrete_gaussian" and integer:
        from optmech.mechanisms.approx.discrete_gaussian import DiscreteGaussian
        from optmech.mechanisms.approx.gaussian import analytic_gaussian_sigma

        lo_s = analytic_gaussian_sigma(eps, delta, sens)
        hi_s = analytic_gaussian_sigma(eps / k, delta / k, sens) * 1.25
        return (lambda sg: DiscreteGaussian(sigma=sg, epsilon=eps, sensitivity=int(sens)), lo_s, hi_s,
                lambda sg, m: f"σ = {sg:.6g}")
    return None


def _optimum(problem, eps: float, delta: float, k: int, solver, time_limit) -> dict:
    """The (ε_i, δ/(2k)) optimum with the largest ε_i found (gallop and bisection, OPTIMUM_STEPS solves) whose
    k-fold composition meets (ε, δ)."""
    import dataclasses

    from optmech.drive import solve
    from optmech.interop.accounting import composed_delta
    from optmech.spec import ApproxDP

    d_i = delta / (2 * k)

    def attempt(e_i: float):
        p = dataclasses.replace(problem, privacy=ApproxDP(e_i, d_i))
        res = solve(p, solver=solver, time_limit=time_limit, references=False)
        if getattr(res.status, "value", res.status) == "interrupted":  # the solve caught a signal: pass it on
            from optmech.errors import Interrupted

            raise Interrupted(2, "the composition search was interrupted")
        if not res.certified or res.mechanism is None:
            raise SpecError(f"the (ε_i, δ_i) = ({e_i:.4g}, {d_i:.3g}) optimum was not certified ({res.status})")
        return res, composed_delta(res.mechanism, None, k, eps)

    lo, hi = eps / k, eps
    best, d_best = attempt(lo)
    if d_best > delta:  # basic composition guarantees k·δ_i = δ/2 at ε; the PLD should agree
        raise SpecError(f"the optimum at ε/k composes to δ = {d_best:.3g} > {delta:g} by PLD accounting")
    e_best = lo
    steps = 0
    step = GALLOP_START  # gallop up from ε/k (the optimal laws' losses sit at ±ε_i: the answer is near ε/k) ...
    while steps < OPTIMUM_STEPS and lo * (1 + step) < hi:
        trial = lo * (1 + step)
        res, d = attempt(trial)
        steps += 1
        if d <= delta:
            lo, best, d_best, e_best = trial, res, d, trial
            step *= 2
        else:
            hi = trial
            break
    while steps < OPTIMUM_STEPS:  # ... then bisect between the last success and the first failure
        mid = (lo * hi) ** 0.5
        res, d = attempt(mid)
        steps += 1
        if d <= delta:
            lo, best, d_best, e_best = mid, res, d, mid
        else:
            hi = mid
    return {"mechanism": "optimum", "per_release": f"ε_i = {e_best:.6g}, δ_i = {d_i:.3g}",
            "parameters": {"epsilon_i": e_best, "delta_i": d_i, "v_star_lower": float(best.lower_bound)},
            "expected_cost": float(best.upper_bound), "composed_delta": float(d_best)}

