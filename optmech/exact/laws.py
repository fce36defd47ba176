r"""Exact samplers of the law shapes optmech produces, built on :mod:`optmech.exact.inversion`.

Masses come either as rationals (Fractions, ints, floats read exactly: the solver's dyadic
weights) or as a callable ``P -> list of (lo, hi)`` brackets at precision P (closed forms with
e^{−ε}).  Rational laws are sampled by :class:`~optmech.exact.inversion.IntegerWeights` (exact
dyadic boundaries), bracketed ones by normalised bracket boundaries; both are exact.

* :class:`Periodic1D`: a window of masses on consecutive integers plus, on each side, a tail
  whose masses repeat one period scaled by a ratio per period (the solver's 1-D output, the
  discrete Laplace and staircase laws).  A draw picks the window point or a tail by inversion;
  in a tail, the offset inside the period (inversion) and the number of whole periods (an exact
  geometric) are independent, because the tail mass at offset s after M periods is h_s ρ^M.
* :class:`Finite`: finitely many points (any dimension) with rational masses.
* :class:`Series`: infinitely many outcomes 0, 1, 2, ... with bracketed masses and a bracketed
  total (the discrete Gaussian's |X|, the ℓ1 radius of the d-D discrete staircase).
* :func:`uniform_l1_sphere`: a uniform lattice point of {x ∈ ℤ^d : ‖x‖₁ = r}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from optmech.exact import reals
from optmech.exact.bits import BitSource
from optmech.exact.inversion import (BracketWeights, CumulativeLaw, Geometric, Inversion, integer_weights,
                                     uniform_below)

__all__ = ["Tail", "Periodic1D", "Finite", "Series", "uniform_l1_sphere", "random_signs", "random_permutations",
           "exp_powers", "discrete_laplace", "discrete_staircase", "DiscreteGaussianAbs", "DiscreteStaircaseL1",
           "l1_sphere_size"]

Masses = Sequence | Callable[[int], list]


def _is_rational(m) -> bool:
    return not callable(m)


@dataclass
class Tail:
    """One tail of a :class:`Periodic1D` law: the points start + direction·(s + M·period) for
    offsets 0 <= s < period and M >= 0 carry first[s]·ratio^M.

    ``first`` is the masses of the first period (rationals or a bracket callable), ``ratio`` a
    rational or a bracket callable, 0 <= ratio < 1.
    """

    start: int
    direction: int
    first: Masses
    ratio: object
    period: int = 0  # the number of offsets; taken from ``first`` when it is a list

    def __post_init__(self) -> None:
        if _is_rational(self.first):
            self.period = len(self.first)
        if self.period < 1:
            raise ValueError("a tail needs a period >= 1")


class Periodic1D:
    """Exact sampler of a window plus periodic geometric tails (module docstring).

    >>> from fractions import Fraction as F
    >>> from optmech.exact.bits import bit_source
    >>> law = Periodic1D(-1, [F(1, 4), F(1, 2), F(1, 4)], [])   # finite: P(−1) = 1/4, P(0) = 1/2, P(1) = 1/4
    >>> x = law.sample(100_000, bit_source(0))
    >>> sorted(set(x.tolist())), bool(abs(np.mean(x == 0) - 0.5) < 0.01)
    ([-1, 0, 1], True)
    """

    def __init__(self, k_lo: int, window: Masses, tails: Sequence[Tail], *, n_window: int | None = None,
                 word_bits: int = 64) -> None:
        self.k_lo = int(k_lo)
        self.rational = _is_rational(window)
        self.n_window = len(window) if self.rational else int(n_window)
        self.tails = [t for t in tails if t is not None]
        self.wb = word_bits
        if self.rational:
            tail_mass = []
            for t in self.tails:
                rho = Fraction(t.ratio)
                tail_mass.append(sum(Fraction(v) for v in t.first) / (1 - rho))
            masses = [Fraction(v) for v in window] + tail_mass
            keep = [i for i, t in enumerate(self.tails) if tail_mass[i] > 0]
            self.top = Inversion(integer_weights(masses, word_bits), word_bits)
            self.offsets = [Inversion(integer_weights(t.first, word_bits), word_bits) if i in keep else None
                            for i, t in enumerate(self.tails)]
            self.geometric = [Geometric(Fraction(t.ratio), word_bits) if i in keep else None
                              for i, t in enumerate(self.tails)]
        else:
            def top(P: int) -> list:
                out = list(window(P))
                for t in self.tails:
                    first = t.first(P)
                    s = (sum(a for a, _ in first), sum(b for _, b in first))
                    one = 1 << P
                    r = t.ratio(P)
                    out.append(reals.div(s, (one - r[1], one - r[0]), P))
                return out

            self.top = Inversion(BracketWeights(top, self.n_window + len(self.tails)), word_bits)
            self.offsets = [Inversion(BracketWeights(t.first, t.period), word_bits) for t in self.tails]
            self.geometric = [Geometric(t.ratio, word_bits) for t in self.tails]
        self.periods = [t.period for t in self.tails]

    def sample(self, n: int, source: BitSource) -> np.ndarray:
        idx = self.top.draw(int(n), source)
        out = self.k_lo + idx
        for j, t in enumerate(self.tails):
            sel = np.flatnonzero(idx == self.n_window + j)
            if sel.size:
                s = self.offsets[j].draw(sel.size, source)
                m = self.geometric[j].sample(sel.size, source)
                out[sel] = t.start + t.direction * (s + m * self.periods[j])
        return out


class Finite:
    """Exact sampler of finitely many points (rows of ``points``) with rational masses.

    >>> from optmech.exact.bits import bit_source
    >>> law = Finite(np.array([[0, 0], [1, 0], [0, 1]]), [2, 1, 1])
    >>> x = law.sample(40_000, bit_source(5))
    >>> x.shape, bool(abs(np.mean(x.sum(axis=1) == 0) - 0.5) < 0.02)
    ((40000, 2), True)
    """

    def __init__(self, points: np.ndarray, masses: Sequence, word_bits: int = 64) -> None:
        self.points = np.asarray(points)
        self.inv = Inversion(integer_weights(masses, word_bits), word_bits)

    def sample(self, n: int, source: BitSource) -> np.ndarray:
        return self.points[self.inv.draw(int(n), source)]


class _SeriesLaw(CumulativeLaw):
    """c_i = S_i/Z for infinitely many bracketed masses (``masses(P, n)``) and a bracketed total."""

    n_boundaries = None

    def __init__(self, masses: Callable[[int, int], list], total: Callable[[int], tuple[int, int]]) -> None:
        self.masses, self.total = masses, total
        self._cache: dict[int, tuple[list[int], list[int]]] = {}

    def boundaries(self, P: int, n: int) -> tuple[list[int], list[int]]:
        have = self._cache.get(P)
        if have is None or len(have[0]) < n:
            m = max(n, 2 * len(have[0]) if have else n)
            G = 16 + 2 * max(m, 1).bit_length()
            Q = P + G
            z = self.total(Q)
            lo, hi, s_lo, s_hi = [], [], 0, 0
            for a, b in self.masses(Q, m):
                s_lo += a
                s_hi += b
                lo.append((s_lo << P) // z[1])
                hi.append(min(-((-(s_hi << P)) // z[0]), 1 << P))
            if len(self._cache) > 8:
                self._cache.clear()
            self._cache[P] = have = (lo, hi)
        return have[0][:n], have[1][:n]


class Series:
    """Exact sampler of outcomes 0, 1, 2, ... with bracketed masses: ``masses(P, n)`` (the first n)
    and ``total(P)`` (Σ of all, a rigorous bracket); the table covers the first ``table`` outcomes
    and the rest is searched exactly when reached."""

    def __init__(self, masses: Callable[[int, int], list], total: Callable[[int], tuple[int, int]], table: int,
                 word_bits: int = 64) -> None:
        self.inv = Inversion(_SeriesLaw(masses, total), word_bits, table_size=table)

    def sample(self, n: int, source: BitSource) -> np.ndarray:
        return self.inv.draw(int(n), source)


def random_signs(x: np.ndarray, source: BitSource) -> np.ndarray:
    """x with each coordinate's sign flipped by an independent fair bit."""
    bits = uniform_below(np.full(x.shape, 2, dtype=np.uint64), source)
    return np.where(bits == 1, -x, x)


def random_permutations(x: np.ndarray, source: BitSource) -> np.ndarray:
    """Each row of x with its coordinates in a uniform random order (Fisher–Yates, exact)."""
    x = x.copy()
    n, d = x.shape
    rows = np.arange(n)
    for i in range(d - 1, 0, -1):
        j = uniform_below(np.full(n, i + 1, dtype=np.uint64), source)
        a = x[rows, i].copy()
        x[rows, i] = x[rows, j]
        x[rows, j] = a
    return x


def uniform_l1_sphere(r: np.ndarray, d: int, source: BitSource) -> np.ndarray:
    """Uniform points of {x ∈ ℤ^d : ‖x‖₁ = r_i}, shape (len(r), d), exactly.

    |x| is a uniform composition of r into d nonnegative parts (d − 1 distinct bar positions
    among r + d − 1, duplicates redrawn); d fair sign bits follow, and a draw whose sign bit is
    set on a zero coordinate is rejected.  Each sphere point x then arises from exactly one
    accepted (composition, signs) pair, all equally likely: the accepted draws are uniform.

    >>> from optmech.exact.bits import bit_source
    >>> x = uniform_l1_sphere(np.full(30_000, 2), 2, bit_source(4))   # 8 points: (±2, 0), (0, ±2), (±1, ±1)
    >>> bool(np.all(np.abs(x).sum(axis=1) == 2)), len({tuple(p) for p in x.tolist()})
    (True, 8)
    """
    r = np.asarray(r, dtype=np.int64)
    out = np.zeros((r.size, d), dtype=np.int64)
    todo = np.arange(r.size)
    while todo.size:
        rr = r[todo]
        slots = (rr + d - 1).astype(np.uint64)
        if d == 1:
            parts = rr[:, None]
        else:
            bars = np.empty((todo.size, d - 1), dtype=np.int64)
            pending = np.arange(todo.size)
            while pending.size:
                b = uniform_below(np.repeat(slots[pending, None], d - 1, axis=1), source)
                b.sort(axis=1)
                ok = np.all(b[:, 1:] != b[:, :-1], axis=1) if d > 2 else np.ones(pending.size, dtype=bool)
                bars[pending[ok]] = b[ok]
                pending = pending[~ok]
            edges = np.concatenate([np.full((todo.size, 1), -1), bars, (rr + d - 1)[:, None]], axis=1)
            parts = np.diff(edges, axis=1) - 1
        signs = uniform_below(np.full((todo.size, d), 2, dtype=np.uint64), source)
        ok = ~np.any((signs == 1) & (parts == 0), axis=1)
        out[todo[ok]] = np.where(signs[ok] == 1, -parts[ok], parts[ok])
        todo = todo[~ok]
    return out


# ------------------------------------------------------------------------------------------------
# closed forms with e^{−x}: bracketed masses
# ------------------------------------------------------------------------------------------------
def exp_powers(x: Fraction, n: int) -> Callable[[int], list]:
    """P ↦ brackets of e^{−x j} for j = 0..n−1 (products with guard bits, cached per P)."""
    cache: dict[int, list] = {}
    G = 8 + 2 * max(n, 1).bit_length()

    def f(P: int) -> list:
        if P not in cache:
            Q = P + G
            q = reals.exp_neg(x, Q)
            out, pw = [], (1 << Q, 1 << Q)
            for _ in range(n):
                out.append(reals.rescale(pw, Q, P))
                pw = reals.mul(pw, q, Q)
            if len(cache) > 8:
                cache.clear()
            cache[P] = out
        return cache[P]

    return f


def _periods(rate: float, width: int) -> int:
    """Periods in the window: the tail beyond holds about 2^−10 of the mass; at most 2^16 points."""
    return max(1, min(int(math.ceil(10 * math.log(2) / rate)), max(1, (1 << 16) // width)))


def discrete_laplace(gamma: Fraction, word_bits: int = 64) -> Periodic1D:
    """P(k) ∝ e^{−γ|k|} on ℤ (γ > 0 rational): window |k| < L, tails of period L, ratio e^{−γL}.

    >>> from optmech.exact.bits import bit_source
    >>> x = discrete_laplace(Fraction(1)).sample(200_000, bit_source(9))
    >>> q = math.exp(-1); bool(abs(np.mean(x == 0) - (1 - q) / (1 + q)) < 0.005)
    True
    """
    gamma = Fraction(gamma)
    L = _periods(float(gamma), 2)
    pw = exp_powers(gamma, 2 * L)

    def window(P):
        p = pw(P)
        return p[L - 1:0:-1] + p[:L]

    first = (lambda P: pw(P)[L:2 * L])
    ratio = (lambda P: reals.exp_neg(gamma * L, P))
    tails = [Tail(L, 1, first, ratio, L), Tail(-L, -1, first, ratio, L)]
    return Periodic1D(-(L - 1), window, tails, n_window=2 * L - 1, word_bits=word_bits)


def discrete_staircase(epsilon: Fraction, sensitivity: int, r: int, word_bits: int = 64) -> Periodic1D:
    """P(k) ∝ b^{level(|k|)}, b = e^{−ε}, level(n) = ⌊n/Δ⌋ + [n mod Δ >= r] [Geng13, (2.17)].

    >>> from optmech.exact.bits import bit_source
    >>> x = discrete_staircase(Fraction(1), 3, 2).sample(200_000, bit_source(2))
    >>> bool(abs(np.mean(x == 0) / np.mean(x == 2) - math.e) < 0.1)
    True
    """
    epsilon, D, r = Fraction(epsilon), int(sensitivity), int(r)
    L = _periods(float(epsilon), 2 * D)
    pw = exp_powers(epsilon, L + 2)
    levels = [n // D + (n % D >= r) for n in range(L * D)]

    def window(P):
        p = pw(P)
        one_side = [p[v] for v in levels]
        return one_side[:0:-1] + one_side

    def first(P):
        p = pw(P)
        return [p[L + (s >= r)] for s in range(D)]

    ratio = (lambda P: reals.exp_neg(epsilon, P))
    tails = [Tail(L * D, 1, first, ratio, D), Tail(-L * D, -1, first, ratio, D)]
    return Periodic1D(-(L * D - 1), window, tails, n_window=2 * L * D - 1, word_bits=word_bits)


class DiscreteGaussianAbs:
    """|X| for the discrete Gaussian p(k) ∝ e^{−k²/(2σ²)}: masses 1 at 0 and 2e^{−k²/(2σ²)} at k >= 1,
    the total bracketed by a partial sum and the ratio bound w_{k+1}/w_k <= e^{−(2K+3)/(2σ²)}
    for k > K [derived]; a fair sign follows (see :meth:`sample`)."""

    def __init__(self, sigma: Fraction, word_bits: int = 64) -> None:
        self.c = 1 / (2 * Fraction(sigma) ** 2)
        s = float(sigma)
        table = int(math.ceil(s * math.sqrt(2 * 48 * math.log(2)))) + 2
        self.series = Series(self.masses, self.total, table, word_bits)

    def masses(self, P: int, n: int) -> list:
        q, q2 = reals.exp_neg(self.c, P), reals.exp_neg(2 * self.c, P)
        out, e, f = [], (1 << P, 1 << P), q
        for k in range(n):
            out.append(e if k == 0 else (2 * e[0], 2 * e[1]))
            e = reals.mul(e, f, P)
            f = reals.mul(f, q2, P)
        return out

    def total(self, P: int) -> tuple[int, int]:
        s = math.sqrt(1 / (2 * float(self.c)))
        K = int(math.ceil(s * math.sqrt(2 * (P + 8) * math.log(2)))) + 2
        G = 8 + 2 * K.bit_length()
        Q = P + G
        m = self.masses(Q, K + 2)
        lo = sum(a for a, _ in m[:K + 1])
        hi = sum(b for _, b in m[:K + 1])
        rho = reals.exp_neg((2 * K + 3) * self.c, Q)
        one = 1 << Q
        tail = reals.div(m[K + 1], (one - rho[1], one - rho[0]), Q)
        return reals.rescale((lo, hi + tail[1]), Q, P)

    def sample(self, n: int, source: BitSource) -> np.ndarray:
        a = self.series.sample(n, source)
        return random_signs(a, source)


def l1_sphere_size(k: int, d: int) -> int:
    """#{x ∈ ℤ^d : ‖x‖₁ = k} = Σ_j 2^j C(d, j) C(k − 1, j − 1) (1 at k = 0), exactly."""
    if k == 0:
        return 1
    return sum(2**j * math.comb(d, j) * math.comb(k - 1, j - 1) for j in range(1, min(d, k) + 1))


class DiscreteStaircaseL1:
    r"""The d-D discrete staircase P(x) ∝ b^{level(‖x‖₁)} on ℤ^d, level(k) = ⌊k/Δ⌋ + [k mod Δ >= r].

    The radius ‖X‖₁ has masses N_d(k) b^{level(k)} (N_d the sphere sizes), drawn by exact
    inversion of a :class:`Series`; then a uniform point of that sphere (:func:`uniform_l1_sphere`).
    The total is bracketed by a partial sum up to R and the tail bound [derived]: for k > R,
    term(k + Δ)/term(k) <= ρ = b·(1 + Δ/(R + 2 − d))^{d−1} (φ drops by exactly b over a period;
    each C(k − 1, j − 1) grows by at most that factor), so the tail is at most the next period's
    sum over 1 − ρ.

    >>> from optmech.exact.bits import bit_source
    >>> x = DiscreteStaircaseL1(Fraction(1), 2, 1, 3).sample(20_000, bit_source(6))
    >>> x.shape, int(np.abs(x).sum(axis=1).min())
    ((20000, 3), 0)
    """

    def __init__(self, epsilon: Fraction, sensitivity: int, r: int, d: int, word_bits: int = 64) -> None:
        self.eps, self.D, self.r, self.d = Fraction(epsilon), int(sensitivity), int(r), int(d)
        b = math.exp(-float(self.eps))
        # table: radii until the float estimate of the remaining mass is below 2^-44 of the total
        terms, k, total = [], 0, 0.0
        while True:
            t = l1_sphere_size(k, self.d) * b ** self._level(k)
            terms.append(t)
            total += t
            if k > self.d and k % self.D == 0:
                rho = b * (1 + self.D / (k + 2 - self.d)) ** (self.d - 1)
                if rho < 1 and t * self.D / (1 - rho) < 2.0**-44 * total:
                    break
            k += 1
            if k >= 1 << 22:
                break
        self.series = Series(self.masses, self.total, len(terms), word_bits)

    def _level(self, k: int) -> int:
        return k // self.D + (k % self.D >= self.r)

    def masses(self, P: int, n: int) -> list:
        pw = exp_powers(self.eps, (n - 1) // self.D + 2)(P)
        out = []
        for k in range(n):
            N = l1_sphere_size(k, self.d)
            a, c = pw[self._level(k)]
            out.append((N * a, N * c))
        return out

    def total(self, P: int) -> tuple[int, int]:
        b = math.exp(-float(self.eps))
        R = self.D * max(1, -(-(self.d + 1) // self.D))
        while True:
            rho = b * (1 + self.D / (R + 2 - self.d)) ** (self.d - 1)
            if rho < (1 + b) / 2:
                est = l1_sphere_size(R, self.d) * b ** self._level(R) * self.D / (1 - rho)
                if est < 2.0 ** -(P + 8):
                    break
            R += self.D
        G = 8 + 2 * (R + self.D).bit_length()
        Q = P + G
        m = self.masses(Q, R + self.D + 1)
        lo = sum(a for a, _ in m[:R + 1])
        hi = sum(c for _, c in m[:R + 1])
        block = sum(c for _, c in m[R + 1:])
        b_hi = reals.exp_neg(self.eps, Q)[1]
        growth = Fraction(R + 2 - self.d + self.D, R + 2 - self.d) ** (self.d - 1)
        rho_hi = -((-(b_hi * growth.numerator)) // growth.denominator)  # at precision Q, rounded up
        if rho_hi >= 1 << Q:
            raise ArithmeticError("the staircase tail bound did not converge")
        tail = -((-(block << Q)) // ((1 << Q) - rho_hi))
        return reals.rescale((lo, hi + tail), Q, P)

    def sample(self, n: int, source: BitSource) -> np.ndarray:
        radius = self.series.sample(n, source)
        return uniform_l1_sphere(radius, self.d, source)
