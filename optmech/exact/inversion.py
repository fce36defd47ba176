r"""Exact inversion: draw index i with probability exactly c_i − c_{i−1}, from uniform words.

The law is a list of cumulative boundaries 0 < c_0 <= c_1 <= ... (finitely many, the last cell
running to 1, or infinitely many, c_i → 1), each available as a rigorous bracket at any precision
(:mod:`optmech.exact.reals`).  The uniform words w_1 w_2 ... are the binary digits of a uniform
U in [0, 1); the sampler returns the i with c_{i−1} <= U < c_i, deciding it from a prefix of the
digits and the brackets only.

Why the law is exact.  After k words U lies in the dyadic interval I_k = [W, W + 1)·2^{−bk}.
The sampler returns i only when the brackets prove c_{i−1} <= inf I_k and sup I_k <= c_i, so
the returned i satisfies c_{i−1} <= U < c_i for the U of the whole (infinite) digit string;
and it returns with probability 1 (U equals no boundary almost surely, and the brackets shrink
to the boundaries as the precision grows).  Hence P(i) = P(c_{i−1} <= U < c_i) = c_i − c_{i−1}.
Words drawn after the decision belong to the next draw, so draws are independent.

The fast path.  For a table of the first boundaries, integers L_i <= 2^b c_i <= U_i (b = 64) are
stored, U_i − L_i <= 1 but for boundaries within a bracket's width of a multiple of 2^−b (equal
where c_i is known exactly).  A first word w then decides the draw unless L_i <= w < U_i for some
boundary (probability <= table size × 2^{−63}) or w lies beyond the table of an infinite law;
only those draws take the slow path above.  Vectorised: one searchsorted per batch.

Laws with integer weights (:class:`IntegerWeights`) use boundaries S_i·f/2^E with S_i the
prefix sums and f = ⌊2^E/S⌋ (E = bits of S + b), so every boundary is an exact dyadic number and
the cell above S·f/2^E (mass < 2^{−b}) means "reject and draw again".  That makes the law
exactly the weights' and lets the tests enumerate every word string and recover it as fractions.
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from math import lcm
from typing import Callable, Sequence

import numpy as np

from optmech.exact import reals
from optmech.exact.bits import BitSource

__all__ = ["CumulativeLaw", "IntegerWeights", "BracketWeights", "GeometricBoundaries", "Inversion", "Geometric",
           "integer_weights", "uniform_below", "TABLE_SIZE"]

#: Largest fast table (boundaries) of one inversion sampler.
TABLE_SIZE = 1 << 22


class CumulativeLaw:
    """Cumulative boundaries c_0 <= c_1 <= ... <= 1 as brackets (module docstring).

    ``n_boundaries`` is None for infinitely many; ``reject`` is the index of a cell meaning
    "draw again" (None when there is none).
    """

    n_boundaries: int | None = None
    reject: int | None = None

    def boundaries(self, P: int, n: int) -> tuple[list[int], list[int]]:
        """Brackets (lo, hi) at precision P of c_0 .. c_{n−1}."""
        raise NotImplementedError

    def boundary(self, i: int, P: int) -> tuple[int, int]:
        lo, hi = self.boundaries(P, i + 1)
        return lo[i], hi[i]


class IntegerWeights(CumulativeLaw):
    """Outcome i with probability weights[i]/Σ weights exactly (rejection form, module docstring).

    >>> law = IntegerWeights([1, 2, 1])
    >>> law.n_boundaries, law.reject        # Σ = 4 is a power of two: no rejection cell
    (2, None)
    >>> IntegerWeights([1, 1, 1]).reject
    3
    """

    def __init__(self, weights: Sequence[int], extra_bits: int = 64) -> None:
        w = [int(x) for x in weights]
        if not w or any(x < 0 for x in w) or sum(w) == 0:
            raise ValueError("integer weights must be nonnegative with a positive sum")
        self.weights = w
        total = sum(w)
        self.E = total.bit_length() + int(extra_bits)
        self.f = (1 << self.E) // total
        acc, cum = 0, []
        for x in w:
            acc += x
            cum.append(acc * self.f)
        if cum[-1] == 1 << self.E:  # Σ·f = 2^E: the last cell runs to 1
            cum.pop()
            self.reject = None
        else:
            self.reject = len(w)
        self.cum = cum  # scaled by 2^E
        self.n_boundaries = len(cum)

    def boundaries(self, P: int, n: int) -> tuple[list[int], list[int]]:
        s = P - self.E
        if s >= 0:
            lo = [c << s for c in self.cum[:n]]
            return lo, lo
        return [c >> -s for c in self.cum[:n]], [-((-c) >> -s) for c in self.cum[:n]]

    def boundary(self, i: int, P: int) -> tuple[int, int]:
        s = P - self.E
        c = self.cum[i]
        return (c << s, c << s) if s >= 0 else (c >> -s, -((-c) >> -s))


def integer_weights(values: Sequence, extra_bits: int = 64) -> IntegerWeights:
    """:class:`IntegerWeights` of nonnegative rationals (Fractions, ints or floats read exactly)."""
    fr = [Fraction(v) for v in values]
    den = 1
    for x in fr:
        den = lcm(den, x.denominator)
    return IntegerWeights([x.numerator * (den // x.denominator) for x in fr], extra_bits)


class BracketWeights(CumulativeLaw):
    """Outcome i with probability m_i/Σ m for masses known as brackets: ``masses(P)`` returns the
    list of (lo, hi) at precision P (widths of a few units).  Normalised, no rejection: the last
    cell takes what the other boundaries leave."""

    def __init__(self, masses: Callable[[int], list[tuple[int, int]]], n: int) -> None:
        self.masses = masses
        self.n = int(n)
        self.n_boundaries = self.n - 1
        self._cache: dict[int, tuple[list[int], list[int]]] = {}

    def boundaries(self, P: int, n: int) -> tuple[list[int], list[int]]:
        if P not in self._cache:
            G = 16 + 2 * self.n.bit_length()
            Q = P + G
            m = self.masses(Q)
            s_lo = s_hi = 0
            cl, ch = [], []
            for lo, hi in m:
                s_lo += lo
                s_hi += hi
                cl.append(s_lo)
                ch.append(s_hi)
            z = (cl[-1], ch[-1])
            lo_out = [(a << P) // z[1] for a in cl[:-1]]
            hi_out = [min(-((-(b << P)) // z[0]), 1 << P) for b in ch[:-1]]
            if len(self._cache) > 8:
                self._cache.clear()
            self._cache[P] = (lo_out, hi_out)
        lo, hi = self._cache[P]
        return lo[:n], hi[:n]


class GeometricBoundaries(CumulativeLaw):
    """c_j = 1 − ρ^{j+1} for j < J (cells 0..J−1: P(j) = (1−ρ)ρ^j) and the cell J = [1 − ρ^J, 1)
    (the overflow: J plus a fresh geometric, by memorylessness); ``ratio(P)`` brackets ρ."""

    def __init__(self, ratio: Callable[[int], tuple[int, int]], J: int) -> None:
        self.ratio = ratio
        self.n_boundaries = int(J)

    def boundaries(self, P: int, n: int) -> tuple[list[int], list[int]]:
        G = 16 + 2 * max(n, 1).bit_length()
        Q = P + G
        rho = self.ratio(Q)
        one = 1 << P
        lo, hi = [], []
        pw = rho
        for _ in range(n):
            a, b = reals.rescale(pw, Q, P)
            lo.append(one - b)
            hi.append(one - a)
            pw = reals.mul(pw, rho, Q)
        return lo, hi


class Inversion:
    """The exact inversion sampler of a :class:`CumulativeLaw` (module docstring).

    ``draw(n, source)`` returns n indices (rejections already redrawn); ``draw_one(source)``
    is the same algorithm one draw at a time (no table shortcut beyond the first word), used by
    the enumeration proofs.

    >>> from optmech.exact.bits import bit_source
    >>> inv = Inversion(IntegerWeights([1, 2, 1]))
    >>> idx = inv.draw(100_000, bit_source(1))
    >>> len(np.bincount(idx)), bool(abs(np.mean(idx == 1) - 0.5) < 0.01)
    (3, True)
    """

    guard = 16

    def __init__(self, law: CumulativeLaw, word_bits: int = 64, table_size: int = 4096) -> None:
        self.law = law
        self.wb = int(word_bits)
        m = law.n_boundaries
        self.infinite = m is None
        self.m = int(table_size) if m is None else int(m)
        if self.m > TABLE_SIZE:
            raise ValueError(f"an exact sampler table of {self.m} boundaries exceeds {TABLE_SIZE}")
        self._build()

    def _build(self) -> None:
        """Word-level bounds of every table boundary: L_i <= 2^b c_i <= U_i (running maxima, so
        both are nondecreasing; still bounds, the c_i being nondecreasing).  Exact boundaries have
        L_i = U_i; a boundary whose bracket straddles a multiple of 2^−b (or equals one without
        being known exactly) has U_i − L_i = 2 and sends two words to the exact path."""
        wb, m = self.wb, self.m
        top = (1 << wb) - 1
        g = 32 + 2 * max(m, 1).bit_length()
        lo, hi = self.law.boundaries(wb + g, m)
        L, U, run_l, run_u = [], [], 0, 0
        for a, b in zip(lo, hi):
            run_l = max(run_l, min(a >> g, top))
            run_u = max(run_u, -((-b) >> g))
            L.append(run_l)
            U.append(run_u)
        self.lower, self.upper = L, U
        self.lower_arr = np.array(L, dtype=np.uint64)
        # w >= U_i  <=>  w > U_i − 1 (U_i <= 2^b fits as U_i − 1; U_i = 0 is sent to the exact path at w = 0)
        self.upper_m1_arr = np.array([max(u - 1, 0) for u in U], dtype=np.uint64)

    # -- one draw -----------------------------------------------------------------------------
    def locate(self, w: int, source: BitSource) -> int:
        """The cell of U given its first word w, drawing more words while undecided."""
        wb = self.wb
        a = bisect_right(self.upper, w)  # boundaries 0..a−1: c_i <= U_i/2^b <= w/2^b <= U
        b = bisect_right(self.lower, w)  # boundaries b..: c_i >= L_i/2^b >= (w + 1)/2^b > U
        end = None if (self.infinite and b == self.m) else b
        if a == end:
            return a
        W, k, g = w, 1, self.guard
        while True:
            P = wb * k + g
            lo_u, hi_u = W << g, (W + 1) << g
            i = a
            while end is None or i < end:
                lo_c, hi_c = self.law.boundary(i, P)
                if hi_c <= lo_u:
                    i += 1
                    continue
                if lo_c >= hi_u:
                    return i
                break
            else:
                return i
            a = i
            W = (W << wb) | source.word()
            k += 1

    def draw_one(self, source: BitSource) -> int:
        while True:
            i = self.locate(source.word(), source)
            if i != self.law.reject:
                return i

    # -- many draws ---------------------------------------------------------------------------
    def fast(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index, decided) for first words w: decided where one word settles the cell."""
        idx = np.searchsorted(self.lower_arr, w, side="right")
        if self.m == 0:
            return idx, np.ones(w.shape, dtype=bool)
        last = np.maximum(idx - 1, 0)
        decided = (idx == 0) | (w > self.upper_m1_arr[last])
        if self.infinite:
            decided &= idx < self.m
        return idx, decided

    def draw(self, n: int, source: BitSource) -> np.ndarray:
        if source.word_bits != self.wb:
            raise ValueError(f"this sampler's table is for {self.wb}-bit words, the source gives {source.word_bits}")
        out = np.empty(int(n), dtype=np.int64)
        todo = np.arange(int(n))
        while todo.size:
            w = source.words(todo.size)
            idx, decided = self.fast(w)
            for j in np.flatnonzero(~decided):
                idx[j] = self.locate(int(w[j]), source)
            out[todo] = idx
            if self.law.reject is None:
                break
            todo = todo[idx == self.law.reject]
        return out


class Geometric:
    """G with P(G = j) = (1 − ρ)ρ^j, j >= 0, exactly.

    ``ratio`` is a rational (Fraction, int or float read exactly) or a callable P → bracket of an
    irrational ρ.  A table of J cells plus the overflow cell [1 − ρ^J, 1), which restarts at J
    (memorylessness).  For ρ > 1/2, G = L·G' + R with G' geometric of ratio ρ^L <= 1/2 and R the
    geometric truncated to [0, L) (independent; P(L·g + r) = (1 − ρ)ρ^{Lg + r}).

    >>> from optmech.exact.bits import bit_source
    >>> g = Geometric(Fraction(1, 2)).sample(200_000, bit_source(3))
    >>> bool(abs(g.mean() - 1.0) < 0.02), int(g.min())
    (True, 0)
    """

    def __init__(self, ratio, word_bits: int = 64, overflow_bits: int = 24) -> None:
        self.wb = word_bits
        self.rational = not callable(ratio)
        if self.rational:
            rho = Fraction(ratio)
            if not 0 <= rho < 1:
                raise ValueError("a geometric ratio must lie in [0, 1)")
            bound = float(rho)
        else:
            lo, hi = ratio(64)
            bound = hi / 2.0**64
            if not (lo >= 0 and bound < 1):
                raise ValueError("a geometric ratio must lie in [0, 1)")
        self.L = 1
        self.rest: Inversion | None = None
        if bound > 0.5:
            import math

            self.L = max(1, int(math.ceil(math.log(0.5) / math.log(bound))))
            L = self.L
            if self.rational:
                a, c = rho.numerator, rho.denominator
                self.rest = Inversion(IntegerWeights([a**r * c ** (L - 1 - r) for r in range(L)]), word_bits)
                rho = rho**L
            else:
                base = ratio

                def trunc(P, base=base, L=L):
                    r = base(P)
                    out, pw = [], (1 << P, 1 << P)
                    for _ in range(L):
                        out.append(pw)
                        pw = reals.mul(pw, r, P)
                    return out

                self.rest = Inversion(BracketWeights(trunc, L), word_bits)
                ratio = _power_of(base, L)
            bound = bound**L
        if self.rational:
            if rho == 0:
                self.J, self.head = 0, None
                return
            a, c = rho.numerator, rho.denominator
            import math

            J = max(1, int(math.ceil(overflow_bits / -math.log2(max(float(rho), 1e-300)))))
            J = min(J, 64)
            weights = [(c - a) * a**j * c ** (J - 1 - j) for j in range(J)] + [a**J]
            self.head = Inversion(IntegerWeights(weights), word_bits)
        else:
            import math

            J = max(1, min(64, int(math.ceil(overflow_bits / -math.log2(max(bound, 1e-300))))))
            self.head = Inversion(GeometricBoundaries(ratio, J), word_bits)
        self.J = J

    def sample(self, n: int, source: BitSource) -> np.ndarray:
        out = np.zeros(int(n), dtype=np.int64)
        if self.head is not None:
            todo = np.arange(int(n))
            while todo.size:
                j = self.head.draw(todo.size, source)
                out[todo] += j
                todo = todo[j == self.J]
        if self.L > 1:
            out = out * self.L + self.rest.draw(int(n), source)
        return out


def _power_of(ratio: Callable[[int], tuple[int, int]], L: int) -> Callable[[int], tuple[int, int]]:
    def f(P: int) -> tuple[int, int]:
        G = 8 + 2 * L.bit_length()
        return reals.rescale(reals.power(ratio(P + G), L, P + G), P + G, P)

    return f


def uniform_below(m: np.ndarray, source: BitSource) -> np.ndarray:
    """Uniform integers in [0, m_i) for each m_i >= 1 (masked rejection: exact).

    >>> from optmech.exact.bits import bit_source
    >>> x = uniform_below(np.full(60_000, 3), bit_source(2))
    >>> sorted(set(x.tolist())), bool(abs(np.mean(x == 2) - 1 / 3) < 0.01)
    ([0, 1, 2], True)
    """
    m = np.asarray(m, dtype=np.uint64)
    out = np.zeros(m.shape, dtype=np.int64)
    if m.size == 0:
        return out
    if np.any(m == 0):
        raise ValueError("uniform_below needs m >= 1")
    if source.word_bits < 64 and int(m.max()) > 1 << source.word_bits:
        raise ValueError("uniform_below needs m <= 2^word_bits")
    # mask = 2^bitlen(m − 1) − 1, by smearing the bits of m − 1 to the right
    v = m - np.uint64(1)
    for s in (1, 2, 4, 8, 16, 32):
        v |= v >> np.uint64(s)
    todo = np.arange(m.size)
    mv = m.ravel()
    vv = v.ravel()
    flat = out.ravel()
    while todo.size:
        x = source.words(todo.size) & vv[todo]
        ok = x < mv[todo]
        flat[todo[ok]] = x[ok].astype(np.int64)
        todo = todo[~ok]
    return flat.reshape(m.shape)
