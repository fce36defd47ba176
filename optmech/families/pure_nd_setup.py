"""The pure ε-DP family in d dimensions, part 1: the problem in the builders' terms, the LP plans and
memory estimates, and the certified upper end of an LP solution.

Upper bound (the 1-D majorant repair of :mod:`optmech.certify`, in d dimensions).  The masses of an LP solution — the
lattice LP itself, or on the continuous domain the restriction LP whose rows cover every
connected cell pair — are repaired to their smallest β-majorant for the layers' step sets,
φ = max(φ, β·dilate(φ)) iterated to its fixed point (β = e^{−ε + 1e-11}), on the LP's own
domain.  Extended to ℤ^d by P(x) = max_y w(y) β^{ρ(x, y)} (ρ the number of moves, a move being
one step per layer), it is a β-majorant everywhere, hence ε-DP.  On the domain the extension
agrees with φ: the step sets are unconditional and down-closed, so a shortest path between two
points of a cube (or of the ℓ1 ball for unit ℓ1 steps, or of an interval of shells) can be
rearranged to stay inside (see :mod:`optmech.problems.pure_nd`).  Outside the domain
P(x) <= A q^{‖x‖₁} with q = β^{1/M}, M the largest ℓ1 length of one move, and
A = max_y w(y) q^{−‖y‖₁}, so the tail's mass and cost are bounded by series over ℓ1 spheres
(summed, with a ratio bound on the remainder) using the cost's growth bound.  The upper bound is
(Σ size·L⁺·φ + tail) / Σ size·φ, outward-rounded.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from optmech.budget import LPPlan
from optmech.certify import PRIVACY_MARGIN
from optmech.errors import SpecError
from optmech.costs_nd import norm_factor
from optmech.problems.pure_nd import (PureNDLP, Shells, build_pure_nd, layer_steps, reach, ring_applies,
                                      ring_shifts, shell_sizes)

__all__ = ["Setup", "Upper", "setup_for", "symmetry_on_cube", "upper_from_lp", "radius", "ball_orbits",
           "lp_plan", "lp_bytes", "DEFAULT_RESOLUTION", "CELLS_TRUNCATION_GAP", "LAYERED_SHELLS", "LAYER_ORBIT_LIMIT"]

#: Cells per Δ on the continuous domain in d > 1 when none is given.
DEFAULT_RESOLUTION = {2: 4}
#: Truncation target on the continuous domain, where the discretisation's gap is O(1/n), percents.
CELLS_TRUNCATION_GAP = 1e-3
#: Shells per Δ of the layered LP that adds an upper bound on the continuous domain (ℓ1, costs l1/l2sq).
LAYERED_SHELLS = 64
#: Most signed-permutation orbits of the ℓ1 ball for which the coupled layer LP is tried first on ℤ^d.
LAYER_ORBIT_LIMIT = 200_000


@dataclass
class Upper:
    """A certified (or labelled uncertified) upper end from an LP solution: the audited cost, the realised ε,
    the tail's mass and geometric rate, and the masses and representatives the mechanism is built from."""

    value: float
    realised_epsilon: float
    certified: bool
    tail_mass: float
    note: str = ""
    reps: np.ndarray | None = None
    masses: np.ndarray | None = None
    tail_factor: float = math.nan
    tail_rate: float = math.nan
    layout: str = "points"  # what reps index: "points" (ℤ^d), "cells" (width `width`) or "shells" (ℓ1 shells)
    width: float = 1.0
    group: str = "none"  # the symmetry group of reps (see problems.pure_nd.Orbits)


@dataclass(frozen=True)
class Setup:
    """The problem in the builders' terms."""

    eps: float
    d: int
    delta: float  # Δ (real)
    n_lat: int  # sensitivity in lattice units
    cells: bool
    cost: object  # CostND
    norm: str
    reduced: bool
    layered: bool
    gap: float
    monotone: bool = False  # layered upper side restricted to nonincreasing shells (no lower bound)
    #: ℓ2 sensitivity on cells (n >= RING_FROM): rows for the ball's outer ring first, the rest by row generation
    ring: bool = True

    @property
    def h(self) -> float:
        return self.delta / self.n_lat if self.cells else 1.0

    def build(self, R: int, side: str = "lower") -> PureNDLP:
        reduced = self.reduced and (True if self.cost.kind != "expr"
                                    else symmetry_on_cube(self.cost, self.d, R, self.h if self.cells else None))
        return build_pure_nd(self.cost, self.eps, int(self.delta) if not self.cells else self.delta, R, dim=self.d,
                             norm=self.norm, reduced=reduced, resolution=self.n_lat if self.cells else None,
                             side=side, layered=self.layered, monotone=self.monotone and side == "upper",
                             ring=self.ring)

    @property
    def rings(self) -> bool:
        """Whether the LPs keep only the ring's rows at first (:func:`optmech.problems.pure_nd.ring_shifts`)."""
        return self.ring and ring_applies(self.norm, self.n_lat, self.cells, self.layered)


def setup_for(problem, *, layered: bool = False) -> Setup:
    """Check the problem and resolve its defaults (resolution, symmetry) for the builders."""
    from optmech.costs_nd import as_cost_nd
    from optmech.spec import Continuous

    d = problem.dim
    cost = as_cost_nd(problem.cost, d)
    cells = isinstance(problem.domain, Continuous)
    if cells:
        n = problem.domain.resolution or DEFAULT_RESOLUTION.get(d, 2)
    else:
        n = int(problem.sensitivity)
    if layered and problem.norm != "l1":
        raise SpecError(f"the layered (shell) LP is for l1 sensitivity, not {problem.norm}")
    reduced = problem.symmetry != "off" and not layered  # expressions: checked on each domain (Setup.build)
    return Setup(problem.epsilon, d, float(problem.sensitivity), int(n), cells, cost, problem.norm, reduced,
                  layered, problem.target_gap)


@functools.lru_cache(maxsize=32)
def symmetry_on_cube(cost, d: int, R: int, h: float | None) -> str:
    """The largest of the groups "signed_permutations" ⊃ "signs" (each coordinate's sign) ⊃ "none"
    under which an expression cost's enclosures are invariant at every point (h None) or cell of
    width h of the cube [−R, R]^d, checked for generators in blocks of points (memory stays bounded)."""
    side = 2 * R + 1
    total = side**d
    block = 1 << 20
    for group, gens in (("signed_permutations", _generators(d, True)), ("signs", _generators(d, False))):
        ok = True
        for start in range(0, total, block):
            flat = np.arange(start, min(total, start + block))
            pts = (np.stack(np.unravel_index(flat, (side,) * d), axis=-1) - R).astype(float)
            lo, hi = (pts, pts) if h is None else (h * (pts - 0.5), h * (pts + 0.5))
            if not _boxes_invariant(cost, lo, hi, gens):
                ok = False
                break
        if ok:
            return group
    return "none"


def _generators(d: int, permutations: bool) -> list[tuple[np.ndarray, int | None]]:
    """(coordinate permutation, coordinate to negate or None): a cyclic shift, a swap and the negation
    of coordinate 0 generate the signed permutations; the negations of each coordinate the signs."""
    ident = np.arange(d)
    if permutations:
        gens = [(np.roll(ident, 1), None), (ident, 0)]
        if d > 2:
            gens.append((np.array([1, 0] + list(range(2, d))), None))
        return gens
    return [(ident, i) for i in range(d)]


def _boxes_invariant(cost, lo: np.ndarray, hi: np.ndarray, gens) -> bool:
    """The cost's box enclosures are unchanged by each generator (points: lo = hi)."""
    ref = cost.enclose_box(lo, hi)
    for perm, neg in gens:
        glo, ghi = lo[:, perm].copy(), hi[:, perm].copy()
        if neg is not None:
            glo[:, neg], ghi[:, neg] = -hi[:, perm][:, neg], -lo[:, perm][:, neg]
        got = cost.enclose_box(glo, ghi)
        if not (np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])):
            return False
    return True


# -- the upper bound ------------------------------------------------------------------------------
def _dilate(phi: np.ndarray, tables: list[np.ndarray]) -> np.ndarray:
    """max of phi over one move: a step of each layer (neighbours outside the domain give 0)."""
    out = phi
    for nb in tables:
        out = np.append(out, 0.0)[nb].max(axis=1)
    return out


def _tail_cost(s: Setup):
    """(g, (C, P, r)): g(k) bounds the cost of every point, cell or shell of ℓ1 index k (k >= 0, real
    units), and g(k) <= C (1+k)^P e^{rk}; None when the cost's growth is unproven.

    A cell z lies in ‖x‖₁ <= h(‖z‖₁ + d/2), a continuous shell k in ‖x‖₁ < h(k + 1); the named costs
    are <= ‖x‖₁ (l2sq <= ‖x‖₁²); an expression is <= C(1 + ‖x‖₁)^P e^{r‖x‖₁} (its growth bound).
    """
    h = s.h
    t = (1.0 if s.layered else s.d / 2.0) if s.cells else 0.0
    if s.cost.kind != "expr":
        P = 2 if s.cost.kind == "l2sq" else 1
        return (lambda k: (h * (k + t)) ** P), ((h * max(1.0, t)) ** P * (1 + 1e-12), P, 0.0)
    g = s.cost.growth()
    if g is None:
        return None
    C, P, r = g
    # 1 + h(k + t) <= (1 + k) max(1 + ht, h)
    bound = (float(C * max(1.0 + h * t, h) ** P * math.exp(r * h * t)) * (1 + 1e-12), P, r * h * (1 + 1e-15))
    return (lambda k: C * (1.0 + h * (k + t)) ** P * np.exp(r * h * (k + t)) * (1 + 1e-12)), bound


def _tail_series(k0: int, s: Setup, q: float) -> tuple[float, float]:
    """(Σ_{k>=k0} w_k q^k, Σ_{k>=k0} w_k q^k g(k)) over ℓ1 spheres or shells w_k, g from
    :func:`_tail_cost`, summed up to K and bounded beyond (w_k <= 3^d (1+k)^{d−1}, g(k) <= C(1+k)^P e^{rk};
    each term's ratio is <= e^{−a/2} past K >= 2m/a)."""
    d = s.d
    a0 = -math.log(q)
    tc = _tail_cost(s)
    if tc is None:
        return math.inf, math.inf
    g, (C, P, r) = tc
    a = a0 - r
    if not a > 0:
        return math.inf, math.inf
    m = d - 1 + P
    K = k0 + int(math.ceil(2 * (m + 1) / a)) + int(math.ceil(45.0 / a)) + 2
    k = np.arange(k0, K + 1)
    w = shell_sizes(k, d, s.cells and s.layered)
    kf = k.astype(float)
    with np.errstate(under="ignore"):
        qk = np.exp(-a0 * kf)
        gk = g(kf)
    mass = math.fsum(w * qk)
    cost = math.fsum(w * qk * gk)

    def rem(Cc: float, mm: float, aa: float) -> float:
        return Cc * math.exp(mm * math.log(K + 2.0) - aa * (K + 1)) / -math.expm1(-aa / 2.0)

    return (mass + rem(3.0**d, d - 1, a0)) * (1 + 1e-12), (cost + rem(3.0**d * C, m, a)) * (1 + 1e-12)


def upper_from_lp(alp: PureNDLP, x: np.ndarray, s: Setup) -> Upper:
    """Majorant repair, audit and pricing (module docstring)."""
    sup = alp.support
    w = alp.masses(x)
    if not np.any(w > 0):
        w = np.zeros_like(w)
        w[int(np.argmin(sup.l1))] = 1.0  # the origin
    beta = math.exp(-s.eps + min(PRIVACY_MARGIN, s.eps * 1e-3))
    phi = w.copy()
    for _ in range(100_000):
        new = np.maximum(phi, beta * _dilate(phi, alp.tables))
        if np.array_equal(new, phi):
            break
        phi = new
    # audit: phi(x) >= β_true · phi(y) for every in-domain pair one move apart
    worst = float(np.max(_dilate(phi, alp.tables) / np.maximum(phi, np.finfo(float).tiny)))
    u = 2.0**-53
    realised = float(np.nextafter(math.log(worst) * (1 + 4 * u) + 4 * u, np.inf)) if worst > 0 else 0.0
    q = beta ** (1.0 / reach(alp.steps))
    top = float(np.max(w * np.exp(sup.l1 * -math.log(q)))) * (1 + 1e-12)
    T0, Tc = _tail_series(sup.R + 1, s, q)
    mass = math.fsum(sup.size * phi)
    num = math.fsum(sup.size * alp.cost_hi * phi) * (1 + 1e-12)
    value = (num + top * Tc) * (1 + 1e-12) / (mass * (1 - 1e-12))
    ok = realised <= s.eps and math.isfinite(value)
    note = "" if ok else (f"audit failed: realised epsilon {realised:.17g} > {s.eps:.17g}" if realised > s.eps
                          else "the cost's growth could not be bounded on the tail")
    layout = "shells" if isinstance(sup, Shells) else "cells" if s.cells else "points"
    return Upper(float(np.nextafter(value, np.inf)), min(realised, s.eps) if ok else realised, ok,
                  top * T0 / mass, note, sup.reps, phi / mass, top / mass, q, layout, s.h, getattr(sup, "group", "none"))


# -- sizing ---------------------------------------------------------------------------------------
def _candidate_value(s: Setup) -> float | None:
    """An easy ε-DP law's cost (real units), to size the domain: i.i.d. (discrete) Laplace."""
    from optmech.mechanisms.laplace_nd import discrete_laplace_nd_cost, laplace_nd_cost

    if s.cost.kind == "expr":
        return None
    e = s.eps / norm_factor(s.norm, s.d)
    if s.cells:
        return laplace_nd_cost(s.cost.spec, e, s.delta, s.d)
    return discrete_laplace_nd_cost(s.cost.spec, e, int(s.delta), s.d)


def radius(s: Setup) -> int:
    """Half-width (lattice units) where the far mass's cost floor exceeds 4× an easy law's cost and
    an ℓ1-decaying law's mass beyond is far below the target gap (for the cells' cube, a law decaying in
    ‖x‖∞ and a tenth of the gap)."""
    from optmech.problems.pure_nd import domain_outside_min

    n = s.n_lat
    c = norm_factor(s.norm, s.d)
    d = s.d
    R = n
    v0 = _candidate_value(s)
    ball = s.norm == "l1" and s.cost.kind != "expr"
    shape = "shells" if s.layered else ("cells_ball" if ball else "cells") if s.cells else ("ball" if ball else "cube")
    if v0 is not None:
        while domain_outside_min(s.cost, R, d, shape, s.h if s.cells else None) < 4 * v0:
            R += n
    gap = max(s.gap, CELLS_TRUNCATION_GAP) if s.cells and not s.layered else s.gap
    if shape == "cells":
        # beyond the cube ‖x‖∞ > R every p-norm is at least ‖x‖∞, so a law whose mass falls like e^{−ε‖x‖/Δ} in
        # the sensitivity's norm has its mass there fall like e^{−εR/n}, whatever that norm: c = 1 (c = 2 for ℓ∞
        # in d = 2 sized the domain at 25Δ for ε = 1, where 15Δ is enough).  And a tenth of the gap: the
        # relaxation's loss to truncation exceeds the tail mass (ε = 1, ℓ∞ sensitivity, ‖x‖₁, 4 cells per Δ: the
        # lower end 4e-4, 3.2e-5, 1.3e-5 and 0 below its value at 25Δ for 12, 15, 16 and 25Δ; measured)
        c, gap = 1.0, gap / 10
    # |S_R| <= 2^d (R+1)^(d−1)/(d−1)!; an ℓ1-decaying law's mass beyond R is about
    # a |S_R| λ^R / (1 − λ), λ = e^{−ε/(cn)}, with a = ((1 − λ)/(1 + λ))^d for the discrete Laplace; the
    # optimum's tail is heavier, so half of log a is used (calibrated on d = 3, Δ = 4: gap 8e-7 at R = 44)
    lam = -s.eps / (c * n)
    log_a = 0.5 * d * (math.log(-math.expm1(lam)) - math.log1p(math.exp(lam)))
    lgam = math.lgamma(d)
    while (log_a + d * math.log(2) + (d - 1) * math.log(R + 1) - lgam + lam * R - math.log(-math.expm1(lam))) > math.log(gap):
        R += n
    return R


def _ball_points(R: int, d: int) -> int:
    """Points of ℤ^d with ‖x‖₁ <= R: Σ_i 2^i C(d, i) C(R, i)."""
    return sum(2**i * math.comb(d, i) * math.comb(R, i) for i in range(min(d, R) + 1))


def ball_orbits(R: int, d: int) -> int:
    """Signed-permutation orbits of the ℓ1 ball of radius R in ℤ^d: partitions of 0..R into at most d parts."""
    ways = [1] + [0] * R
    for part in range(1, d + 1):  # partitions into at most d parts = into parts of size at most d
        for k in range(part, R + 1):
            ways[k] += ways[k - part]
    return sum(ways)


def lp_plan(s: Setup, R: int, group: str | None = None, side: str = "lower") -> LPPlan:
    """The LP on the domain of half-width R before it is built: n points (orbits of the cube under the
    group the builder will use, at least those of the domain; ``group`` as :func:`symmetry_on_cube`
    finds it for an expression cost, None: found here where the cube is small enough), at most one
    row per (point, neighbour) of each layer step (``_assemble``), and the builder's name
    (``build_pure_nd``'s variant); ``side="upper"``: the cells' restriction LP."""
    steps = layer_steps(s.norm, s.d, s.n_lat, upper_cells=s.cells and side == "upper", shells=s.layered)
    # build_pure_nd's domain: the ℓ1 ball for a named cost (but the cube for the cells' restriction LP)
    ball = s.norm == "l1" and s.cost.kind != "expr" and (not s.cells or side == "lower")
    if s.layered:
        n, group = R + 1, "none"
    elif not s.reduced:
        n, group = (_ball_points(R, s.d) if ball else (2 * R + 1) ** s.d), "none"
    elif s.cost.kind != "expr":
        group = "signed_permutations"
        n = ball_orbits(R, s.d) if ball else math.comb(R + s.d, s.d)  # orbits: sorted |x| of the ball or the cube
    else:
        n = (2 * R + 1) ** s.d
        if group is None:
            group = symmetry_on_cube(s.cost, s.d, R, s.h if s.cells else None) if n <= 10**8 else "none"
        n = math.comb(R + s.d, s.d) if group == "signed_permutations" else (R + 1) ** s.d if group == "signs" else n
    L = len(steps)
    per = sum(len(t) for t in steps) if L > 1 else len(steps[0])
    extra = 0.0
    if s.rings:  # rows for the ring's shifts (row generation adds a few more); the pending pairs and the tables
        per = int(ring_shifts(steps[0], s.n_lat, upper_cells=side == "upper").sum())
        extra = 8.0 * n * len(steps[0]) + 16.0 * n * (len(steps[0]) - per)
    builder = ("shells_nd" if s.layered else "cells_nd" if s.cells else "lattice_nd") + (
        {"signed_permutations": "_orbits", "signs": "_sign_orbits"}.get(group, ""))
    if L > 1:  # the unit-step recursion: auxiliaries m_1..m_L, one row per (point, step) and the ratio rows
        return LPPlan(rows=1 + n * per + n, cols=n * (L + 1) + 1, nonzeros=n + 1 + 2 * n * per + 2 * n, builder=builder)
    return LPPlan(rows=1 + n * per, cols=n + 1, nonzeros=n + 1 + 2 * n * per, builder=builder, extra_bytes=extra)


def lp_bytes(s: Setup, R: int) -> tuple[float, int]:
    """(estimated peak bytes of the process, variables) of the LP on the domain of half-width R."""
    plan = lp_plan(s, R)
    return plan.peak_bytes(), plan.cols - 1


# -- the family ------------------------------------------------------------------------------------
