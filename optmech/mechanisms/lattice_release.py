r"""Continuous mechanisms released on a lattice, so that they can be sampled exactly.

No exact sampler draws a density: every draw a computer makes lies on a finite set.  The honest
version of a continuous mechanism is its lattice analogue on the grid hℤ (hℤ^d), h = Δ/2^k: the
query value is floored to the grid, integer noise of the lattice problem with sensitivity 2^k
steps is added, and the result is the grid point (j + i)·h.

What this changes, and what it keeps:

* **Privacy.**  Flooring keeps the sensitivity in steps: ⌊a/h⌋ − ⌊b/h⌋ <= ⌈(a − b)/h⌉ <= 2^k when
  |a − b| <= Δ (ℓ1 in d-D: coordinatewise, and Σ_i ⌈·⌉ is not bounded by ⌈Σ⌉ — so in d-D the
  ℓ1 sensitivity in steps is taken as 2^k + d − 1, see :class:`LatticeRelease`).  The lattice law
  is ε-DP (or (ε, δ)-DP) for that sensitivity, so the released grid point is too; converting it
  to a float is post-processing.
* **The noise.**  Laplace → discrete Laplace with λ = e^{−ε/2^k} (its optimal lattice analogue
  [GV13]); staircase → discrete staircase with r = ⌈γ 2^k⌉ (or the optimal r for a cost); Gaussian
  → discrete Gaussian with σ' = σ 2^k/Δ, δ recomputed for the lattice law; a solved piecewise-constant
  density → the law of ⌊X/h⌋ (:func:`density_on_grid`, exact masses rounded to floats, its privacy
  re-audited exactly).  As k grows the cost
  converges to the continuous one (``expected_cost`` gives the lattice law's).
* **The output.**  It lies on hℤ: flooring adds a deterministic bias in [0, h) per coordinate.

>>> from optmech.mechanisms import Laplace
>>> rel = LatticeRelease(Laplace(epsilon=1, sensitivity=1), bits=8)
>>> rel.step, type(rel.lattice).__name__, rel.lattice.sensitivity
(0.00390625, 'DiscreteLaplace', 256)
>>> x = rel.sample(4, rng=3)                   # exact draws, as multiples of the step
>>> bool(np.all(x / rel.step == np.round(x / rel.step)))
True
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.mechanisms.discrete_staircase import DiscreteStaircase
from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND
from optmech.mechanisms.approx.discrete_gaussian import DiscreteGaussian
from optmech.mechanisms.approx.gaussian import Gaussian
from optmech.mechanisms.laplace import DiscreteLaplace, Laplace
from optmech.mechanisms.laplace_nd import DiscreteLaplaceND, LaplaceND
from optmech.mechanisms.staircase_nd import StaircaseND
from optmech.mechanisms.staircase import Staircase
from optmech.mechanisms.tabulated import LatticePMF, PiecewiseConstantDensity
from optmech.problems.lattice import Grid1D, LatticeMechanism

__all__ = ["LatticeRelease", "MAX_LATTICE_BITS", "MAX_RELEASE_POINTS", "RELEASED", "has_lattice_release",
           "density_on_grid"]

#: Largest k (steps per sensitivity 2^k).
MAX_LATTICE_BITS = 20
#: Largest window (grid points) of a solved density released on the grid (:func:`density_on_grid`).
MAX_RELEASE_POINTS = 1 << 18
#: The continuous laws that have a lattice release, in words (for messages).
RELEASED = ("Laplace, Staircase, Gaussian, LaplaceND, the l1 StaircaseND and a solved 1-D density "
            "(PiecewiseConstantDensity)")


def has_lattice_release(mech) -> bool:
    """Whether :class:`LatticeRelease` releases this continuous mechanism on a grid."""
    if isinstance(mech, (Laplace, Staircase, Gaussian, LaplaceND, PiecewiseConstantDensity)):
        return True
    return isinstance(mech, StaircaseND) and mech.privacy().norm == "l1"


def density_on_grid(mech: PiecewiseConstantDensity, bits: int) -> LatticePMF:
    r"""The law of ⌊X/h⌋, h = Δ/2^bits, for X with this piecewise-constant density: a pmf on ℤ with
    sensitivity 2^bits steps and periodic geometric tails (ratio β per 2^bits steps).

    Each mass p(i) = ∫ f over [ih, (i+1)h) is computed in exact rational arithmetic from the
    density as given (float edges, weights, total and β read exactly), then rounded to the nearest
    float, which defines the lattice law (its exact sampler draws weight(i)/Σ weights exactly).
    Privacy: for |s| <= 2^bits, the events {⌊X/h⌋ ∈ S} and {⌊X/h⌋ + s ∈ S} are events of X and of
    X + sh, |sh| <= Δ, so the law of ⌊X/h⌋ keeps the density's (ε, δ) for the integer shifts
    1..2^bits (post-processing); the lattice law's own exact audit (its ``exact_sampler().privacy()``)
    states what the rounded masses have.  Beyond the density's window, f(x + Δ) = β f(x), so the
    grid masses one period past it repeat with the factor β: they are the lattice tails.
    """
    law = mech.law
    g = law.grid
    W, S = int(g.W), 2**int(bits)
    D = Fraction(float(g.period))
    h = D / S
    edges = [Fraction(float(e)) for e in g.edges]
    total = Fraction(float(law.total))
    beta = Fraction(float(law.beta))
    tails = beta > 0 and bool(np.any(law.right_gen > 0) or np.any(law.left_gen > 0))
    k_lo, k_hi = int(law.k_lo), int(law.k_hi)

    def weight(k: int) -> Fraction:
        if k_lo <= k <= k_hi:
            return Fraction(float(law.weights[k - k_lo]))
        if not tails:
            return Fraction(0)
        if k > k_hi:
            m, r = divmod(k - (k_hi - W + 1), W)
            return Fraction(float(law.right_gen[r])) * beta**m
        m, r = divmod((k_lo + W - 1) - k, W)
        return Fraction(float(law.left_gen[W - 1 - r])) * beta**m

    def ends(k: int) -> tuple[Fraction, Fraction]:
        q, r = divmod(k, W)
        return q * D + edges[r], q * D + edges[r + 1]

    left, right = ends(k_lo)[0], ends(k_hi)[1]
    pad = S if tails else 0
    i_lo, i_hi = math.floor(left / h) - pad, math.ceil(right / h) - 1 + pad
    if i_hi - i_lo + 1 > MAX_RELEASE_POINTS:
        raise SpecError(f"the density spans {i_hi - i_lo + 1} grid points at {bits} lattice bits, more than "
                        f"{MAX_RELEASE_POINTS}; use fewer bits")
    masses = [Fraction(0)] * (i_hi - i_lo + 1)
    extra = 2 * W if tails else 0
    for k in range(k_lo - extra, k_hi + extra + 1):
        w = weight(k)
        if w == 0:
            continue
        a, b = ends(k)
        dens = w / total
        for i in range(max(i_lo, math.floor(a / h)), min(i_hi, math.ceil(b / h) - 1) + 1):
            overlap = min(b, (i + 1) * h) - max(a, i * h)
            if overlap > 0:
                masses[i - i_lo] += dens * overlap
    weights = np.array([float(m) for m in masses])
    gens = (np.zeros(S), np.zeros(S))
    if tails:
        gens = (weights[:S].copy(), weights[-S:].copy())
    lat = LatticeMechanism(Grid1D.integer(S), i_lo, weights, float(beta) if tails else 0.0, gens[0], gens[1])
    d = mech.to_dict()
    return LatticePMF(lat, d.get("epsilon"), float(d.get("delta", 0.0)))


def _lattice_law(mech: Mechanism, steps: int, cost, bits: int) -> Mechanism:
    if isinstance(mech, PiecewiseConstantDensity):
        return density_on_grid(mech, bits)
    eps = mech.epsilon
    if isinstance(mech, Laplace):
        return DiscreteLaplace(epsilon=eps, sensitivity=steps)
    if isinstance(mech, Staircase):
        if cost is not None:
            return DiscreteStaircase.optimal(cost, epsilon=eps, sensitivity=steps)
        return DiscreteStaircase(epsilon=eps, sensitivity=steps, r=min(steps, max(1, math.ceil(mech.gamma * steps))))
    if isinstance(mech, Gaussian):
        return DiscreteGaussian(sigma=mech.sigma * steps / mech.sensitivity, epsilon=eps, sensitivity=steps)
    if isinstance(mech, LaplaceND):
        return DiscreteLaplaceND(epsilon=eps, sensitivity=steps, dim=mech.dim)
    if isinstance(mech, StaircaseND) and mech.privacy().norm == "l1":
        r = min(steps, max(1, math.ceil(mech.gamma * steps)))
        return DiscreteStaircaseND(epsilon=eps, sensitivity=steps, r=r, dim=mech.dim)
    raise SpecError(f"no lattice release for {type(mech).__name__} (supported: {RELEASED}; for a d-dimensional "
                    "solved density, solve on the integer lattice with sensitivity 2^k)")


class LatticeRelease:
    """A continuous mechanism released on the grid of step h = Δ/2^bits (module docstring).

    Parameters
    ----------
    mechanism : Mechanism
        Laplace, Staircase, Gaussian, LaplaceND, the ℓ1 StaircaseND, or a solved 1-D density
        (:class:`~optmech.mechanisms.tabulated.PiecewiseConstantDensity`: the law of ⌊X/h⌋,
        :func:`density_on_grid`, whatever ``cost``).
    bits : int in [0, 20]
        h = sensitivity/2^bits.
    cost : str, optional
        For the staircase: choose r optimal for this cost on the lattice instead of r = ⌈γ 2^bits⌉.

    Attributes
    ----------
    lattice : Mechanism
        The integer law (sensitivity 2^bits steps in 1-D; in d-D 2^bits + d − 1, since flooring
        each coordinate can add up to one step per coordinate to the ℓ1 distance).
    step : float
        h (a float; it is Δ·2^−bits exactly).

    >>> from optmech.mechanisms import Staircase
    >>> rel = LatticeRelease(Staircase.optimal("abs", epsilon=1, sensitivity=1), bits=6, cost="abs")
    >>> rel.lattice, rel.step
    (DiscreteStaircase(epsilon=1.0, sensitivity=64, r=25), 0.015625)
    >>> out = rel.randomise(np.array([0.3, 2.5]), rng=1)          # grid points of step 1/64
    >>> bool(np.all(out * 64 == np.round(out * 64))), rel.privacy().epsilon
    (True, 1.0)
    """

    def __init__(self, mechanism: Mechanism, bits: int, cost=None) -> None:
        if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 0 <= bits <= MAX_LATTICE_BITS:
            raise SpecError(f"lattice bits must be an integer in [0, {MAX_LATTICE_BITS}], got {bits!r}")
        if mechanism.lattice:
            raise SpecError(f"{type(mechanism).__name__} is already a lattice mechanism: sample it with exact=True")
        self.mechanism = mechanism
        self.bits = int(bits)
        self.dim = mechanism.dim
        self.step = float(Fraction(mechanism.sensitivity) / 2**self.bits)
        steps = 2**self.bits + (self.dim - 1 if self.dim > 1 else 0)
        self.lattice = _lattice_law(mechanism, steps, cost, self.bits)

    def __repr__(self) -> str:
        return f"LatticeRelease({self.mechanism!r}, bits={self.bits})"

    def exact_sampler(self):
        """The lattice law's exact sampler (integer draws, in steps)."""
        return self.lattice.exact_sampler()

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Exact noise draws i·h (floats: the integer draw i times the step, post-processing)."""
        return np.asarray(self.exact_sampler().sample(size, rng=rng)) * self.step

    def floor_to_grid(self, values) -> np.ndarray:
        """⌊v/h⌋ for each value, computed exactly from the float (as integers)."""
        v = np.asarray(values, dtype=float)
        if not np.all(np.isfinite(v)):
            raise SpecError("values must be finite")
        h = Fraction(self.step)
        flat = [math.floor(Fraction(float(x)) / h) for x in v.ravel().tolist()]
        return np.array(flat, dtype=np.int64).reshape(v.shape)

    def randomise(self, values, *, rng=None) -> np.ndarray:
        """The released grid points (⌊v/h⌋ + i)·h for query answers v (d-D: last axis dim)."""
        j = self.floor_to_grid(values)
        shape = j.shape if self.dim == 1 else j.shape[:-1]
        i = np.asarray(self.exact_sampler().sample(shape, rng=rng)).reshape(j.shape)
        return (j + i) * self.step

    def privacy(self) -> Privacy:
        p = self.lattice.exact_sampler().privacy()
        sens = self.mechanism.sensitivity
        return Privacy(p.notion, p.epsilon, p.delta, sens, p.norm,
                       f"released on the grid of step h = sensitivity/2^{self.bits}: queries floored to the grid (their "
                       f"sensitivity in steps is at most {self.lattice.sensitivity}), integer noise {self.lattice!r}; "
                       f"{p.note}")

    def expected_cost(self, cost: str) -> float:
        """E L(h·I) for the noise alone (named homogeneous costs abs/square/pow:P in 1-D; l1/l2sq in d-D)."""
        name = str(cost)
        if self.dim == 1:
            powers = {"abs": 1.0, "square": 2.0}
            p = powers.get(name, float(name[4:]) if name.startswith("pow:") else None)
            if p is None:
                raise SpecError(f"the lattice release prices abs, square and pow:P, got {cost!r}")
            return self.step**p * self.lattice.expected_cost(name)
        powers = {"l1": 1.0, "l2sq": 2.0}
        if name not in powers:
            raise SpecError(f"the lattice release prices l1 and l2sq in d-D, got {cost!r}")
        return self.step ** powers[name] * self.lattice.expected_cost(name)
