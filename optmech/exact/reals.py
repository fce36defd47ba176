r"""Rigorous brackets of real numbers with integer arithmetic only.

A bracket at precision P is a pair of Python ints (lo, hi) with lo·2^−P <= x <= hi·2^−P.  The
operations round outward (floors for the lower end, ceilings for the upper end), so every bracket
computed here contains the true value, whatever the precision; a higher precision only narrows it.
Products and quotients assume nonnegative operands (all masses are).

:func:`exp_neg` brackets e^{−x} for a rational x >= 0: e^{−f} (0 <= f < 1) by its alternating
Taylor series, whose partial sums enclose the value (terms f^k/k! decrease), each term itself
bracketed; then e^{−⌊x⌋} = (e^{−1})^{⌊x⌋} by outward-rounded binary powering.

>>> from fractions import Fraction
>>> lo, hi = exp_neg(Fraction(1), 64)
>>> e_inv = sum(Fraction((-1) ** k, math.factorial(k)) for k in range(40))   # within 1e-47 of 1/e
>>> lo <= e_inv * 2**64 <= hi, hi - lo <= 4
(True, True)
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

__all__ = ["Bracket", "frac", "mul", "div", "add", "sub", "power", "exp_neg", "exp_pos", "rescale",
           "log_upper", "ratio_within"]

Bracket = tuple  # (lo, hi) at an implied precision P


def frac(x, P: int) -> tuple[int, int]:
    """Bracket of a rational (Fraction, int or float read exactly) at precision P."""
    x = Fraction(x)
    num = x.numerator << P if P >= 0 else x.numerator
    den = x.denominator if P >= 0 else x.denominator << -P
    q, r = divmod(num, den)
    return (q, q + (1 if r else 0))


def mul(a, b, P: int) -> tuple[int, int]:
    """Product of two nonnegative brackets at precision P."""
    return ((a[0] * b[0]) >> P, -((-(a[1] * b[1])) >> P))


def div(a, b, P: int) -> tuple[int, int]:
    """Quotient a/b of nonnegative brackets (b > 0) at precision P."""
    return ((a[0] << P) // b[1], -((-(a[1] << P)) // b[0]))


def add(a, b) -> tuple[int, int]:
    return (a[0] + b[0], a[1] + b[1])


def sub(a, b) -> tuple[int, int]:
    return (a[0] - b[1], a[1] - b[0])


def rescale(a, P_from: int, P_to: int) -> tuple[int, int]:
    """The same bracket at a lower precision P_to <= P_from (outward)."""
    s = P_from - P_to
    if s < 0:
        return (a[0] << -s, a[1] << -s)
    return (a[0] >> s, -((-a[1]) >> s))


def power(a, n: int, P: int) -> tuple[int, int]:
    """a^n for a nonnegative bracket and an integer n >= 0 (binary powering, outward)."""
    result = (1 << P, 1 << P)
    base = a
    while n:
        if n & 1:
            result = mul(result, base, P)
        n >>= 1
        if n:
            base = mul(base, base, P)
    return result


def _exp_neg_unit(f: Fraction, P: int) -> tuple[int, int]:
    """e^{−f} for 0 <= f <= 1: alternating series with bracketed terms (module docstring)."""
    p, q = f.numerator, f.denominator
    lo_t = hi_t = 1 << P  # bracket of the term f^k/k!
    lo, hi = lo_t, hi_t
    k = 0
    while hi_t > 0:
        k += 1
        lo_t = (lo_t * p) // (q * k)
        hi_t = -((-(hi_t * p)) // (q * k))
        if k % 2:
            lo, hi = lo - hi_t, hi - lo_t
        else:
            lo, hi = lo + lo_t, hi + hi_t
        if hi_t <= 1:
            # the remainder after term k is at most the next term <= this one
            lo, hi = lo - 1, hi + 1
            break
    return (max(lo, 0), hi)


@lru_cache(maxsize=64)
def _exp_neg_one(P: int) -> tuple[int, int]:
    return _exp_neg_unit(Fraction(1), P)


@lru_cache(maxsize=4096)
def exp_neg(x, P: int) -> tuple[int, int]:
    """Bracket of e^{−x} at precision P for a rational x >= 0 (Fraction, int or float read exactly).

    >>> from fractions import Fraction
    >>> lo, hi = exp_neg(Fraction(5, 2), 80)
    >>> abs(lo / 2**80 - math.exp(-2.5)) < 1e-16, hi - lo <= 4
    (True, True)
    """
    x = Fraction(x)
    if x < 0:
        raise ValueError("exp_neg needs x >= 0")
    n = math.floor(x)
    f = x - n
    G = 8 + 2 * max(n, 1).bit_length()
    Q = P + G
    r = _exp_neg_unit(f, Q)
    if n:
        r = mul(r, power(_exp_neg_one(Q), n, Q), Q)
    return rescale(r, Q, P)


def exp_pos(x, P: int) -> tuple[int, int]:
    """Bracket of e^{x} for a rational x >= 0 (the reciprocal of :func:`exp_neg`)."""
    G = 8 + 2 * max(math.ceil(Fraction(x)), 1).bit_length()
    e = exp_neg(x, P + G)
    one = (1 << (P + G), 1 << (P + G))
    return rescale(div(one, e, P + G), P + G, P)


def ratio_within(ratio: Fraction, epsilon) -> bool:
    """Whether ratio <= e^ε exactly (ε a float or rational >= 0; brackets refined until decided).

    >>> from fractions import Fraction
    >>> ratio_within(Fraction(271828, 100000), 1), ratio_within(Fraction(271829, 100000), 1)
    (True, False)
    """
    ratio = Fraction(ratio)
    P = 64
    while P <= 1 << 16:
        lo, hi = exp_pos(Fraction(epsilon), P)
        r_lo, r_hi = frac(ratio, P)
        if r_hi <= lo:
            return True
        if r_lo > hi:
            return False
        P *= 2
    # e^ε is irrational for rational ε != 0; equality can only happen at ε = 0, ratio = 1
    return ratio <= 1


def log_upper(ratio: Fraction) -> float:
    """A float >= ln(ratio) (ratio > 0 rational): 50-digit logarithm, then two ulps up."""
    import mpmath

    ratio = Fraction(ratio)
    if ratio == 1:
        return 0.0
    with mpmath.workdps(50):
        v = mpmath.log(mpmath.mpf(ratio.numerator)) - mpmath.log(mpmath.mpf(ratio.denominator))
        f = float(v)
    return math.nextafter(math.nextafter(f, math.inf), math.inf)
