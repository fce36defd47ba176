r"""A lower bound for pure ε-DP on ℝ^d from the noise's marginals [derived] (issue 42).

Let X have an ε-DP density f on ℝ^d for the shifts of ℓp-norm at most Δ (p ∈ {1, 2, ∞}).  The unit vector e_i
has norm 1, so every shift t·e_i with |t| <= Δ is allowed and f(x) <= e^ε f(x + t e_i) for almost every x.
Integrating over the other coordinates, the marginal density f_i of X_i satisfies f_i(u) <= e^ε f_i(u + t): X_i is
an ε-DP noise on ℝ for sensitivity Δ (data processing).  If φ is any function with L(x) >= φ(x_i) for every x,
then E L(X) >= E φ(X_i) >= V*_1D(φ), the 1-D optimum for the cost φ.  Hence

.. math:: V^*(L) \ge \max_i V^*_{1D}(\varphi_i).

:func:`marginal_lower` builds φ_i as a step function from below: the real line is cut into slabs [c_j, c_{j+1}]
(a grid in units of Δ and max(1, 1/ε), with the thresholds of the cost's one-variable conditions on x_i), and on
each slab φ_i is the lower end of the cost's interval enclosure over {x_i ∈ slab} × ℝ^{d−1} (unbounded coordinates
included; :meth:`optmech.costs_nd.CostND.enclose_box`), rounded down to four significant digits; the two outer slabs
are unbounded.  Written as a 1-D cost expression (a balanced tree of ``where``), its certified lower bound from the
1-D family (:func:`optmech.drive.solve`) is a certified lower bound of V*(L).  It matters for costs that are cheap
far away along some axis (where the cell LP prices the mass outside its cube at the cost's minimum there).
"""

from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal, localcontext

import numpy as np

__all__ = ["AXIS_SECONDS", "MARGINAL_AFTER_GAP", "MARGINAL_GAP", "MARGINAL_SECONDS", "MARGINAL_SHARE", "marginal_lower", "slab_cost_text"]

#: seconds of the 1-D solves (all axes together), at most
MARGINAL_SECONDS = 10.0
#: the share of the time limit the d-D family keeps back from its cell LPs for this bound, which runs after them
MARGINAL_SHARE = 0.3
#: after the cell LPs the bound runs only while their bracket's relative gap exceeds this: its steps lose a few per
#: cent of the cost, so it rarely closes a smaller gap (a rule for spending time, not part of any certificate)
MARGINAL_AFTER_GAP = 0.05
#: seconds of one axis's 1-D solve, at most (its first resolution already carries the bound; finer ones add little)
AXIS_SECONDS = 7.0
#: the 1-D solves' target gap: the steps already cost a few per cent, a tighter 1-D bracket would not show
MARGINAL_GAP = 1e-4
#: the positive cut points, in units of Δ·max(1, 1/ε) (mirrored to the negative side): fine where the optimum's
#: mass is, so that the steps lose little (a 1-D cost expression has at most MAX_LENGTH characters)
GRID = tuple(k / 16 for k in range(1, 17)) + tuple(1 + k / 8 for k in range(1, 9)) + (2.5, 3, 4, 5, 6, 8, 12)
#: significant digits of the written cut points and levels (levels rounded down, so the steps stay below the cost)
DIGITS = 4


def _decimal(v: float) -> Decimal:
    with localcontext() as ctx:
        ctx.prec, ctx.rounding = DIGITS, ROUND_FLOOR
        return +Decimal(v)


def _text(d: Decimal) -> str:
    t = format(d.normalize(), "f")
    return "0" if t in ("-0", "0") else t


def _cuts(s, axis: int, with_conditions: bool) -> list[Decimal]:
    """Short decimal cut points (sorted, distinct) for the axis: the grid and the cost's thresholds there."""
    from optmech.costs.dominance import condition_cuts

    unit = s.delta * max(1.0, 1.0 / s.eps)
    pts = {float(g * unit) for g in GRID} | {-float(g * unit) for g in GRID} | {0.0}
    if with_conditions:
        pts |= {c for c in condition_cuts(s.cost.tree, s.d).get(axis, []) if abs(c) <= GRID[-1] * unit}
    return sorted({_decimal(p) for p in pts})


def slab_cost_text(s, axis: int) -> str | None:
    """φ_axis of the module docstring as a 1-D cost expression in x (at most ``MAX_LENGTH`` characters: the
    cost's own thresholds are left out when they would make it longer), or None when an enclosure is not finite."""
    from optmech.costs import MAX_LENGTH

    for with_conditions in (True, False):
        text = _slab_text(s, axis, _cuts(s, axis, with_conditions))
        if text is None or len(text) <= MAX_LENGTH:
            return text
    return None


def _slab_text(s, axis: int, cuts: list[Decimal]) -> str | None:
    edges = [-math.inf] + [float(c) for c in cuts] + [math.inf]
    lo = np.full((len(edges) - 1, s.d), -math.inf)
    hi = np.full((len(edges) - 1, s.d), math.inf)
    # each slab widened by one ulp each way: it then holds every x the expression's piece assigns to it
    lo[:, axis] = [np.nextafter(a, -math.inf) for a in edges[:-1]]
    hi[:, axis] = [np.nextafter(b, math.inf) for b in edges[1:]]
    env, _ = s.cost.enclose_box(lo, hi)
    env = np.maximum(np.asarray(env, dtype=float), 0.0)  # the cost is nonnegative (checked by the family)
    if not np.all(np.isfinite(env)):
        return None
    levels = [_text(_decimal(float(v) * (1 - 1e-12))) if v > 0 else "0" for v in env]
    marks = [_text(c) for c in cuts]

    def tree(i: int, j: int) -> str:  # pieces i..j: piece k is [cuts[k−1], cuts[k]) (open ends outside)
        if i == j:
            return levels[i]
        m = (i + j + 1) // 2
        return f"where(x<{marks[m - 1]},{tree(i, m - 1)},{tree(m, j)})"

    return tree(0, len(levels) - 1)


def marginal_lower(s, time_limit: float = MARGINAL_SECONDS) -> tuple[float, str] | None:
    """max_i of the 1-D family's certified lower bound for φ_i (module docstring), with its description; None
    when no axis gives a positive bound within the time."""
    import time

    import optmech
    from optmech.errors import OptmechError
    from optmech.spec import Continuous, Problem, PureDP

    from optmech.costs import parse_cost

    t0 = time.perf_counter()
    texts = {axis: slab_cost_text(s, axis) for axis in range(s.d)}
    # the most promising axis first: its step cost's mean under the Laplace law of scale Δ/ε (a heuristic order only)
    b = s.delta / s.eps
    grid = np.linspace(-40 * b, 40 * b, 4001)
    weight = np.exp(-np.abs(grid) / b)

    def promise(axis: int) -> float:
        return float(np.sum(parse_cost(texts[axis])(grid) * weight)) if texts[axis] is not None else -1.0

    order = sorted((a for a in texts if texts[a] is not None), key=promise, reverse=True)
    best: tuple[float, str] | None = None
    for k, axis in enumerate(order):
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0.5:
            break
        text = texts[axis]
        try:
            r = optmech.solve(Problem(privacy=PureDP(s.eps), cost=text, sensitivity=s.delta, domain=Continuous(),
                                      target_gap=MARGINAL_GAP),
                              time_limit=min(AXIS_SECONDS, left / (len(order) - k) if k else 0.7 * left),
                              references=False)
        except OptmechError:
            continue
        if r.status == "interrupted":  # the signal was meant for the whole solve: pass it on
            raise KeyboardInterrupt
        v = float(r.lower_bound)
        if math.isfinite(v) and v > 0 and (best is None or v > best[0]):
            best = (v, f"the marginal bound: X_{axis + 1} is epsilon-DP on R for shifts up to the sensitivity (data "
                       f"processing), and the cost is >= a step function of x{axis + 1} proven by interval enclosures on "
                       "slabs, whose 1-D optimum is certified by the 1-D family")
    return best
