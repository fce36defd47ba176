r"""The Lipschitz solver's laws ([KHP15]): on ℤ and ℝ (``lipschitz_points``, ``lipschitz_cells``), radial
on ℝ^d (``lipschitz_radial``, ``lipschitz_shells``) and their per-coordinate products in d dimensions.

``lipschitz_points`` / ``lipschitz_cells`` (:class:`LipschitzPoints`, :class:`LipschitzCells`)
    The Lipschitz solver's 1-D laws (``upper_points``/``upper_cells`` of the Lipschitz family,
    [KHP15]): a pmf on ℤ with masses ``values`` at the integer ``knots`` and geometric tails
    P(x_K + m) = v_K e^{−λm}, P(x_0 − m) = v_0 e^{−λm}; or a density interpolating ``values`` at
    the equally spaced ``knots`` log-linearly, with exponential tails of rate λ = ``tail_rate``.
    The solver normalises the window only up to a 1e-11 margin, so the normaliser is recomputed
    here in closed form (log-mean piece masses, geometric/exponential tail sums).  Exact pmf/pdf,
    cdf and sampler (piece by its mass, then inverse cdf of the exponential-linear piece or a
    geometric/exponential tail offset).

``lipschitz_radial`` / ``lipschitz_shells`` (:class:`LipschitzRadial`)
    ℓ2-Lipschitz noise on ℝ^d (``upper_radial``): density c·f(‖x‖₂) with the profile f
    log-linear through ``values`` at r_k = ``knots``[k] and an exponential tail of rate λ beyond
    the last knot; ``dim`` gives d (1 if absent).  Exact sampler: a piece by its radial mass
    ∫ f(r) r^{d−1} dr (Gauss-Legendre, exact to rounding for these smooth integrands; the tail in
    closed form), r on the piece by rejection from ∝ r^{d−1} (acceptance >= e^{−λh}), the tail
    as a mixture of Gamma laws, the direction uniform on the sphere.

``per_coordinate: true`` (:class:`LipschitzProduct`)
    ℓ1-Lipschitz noise in d = ``dim`` dimensions (required): d i.i.d. copies of the 1-D law above
    (§8 of [KHP15]; the Lipschitz family's ℓ1 product).

Privacy: ``Privacy("lipschitz", ε, 0, None, norm)``, the recorded rate or, where the knots exceed it,
the law's realised maximal log-slope.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.mechanisms.base_nd import NDMechanism
from optmech.mechanisms.solved.common import (
    SolvedMechanism,
    categorical,
    cost_nd,
    gauss_legendre,
    read_array,
    read_number,
    solver_dict,
)


def _knots_values(d: dict) -> tuple[np.ndarray, np.ndarray, float, float]:
    x, v = read_array(d, "knots", 1), read_array(d, "values", 1)
    if len(x) != len(v) or len(x) < 2:
        raise SpecError("knots and values must have the same length (at least 2)")
    if np.any(v <= 0):
        raise SpecError("Lipschitz knot values must be positive")
    h = float(x[1] - x[0])
    if not h > 0 or np.any(np.abs(np.diff(x) - h) > 1e-9 * max(h, np.abs(x).max())):
        raise SpecError("Lipschitz knots must be equally spaced and increasing")
    return x, v, h, read_number(d, "tail_rate", positive=True)


def _realised_rate(v: np.ndarray, h: float, lam: float) -> float:
    """Largest |log-slope| of the law (adjacent knots and tails), rounded up."""
    lr = float(np.max(np.abs(np.diff(np.log(v))))) / h
    return float(np.nextafter(max(lr, lam) * (1 + 8 * 2.0**-53), np.inf))


def _lipschitz_privacy(kind: str, eps: float, realised: float, norm: str) -> Privacy:
    if math.isnan(eps):
        return Privacy("lipschitz", realised, 0.0, None, norm,
                       f"{kind}: the law's largest log-slope (|ln f(x) - ln f(y)| <= epsilon ||x - y||) [KHP15]")
    if realised > eps:  # the law as loaded does not meet its recorded target: state what it has
        return Privacy("lipschitz", realised, 0.0, None, norm,
                       f"{kind}: the law's largest log-slope, above the recorded target {eps!r} [KHP15]")
    return Privacy("lipschitz", eps, 0.0, None, norm,
                   f"{kind}: the solver's audited target (the law's largest log-slope is {realised:.17g}) [KHP15]")



def _exprel(x):
    """scipy.special.exprel, (e^x − 1)/x, imported on first use (scipy's first import costs the command line
    about 0.2 s)."""
    from scipy.special import exprel as f

    return f(x)


def _gammaln(x):
    """scipy.special.gammaln, imported on first use."""
    from scipy.special import gammaln as f

    return f(x)

class _Lipschitz1D(SolvedMechanism, Mechanism):
    """Shared code of the 1-D Lipschitz laws (:class:`LipschitzPoints`, :class:`LipschitzCells`)."""

    symmetric = False

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, epsilon: float | None = None, delta: float | None = None) -> Mechanism:
        """The law of a dict of this class's kind; with ``per_coordinate: true`` the d-dimensional product
        of that law (:class:`LipschitzProduct`)."""
        d = solver_dict(d, cls.name)
        if d.get("per_coordinate"):
            return LipschitzProduct(d, epsilon=epsilon, delta=delta)
        return cls(d, epsilon=epsilon, delta=delta)

    def _setup(self, d: dict, epsilon: float | None) -> None:
        self._keep(d, epsilon)
        if d.get("per_coordinate"):
            raise SpecError("per_coordinate Lipschitz outputs are LipschitzProduct laws (use mechanism_from_solver_dict)")
        self.x, self.v, self.h, self.lam = _knots_values(d)
        self._sensitivity = None
        self.norm = "abs"

    def privacy(self) -> Privacy:
        return _lipschitz_privacy(self.kind, self._epsilon, _realised_rate(self.v, self.h, self.lam), self.norm)

    def sf(self, x):
        x = np.asarray(x, dtype=float)
        y = self._upper(x)
        return y[()] if y.ndim == 0 else y

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        y = self._lower(x)
        return y[()] if y.ndim == 0 else y

    def var(self) -> float:
        m = self.mean()
        return float(self._moment(2) - m * m)

    def _mean(self):
        return self._moment(1)

    def _power_of(self, cost) -> int:
        from optmech.mechanisms import numerics as nx

        if isinstance(cost, str):
            from optmech.costs import parse_cost

            cost = parse_cost(cost)
        p = nx.integer_power_of(cost)
        if p is None:
            raise self._refuse(f"the expected cost {getattr(cost, 'spec', cost)!r}",
                               "only |x|^P with an integer P has an exact sum here; use the certified upper bound")
        return p


class LipschitzPoints(_Lipschitz1D):
    """ε-Lipschitz-private pmf on ℤ (``lipschitz_points``): P(x_j) ∝ v_j at the integer knots, and
    P(x_K + m) ∝ v_K e^{−λm}, P(x_0 − m) ∝ v_0 e^{−λm} (m >= 1) beyond, λ = ``tail_rate``
    (``upper_points`` of the Lipschitz family); Z = Σ v + (v_0 + v_K) b/(1 − b), b = e^{−λ}."""

    name = "lipschitz_points"
    lattice = True

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._setup(d, epsilon)
        if self.h != 1.0 or np.any(self.x != np.round(self.x)):
            raise SpecError("lipschitz_points knots must be consecutive integers")
        self.b = math.exp(-self.lam)
        t = self.b / -math.expm1(-self.lam)  # Σ_{m>=1} b^m
        self.Z = math.fsum(self.v) + (self.v[0] + self.v[-1]) * t
        self.p = self.v / self.Z
        self.left, self.right = self.v[0] * t / self.Z, self.v[-1] * t / self.Z
        self._cum = np.cumsum(self.p)
        self._lo, self._hi = int(self.x[0]), int(self.x[-1])

    def _pmf(self, k):
        k = np.asarray(k, dtype=float)
        i = np.clip(k - self._lo, 0, len(self.p) - 1).astype(np.int64)
        inside = (k >= self._lo) & (k <= self._hi)
        out = np.where(inside, self.p[i], 0.0)
        b = self.b
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(k > self._hi, self.p[-1] * b ** (k - self._hi), out)
            out = np.where(k < self._lo, self.p[0] * b ** (self._lo - k), out)
        return out

    def _lower(self, x):
        """P(X <= x)."""
        k = np.floor(x)
        i = np.clip(k - self._lo, 0, len(self.p) - 1).astype(np.int64)
        t = self.b / -math.expm1(-self.lam)
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(k < self._lo, self.p[0] * self.b ** (self._lo - k) / -math.expm1(-self.lam),
                           self.left + self._cum[i])
            return np.where(k >= self._hi, 1.0 - self.p[-1] * t * self.b ** np.maximum(k - self._hi, 0), out)

    def _upper(self, x):
        """P(X > x), from the right."""
        k = np.floor(x)
        i = np.clip(k - self._lo, 0, len(self.p) - 1).astype(np.int64)
        suffix = np.concatenate([np.cumsum(self.p[::-1])[::-1], [0.0]])
        t = self.b / -math.expm1(-self.lam)
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(k >= self._hi, self.p[-1] * t * self.b ** np.maximum(k - self._hi, 0),
                           suffix[i + 1] + self.right)
            return np.where(k < self._lo, 1.0 - self.p[0] * self.b ** (self._lo - k) / -math.expm1(-self.lam), out)

    def _sample(self, n, rng):
        u = rng.random(n)
        out = np.empty(n, dtype=np.int64)
        left = u < self.left
        right = u >= 1.0 - self.right
        mid = ~(left | right)
        i = np.minimum(np.searchsorted(self._cum, u[mid] - self.left, side="right"), len(self.p) - 1)
        out[mid] = self._lo + i
        p = -math.expm1(-self.lam)  # P(m) ∝ b^m, m >= 1
        out[left] = self._lo - rng.geometric(p, size=int(left.sum()))
        out[right] = self._hi + rng.geometric(p, size=int(right.sum()))
        return out

    def _entropy(self):
        # window −Σ p ln p; each tail Σ_{m>=1} p_e b^m (−ln p_e − mλ) = p_e [−ln p_e · t + λ b/(1−b)²],
        # t = Σ_{m>=1} b^m = b/(1−b), p_e the end knot's mass
        p = self.p[self.p > 0]
        one_minus = -math.expm1(-self.lam)
        t = self.b / one_minus
        tail = math.fsum(pe * (-math.log(pe) * t + self.lam * self.b / one_minus**2)
                         for pe in (self.p[0], self.p[-1]) if pe > 0)
        return -math.fsum(p * np.log(p)) + tail

    def _tail_terms(self, P: int) -> tuple[np.ndarray, np.ndarray]:
        """(m, b^m) for m = 1..M, M past the peak of m^P b^m by enough that the rest of
        Σ (|x| + m)^P b^m is below 1e-18 of the sum (the terms' ratio is then < e^{−λ/2})."""
        big = 2.0 + abs(self._lo) + abs(self._hi)
        M = int(math.ceil((2 * P + 2) / self.lam + (45.0 + P * math.log(big + 2 * P / self.lam)) / self.lam)) + 64
        m = np.arange(1, M + 1, dtype=float)
        return m, np.exp(-self.lam * m)

    def _moment(self, P: int) -> float:
        """E X^P (signed): the window sum plus the tails summed to rounding (:meth:`_tail_terms`)."""
        m, w = self._tail_terms(P)
        return float(math.fsum(self.p * self.x**P) + math.fsum(self.p[-1] * w * (self._hi + m) ** P)
                     + math.fsum(self.p[0] * w * (self._lo - m) ** P))

    def expected_cost(self, cost) -> float:
        """E|X|^P for integer P (abs, square, pow:P): the window sum plus the tails summed to rounding."""
        P = self._power_of(cost)
        m, w = self._tail_terms(P)
        return float(math.fsum(self.p * np.abs(self.x) ** P) + math.fsum(self.p[-1] * w * np.abs(self._hi + m) ** P)
                     + math.fsum(self.p[0] * w * np.abs(self._lo - m) ** P))


class LipschitzCells(_Lipschitz1D):
    """ε-Lipschitz-private density on ℝ (``lipschitz_cells``): f(x) ∝ v_j e^{s_j (x − x_j)} on
    [x_j, x_{j+1}], s_j = ln(v_{j+1}/v_j)/h, and v_K e^{−λ(x − x_K)}, v_0 e^{−λ(x_0 − x)} beyond the
    knots (``upper_cells`` of the Lipschitz family); piece masses h·v_j·(e^{y} − 1)/y, y = s_j h."""

    name = "lipschitz_cells"
    lattice = False

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._setup(d, epsilon)
        lv = np.log(self.v)
        self.y = lv[1:] - lv[:-1]
        piece = self.h * self.v[:-1] * _exprel(self.y)
        tails = np.array([self.v[0], self.v[-1]]) / self.lam
        self.Z = math.fsum(piece) + math.fsum(tails)
        self.piece = piece / self.Z
        self.left, self.right = tails / self.Z
        self._cum = np.concatenate([[0.0], np.cumsum(self.piece)])

    def _pdf(self, x):
        x = np.asarray(x, dtype=float)
        j = np.clip(np.floor((x - self.x[0]) / self.h), 0, len(self.y) - 1).astype(np.int64)
        t = x - self.x[j]
        out = self.v[j] * np.exp(self.y[j] * t / self.h)
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(x > self.x[-1], self.v[-1] * np.exp(-self.lam * (x - self.x[-1])), out)
            out = np.where(x < self.x[0], self.v[0] * np.exp(-self.lam * (self.x[0] - x)), out)
        return out / self.Z

    def _partial(self, x):
        """(piece index j, mass of [x_j, x] within the piece)."""
        j = np.clip(np.floor((x - self.x[0]) / self.h), 0, len(self.y) - 1).astype(np.int64)
        t = np.clip(x - self.x[j], 0.0, self.h)
        return j, self.v[j] * t * _exprel(self.y[j] * t / self.h) / self.Z

    def _lower(self, x):
        j, part = self._partial(x)
        out = self.left + self._cum[j] + part
        with np.errstate(under="ignore"):
            out = np.where(x < self.x[0], self.left * np.exp(-self.lam * (self.x[0] - x)), out)
            return np.where(x > self.x[-1], 1.0 - self.right * np.exp(-self.lam * (x - self.x[-1])), out)

    def _upper(self, x):
        j, part = self._partial(x)
        out = self.right + (self._cum[-1] - self._cum[j] - part)
        with np.errstate(under="ignore"):
            out = np.where(x > self.x[-1], self.right * np.exp(-self.lam * (x - self.x[-1])), out)
            return np.where(x < self.x[0], 1.0 - self.left * np.exp(-self.lam * (self.x[0] - x)), out)

    def _sample(self, n, rng):
        w = np.concatenate([[self.left], self.piece, [self.right]])
        i = categorical(w, n, rng)
        out = np.empty(n)
        left, right = i == 0, i == len(w) - 1
        out[left] = self.x[0] - rng.standard_exponential(int(left.sum())) / self.lam
        out[right] = self.x[-1] + rng.standard_exponential(int(right.sum())) / self.lam
        mid = ~(left | right)
        j = i[mid] - 1
        y, u = self.y[j], rng.random(int(mid.sum()))
        small = np.abs(y) < 1e-12
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(small, u, np.log1p(u * np.expm1(y)) / np.where(small, 1.0, y))  # inverse cdf on [0, 1)
        out[mid] = self.x[j] + self.h * np.clip(t, 0.0, 1.0)
        return out

    def _integral(self, P: int, absolute: bool) -> float:
        """∫ g(x) f(x) dx, g = |x|^P or x^P: Gauss-Legendre on the pieces (split at 0; g·f is a
        polynomial times an exponential there, integrated to rounding) and the tails in closed form."""
        a, b = self.x[:-1], self.x[1:]
        edges = [(a, np.minimum(b, np.maximum(a, 0.0))), (np.maximum(a, np.minimum(b, 0.0)), b)]
        t, w = gauss_legendre(max(12, P + 8))
        total = 0.0
        for lo, hi in edges:
            u = lo[:, None] + (hi - lo)[:, None] * t[None, :]
            f = self.v[:-1, None] * np.exp(self.y[:, None] * (u - a[:, None]) / self.h)
            g = np.abs(u) ** P if absolute else u**P
            total += math.fsum(((hi - lo) * (w[None, :] * f * g).sum(axis=1)))
        lam = self.lam
        for x0, v0, sign in ((float(self.x[-1]), self.v[-1], 1.0), (float(self.x[0]), self.v[0], -1.0)):
            # ∫_0^∞ (x0 + sign·s)^P v0 e^{−λs} ds = v0 Σ_j C(P, j) x0^{P−j} sign^j j!/λ^{j+1}
            if absolute and x0 * sign < 0:
                raise self._refuse("the expected cost", "the knots must straddle 0")
            base = abs(x0) if absolute else x0
            sg = 1.0 if absolute else sign
            total += v0 * math.fsum(math.comb(P, j) * base ** (P - j) * sg**j * math.factorial(j) / lam ** (j + 1)
                                    for j in range(P + 1))
        return total / self.Z

    def _moment(self, P: int) -> float:
        return self._integral(P, absolute=False)

    def expected_cost(self, cost) -> float:
        """E|X|^P for integer P (abs, square, pow:P): pieces by Gauss-Legendre, tails in closed form."""
        return float(self._integral(self._power_of(cost), absolute=True))


class LipschitzRadial(SolvedMechanism, NDMechanism):
    """ℓ2-Lipschitz radial density on ℝ^d (``lipschitz_radial``; the solver writes ``lipschitz_shells``):
    f(x) = p(‖x‖₂)/(S_{d−1} Z), p log-linear through ``values`` at the ``knots`` r_k and
    p(r) = v_K e^{−λ(r − r_K)} beyond, S_{d−1} = 2π^{d/2}/Γ(d/2), Z = ∫ p(r) r^{d−1} dr
    (``upper_radial`` of the Lipschitz family; module docstring for the sampler)."""

    name = "lipschitz_radial"
    symmetric = True
    _norm = "l2"

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon)
        self._init_dim(int(read_number(d, "dim", default=1, integer=True, positive=True)))
        self.r, self.v, self.h, self.lam = _knots_values(d)
        if self.r[0] != 0.0:
            raise SpecError("radial knots must start at r = 0")
        self._sensitivity = None
        self.norm = "l2" if self.dim > 1 else "abs"
        self.y = np.diff(np.log(self.v))
        self._radial = self._radial_masses(self.dim - 1)
        self.Z = math.fsum(self._radial)
        lsphere = math.log(2.0) + 0.5 * self.dim * math.log(math.pi) - float(_gammaln(0.5 * self.dim))
        self._log_c = -lsphere - math.log(self.Z)

    def _radial_masses(self, p: int) -> np.ndarray:
        """∫ r^p profile(r) dr over each piece and the tail (last entry)."""
        a = self.r[:-1]
        t, w = gauss_legendre(max(16, p // 2 + 12))
        u = a[:, None] + self.h * t[None, :]
        f = self.v[:-1, None] * np.exp(self.y[:, None] * t[None, :])
        pieces = self.h * (w[None, :] * f * u**p).sum(axis=1)
        R, lam = float(self.r[-1]), self.lam
        tail = self.v[-1] * math.fsum(math.comb(p, j) * R ** (p - j) * math.factorial(j) / lam ** (j + 1)
                                      for j in range(p + 1))
        return np.append(pieces, tail)

    def profile(self, r: np.ndarray) -> np.ndarray:
        r = np.asarray(r, dtype=float)
        j = np.clip(np.floor(r / self.h), 0, len(self.y) - 1).astype(np.int64)
        out = self.v[j] * np.exp(self.y[j] * (r - self.r[j]) / self.h)
        with np.errstate(under="ignore"):
            return np.where(r > self.r[-1], self.v[-1] * np.exp(-self.lam * (r - self.r[-1])), out)

    def _pdf_nd(self, x):
        return np.exp(self._log_c) * self.profile(np.sqrt((x * x).sum(axis=-1)))

    def _radii(self, n: int, rng: np.random.Generator) -> np.ndarray:
        d = self.dim
        i = categorical(self._radial, n, rng)
        r = np.empty(n)
        tail = i == len(self._radial) - 1
        m = int(tail.sum())
        if m:  # r = R + Y, Y ∝ (R + y)^{d−1} e^{−λy}: a mixture of Gamma(j + 1, 1/λ)
            R = float(self.r[-1])
            js = np.arange(d)
            wj = np.array([math.comb(d - 1, j) * R ** (d - 1 - j) * math.factorial(j) / self.lam ** (j + 1) for j in js])
            j = categorical(wj, m, rng)
            r[tail] = R + rng.standard_gamma(j + 1.0) / self.lam
        todo = np.flatnonzero(~tail)
        while todo.size:  # on [a, a + h]: propose ∝ r^{d−1}, accept e^{y t}/max(1, e^y)
            j = i[todo]
            a = self.r[j]
            b = a + self.h
            u = rng.random(todo.size)
            rr = (a**d + u * (b**d - a**d)) ** (1.0 / d)
            t = np.clip((rr - a) / self.h, 0.0, 1.0)
            y = self.y[j]
            ok = rng.random(todo.size) < np.exp(y * t - np.maximum(y, 0.0))
            r[todo[ok]] = rr[ok]
            todo = todo[~ok]
        return r

    def _sample(self, n, rng):
        r = self._radii(n, rng)
        if self.dim == 1:
            return (r * np.where(rng.random(n) < 0.5, -1.0, 1.0))[:, None]
        z = rng.standard_normal((n, self.dim))
        z *= (r / np.sqrt((z * z).sum(axis=1)))[:, None]
        return z

    def radial_moment(self, P: int) -> float:
        """E‖X‖₂^P (integer P >= 0)."""
        return float(math.fsum(self._radial_masses(self.dim - 1 + P)) / self.Z)

    def expected_cost(self, cost) -> float:
        """E‖X‖₂ (``l2``) or E‖X‖₂² (``l2sq``) (in 1-D also ``l1``/``abs``, ``square``)."""
        c = cost_nd(cost, self.dim)
        if c.kind == "l2" or (self.dim == 1 and c.kind in ("l1", "linf")):
            return self.radial_moment(1)
        if c.kind == "l2sq":
            return self.radial_moment(2)
        raise self._refuse(f"the expected cost {c.spec!r}", "a radial law prices l2 and l2sq only")

    def mean(self) -> np.ndarray:
        return np.zeros(self.dim)

    def var(self) -> np.ndarray:
        return np.full(self.dim, self.radial_moment(2) / self.dim)

    def privacy(self) -> Privacy:
        """ε-Lipschitz in ℓ2: |ln f(x) − ln f(y)| <= L |‖x‖ − ‖y‖| <= L‖x − y‖₂, L the profile's largest log-slope."""
        return _lipschitz_privacy(self.kind, self._epsilon, _realised_rate(self.v, self.h, self.lam), self.norm)

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind} (use pdf)")

    sf = cdf


class LipschitzShells(LipschitzRadial):
    """The same law under the kind the radial Lipschitz solver writes today (``lipschitz_shells``)."""

    name = "lipschitz_shells"


class LipschitzProduct(SolvedMechanism, NDMechanism):
    """ℓ1-Lipschitz noise on ℤ^d or ℝ^d (``per_coordinate: true``): d = ``dim`` i.i.d. copies of the
    1-D law of the same dict ([KHP15, §8]; the Lipschitz family's ℓ1 product).  ε-Lipschitz in ℓ1
    when the 1-D law is ε-Lipschitz; a dict with ``norm: "l2"`` reports √d times that rate unless it
    records ``epsilon`` (read as the rate in its norm)."""

    symmetric = False

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, epsilon: float | None = None, delta: float | None = None) -> Mechanism:
        """The product law of a ``per_coordinate`` ``lipschitz_points`` or ``lipschitz_cells`` dict."""
        return cls(solver_dict(d, "lipschitz_points", "lipschitz_cells"), epsilon=epsilon, delta=delta)

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon)
        if not d.get("per_coordinate"):
            raise SpecError("LipschitzProduct needs per_coordinate: true")
        if "dim" not in d:
            raise SpecError("a per_coordinate Lipschitz mechanism needs its dimension (the 'dim' field)")
        self._init_dim(int(read_number(d, "dim", integer=True, positive=True)))
        one = {k: v for k, v in d.items() if k not in ("per_coordinate", "name", "epsilon", "dim", "norm")}
        kind = d.get("kind")
        if kind == "lipschitz_points":
            self.one = LipschitzPoints(one)
        elif kind == "lipschitz_cells":
            self.one = LipschitzCells(one)
        else:
            raise SpecError(f"per_coordinate is defined for lipschitz_points and lipschitz_cells, not {kind!r}")
        self.lattice = self.one.lattice
        self.name = kind
        self.norm = str(d.get("norm", "l1"))
        self._sensitivity = None

    def _pmf_nd(self, k):
        return np.prod(self.one._pmf(k), axis=-1)

    def _pdf_nd(self, x):
        return np.prod(self.one._pdf(x), axis=-1)

    def _sample(self, n, rng):
        return self.one._sample(n * self.dim, rng).reshape(n, self.dim)

    def expected_cost(self, cost) -> float:
        """E‖X‖₁ = d E|X₁| and E‖X‖₂² = d E X₁² (exact 1-D sums); other costs are refused."""
        c = cost_nd(cost, self.dim)
        if c.kind == "l1" or (self.dim == 1 and c.kind in ("l2", "linf")):
            return self.dim * self.one.expected_cost("abs")
        if c.kind == "l2sq":
            return self.dim * self.one.expected_cost("square")
        raise self._refuse(f"the expected cost {c.spec!r}", "the product law prices the separable costs l1 and l2sq only")

    def mean(self) -> np.ndarray:
        return np.full(self.dim, self.one.mean())

    def var(self) -> np.ndarray:
        return np.full(self.dim, self.one.var())

    def privacy(self) -> Privacy:
        rate = _realised_rate(self.one.v, self.one.h, self.one.lam)
        if self.norm == "l2":
            rate = float(np.nextafter(rate * math.sqrt(self.dim) * (1 + 4 * 2.0**-53), np.inf))
        return _lipschitz_privacy(f"{self.kind} (per coordinate, dim {self.dim})", self._epsilon, rate, self.norm)

    def cdf(self, x):
        if self.dim == 1:
            return self.one.cdf(x)
        return super().cdf(x)

    def sf(self, x):
        if self.dim == 1:
            return self.one.sf(x)
        return super().sf(x)
