r"""Uniform points of spheres and shells in ℝ^d: one coordinate's cdf and E|U₁| (enclosed), and the shells'
volumes (enclosed) and radial moments.

For U uniform on S^{d−1} (d >= 2), U₁ has the density (1 − t²)^{(d−3)/2} / J_d on [−1, 1], with
J_d = ∫_{−1}^{1} (1 − t²)^{(d−3)/2} dt.  Its cdf G_d(τ) = P(U₁ <= τ) has closed forms [derived]:

* G_2(τ) = 1/2 + arcsin(τ)/π (U₁ = cos Θ, Θ uniform), G_3(τ) = (1 + τ)/2 (Archimedes);
* G_{d+2}(τ) = G_d(τ) + c_d τ (1 − τ²)^{(d−1)/2}, c_d = 1/((d − 1) J_d), J_2 = π, J_3 = 2,
  J_{d+2} = (d − 1) J_d / d.

Proof of the recurrence.  d/dt [t (1 − t²)^{(d−1)/2}] = (1 − t²)^{(d−3)/2} (1 − d t²), and
d (1 − t²)^{(d−1)/2} = (d − 1)(1 − t²)^{(d−3)/2} + (1 − t²)^{(d−3)/2}(1 − d t²).  Integrating over
[−1, τ] gives d·I_{d+2}(τ) = (d − 1) I_d(τ) + τ (1 − τ²)^{(d−1)/2} with I_d(τ) = ∫_{−1}^{τ}; at τ = 1
this is J_{d+2} = (d − 1) J_d / d, and dividing by d·J_{d+2} = (d − 1) J_d gives the recurrence.

Also E|U₁| = 2 ∫_0^1 t (1 − t²)^{(d−3)/2} dt / J_d = 2/((d − 1) J_d) = 2 c_d, and E U₁² = 1/d.

Error bound of the float evaluation (:func:`sphere_cdf_bounds`).  Write G_d(τ) = 1/2 + A(τ) + Σ_k T_k(τ)
with A = arcsin(τ)/π (d even) or τ/2 (d odd) and the recurrence's terms T_k; A and every T_k have the
sign of τ and |A + Σ T_k| = |G_d − 1/2| <= 1/2, so Σ_k |T_k| <= 1/2.  Each T_k is a product of at most
d/2 + 4 correctly rounded operations (1 − τ² as (1 − τ)(1 + τ), a square root for even d, the powers
by repeated multiplication, c_d's float), so its float value is within (d/2 + 8) u |T_k| of it
(u = 2^{−53}, first order, and (d/2 + 8) u < 10^{−2}); the at most d/2 + 2 additions add at most
(d/2 + 2) u each (every partial sum is below 1 in magnitude); arcsin is within 16 ulp (libm).  So
|float − G_d(τ)| <= (d/2 + 8) u/2 + (d/2 + 2) u + 2^{−48} < :func:`cdf_error` (d) =
(2d + 32)·2^{−53} + 2^{−47}, the absolute bound the enclosures widen by.  The enclosure of G_d over
an interval [τ_lo, τ_hi] uses that G_d is nondecreasing.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

__all__ = ["abs_coordinate_mean", "cdf_error", "shell_moments", "shell_volumes", "sphere_cdf", "sphere_cdf_bounds",
           "volume_error"]


@cache
def _coefficients(d: int) -> tuple[tuple[Fraction, bool], ...]:
    """(c_k as r_k, whether c_k = r_k/π) for the recurrence's steps k = d0, d0 + 2, ..., d − 2 (d0 = 2
    or 3), with exact rationals r_k: J_k = q_k π (even k) or 2 q_k (odd k), c_k = 1/((k − 1) J_k)."""
    even = d % 2 == 0
    k, q = (2, Fraction(1)) if even else (3, Fraction(1))
    out = []
    while k < d:
        out.append((1 / ((k - 1) * q * (1 if even else 2)), even))
        q = q * (k - 1) / k
        k += 2
    return tuple(out)


def _c_float(r: Fraction, over_pi: bool) -> float:
    return float(r) / math.pi if over_pi else float(r)


def cdf_error(d: int) -> float:
    """The proven absolute error bound of :func:`sphere_cdf`'s float value (module docstring)."""
    return (2 * int(d) + 32) * 2.0**-53 + 2.0**-47


def sphere_cdf(d: int, tau) -> np.ndarray:
    """G_d(τ) = P(U₁ <= τ) for U uniform on S^{d−1} ⊂ ℝ^d, d >= 2 (τ clipped to [−1, 1]); float values
    within :func:`cdf_error` (d) of the exact ones (module docstring).

    >>> float(sphere_cdf(3, 0.5)), float(sphere_cdf(2, 0.0))
    (0.75, 0.5)
    """
    d = int(d)
    if d < 2:
        raise ValueError("the sphere's cdf needs d >= 2")
    t = np.clip(np.asarray(tau, dtype=float), -1.0, 1.0)
    w = (1.0 - t) * (1.0 + t)
    if d % 2 == 0:
        out = np.arcsin(t) / math.pi
        pw = np.sqrt(w)  # (1 − τ²)^{(k−1)/2} at k = 2
    else:
        out = t / 2.0
        pw = w  # at k = 3
    for r, over_pi in _coefficients(d):
        out = out + _c_float(r, over_pi) * t * pw
        pw = pw * w
    return 0.5 + out


def sphere_cdf_bounds(d: int, tau_lo, tau_hi) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of G_d over [τ_lo, τ_hi] (G_d is nondecreasing; the float error of
    :func:`sphere_cdf` widened by :func:`cdf_error`, clipped to [0, 1])."""
    e = cdf_error(d)
    lo = np.clip(sphere_cdf(d, tau_lo) - e, 0.0, 1.0)
    hi = np.clip(sphere_cdf(d, tau_hi) + e, 0.0, 1.0)
    return lo, hi


def abs_coordinate_mean(d: int) -> tuple[float, float]:
    """E|U₁| = 2 c_d (module docstring) as an enclosing pair of floats: 2/π (d = 2), 1/2 (d = 3), ...

    >>> lo, hi = abs_coordinate_mean(3); lo <= 0.5 <= hi
    True
    """
    d = int(d)
    if d < 2:
        raise ValueError("E|U_1| needs d >= 2")
    # c_d itself: the coefficient the recurrence would use at step k = d
    even = d % 2 == 0
    k, q = (2, Fraction(1)) if even else (3, Fraction(1))
    while k < d:
        q = q * (k - 1) / k
        k += 2
    r = 2 / ((d - 1) * q * (1 if even else 2))
    v = _c_float(r, even)
    return v * (1 - 2.0**-50), v * (1 + 2.0**-50)


# -- shells ------------------------------------------------------------------------------------------
def volume_error(d: int) -> float:
    """Relative error bound of :func:`shell_volumes`' float values: d·log(r/top) carries d times log's error
    (a few ulp of |log| <= 745), then exp and expm1 (16 ulp each)."""
    return (64 * int(d) + 256) * 2.0**-52 + 2.0**-47


def shell_volumes(edges, d: int, top: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of (e_{i+1}^d − e_i^d)/top^d for consecutive edges (``top`` default the last
    edge), computed as (e_{i+1}/top)^d · (−expm1(d log(e_i/e_{i+1}))): no cancellation, no overflow (an
    edge 0 gives (e_1/top)^d).

    >>> lo, hi = shell_volumes(np.array([0.0, 1.0, 2.0]), 2); bool(lo[0] <= 0.25 <= hi[0] and lo[1] <= 0.75 <= hi[1])
    True
    """
    e = np.asarray(edges, dtype=float)
    top = float(e[-1] if top is None else top)
    with np.errstate(divide="ignore"):
        w = np.exp(d * np.log(e[1:] / top)) * -np.expm1(d * np.log(e[:-1] / e[1:]))
    err = volume_error(d)
    return np.maximum(w * (1 - err) - 2.0**-1060, 0.0), w * (1 + err) + 2.0**-1060


def shell_moments(edges, d: int, k: int) -> np.ndarray:
    """E[R^k | shell i] for R with density ∝ r^{d−1} on [e_i, e_{i+1}] (floats):
    d/(d + k) · e_{i+1}^k (1 − q^{d+k})/(1 − q^d), q = e_i/e_{i+1} (d/(d + k) · e_1^k when e_0 = 0).

    >>> float(shell_moments(np.array([0.0, 1.0]), 3, 2)[0])  # E R² on the unit ball of R^3
    0.6
    """
    e = np.asarray(edges, dtype=float)
    with np.errstate(divide="ignore"):
        lq = np.log(e[:-1] / e[1:])
    ratio = np.where(np.isfinite(lq), np.expm1((d + k) * lq) / np.where(lq < 0, np.expm1(d * lq), 1.0), 1.0)
    return d / (d + k) * e[1:] ** k * ratio
