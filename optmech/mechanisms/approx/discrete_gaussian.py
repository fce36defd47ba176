r"""The discrete Gaussian on ℤ for (ε, δ)-DP [CKS20]: its normaliser, exact δ(ε), σ calibration, costs
and the :class:`DiscreteGaussian` mechanism.

Source: **[CKS20]** C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020: the discrete Gaussian on ℤ and its rejection sampler (Algorithm 3).
The continuous Gaussian N(0, σ²) [BW18] (whose analytic σ starts the calibration here) and the
argument checks shared with it are in :mod:`optmech.mechanisms.approx.gaussian`.

Discrete Gaussian [CKS20]
-------------------------
p(k) = e^{−k²/(2σ²)}/Z on ℤ, Z = Σ_k e^{−k²/(2σ²)} (direct sum for σ < 4, Poisson summation
Z = σ√(2π)(1 + 2Σ_{n>=1} e^{−2π²σ²n²}) for σ >= 4, exact identities).  For an integer shift s,

.. math:: \delta_s = \sum_k \big(p(k) - e^{\epsilon}p(k+s)\big)_+
                   = \sum_{k < c_s} p(k)\big(1 - e^{\epsilon + (2ks - s^2)/(2\sigma^2)}\big),
          \qquad c_s = \frac{s}{2} - \frac{\sigma^2\epsilon}{s}

(k ↦ −k turns p(k + s) into p(k − s); p(k) > e^ε p(k − s) ⇔ k < c_s), a sum of positive terms
(no cancellation), and δ(ε) = max_{s=1..Δ} δ_s (the maximum is taken, not assumed at s = Δ).
See :func:`discrete_gaussian_delta` for the truncation and its rigorous tail bound.

Tested by: tests/test_approx_references.py.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from optmech.errors import ProblemTooLarge, SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.approx.gaussian import (SigmaCalibrated, analytic_gaussian_sigma, calibrate_or_check,
                                                check_gaussian_delta, check_gaussian_epsilon, check_sigma,
                                                marginal_cost)
from optmech.mechanisms.base import Mechanism, Privacy, Reference

__all__ = [
    "discrete_gaussian_log_normaliser",
    "discrete_gaussian_delta",
    "discrete_gaussian_sigma",
    "discrete_gaussian_cost",
    "discrete_gaussian_reference",
    "DiscreteGaussian",
]

#: Largest number of terms a discrete Gaussian sum may take.
MAX_TERMS = 50_000_000
_U = 2.0**-53  # unit roundoff


# --------------------------------------------------------------------------------------------
# the discrete Gaussian on ℤ [CKS20]


def discrete_gaussian_log_normaliser(sigma) -> float:
    r"""ln Z, Z = Σ_{k∈ℤ} e^{−k²/(2σ²)} [CKS20] (to a few ulps).

    σ < 4: direct sum over |k| <= 12σ + 2 (the rest is < e^{−72} relative); σ >= 4: Poisson
    summation Z = σ√(2π)(1 + 2e^{−2π²σ²} + ...), whose next term is below e^{−1263}.

    >>> import math
    >>> direct = math.fsum(math.exp(-k * k / 2.0) for k in range(-60, 61))
    >>> math.isclose(math.exp(discrete_gaussian_log_normaliser(1.0)), direct, rel_tol=1e-15)
    True
    >>> math.isclose(discrete_gaussian_log_normaliser(10.0), math.log(10 * math.sqrt(2 * math.pi)), rel_tol=1e-15)
    True
    """
    s = check_sigma(sigma)
    if s >= 4.0:
        return math.log(s) + 0.5 * math.log(2.0 * math.pi) + math.log1p(2.0 * math.exp(-2.0 * math.pi**2 * s * s))
    K = int(math.ceil(12.0 * s)) + 2
    k = np.arange(1, K + 1, dtype=float)
    return math.log1p(2.0 * math.fsum(np.exp(-k * k / (2.0 * s * s))))


def _log_tail_bound(m: float, sigma: float, log_z: float) -> float:
    """ln of an upper bound on Σ_{j>=m} p(j) for an integer m >= 0: p(m)/(1 − e^{−(2m+1)/(2σ²)}),
    since p(j+1)/p(j) = e^{−(2j+1)/(2σ²)} <= e^{−(2m+1)/(2σ²)} for j >= m (raised by a rounding allowance)."""
    two_s2 = 2.0 * sigma * sigma
    v = -(m * m) / two_s2 - log_z - math.log(-math.expm1(-(2.0 * m + 1.0) / two_s2))
    return v + 8.0 * _U * (abs(v) + abs(log_z) + 2.0 * m * m / two_s2 + 4.0)


def _shift_delta(sigma: float, eps: float, s: int, log_z: float) -> float:
    """Upper bound on δ_s = Σ_{k<c} p(k)(1 − e^{ε+(2ks−s²)/(2σ²)}), c = s/2 − σ²ε/s (module docstring)."""
    two_s2 = 2.0 * sigma * sigma
    shift = sigma * sigma * eps / s
    c = s / 2.0 - shift
    if c < -(2.0**50) / s:
        # every k < c has |k| >= ⌈−c⌉ − 1: δ_s <= Σ_{j >= m} p(j), m = ⌈−c⌉ − 1, by the rigorous tail bound
        log_tail = _log_tail_bound(math.ceil(-c) - 1.0, sigma, log_z)
        return max(math.exp(log_tail), math.ulp(0.0))
    slack = int(math.ceil(8.0 * _U * (s / 2.0 + shift))) + 1
    k_hi = int(math.floor(c)) + slack
    L = 80.0 + 2.0 * math.log1p(sigma)
    J = int(math.ceil(sigma * math.sqrt(2.0 * L))) + 2
    if k_hi < 0:  # p(k_hi − j)/p(k_hi) <= e^{−|k_hi| j/σ²}: fewer terms reach e^{−L} far out
        J = min(J, int(math.ceil(L * sigma * sigma / -k_hi)) + 2)
    k_lo = min(k_hi, 0) - J
    n = k_hi - k_lo + 1
    if n > MAX_TERMS or abs(k_lo) * s > 2**52:
        raise ProblemTooLarge(f"the discrete Gaussian delta needs {n:.3g} terms (sigma = {sigma:g}); limit {MAX_TERMS:.0e}")
    k = np.arange(k_lo, k_hi + 1, dtype=float)
    q = (s * s - 2.0 * k * s) / two_s2  # numerator exact (|k s| < 2^52)
    x = eps - q
    err = 4.0 * _U * (eps + np.abs(q)) + 1e-300
    w = np.maximum(-np.expm1(x - err), 0.0)  # >= (1 − e^x)_+
    for i in np.flatnonzero(np.abs(x) <= 1e-3 * (eps + np.abs(q)) + 1e-300):
        # near the threshold k = c the rounding allowance dominates: exact rational x instead
        xe = Fraction(eps) - Fraction(int(s * s - 2 * int(k[i]) * s)) / (2 * Fraction(sigma) ** 2)
        w[i] = 0.0 if xe >= 0 else -math.expm1(float(xe) * (1.0 + 2.0 * _U))
    expo = k * k / two_s2
    with np.errstate(divide="ignore"):
        logt = -expo - log_z + np.log(w)
    M = float(np.max(logt))
    # the terms k < k_lo are each <= p(k), and Σ_{k<k_lo} p(k) = Σ_{j >= 1−k_lo} p(j)
    log_tail = _log_tail_bound(1.0 - k_lo, sigma, log_z)
    if M == -math.inf:
        log_body = -math.inf
    else:
        S = float(np.sum(np.exp(logt - M)))  # positive terms, pairwise: relative error <= (log2 n + 1)u
        eta = 4.0 * _U * (float(np.max(expo)) + abs(log_z) + 10.0) + 2.0 * _U * (math.log2(n) + 2.0)
        log_body = M + math.log(S) + eta + 8.0 * _U * (abs(M) + 1.0)
    total = math.exp(log_body) + math.exp(log_tail)
    if total == 0.0:
        return math.ulp(0.0)  # positive but below the smallest double
    return nx.up_ulps(total, 2)


def _check_dg(sigma, epsilon, sensitivity) -> tuple[float, float, int]:
    return check_sigma(sigma), check_gaussian_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=True)


def discrete_gaussian_delta(sigma, epsilon, sensitivity) -> float:
    r"""δ(ε) of the discrete Gaussian on ℤ for integer shifts up to Δ [CKS20], as an upper bound.

    .. math:: \delta = \max_{s=1..\Delta} \sum_{k\in\mathbb Z} \big(p(k) - e^{\epsilon}p(k+s)\big)_+

    Each δ_s is summed as the positive series of the module docstring over the integers k from
    ⌊c_s⌋ + 1 (+ a rounding slack) down to k_lo = min(⌊c_s⌋, 0) − J with
    J = ⌈σ√(2ℓ)⌉ + 2, ℓ = 80 + 2 ln(1 + σ) (or ⌈ℓσ²/|k_hi|⌉ + 2 if smaller and the top k_hi < 0:
    the terms then fall by e^{−|k_hi|/σ²} per step).  **Tail bound.**  The terms with k < k_lo are each
    <= p(k), and Σ_{k<k_lo} p(k) = Σ_{j>=m} p(j) (m = 1 − k_lo) <= p(m)/(1 − e^{−(2m+1)/(2σ²)})
    because p(j+1)/p(j) = e^{−(2j+1)/(2σ²)} is decreasing in j; that bound (relative to the sum,
    at most ~e^{−80}) is **added**.  Rounding: the exponent ε − (s² − 2ks)/(2σ²) is lowered by
    4u(ε + |·|) before 1 − e^{(·)} (an upper bound of each term; within 10⁻³ of the threshold
    k = c_s the exponent is computed exactly with rationals instead, so a term that is exactly 0
    stays 0), the summed logs are raised by 4u(max k²/(2σ²) + |ln Z| + 10), and the result is
    rounded up; so the value is an upper bound on the exact δ, within ~1e-12 relative of it.

    Parameters
    ----------
    sigma : float > 0
    epsilon : float in [0, 700]
    sensitivity : int >= 1

    Raises
    ------
    ProblemTooLarge
        More than 5e7 terms (σ beyond ~3e6).

    >>> import math
    >>> s = 1.0
    >>> k = np.arange(-60, 61)
    >>> p = np.exp(-k * k / (2 * s * s)); p /= p.sum()
    >>> brute = np.maximum(p[:-1] - math.e * p[1:], 0).sum()     # Σ (p(k) − e p(k+1))_+
    >>> math.isclose(discrete_gaussian_delta(s, 1.0, 1), brute, rel_tol=1e-12)
    True
    """
    s, eps, D = _check_dg(sigma, epsilon, sensitivity)
    log_z = discrete_gaussian_log_normaliser(s)
    return min(max(_shift_delta(s, eps, sh, log_z) for sh in range(1, D + 1)), 1.0)


def discrete_gaussian_sigma(epsilon, delta, sensitivity) -> float:
    r"""The smallest σ (to 1e-12 relative, rounded up) with discrete-Gaussian δ(ε) <= δ [CKS20].

    Bracketed from the continuous analytic σ (:func:`analytic_gaussian_sigma`) by factors 1.25,
    then bisected geometrically until hi/lo − 1 <= 1e-12; hi is returned, so
    :func:`discrete_gaussian_delta` (an upper bound) <= δ holds there.  That this is the
    *smallest* such σ assumes δ(ε) nonincreasing in σ: checked numerically
    (tests/test_approx_references.py), not proven.

    Parameters
    ----------
    epsilon : float in [0, 700]
    delta : float in (0, 1)
    sensitivity : int >= 1

    >>> s = discrete_gaussian_sigma(1.0, 1e-5, 1)
    >>> discrete_gaussian_delta(s, 1.0, 1) <= 1e-5 < discrete_gaussian_delta(s * (1 - 1e-11), 1.0, 1)
    True
    """
    eps, dlt, D = check_gaussian_epsilon(epsilon), check_gaussian_delta(delta), nx.check_sensitivity(sensitivity, integer=True)

    def ok(s: float) -> bool:
        return discrete_gaussian_delta(s, eps, D) <= dlt

    hi = analytic_gaussian_sigma(eps, dlt, float(D))
    while not ok(hi):
        hi *= 1.25
    lo = hi / 1.25
    while ok(lo):
        hi, lo = lo, lo / 1.25
        if lo < 1e-300:
            raise SpecError("no positive sigma fails the discrete Gaussian delta <= delta")
    while hi / lo - 1.0 > 1e-12:
        mid = math.sqrt(lo * hi)
        if not lo < mid < hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _dg_cost_detail(cost, sigma: float) -> tuple[float, bool, str, bool]:
    """(value, exact, note, tail_bounded) for E L(X), X discrete Gaussian (see discrete_gaussian_reference)."""
    marg, _ = marginal_cost(cost, 1)
    log_z = discrete_gaussian_log_normaliser(sigma)
    two_s2 = 2.0 * sigma * sigma
    K = int(math.ceil(sigma * math.sqrt(2.0 * (80.0 + 2.0 * math.log1p(sigma))))) + 2
    body = math.nan
    while True:
        if 2 * K + 1 > MAX_TERMS:
            raise ProblemTooLarge(f"the discrete Gaussian cost needs more than {MAX_TERMS:.0e} terms (sigma = {sigma:g})")
        k = np.arange(-K, K + 1, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            terms = nx.evaluate(marg, k) * np.exp(-k * k / two_s2 - log_z)
        body = math.fsum(terms)
        growth = marg.growth(float(K))
        if growth is None or not math.isfinite(body):
            return (nx.up_ulps(body, 4), False, f"sum over |k| <= {K}; the tail beyond could not be bounded "
                    "(no growth bound for the cost): NOT an upper bound", False)
        C, P, R = growth
        k1 = K + 1.0
        # u_k = C(1+k)^P e^{Rk} p(k) bounds |L(±k)| p(k) for k > K; u_{k+1}/u_k is decreasing in k
        log_ratio = P * math.log1p(1.0 / (1.0 + k1)) + R - (2.0 * k1 + 1.0) / two_s2
        if log_ratio < 0.0:
            log_u = math.log(max(C, 1e-300)) + P * math.log1p(k1) + R * k1 - k1 * k1 / two_s2 - log_z
            tail = 2.0 * math.exp(log_u) / -math.expm1(log_ratio)  # both sides, geometric
            if tail <= 1e-17 * abs(body) or (body == 0.0 and tail < 1e-300):
                break
        K *= 2
    eta = 4.0 * _U * (K * K / two_s2 + abs(log_z) + 10.0) + 64.0 * _U  # exponent and product rounding
    value = nx.up_ulps(body + abs(body) * eta + tail, 2)
    return (value, True, f"exact sum over |k| <= {K} plus a rigorous tail bound ({tail:.1e}) from the cost's "
            "growth bound, rounded up", True)


def discrete_gaussian_reference(cost, sigma) -> Reference:
    r"""E L(X) for the discrete Gaussian on ℤ as a :class:`~optmech.mechanisms.base.Reference`
    named ``discrete_gaussian``: the sum over |k| <= K plus a rigorous tail bound.

    K starts at ⌈σ√(2(80 + 2 ln(1 + σ)))⌉ + 2 and doubles until the cost's growth bound
    L(t) <= C(1+|t|)^P e^{R|t|} (|t| >= K, ``Cost.growth``) makes the tail terms
    u_k = C(1+k)^P e^{Rk}p(k) decrease by a factor <= 1/2 from k = K + 1 on (their ratio is
    decreasing in k); then Σ_{|k|>K} L(k)p(k) <= 2u_{K+1}/(1 − ratio) is added.  A cost without
    a growth bound gets ``exact=False`` and a note saying the value is NOT an upper bound.

    >>> ref = discrete_gaussian_reference("square", 1.0)
    >>> k = np.arange(-60, 61); p = np.exp(-k * k / 2.0); p /= p.sum()
    >>> bool(0 <= ref.value - float((k * k * p).sum()) < 1e-13), ref.exact
    (True, True)
    """
    s = check_sigma(sigma)
    value, exact, note, bounded = _dg_cost_detail(cost, s)
    return Reference("discrete_gaussian", value, {"sigma": s, "tail_bounded": bounded}, exact, note)


def discrete_gaussian_cost(cost, sigma) -> float:
    r"""E L(X) for the discrete Gaussian on ℤ, p(k) ∝ e^{−k²/(2σ²)} [CKS20]: an upper bound
    (exact sum plus a rigorous tail bound; see :func:`discrete_gaussian_reference`).

    >>> import math
    >>> k = np.arange(-80, 81); p = np.exp(-k * k / 8.0); p /= p.sum()
    >>> math.isclose(discrete_gaussian_cost("abs", 2.0), float((np.abs(k) * p).sum()), rel_tol=1e-13)
    True
    """
    return discrete_gaussian_reference(cost, sigma).value


class DiscreteGaussian(SigmaCalibrated, Mechanism):
    r"""The discrete Gaussian on ℤ, p(k) = e^{−k²/(2σ²)}/Z [CKS20], for (ε, δ)-DP with integer sensitivity Δ.

    Parameters
    ----------
    sigma : float > 0, optional
        Omitted: :func:`discrete_gaussian_sigma` (ε, δ, Δ) (both then required).
    epsilon : float in [0, 700], optional
        With ``sigma`` and no ``delta``: δ = :func:`discrete_gaussian_delta` (σ, ε, Δ).
    delta : float in (0, 1), optional
        With ``sigma`` and ``epsilon``: checked against the exact δ(ε).
    sensitivity : int >= 1

    Notes
    -----
    ``sample`` is the rejection sampler of [CKS20, Algorithm 3] (discrete Laplace proposals
    with t = ⌊σ⌋ + 1, accepted with probability e^{−(|Y| − σ²/t)²/(2σ²)}), run with numpy floats:
    not exactly DP (see :mod:`optmech.mechanisms.rng`).  ``cdf``/``sf`` sum a tail table of
    ~40σ terms (σ <= 1e5).  :func:`discrete_gaussian_delta` costs O(Δ·σ) per call.

    >>> mech = DiscreteGaussian(epsilon=1.0, delta=1e-5)
    >>> mech.privacy().delta <= 1e-5, mech.sample(3, rng=0).dtype
    (True, dtype('int64'))
    >>> import math
    >>> math.isclose(float(mech.pmf(np.arange(-200, 201)).sum()), 1.0), float(mech.pmf(0.5))
    (True, 0.0)
    >>> DiscreteGaussian.from_dict(mech.to_dict()) == mech
    True
    """

    name = "discrete_gaussian"
    lattice = True

    def __init__(self, *, sigma=None, epsilon=None, delta=None, sensitivity=1) -> None:
        self._sensitivity = nx.check_sensitivity(sensitivity, integer=True)
        self._epsilon, self.sigma, self.delta = calibrate_or_check("DiscreteGaussian", sigma, epsilon, delta,
                                                            self._sensitivity, discrete_gaussian_sigma,
                                                            discrete_gaussian_delta)
        self._log_z = discrete_gaussian_log_normaliser(self.sigma)
        self._tails = None

    def privacy(self) -> Privacy:
        if self._epsilon is None:
            raise SpecError("DiscreteGaussian(sigma=...) without epsilon has no single guarantee: "
                            "use discrete_gaussian_delta(sigma, epsilon, sensitivity)")
        return Privacy("approx", self._epsilon, self.delta, self.sensitivity, "abs",
                       "delta(epsilon) of the discrete Gaussian from the exact hockey-stick sums over shifts 1..sensitivity "
                       "(upper bound with a rigorous tail) [CKS20]")

    def _logpmf(self, k):
        return self._on_lattice(k, lambda i: -i * i / (2.0 * self.sigma**2) - self._log_z)

    def _pmf(self, k):
        return np.exp(-k * k / (2.0 * self.sigma**2) - self._log_z)

    def _tail_table(self) -> np.ndarray:
        """T[m] = P(X >= m) for m = 0..M (M = ⌈40σ⌉ + 2), summed from the far end."""
        if self._tails is None:
            if self.sigma > 1e5:
                raise SpecError("cdf/sf of a discrete Gaussian with sigma > 1e5 are not implemented")
            M = int(math.ceil(40.0 * self.sigma)) + 2
            m = np.arange(0, M + 1, dtype=float)
            p = np.exp(-m * m / (2.0 * self.sigma**2) - self._log_z)
            self._tails = np.cumsum(p[::-1])[::-1]
        return self._tails

    def _sf(self, n):
        # P(X > n) = T[n + 1] for n >= 0; for n < 0, 1 − P(X <= n) = 1 − P(X >= −n) = 1 − T[−n]
        T = self._tail_table()
        M = T.size - 1
        n = np.asarray(n, dtype=float)
        m = np.where(n >= 0, n + 1.0, -n)
        idx = np.clip(m, 0, M).astype(np.int64)
        t = np.where(m > M, 0.0, T[idx])
        return np.where(n >= 0, t, 1.0 - t)

    def _sample(self, n, rng):
        sigma = self.sigma
        t = math.floor(sigma) + 1.0
        q = -math.expm1(-1.0 / t)  # discrete Laplace with scale t: difference of two geometric laws
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            y = rng.geometric(q, size=todo.size) - rng.geometric(q, size=todo.size)
            accept = rng.random(todo.size) < np.exp(-((np.abs(y) - sigma * sigma / t) ** 2) / (2.0 * sigma * sigma))
            out[todo[accept]] = y[accept]
            todo = todo[~accept]
        return out

    def _exact_sampler(self):
        """Exact inversion of |X| (masses e^{−k²/(2σ²)} bracketed in integers, σ's float read
        exactly; the normaliser bracketed by a partial sum and a ratio tail bound), then a fair sign
        (:class:`optmech.exact.laws.DiscreteGaussianAbs`).  Tables grow like σ: σ <= 1e4."""
        from fractions import Fraction

        from optmech.exact import ExactSampler
        from optmech.exact.laws import DiscreteGaussianAbs

        if self.sigma > 1e4:
            raise SpecError(f"the exact discrete Gaussian sampler supports sigma <= 1e4 (its table grows like sigma), "
                            f"got {self.sigma:g}")
        law = DiscreteGaussianAbs(Fraction(self.sigma))
        return ExactSampler(law.sample, dim=1, mechanism=repr(self),
                            privacy=self._exact_privacy("the law p(k) = e^(-k^2/(2 sigma^2))/Z exactly, sigma read as "
                                                        "the exact rational value of its float"),
                            law="discrete Gaussian, exact inversion of |X| and a fair sign")

    def _entropy(self):
        # H = ln Z + E[X²]/(2σ²)
        return self._log_z + discrete_gaussian_cost("square", self.sigma) / (2.0 * self.sigma**2)

    def _expected_cost(self, cost):
        return discrete_gaussian_cost(cost, self.sigma)
