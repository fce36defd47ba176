r"""Privacy of the laws the exact samplers draw, decided in exact or outward-rounded arithmetic.

The exact samplers draw masses/Σ masses with Σ computed exactly, which is not the float
normalisation the solver's audit used; these functions audit that law.

* :func:`max_ratio`: the largest ratio p_i/p_j over pairs at distance <= ``reach`` among
  consecutive lattice points (exact rationals; None when a positive mass meets a zero one).
* :func:`probability_brackets`: floats p_lo <= m_i/Σ m <= p_hi from the exact quotient.
* :func:`hockey_stick_upper`: a float >= Σ_i max(p_i − e^ε q_i, 0) from p_hi, q_lo and a lower
  bound of e^ε, every operation rounded outward.
"""

from __future__ import annotations

import math
from collections import deque
from fractions import Fraction
from math import lcm
from typing import Sequence

import numpy as np

from optmech.exact import reals

__all__ = ["max_ratio", "probability_brackets", "exp_lower", "hockey_stick_upper"]


def max_ratio(masses: Sequence, reach: int) -> Fraction | None:
    """max p_i/p_j over |i − j| <= reach (consecutive points; masses rational, nonnegative).

    >>> max_ratio([1, 2, 4, 2, 1], 1), max_ratio([1, 2, 4, 2, 1], 2), max_ratio([1, 0, 1], 1)
    (Fraction(2, 1), Fraction(4, 1), None)
    """
    fr = [Fraction(m) for m in masses]
    den = 1
    for x in fr:
        den = lcm(den, x.denominator)
    w = [x.numerator * (den // x.denominator) for x in fr]
    size = int(reach) + 1
    hi_q: deque = deque()
    lo_q: deque = deque()
    best = None
    for i, v in enumerate(w):
        while hi_q and w[hi_q[-1]] <= v:
            hi_q.pop()
        hi_q.append(i)
        while lo_q and w[lo_q[-1]] >= v:
            lo_q.pop()
        lo_q.append(i)
        if hi_q[0] <= i - size:
            hi_q.popleft()
        if lo_q[0] <= i - size:
            lo_q.popleft()
        a, b = w[hi_q[0]], w[lo_q[0]]
        if a == 0:
            continue
        if b == 0:
            return None
        if best is None or a * best[1] > best[0] * b:
            best = (a, b)
    return Fraction(1) if best is None else Fraction(best[0], best[1])


def probability_brackets(masses: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Floats (p_lo, p_hi) around m_i/Σ m, Σ exact (masses rational: floats are read exactly)."""
    fr = [Fraction(m) for m in masses]
    total = sum(fr)
    p = np.array([float(x / total) for x in fr])  # correctly rounded quotients
    return np.nextafter(p, 0.0), np.where(p > 0, np.nextafter(p, np.inf), 0.0)


def exp_lower(epsilon) -> float:
    """A float <= e^ε (ε rational or a float read exactly)."""
    lo, _ = reals.exp_pos(Fraction(epsilon), 80)
    return math.nextafter(float(Fraction(lo, 1 << 80)), 0.0)


def hockey_stick_upper(p_hi: np.ndarray, q_lo: np.ndarray, e_lo: float) -> float:
    """A float >= Σ max(p − e q, 0) for p <= p_hi, q >= q_lo, e >= e_lo (all nonnegative).

    >>> hockey_stick_upper(np.array([0.5, 0.5]), np.array([0.25, 0.0]), 1.0) >= 0.75
    True
    """
    prod = np.nextafter(e_lo * q_lo, 0.0)              # <= e q
    t = np.nextafter(p_hi - prod, np.inf)               # >= p − e q
    t = t[t > 0]
    if t.size == 0:
        return 0.0
    return math.nextafter(math.fsum(t.tolist()) * (1 + 4 * 2.0**-53), math.inf)
