r"""Upper ends from independent Laplace laws with their own scales, for cost expressions on ℝ^d [derived].

**The law.**  X = (X_1, …, X_d) with independent X_i ~ Laplace(b_i)
(:class:`~optmech.mechanisms.laplace_nd.ProductLaplace`).  At a shift t the log density ratio is
Σ_i (|x_i + t_i| − |x_i|)/b_i <= Σ_i |t_i|/b_i <= ‖t‖·‖(1/b_i)‖_* (Hölder, ‖·‖_* the dual of the
sensitivity's norm), so X is ε-DP for sensitivity Δ when Δ·‖(1/b_i)‖_* <= ε; the mechanism checks this in exact
rationals when it is built.

**Why it can win.**  With ℓ1 sensitivity the budget is max_i 1/b_i: an axis may spread at no cost to the others.
A cost that stops growing along an axis is then cheapest for laws that spread it.  For
``where(abs(x1) < 5, abs(x1)+abs(x2), 0.5+abs(x2))``, ε = 1: E L(X) = E|X_2| + E[|X_1|; |X_1| < 5] +
0.5·P(|X_1| >= 5), which tends to 1.5 as b_1 → ∞ with b_2 = 1.  The staircase in ℓ1 costs 1.986.  The
i.i.d. law of the budget is always a candidate too.

**The price** (:func:`product_upper`), an upper bound of E L(X) with outward rounding:

* Each axis is cut at 0, on a uniform grid of [0, 5 b_i] and a coarser one of [5 b_i, T_i], and at the cost's
  one-variable condition thresholds (:func:`optmech.costs.dominance.condition_cuts`), mirrored; a spread axis
  also on [0, 5 min_j b_j], where the cost varies on the scale of the others.  Here
  T_i = b_i·ln(d/τ) with τ = ``TAIL``, so that P(X ∉ B) <= Σ_i e^{−T_i/b_i} = τ for the box B = Π[−T_i, T_i].
* On each product cell C, E[L(X); X ∈ C] <= P(X ∈ C)·sup_C L, with sup_C L from the interval enclosure
  (:meth:`optmech.costs_nd.CostND.enclose_box`).  P(X ∈ C) = Π_i P(X_i ∈ [a, c]), and on a side 0 <= a < c it
  is ½e^{−a/b}·(−expm1(−(c − a)/b)).  That has a relative float error below 1e-14, bounded here by η = 1e-12,
  so each term is bounded by P·U + η·P·|U|.
* Outside B: L <= C(1 + ‖x‖₁)^P (:meth:`~optmech.costs_nd.CostND.growth`, with rate 0; a cost growing
  exponentially gets no bound here).  By Cauchy–Schwarz, E[L(X); X ∉ B] <= C·√P(X ∉ B)·√E(1 + ‖X‖₁)^{2P}.
  For q = max(2P, 1), Minkowski in L^q gives E(1 + ‖X‖₁)^q <= (1 + Σ_i b_i Γ(q + 1)^{1/q})^q, since
  ‖X_i‖_q = b_i Γ(q + 1)^{1/q} and (1 + s)^{2P} <= (1 + s)^q.
* The cells' terms are summed with ``math.fsum`` (exactly rounded) and the total is widened by
  ``WIDEN`` = 1e-9 relative plus the tail.  That is far above the float error of the products and the Γ
  and power evaluations.

**Candidates** (:func:`product_laplace_uppers`): the i.i.d. law at the budget, and for each axis j and
K ∈ ``SPREADS``, b_j = K·b with the other axes at the equal scale the remaining budget allows.  Each is
priced on a coarse grid first; the cheapest is priced again on the fine grid, within the time given.
"""

from __future__ import annotations

import math
import time

import numpy as np

from optmech.errors import SpecError
from optmech.families.pure_nd_references import ReferenceUpper
from optmech.mechanisms.laplace_nd import DUAL_NORMS, ProductLaplace

__all__ = ["PRODUCT_SECONDS", "SPREADS", "TAIL", "WIDEN", "product_upper", "product_laplace_uppers", "spread_scales"]

#: the factors by which one axis's scale is spread beyond the i.i.d. budget
SPREADS = (10.0, 100.0, 1000.0)
#: the probability left outside the priced box
TAIL = 1e-12
#: relative widening of the summed cells (far above the float error of the sums and products)
WIDEN = 1e-9
#: relative error allowed for each cell's probability (the float error is below 1e-14)
MASS_ERROR = 1e-12
#: (cells on [0, 5b], cells on [5b, T]) per side of an axis, coarse and fine, by dimension
GRIDS = {2: ((40, 10), (400, 60)), 3: ((12, 4), (30, 8))}


def spread_scales(epsilon: float, sensitivity: float, norm: str, d: int, axis: int | None, spread: float) -> list[float]:
    """The scales of a candidate: all equal at the budget (``axis`` None), or b_axis = spread·b with the other
    axes at the equal scale the remaining budget allows (a tiny outward margin: the law checks it exactly)."""
    dual_p = {"linf": math.inf, "l2": 2.0, "l1": 1.0}[DUAL_NORMS[norm]]  # the dual norm's exponent p*
    # the i.i.d. budget: Δ·‖(1/b)·1‖_* = ε  ⇒  b = Δ·‖1‖_*/ε with ‖1‖_* = d^(1/p*)
    ones = 1.0 if dual_p == math.inf else d ** (1.0 / dual_p)
    b = sensitivity * ones / epsilon
    if axis is None:
        return [b * (1 + 1e-12)] * d
    wide = spread * b
    left = epsilon / sensitivity
    if dual_p == math.inf:
        rest = sensitivity / epsilon
    elif dual_p == 1.0:
        rest = (d - 1) / (left - 1.0 / wide)
    else:
        rest = math.sqrt((d - 1) / (left * left - 1.0 / (wide * wide)))
    out = [rest * (1 + 1e-12)] * d
    out[axis] = wide
    return out


def _axis_edges(b: float, d: int, cuts: list[float], grid: tuple[int, int], near: float) -> np.ndarray:
    """Sorted distinct cut points of one axis in [−T, T] (module docstring); a spread axis (b > ``near``, the
    smallest scale) is also cut on [0, 5·near], where the cost varies on the other axes' scale."""
    T = b * math.log(d / TAIL)
    inner, outer = grid
    side = np.concatenate([np.linspace(0.0, 5 * b, inner + 1), np.linspace(5 * b, T, outer + 1)])
    if b > 2 * near:
        side = np.concatenate([side, np.linspace(0.0, 5 * near, inner // 2 + 1)])
    side = np.unique(np.concatenate([side, [abs(c) for c in cuts if 0 < abs(c) < T]]))
    return np.unique(np.concatenate([-side[::-1], side]))


def _cell_masses(edges: np.ndarray, b: float) -> np.ndarray:
    """P(X ∈ [e_k, e_{k+1}]) for X ~ Laplace(b), the edges containing 0 (module docstring)."""
    a, c = edges[:-1], edges[1:]
    near = np.where(a >= 0, a, -c)  # the end nearer 0: cells do not straddle 0
    return 0.5 * np.exp(-near / b) * -np.expm1(-(c - a) / b)


def product_upper(cost, scales: list[float], grid: tuple[int, int]) -> float:
    """A certified upper bound of E L(X), X with independent Laplace(b_i) coordinates (module docstring);
    +inf where the enclosure or the growth gives none."""
    from optmech.costs.dominance import condition_cuts

    d = len(scales)
    cuts = condition_cuts(cost.tree, d) if cost.kind == "expr" and cost.tree is not None else {}
    edges = [_axis_edges(b, d, cuts.get(i, []), grid, min(scales)) for i, b in enumerate(scales)]
    masses = [_cell_masses(e, b) for e, b in zip(edges, scales)]
    lo = np.stack(np.meshgrid(*[e[:-1] for e in edges], indexing="ij"), axis=-1).reshape(-1, d)
    hi = np.stack(np.meshgrid(*[e[1:] for e in edges], indexing="ij"), axis=-1).reshape(-1, d)
    p = np.ones(1)
    for m in masses:
        p = (p[:, None] * m[None, :]).ravel()
    _, up = cost.enclose_box(lo, hi)
    if not np.all(np.isfinite(up)):
        return math.inf
    with np.errstate(over="ignore"):
        terms = p * up + MASS_ERROR * p * np.abs(up)
    if not np.all(np.isfinite(terms)):
        return math.inf
    inside = math.fsum(terms.tolist())
    g = cost.growth()
    if g is None or g[2] != 0.0:
        return math.inf
    C, P, _ = g
    q = max(2.0 * P, 1.0)
    outside = d * TAIL  # P(X ∉ B) <= Σ_i e^{−T_i/b_i}, T_i = b_i ln(d/τ): d·τ/d = τ (d·τ rounds it up)
    moment = (1.0 + sum(b * math.exp(math.lgamma(q + 1.0) / q) for b in scales)) ** q
    tail = C * math.sqrt(outside) * math.sqrt(moment) * (1 + 1e-6)
    total = inside + abs(inside) * WIDEN + tail
    return float(np.nextafter(total, np.inf))


#: seconds for the candidates at most (the d-D family gives them a tenth of its time limit, up to this)
PRODUCT_SECONDS = 3.0


def product_laplace_uppers(s, seconds: float = PRODUCT_SECONDS) -> list[ReferenceUpper]:
    """The cheapest certified :class:`~optmech.mechanisms.laplace_nd.ProductLaplace` law of the candidates
    (module docstring) for a cost expression on ℝ^d, d in ``GRIDS``, as a one-element list ([] when none is
    certified within ``seconds``)."""
    if s.cost.kind != "expr" or s.d not in GRIDS or not s.cells:
        return []
    t0 = time.perf_counter()
    coarse, fine = GRIDS[s.d]
    best = None
    for axis, spread in [(None, 1.0)] + [(j, k) for j in range(s.d) for k in SPREADS]:
        if time.perf_counter() - t0 > 0.5 * seconds:
            break
        scales = spread_scales(s.eps, s.delta, s.norm, s.d, axis, spread)
        try:  # the law's exact privacy check decides; a candidate it refuses is skipped
            mech = ProductLaplace(epsilon=s.eps, sensitivity=s.delta, scales=scales, norm=s.norm)
        except SpecError:
            continue
        value = product_upper(s.cost, scales, coarse)
        if math.isfinite(value) and (best is None or value < best[0]):
            best = (value, scales, mech)
    if best is None:
        return []
    value, scales, mech = best
    if time.perf_counter() - t0 < 0.5 * seconds:
        value = min(value, product_upper(s.cost, scales, fine))
    shown = ", ".join(f"{b:.4g}" for b in scales)
    return [ReferenceUpper(
        value, "product_laplace", {"scales": list(scales), "norm": s.norm}, mech,
        f"independent Laplace laws with scales ({shown}) (epsilon-DP: sensitivity * ||1/b||_* <= epsilon, checked "
        "exactly); E cost(X) bounded by the cost's interval enclosure on product cells weighted by their exact "
        "Laplace masses, and a Cauchy-Schwarz bound of the tail beyond 1e-12 of the mass, widened by 1e-9 relative "
        "(optmech.families.pure_nd_product)", closed_form=False)]
