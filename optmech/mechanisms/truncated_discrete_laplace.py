r"""The truncated discrete Laplace (truncated double geometric) on ℤ, calibrated to (ε, δ) with an exact δ.

.. math:: p(k) = \lambda^{|k|} / Z_T \ \text{ on } |k| \le T, \qquad \lambda = e^{-\epsilon/\Delta},
          \qquad Z_T = 1 + 2\lambda\frac{1-\lambda^T}{1-\lambda}.

Inside [−T, T] the ratio p(k)/p(k + s) is at most λ^{-|s|} <= e^ε for |s| <= Δ; so the hockey-stick
divergence at shift s is the mass of the top min(s, 2T + 1) points, largest at s = Δ:
δ(T) = λ^{T−Δ+1}(1 − λ^Δ)/((1 − λ) Z_T) for T >= Δ − 1 (derivation and the smallest T with
δ(T) <= δ in :mod:`optmech.mechanisms.deployed_integer`, evaluated there in interval arithmetic).
This is the "truncated integer noise with an exact δ" practitioners ask DP libraries for; as
noise on ℕ it is the translate X + T (``--domain nonnegative``).

**Exact sampler.**  Draws of the discrete Laplace with the same λ (exact inversion,
:func:`optmech.exact.laws.discrete_laplace`) are kept when |k| <= T and redrawn otherwise.  Rejection
is exact: the kept draw has the law of the discrete Laplace conditioned on [−T, T], which is p.  The
number of redraws is independent of the value kept (each round is independent), so it reveals
nothing about the noise; the acceptance probability is 1 − 2λ^{T+1}/(1 + λ), above 1 − 2δ.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.mechanisms import numerics as nx

__all__ = ["TruncatedDiscreteLaplace"]


class TruncatedDiscreteLaplace(Mechanism):
    r"""Truncated discrete Laplace p(k) ∝ λ^{|k|} on [−T, T], λ = e^{−ε/Δ}: (ε, δ)-DP with δ = δ(T) exactly.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1/2), optional
        The target: T is the smallest half-width with δ(T) <= δ (certified in interval arithmetic).
    sensitivity : int >= 1
    half_width : int, optional
        T itself (instead of ``delta``); the guarantee is then (ε, δ(T)).

    >>> m = TruncatedDiscreteLaplace(epsilon=1.0, delta=1e-6, sensitivity=10)
    >>> m.half_width, m.privacy().delta <= 1e-6
    (137, True)
    >>> lam = math.exp(-0.1); k = np.arange(-137, 138); p = lam ** np.abs(k); p /= p.sum()
    >>> math.isclose(m.expected_cost("abs"), float((np.abs(k) * p).sum()), rel_tol=1e-12)
    True
    >>> draws = m.exact_sampler().sample(1000, rng=1)
    >>> int(np.abs(draws).max()) <= 137
    True
    >>> TruncatedDiscreteLaplace.from_dict(m.to_dict()).half_width
    137
    """

    name = "truncated_discrete_laplace"
    lattice = True

    def __init__(self, *, epsilon, delta=None, sensitivity=1, half_width=None) -> None:
        from optmech.mechanisms.deployed_integer import truncated_geometric_delta, truncated_geometric_law

        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        D = int(self.sensitivity)
        if (delta is None) == (half_width is None):
            raise SpecError("TruncatedDiscreteLaplace takes one of delta (the target) or half_width (T)")
        if half_width is None:
            law = truncated_geometric_law(self.epsilon, nx.check_unit_interval(delta, "delta"), D)
            self.half_width = int(law.parameters["T"])
            self.delta = float(law.delta_bound)
        else:
            if isinstance(half_width, bool) or int(half_width) != half_width or int(half_width) < 0:
                raise SpecError(f"half_width must be a nonnegative integer, got {half_width!r}")
            self.half_width = int(half_width)
            self.delta = float(truncated_geometric_delta(self.epsilon, D, self.half_width))
        lam = self.lam
        T = self.half_width
        self._log_z = math.log1p(2.0 * lam * -math.expm1(T * math.log(lam)) / (1.0 - lam)) if T > 0 else 0.0

    @property
    def lam(self) -> float:
        return math.exp(-self.epsilon / self.sensitivity)

    @property
    def parameters(self) -> dict:
        return {"half_width": self.half_width, "delta": self.delta}

    def to_dict(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "sensitivity": self.sensitivity,
                "half_width": self.half_width, "delta": self.delta}

    @classmethod
    def from_dict(cls, d: dict) -> "TruncatedDiscreteLaplace":
        return cls(epsilon=d["epsilon"], sensitivity=d.get("sensitivity", 1), half_width=d["half_width"])

    def __repr__(self) -> str:
        return (f"TruncatedDiscreteLaplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
                f"half_width={self.half_width})")

    def __eq__(self, other) -> bool:
        return isinstance(other, TruncatedDiscreteLaplace) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.epsilon, self.sensitivity, self.half_width))

    def privacy(self) -> Privacy:
        return Privacy("approx", self.epsilon, self.delta, self.sensitivity, "abs",
                       f"delta(epsilon) = the mass of the top {self.sensitivity} points of [-T, T], T = {self.half_width}, "
                       "in interval arithmetic, rounded up (optmech.mechanisms.truncated_discrete_laplace)")

    def support(self) -> tuple[float, float]:
        return (float(-self.half_width), float(self.half_width))

    def _pmf(self, k):
        inside = np.abs(k) <= self.half_width
        return np.where(inside, np.exp(-self.epsilon * np.abs(k) / self.sensitivity - self._log_z), 0.0)

    def _logpmf(self, k):
        a = self.epsilon / self.sensitivity
        return self._on_lattice(k, lambda i: np.where(np.abs(i) <= self.half_width, -a * np.abs(i) - self._log_z,
                                                      -np.inf))

    def _sf(self, n):
        # P(X > n) for n >= 0: Σ_{k=n+1}^T λ^k / Z = λ^{n+1}(1 − λ^{T−n})/((1 − λ)Z); by symmetry below 0
        lam, T = self.lam, self.half_width
        n = np.asarray(n, dtype=float)
        m = np.where(n >= 0, n, -n - 1.0)
        with np.errstate(over="ignore", invalid="ignore"):
            tail = np.where(m >= T, 0.0,
                            lam ** (m + 1.0) * -np.expm1((T - m) * math.log(lam)) / ((1.0 - lam) * math.exp(self._log_z)))
        return np.where(n >= 0, tail, 1.0 - tail)

    def _sample(self, n, rng):
        p = -math.expm1(-self.epsilon / self.sensitivity)
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            y = rng.geometric(p, size=todo.size) - rng.geometric(p, size=todo.size)
            ok = np.abs(y) <= self.half_width
            out[todo[ok]] = y[ok]
            todo = todo[~ok]
        return out

    def _exact_sampler(self):
        """Exact rejection from the exact discrete Laplace of the same λ (module docstring)."""
        from optmech.exact import ExactSampler
        from optmech.exact.laws import discrete_laplace

        law = discrete_laplace(Fraction(self.epsilon) / self.sensitivity)
        T = self.half_width

        def draw(n: int, source) -> np.ndarray:
            out = law.sample(n, source)
            bad = np.flatnonzero(np.abs(out) > T)
            while bad.size:
                redo = law.sample(bad.size, source)
                out[bad] = redo
                bad = bad[np.abs(redo) > T]
            return out

        return ExactSampler(draw, dim=1, mechanism=repr(self),
                            privacy=self._exact_privacy("the discrete Laplace conditioned on [-T, T] exactly (rejection), "
                                                        "eps read as the exact rational value of its float"),
                            law="truncated discrete Laplace, exact inversion and rejection outside [-T, T]")

    def _entropy(self):
        k = np.arange(-self.half_width, self.half_width + 1, dtype=float)
        p = self._pmf(k)
        return float(-np.sum(p * np.log(p)))

    def _expected_cost(self, cost):
        k = np.arange(-self.half_width, self.half_width + 1, dtype=float)
        p = self._pmf(k)
        values = np.asarray(cost(k), dtype=float)
        return math.fsum(p * values)
