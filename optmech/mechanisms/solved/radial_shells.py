r"""The radial shell density on ℝ^d (``kind = "radial_shell_density_nd"``, :class:`RadialShellDensityND`) and
its audit for ℓ2 sensitivity (:func:`radial_delta_upper`).

The law.  Radii 0 = e_0 < e_1 < ... < e_n and nonincreasing densities g_0 >= g_1 >= ... >= g_{n−1} >= 0:
density f(x) = g_i/Z where e_i <= ‖x‖₂ < e_{i+1}, and 0 beyond e_n; Z = V_d Σ_i g_i (e_{i+1}^d − e_i^d)
(V_d the unit ball's volume).  The (ε, δ) LP of :mod:`optmech.problems.approx_radial` proposes it.

One shift suffices [derived].  For a density f(x) = g(‖x‖₂) with g nonincreasing on [0, ∞) and
c = e^ε >= 1, the hockey-stick divergence E(v) = ∫ (f(x) − c f(x + v))₊ dx depends on ‖v‖₂ only
(rotations) and is nondecreasing in ‖v‖₂.  Proof: write x = a u + w with u = v/‖v‖₂, w ⊥ u.  On each
line, h(a) = g(√(a² + ‖w‖²)) is even in a and nonincreasing in |a|, and E(tu) = ∫_w e_w(t) dw with
e_w(t) = ∫ (h(a) − c h(a + t))₊ da.  Let 0 <= t < t' and P = {a : h(a) > c h(a + t)}.  On P,
h(a) > c h(a + t) >= h(a + t), so |a| < |a + t|, i.e. a > −t/2 and a + t' > a + t > 0; h being
nonincreasing on [0, ∞), h(a + t') <= h(a + t).  Hence e_w(t') >= ∫_P (h(a) − c h(a + t')) da >=
∫_P (h(a) − c h(a + t)) da = e_w(t).  So the worst shift of norm <= Δ has norm Δ: δ(ε) = E(Δ u) for
any unit u, which :func:`radial_delta_upper` bounds from above.

The audit [derived].  With W(i, j) = vol{x : ‖x‖ in shell i, ‖x + v‖ in shell j} (j = n: ‖x + v‖ >= e_n,
where g_n = 0) and T(i, j) = Σ_{j' >= j} W(i, j') = vol{x in shell i : ‖x + v‖ >= e_j},
Z·E = Σ_i Σ_j (g_i − c g_j)₊ W(i, j).  For j <= i the term is 0 (g_i <= g_j <= c g_j); for fixed i
the positive terms are j >= J_i, and a_j = g_i − c g_j is nondecreasing in j there, so by Abel
summation Σ_{j >= J_i} a_j W(i, j) = a_{J_i} T(i, J_i) + Σ_{j > J_i} c (g_{j−1} − g_j) T(i, j), every
coefficient >= 0.  In polar coordinates T(i, j) = V_d ∫_{e_i}^{e_{i+1}} P(‖r U + v‖ >= e_j) d(r^d) with
U uniform on the sphere, and P(‖r U + v‖ <= ρ) = G_d(τ), τ = (ρ² − r² − s²)/(2 r s), s = ‖v‖
(:func:`optmech.exact.sphere.sphere_cdf`).  τ is unimodal in r (∂τ/∂r = −(r² + ρ² − s²)/(2 r² s)), so
on a piece [r_a, r_b] of a shell its minimum is at an end, and 1 − G_d(min(τ(r_a), τ(r_b))) bounds
P(‖r U + v‖ >= ρ) there; summing over :data:`AUDIT_PIECES` pieces per shell (up to 64 times more in a
shell wider than the median) with the pieces' exact weights r_b^d − r_a^d bounds T(i, j).  Every quantity is enclosed: e^ε from below (only c_lo <= c
enters: a_j <= g_i − c_lo g_j and c (g_{j−1} − g_j) with c rounded up), τ by a proven float error
bound, G_d by :func:`~optmech.exact.sphere.sphere_cdf_bounds`, the powers r^d in log space with a
relative bound, the sums rounded up; V_d cancels (r^d is scaled by e_n^d throughout).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.costs.interval import WIDEN_LIBM, round_down, round_up
from optmech.errors import SpecError
from optmech.exact.sphere import (
    abs_coordinate_mean,
    shell_moments,
    shell_volumes,
    sphere_cdf_bounds,
    volume_error,
)
from optmech.mechanisms.base import Privacy
from optmech.mechanisms.base_nd import NDMechanism
from optmech.mechanisms.solved.common import (
    SolvedMechanism,
    categorical,
    cost_nd,
    load_audit_limit,
    read_array,
    read_number,
)

__all__ = ["AUDIT_PIECES", "RadialShellDensityND", "check_shells", "radial_delta_upper", "shell_moment_upper"]

#: Pieces per shell of the audit's bound on T(i, j) (module docstring).
AUDIT_PIECES = 1024
_U = 2.0**-53


def shell_moment_upper(edges: np.ndarray, d: int, k: int) -> np.ndarray:
    """Upper bounds of E[R^k | shell i] for R with density ∝ r^{d−1} on [e_i, e_{i+1}]
    (:func:`~optmech.exact.sphere.shell_moments`, widened), capped by e_{i+1}^k."""
    e = np.asarray(edges, dtype=float)
    v = shell_moments(e, d, k) * (1 + volume_error(d + k)) + 2.0**-1060
    return np.minimum(v, round_up(e[1:] ** k))


def _tau_lower(r: np.ndarray, rho: np.ndarray, s: float) -> np.ndarray:
    """A lower bound of τ = (ρ² − r² − s²)/(2 r s) (r >= 0; r = 0 gives −inf, a valid bound: G_d >= 0)."""
    num = rho * rho - r * r - s * s
    err = 4 * _U * (rho * rho + r * r + s * s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (num - err) / (2.0 * r * s)
    t = np.where(r > 0, t, -np.inf)
    return np.where(np.isnan(t), -np.inf, round_down(t, 2.0**-50))


def check_shells(edges, density) -> tuple[np.ndarray, np.ndarray]:
    """(edges, densities) as float arrays, checked: 0 = e_0 < e_1 < ... < e_n, and n densities, nonnegative,
    nonincreasing, g_0 > 0 (what the one-shift lemma and the audit need); one-line :class:`SpecError` otherwise."""
    e = np.asarray(edges, dtype=float)
    g = np.asarray(density, dtype=float)
    if e.ndim != 1 or g.ndim != 1 or e.size != g.size + 1 or e[0] != 0.0 or np.any(np.diff(e) <= 0):
        raise SpecError("radial shells need edges 0 = e_0 < e_1 < ... < e_n, one more than the densities")
    if np.any(g < 0) or np.any(np.diff(g) > 0) or not g[0] > 0:
        raise SpecError("the radial shell densities must be nonnegative, nonincreasing and not all zero")
    return e, g


def radial_delta_upper(edges, density, epsilon: float, sensitivity: float, d: int,
                       pieces: int = AUDIT_PIECES) -> float:
    """A proven upper bound of δ(ε) = sup over shifts ‖v‖₂ <= Δ of the hockey-stick divergence of the radial
    shell density (module docstring: one shift of norm Δ suffices for a nonincreasing profile).

    Parameters
    ----------
    edges : (n + 1,) array
        0 = e_0 < e_1 < ... < e_n.
    density : (n,) array
        Nonincreasing, nonnegative, not all zero (unnormalised).
    epsilon, sensitivity : float
        ε >= 0 and Δ > 0.
    d : int
        Dimension, >= 2.
    pieces : int
        Pieces per shell of the bound on T(i, j).
    """
    e, g = check_shells(edges, density)
    n = g.size
    d, s = int(d), float(sensitivity)
    c_lo = float(round_down(math.exp(epsilon), WIDEN_LIBM))
    c_hi = float(round_up(math.exp(epsilon), WIDEN_LIBM))
    gx = np.append(g, 0.0)  # g_n = 0 beyond the last edge
    top = e[-1]
    # piece ends per shell (scaled by e_n) and the pieces' weights (r_b^d − r_a^d)/e_n^d, from above
    width = np.diff(e)
    h_ref = float(np.median(width))  # a few narrow shells (refined at a jump) leave the others' pieces alone

    def piece_ends(i: int) -> np.ndarray:
        """The ends of shell i's pieces: ``pieces`` of them, times up to 64 for a shell wider than the median."""
        m = pieces * int(min(64, math.ceil(width[i] / h_ref * (1 - 1e-9))))
        r = e[i] + width[i] * np.linspace(0.0, 1.0, m + 1)
        r[0], r[-1] = e[i], e[i + 1]
        return np.maximum.accumulate(r)

    w_lo, _ = shell_volumes(e, d)
    total_lo = float(round_down(math.fsum((g * w_lo).tolist()), 2.0**-50))
    if not total_lo > 0:
        raise SpecError("the radial shell density's total mass underflows")
    terms: list[float] = []
    for i in range(n):
        if g[i] <= 0:
            break
        # J_i: the first j > i with g_i > c_lo g_j (below it every term is exactly 0)
        j = np.arange(i + 1, n + 1)
        pos = np.flatnonzero(g[i] > c_lo * gx[j])
        if pos.size == 0:
            continue
        J = int(j[pos[0]])
        js = np.arange(J, n + 1)
        js = js[e[js] < round_up(e[i + 1] + s)]  # T(i, j) = 0 once e_j >= e_{i+1} + s
        if js.size == 0:
            continue
        coef = np.empty(js.size)
        prod = c_lo * gx[J]  # within a relative 2^-53 of the exact product
        coef[0] = round_up((g[i] - prod) + 2 * _U * prod, 2.0**-50)
        if js.size > 1:
            coef[1:] = round_up(c_hi * (gx[js[1:] - 1] - gx[js[1:]]), 2.0**-50)
        # sup over each piece of P(‖rU + v‖ >= e_j) = 1 − G_d(min τ at the piece's ends)
        r = piece_ends(i)
        tau = _tau_lower(r[:, None], e[js][None, :], s)  # (pieces + 1, len(js))
        tmin = np.minimum(tau[:-1], tau[1:])
        g_lo, _ = sphere_cdf_bounds(d, tmin, tmin)
        tail = np.minimum(1.0, round_up(1.0 - g_lo, 2.0**-50))
        T = round_up(shell_volumes(r, d, top)[1] @ tail, 2.0**-40)  # a sum of nonnegative products (at most 2^16 terms)
        terms.append(float(round_up(math.fsum((coef * T).tolist()), 2.0**-48)))
    num = float(round_up(math.fsum(terms), 2.0**-48)) if terms else 0.0
    return float(min(1.0, round_up(num / total_lo, 2.0**-50)))


def _unit_ball_log_volume(d: int) -> float:
    return (d / 2) * math.log(math.pi) - math.lgamma(d / 2 + 1)


class RadialShellDensityND(SolvedMechanism, NDMechanism):
    r"""A radial density on ℝ^d, constant on spherical shells (``kind = "radial_shell_density_nd"``):
    the (ε, δ) solver's law for ℓ2 sensitivity and radial costs (module docstring).

    Fields: ``dim``, ``norm`` (``"l2"``), ``sensitivity`` Δ, ``edges`` (0 = e_0 < ... < e_n),
    ``density`` (nonincreasing g_0..g_{n−1}, unnormalised), and the solver's ``epsilon``, ``delta``,
    optional ``realised_delta``.  Exact pdf (up to float rounding) and sampler (a shell by its mass, the
    radius by inverting r^d on it, a uniform direction); ``expected_cost`` in closed form for ``l2``,
    ``l2sq`` and ``l1``; ``privacy()`` repeats the audit (:func:`radial_delta_upper`).
    """

    name = "radial_shell_density_nd"
    lattice = False
    symmetric = True

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon, delta)
        self._init_dim(int(read_number(d, "dim", integer=True, positive=True)))
        if self.dim < 2:
            raise SpecError("radial_shell_density_nd needs dim >= 2")
        self.norm = str(d.get("norm", "l2"))
        if self.norm != "l2":
            raise SpecError(f"radial_shell_density_nd is for l2 sensitivity, got norm {self.norm!r}")
        self._sensitivity = read_number(d, "sensitivity", positive=True)
        self.edges = read_array(d, "edges", 1)
        self.density = read_array(d, "density", 1)
        e, g = check_shells(self.edges, self.density)
        rd = d.get("realised_delta")
        self.realised_delta = None if rd is None else read_number(d, "realised_delta")
        lo, hi = shell_volumes(e, self.dim)
        self._w = 0.5 * (lo + hi)  # (e_{i+1}^d − e_i^d)/e_n^d
        self._mass = g * self._w
        self._Z = math.fsum(self._mass.tolist())
        if not self._Z > 0:
            raise SpecError("the radial shell density's total mass underflows")

    @property
    def sensitivity(self) -> float:
        return self._sensitivity

    def shell_masses(self) -> np.ndarray:
        """P(‖X‖ in shell i)."""
        return self._mass / self._Z

    # law -----------------------------------------------------------------------------------------
    def _pdf_nd(self, x):
        r = np.linalg.norm(np.asarray(x, dtype=float), axis=-1)
        i = np.searchsorted(self.edges, r, side="right") - 1
        inside = (i >= 0) & (i < self.density.size)
        g = np.where(inside, self.density[np.clip(i, 0, self.density.size - 1)], 0.0)
        log_norm = math.log(self._Z) + _unit_ball_log_volume(self.dim) + self.dim * math.log(self.edges[-1])
        return g * math.exp(-log_norm) if log_norm < 700 else g * np.exp(-log_norm)

    def _sample(self, n, rng):
        i = categorical(self._mass, n, rng)
        d, top = self.dim, self.edges[-1]
        lo = (self.edges[i] / top) ** d
        hi = (self.edges[i + 1] / top) ** d
        r = top * (lo + rng.random(n) * (hi - lo)) ** (1.0 / d)
        r = np.clip(r, self.edges[i], self.edges[i + 1])
        u = rng.standard_normal((n, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        return u * r[:, None]

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind} (use pdf)")

    sf = cdf

    # moments and costs ---------------------------------------------------------------------------
    def _radial_moment(self, k: int) -> float:
        """E ‖X‖^k (closed form per shell; float)."""
        m = shell_moments(self.edges, self.dim, k)
        return math.fsum((self._mass * m).tolist()) / self._Z

    def mean(self) -> np.ndarray:
        return np.zeros(self.dim)

    def var(self) -> np.ndarray:
        return np.full(self.dim, self._radial_moment(2) / self.dim)

    def expected_cost(self, cost) -> float:
        """E L(X) for ``l2`` (E R), ``l2sq`` (E R²) and ``l1`` (E R · d E|U₁|: X = R U, U uniform on the
        sphere, independent of R)."""
        c = cost_nd(cost, self.dim)
        if c.kind == "l2":
            return self._radial_moment(1)
        if c.kind == "l2sq":
            return self._radial_moment(2)
        if c.kind == "l1":
            lo, hi = abs_coordinate_mean(self.dim)
            return self._radial_moment(1) * self.dim * 0.5 * (lo + hi)
        raise self._refuse(f"the expected cost {c.spec!r}", "radial shells price l2, l2sq and l1")

    def audited_delta(self) -> tuple[float | None, str]:
        """(δ(ε) of the loaded densities by :func:`radial_delta_upper`, "") or (None, why)."""
        cached = self.__dict__.get("_audited")
        if cached is None:
            if math.isnan(self._epsilon):
                cached = (None, "epsilon unknown")
            elif self.density.size * 4 * (self.density.size + 1) > load_audit_limit():
                cached = (None, "more shell pairs than the load-time audit limit")
            else:
                cached = (radial_delta_upper(self.edges, self.density, self._epsilon, self._sensitivity, self.dim), "")
            self.__dict__["_audited"] = cached
        return cached

    def privacy(self) -> Privacy:
        """(ε, δ)-DP for ℓ2 shifts of norm <= Δ, δ(ε) audited on the loaded densities (module docstring:
        a nonincreasing radial profile's worst shift has norm Δ; outward-rounded bound)."""
        how = ("the hockey-stick divergence at one shift of l2 norm equal to the sensitivity (the worst one for a "
               "nonincreasing radial profile), bounded from above by Abel summation over the shells and proven "
               "enclosures of the sphere's coordinate cdf")
        delta, why = self.audited_delta()
        if delta is not None:
            note = f"{self.kind}: audited at load on the loaded densities: {how}: delta({self._epsilon:.17g}) <= {delta:.17g}"
            if not math.isnan(self._delta) and delta > self._delta:
                note += f"; above the recorded target delta {self._delta!r}: the densities do not meet it"
            return Privacy("approx", self._epsilon, delta, self._sensitivity, "l2", note)
        note = f"{self.kind}: as recorded by the solve, not re-audited ({why})"
        recorded = self._delta if self.realised_delta is None else self.realised_delta
        return Privacy("approx", self._epsilon, recorded, self._sensitivity, "l2", note)
