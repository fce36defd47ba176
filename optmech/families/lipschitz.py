"""The Lipschitz family: certified brackets for optimal additive noise under ε-Lipschitz privacy [KHP15].

``optmech.solve(Problem(privacy=Lipschitz(epsilon), cost=..., dim=..., norm=..., domain=...))`` returns
a :class:`optmech.result.Result` whose [lower_bound, upper_bound] contains the optimal cost when
``certified`` is true.

What is certified, and how:

* **Lower bound.**  :func:`optmech.certify.dual_lower_bound` of a relaxation built in
  :mod:`optmech.problems.lipschitz` (points of ℤ, cells of ℝ, or ℓ2 shells of ℝ^d; far lumps priced
  at the cost's minimum outside the window and linked to the edge mass).
* **Upper bound.**  The LP's masses are repaired to their smallest β-majorant along the chain
  (β = e^{−εh + δ}, δ = min(1e-11, 1e-3 εh): strictly more private than required), audited with
  outward rounding (:func:`optmech.problems.lipschitz.audit_chain`), and extended beyond the window
  by geometric (ℤ) or exponential (ℝ, ℝ^d) tails with the same rate.  On ℤ the mechanism is the pmf
  itself.  On ℝ (and radially on ℝ^d) it is the density interpolating the repaired knot values
  log-linearly (continuous, log-slope <= ε − δ/h on every piece, so exactly ε-Lipschitz-private;
  piecewise-constant densities are not Lipschitz-private, §7).  Its cost is bounded above by
  splitting every piece into ``SUBPIECES`` parts, each priced at the cost's outward-rounded maximum
  times the part's exact mass (a logarithmic mean), plus closed-form tail series using the cost's
  growth bound; the normaliser is bounded below.  All sums carry relative margins 1e-12.
* **ℓ1 in d dimensions** (product, §8): for separable costs (l1 = Σ|x_i|, l2sq = Σx_i²) the
  optimum is d × the 1-D optimum: every 1-D marginal of an ℓ1-Lipschitz law is Lipschitz (lower
  bound), and the product of d copies of the 1-D mechanism is ℓ1-Lipschitz (upper bound).
* **ℓ2 on ℝ^d** (radial reduction, §8): rotation averaging makes a radial density WLOG; the radial
  profile is ε-Lipschitz in r.  Costs l2 (r) and l2sq (r²).
* **Before any LP** (:meth:`LipschitzFamily.initial_uppers`, :meth:`LipschitzFamily.initial_lower`), so
  that a time limit or an interrupt before the first LP still answers with a certified bracket: below,
  the cost's proven floor (0 for the named costs); above, a Laplace law at the rate a = ε(1 − ~1e-11)
  (:func:`laplace_rate`, strictly inside the privacy constraint like the LPs' repaired laws).  On ℤ
  (and per coordinate of the ℓ1 product on ℤ^d) it is the two-sided geometric law b^{|k|}, b = e^{−a}:
  on ℤ, ε-Lipschitz privacy is exactly ε-DP with Δ = 1 (the adjacent ratio rows chain to every pair,
  [KHP15] Prop 3), and it is priced by :func:`upper_points` on the LP's
  window.  On ℝ, ℝ^d (ℓ1) and ℝ^d (ℓ2) it is the density ∝ e^{−a‖x‖} in the family's norm, ε-Lipschitz by
  [KHP15] Prop 4 (and ε-ℓ2-Lipschitz laws are ε-ℓ1-Lipschitz); its expected cost is a closed form
  (:func:`laplace_closed_form`), widened by ``CLOSED_FORM_WIDENING``; an expression cost on ℝ is priced
  by :func:`upper_cells` with the Laplace knots (the log-linear interpolant of e^{−a|x|} is e^{−a|x|}).
  The piecewise-constant cell densities of the pure family are not Lipschitz-private, so its DP
  bounds on ℝ are not used here.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from optmech.budget import BASELINE_BYTES, LPPlan, gib, memory_budget
from optmech.certify import CLOSED_FORM_WIDENING, PRIVACY_MARGIN, LowerCertificate, dual_lower_bound, reference_inside
from optmech.errors import SpecError
from optmech.families.base import Built, Step, Stop
from optmech.spec import Continuous
from optmech.problems.lipschitz import (
    ChainLP, audit_chain, build_line, build_radial, majorant,
)
from optmech.result import ReferenceValue

#: Sub-pieces per knot interval when bounding the cost of the log-linear density.
SUBPIECES = 32
#: e-folds of the optimum's decay covered by the window (plus a few per power of the cost).
WINDOW_EFOLDS = 32.0
MAX_KNOTS = 2_000_000
#: Half-width of the window on which the geometric law found before any LP is priced on ℤ (at most).
INITIAL_POINTS_HALF_WIDTH = 50_000
_M = 1e-12  # relative margin on sums


@dataclass
class _Upper:
    value: float
    certified: bool
    realised_rate: float
    tail_mass: float | None
    note: str
    knots: np.ndarray
    values: np.ndarray
    #: the exponential tails' rate when it is not the chain's −ln β / h (the closed-form Laplace laws)
    tail_rate: float | None = None


@dataclass
class KnotGrid:
    """Knots of a law built without an LP: what :func:`upper_points`, :func:`upper_cells` and the report
    read of a :class:`~optmech.problems.lipschitz.ChainLP` (positions ``x``, spacing ``h``, ``kind``
    "points", "cells" or "shells", ``dim``)."""

    x: np.ndarray
    h: float
    kind: str
    dim: int = 1


# ------------------------------------------------------------------------------------------------
# input checks
# ------------------------------------------------------------------------------------------------
def _check(epsilon, cost, dim, norm, domain, resolution):
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise SpecError(f"epsilon must be a number, got {epsilon!r}") from None
    if not (math.isfinite(eps) and eps > 0):
        raise SpecError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or dim < 1:
        raise SpecError(f"dim must be an integer >= 1, got {dim!r}")
    if domain not in ("integer", "continuous"):
        raise SpecError(f"domain must be 'integer' or 'continuous', got {domain!r}")
    if norm not in ("l1", "l2", "abs"):
        raise SpecError(f"lipschitz privacy supports the norms l1 and l2 (abs in 1-D), got {norm!r}")
    if resolution is not None:
        if domain == "integer":
            raise SpecError("resolution is for the continuous domain only")
        if not (isinstance(resolution, (int, np.integer)) and not isinstance(resolution, bool) and resolution >= 1):
            raise SpecError(f"resolution must be an integer >= 1 (cells per unit), got {resolution!r}")
    return eps


_ND_TO_1D = {"l1": "abs", "l2sq": "square"}


def _plan(eps, cost, dim, norm, domain):
    """(mode, cost object, factor, power): mode "line" (1-D or ℓ1 product) or "radial"."""
    from optmech.costs import Cost, parse_cost

    if dim == 1:
        text = cost if isinstance(cost, str) else str(cost)
        if isinstance(cost, Cost):
            c = cost
        else:
            key = text.strip().lower()
            c = parse_cost({"l1": "abs", "l2": "abs", "linf": "abs", "l2sq": "square"}.get(key, text))
        return "line", c, 1, None
    name = str(getattr(cost, "spec", cost)).strip().lower()
    if norm in ("l1", "abs"):
        if name not in _ND_TO_1D:
            raise SpecError(f"lipschitz privacy in {dim}-D with the l1 norm supports the separable costs l1 and l2sq, "
                            f"got {name!r}")
        return "line", parse_cost(_ND_TO_1D[name]), dim, None
    if domain != "continuous":
        raise SpecError("lipschitz privacy with the l2 norm in d > 1 is supported on the continuous domain only "
                        "(radial reduction)")
    if name not in ("l2", "l2sq"):
        raise SpecError(f"lipschitz privacy with the l2 norm supports the radial costs l2 and l2sq, got {name!r}")
    return "radial", name, 1, 1.0 if name == "l2" else 2.0


# ------------------------------------------------------------------------------------------------
# tails
# ------------------------------------------------------------------------------------------------
def _growth(cost, x0: float):
    """(C, c0, P, R) with L(t) <= C (c0 + |t|)^P e^{R|t|} for |t| >= x0 (None if unproven)."""
    if isinstance(cost, tuple):  # radial: ("r", power)
        return (1.0, 0.0, float(cost[1]), 0.0)
    if cost.kind != "expr":
        return (1.0, 0.0, float(cost.power), 0.0)
    g = cost.growth(x0)
    if g is None:
        return None
    C, P, R = g
    return (float(C), 1.0, float(P), float(R))


def tail_series(beta: float, x0: float, h: float, growth) -> float:
    """Upper bound of Σ_{j>=1} β^j G(x0 + jh), G(x) = C (c0 + x)^P e^{Rx} (x0 >= 0)."""
    if growth is None:
        return math.inf
    C, c0, P, R = growth
    rho = beta * math.exp(R * h)
    if not rho < 1:
        return math.inf
    a = -math.log(rho)
    base = c0 + x0
    # ratio of consecutive terms at x: ρ (1 + h/(c0+x))^P, <= √ρ once (1 + h/(c0+x))^P <= ρ^{-1/2}
    need = h / math.expm1(a / (2 * max(P, 1e-300))) if P > 0 else 0.0
    j0 = max(1, int(math.ceil((need - base) / h)) + 1)
    J = j0 + int(math.ceil(2 * 45.0 / a)) + 2
    j = np.arange(1, J + 2, dtype=float)
    x = x0 + j * h
    with np.errstate(under="ignore", divide="ignore"):
        logt = j * math.log(beta) + P * np.log(np.maximum(c0 + x, 1e-300)) + R * x
        t = np.exp(logt)
    s = math.fsum(t[:-1])
    rem = float(t[-1]) / (1 - math.sqrt(rho))
    return C * (s + rem) * (1 + 1e-10)


# ------------------------------------------------------------------------------------------------
# upper bounds
# ------------------------------------------------------------------------------------------------
def _beta(eps: float, h: float) -> float:
    return math.exp(-eps * h + min(PRIVACY_MARGIN, 1e-3 * eps * h))


def upper_points(cl: ChainLP | KnotGrid, masses: np.ndarray, cost, eps: float) -> _Upper:
    """ℤ (or hℤ): majorant-repaired pmf with geometric tails (module doc); ``cl`` gives the points ``x``
    and their spacing ``h``."""
    h = cl.h
    w = masses.copy()
    if not np.any(w > 0):
        w[len(w) // 2] = 1.0
    beta = _beta(eps, h)
    phi = majorant(w, beta)
    aud = audit_chain(phi, h, eps)
    lhi = np.asarray(cost.enclose(cl.x, cl.x)[1], dtype=float)
    xK = float(cl.x[-1])
    g = _growth(cost, xK)
    tails = (phi[0] + phi[-1]) * tail_series(beta, xK, h, g)
    num = math.fsum(phi * lhi) * (1 + _M) + tails
    den = math.fsum(phi) * (1 - _M)
    value = float(np.nextafter(num / den * (1 + _M), np.inf))
    tail_mass = (phi[0] + phi[-1]) * beta / (1 - beta) / den
    ok = aud.passed and math.isfinite(value)
    note = "" if ok else ("audit failed" if not aud.passed else "the cost's growth could not be bounded on the tail")
    return _Upper(value, ok, aud.realised_rate, tail_mass, note, cl.x, phi / den)


def _subpieces(knots: np.ndarray, vals: np.ndarray, m: int):
    """Sub-knots (u_j) and masses of the log-linear interpolant on each [u_j, u_{j+1}]."""
    h = float(knots[1] - knots[0])
    t = np.arange(m + 1) / m
    lv = np.log(vals)
    sub_lv = (lv[:-1, None] + (lv[1:] - lv[:-1])[:, None] * t[None, :])  # (pieces, m+1)
    sub_v = np.exp(sub_lv)
    u = knots[:-1, None] + h * t[None, :]
    a = sub_v[:, :-1]
    y = sub_lv[:, 1:] - sub_lv[:, :-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(y == 0, 1.0, np.expm1(y) / np.where(y == 0, 1.0, y))
    mass = (h / m) * a * f
    return u[:, :-1].ravel(), u[:, 1:].ravel(), mass.ravel()


def upper_cells(cl: ChainLP | KnotGrid, masses: np.ndarray, cost, eps: float, m: int = SUBPIECES) -> _Upper:
    """ℝ: log-linear density through the repaired knot values at the cell centres, exponential
    tails of rate ε' = −ln β / h beyond ±Kh."""
    h = cl.h
    w = masses.copy()
    if not np.any(w > 0):
        w[len(w) // 2] = 1.0
    beta = _beta(eps, h)
    phi = majorant(w / h, beta)
    aud = audit_chain(phi, h, eps)
    lo_u, hi_u, mass = _subpieces(cl.x, phi, m)
    lhi = np.asarray(cost.enclose(lo_u, hi_u)[1], dtype=float)
    eps_t = -math.log(beta) / h  # tail rate (real, rounded here: margins below)
    xK = float(cl.x[-1])
    g = _growth(cost, xK)
    # ∫_{xK+jh}^{xK+(j+1)h} φ_K e^{−ε'(x−xK)} L <= φ_K β^j (1−β)/ε' · G(xK+(j+1)h)
    S = tail_series(beta, xK, h, g) / beta
    tail_cost = (phi[0] + phi[-1]) * (-math.expm1(math.log(beta))) / eps_t * S * (1 + 1e-10)
    tail_mass = (phi[0] + phi[-1]) / eps_t * (1 - 1e-10)
    num = math.fsum(mass * lhi) * (1 + 1e-11) + tail_cost
    den = (math.fsum(mass) + tail_mass) * (1 - 1e-11)
    value = float(np.nextafter(num / den * (1 + _M), np.inf))
    ok = aud.passed and math.isfinite(value)
    note = "" if ok else ("audit failed" if not aud.passed else "the cost's growth could not be bounded on the tail")
    return _Upper(value, ok, aud.realised_rate, tail_mass / den, note, cl.x, phi / den)


def upper_radial(cl: ChainLP, masses: np.ndarray, power: float, eps: float, m: int = SUBPIECES) -> _Upper:
    """ℝ^d, ℓ2: radial profile log-linear through repaired knot values at r_k = kh (k = 0..K),
    exponential tail beyond Kh; E r^P = ∫ r^{P+d−1} h / ∫ r^{d−1} h bounded piece by piece."""
    h, d = cl.h, cl.dim
    K = len(masses)
    k = np.arange(K, dtype=float)
    vol = (k + 1) ** d - k**d
    w = np.append(masses / vol, 0.0)
    if not np.any(w > 0):
        w[0] = 1.0
    beta = _beta(eps, h)
    phi = majorant(w, beta)
    aud = audit_chain(phi, h, eps)
    knots = np.arange(K + 1) * h
    lo_u, hi_u, mass = _subpieces(knots, phi, m)
    up = (1 + 8e-16 * (d + power))
    num_in = math.fsum(mass * hi_u ** (d - 1 + power)) * up
    den_in = math.fsum(mass * lo_u ** (d - 1)) / up
    eps_t = -math.log(beta) / h
    R = K * h
    S = tail_series(beta, R, h, (1.0, 0.0, d - 1 + power, 0.0)) / beta
    tail_cost = phi[-1] * (-math.expm1(math.log(beta))) / eps_t * S * (1 + 1e-10)
    num = (num_in + tail_cost) * (1 + 1e-11)
    den = den_in * (1 - 1e-11)
    value = float(np.nextafter(num / den * (1 + _M), np.inf))
    ok = aud.passed and math.isfinite(value) and den > 0
    S0 = tail_series(beta, R, h, (1.0, 0.0, d - 1, 0.0)) / beta
    tmass = phi[-1] * (-math.expm1(math.log(beta))) / eps_t * S0 / den
    return _Upper(value, ok, aud.realised_rate, tmass, "" if ok else "audit failed", knots, phi)


# ------------------------------------------------------------------------------------------------
# Laplace laws before any LP
# ------------------------------------------------------------------------------------------------
def laplace_rate(epsilon: float) -> float:
    """The rate a of the initial Laplace laws: ε less the chains' margin min(1e-11, 1e-3 ε) (:func:`_beta`
    at h = 1), and at least 1e-13 relative below ε, so that the law's audited rate (rounded outward)
    stays <= ε."""
    return min(epsilon - min(PRIVACY_MARGIN, 1e-3 * epsilon), epsilon * (1.0 - 1e-13))


def laplace_closed_form(kind: str, a: float, dim: int = 1, power: float | None = None) -> float | None:
    """E L(X) for the Laplace-type density ∝ e^{−a‖x‖} (rate a), exactly (before rounding), or None.

    ``kind``: ``abs`` (1-D: 1/a), ``square`` (1-D: 2/a²), ``pow`` (1-D |x|^P: Γ(P + 1)/a^P), for the ℓ1
    norm on ℝ^d (i.i.d. coordinates, d × the 1-D value) ``l1`` (d/a) and ``l2sq`` (2d/a²); for the ℓ2
    norm on ℝ^d (‖X‖₂ ~ Gamma(d, 1/a), [KHP15] Thm 8) ``radial-l2`` (d/a), ``radial-l2sq`` (d(d + 1)/a²)
    and ``radial-l1`` (E‖X‖₂ · E‖Θ‖₁ = (d/a) · dΓ(d/2)/(√π Γ((d + 1)/2)), Θ uniform on the sphere).

    >>> laplace_closed_form("abs", 2.0), laplace_closed_form("square", 2.0), laplace_closed_form("pow", 1.0, power=3)
    (0.5, 0.5, 6.0)
    >>> laplace_closed_form("radial-l2sq", 1.0, dim=2), math.isclose(laplace_closed_form("radial-l1", 1.0, dim=2), 8 / math.pi)
    (6.0, True)
    """
    d = int(dim)
    if kind in ("abs", "l1"):
        return d / a
    if kind in ("square", "l2sq"):
        return 2.0 * d / (a * a)
    if kind == "pow" and power is not None:
        try:  # Γ and the power are each within a few ulps (the widening covers them)
            return math.gamma(power + 1.0) / a**power
        except (OverflowError, ZeroDivisionError):
            return None
    if kind == "radial-l2":
        return d / a
    if kind == "radial-l2sq":
        return d * (d + 1.0) / (a * a)
    if kind == "radial-l1":
        return d / a * math.exp(math.log(d) + math.lgamma(d / 2.0) - 0.5 * math.log(math.pi) - math.lgamma((d + 1) / 2.0))
    return None


def _closed_form_upper(value: float | None, a: float, eps: float, grid: KnotGrid, factor: int = 1) -> list:
    """The Laplace law of rate ``a`` on ``grid`` (knots −1, 0, 1, or radii 0, 1 for shells; exponential
    tails of rate a beyond them: exactly ∝ e^{−a‖x‖}) as a certified upper bound of expected cost ``value``
    (a closed form) widened by ``CLOSED_FORM_WIDENING``; its knots audited by :func:`audit_chain`."""
    if value is None or not (math.isfinite(value) and value > 0):
        return []
    knots = grid.x
    values = np.exp(-a * np.abs(knots))
    aud = audit_chain(values, grid.h, eps)
    ok = aud.passed and a <= eps
    inner = _Upper(float(np.nextafter(value * (1 + CLOSED_FORM_WIDENING), np.inf)), ok, max(aud.realised_rate, a),
                   None, "" if ok else "audit failed", knots, values, tail_rate=a)
    return [LipschitzUpper(inner.value, ok, inner, grid, eps, factor, initial="closed form")]


# ------------------------------------------------------------------------------------------------
# references
# ------------------------------------------------------------------------------------------------
def _references(eps, mode, cost, dim, domain, power, lo, up) -> list[ReferenceValue]:
    """The closed-form references: the ℓ2-Laplace (radial mode), i.i.d. Laplace (ℝ^d) or i.i.d. two-sided
    geometric (ℤ^d) laws, listed for the costs |x| and x² (summed over the coordinates; ‖x‖₂ or ‖x‖₂² in
    radial mode) only, each with ``parameters["shift"]`` = 0 (d zeros in d > 1), the rule of every family.

    0 is a best shift, proven (:func:`optmech.mechanisms.shifts.centre_is_best_nd`): the cost c is
    convex and even in every coordinate (|x|, x², their sums over the coordinates, ‖x‖₂ and ‖x‖₂²), and
    the law X is symmetric under each coordinate reflection (and log-concave): a product of symmetric
    1-D laws, or a function of ‖x‖₂.  So g(t) = E c(X + t) is convex and even in each t_i, hence
    nondecreasing in each |t_i|, and g(t) >= g(0) for every real or integer shift t."""
    refs = []
    zero = 0 if domain != "continuous" else 0.0
    shift = zero if dim == 1 else [zero] * dim

    def add(name, value, params, note, exact=True):
        params = {**params, "shift": shift}
        refs.append(ReferenceValue(name, float(value), params, reference_inside(value, lo, up, exact), exact, note))

    kind = getattr(cost, "kind", None)
    if mode == "radial":
        d = dim
        v = d / eps if power == 1 else d * (d + 1) / eps**2
        add("l2_laplace", v, {"epsilon": eps, "dim": d},
            "density ∝ e^{-ε‖v‖₂}: optimal for l2sq ([KHP15] Thm 8; E r = d/ε, E r² = d(d+1)/ε²)")
        return refs
    d = dim
    if domain == "continuous":
        if kind == "abs":
            add("laplace", d / eps, {"epsilon": eps, "dim": d},
                "Laplace(1/ε) per coordinate: E|X| = 1/ε (optimality for |x| is not a theorem of [KHP15])")
        elif kind == "square":
            add("laplace", 2 * d / eps**2, {"epsilon": eps, "dim": d},
                "Laplace(1/ε) per coordinate: MSE 2/ε² each, optimal ([KHP15] Thms 6, 7)")
    else:
        b = math.exp(-eps)
        if kind == "abs":
            add("geometric" if d == 1 else "iid-geometric", d * 2 * b / -math.expm1(-2 * eps), {"epsilon": eps, "dim": d},
                "two-sided geometric, ratio e^{-ε}: E|X| = 2b/(1-b²)")
        elif kind == "square":
            add("geometric" if d == 1 else "iid-geometric", d * 2 * b / math.expm1(-eps) ** 2, {"epsilon": eps, "dim": d},
                "two-sided geometric, ratio e^{-ε}: E X² = 2b/(1-b)²")
    return refs


# ------------------------------------------------------------------------------------------------
# the solve
# ------------------------------------------------------------------------------------------------
def _window(eps: float, cost, extra_power: float) -> float:
    """Half-width (real units) of the window."""
    if isinstance(cost, str):
        P, R = extra_power, 0.0
    elif cost.kind != "expr":
        P, R = float(cost.power), 0.0
    else:
        g = cost.growth(0.0)
        P, R = (g[1], g[2]) if g is not None else (2.0, 0.0)
        if R >= eps:
            raise SpecError(f"cost {cost.spec!r} may grow like e^({R:g}|x|) >= e^(epsilon|x|): lipschitz privacy supports "
                            "costs growing slower than e^(epsilon|x|)")
    return (WINDOW_EFOLDS + 3.0 * P + 3.0 * extra_power) / (eps - R)


def _knots(eps: float, mode: str, cost, power, dim: int, h: float) -> int:
    """K: knots on each side of 0 (line) or shells (radial) of width h covering the window."""
    if mode == "line":
        return int(math.ceil(_window(eps, cost, 0.0) / h))
    return int(math.ceil(_window(eps, cost, power + dim - 1) / h))


def _build(eps: float, mode: str, cost, power, dim: int, integer: bool, n: int) -> ChainLP:
    h = 1.0 if integer else 1.0 / n
    K = _knots(eps, mode, cost, power, dim, h)
    if mode == "line":
        if 2 * K + 1 > MAX_KNOTS:
            raise SpecError(f"the window needs {2 * K + 1} knots (> {MAX_KNOTS}); lower the resolution")
        return build_line(cost, eps, h, K, cells=not integer)
    if K > MAX_KNOTS:
        raise SpecError(f"the window needs {K} shells (> {MAX_KNOTS}); lower the resolution")
    return build_radial(power, eps, h, K, dim)


def _certify_upper(cl: ChainLP, masses: np.ndarray, eps: float, mode: str, cost, power, integer: bool) -> _Upper:
    if mode == "radial":
        return upper_radial(cl, masses, power, eps)
    if integer:
        return upper_points(cl, masses, cost, eps)
    return upper_cells(cl, masses, cost, eps)


@dataclass
class LipschitzUpper:
    """A certified upper bound: the audited chain mechanism (``inner``) of the LP ``cl`` at rate
    ``eps``, its cost multiplied by ``factor`` (the ℓ1 product) and rounded up.  ``initial`` is empty
    for an LP's law, else how the Laplace law found before any LP was priced ("closed form", or
    "priced on the knots": :meth:`LipschitzFamily.initial_uppers`), and then ``cl`` is a :class:`KnotGrid`."""

    value: float
    certified: bool
    inner: _Upper
    cl: ChainLP | KnotGrid
    eps: float
    factor: int
    initial: str = ""


class LipschitzFamily:
    """ε-Lipschitz privacy [KHP15]: chain LPs of :mod:`optmech.problems.lipschitz`.

    Modes: ``line`` (1-D, or the ℓ1 product of d copies for a separable cost: d × the 1-D
    optimum), ``radial`` (ℓ2 on ℝ^d, radial costs), and ``sandwich`` (ℓ2 norm with the cost ℓ1:
    the ℓ1 problem at ε below, the ℓ1 product at ε/√d above; see :meth:`upper`).  Sizes are the
    resolution (cells per unit) on ℝ, doubled until the gap meets the target; ℤ takes one LP.
    """

    name = "lipschitz"
    max_steps = 8

    def __init__(self, problem, ctx) -> None:
        self.problem, self.ctx = problem, ctx
        eps, dim = problem.epsilon, problem.dim
        self.eps, self.dim = eps, dim
        self.integer = not isinstance(problem.domain, Continuous)
        # the Lipschitz LPs price cells and points at the cost clipped at 0: their lower bounds hold only for
        # a cost proven nonnegative on the whole domain, so a cost that may be negative is refused here
        floor_of = getattr(problem.cost, "domain_minimum", None)
        if floor_of is not None:
            floor = floor_of(integer=self.integer)
            if not floor >= 0.0:
                raise SpecError(f"Lipschitz privacy needs a cost proven nonnegative on {'ℤ' if self.integer else 'ℝ'}; "
                                f"the proven floor of {getattr(problem.cost, 'spec', problem.cost)} is {floor:.6g} "
                                "(add a constant or use max(..., 0))")
        name = str(getattr(problem.cost, "spec", problem.cost)).strip().lower()
        self.sandwich = problem.norm == "l2" and dim > 1 and name in ("l1", "abs")
        if self.sandwich:
            self.mode, self.cost, self.factor, self.power = _plan(eps, "l1", dim, "l1", problem.domain.name)
            self.eps_up = float(np.nextafter(eps / math.sqrt(dim), 0.0))  # rounded down: stays ε-ℓ2-Lipschitz
        else:
            self.mode, self.cost, self.factor, self.power = _plan(eps, problem.cost, dim, problem.norm,
                                                                  problem.domain.name)
            self.eps_up = eps
        self.fixed = problem.resolution
        self.prev_gap = math.inf

    def initial_uppers(self) -> list:
        """Certified upper bounds before any LP (so that a time limit or an interrupt always has a bracket):
        the Laplace law at the rate a = :func:`laplace_rate` (ε less a margin) in the family's norm.

        ℤ (and each coordinate of the ℓ1 product on ℤ^d): the two-sided geometric law e^{−ε|k|} on the LP's
        window, repaired and priced by :func:`upper_points` like an LP's pmf (its cost enclosed on the
        window, geometric tails bounded with the cost's proven growth); on ℤ, ε-Lipschitz privacy is
        ε-DP with Δ = 1.  ℝ with ``abs``, ``square`` or ``pow:P``, the ℓ1 product on ℝ^d, the ℓ2 norm on
        ℝ^d (costs l2, l2sq, and l1 with the sandwich): the density ∝ e^{−a‖x‖}, ε-Lipschitz [KHP15,
        Prop 4], at its closed-form cost (:func:`laplace_closed_form`) widened by ``CLOSED_FORM_WIDENING``.
        An expression cost on ℝ: the Laplace knots every 1/(20ε), priced by :func:`upper_cells` (the
        log-linear interpolant of e^{−a|x|} is the Laplace density itself, whatever the spacing)."""
        eps = self.eps
        a = laplace_rate(eps)
        if self.estimate_bytes(self.start()) > memory_budget():
            return []  # the loop refuses the first LP with one line (its size is the user's): no bound is needed
        if self.mode == "radial" or self.sandwich:
            kind = "radial-l1" if self.sandwich else ("radial-l2" if self.power == 1.0 else "radial-l2sq")
            if self.integer:  # (the spec refuses the l2 norm on Z^d)
                return []
            grid = KnotGrid(np.array([0.0, 1.0]), 1.0, "shells", self.dim)
            return _closed_form_upper(laplace_closed_form(kind, a, self.dim), a, eps, grid)
        cost, factor = self.cost, self.factor
        if self.integer:
            # the LP's window, at most INITIAL_POINTS_HALF_WIDTH: beyond it the geometric tails are priced by
            # the series of the cost's proven growth (looser for an expression, but cheap at tiny ε)
            K = min(_knots(eps, "line", cost, None, 1, 1.0), INITIAL_POINTS_HALF_WIDTH)
            grid = KnotGrid(np.arange(-K, K + 1, dtype=float), 1.0, "points")
            inner = upper_points(grid, np.exp(-eps * np.abs(grid.x)), cost, eps)
        elif cost.kind in ("abs", "square", "pow"):
            v = laplace_closed_form(cost.kind, a, 1, float(cost.power))
            grid = KnotGrid(np.array([-1.0, 0.0, 1.0]), 1.0, "cells")
            return _closed_form_upper(None if v is None else factor * v, a, eps, grid, factor)
        else:
            # knots every 1/(20ε) (the first LP's spacing for ε >= 0.2, coarser below): about 700 knots on the
            # window whatever ε, and the piecewise pricing's relative excess stays about P·εh/32 = P/640
            h = 1.0 / (20.0 * eps)
            K = _knots(eps, "line", cost, None, 1, h)
            if 2 * K + 1 > MAX_KNOTS:
                return []
            grid = KnotGrid(np.arange(-K, K + 1) * h, h, "cells")
            inner = upper_cells(grid, h * np.exp(-eps * np.abs(grid.x)), cost, eps)
        value = inner.value if factor == 1 else float(np.nextafter(factor * inner.value, np.inf))
        if not (inner.certified and math.isfinite(value)):
            return []
        return [LipschitzUpper(value, True, inner, grid, eps, factor, initial="priced on the knots")]

    def fallback_lower(self) -> tuple[float, str]:
        """A certified lower bound without any LP: the cost's proven floor (every noise costs at least inf L;
        0 for the named costs of d > 1, which are norms or squared norms)."""
        if self.dim == 1:
            where = "Z" if self.integer else "R"
            return float(self.cost.domain_minimum(integer=self.integer)), f"the cost's proven floor on {where}"
        return 0.0, "the cost's floor (the named costs are nonnegative)"

    def initial_lower(self) -> float:
        """The same bound, held from the start (so an interrupt before the first LP still has a bracket)."""
        return self.fallback_lower()[0]

    def start(self) -> int:
        return self.fixed if self.fixed is not None else max(4, int(math.ceil(20 * self.eps)))

    def _points(self, n: int) -> int:
        h = 1.0 if self.integer else 1.0 / n
        K = _knots(min(self.eps, self.eps_up), self.mode, self.cost, self.power, self.dim, h)
        return (2 * K + 1) if self.mode == "line" else K

    def plan(self, n: int) -> LPPlan:
        """The chain LP at resolution n before it is built (:func:`~optmech.problems.lipschitz.build_chain`
        on k knots: k + 2 columns, 2k + 3 rows, 5k + 6 nonzeros); the sandwich solves a second one."""
        k = self._points(n)
        kind = "shells" if self.mode == "radial" else "points" if self.integer else "cells"
        # the audit prices cells with the cost's enclosures: 2.2 µs per row, column or nonzero measured
        lp = LPPlan(rows=2 * k + 3, cols=k + 2, nonzeros=5 * k + 6, builder=f"lipschitz_{kind}",
                    certify_seconds=4e-6 * (8 * k + 11))
        if self.sandwich:  # the upper bound's LP at ε/√d, at most as large, built while this one is held
            lp = dataclasses.replace(lp, lps=2, extra_bytes=lp.peak_bytes() - BASELINE_BYTES)
        return lp

    def estimate_bytes(self, n: int) -> float:
        return self.plan(n).peak_bytes()

    def size_message(self, n: int, need: float, budget: float) -> str:
        return (f"the Lipschitz chain LP needs about {gib(need)} GiB ({self._points(n)} knots at resolution {n}); "
                f"the limit is {gib(budget)} GiB: lower the resolution or set OPTMECH_MAX_MEMORY_GB")

    def build(self, n: int) -> Built:
        cl = _build(self.eps, self.mode, self.cost, self.power, self.dim, self.integer, n)
        return Built(cl.lp, {"resolution": None if self.integer else n, "cell_width": cl.h}, cl, f"lipschitz_{cl.kind}")

    def lower(self, built: Built, raw) -> LowerCertificate:
        """The repaired dual; for the ℓ1 product (and the sandwich's ℓ1 relaxation) times d, rounded down:
        every 1-D marginal of an ℓ1-Lipschitz law is Lipschitz, and the cost is a sum over coordinates."""
        lcert = dual_lower_bound(built.lp, raw.row_dual, raw.objective)
        if self.factor > 1:
            lcert = dataclasses.replace(lcert, value=float(np.nextafter(self.factor * lcert.value, -np.inf)))
        return lcert

    def upper(self, built: Built, raw) -> LipschitzUpper:
        """The audited chain mechanism; in the sandwich, the ℓ1 product at ε/√d (its own LP, solved
        here): ‖v‖₁ <= √d‖v‖₂, so an (ε/√d)-ℓ1-Lipschitz law is ε-ℓ2-Lipschitz."""
        cl, eps = built.model, self.eps
        x = raw.x
        if self.sandwich:
            n = built.size["resolution"] or 1
            cl = _build(self.eps_up, self.mode, self.cost, self.power, self.dim, self.integer, n)
            x = self.ctx.solve_lp(cl.lp).x
            eps = self.eps_up
        upr = _certify_upper(cl, cl.masses(x), eps, self.mode, self.cost, self.power, self.integer)
        value = upr.value if upr.certified else math.inf
        if self.factor > 1:
            value = float(np.nextafter(self.factor * value, np.inf))
        return LipschitzUpper(value, bool(upr.certified), upr, cl, eps, self.factor)

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        return {"knots": int(len(built.model.sigma)), "tail_mass_bound": upper.inner.tail_mass}

    def grow(self, step: Step, best) -> int | Stop:
        g, target = step.gap, self.problem.target_gap
        n = step.built.size["resolution"]
        prev, self.prev_gap = self.prev_gap, g
        if self.sandwich:
            above = ("the l2-Laplace law (density proportional to exp(-epsilon ||x||_2), closed form)"
                     if getattr(best.upper, "initial", "") else f"the l1 product at epsilon/sqrt({self.dim})")
            why = (f"l2 norm with the non-radial cost l1: bracket between the l1-Lipschitz relaxation at epsilon and "
                   f"{above} (relative gap {g:.3g}); no exact l2 formulation is implemented for non-radial costs, so "
                   "the remaining gap is the l1/l2 norm mismatch")
            if self.integer or self.fixed is not None or g > prev - 0.5 * target:
                return Stop(why)
        elif self.integer:
            return Stop(f"relative gap {g:.3g} > target {target:g} on the lattice (one exact LP)")
        elif self.fixed is not None:
            return Stop(f"relative gap {g:.3g} > target {target:g} at the given resolution {n}: raise --resolution")
        if self._points(2 * n) > MAX_KNOTS:
            return Stop(f"relative gap {g:.3g} > target {target:g}: the next resolution needs more than {MAX_KNOTS} knots")
        return 2 * n

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        if self.sandwich:
            if self.integer:
                return []
            from optmech.mechanisms.laplace_nd import l2_laplace_cost

            v = l2_laplace_cost("l1", self.eps, self.dim, 1.0)
            return [ReferenceValue("l2_laplace", v, {"scale": 1.0 / self.eps}, False, True,
                                   "density proportional to exp(-epsilon ||x||_2): epsilon-Lipschitz in l2 [KHP15], so "
                                   "an upper bound on the l2 optimum", kind="upper")]
        return _references(self.eps, self.mode, self.cost, self.dim, "integer" if self.integer else "continuous",
                           self.power, lower, upper)

    def _initial_claim(self, up: LipschitzUpper) -> str:
        """What the upper end found before any LP is and why it is valid (:meth:`initial_uppers`)."""
        d, kind, a = self.dim, up.cl.kind, up.inner.tail_rate
        widened = f"its closed-form expected cost widened by {CLOSED_FORM_WIDENING:g} relative"
        if kind == "points":
            law = (f"the two-sided geometric law p(k) ~ b^|k|, b = e^(-a) with a = -ln(beta) <= epsilon (the smallest "
                   f"e^(-a)-majorant of e^(-epsilon |k|) on -{int(up.cl.x[-1])}..{int(up.cl.x[-1])}, geometric tails): "
                   "on Z, epsilon-Lipschitz privacy is epsilon-DP with sensitivity 1 (the adjacent ratio rows chain to "
                   "every pair, [KHP15] Prop 3); audited (adjacent log-ratios, outward-rounded) and priced with the "
                   "cost's enclosures on the window and a tail series bounded by the cost's proven growth")
        elif kind == "shells":
            law = (f"the l2-Laplace density proportional to exp(-a ||x||_2) on R^{d}, a = {a!r} <= epsilon: epsilon-"
                   "Lipschitz in l2 [KHP15, Prop 4, Thm 8]; ||X||_2 ~ Gamma(d, 1/a), so E r = d/a, E r^2 = d(d+1)/a^2"
                   + (" and E ||X||_1 = E r * d Gamma(d/2)/(sqrt(pi) Gamma((d+1)/2))" if self.sandwich else "")
                   + f"; {widened}")
        elif up.initial == "closed form":
            law = (f"the Laplace density (a/2) exp(-a |x|){' in each coordinate' if up.factor > 1 else ''}, "
                   f"a = {a!r} <= epsilon: epsilon-Lipschitz [KHP15, Prop 4]; E|X| = 1/a, E X^2 = 2/a^2, "
                   f"E|X|^P = Gamma(P+1)/a^P; {widened}")
        else:
            law = (f"the Laplace density proportional to exp(-a |x|), a = -ln(beta)/h <= epsilon: the log-linear "
                   f"interpolation of its knot values at spacing {up.cl.h:g} (exactly that density) with exponential "
                   "tails of rate a, epsilon-Lipschitz [KHP15, Prop 4]; audited (adjacent log-ratios, outward-rounded) "
                   f"and its cost bounded piecewise with outward rounding ({SUBPIECES} parts per knot interval, each at "
                   "the cost's maximum there) plus tail series")
        if up.factor > 1:
            law += (f"; d = {d} i.i.d. copies make an l1-Lipschitz law (the product of 1-D laws), its cost {d} x the "
                    "1-D cost")
        return f"upper bound found before any LP: {law}"

    def report(self, best, last: Step | None, status: str) -> dict:
        """The family's part of the Result; ``last`` is None when no LP finished (a time limit or an interrupt
        before the first one), and the upper end may be a law of :meth:`initial_uppers`."""
        from optmech.mechanisms.solved import mechanism_from_solver_dict

        up: LipschitzUpper | None = best.upper
        cl = last.built.model if last is not None else None
        dim, eps = self.dim, self.eps
        initial = up is not None and bool(up.initial)
        mech = None
        if up is not None:
            ucl = up.cl
            rate = up.inner.tail_rate if up.inner.tail_rate is not None else -math.log(_beta(up.eps, ucl.h)) / ucl.h
            mech = mechanism_from_solver_dict({
                "kind": f"lipschitz_{ucl.kind}", "per_coordinate": up.factor > 1, "knots": up.inner.knots.tolist(),
                "values": up.inner.values.tolist(), "interpolation": "pmf" if ucl.kind == "points" else "log-linear",
                "tail_rate": rate, "dim": dim, "epsilon": up.eps})
        claims: list[str] = []
        if cl is None:
            floor, why = self.fallback_lower()
            claims.append(f"lower bound without an LP: {why}, {floor:.10g}: E L(X) >= inf L for every noise X (an "
                          "expression's floor is proven by interval arithmetic); no LP finished")
        elif self.sandwich:
            claims += [f"l2 Lipschitz privacy, cost l1 (separable, not radial): a nearest-neighbour stencil enforces the "
                       "l1 norm; since ||v||_2 <= ||v||_1, the l1-Lipschitz problem at epsilon is a relaxation (lower "
                       f"bound {best.lower:.10g})"]
        elif self.mode == "radial":
            claims += [f"l2-Lipschitz noise on R^{dim}: radial WLOG (rotation averaging); lower bound: shell masses of "
                       f"width {cl.h:g} satisfy ratio rows e^(-eps h)((k+2)/(k+1))^(d-1) <= Q_(k+1)/Q_k <= e^(eps h)"
                       "((k+1)/k)^(d-1), each shell priced at E[r^P] under r^(d-1)e^(-eps r) (its minimum), far mass at "
                       "its minimum (a relaxation)"]
        elif self.integer:
            claims += [f"Lipschitz privacy on Z{'^' + str(dim) if dim > 1 else ''}: adjacent ratio rows e^(+-eps) are "
                       "exact on the lattice; mass beyond the window priced at the cost's minimum there (a relaxation)"]
        else:
            claims += [f"Lipschitz privacy on R: cell masses (width {cl.h:g}) satisfy ratio rows e^(+-eps h); each cell "
                       "priced at its minimum conditional cost; far mass at the cost's minimum outside (a relaxation)"]
        if initial:
            claims.append(self._initial_claim(up) + ("" if cl is None else "; no LP's audited law was cheaper"))
        elif up is not None and self.sandwich:
            claims.append(f"upper bound: the product of 1-D laws at epsilon/sqrt(d) is epsilon-Lipschitz in l2 "
                          f"(||v||_1 <= sqrt(d) ||v||_2): {best.upper_value:.10g}")
        elif up is not None and self.mode == "radial":
            claims.append("upper bound: repaired radial profile, log-linear between knots, exponential tail; audited")
        elif up is not None and self.integer:
            claims.append("upper bound: smallest e^(-eps)-majorant of the LP pmf with geometric tails; audited")
        elif up is not None:
            claims.append("upper bound: log-linear interpolation of the repaired knot values with exponential tails "
                          "(exactly Lipschitz-private); cost bounded piecewise with outward rounding")
        if self.factor > 1 and not self.sandwich and cl is not None:
            claims.append(f"l1 norm in {dim}-D with a separable cost: optimum = {dim} x the 1-D optimum (marginals of an "
                          "l1-Lipschitz law are Lipschitz; the product of 1-D mechanisms is l1-Lipschitz)")
        if self.sandwich and cl is not None:
            claims.append("the l2 optimum lies in between; the gap is the l1/l2 norm mismatch, not a solver tolerance")
        method = ("adjacent log-ratios of the Laplace law's knots, outward-rounded; its tails decay at the rate a "
                  "<= epsilon" if initial and up.initial == "closed form"
                  else "adjacent log-ratios of the repaired knots, outward-rounded")
        audit = {"realised_epsilon": up.inner.realised_rate if up else None, "target_epsilon": eps,
                 "passed": bool(up and up.certified), "method": method,
                 "tail_mass_bound": up.inner.tail_mass if up else None}
        if self.sandwich and up is not None and not initial:
            audit["note"] = (f"the upper-bound mechanism is the l1 product at epsilon {self.eps_up!r}, epsilon-Lipschitz "
                             "in l2 since ||v||_1 <= sqrt(d) ||v||_2")
        if up is not None and up.initial == "closed form":
            upper_trunc = "closed form (no truncation)"
        else:
            upper_trunc = "geometric/exponential tails bounded by series"
        if cl is None:
            return {"problem": {}, "mechanism": mech, "claims": claims, "audit": audit,
                    "builder": "none (no LP finished)",
                    "truncation": {"half_width": None, "lower_bound": "the cost's proven floor (no LP)",
                                   "upper_bound": upper_trunc}}
        return {
            "problem": {"resolution": last.built.size["resolution"]} if not self.integer else {},
            "mechanism": mech, "claims": claims, "audit": audit,
            "lp": {"cell_width": cl.h, "knots": len(cl.sigma)},
            "truncation": {"half_width": float(cl.x[-1]), "lower_bound": "far lumps at the minimum cost outside, linked "
                           "to the edge mass", "upper_bound": upper_trunc},
        }
