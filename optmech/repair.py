"""The δ-mixing repair of an (ε, δ) pmf whose audit exceeds δ by solver tolerances.

A pmf p on the box [−R, R]^d whose audited δ(ε) (:func:`optmech.audit.hockey_stick_array`, every
shift 0 < ‖v‖₁ <= Δ, outward-rounded) is above δ is mixed with a cheap law u that is
(ε, δ_u)-DP with δ_u <= δ/2: the discrete Laplace λ = e^{−ε/Δ} per coordinate, truncated where
its hockey-stick sum falls below δ/2 (ε > 0), else the product uniform of width ⌈2Δ/δ⌉ per
coordinate ((0, δ/2)-DP).  Each hockey-stick sum is convex in the pair of laws, so the weight
λ = (δ_p − δ)/(δ_p − δ_u) restores δ; the mixture is audited again [derived; GV13, (18)].
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from optmech.audit import hockey_stick_array
from optmech.errors import SpecError

_U = 2.0**-53
#: Largest uniform width accepted (points per coordinate).
MAX_WIDTH = 10**8

__all__ = ["repair_delta", "uniform_width", "MAX_WIDTH"]


def uniform_width(delta: float, sensitivity: int) -> int:
    """n = ⌈Δ/δ⌉ in exact rational arithmetic (the float δ is taken at its exact value): the uniform
    law on n consecutive integers is (0, δ)-DP for sensitivity Δ."""
    n = math.ceil(Fraction(int(sensitivity)) / Fraction(float(delta)))
    if n > MAX_WIDTH:
        raise SpecError(f"uniform noise with sensitivity {sensitivity} and delta {delta:g} needs {n} points per "
                        f"coordinate (> {MAX_WIDTH:g}): raise delta")
    return n


def _product(line: np.ndarray, d: int) -> np.ndarray:
    u = line
    for _ in range(d - 1):
        u = np.multiply.outer(u, line)
    return u


def _uniform_box(delta: float, D: int, d: int) -> tuple[np.ndarray, int]:
    """The product uniform of width n = ⌈2Δ/δ⌉ per coordinate ((0, δ/2)-DP), on [−R, R]^d."""
    n = uniform_width(delta / 2.0, D)
    lo = -(n // 2)
    R = max(-lo, lo + n - 1)
    line = np.zeros(2 * R + 1)
    line[lo + R: lo + n + R] = 1.0 / n
    return _product(line, d), R


def _safe_box(epsilon: float, delta: float, D: int, d: int) -> tuple[np.ndarray, int, float]:
    """A cheap pmf on [−R, R]^d whose audited δ(ε) is at most δ/2: (pmf, R, audited δ)."""
    from optmech.problems.approx import shift_vectors  # lazy: the LP builders import scipy.sparse

    shifts = shift_vectors(d, D, half=False)
    if epsilon > 0:
        lam = math.exp(-epsilon / D)
        # the truncated law leaks about d·λ^(R+1−Δ)/(1−λ) mass past its edge per shift
        R = D + max(1, math.ceil(math.log(delta / (4 * d) * (1 - lam)) / math.log(lam)))
        for _ in range(8):
            k = np.arange(-R, R + 1)
            line = lam ** np.abs(k).astype(float)
            u = _product(line / math.fsum(line), d)
            du = float(hockey_stick_array(u, shifts, epsilon).max())
            if du <= delta / 2 or u.size > 4e7:
                break
            R = 2 * R
        if du <= delta / 2:
            return u, R, du
    u, R = _uniform_box(delta, D, d)
    return u, R, float(hockey_stick_array(u, shifts, epsilon).max())


def _pad(p: np.ndarray, R_from: int, R_to: int) -> np.ndarray:
    k = R_to - R_from
    return np.pad(p, k) if k > 0 else p


def repair_delta(p: np.ndarray, R: int, epsilon: float, delta: float, D: int,
                 shifts: np.ndarray, per: np.ndarray | None = None,
                 nonnegative: bool = False) -> tuple[np.ndarray, int, np.ndarray, float]:
    """Audit the normalised pmf p on [−R, R]^d for every shift; if some δ(ε) exceeds δ (solver
    tolerances), mix it with a cheap law of δ <= δ/2 (:func:`_safe_box`) at the smallest weight that
    the float audit then accepts (module docstring).  ``per``: p's audit, when the caller has it.
    ``nonnegative`` (1-D, p supported on ℕ): the cheap law is moved right by its half-width Ru, onto
    [0, 2Ru] (a shift of an (ε, δ_u)-DP law is (ε, δ_u)-DP), so that the mixture stays on ℕ.
    Returns (pmf, R, per-shift δ, weight)."""
    d = p.ndim
    if per is None:
        per = hockey_stick_array(p, shifts, epsilon)
    if per.max() <= delta:
        return p, R, per, 0.0
    u, Ru, du = _safe_box(epsilon, delta, D, d)
    Rm = max(R, 2 * Ru if nonnegative else Ru)
    pu, uu = _pad(p, R, Rm), _pad(u, Ru, Rm)
    if nonnegative:
        uu = np.roll(uu, Ru)  # [−Ru, Ru] -> [0, 2Ru] inside [−Rm, Rm] (Rm >= 2Ru: nothing wraps)
    dp = float(per.max())
    # aim below δ by more than the audit's own rounding allowance, and widen the margin if needed
    margin = 64 * _U * (1.0 + delta)
    for _ in range(6):
        target = delta - margin
        lam = min(1.0, (dp - target) / (dp - du)) if dp > du else 1.0
        mix = (1 - lam) * pu + lam * uu
        per = hockey_stick_array(mix, shifts, epsilon)
        if per.max() <= delta:
            break
        margin *= 16
    return mix, Rm, per, lam


