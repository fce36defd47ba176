"""The pure ε-DP family in d dimensions: LPs of :mod:`optmech.problems.pure_nd` → certificates
(the loop is :func:`optmech.drive.run`).

Lower bound: the repaired dual of the relaxation (lattice points, or cells priced at their
minimum cost), as in 1-D.

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

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np

from optmech.budget import BASELINE_BYTES, LPPlan, gib, memory_budget
from optmech.certify import CLOSED_FORM_WIDENING, PRIVACY_MARGIN, reference_inside
from optmech.errors import SolveFailed, SpecError
from optmech.costs_nd import norm_factor
from optmech.families.base import Built, Step, Stop, default_lower
from optmech.problems.pure_nd import PureNDLP, Shells, build_pure_nd, layer_steps, reach, shell_sizes
from optmech.result import ReferenceValue
#: Cells per Δ on the continuous domain in d > 1 when none is given.
DEFAULT_RESOLUTION = {2: 4}
#: Truncation target on the continuous domain, where the discretisation's gap is O(1/n), percents.
CELLS_TRUNCATION_GAP = 1e-3
#: Shells per Δ of the layered LP that adds an upper bound on the continuous domain (ℓ1, costs l1/l2sq).
LAYERED_SHELLS = 64
#: Most signed-permutation orbits of the ℓ1 ball for which the coupled layer LP is tried first on ℤ^d.
LAYER_ORBIT_LIMIT = 200_000


@dataclass
class _Upper:
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
class _Setup:
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

    @property
    def h(self) -> float:
        return self.delta / self.n_lat if self.cells else 1.0

    def build(self, R: int, side: str = "lower") -> PureNDLP:
        reduced = self.reduced and (True if self.cost.kind != "expr"
                                    else symmetry_on_cube(self.cost, self.d, R, self.h if self.cells else None))
        return build_pure_nd(self.cost, self.eps, int(self.delta) if not self.cells else self.delta, R, dim=self.d,
                             norm=self.norm, reduced=reduced, resolution=self.n_lat if self.cells else None,
                             side=side, layered=self.layered, monotone=self.monotone and side == "upper")


def setup_for(problem, *, layered: bool = False) -> _Setup:
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
    reduced = problem.symmetry != "off" and not layered  # expressions: checked on each domain (_Setup.build)
    return _Setup(problem.epsilon, d, float(problem.sensitivity), int(n), cells, cost, problem.norm, reduced,
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


def _tail_cost(s: _Setup):
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


def _tail_series(k0: int, s: _Setup, q: float) -> tuple[float, float]:
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


def upper_from_lp(alp: PureNDLP, x: np.ndarray, s: _Setup) -> _Upper:
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
    return _Upper(float(np.nextafter(value, np.inf)), min(realised, s.eps) if ok else realised, ok,
                  top * T0 / mass, note, sup.reps, phi / mass, top / mass, q, layout, s.h, getattr(sup, "group", "none"))


# -- sizing ---------------------------------------------------------------------------------------
def _candidate_value(s: _Setup) -> float | None:
    """An easy ε-DP law's cost (real units), to size the domain: i.i.d. (discrete) Laplace."""
    from optmech.mechanisms.laplace_nd import discrete_laplace_nd_cost, laplace_nd_cost

    if s.cost.kind == "expr":
        return None
    e = s.eps / norm_factor(s.norm, s.d)
    if s.cells:
        return laplace_nd_cost(s.cost.spec, e, s.delta, s.d)
    return discrete_laplace_nd_cost(s.cost.spec, e, int(s.delta), s.d)


def _radius(s: _Setup) -> int:
    """Half-width (lattice units) where the far mass's cost floor exceeds 4× an easy law's cost and
    an ℓ1-decaying law's mass beyond is far below the target gap."""
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


def _ball_orbits(R: int, d: int) -> int:
    """Signed-permutation orbits of the ℓ1 ball of radius R in ℤ^d: partitions of 0..R into at most d parts."""
    ways = [1] + [0] * R
    for part in range(1, d + 1):  # partitions into at most d parts = into parts of size at most d
        for k in range(part, R + 1):
            ways[k] += ways[k - part]
    return sum(ways)


def lp_plan(s: _Setup, R: int, group: str | None = None, side: str = "lower") -> LPPlan:
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
        n = _ball_orbits(R, s.d) if ball else math.comb(R + s.d, s.d)  # orbits: sorted |x| of the ball or the cube
    else:
        n = (2 * R + 1) ** s.d
        if group is None:
            group = symmetry_on_cube(s.cost, s.d, R, s.h if s.cells else None) if n <= 10**8 else "none"
        n = math.comb(R + s.d, s.d) if group == "signed_permutations" else (R + 1) ** s.d if group == "signs" else n
    L = len(steps)
    per = sum(len(t) for t in steps) if L > 1 else len(steps[0])
    builder = ("shells_nd" if s.layered else "cells_nd" if s.cells else "lattice_nd") + (
        {"signed_permutations": "_orbits", "signs": "_sign_orbits"}.get(group, ""))
    if L > 1:  # the unit-step recursion: auxiliaries m_1..m_L, one row per (point, step) and the ratio rows
        return LPPlan(rows=1 + n * per + n, cols=n * (L + 1) + 1, nonzeros=n + 1 + 2 * n * per + 2 * n, builder=builder)
    return LPPlan(rows=1 + n * per, cols=n + 1, nonzeros=n + 1 + 2 * n * per, builder=builder)


def lp_bytes(s: _Setup, R: int) -> tuple[float, int]:
    """(estimated peak bytes of the process, variables) of the LP on the domain of half-width R."""
    plan = lp_plan(s, R)
    return plan.peak_bytes(), plan.cols - 1


# -- the family ------------------------------------------------------------------------------------
class PureNDFamily:
    """Pure ε-DP on ℤ^d or ℝ^d (cells), or the ℓ1-layer (shell) LP with ``layered=True``.

    Sizes are the domain's half-width R (lattice units), grown by half (whole multiples of the
    sensitivity) while the gap is not the discretisation's.  On the continuous domain each step
    also solves the cell restriction LP for its upper bound, unless the thin-shell layered LP
    (solved once, first) already gives a certified, tighter one.
    """

    name = "pure_nd"
    max_steps = 6

    def __init__(self, problem, ctx, *, layered: bool = False) -> None:
        self.problem, self.ctx = problem, ctx
        self.s = setup_for(problem, layered=layered)
        self.fine: _Upper | None = None
        self.prev_gap = math.inf
        self._plans: dict = {}

    def _coupled_layers(self) -> bool:
        """ℤ^d, ℓ1 sensitivity, cost ‖x‖₁, symmetry "auto": the coupled layer bound applies
        (:mod:`optmech.problems.lattice_layers`)."""
        s = self.s
        return (not s.cells and not s.layered and s.norm == "l1" and s.cost.kind == "l1" and s.d >= 2
                and self.problem.symmetry == "auto")

    def initial_uppers(self) -> list:
        """The fine layered upper bound (ℓ1, costs l1/l2sq) and, on ℝ^d, the exact closed-form ε-DP
        laws (:func:`closed_form_uppers_nd`); on ℤ^d with the coupled layer bound, the best ℓ1 lattice
        staircase: the bracket's upper end is the best of them and the LPs'."""
        if self._coupled_layers():
            return [_lattice_staircase_upper(self.s)]  # the lattice staircase: V* in every case solved so far
        out = []
        if self.s.cells:
            need, _ = lp_bytes(self.s, _radius(self.s))
            if need <= memory_budget():
                self.fine = _fine_layered_upper(self.s, self.ctx)
            if self.s.cost.kind != "expr" and not self.s.layered:  # the layered variant bounds layered laws only
                out = closed_form_uppers_nd(self.s)
        return ([self.fine] if self.fine is not None and self.fine.certified else []) + out

    def start(self):
        """The domain's half-width R, or first the coupled ℓ1-layer LP ``("layers", R)`` where it applies."""
        if self._coupled_layers() and _ball_orbits(_radius(self.s), self.s.d) <= LAYER_ORBIT_LIMIT:
            return ("layers", _radius(self.s))
        return _radius(self.s)

    def initial_lower(self) -> float:
        """On ℝ^d with a named cost and ``symmetry="auto"``: the norm-comparison bound
        (:func:`optmech.families.radial.comparison_lower`)."""
        from optmech.families.radial import comparison_lower

        self.comparison = None
        # the bound rests on the radial reduction: not with symmetry "orbits"/"off", nor for the layered variant
        if self.s.cells and self.s.cost.kind != "expr" and not self.s.layered and self.problem.symmetry == "auto":
            try:
                self.comparison = comparison_lower(self.s.cost.kind, self.s.norm, self.s.eps, self.s.d, self.s.delta,
                                                   self.ctx.solve_lp)
            except SolveFailed:
                self.comparison = None
        return self.comparison[0] if self.comparison is not None else 0.0

    def fallback_lower(self) -> tuple[float | None, str]:
        """On ℝ^d with a named cost (a norm or its square: nonnegative), when no LP fits the time limit."""
        if not self.s.cells or self.s.cost.kind == "expr":
            return None, ""
        comp = getattr(self, "comparison", None)
        if comp is not None and comp[0] > 0:
            return comp[0], comp[1]
        return 0.0, "the cost's floor on R^d (a norm or its square is nonnegative)"

    def plan(self, R) -> LPPlan:
        """The LP of half-width R before it is built (:func:`lp_plan`), cached per R; for ``("layers", R)``
        the coupled layer LP (R + 2 columns, at most Δ rows per sphere)."""
        if isinstance(R, tuple):
            n, rows = R[1] + 2, 1 + int(self.s.delta) * (R[1] + 1)
            return LPPlan(rows=rows, cols=n, nonzeros=n + 2 * rows, builder="layers_coupled")
        if R not in self._plans:
            s = self.s
            group = None
            if s.reduced and s.cost.kind == "expr" and \
                    lp_plan(s, R, group="signed_permutations").peak_bytes() > memory_budget():
                group = "signed_permutations"  # too large whatever the cost's symmetry: no need to check the cube
            plan = lp_plan(s, R, group)
            if s.cells and not (self.fine is not None and self.fine.certified):
                # the cell restriction LP, built and solved inside upper() while this one is held
                up = lp_plan(s, R, group, side="upper")
                plan = dataclasses.replace(plan, lps=2, extra_bytes=up.peak_bytes() - BASELINE_BYTES)
            self._plans[R] = plan
        return self._plans[R]

    def estimate_bytes(self, R: int) -> float:
        return self.plan(R).peak_bytes()

    def size_message(self, R: int, need: float, budget: float) -> str:
        s = self.s
        what = "shell" if s.layered else "cell" if s.cells else "lattice"
        return (f"the {s.d}-dimensional {what} LP needs about {gib(need)} GiB ({self.plan(R).cols - 1} variables on the "
                f"domain of half-width {R}); the limit is {budget / 2**30:.1f} GiB: raise epsilon or the target gap, "
                "lower the sensitivity, resolution or dimension, or set OPTMECH_MAX_MEMORY_GB")

    def build(self, R) -> Built:
        if isinstance(R, tuple):  # the coupled ℓ1-layer LP (optmech.problems.lattice_layers)
            from optmech.couplings import prove_unit_couplings
            from optmech.problems.lattice_layers import build_layer_lp, coupled_pairs

            levels = R[1]
            unit = prove_unit_couplings(levels, self.s.d, deadline=self.ctx.t0 + 0.5 * self.ctx.time_limit)
            pairs = coupled_pairs(levels, int(self.s.delta), unit)
            lp = build_layer_lp(self.s.eps, int(self.s.delta), self.s.d, 1, levels, pairs)
            info = {"levels": levels, "unit_couplings_proven": int(sum(unit)), "layer_rows": len(pairs)}
            return Built(lp, {"layers": levels}, info, "layers_coupled")
        alp = self.s.build(R, "lower")
        return Built(alp.lp, {"half_width": R}, alp, alp.variant)

    lower = staticmethod(default_lower)

    def upper(self, built: Built, raw) -> _Upper:
        s = self.s
        if built.builder == "layers_coupled":
            return _lattice_staircase_upper(s)
        if s.cells and self.fine is not None and self.fine.certified:
            return self.fine
        if s.cells:
            ulp = s.build(built.model.support.R, "upper")
            uraw = self.ctx.solve_lp(ulp.lp)
            return upper_from_lp(ulp, uraw.x, s)
        return upper_from_lp(built.model, raw.x, s)

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        if built.builder == "layers_coupled":
            return dict(built.model)
        return {"far_mass": built.model.far_mass(raw.x), "tail_mass_bound": upper.tail_mass}

    def grow(self, step: Step, best) -> int | Stop:
        if step.built.builder == "layers_coupled":  # not tight enough: the full LP (its own growth rules)
            return _radius(self.s)
        s, alp, gap = self.s, step.built.model, step.gap
        far, up = step.diagnostics["far_mass"], step.upper
        prev, self.prev_gap = self.prev_gap, gap
        if s.cells and far < 1e-3 * gap and up.tail_mass < 1e-3 * gap and up.certified:
            return Stop(f"the remaining gap is the discretisation at resolution {s.n_lat} (truncation is negligible): "
                        "raise --resolution to shrink it")
        if far > 0.5 and alp.lp.c[alp.lp.col_blocks["far"].start] <= 0.0:
            return Stop(f"the cost {s.cost.spec!r} could not be bounded away from 0 outside the domain by interval "
                        "arithmetic (e.g. a term 0.5*x1 beside abs(x1)), so the lower bound is not informative; write "
                        "its terms sign-definite, e.g. where(x1 > 0, 1.5*x1, 0.5*abs(x1)) for abs(x1) + 0.5*x1")
        if prev < math.inf and gap > 0.5 * prev:
            return Stop("a larger domain does not help: the remaining gap is the solver's accuracy")
        return int(math.ceil(1.5 * alp.support.R / s.n_lat)) * s.n_lat

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        return _references(self.problem, self.s, lower, upper)

    def report(self, best, last: Step | None, status: str) -> dict:
        if last is not None and last.built.builder == "layers_coupled":
            return _report_layers(self.s, best, last.diagnostics)
        out = self._report(best, last)
        comp = getattr(self, "comparison", None)
        if comp is not None:
            used = comp[0] >= best.lower
            out["claims"].append(f"{'the lower bound is' if used else 'a weaker certified lower bound:'} {comp[1]}: "
                                 f"{comp[0]:.9g}")
        return out

    def _report(self, best, last: Step | None) -> dict:
        from optmech.mechanisms.solved import mechanism_from_solver_dict

        if last is None or isinstance(best.upper, ReferenceUpper):
            # no LP fitted, or a closed-form law beat the LPs' upper bounds: that law is the mechanism
            return _report_reference(self.s, best, last)
        s, alp = self.s, last.built.model
        best_up = best.upper
        dom = f"Z^{s.d}" if not s.cells else f"R^{s.d} in cells of width {s.h:g} (resolution {s.n_lat})"
        where = ("l1 ball ||x||_1 <= R" if alp.support.shape == "ball" else f"cube [-R, R]^{s.d}")
        if s.cells:
            claims = [
                f"pure epsilon-DP on {dom}, sensitivity {s.delta:g} in the {s.norm} norm; lower bound: cell masses of any "
                f"epsilon-DP density satisfy the lattice rows for shifts of <= {s.n_lat} cells, each cell priced at the "
                f"cost's minimum over it, every pair inside the {where} (unit-step recursion), the mass outside priced at "
                "the cost's minimum there (a relaxation)",
                (f"upper bound: the {best_up.note}, extended with a closed-form tail bound" if best_up is not None and
                 "shells" in best_up.note else
                 "upper bound: a density constant on cells whose rows cover every cell pair that a shift in the ball "
                 "connects (l1: the l1 ball of radius n-1 plus the unit cube), priced at cell maxima; its smallest "
                 "beta-majorant, extended with a closed-form tail bound, audited"),
            ]
        else:
            claims = [
                f"pure epsilon-DP on Z^{s.d}, sensitivity {int(s.delta)} in the {s.norm} norm: every pair inside the "
                f"{where} (unit-step recursion), the mass outside priced at the cost's minimum there (a relaxation)",
                "upper bound: smallest beta-majorant of the LP's masses, extended to Z^d with a closed-form tail bound",
            ]
        group = getattr(alp.support, "group", "none")
        if group != "none":
            name = "signed-permutation" if group == "signed_permutations" else "coordinate-sign"
            claims.append(f"{name} symmetry: one variable per orbit (the cost"
                          + (" was proven invariant at every point or cell of the LP's domain by exact comparison of "
                             "its enclosures, which is all the relaxation uses" if s.cost.kind == "expr" else
                             " and the norm are invariant by construction")
                          + "; averaging a mechanism over the group keeps the relaxation's value, so a group-invariant "
                            "optimum exists)")
        lp_info = {"orbits": len(alp.support.reps)}
        if s.cells:
            lp_info |= {"resolution": s.n_lat, "cell_width": s.h}
        mech = None
        if best_up is not None:
            beta = math.exp(-s.eps + min(PRIVACY_MARGIN, s.eps * 1e-3))
            mech = mechanism_from_solver_dict(_mechanism_nd(best_up, s) | {"epsilon": s.eps, "beta": beta})
        return {
            "mechanism": mech, "lp": lp_info, "claims": claims,
            "audit": {"realised_epsilon": best_up.realised_epsilon if best_up else None, "target_epsilon": s.eps,
                      "passed": bool(best_up and best_up.certified),
                      "method": "majorant fixed point on the domain, outward-rounded",
                      "tail_mass_bound": best_up.tail_mass if best_up else None},
            "truncation": {"half_width": alp.support.R, "dim": s.d, "norm": s.norm,
                           "lower_bound": "relaxation: in-domain pairs, far mass at the minimum cost outside",
                           "upper_bound": "beta-majorant of the domain's masses with geometric tails outside"},
        }


@dataclass
class ReferenceUpper:
    """A certified upper bound from a closed-form ε-DP law: its exact expected cost widened by
    ``CLOSED_FORM_WIDENING``, its name and calibration, and the mechanism object."""

    value: float
    reference: str
    parameters: dict
    mechanism: object
    note: str
    certified: bool = True


#: (law, cost) pairs whose expected cost is a quadrature, not a closed form: never certified upper bounds.
NUMERIC_COSTS = {("laplace", "l2"), ("l2_laplace", "linf"), ("staircase:l1", "l2"), ("staircase:l2", "linf")}


def closed_form_uppers_nd(s: _Setup) -> list[ReferenceUpper]:
    """i.i.d. Laplace (ε-DP for the ℓ1 sensitivity c·Δ ≥ any ‖t‖₁ with ‖t‖ <= Δ), for ℓ2 the
    ℓ2-Laplace [KHP15], and the staircase in the sensitivity's own norm at its best γ (ε-DP by the
    triangle inequality): ε-DP on ℝ^d with exact costs for the named costs (closed forms of a few
    operations, cone moments by Gamma functions; ``CLOSED_FORM_WIDENING``)."""
    from optmech.mechanisms.laplace_nd import L2Laplace, LaplaceND
    from optmech.mechanisms.staircase_nd import StaircaseND

    out = []
    c = norm_factor(s.norm, s.d)
    laws = [("laplace", LaplaceND(epsilon=s.eps, sensitivity=c * s.delta, dim=s.d),
             f"i.i.d. Laplace(scale {c * s.delta / s.eps:g}), epsilon-DP for {s.norm} sensitivity {s.delta:g}")]
    if s.norm == "l2":
        laws.append(("l2_laplace", L2Laplace(epsilon=s.eps, sensitivity=s.delta, dim=s.d),
                     "density proportional to exp(-epsilon ||x||_2 / Delta) [KHP15, Thm 8]"))
    if (f"staircase:{s.norm}", s.cost.spec) not in NUMERIC_COSTS:
        try:
            st = StaircaseND.optimal(s.cost.spec, epsilon=s.eps, sensitivity=s.delta, dim=s.d, norm=s.norm)
            laws.append(("staircase", st, f"the staircase in the {s.norm} norm at its best gamma = {st.gamma:.6g} "
                                          "(epsilon-DP by the triangle inequality)"))
        except SpecError:
            pass
    for name, mech, note in laws:
        try:
            v = float(mech.expected_cost(s.cost.spec))
        except SpecError:
            continue
        key = f"staircase:{s.norm}" if name == "staircase" else name
        numeric = (key, s.cost.spec) in NUMERIC_COSTS  # quadratures, not closed forms
        if math.isfinite(v) and v > 0 and not numeric:
            out.append(ReferenceUpper(float(np.nextafter(v * (1 + CLOSED_FORM_WIDENING), np.inf)), name,
                                      dict(mech.parameters) | ({"scale": float(mech.scale)} if hasattr(mech, "scale") else {}),
                                      mech, note))
    return out


def _lattice_staircase_upper(s: _Setup) -> ReferenceUpper:
    """The best ℓ1 lattice staircase (ε-DP for ℓ1 sensitivity Δ on ℤ^d: the level moves by at most one),
    its series cost widened by 1e-10 relative (the sums of up to ~10^4 positive terms)."""
    from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND, discrete_staircase_nd_costs

    vals = discrete_staircase_nd_costs("l1", s.eps, int(s.delta), s.d)
    r = int(np.argmin(vals)) + 1
    mech = DiscreteStaircaseND(epsilon=s.eps, sensitivity=int(s.delta), r=r, dim=s.d)
    return ReferenceUpper(float(np.nextafter(vals[r - 1] * (1 + 1e-10), np.inf)), "discrete_staircase", {"r": r}, mech,
                          f"the best l1 lattice staircase (r = {r}), its series cost widened by 1e-10 relative")


def _report_layers(s: _Setup, best, info: dict) -> dict:
    """The report when the coupled ℓ1-layer LP was the last step (its gap met the target)."""
    up = best.upper
    claims = [
        f"pure epsilon-DP on Z^{s.d}, sensitivity {int(s.delta)} in the l1 norm, cost ||x||_1",
        f"lower bound: the l1-layer LP on the spheres ||x||_1 = 0..{info['levels']} (far mass priced at the cost's "
        "minimum beyond), lifted to Z^d: for every sphere pair in its rows the uniform laws have a coupling within "
        f"l1 distance Delta, composed of unit-step couplings proven by exact integer transport on orbits "
        f"({info['unit_couplings_proven']} of {info['levels']} proven), so its dual is a dual of the full lattice LP",
        f"upper bound: the closed-form {getattr(up, 'reference', 'law')} ({getattr(up, 'note', '')})",
    ]
    mech = getattr(up, "mechanism", None)
    return {
        "mechanism": mech, "lp": {"levels": info["levels"], "layer_rows": info["layer_rows"]},
        "claims": claims,
        "audit": {"realised_epsilon": None, "target_epsilon": s.eps, "passed": True,
                  "method": "closed form: the l1 lattice staircase (its level moves by at most one)",
                  "tail_mass_bound": None},
        "truncation": {"half_width": info["levels"], "dim": s.d, "norm": s.norm,
                       "lower_bound": "relaxation: l1 spheres up to the radius, far mass at the minimum cost outside",
                       "upper_bound": "closed form (no truncation)"},
    }


def _report_reference(s: _Setup, best, last: Step | None) -> dict:
    """The report when no LP of the lower bound fitted the time limit (``last`` None: the fallback
    bracket), or when a closed-form law is the bracket's upper end: the mechanism of the upper end (that
    law, or the audited shell density solved first)."""
    from optmech.mechanisms.solved import mechanism_from_solver_dict

    up = best.upper
    ref = getattr(up, "reference", None)
    claims = [f"pure epsilon-DP on {'R' if s.cells else 'Z'}^{s.d}, sensitivity {s.delta:g} in the {s.norm} norm",
              "no LP of the lower bound fitted the time limit: the lower bound needs no LP (the cost's floor, or the "
              "norm comparison below)" if last is None
              else (f"the cell LP's lower bound: its repaired dual (resolution {s.n_lat}; cells priced at the cost's "
                    "minimum, a relaxation)" if s.cells else
                    "lower bound: the repaired dual of the lattice LP (every pair in the l1 ball or cube, far mass at the "
                    "cost's minimum outside: a relaxation)")]
    if ref is not None:
        widened = "" if "widened" in up.note else f", its exact expected cost widened by {CLOSED_FORM_WIDENING:g} relative"
        claims.append(f"upper bound: the closed-form {ref} law ({up.note}){widened}")
        mech, method = up.mechanism, f"closed form: the {ref} law (its own privacy proof)"
        audit = {"realised_epsilon": None, "tail_mass_bound": None}
    else:
        claims.append(f"upper bound: the {up.note}, extended with a closed-form tail bound")
        beta = math.exp(-s.eps + min(PRIVACY_MARGIN, s.eps * 1e-3))
        mech = mechanism_from_solver_dict(_mechanism_nd(up, s) | {"epsilon": s.eps, "beta": beta})
        method = "majorant fixed point on the domain, outward-rounded"
        audit = {"realised_epsilon": up.realised_epsilon, "tail_mass_bound": up.tail_mass}
    lp_info = {"resolution": s.n_lat, "cell_width": s.h}
    if last is not None:
        lp_info["orbits"] = len(last.built.model.support.reps)
    return {
        "mechanism": mech, "lp": lp_info, "claims": claims,
        "audit": audit | {"target_epsilon": s.eps, "passed": True, "method": method},
        "truncation": {"half_width": None if last is None else last.built.model.support.R, "dim": s.d, "norm": s.norm,
                       "lower_bound": "the cost's floor (no LP)" if last is None else
                       "relaxation: in-domain pairs, far mass at the minimum cost outside",
                       "upper_bound": f"closed form: {ref}" if ref is not None else up.note},
    }


def _fine_layered_upper(s: _Setup, ctx) -> _Upper | None:
    """On the continuous domain with ℓ1 sensitivity and an ℓ1-shell-priced cost (l1, l2sq): the best
    nonincreasing density constant on thin ℓ1 shells (LAYERED_SHELLS per Δ; a restriction of the
    layered LP with 2 rows per shell) is an exactly ε-DP, audited upper bound, far tighter than the
    cell restriction and cheaper; None where it does not apply."""
    import dataclasses

    if s.norm != "l1" or s.cost.kind not in ("l1", "l2sq") or s.layered:
        return None
    f = dataclasses.replace(s, layered=True, reduced=False, monotone=True, n_lat=max(LAYERED_SHELLS, 8 * s.n_lat),
                            gap=min(s.gap, 1e-9))
    ulp = f.build(_radius(f), "upper")
    try:
        raw = ctx.solve_lp(ulp.lp, share=0.25)
    except SolveFailed:
        return None  # an optional, tighter upper bound: the cell restriction remains
    up = upper_from_lp(ulp, raw.x, f)
    up.note = f"best nonincreasing density constant on l1 shells of width {f.h:g} (layered LP), audited"
    return up


def _mechanism_nd(up: _Upper, s: _Setup) -> dict:
    """The upper-bound mechanism as JSON: per-point (or per-cell) masses of the representatives, or
    the density per ℓ1 shell."""
    tail = {"tail_factor": up.tail_factor, "tail_rate": up.tail_rate}
    head = {"dim": s.d, "norm": s.norm, "sensitivity": int(s.delta) if not s.cells else s.delta}
    if up.layout == "shells":
        w = up.width
        dens = up.masses / w**s.d if s.cells else up.masses
        return {"kind": "l1_shell_density_nd", **head, "shell_width": w, "continuous": bool(s.cells),
                "density": dens.tolist(), **tail,
                "rule": ("density (continuous: per unit volume; lattice: mass per point) on the shell "
                         "k*shell_width <= ||x||_1 < (k+1)*shell_width is density[k]; beyond the listed shells the mass "
                         "per shell-point is <= tail_factor * tail_rate**k")}
    out = {
        "kind": "lattice_pmf_nd" if up.layout == "points" else "cell_pmf_nd",
        **head,
        "symmetry": {"signed_permutations": "signed permutations", "signs": "coordinate signs"}.get(up.group, "none"),
        "representatives": up.reps.tolist(),
        "mass": up.masses.tolist(),
        **tail,
        "rule": ("P(x) = mass[i] where representatives[i] is x itself (symmetry none), its absolute values (coordinate "
                 "signs) or its sorted absolute values (signed permutations); any point not listed has "
                 "P(x) <= tail_factor * tail_rate**||x||_1"),
    }
    if up.layout == "cells":
        out["cell_width"] = up.width
        out["rule"] = ("cells h*(z + [-1/2, 1/2)^d) with h = cell_width carry the mass of their index z, by the rule: "
                       + out["rule"].replace("x", "z") + "; the density is mass / h^d on the cell")
    return out


def _references(problem, s: _Setup, lo: float, up: float) -> list[ReferenceValue]:
    """Closed forms: the ℓ1 staircase (continuous, its best γ) or lattice staircase (its best r; Δ = 1:
    i.i.d. geometric, exactly optimal for separable costs), and the i.i.d. (discrete) Laplace; each at
    its best shift (``parameters["shift"]``, :func:`optmech.mechanisms.shifts.shift_references_nd`,
    the rule of every family): 0 for the named costs (proven,
    :func:`optmech.mechanisms.shifts.centre_is_best_nd`).  For a cost expression on ℤ^d the i.i.d.
    discrete Laplace is listed (when its sum fits), priced by an exact lattice sum with a proven tail bound
    (:func:`optmech.mechanisms.shifts.product_discrete_laplace_price`) at the shift vector a
    coordinate-wise search finds; on ℝ^d an expression has no reference (no certified route)."""
    from optmech.mechanisms.laplace import DiscreteLaplace
    from optmech.mechanisms.laplace_nd import discrete_laplace_nd_cost, l2_laplace_cost, laplace_nd_cost
    from optmech.mechanisms.shifts import product_discrete_laplace_price, shift_references_nd

    out: list[ReferenceValue] = []
    if s.cost.kind == "expr":
        if s.cells:
            return out
        c, D = norm_factor(s.norm, s.d), int(s.delta)
        lam = math.exp(-s.eps / (c * D))
        centred = product_discrete_laplace_price(s.cost, lam)
        if centred is None:
            return out
        v = float(centred.value)
        ref = ReferenceValue("discrete_laplace", v, {"lambda": lam}, reference_inside(v, lo, up, centred.exact),
                             centred.exact, f"upper bound: i.i.d. discrete Laplace, epsilon-DP for {s.norm} sensitivity "
                             f"{D}; {centred.note}", kind="upper")
        marginal = DiscreteLaplace(epsilon=s.eps / c, sensitivity=D)
        return shift_references_nd([ref], s.cost, dim=s.d, integer=True,
                                   law=lambda item: (marginal, lambda cost: product_discrete_laplace_price(cost, lam)))
    eps, d, cost, norm = s.eps, s.d, s.cost.spec, s.norm

    def add(name, value, params, exact, note, kind="upper"):
        v = float(value)
        inside = reference_inside(v, lo, up, exact)
        out.append(ReferenceValue(name, v, params, inside, exact, note, kind=kind))

    c = norm_factor(norm, d)
    if s.cells:
        add("laplace", laplace_nd_cost(cost, eps / c, s.delta, d), {"scale": c * s.delta / eps}, True,
            f"upper bound: i.i.d. Laplace, epsilon-DP for {norm} sensitivity {s.delta:g}")
        if norm == "l2":
            add("l2_laplace", l2_laplace_cost(cost, eps, d, s.delta), {"scale": s.delta / eps}, True,
                "upper bound: density proportional to exp(-epsilon ||x||_2 / Delta) [KHP15]")
        if norm in ("l2", "linf"):  # the staircase in the sensitivity's own norm (ε-DP: triangle inequality)
            from optmech.mechanisms.staircase_nd import StaircaseND

            try:
                st = StaircaseND.optimal(cost, epsilon=eps, sensitivity=s.delta, dim=d, norm=norm)
                v = st.expected_cost(cost)
            except SpecError:  # no exact cost of this norm's staircase for this cost
                v = None
            if v is not None:
                add("staircase", v, {"gamma": st.gamma, "norm": norm}, False,
                    f"the staircase in the {norm} norm at its best gamma: epsilon-DP for {norm} sensitivity "
                    f"{s.delta:g} (the level moves by at most one, triangle inequality), an upper bound; whether it is "
                    "V* is open")
        if norm == "l1" and cost in ("l1", "l2sq"):
            from optmech.mechanisms.staircase_nd import optimal_gamma_nd, staircase_nd_optimal_cost

            g = optimal_gamma_nd(cost, eps, d, s.delta)
            proven = cost == "l1"
            add("staircase", staircase_nd_optimal_cost(cost, eps, s.delta, d), {"gamma": g}, False,
                "the d-D staircase at its best gamma [GKOV15; Geng13, (3.7) for d = 2]: "
                + ("V* for l1 cost ([GKOV15, Thm 1] for d = 2; the [GKOV15] conjecture, since proved, for every d)" if proven
                   else "an upper bound; its optimality for l2sq cost is open"), kind=None if proven else "upper")
        return shift_references_nd(out, s.cost, dim=d, integer=False)
    D = int(s.delta)
    add("discrete_laplace", discrete_laplace_nd_cost(cost, eps / c, D, d), {"lambda": math.exp(-eps / (c * D))}, True,
        f"upper bound: i.i.d. discrete Laplace, epsilon-DP for {norm} sensitivity {D}")
    if norm == "l1" and cost in ("l1", "l2sq"):
        from optmech.mechanisms.discrete_staircase_nd import discrete_staircase_nd_costs

        vals = discrete_staircase_nd_costs(cost, eps, D, d)
        r = int(np.argmin(vals)) + 1
        add("discrete_staircase", vals[r - 1], {"r": r}, False,
            "the best l1 lattice staircase: an upper bound; equal to the lattice optimum in "
            "every case tested so far (d = 3..5)")
    return shift_references_nd(out, s.cost, dim=d, integer=True)

