"""Certified brackets for optimal additive noise under ε-Lipschitz privacy [KHP15].

``solve_lipschitz(epsilon, cost, dim=1, norm="l1", domain="integer"|"continuous")`` returns a
:class:`optmech.result.Result` whose [lower_bound, upper_bound] contains the optimal cost when
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
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from optmech.certify import PRIVACY_MARGIN, dual_lower_bound
from optmech.errors import SolveFailed, SpecError
from optmech.problems.lipschitz import (
    ChainLP, audit_chain, build_line, build_radial, majorant,
)
from optmech.result import ReferenceValue, Result, relative_gap, solver_info

#: Sub-pieces per knot interval when bounding the cost of the log-linear density.
SUBPIECES = 32
#: e-folds of the optimum's decay covered by the window (plus a few per power of the cost).
WINDOW_EFOLDS = 32.0
DEFAULT_TARGET_GAP = 1e-3
DEFAULT_TIME_LIMIT = 60.0
MAX_KNOTS = 2_000_000
_M = 1e-12  # relative margin on sums


@dataclass
class _Upper:
    value: float
    certified: bool
    realised_rate: float
    tail_mass: float
    note: str
    knots: np.ndarray
    values: np.ndarray


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


def upper_points(cl: ChainLP, masses: np.ndarray, cost, eps: float) -> _Upper:
    """ℤ (or hℤ): majorant-repaired pmf with geometric tails (module doc)."""
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


def upper_cells(cl: ChainLP, masses: np.ndarray, cost, eps: float, m: int = SUBPIECES) -> _Upper:
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
# references
# ------------------------------------------------------------------------------------------------
def _references(eps, mode, cost, dim, domain, power, lo, up) -> list[ReferenceValue]:
    refs = []

    def add(name, value, params, note, exact=True):
        refs.append(ReferenceValue(name, float(value), params, bool(lo <= value <= up), exact, note))

    kind = getattr(cost, "kind", None)
    if mode == "radial":
        d = dim
        v = d / eps if power == 1 else d * (d + 1) / eps**2
        add("l2-laplace", v, {"epsilon": eps, "dim": d},
            "density ∝ e^{-ε‖v‖₂}: optimal for l2sq ([KHP15] Thm 8; E r = d/ε, E r² = d(d+1)/ε²)")
        return refs
    d = dim
    if domain == "continuous":
        if kind == "abs":
            add("laplace" if d == 1 else "iid-laplace", d / eps, {"epsilon": eps, "dim": d},
                "Laplace(1/ε) per coordinate: E|X| = 1/ε (optimality for |x| is not a theorem of [KHP15])")
        elif kind == "square":
            add("laplace" if d == 1 else "iid-laplace", 2 * d / eps**2, {"epsilon": eps, "dim": d},
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


def _one(eps, mode, cost, dim, domain, power, n, profile, time_left):
    from optmech.solvers import solve_lp

    h = 1.0 if domain == "integer" else 1.0 / n
    if mode == "line":
        K = int(math.ceil(_window(eps, cost, 0.0) / h))
        if 2 * K + 1 > MAX_KNOTS:
            raise SpecError(f"the window needs {2 * K + 1} knots (> {MAX_KNOTS}); lower the resolution")
        cl = build_line(cost, eps, h, K, cells=domain == "continuous")
    else:
        K = int(math.ceil(_window(eps, cost, power + dim - 1) / h))
        if K > MAX_KNOTS:
            raise SpecError(f"the window needs {K} shells (> {MAX_KNOTS}); lower the resolution")
        cl = build_radial(power, eps, h, K, dim)
    raw = solve_lp(cl.lp, profile, time_limit=max(1.0, time_left))
    lcert = dual_lower_bound(cl.lp, raw.row_dual, raw.objective)
    masses = cl.masses(raw.x)
    if mode == "radial":
        upr = upper_radial(cl, masses, power, eps)
    elif domain == "integer":
        upr = upper_points(cl, masses, cost, eps)
    else:
        upr = upper_cells(cl, masses, cost, eps)
    return cl, raw, lcert, upr


def solve_lipschitz(epsilon, cost, *, dim: int = 1, norm: str = "l1", domain: str = "integer",
                    resolution: int | None = None, target_gap: float = DEFAULT_TARGET_GAP,
                    time_limit: float | None = None, solver: str = "default") -> Result:
    """Certified bracket of the optimal cost of additive ε-Lipschitz-private noise (module doc).

    Parameters
    ----------
    epsilon : float > 0, the Lipschitz rate (per unit distance).
    cost : 1-D: ``abs``, ``square``, ``pow:P`` or an expression in x; d > 1: ``l1``/``l2sq`` (norm l1)
        or ``l2``/``l2sq`` (norm l2, continuous domain).
    dim, norm : dimension and privacy norm (``l1`` or ``l2``; identical in 1-D).
    domain : ``integer`` (noise on ℤ^d) or ``continuous`` (ℝ^d, discretised into cells/shells).
    resolution : cells (shells) per unit on the continuous domain; default 20ε, doubled until the
        relative gap is at most ``target_gap`` (only when no resolution is given).
    """
    from optmech.solvers import load_profile

    t0 = time.perf_counter()
    eps = _check(epsilon, cost, dim, norm, domain, resolution)
    if not (isinstance(target_gap, (int, float)) and target_gap > 0):
        raise SpecError(f"target_gap must be > 0, got {target_gap!r}")
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    if norm == "l2" and int(dim) > 1 and str(getattr(cost, "spec", cost)).strip().lower() in ("l1", "abs"):
        return _l2_sandwich(eps, int(dim), domain, resolution, target_gap, time_limit, solver, t0)
    mode, c, factor, power = _plan(eps, cost, int(dim), norm, domain)
    profile = load_profile(solver)
    n = resolution if resolution is not None else max(4, int(math.ceil(20 * eps)))
    history, best = [], None
    status, message = "optimal", ""
    while True:
        try:
            cl, raw, lcert, upr = _one(eps, mode, c, int(dim), domain, power, n, profile,
                                       time_limit - (time.perf_counter() - t0))
        except SolveFailed as exc:
            if best is None:
                raise
            status, message = "solver_failed", f"refinement at resolution {n} failed: {exc}"
            break
        lo, up = factor * lcert.value, factor * upr.value if upr.certified else math.inf
        if factor > 1:
            lo = float(np.nextafter(lo, -np.inf))
            up = float(np.nextafter(up, np.inf))
        history.append({"resolution": n if domain == "continuous" else None, "lower": lo, "upper": up,
                        "gap": relative_gap(lo, up), "seconds": time.perf_counter() - t0, "rows": cl.lp.rows,
                        "cols": cl.lp.cols})
        if best is None or relative_gap(lo, up) <= relative_gap(best[0], best[1]):
            best = (lo, up, cl, raw, lcert, upr, n)
        elapsed = time.perf_counter() - t0
        if domain == "integer" or resolution is not None or relative_gap(lo, up) <= target_gap:
            break
        if elapsed + 6 * (history[-1]["seconds"] - (history[-2]["seconds"] if len(history) > 1 else 0)) > time_limit \
                or n * 2 * _window(eps, c, (power or 0) + dim - 1) > MAX_KNOTS or len(history) >= 8:
            status, message = "gap_not_reached", f"relative gap {relative_gap(lo, up):.3g} > target {target_gap:g}"
            break
        n *= 2
    lo, up, cl, raw, lcert, upr, n = best
    certified = math.isfinite(lo) and upr.certified and lo <= up
    if status == "optimal":
        g = relative_gap(lo, up)
        if g <= target_gap:
            message = f"certified relative gap {g:.3g} <= target {target_gap:g}"
        else:
            status, message = "gap_not_reached", (f"relative gap {g:.3g} > target {target_gap:g} at the given resolution "
                                                  f"{n}: raise --resolution" if resolution is not None
                                                  else f"relative gap {g:.3g} > target {target_gap:g}")
    if not upr.certified:
        status, message = "uncertified", f"upper bound uncertified: {upr.note}"
        up = math.inf
    refs = _references(eps, mode, c, int(dim), domain, power, lo, up)
    name = str(getattr(c, "spec", c)) if factor == 1 else str(cost)
    problem = {"privacy": "lipschitz", "epsilon": eps, "cost": name if int(dim) == 1 else str(cost),
               "dim": int(dim), "norm": norm, "domain": domain}
    if domain == "continuous":
        problem["resolution"] = n
    if mode == "radial":
        claims = [f"l2-Lipschitz noise on R^{dim}: radial WLOG (rotation averaging); lower bound: shell masses of width "
                  f"{cl.h:g} satisfy ratio rows e^(-eps h)((k+2)/(k+1))^(d-1) <= Q_(k+1)/Q_k <= e^(eps h)((k+1)/k)^(d-1), "
                  "each shell priced at E[r^P] under r^(d-1)e^(-eps r) (its minimum), far mass at its minimum (a relaxation)",
                  "upper bound: repaired radial profile, log-linear between knots, exponential tail; audited"]
    elif domain == "integer":
        claims = [f"Lipschitz privacy on Z{'^' + str(dim) if dim > 1 else ''}: adjacent ratio rows e^(+-eps) are exact "
                  "on the lattice; mass beyond the window priced at the cost's minimum there (a relaxation)",
                  "upper bound: smallest e^(-eps)-majorant of the LP pmf with geometric tails; audited"]
    else:
        claims = [f"Lipschitz privacy on R: cell masses (width {cl.h:g}) satisfy ratio rows e^(+-eps h); each cell priced "
                  "at its minimum conditional cost; far mass at the cost's minimum outside (a relaxation)",
                  "upper bound: log-linear interpolation of the repaired knot values with exponential tails (exactly "
                  "Lipschitz-private); cost bounded piecewise with outward rounding"]
    if factor > 1:
        claims.append(f"l1 norm in {dim}-D with a separable cost: optimum = {dim} x the 1-D optimum (marginals of an "
                      "l1-Lipschitz law are Lipschitz; the product of 1-D mechanisms is l1-Lipschitz)")
    return Result(
        problem=problem, lower_bound=lo, upper_bound=up, certified=bool(certified), status=status if certified or
        status != "optimal" else "uncertified", message=message, seconds=time.perf_counter() - t0, references=refs,
        lp=cl.lp.size() | {"builder": f"lipschitz_{cl.kind}", "cell_width": cl.h, "knots": len(cl.sigma)},
        solver=solver_info(raw, profile), mechanism=None,
        mechanism_nd={"kind": f"lipschitz_{cl.kind}", "per_coordinate": factor > 1, "knots": upr.knots.tolist(),
                      "values": upr.values.tolist(), "interpolation": "pmf" if cl.kind == "points" else "log-linear",
                      "tail_rate": -math.log(_beta(eps, cl.h)) / cl.h},
        audit={"realised_epsilon": upr.realised_rate, "target_epsilon": eps, "passed": bool(upr.certified),
               "method": "adjacent log-ratios of the repaired knots, outward-rounded",
               "tail_mass_bound": upr.tail_mass, "lower_bound_clipped_rows": lcert.clipped_rows,
               "lower_bound_error_term": lcert.error_term},
        truncation={"half_width": float(cl.x[-1]), "lower_bound": "far lumps at the minimum cost outside, linked to the "
                    "edge mass", "upper_bound": "geometric/exponential tails bounded by series"},
        history=history, claims=claims,
    )


def _l2_sandwich(eps: float, dim: int, domain: str, resolution, target_gap: float, time_limit: float, solver: str,
                 t0: float) -> Result:
    """ℓ2 Lipschitz privacy with the separable, non-radial cost ‖x‖₁: no exact reduction applies, and a
    nearest-neighbour stencil enforces the ℓ1 (polyhedral) norm, not ℓ2.
    What it gives is reported as what it is: since ‖v‖₂ <= ‖v‖₁ <= √d ‖v‖₂, every ε-ℓ2-Lipschitz law
    is ε-ℓ1-Lipschitz (the ℓ1 problem at ε is a relaxation: its certified lower bound is a lower
    bound), and every (ε/√d)-ℓ1-Lipschitz law is ε-ℓ2-Lipschitz (the ℓ1 product at ε/√d is feasible:
    its certified upper bound is an upper bound).  Both are d × a 1-D problem."""
    import dataclasses

    kw = dict(dim=dim, norm="l1", domain=domain, resolution=resolution, target_gap=target_gap, solver=solver)
    lo_r = solve_lipschitz(eps, "l1", time_limit=0.5 * time_limit, **kw)
    eps_up = float(np.nextafter(eps / math.sqrt(dim), 0.0))  # rounded down: the product stays ε-ℓ2-Lipschitz
    up_r = solve_lipschitz(eps_up, "l1", time_limit=max(1.0, time_limit - (time.perf_counter() - t0)), **kw)
    lo, up = lo_r.lower_bound, up_r.upper_bound
    certified = bool(lo_r.certified and up_r.certified and lo <= up)
    gap = relative_gap(lo, up)
    status = ("optimal" if gap <= target_gap else "gap_not_reached") if certified else "uncertified"
    message = (f"l2 norm with the non-radial cost l1: bracket between the l1-Lipschitz relaxation at epsilon and the "
               f"l1 product at epsilon/sqrt({dim}) (relative gap {gap:.3g}); no exact l2 formulation is implemented "
               "for non-radial costs")
    problem = dict(lo_r.problem, norm="l2")
    refs = []
    if domain == "continuous":
        from optmech.mechanisms.multidim import l2_laplace_cost

        v = l2_laplace_cost("l1", eps, dim, 1.0)
        refs.append(ReferenceValue("l2-laplace", v, {"scale": 1.0 / eps}, bool(lo <= v <= up), True,
                                   "density proportional to exp(-epsilon ||x||_2): epsilon-Lipschitz in l2 [KHP15], so "
                                   "an upper bound on the l2 optimum", kind="upper"))
    return dataclasses.replace(
        lo_r, problem=problem, lower_bound=lo, upper_bound=up, certified=certified, status=status, message=message,
        seconds=time.perf_counter() - t0, references=refs, mechanism_nd=up_r.mechanism_nd,
        audit=dict(up_r.audit, note=f"the upper-bound mechanism is the l1 product at epsilon {eps_up!r}, "
                   "epsilon-Lipschitz in l2 since ||v||_1 <= sqrt(d) ||v||_2"),
        claims=[f"l2 Lipschitz privacy, cost l1 (separable, not radial): a nearest-neighbour stencil enforces the l1 "
                "norm; since ||v||_2 <= ||v||_1, the l1-Lipschitz problem at epsilon is a relaxation (lower bound "
                f"{lo:.10g})",
                f"upper bound: the product of 1-D laws at epsilon/sqrt(d) is epsilon-Lipschitz in l2 (||v||_1 <= "
                f"sqrt(d) ||v||_2): {up:.10g}",
                "the l2 optimum lies in between; the gap is the l1/l2 norm mismatch, not a solver tolerance"],
    )
