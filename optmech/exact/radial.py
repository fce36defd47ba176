r"""Exact laws on ℤ^d with infinitely many outcomes and exact rational masses.

The solvers' d-D laws have rational masses (floats read exactly, times powers of a rational β)
whose total is rational too, so a boundary c_i = S_i/Z of an inversion over all outcomes may be a
dyadic number, which no bracket of Z decides (the inversion's table would never settle).  These
laws are drawn instead by exact rejection from a rational envelope, with no irrational number
anywhere:

* :class:`HeadTail`: finitely many head outcomes with exact masses m_i and one tail cell of exact
  weight E = Σ_k e_k, e_k an envelope of the tail outcomes' masses (:class:`TailEnvelope`: k =
  T + r + m·n with e_k = first[r]·ρ^m, a rational ρ < 1).  One draw picks a cell by exact
  inversion over the integer weights (m_0, ..., m_{H−1}, E); a head cell is returned; a tail cell
  proposes k (r by inversion, m by the exact geometric), lets the caller propose a point of k and
  the probability p = (its mass)/(its proposal weight) <= 1, and accepts with an exact Bernoulli(p)
  (:func:`bernoulli`); a rejection restarts the whole draw.  Why exact: one round returns head
  outcome i with probability m_i/W and tail outcome t with probability (proposal weight)·p/W = m_t/W
  (W = Σ m_i + E), and rounds repeat independently until one returns, so the output has the law
  m/Σ m exactly.  The tail cell has weight <= 2^{−tail_bits} of the head, so rejections are rare.
* :class:`RadialL1Rational`: P(x) ∝ profile(‖x‖₁) for a rational profile that is eventually
  periodic-geometric, profile(k + n) = β·profile(k) for k > start.  The radius has masses
  term(k) = N_d(k)·profile(k) (N_d the lattice ℓ1 sphere sizes,
  :func:`~optmech.exact.laws.l1_sphere_size`); radii below T form the head, and for k >= T (T > start,
  T >= d) the envelope term(T + r)·ρ^m at k = T + r + m n with ρ = β·g, g = :func:`l1_growth` (T, d, n):
  the profile drops by exactly β over a period and N_d grows by at most g over a period at k >= T.
  A uniform point of the sphere of the radius follows (:func:`~optmech.exact.laws.uniform_l1_sphere`).

:func:`l1_growth` [derived]: for k >= K >= max(d, 1), N_d(k + n)/N_d(k) <= (1 + n/(K + 1 − d))^{d−1},
because N_d(k) = Σ_j 2^j C(d, j) C(k − 1, j − 1) and C(k + n − 1, j − 1)/C(k − 1, j − 1) is a product
of j − 1 <= d − 1 factors 1 + n/(k − 1 − i) <= 1 + n/(k + 1 − d).  It gives the tail bounds of the
totals (:meth:`RadialL1Rational.total_bounds`, :func:`l1_envelope_tail`).  :func:`root_bounds`
brackets an irrational q = β^{1/M} by rationals.

>>> from fractions import Fraction as F
>>> from optmech.exact.bits import bit_source
>>> law = RadialL1Rational([F(1), F(1, 2)], period=1, ratio=F(1, 2), start=0, d=2)  # P(x) ∝ 2^{−‖x‖₁} on ℤ²
>>> lo, hi = law.total_bounds(100)           # Σ_x 2^{−‖x‖₁} = ((1 + 1/2)/(1 − 1/2))² = 9
>>> lo <= 9 <= hi, float(hi - lo) < 1e-29
(True, True)
>>> x = law.sample(20_000, bit_source(1))
>>> x.shape, bool(abs(np.mean(np.abs(x).sum(axis=1) == 0) - 1 / 9) < 0.01)
((20000, 2), True)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from optmech.exact.bits import BitSource
from optmech.exact.inversion import Geometric, Inversion, integer_weights
from optmech.exact.laws import l1_sphere_size, uniform_l1_sphere

__all__ = ["bernoulli", "TailEnvelope", "HeadTail", "RadialL1Rational", "l1_growth", "l1_envelope_tail",
           "root_bounds", "iroot"]

#: The largest radius a head or a total may reach before giving up (a tail bound that never closes).
MAX_RADIUS = 1 << 20


def bernoulli(p: Sequence, source: BitSource) -> np.ndarray:
    """Independent exact Bernoulli(p_i) for rationals p_i (Fractions, ints or floats read exactly):
    True iff U_i < p_i for a uniform U_i whose binary digits are words of ``source``.  The first word
    w decides unless w = ⌊p_i 2^b⌋ (b the word width) with p_i 2^b not an integer (probability
    2^{−b}); then further words are read until the comparison is decided.

    >>> from optmech.exact.bits import bit_source
    >>> b = bernoulli([Fraction(1, 3)] * 30_000, bit_source(0))
    >>> bool(abs(b.mean() - 1 / 3) < 0.01), bernoulli([0, 1], bit_source(0)).tolist()
    (True, [False, True])
    """
    n = len(p)
    if n == 0:
        return np.zeros(0, dtype=bool)
    b = source.word_bits
    cache: dict = {}
    t = np.zeros(n, dtype=np.uint64)
    mode = np.zeros(n, dtype=np.int8)  # 1: p >= 1, −1: p <= 0, 0: compare with t (2: and t = p 2^b exactly)
    for i in range(n):
        e = cache.get(id(p[i]))  # the same objects recur (the callers cache them); p keeps them alive
        if e is None:
            pi = Fraction(p[i])
            if pi >= 1:
                e = (1, 0)
            elif pi <= 0:
                e = (-1, 0)
            else:
                q, r = divmod(pi.numerator << b, pi.denominator)
                e = (0 if r else 2, q)
            cache[id(p[i])] = e
        mode[i], t[i] = e
    w = source.words(n)
    out = (mode == 1) | ((mode >= 0) & (mode != 1) & (w < t))
    for i in np.flatnonzero((mode == 0) & (w == t)).tolist():
        pi = Fraction(p[i])
        W, k = int(w[i]), 1
        while True:  # U ∈ [W, W + 1)·2^{−bk}; compare with p·2^{bk} = num/den
            W = (W << b) | source.word()
            k += 1
            num, den = pi.numerator << (b * k), pi.denominator
            if (W + 1) * den <= num:
                out[i] = True
                break
            if W * den >= num:
                break
    return out


def l1_growth(K: int, d: int, n: int = 1) -> Fraction:
    """g with N_d(k + n) <= g·N_d(k) for every k >= K (needs K >= max(d, 1); module docstring).

    >>> all(l1_sphere_size(k + 2, 3) <= l1_growth(4, 3, 2) * l1_sphere_size(k, 3) for k in range(4, 60))
    True
    """
    K, d, n = int(K), int(d), int(n)
    if K < max(d, 1):
        raise ValueError("l1_growth needs K >= max(d, 1)")
    base = K + 1 - d
    return Fraction(base + n, base) ** (d - 1)


def l1_envelope_tail(A: Fraction, q: Fraction, K: int, d: int) -> Fraction | None:
    """A rational bound of Σ_{k>K} N_d(k) A q^k for rationals A >= 0, 0 <= q < 1:
    N_d(K + 1) A q^{K+1}/(1 − ρ), ρ = q·l1_growth(K + 1, d); None where it does not hold
    (K + 1 < max(d, 1), or ρ >= 1).

    >>> from fractions import Fraction as F
    >>> t = l1_envelope_tail(F(1), F(1, 2), 10, 2)      # Σ_{k>10} 4k 2^{−k} = 48/2^10
    >>> t >= F(48, 2**10), float(t) < 2 * 48 / 2**10
    (True, True)
    """
    A, q, K, d = Fraction(A), Fraction(q), int(K), int(d)
    if K + 1 < max(d, 1):
        return None
    rho = q * l1_growth(K + 1, d)
    if rho >= 1:
        return None
    return l1_sphere_size(K + 1, d) * A * q ** (K + 1) / (1 - rho)


def iroot(N: int, M: int) -> int:
    """⌊N^{1/M}⌋ for integers N >= 0, M >= 1 (Newton's method on integers, checked).

    >>> iroot(10**30, 3), iroot(10**30 - 1, 3), iroot(2, 64)
    (10000000000, 9999999999, 1)
    """
    N, M = int(N), int(M)
    if N < 0 or M < 1:
        raise ValueError("iroot needs N >= 0 and M >= 1")
    if N < 2 or M == 1:
        return N
    x = 1 << (-(-N.bit_length() // M))  # >= the root
    while True:
        y = ((M - 1) * x + N // x ** (M - 1)) // M
        if y >= x:
            break
        x = y
    while x**M > N:
        x -= 1
    while (x + 1) ** M <= N:
        x += 1
    return x


def root_bounds(beta, M: int, bits: int = 64) -> tuple[Fraction, Fraction]:
    """Rationals q_lo <= β^{1/M} <= q_hi (denominator 2^bits, q_hi − q_lo = 2^{−bits}) for a
    rational β >= 0, checked by raising them to the M-th power.

    >>> from fractions import Fraction as F
    >>> lo, hi = root_bounds(F(1, 2), 2)
    >>> lo**2 <= F(1, 2) <= hi**2, hi - lo == F(1, 2**64)
    (True, True)
    """
    beta, M = Fraction(beta), int(M)
    if beta < 0 or M < 1:
        raise ValueError("root_bounds needs beta >= 0 and M >= 1")
    r = iroot((beta.numerator << (bits * M)) // beta.denominator, M)  # ⌊(β 2^{bits M})^{1/M}⌋
    lo, hi = Fraction(r, 1 << bits), Fraction(r + 1, 1 << bits)
    if not (lo**M <= beta <= hi**M):
        raise ArithmeticError("root_bounds: the bounds fail their check")
    return lo, hi


class TailEnvelope:
    """Proposals k = T + r + m·n (0 <= r < n = len(first), m >= 0) with weight first[r]·ratio^m, exactly:
    r by inversion over ``first``, m by the exact geometric of ``ratio`` (rationals, 0 <= ratio < 1).

    >>> from optmech.exact.bits import bit_source
    >>> env = TailEnvelope(5, [Fraction(1), Fraction(1, 2)], Fraction(1, 4))
    >>> env.total                                    # (1 + 1/2)/(1 − 1/4)
    Fraction(2, 1)
    >>> k, e = env.propose(4, bit_source(0)); bool(k.min() >= 5), e[0] == env.weight(int(k[0]))
    (True, True)
    """

    def __init__(self, T: int, first: Sequence, ratio, word_bits: int = 64) -> None:
        self.T = int(T)
        self.first = [Fraction(v) for v in first]
        self.n = len(self.first)
        self.ratio = Fraction(ratio)
        if self.n < 1 or any(v < 0 for v in self.first) or not 0 <= self.ratio < 1:
            raise ValueError("a tail envelope needs nonnegative first weights and 0 <= ratio < 1")
        self.total = sum(self.first, Fraction(0)) / (1 - self.ratio)
        if self.total > 0:
            self.offsets = Inversion(integer_weights(self.first, word_bits), word_bits)
            self.periods = Geometric(self.ratio, word_bits)
        self._pw = [Fraction(1)]
        self._w: dict[int, Fraction] = {}

    def weight(self, k: int) -> Fraction:
        """The envelope weight of k >= T."""
        k = int(k)
        v = self._w.get(k)
        if v is None:
            m, r = divmod(k - self.T, self.n)
            while len(self._pw) <= m:
                self._pw.append(self._pw[-1] * self.ratio)
            v = self._w[k] = self.first[r] * self._pw[m]
        return v

    def propose(self, n: int, source: BitSource) -> tuple[np.ndarray, list[Fraction]]:
        """n proposals k (law ∝ the weights) and their weights."""
        r = self.offsets.draw(int(n), source)
        m = self.periods.sample(int(n), source)
        k = self.T + r + m * self.n
        return k, [self.weight(v) for v in k.tolist()]


class HeadTail:
    """Exact draws of head outcomes 0..H−1 (masses ``head``) and tail outcomes proposed by a
    :class:`TailEnvelope` and accepted by the caller's probabilities (module docstring).

    ``draw(n, source, accept)`` returns (idx, k, payload): idx[j] < H a head outcome, idx[j] = H a
    tail outcome whose envelope index is k[j] (−1 for head outcomes).  ``accept(k, weights, source)``
    returns (p, payload): p[i] = (mass of what it proposes for k[i])/weights[i] <= 1, and optionally an
    array of payload rows (the proposed points), kept for the accepted proposals.

    >>> from optmech.exact.bits import bit_source
    >>> env = TailEnvelope(2, [Fraction(1, 8)], Fraction(1, 2))     # weights 2^{−k−1} for k >= 2
    >>> law = HeadTail([Fraction(1, 2), Fraction(1, 4)], env)        # head: 2^{−k−1} for k < 2
    >>> idx, k, _ = law.draw(40_000, bit_source(3), lambda k, w, s: ([Fraction(1)] * len(k), None))
    >>> g = np.where(idx < 2, idx, k); bool(abs(np.mean(g) - 1.0) < 0.03)   # geometric(1/2): mean 1
    True
    """

    def __init__(self, head: Sequence, tail: TailEnvelope | None, word_bits: int = 64) -> None:
        self.head = [Fraction(v) for v in head]
        self.H = len(self.head)
        self.tail = tail if (tail is not None and tail.total > 0) else None
        weights = self.head + ([self.tail.total] if self.tail is not None else [])
        self.top = Inversion(integer_weights(weights, word_bits), word_bits)

    def draw(self, n: int, source: BitSource,
             accept: Callable[[np.ndarray, list, BitSource], tuple[list, np.ndarray | None]]):
        n = int(n)
        idx = np.empty(n, dtype=np.int64)
        kk = np.full(n, -1, dtype=np.int64)
        payload = None
        todo = np.arange(n)
        while todo.size:
            i = self.top.draw(todo.size, source)
            idx[todo] = i
            sel = todo[i == self.H]
            if sel.size == 0:
                break
            k, w = self.tail.propose(sel.size, source)
            p, rows = accept(k, w, source)
            ok = bernoulli(p, source)
            kk[sel] = k
            if rows is not None:
                rows = np.asarray(rows)
                if payload is None:
                    payload = np.zeros((n,) + rows.shape[1:], dtype=rows.dtype)
                payload[sel[ok]] = rows[ok]
            todo = sel[~ok]
        return idx, kk, payload


class RadialL1Rational:
    """P(x) ∝ profile(‖x‖₁) on ℤ^d, exactly (module docstring).

    ``profile``: the rationals profile(0), ..., profile(start + period) (floats are read exactly);
    beyond, profile(k) = ratio·profile(k − period) for k > start + period, 0 <= ratio < 1.
    ``tail_bits``: the head runs to the first T whose tail envelope weighs <= 2^{−tail_bits} of it.

    >>> from optmech.exact.bits import bit_source
    >>> law = RadialL1Rational([Fraction(1), Fraction(1, 4), Fraction(1, 4)], period=1, ratio=Fraction(1, 4),
    ...                        start=1, d=3)
    >>> law.profile(4), law.term(1)           # profile(4) = (1/4)² profile(2); |S_1| = 6 in ℤ³
    (Fraction(1, 64), Fraction(3, 2))
    >>> law.sample(5, bit_source(2)).shape
    (5, 3)
    """

    def __init__(self, profile: Sequence, period: int, ratio, start: int, d: int, word_bits: int = 64,
                 tail_bits: int = 30) -> None:
        self.n, self.start, self.d = int(period), int(start), int(d)
        self.ratio = Fraction(ratio)
        if self.n < 1 or self.start < 0 or self.d < 1:
            raise ValueError("RadialL1Rational needs period >= 1, start >= 0 and d >= 1")
        if not 0 <= self.ratio < 1:
            raise ValueError("the ratio per period must lie in [0, 1)")
        head = [Fraction(v) for v in profile]
        if len(head) < self.start + self.n + 1:
            raise ValueError(f"the profile must list its values at 0..start + period ({self.start + self.n + 1} values)")
        if any(v < 0 for v in head) or not any(v > 0 for v in head):
            raise ValueError("the profile must be nonnegative with some positive value")
        self.values = head[:self.start + self.n + 1]
        self._pw = [Fraction(1)]
        self._terms: list[Fraction] = []
        self._prefix: list[Fraction] = []
        self._acc: dict[int, Fraction] = {}
        # the head: radii 0..T−1, T the first radius > start, >= d, whose envelope is light enough
        T = max(self.start + 1, self.d, 1)
        while True:
            rho = self.ratio * l1_growth(T, self.d, self.n)
            if rho < 1:
                env = TailEnvelope(T, [self.term(T + r) for r in range(self.n)], rho, word_bits)
                if env.total * (1 << int(tail_bits)) <= self.prefix(T - 1):
                    break
            T += 1
            if T > MAX_RADIUS:
                raise ArithmeticError("the radial law's tail envelope does not close")
        self.T = T
        self.law = HeadTail([self.term(k) for k in range(T)], env, word_bits)

    def profile(self, k: int) -> Fraction:
        """profile(k), exactly (any k >= 0)."""
        k = int(k)
        L = self.start + self.n
        if k <= L:
            return self.values[k]
        m = -(-(k - L) // self.n)  # whole periods back into (start, start + period]
        while len(self._pw) <= m:
            self._pw.append(self._pw[-1] * self.ratio)
        return self.values[k - m * self.n] * self._pw[m]

    def term(self, k: int) -> Fraction:
        """N_d(k)·profile(k): the mass of radius k (cached)."""
        while len(self._terms) <= k:
            j = len(self._terms)
            t = l1_sphere_size(j, self.d) * self.profile(j)
            self._terms.append(t)
            self._prefix.append((self._prefix[-1] if self._prefix else Fraction(0)) + t)
        return self._terms[k]

    def prefix(self, K: int) -> Fraction:
        """Σ_{k<=K} term(k), exactly."""
        self.term(K)
        return self._prefix[K]

    def tail(self, K: int) -> Fraction | None:
        """A proven bound of Σ_{k>K} term(k): the next period's terms over 1 − ρ, ρ = ratio·l1_growth(K + 1, d, n)
        (K >= start and K + 1 >= d); None where it does not hold."""
        if K < self.start or K + 1 < max(self.d, 1):
            return None
        rho = self.ratio * l1_growth(K + 1, self.d, self.n)
        if rho >= 1:
            return None
        return sum((self.term(k) for k in range(K + 1, K + self.n + 1)), Fraction(0)) / (1 - rho)

    def total_bounds(self, bits: int = 64) -> tuple[Fraction, Fraction]:
        """Rationals Z_lo <= Σ_k term(k) <= Z_hi with Z_hi − Z_lo <= 2^{−bits} Z_lo (exact partial sum to
        some K plus :meth:`tail`)."""
        K = self.start
        while True:
            t = self.tail(K)
            if t is not None and t * (1 << int(bits)) <= self.prefix(K):
                return self.prefix(K), self.prefix(K) + t
            K += 1
            if K > MAX_RADIUS:
                raise ArithmeticError("the radial law's tail bound does not close")

    def _accept(self, k: np.ndarray, w: list, source: BitSource):
        p = []
        for v, wi in zip(k.tolist(), w):
            a = self._acc.get(v)
            if a is None:
                a = self._acc[v] = self.term(v) / wi
            p.append(a)
        return p, None

    def sample_radius(self, n: int, source: BitSource) -> np.ndarray:
        idx, k, _ = self.law.draw(int(n), source, self._accept)
        return np.where(idx < self.T, idx, k)

    def sample(self, n: int, source: BitSource) -> np.ndarray:
        """n points of ℤ^d, shape (n, d): the radius exactly, then a uniform point of its sphere."""
        return uniform_l1_sphere(self.sample_radius(n, source), self.d, source)
