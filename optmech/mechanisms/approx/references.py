r"""Reference sets for (ε, δ)-DP on ℝ, ℝ^d and ℤ: upper bounds on the optimal cost V*, one per
reference law (:func:`continuous_approx_references`, :func:`discrete_approx_references`).

Sources (tags used throughout; the laws themselves are in :mod:`optmech.mechanisms.approx.gaussian`,
:mod:`optmech.mechanisms.approx.discrete_gaussian` and :mod:`optmech.mechanisms.approx.truncated`):

* **[DR14]** Dwork & Roth 2014, Thm A.1: the classic Gaussian calibration (0 < ε < 1).
* **[BW18]** Balle & Wang, ICML 2018, Thm 8: the exact δ(ε) of Gaussian noise (analytic calibration).
* **[CKS20]** Canonne, Kamath & Steinke, NeurIPS 2020: the discrete Gaussian on ℤ.
* **[GDGK20]** Q. Geng, W. Ding, R. Guo, S. Kumar, "Tight Analysis of Privacy and Utility Tradeoff
  in Approximate Differential Privacy", AISTATS 2020: the truncated Laplace mechanism.
* [Geng13], [GKOV15], [KHP15]: the ε-DP staircase and Laplace laws (δ = 0, hence (ε, δ)-DP).

Every function returns :class:`~optmech.mechanisms.approx.bounds.Bound` objects of kind
``upper``: the expected cost of one (ε, δ)-DP (or stronger) additive noise law, with its
calibration in ``parameters`` and its source in ``note``.  ``valid`` is False when a side
condition fails (the classic Gaussian for ε >= 1) or the value is not finite (ε = 0 for the
ε-DP laws).

The references
--------------
* ``gaussian`` / ``analytic_gaussian``: N(0, σ²I_d) with σ from :func:`~optmech.mechanisms.approx.gaussian.classic_gaussian_sigma`
  / :func:`~optmech.mechanisms.approx.gaussian.analytic_gaussian_sigma`, for the ℓ2 sensitivity: Δ for
  ``norm="l2"``, and Δ for ``norm="l1"`` too (the worst ℓ1-bounded shift lies on an axis).
* ``laplace``: δ = 0.  1-D: scale Δ/ε.  d-D, ℓ1: i.i.d. Laplace(Δ/ε) coordinates.
* ``l2_laplace`` (in place of ``laplace`` for d-D, ℓ2; the name pure d-D solves give it): the
  ℓ2-Laplace (K-norm) density ∝ e^{−ε‖x‖₂/Δ} [KHP15, Thm 8], ε-DP since
  e^{ε(‖x − t‖₂ − ‖x‖₂)/Δ} <= e^{ε‖t‖₂/Δ}; ‖X‖₂ ~ Gamma(d, Δ/ε), so E‖X‖₂ = dΔ/ε and
  E‖X‖₂² = d(d+1)Δ²/ε².
* ``staircase``: δ = 0.  1-D: the optimum over ε-DP noise [Geng13, Thm 2.4] (for other costs the
  best staircase, still an ε-DP upper bound).  d-D: the best ℓ1 staircase [GKOV15], for ℓ2
  sensitivity Δ with ℓ1 sensitivity √d·Δ (‖t‖₁ <= √d‖t‖₂).
* ``uniform``: U[−Δ/(2δ), Δ/(2δ)] in 1-D, (0, δ)-DP: TV(U, U + t) = |t|δ/Δ <= δ.  d-D: the
  product, TV = 1 − Π(1 − |t_i|δ/Δ) <= ‖t‖₁δ/Δ (ℓ1 sensitivity Δ; √d·Δ for ℓ2).
* ``discrete_gaussian`` (ℤ): σ from :func:`~optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_sigma`.
* ``truncated_laplace`` (1-D): the truncated Laplace law [GDGK20], derived in
  :mod:`optmech.mechanisms.approx.truncated`.

Tested by: tests/test_approx_references.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.approx.bounds import Bound, check_delta, check_dim, check_epsilon, make_bound, resolve_cost
from optmech.mechanisms.approx.truncated import truncated_laplace_reference

__all__ = ["continuous_approx_references", "discrete_approx_references", "NORMS"]

#: Sensitivity norms accepted in d-D.
NORMS = ("l1", "l2")


# --------------------------------------------------------------------------------------------
# reference sets


def _check_norm(norm: Any) -> str:
    if not isinstance(norm, str) or norm.strip().lower() not in NORMS:
        raise SpecError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}")
    return norm.strip().lower()


def _gaussian_bounds(cost_arg, eps: float, dlt: float, D2: float, d: int, where: str) -> list[Bound]:
    from optmech.mechanisms.approx.gaussian import (
        analytic_gaussian_sigma,
        classic_gaussian_sigma,
        gaussian_delta,
        gaussian_reference,
    )

    out = []
    classic = classic_gaussian_sigma(eps, dlt, D2)
    conds = {"epsilon_in_0_1": classic.valid}
    params: dict[str, Any] = {"sigma": classic.sigma, "l2_sensitivity": D2, "dim": d, "theorem": "[DR14, Thm A.1]"}
    if math.isinf(classic.sigma):
        out.append(make_bound("gaussian", math.inf, "upper", conds, params, True, "NOT a bound: " + classic.note))
    else:
        ref = gaussian_reference(cost_arg, classic.sigma, d)
        real = gaussian_delta(classic.sigma, eps, D2)
        params["exact_delta"] = real
        note = f"classic Gaussian, {where}: {classic.note}; cost: {ref.note}"
        if not classic.valid:
            note = (f"NOT a valid bound ([DR14, Thm A.1] needs 0 < epsilon < 1): the exact delta at this sigma is "
                    f"{real:.3g} [BW18, Thm 8], {'<=' if real <= dlt else 'above'} delta = {dlt:g}; " + note)
        out.append(make_bound("gaussian", ref.value, "upper", conds, params, ref.exact, note))
    sigma = analytic_gaussian_sigma(eps, dlt, D2)
    ref = gaussian_reference(cost_arg, sigma, d)
    params = {"sigma": sigma, "l2_sensitivity": D2, "dim": d, "exact_delta": gaussian_delta(sigma, eps, D2),
              "theorem": "[BW18, Thm 8]"}
    out.append(make_bound("analytic_gaussian", ref.value, "upper", {}, params, ref.exact,
                          f"analytic Gaussian, {where}: the smallest sigma with exact delta(epsilon) <= delta "
                          f"[BW18, Thm 8]; cost: {ref.note}"))
    return out


def continuous_approx_references(cost, epsilon, delta, sensitivity, dim=1, norm="l1") -> list[Bound]:
    r"""Upper bounds on V* for (ε, δ)-DP additive noise on ℝ (d = 1) or ℝ^d: one per reference law.

    Parameters
    ----------
    cost : Cost or str
        1-D: any cost (``l1``/``l2``/``linf`` mean ``abs``, ``l2sq`` means ``square``).
        d > 1: ``l1``, ``l2``, ``l2sq`` or ``linf``.
    epsilon : float in [0, 700]
    delta : float in (0, 1)
    sensitivity : float > 0
        Δ, in ``norm`` when d > 1.
    dim : int in [1, 8]
    norm : {"l1", "l2"}
        The sensitivity's norm in d-D (ignored in 1-D).

    Returns
    -------
    list of Bound
        Named ``gaussian`` (classic, ``valid=False`` unless 0 < ε < 1 [DR14, Thm A.1]),
        ``analytic_gaussian`` [BW18, Thm 8], ``truncated_laplace`` (1-D only, [GDGK20]),
        ``laplace`` (δ = 0; in d-D with ``norm="l1"`` i.i.d. coordinates), ``l2_laplace`` (in its place
        for d-D ``norm="l2"``: the ℓ2-Laplace [KHP15, Thm 8], the name pure d-D solves use), ``staircase`` (δ = 0,
        [Geng13, Thm 2.4] / [GKOV15]) and ``uniform`` ((0, δ)-DP), all of kind ``upper``; each
        carries its calibration in ``parameters`` (module docstring).

    >>> bs = {b.name: b for b in continuous_approx_references("abs", 0.5, 0.01, 1.0)}
    >>> sorted(bs)
    ['analytic_gaussian', 'gaussian', 'laplace', 'staircase', 'truncated_laplace', 'uniform']
    >>> bs["analytic_gaussian"].value < bs["gaussian"].value, bs["gaussian"].valid
    (True, True)
    >>> bs["truncated_laplace"].value < bs["laplace"].value     # δ > 0 helps
    True
    >>> nd = {b.name: b for b in continuous_approx_references("l2", 1.0, 0.01, 1.0, dim=2, norm="l2")}
    >>> nd["l2_laplace"].value, nd["gaussian"].valid             # ℓ2-Laplace: E‖X‖₂ = dΔ/ε
    (2.0, False)
    """
    eps, dlt, D, d = check_epsilon(epsilon), check_delta(delta), nx.check_sensitivity(sensitivity), check_dim(dim)
    nrm = _check_norm(norm)
    marg, name_nd = resolve_cost(cost, d)
    cost_arg = marg if d == 1 else name_nd
    if d == 1:
        where, D1 = "1-D", D
    elif nrm == "l1":
        where, D1 = f"d = {d}, l1 sensitivity {D:g} (l2 sensitivity {D:g}, a shift along one axis)", D
    else:
        where, D1 = f"d = {d}, l2 sensitivity {D:g}", nx.up_ulps(math.sqrt(d) * D, 2)
    out = _gaussian_bounds(cost_arg, eps, dlt, D, d, where)
    pos = {"epsilon_positive": eps > 0.0}

    # truncated Laplace (1-D)
    if d == 1:
        if eps == 0.0:
            out.append(make_bound("truncated_laplace", math.inf, "upper", pos, {}, True,
                                  "not defined at epsilon = 0 (lambda = Delta/epsilon; its limit is the uniform): NOT a bound"))
        else:
            ref = truncated_laplace_reference(marg, eps, dlt, D)
            out.append(make_bound("truncated_laplace", ref.value, "upper", pos, dict(ref.parameters), ref.exact,
                                  "truncated Laplace B e^(-|x|/lambda) on [-A, A], (epsilon, delta)-DP with delta(epsilon) "
                                  f"= delta at the shift Delta [GDGK20; derived]; cost: {ref.note}"))

    # Laplace (δ = 0)
    if eps == 0.0:
        out.append(make_bound("laplace", math.inf, "upper", pos, {"dim": d}, True, "not defined at epsilon = 0: NOT a bound"))
    elif d == 1:
        from optmech.mechanisms.laplace import laplace_reference

        ref = laplace_reference(marg, eps, D)
        out.append(make_bound("laplace", ref.value, "upper", pos, dict(ref.parameters), ref.exact,
                              "epsilon-DP hence (epsilon, delta)-DP [Geng13, §2.6.1]; " + ref.note))
    elif nrm == "l1":
        from optmech.mechanisms.laplace_nd import laplace_nd_cost

        value = laplace_nd_cost(name_nd, eps, D, d)
        out.append(make_bound("laplace", value, "upper", pos, {"scale": D / eps, "dim": d, "law": "product"},
                              name_nd != "l2", "i.i.d. Laplace(Delta/epsilon) coordinates, epsilon-DP for l1 sensitivity "
                              "Delta [GKOV15, Def. 3]" + ("; E||X||_2 numeric" if name_nd == "l2" else "")))
    else:
        from optmech.mechanisms.laplace_nd import l2_laplace_cost

        value = l2_laplace_cost(name_nd, eps, d, D)
        out.append(make_bound("l2_laplace", value, "upper", pos, {"scale": D / eps, "dim": d, "law": "l2_laplace"},
                              name_nd != "linf", "l2-Laplace density ~ exp(-epsilon ||x||_2/Delta), epsilon-DP for l2 "
                              "sensitivity Delta [KHP15, Thm 8]; ||X||_2 ~ Gamma(d, Delta/epsilon): E||X||_2 = d Delta/epsilon, "
                              "E||X||_2^2 = d(d+1) Delta^2/epsilon^2"))

    # staircase (δ = 0)
    if eps == 0.0:
        out.append(make_bound("staircase", math.inf, "upper", pos, {"dim": d}, True, "not defined at epsilon = 0: NOT a bound"))
    elif d == 1:
        from optmech.mechanisms.staircase import optimal_gamma, staircase_cost, staircase_reference

        ref = staircase_reference(marg, eps, D)
        if ref is not None:
            out.append(make_bound("staircase", ref.value, "upper", pos, dict(ref.parameters), ref.exact,
                                  "the delta = 0 optimum, epsilon-DP hence (epsilon, delta)-DP; " + ref.note))
        else:
            g = optimal_gamma(marg, eps, D)
            v = staircase_cost(marg, eps, D, g)
            out.append(make_bound("staircase", v, "upper", pos, {"gamma": g}, False,
                                  "the best staircase [Geng13, (2.13)] for a cost not proven symmetric nondecreasing: "
                                  "epsilon-DP hence an upper bound, not known to be the delta = 0 optimum; numeric"))
    elif nrm == "l2" and name_nd in ("l2", "l2sq"):
        # the staircase in the sensitivity's own norm: f(x) = g(||x||_2) with the 1-D staircase profile g, so
        # f(x)/f(x + v) = g(r)/g(r') with |r - r'| <= ||v||_2 <= Delta (triangle inequality): epsilon-DP
        # [MDA26]; its cost is the closed-form radial moment E R^m (the cone factor of ||x||_2 on its own sphere
        # is 1) at the numerically chosen gamma, a valid law whatever gamma is
        from optmech.mechanisms.staircase_nd import optimal_gamma_nd, staircase_nd_cost

        g = optimal_gamma_nd(name_nd, eps, d, D)  # γ* does not depend on the norm (the cone factor does not)
        value = staircase_nd_cost(name_nd, eps, D, g, d, norm="l2")
        out.append(make_bound("staircase", value, "upper", pos, {"dim": d, "gamma": g, "norm": "l2"}, True,
                              "the l2 staircase g(||x||_2) [MDA26] at its best gamma, epsilon-DP for l2 sensitivity "
                              "Delta (triangle inequality), hence (epsilon, delta)-DP; closed-form radial moment"))
    else:
        from optmech.mechanisms.staircase_nd import staircase_nd_optimal_cost

        value = staircase_nd_optimal_cost(name_nd, eps, D1, d)
        out.append(make_bound("staircase", value, "upper", pos, {"dim": d, "l1_sensitivity": D1}, False,
                              f"the best l1 staircase [GKOV15] for l1 sensitivity {D1:g}, epsilon-DP hence (epsilon, delta)-DP"
                              + ("" if nrm == "l1" else " (l1 sensitivity sqrt(d) x the l2 sensitivity)")))

    # uniform ((0, δ)-DP)
    half = D1 / (2.0 * dlt)
    if d == 1:
        lo, hi = marg.integral(np.array([-half]), np.array([half]), pieces=4096)
        value = nx.up_ulps(float(hi[0]) / (2.0 * half), 2)
        exact = marg.kind != "expr"
        note = ("U[-Delta/(2 delta), Delta/(2 delta)], (0, delta)-DP: TV(U, U + t) = |t| delta/Delta [derived]; cost: "
                + ("closed-form integral, outward rounded" if exact else "rigorous upper enclosure of the integral (4096 pieces)"))
        params: dict[str, Any] = {"half_width": half, "dim": 1}
    else:
        from optmech.mechanisms.uniform import UniformContinuous

        value = UniformContinuous(delta=dlt, sensitivity=D1, dim=d).expected_cost(name_nd)
        exact = name_nd != "l2"
        note = (f"product U[-a, a]^d, a = {half:g}, (0, delta)-DP for l1 sensitivity {D1:g}: TV <= ||t||_1 delta/Delta_1 "
                "[derived]" + ("" if nrm == "l1" else " (l1 sensitivity sqrt(d) x the l2 sensitivity)"))
        params = {"half_width": half, "dim": d, "l1_sensitivity": D1}
    out.append(make_bound("uniform", value, "upper", {}, params, exact, note))
    return out


def discrete_approx_references(cost, epsilon, delta, sensitivity) -> list[Bound]:
    r"""Upper bounds on V* for (ε, δ)-DP noise on ℤ from the discrete Gaussian [CKS20].

    One Bound, ``discrete_gaussian``: σ = :func:`~optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_sigma`
    (ε, δ, Δ), its δ(ε) re-evaluated (an upper bound over shifts 1..Δ) and its cost as an exact sum
    plus a rigorous tail bound (:func:`~optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_reference`).
    ``valid`` needs both the tail bound and δ(ε) <= δ.

    Parameters
    ----------
    cost : Cost or str
        Any 1-D cost.
    epsilon : float in [0, 700]
    delta : float in (0, 1)
    sensitivity : int >= 1

    >>> (b,) = discrete_approx_references("square", 1.0, 1e-5, 1)
    >>> b.name, b.valid, b.parameters["realised_delta"] <= 1e-5
    ('discrete_gaussian', True, True)
    >>> b.value >= b.parameters["sigma"] ** 2 * 0.99        # ≈ σ² for σ ≫ 1
    True
    """
    from optmech.mechanisms.approx.discrete_gaussian import (discrete_gaussian_delta, discrete_gaussian_reference,
                                                             discrete_gaussian_sigma)

    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    D = nx.check_sensitivity(sensitivity, integer=True)
    marg = resolve_cost(cost, 1)[0]
    sigma = discrete_gaussian_sigma(eps, dlt, D)
    real = discrete_gaussian_delta(sigma, eps, D)
    ref = discrete_gaussian_reference(marg, sigma)
    conds = {"tail_bounded": bool(ref.parameters["tail_bounded"]), "delta_verified": real <= dlt}
    params = {"sigma": sigma, "realised_delta": real, "sensitivity": D}
    return [make_bound("discrete_gaussian", ref.value, "upper", conds, params, ref.exact,
                       "discrete Gaussian on Z, the smallest sigma (to 1e-12) with delta(epsilon) <= delta over integer "
                       f"shifts 1..Delta [CKS20]; cost: {ref.note}")]
