r"""Uniform noise for (0, δ)-DP [Geng13, (4.13), (4.28); GV13, (30), (78)].

Integer lattice, d >= 1 (product law, (4.28) for d > 1): n = ⌈Δ/δ⌉ points per coordinate,

.. math:: P(i) = n^{-d}  \text{ for } i \in \{-\lfloor n/2\rfloor, \dots, n - 1 - \lfloor n/2\rfloor\}^d .

When Δ/(2δ) is an integer, n = Δ/δ and the support is [−Δ/(2δ), Δ/(2δ) − 1], exactly (4.13)
with mass δ/Δ per point.  Other δ use the generalised width ⌈Δ/δ⌉ [derived]
(the smallest width that is (0, δ)-DP).  Privacy: the total variation between P and its shift by
v is 1 − Π_m(1 − |v_m|/n) <= ‖v‖₁/n, with equality for a shift along one axis, so the realised
δ is exactly Δ/n <= δ (computed with rationals, so float δ such as 0.1 give n = 10).  It is not
ε-DP for any finite ε.

Continuous domain (:class:`UniformContinuous`, diffprivlib's ``Uniform``): X ~ U[−Δ/(2δ), Δ/(2δ)]^d,
total variation ‖v‖∞-wise at most ‖v‖₁δ/Δ <= δ, so (0, δ)-DP for ℓ1 sensitivity Δ.

Costs are exact finite sums (lattice) or closed-form integrals (continuous) for ``abs``,
``square``, ``pow:P`` and expressions (1-D), and ``l1``, ``l2sq``, ``linf`` (d-D).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.mechanisms.base_nd import MAX_DIM
from optmech.repair import uniform_width  # re-exported; one home in optmech.repair

__all__ = ["Uniform", "UniformContinuous", "uniform_width"]


def _check_delta(delta) -> float:
    from numbers import Real

    if isinstance(delta, bool) or not isinstance(delta, Real) or not (0.0 < float(delta) < 1.0):
        raise SpecError(f"delta must be a real number in (0, 1) for uniform noise, got {delta!r}")
    return float(delta)


def check_dim(dim) -> int:
    return nx.check_int_range(dim, "dim", 1, MAX_DIM)


def _norm_cost(name: str, dim: int) -> str:
    from optmech.mechanisms.base_nd import COSTS_ND

    if name not in COSTS_ND:
        raise SpecError(f"d-dimensional costs are {', '.join(COSTS_ND)}; got {name!r}")
    return name


class Uniform(Mechanism):
    r"""Uniform noise on n = ⌈Δ/δ⌉ consecutive integers per coordinate: (0, δ)-DP [Geng13, (4.13), (4.28)].

    Parameters
    ----------
    delta : float in (0, 1)
    sensitivity : int >= 1 (ℓ1 sensitivity when dim > 1)
    dim : int >= 1
    epsilon : ignored (accepted so that every mechanism takes ε; the guarantee is ε = 0)

    >>> mech = Uniform(delta=0.1, sensitivity=1)            # n = 10 points: −5, ..., 4
    >>> mech.n, mech.support(), float(mech.pmf(4)), float(mech.pmf(5))
    (10, (-5.0, 4.0), 0.1, 0.0)
    >>> mech.privacy().delta, mech.mean(), mech.var()       # (n² − 1)/12
    (0.1, -0.5, 8.25)
    """

    name = "uniform"
    lattice = True
    symmetric = False  # centred at -1/2 when n is even

    def __init__(self, *, delta, sensitivity=1, dim=1, epsilon=None) -> None:
        self._epsilon = 0.0
        self._sensitivity = nx.check_sensitivity(sensitivity, integer=True)
        self.delta = _check_delta(delta)
        self.dim = check_dim(dim)
        self.n = uniform_width(self.delta, self._sensitivity)
        self.lo = -(self.n // 2)
        self.hi = self.lo + self.n - 1

    @property
    def parameters(self) -> dict:
        return {"delta": self.delta, "dim": self.dim, "width": self.n}

    def to_dict(self) -> dict:
        return {"name": self.name, "delta": self.delta, "sensitivity": self.sensitivity, "dim": self.dim}

    def privacy(self) -> Privacy:
        real = float(Fraction(self.sensitivity, self.n))
        return Privacy("approx", 0.0, real, self.sensitivity, "abs" if self.dim == 1 else "l1",
                       f"(0, delta)-DP with delta = sensitivity/width = {self.sensitivity}/{self.n} exactly "
                       "[Geng13, (4.13)/(4.28); total variation of a shifted uniform]")

    # -- distribution ----------------------------------------------------------------------
    def _inside(self, k) -> np.ndarray:
        return (k >= self.lo) & (k <= self.hi)

    def pmf(self, k):
        k = np.asarray(k, dtype=float)
        if self.dim == 1:
            out = np.where((np.floor(k) == k) & self._inside(k), 1.0 / self.n, 0.0)
            return out[()] if out.ndim == 0 else out
        if k.shape[-1:] != (self.dim,):
            raise SpecError(f"points must have a last axis of length {self.dim}, got shape {k.shape}")
        ok = np.all((np.floor(k) == k) & self._inside(k), axis=-1)
        out = np.where(ok, float(self.n) ** -self.dim, 0.0)
        return out[()] if out.ndim == 0 else out

    def _sf(self, x):
        if self.dim != 1:
            raise TypeError("cdf/sf are defined for dim = 1 only")
        return np.clip((self.hi - x) / self.n, 0.0, 1.0)

    def cdf(self, x):
        x = np.floor(np.asarray(x, dtype=float))
        out = np.clip((x - self.lo + 1.0) / self.n, 0.0, 1.0)
        return out[()] if out.ndim == 0 else out

    def sf(self, x):
        x = np.floor(np.asarray(x, dtype=float))
        out = self._sf(x)
        return out[()] if out.ndim == 0 else out

    def _sample(self, n, rng):
        shape = (n,) if self.dim == 1 else (n, self.dim)
        return rng.integers(self.lo, self.hi + 1, size=shape, dtype=np.int64)

    def _exact_sampler(self):
        """Exact uniform integers in [lo, hi] per coordinate (masked rejection on uniform words)."""
        from optmech.exact import ExactSampler
        from optmech.exact.inversion import uniform_below

        def draw(n, src):
            shape = (n,) if self.dim == 1 else (n, self.dim)
            return self.lo + uniform_below(np.full(shape, self.n, dtype=np.uint64), src)

        return ExactSampler(draw, dim=self.dim, mechanism=repr(self),
                            privacy=self._exact_privacy(f"each coordinate uniform on the {self.n} integers "
                                                        f"{self.lo}..{self.hi} exactly"),
                            law="uniform, exact rejection sampling")

    # -- moments and costs ----------------------------------------------------------------
    def mean(self):
        m = (self.lo + self.hi) / 2.0
        return m if self.dim == 1 else np.full(self.dim, m)

    def var(self):
        v = (self.n * self.n - 1) / 12.0
        return v if self.dim == 1 else np.full(self.dim, v)

    def _support(self) -> np.ndarray:
        return np.arange(self.lo, self.hi + 1, dtype=float)

    def support(self) -> tuple[float, float]:
        """``(lo, hi)``: the first and last of the n points (of each coordinate in d-D)."""
        return (float(self.lo), float(self.hi))

    def median(self):
        """The smallest point with cdf >= 1/2, lo + ⌈n/2⌉ − 1 (per coordinate in d-D)."""
        m = float(self.lo + (self.n + 1) // 2 - 1)
        return m if self.dim == 1 else np.full(self.dim, m)

    def _entropy(self):
        return self.dim * math.log(self.n)  # uniform on n^d points

    def _expected_cost(self, cost):
        k = self._support()
        return math.fsum(nx.evaluate(cost, k)) / self.n

    def expected_cost(self, cost) -> float:
        if self.dim == 1:
            return super().expected_cost(cost)
        name = _norm_cost(cost, self.dim)
        k = self._support()
        d = self.dim
        if name == "l1":
            return d * math.fsum(np.abs(k)) / self.n
        if name == "l2sq":
            return d * math.fsum(k * k) / self.n
        if name == "linf":
            # P(max |X_m| <= t) = F(t)^d with F the law of |X_1| (exact finite sum)
            a = np.unique(np.abs(k))
            F = np.array([np.count_nonzero(np.abs(k) <= t) for t in a], dtype=float) / self.n
            prev = np.concatenate([[0.0], F[:-1]])
            return math.fsum(a * (F**d - prev**d))
        # l2: exact enumeration of the law of ‖X‖₂² by repeated convolution of the law of X_1²
        sq = (k * k).astype(np.int64)
        base = np.bincount(sq).astype(float) / self.n
        if base.size ** 1 * d > 5_000_000:
            raise SpecError("E||X||_2 of a wide d-dimensional uniform is not implemented; use l2sq or l1")
        law = base
        for _ in range(d - 1):
            law = np.convolve(law, base)
        return math.fsum(np.sqrt(np.arange(law.size)) * law)


class UniformContinuous(Mechanism):
    r"""Continuous uniform noise U[−Δ/(2δ), Δ/(2δ)]^d: (0, δ)-DP (diffprivlib's ``Uniform``).

    >>> mech = UniformContinuous(delta=0.2, sensitivity=1.0)   # U[−2.5, 2.5]
    >>> mech.support(), float(mech.pdf(0.0)), float(mech.ppf(0.1))
    ((-2.5, 2.5), 0.2, -2.0)
    """

    name = "uniform_continuous"
    lattice = False

    def __init__(self, *, delta, sensitivity=1.0, dim=1, epsilon=None) -> None:
        self._epsilon = 0.0
        self._sensitivity = nx.check_sensitivity(sensitivity)
        self.delta = _check_delta(delta)
        self.dim = check_dim(dim)
        self.half = self._sensitivity / (2.0 * self.delta)

    @property
    def parameters(self) -> dict:
        return {"delta": self.delta, "dim": self.dim}

    def to_dict(self) -> dict:
        return {"name": self.name, "delta": self.delta, "sensitivity": self.sensitivity, "dim": self.dim}

    def privacy(self) -> Privacy:
        return Privacy("approx", 0.0, self.delta, self.sensitivity, "abs" if self.dim == 1 else "l1",
                       "(0, delta)-DP: the total variation of a shift v is at most ||v||_1 delta/sensitivity")

    def pdf(self, x):
        x = np.asarray(x, dtype=float)
        w = 2.0 * self.half
        if self.dim == 1:
            out = np.where(np.abs(x) <= self.half, 1.0 / w, 0.0)
        else:
            if x.shape[-1:] != (self.dim,):
                raise SpecError(f"points must have a last axis of length {self.dim}, got shape {x.shape}")
            out = np.where(np.all(np.abs(x) <= self.half, axis=-1), w ** -self.dim, 0.0)
        return out[()] if out.ndim == 0 else out

    def _sf(self, x):
        if self.dim != 1:
            raise TypeError("cdf/sf are defined for dim = 1 only")
        return np.clip((self.half - x) / (2.0 * self.half), 0.0, 1.0)

    def _sample(self, n, rng):
        shape = (n,) if self.dim == 1 else (n, self.dim)
        return rng.uniform(-self.half, self.half, size=shape)

    def support(self) -> tuple[float, float]:
        """``(−Δ/(2δ), Δ/(2δ))`` (of each coordinate in d-D)."""
        return (-self.half, self.half)

    def _ppf(self, q):
        return -self.half + q * (2.0 * self.half)

    def _entropy(self):
        return self.dim * math.log(2.0 * self.half)

    def var(self):
        v = (2.0 * self.half) ** 2 / 12.0
        return v if self.dim == 1 else np.full(self.dim, v)

    def mean(self):
        return 0.0 if self.dim == 1 else np.zeros(self.dim)

    def _expected_cost(self, cost):
        # E L = (1/2a) ∫_{-a}^{a} L: rigorous enclosure, midpoint returned (width ~1e-14 rel. for named costs)
        lo, hi = cost.integral(np.array([-self.half]), np.array([self.half]), pieces=4096)
        return 0.5 * (float(lo[0]) + float(hi[0])) / (2.0 * self.half)

    def expected_cost(self, cost) -> float:
        if self.dim == 1:
            return super().expected_cost(cost)
        name = _norm_cost(cost, self.dim)
        a, d = self.half, self.dim
        if name == "l1":
            return d * a / 2.0
        if name == "l2sq":
            return d * a * a / 3.0
        if name == "linf":
            return a * d / (d + 1.0)  # max of d i.i.d. U[0, a]
        from scipy import integrate

        # E‖X‖₂ = a E‖U‖₂, U uniform on [0,1]^d: E√S = (1/(2√π)) ∫ (1 − φ(t)^d) t^{-3/2} dt,
        # φ(t) = E e^{−tU²} = √π erf(√t)/(2√t)
        from scipy.special import erf

        def f(t):
            phi = math.sqrt(math.pi) * erf(math.sqrt(t)) / (2.0 * math.sqrt(t)) if t > 0 else 1.0
            return -math.expm1(d * math.log(phi)) * t**-1.5

        v = integrate.quad(f, 0, 1, limit=200)[0] + integrate.quad(f, 1, math.inf, limit=200)[0]
        return a * v / (2.0 * math.sqrt(math.pi))
