"""Every reference law at its best shift: one rule for every family.

A shift X + t of additive noise X is exactly as private as X (the same ε, δ or Lipschitz
constant: the output densities at neighbouring inputs are shifted together), so each closed-form
law is listed at its best shift t, ``parameters["shift"]`` (an integer on ℤ), with the value
E L(X + t) = E L_t(X) for the shifted cost L_t(x) = L(x + t) (:func:`shifted_cost`), computed by
the law's own route with the same rigour as the centred value (a closed form, an exact sum with
a rigorous tail, or the numeric route that its note names).  :func:`shift_references` applies the
rule to the pure references (:mod:`optmech.mechanisms.references`), to the (ε, δ) references on ℤ and on ℝ
(:mod:`optmech.families.approx`, :mod:`optmech.families.approx_real`), and the plots draw each
law where its ``shift`` puts it.  The shift itself comes from a numeric search
(:func:`search_shift`): quadrature of the law on a grid, a coarse grid of shifts around 0 and
around the cost's minimiser, then zooming in; any shift gives a valid mechanism, so the search
need not find the true best one, and the note says so.  When the cost is proven symmetric and
nondecreasing in |x| the search is skipped: for a law symmetric and unimodal about 0 (every law
here) t = 0 is then optimal (Anderson's inequality; its discrete analogue on ℤ).

In d dimensions (:func:`shift_references_nd`) the shift is a vector, ``parameters["shift"]`` a
list of d numbers.  For the named costs (norms and their squares) every reference's best shift is
0, proven (:func:`centre_is_best_nd`: a convex cost even in every coordinate, a law symmetric under
each coordinate reflection), so nothing is searched; for a cost expression in x1..xd a law with
i.i.d. coordinates is moved to the shift vector a coordinate-wise search finds
(:func:`search_shift_nd`), priced by the law's own route on L(x + t) (:func:`shifted_cost_nd`; on
ℤ^d the product discrete Laplace by :func:`product_discrete_laplace_price`).
"""

from __future__ import annotations

import ast
import dataclasses
import math
from typing import Any, Callable, NamedTuple, TypeVar

import numpy as np

from optmech.errors import CostError, ProblemTooLarge, SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Reference
from optmech.mechanisms.discrete_staircase import best_discrete_staircase_reference
from optmech.mechanisms.laplace import discrete_laplace_reference, laplace_reference
from optmech.mechanisms.staircase import best_staircase_reference

__all__ = ["shifted_cost", "search_shift", "Price", "at_best_shift", "reference_law", "reference_price",
           "shift_references", "SHIFT_NODES", "SHIFT_GRID", "SHIFT_MASS", "CONVEX_EVEN_ND", "SHIFT_POINTS_ND",
           "SHIFT_SWEEPS_ND", "PRICE_POINTS_ND", "centre_is_best_nd", "shifted_cost_nd", "search_shift_nd",
           "at_best_shift_nd", "shift_references_nd", "product_discrete_laplace_price"]

#: The shift search prices a law on this many quadrature nodes (all points of its support on ℤ when
#: there are at most 8 times as many), ...
SHIFT_NODES = 2048
#: ... tries this many shifts per coarse grid and per zoom round, ...
SHIFT_GRID = 33
#: ... and drops this much of the law's mass (half in each tail) from the nodes.
SHIFT_MASS = 1e-12

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# shifts


class _Shift(ast.NodeTransformer):
    """Replaces the variable ``x`` (or ``x1``) by ``x + t``."""

    def __init__(self, shift: float) -> None:
        self.shift = shift

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id not in ("x", "x1"):
            return node
        t = self.shift
        op = ast.Add() if t >= 0 else ast.Sub()
        return ast.BinOp(ast.Name("x", ast.Load()), op, ast.Constant(abs(t)))


def shifted_cost(cost, shift: float):
    """The cost L_t(x) = L(x + t) as a :class:`~optmech.costs.Cost`: an expression in which ``x``
    is replaced by ``(x + t)``, so every evaluator (float values, interval enclosures, integrals,
    growth bounds, proofs) treats it as it treats any expression; ``shift`` 0 returns ``cost``.

    Raises :class:`~optmech.errors.CostError` when the shifted text is beyond the expression
    limits (length, depth).

    >>> from optmech.costs import parse_cost
    >>> c = shifted_cost(parse_cost("abs(x - 5)"), 5)
    >>> c.spec, float(c(np.array([0.0]))[0]), float(c(np.array([-2.0]))[0])
    ('abs(x + 5 - 5)', 0.0, 2.0)
    >>> shifted_cost(parse_cost("square"), -1.5).spec
    '(x - 1.5) ** 2'
    """
    from optmech.costs import as_cost, parse_cost

    cost = as_cost(cost)
    if shift == 0:
        return cost
    t = int(shift) if float(shift).is_integer() and abs(shift) < 2**53 else float(shift)
    if not math.isfinite(float(t)):
        raise SpecError(f"shift must be finite, got {shift!r}")
    if cost.kind == "expr":
        text = cost.spec
    elif cost.kind == "abs":
        text = "abs(x)"
    elif cost.kind == "square":
        text = "x ** 2"
    else:
        text = f"abs(x) ** {cost.power!r}"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:  # the cost parsed once, so this does not happen
        raise CostError(f"cannot shift the cost {cost.spec!r}: {exc.msg}") from None
    return parse_cost(ast.unparse(ast.fix_missing_locations(_Shift(t).visit(tree))))


def _nodes(law: Mechanism, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights (summing to 1) of ``law`` on all but SHIFT_MASS of its mass."""
    lo, hi = (float(v) for v in law.ppf(np.array([SHIFT_MASS / 2.0, 1.0 - SHIFT_MASS / 2.0])))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError("the law's quantiles are not finite")
    if law.symmetric:  # symmetric nodes (1 − SHIFT_MASS/2 is rounded), so that symmetric costs stay exact
        lo, hi = min(lo, -hi), max(hi, -lo)
    if integer:
        lo, hi = math.floor(lo), math.ceil(hi)
        if hi - lo + 1 <= 8 * SHIFT_NODES:
            x = np.arange(lo, hi + 1, dtype=float)
        else:
            x = np.unique(np.round(np.linspace(lo, hi, SHIFT_NODES)))
        w = np.asarray(law.pmf(x), dtype=float)
        if x.size > 1 and x.size < hi - lo + 1:  # every node stands for the integers around it
            w = w * np.gradient(x)
    else:  # cells cut both uniformly and at quantiles (narrow where the mass is dense), each weighted
        # by its exact mass (cdf differences left of 0, sf differences right of it) at its midpoint
        half = SHIFT_NODES // 2
        q = np.linspace(SHIFT_MASS / 2.0, 1.0 - SHIFT_MASS / 2.0, half + 1)
        edges = np.unique(np.concatenate([np.linspace(lo, hi, half + 1), np.asarray(law.ppf(q), dtype=float)]))
        edges = edges[np.isfinite(edges)]
        if edges.size < 2:
            raise ValueError("the law's quantiles do not span an interval")
        a, b = edges[:-1], edges[1:]
        left = np.asarray(law.cdf(np.minimum(b, 0.0)), dtype=float) - np.asarray(law.cdf(np.minimum(a, 0.0)), dtype=float)
        right = np.asarray(law.sf(np.maximum(a, 0.0)), dtype=float) - np.asarray(law.sf(np.maximum(b, 0.0)), dtype=float)
        x, w = (a + b) / 2.0, np.maximum(left, 0.0) + np.maximum(right, 0.0)
    total = float(w.sum())
    if not (math.isfinite(total) and total > 0):
        raise ValueError("the law's weights do not sum to a positive number")
    return x, w / total


def _expected(cost, x: np.ndarray, w: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """≈ E L(X + t) for each t in ``shifts`` (the quadrature of :func:`_nodes`; inf where undefined)."""
    out = np.empty(shifts.size)
    step = max(1, 2**20 // max(x.size, 1))
    with np.errstate(all="ignore"):
        for s in range(0, shifts.size, step):
            t = shifts[s:s + step]
            vals = np.asarray(cost(x[None, :] + t[:, None]), dtype=float)
            e = vals @ w
            out[s:s + step] = np.where(np.isfinite(e), e, np.inf)
    return out


def search_shift(cost, law: Mechanism, *, integer: bool) -> tuple[float, str]:
    """A shift t with E L(X + t) small, for ``law`` X, found numerically; (t, where it searched).

    X is replaced by a quadrature on about SHIFT_NODES nodes covering all but SHIFT_MASS of its
    mass (s = half that range; on ℝ the cells are cut both uniformly and at quantiles, each
    carrying its exact mass); shifts are tried on a grid of SHIFT_GRID points on [−s, s] and on
    [m − s, m + s], m the cost's smallest sampled value's place (samples out to 10^4·s), then on
    grids zoomed around the best one (on ℤ down to consecutive integers; on ℝ three rounds and a
    bounded Brent search), and the result is rounded to the coarsest decimal that the quadrature
    does not find more expensive (so an exact optimum such as t = 5 for |x − 5| is found exactly).
    0 is returned unless another shift is cheaper by the quadrature.  The search is a heuristic:
    any t gives a valid mechanism, and the caller prices the chosen one rigorously.

    >>> from optmech.costs import parse_cost
    >>> from optmech.mechanisms import DiscreteLaplace, Staircase
    >>> search_shift(parse_cost("abs(x - 7)"), DiscreteLaplace(epsilon=1, sensitivity=2), integer=True)[0]
    7
    >>> search_shift(parse_cost("abs(x - 5)"), Staircase(epsilon=1, sensitivity=1, gamma=0.3), integer=False)[0]
    5.0
    """
    x, w = _nodes(law, integer)
    s = max(float(x[-1] - x[0]) / 2.0, 1.0 if integer else 1e-300)
    # where the cost is smallest, sampled out to 10^4·s
    with np.errstate(all="ignore"):
        probe = _probe(s, integer)
        cv = np.asarray(cost(probe), dtype=float)
    m = _argmin_place(probe, cv)
    t, _, where = _line_search(lambda T: _expected(cost, x, w, T), s, m, integer)
    return t, where


def _probe(s: float, integer: bool) -> np.ndarray:
    """Places at which the cost is sampled to find where it is smallest: 0, a grid on [−4s, 4s] and
    geometric steps out to ±10^4·s (integers on ℤ)."""
    far = np.geomspace(s / 1000.0, 1e4 * s, 200)
    probe = np.concatenate([[0.0], np.linspace(-4.0 * s, 4.0 * s, 801), far, -far])
    return np.round(probe) if integer else probe


def _argmin_place(probe: np.ndarray, values: np.ndarray) -> float:
    """The probe at which ``values`` is smallest (0 when none is finite)."""
    v = np.where(np.isfinite(values), values, np.inf)
    return float(probe[int(np.argmin(v))]) if np.isfinite(v).any() else 0.0


def _line_search(expected: Callable[[np.ndarray], np.ndarray], s: float, m: float,
                 integer: bool) -> tuple[float, float, str]:
    """(t, E(t), where) for a shift t along one line with ``expected(T)`` ≈ E L(X + t) small: the grid
    search of :func:`search_shift` on [−s, s] and [m − s, m + s] with its zoom rounds and decimal
    rounding; t = 0 unless another shift is cheaper by the quadrature."""
    base = np.linspace(-s, s, SHIFT_GRID)
    where = f"[{-s:.6g}, {s:.6g}]" + (f" and [{m - s:.6g}, {m + s:.6g}]" if m != 0.0 else "")

    def grid(points: np.ndarray) -> np.ndarray:
        points = np.round(points) if integer else points
        return np.unique(np.concatenate([points, [0.0]]))

    T = grid(np.concatenate([base, m + base, [m]]))
    E = expected(T)
    e0 = float(E[np.searchsorted(T, 0.0)])
    i = int(np.argmin(E))
    t, best = float(T[i]), float(E[i])
    for _ in range(40 if integer else 3):
        a, b = float(T[max(i - 1, 0)]), float(T[min(i + 1, T.size - 1)])
        if integer and b - a <= SHIFT_GRID:
            T = grid(np.arange(a, b + 1.0))
        elif integer or b > a:
            T = grid(np.linspace(a, b, SHIFT_GRID))
        else:
            break
        E = expected(T)
        i = int(np.argmin(E))
        if float(E[i]) <= best:
            t, best = float(T[i]), float(E[i])
        if integer and b - a <= SHIFT_GRID:
            break
    if not integer and math.isfinite(best):
        from scipy import optimize  # lazy: keeps `import optmech.mechanisms` cheap

        a, b = float(T[max(i - 1, 0)]), float(T[min(i + 1, T.size - 1)])
        if b > a:
            res = optimize.minimize_scalar(lambda u: float(expected(np.array([u]))[0]), bounds=(a, b),
                                           method="bounded", options={"xatol": 1e-10 * max(s, abs(t))})
            if res.success and float(res.fun) < best:
                t, best = float(res.x), float(res.fun)
        # the coarsest decimal rounding of t that the quadrature does not find more expensive
        top = math.floor(math.log10(max(s, abs(t)))) + 1
        tries = np.array([round(t, k) for k in range(-top, 14 - top)])
        tries = tries[(np.abs(tries) <= s) | (np.abs(tries - m) <= s)]  # within the ranges searched
        if tries.size:
            E = expected(tries)
            ok = np.flatnonzero(E <= best + 1e-9 * abs(best))
            if ok.size:
                t, best = float(tries[ok[0]]), float(E[ok[0]])
    if not (math.isfinite(best) and best < e0 - 1e-12 * abs(e0)):
        return (0 if integer else 0.0), e0, where
    return (int(t) if integer else t + 0.0), best, where


class Price(NamedTuple):
    """A law's expected cost for one cost (the centred law and the shifted cost L_t).

    ``value``, ``exact`` and ``note`` as in :class:`~optmech.mechanisms.base.Reference`;
    ``parameters`` are the law's calibration for that cost (e.g. the staircase's γ), merged
    into the reference's parameters.

    >>> Price(1.0, True, "closed form", {}).value
    1.0
    """

    value: float
    exact: bool
    note: str
    parameters: dict


def at_best_shift(item: T, cost, law: Mechanism | None, price: Callable[[Any], Price | None], *,
                  integer: bool, unsearched: str | None = None) -> T:
    """``item`` (a :class:`~optmech.mechanisms.base.Reference` or an (ε, δ)
    :class:`~optmech.mechanisms.approx.bounds.Bound` of the centred ``law``) at its best shift: the
    one rule of every family (module docstring).

    The search (:func:`search_shift`) runs unless ``unsearched`` gives a reason not to (it is
    added to the note), the cost is proven
    symmetric and nondecreasing in |x| on the domain, ``law`` is None or the centred value is not
    finite; the chosen shift t ≠ 0 is priced by ``price(L_t)`` (the law's own route, same rigour as
    the centred value) and kept only when that price is below the centred value.  The result has
    ``parameters["shift"]`` = t (0 when none is cheaper) and a note that says how t was found.

    >>> from optmech.costs import parse_cost
    >>> from optmech.mechanisms import DiscreteLaplace
    >>> cost = parse_cost("abs(x - 3)")
    >>> centred = discrete_laplace_reference(cost, 1, 1)
    >>> moved = at_best_shift(centred, cost, DiscreteLaplace(epsilon=1, sensitivity=1),
    ...                       lambda c: _of(discrete_laplace_reference(c, 1, 1)), integer=True)
    >>> import math                                       # E|X + 3 − 3| = E|X|, by the numeric route
    >>> moved.parameters["shift"], math.isclose(moved.value, discrete_laplace_reference(parse_cost("abs"), 1, 1).value)
    (3, True)
    """
    params = dict(item.parameters)
    zero = 0 if integer else 0.0
    value = float(item.value)
    params["shift"] = zero
    if unsearched is not None and law is not None and math.isfinite(value):
        return dataclasses.replace(item, parameters=params, note=f"{item.note}; listed centred ({unsearched})")
    if law is None or not math.isfinite(value) or cost.is_symmetric_nondecreasing(integer=integer):
        return dataclasses.replace(item, parameters=params)
    try:
        t, where = search_shift(cost, law, integer=integer)
    except (ArithmeticError, ValueError, TypeError, SpecError, CostError):
        return dataclasses.replace(item, parameters=params, note=item.note + "; shift search failed, listed centred")
    how = f"best shift found by a numeric search on {where}"
    if t != 0:
        plus = f"+ {t}" if t > 0 else f"- {-t}"
        return _priced_at_shift(item, params, value, lambda: price(shifted_cost(cost, t)), t, str(t),
                               f"found by a numeric search on {where}",
                               lambda moved: f"shifted by {t}: E L(X {plus}), a shift of additive noise being exactly "
                               f"as private ({how}); cost at the shift: {moved.note}"
                               + ("" if moved.note == item.note else f"; centred law: {item.note}"), how)
    return dataclasses.replace(item, parameters=params, note=f"{item.note}; centred ({how}: no cheaper shift)")


def _priced_at_shift(item, params: dict, value: float, price_moved: Callable[[], "Price | None"], t, shown: str,
                    found: str, shifted_note: Callable[["Price"], str], how: str):
    """``item`` at the shift ``t`` when the law's own route prices it (``price_moved()``) below the centred
    ``value``; else ``item`` centred, its note saying why (the shift could not be priced, or is not
    cheaper).  ``params`` (the centred parameters, with ``shift`` 0) is updated with the shift's."""
    try:
        moved = price_moved()
    except (CostError, SpecError, ProblemTooLarge, ArithmeticError) as exc:
        return dataclasses.replace(item, parameters=params, note=f"{item.note}; listed centred (the shift {shown} "
                                   f"{found} could not be priced: {exc})")
    if moved is None:
        return dataclasses.replace(item, parameters=params, note=f"{item.note}; listed centred (the shift {shown} "
                                   f"{found} could not be priced by its route)")
    if math.isfinite(moved.value) and moved.value < value:
        params.update(moved.parameters)
        params["shift"] = t
        return dataclasses.replace(item, value=moved.value, exact=bool(moved.exact), parameters=params,
                                   note=shifted_note(moved))
    return dataclasses.replace(item, parameters=params, note=f"{item.note}; centred ({how}: the shift {shown} it "
                               f"found costs {moved.value:.6g} by the law's own route, not less)")


def reference_law(name: str, parameters: dict, *, epsilon: float, sensitivity, delta: float | None = None,
                  integer: bool) -> Mechanism | None:
    """The 1-D closed-form law of the reference ``name`` with its calibration ``parameters``
    (centred), or None for a name without one (bounds, d-D laws).

    >>> reference_law("discrete_laplace", {}, epsilon=1.0, sensitivity=2, integer=True)
    DiscreteLaplace(epsilon=1.0, sensitivity=2)
    """
    from optmech.mechanisms.approx.truncated import TruncatedLaplace
    from optmech.mechanisms.discrete_staircase import DiscreteStaircase
    from optmech.mechanisms.approx.discrete_gaussian import DiscreteGaussian
    from optmech.mechanisms.approx.gaussian import Gaussian
    from optmech.mechanisms.laplace import DiscreteLaplace, Laplace
    from optmech.mechanisms.staircase import Staircase
    from optmech.mechanisms.uniform import Uniform, UniformContinuous

    p = parameters
    if int(p.get("dim", 1) or 1) != 1:
        return None
    try:
        if integer:
            if name in ("discrete_laplace", "geometric"):
                return DiscreteLaplace(epsilon=epsilon, sensitivity=int(sensitivity))
            if name == "discrete_staircase" and int(p.get("r", 0)) >= 1:
                return DiscreteStaircase(epsilon=epsilon, sensitivity=int(sensitivity), r=int(p["r"]))
            if name == "uniform" and delta is not None:
                return Uniform(delta=delta, sensitivity=int(sensitivity))
            if name == "discrete_gaussian" and "sigma" in p:
                return DiscreteGaussian(sigma=float(p["sigma"]))
            return None
        if name == "laplace":
            return Laplace(epsilon=epsilon, sensitivity=sensitivity)
        if name == "staircase" and math.isfinite(float(p.get("gamma", math.nan))):
            return Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=float(p["gamma"]))
        if name in ("gaussian", "analytic_gaussian") and "sigma" in p:
            return Gaussian(sigma=float(p["sigma"]))
        if name == "truncated_laplace" and delta is not None:
            return TruncatedLaplace(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
        if name == "uniform" and delta is not None:
            return UniformContinuous(delta=delta, sensitivity=sensitivity)
    except (SpecError, ValueError, TypeError, OverflowError):
        return None
    return None


def _of(ref: Reference | None) -> Price | None:
    return None if ref is None else Price(float(ref.value), bool(ref.exact), ref.note, {})


def reference_price(name: str, parameters: dict, cost, *, epsilon: float, sensitivity, delta: float | None = None,
                    integer: bool) -> Price | None:
    """E L(X) for the 1-D law ``name`` (calibrated by ``parameters``) and ``cost``, by the route
    that lists that law (same functions, same rigour); None for a name without one here.
    The staircases re-optimise their γ or r for ``cost``.

    >>> from optmech.costs import parse_cost
    >>> reference_price("laplace", {}, parse_cost("abs"), epsilon=1.0, sensitivity=2.0, integer=False).value
    2.0
    """
    if integer:
        if name == "discrete_laplace":
            return _of(discrete_laplace_reference(cost, epsilon, int(sensitivity)))
        if name == "discrete_staircase":
            ref = best_discrete_staircase_reference(cost, epsilon, int(sensitivity))
            return Price(float(ref.value), bool(ref.exact), ref.note, {"r": ref.parameters["r"]})
        if name == "uniform" and delta is not None:
            from optmech.mechanisms.approx.bounds import uniform_upper_bound

            b = uniform_upper_bound(cost, delta, int(sensitivity), 1)
            return Price(float(b.value), bool(b.exact), b.note, {})
        if name == "discrete_gaussian" and "sigma" in parameters:
            from optmech.mechanisms.approx.discrete_gaussian import discrete_gaussian_reference

            ref = discrete_gaussian_reference(cost, float(parameters["sigma"]))
            if not ref.parameters.get("tail_bounded", False):
                return None  # the shifted cost has no proven growth bound: keep the centred law
            return _of(ref)
        return None
    if name == "laplace":
        return _of(laplace_reference(cost, epsilon, sensitivity))
    if name == "staircase":
        ref = best_staircase_reference(cost, epsilon, sensitivity)
        return Price(float(ref.value), bool(ref.exact), ref.note, {"gamma": ref.parameters["gamma"]})
    if name in ("gaussian", "analytic_gaussian") and "sigma" in parameters:
        from optmech.mechanisms.approx.gaussian import gaussian_reference

        return _of(gaussian_reference(cost, float(parameters["sigma"]), 1))
    if name == "truncated_laplace" and delta is not None:
        from optmech.mechanisms.approx.truncated import truncated_laplace_reference

        return _of(truncated_laplace_reference(cost, epsilon, delta, sensitivity))
    if name == "uniform" and delta is not None:
        half = float(sensitivity) / (2.0 * delta)
        lo, hi = cost.integral(np.array([-half]), np.array([half]), pieces=4096)
        exact = cost.kind != "expr"
        return Price(nx.up_ulps(float(hi[0]) / (2.0 * half), 2), exact,
                     "closed-form integral, outward rounded" if exact else
                     "rigorous upper enclosure of the integral (4096 pieces)", {})
    return None


def shift_references(items: list, cost, *, epsilon: float, sensitivity, delta: float | None = None, integer: bool,
                     unsearched: Callable[[Any], str | None] = lambda item: None) -> list:
    """Every 1-D law among ``items`` (References or upper Bounds) at its best shift
    (:func:`at_best_shift`, priced by :func:`reference_price`); lower bounds are returned
    unchanged, invalid bounds and laws that cannot be rebuilt get ``shift`` 0, and a reason from
    ``unsearched(item)`` lists that law centred without a search (e.g. a sum too long for the
    time left).

    >>> from optmech.costs import parse_cost
    >>> from optmech.mechanisms.references import references_for
    >>> refs = references_for(parse_cost("abs(x - 5)"), 1, 1, "continuous")
    >>> [(r.name, r.parameters["shift"], round(r.value, 4)) for r in refs]
    [('staircase', 5.0, 0.9595), ('laplace', 5.0, 1.0)]
    """
    from optmech.costs import parse_cost

    cost = parse_cost(cost) if isinstance(cost, str) else cost
    out = []
    for item in items:
        if getattr(item, "kind", "upper") != "upper":
            out.append(item)
            continue
        kw = {"epsilon": epsilon, "sensitivity": sensitivity, "delta": delta, "integer": integer}
        law = reference_law(item.name, item.parameters, **kw) if getattr(item, "valid", True) else None
        if law is None:  # no law to move (an invalid bound, a series that diverges): listed centred
            out.append(dataclasses.replace(item, parameters={**item.parameters, "shift": 0 if integer else 0.0}))
            continue
        out.append(at_best_shift(item, cost, law,
                                 lambda c, item=item: reference_price(item.name, item.parameters, c, **kw),
                                 integer=integer, unsearched=unsearched(item)))
    return out


# --------------------------------------------------------------------------------------------
# d dimensions

#: The named d-D costs (:mod:`optmech.costs_nd`, with the aliases ``abs`` and ``square``) that are
#: convex and even in every coordinate: the ℓ1, ℓ2 and ℓ∞ norms and their squares.
CONVEX_EVEN_ND = ("l1", "l2", "linf", "l2sq", "l1sq", "linfsq")
_ND_ALIASES = {"abs": "l1", "square": "l2sq"}
#: The d-D shift search prices a product law on a product grid of at most this many points, ...
SHIFT_POINTS_ND = 2**14
#: ... and sweeps over the coordinates at most this many times.
SHIFT_SWEEPS_ND = 3
#: The product discrete Laplace is priced for a cost expression on at most this many lattice points.
PRICE_POINTS_ND = 2**21


def centre_is_best_nd(cost) -> bool:
    """Whether shift 0 is proven best for every d-D reference law and ``cost`` (a
    :class:`~optmech.costs_nd.CostND`, a 1-D :class:`~optmech.costs.Cost` or a cost name): True
    exactly for the kinds in :data:`CONVEX_EVEN_ND` (``abs`` → l1, ``square`` → l2sq).

    Proof.  Let X be a reference law (ℝ^d or ℤ^d) and m its centre, with X − m symmetric under each
    coordinate reflection x_i → −x_i: every reference here is one, with m = 0 (products of symmetric
    1-D laws: (discrete) Laplace, Gaussian, uniform on [−a, a]; laws that are functions of the ℓ1 or
    ℓ2 norm: staircases, the ℓ2-Laplace) or, on ℤ^d, m_i = −1/2 (uniform on an even number of
    consecutive integers per coordinate).  Let c be convex and even in every coordinate,
    c(x_1, .., −x_i, .., x_d) = c(x): the ℓ1, ℓ2 and ℓ∞ norms are (they depend on |x_i| only), and
    so are their squares (s ↦ s² is convex and nondecreasing on [0, ∞), so the square of a
    nonnegative convex function is convex).  Put Y = X − m and g(u) = E c(Y + u) (values in
    [0, ∞]), so that E c(X + t) = g(t + m).  g is convex (an average of the convex functions
    u ↦ c(y + u)) and even in each u_i (reflect u_i and Y_i together: c is even in x_i and Y_i is
    symmetric).  A convex function of one variable that is even is nondecreasing in its absolute
    value, so g is nondecreasing in each |u_i| with the other coordinates fixed.  Now replace the
    coordinates of any shift t one at a time by 0: |t_i + m_i| >= |m_i| (on ℝ^d m_i = 0; on ℤ^d t_i
    is an integer and |m_i| <= 1/2, so t_i ≠ 0 gives |t_i + m_i| >= 1/2 >= |m_i|), so g does not
    increase and E c(X + t) >= E c(X).  Hence t = 0 is a best shift, on ℝ^d and on ℤ^d.  (This is
    the d-D form of the 1-D rule; for d = 1 it covers |x| and x².)

    Cost expressions are not covered (``abs(x1 - 3) + abs(x2)`` is not even): their shift is
    searched (:func:`at_best_shift_nd`), whatever the expression.

    >>> from optmech.costs_nd import parse_cost_nd
    >>> centre_is_best_nd(parse_cost_nd("l2", 3)), centre_is_best_nd("square"), centre_is_best_nd(parse_cost_nd("abs(x1) + abs(x2)", 2))
    (True, True, False)
    """
    kind = cost.strip().lower() if isinstance(cost, str) else getattr(cost, "kind", None)
    return _ND_ALIASES.get(kind, kind) in CONVEX_EVEN_ND


class _ShiftND(ast.NodeTransformer):
    """Replaces each variable ``x<i>`` (``x`` for x1) with a shift by ``x<i> + t_i``."""

    def __init__(self, shifts: dict) -> None:
        self.shifts = shifts

    def visit_Name(self, node: ast.Name) -> ast.AST:
        t = self.shifts.get(node.id, 0)
        if t == 0:
            return node
        op = ast.Add() if t >= 0 else ast.Sub()
        return ast.BinOp(ast.Name(node.id, ast.Load()), op, ast.Constant(abs(t)))


def _number(v) -> int | float:
    v = float(v)
    if not math.isfinite(v):
        raise SpecError(f"shift must be finite, got {v!r}")
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def shifted_cost_nd(cost, shift):
    """The d-D cost L_t(x) = L(x + t) for a cost expression (a
    :class:`~optmech.costs_nd.CostND`) and a shift vector t of length d: the expression with each
    ``x<i>`` replaced by ``(x<i> + t_i)``, so that every evaluator (values, enclosures, growth
    bounds) treats it as any expression.  A zero shift returns ``cost``; a named cost is never
    shifted (:func:`centre_is_best_nd`: 0 is its best shift), so a nonzero shift of one raises
    :class:`~optmech.errors.CostError`, as does a shifted text beyond the expression limits.

    >>> from optmech.costs_nd import parse_cost_nd
    >>> c = shifted_cost_nd(parse_cost_nd("abs(x1 - 3) + abs(x2)", 2), [3, 0])
    >>> c.spec, float(c(np.array([0.0, -2.0])))
    ('abs(x1 + 3 - 3) + abs(x2)', 2.0)
    """
    from optmech.costs_nd import parse_cost_nd

    t = [_number(v) for v in np.ravel(np.asarray(shift, dtype=float))]
    if len(t) != cost.dim:
        raise SpecError(f"a shift of a cost in dim {cost.dim} has {cost.dim} coordinates, got {len(t)}")
    if not any(t):
        return cost
    if cost.kind != "expr":
        raise CostError(f"the named cost {cost.spec!r} is not shifted: 0 is its best shift")
    names = {f"x{i + 1}": v for i, v in enumerate(t)}
    if cost.dim == 1:
        names["x"] = t[0]
    tree = ast.parse(cost.spec.strip(), mode="eval")
    return parse_cost_nd(ast.unparse(ast.fix_missing_locations(_ShiftND(names).visit(tree))), cost.dim)


def _nodes_nd(marginal: Mechanism, integer: bool, dim: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(points (M, d), weights (M), s): the product quadrature of a law with i.i.d. coordinates of law
    ``marginal``, M <= SHIFT_POINTS_ND: the 1-D nodes of :func:`_nodes`, merged into at most
    SHIFT_POINTS_ND^(1/d) groups of consecutive nodes of equal mass (each node the group's mean,
    its weight the group's mass); s is half the range of the 1-D nodes."""
    x, w = _nodes(marginal, integer)
    s = max(float(x[-1] - x[0]) / 2.0, 1.0 if integer else 1e-300)
    n = max(2, int(math.floor(SHIFT_POINTS_ND ** (1.0 / dim) + 1e-9)))
    if x.size > n:
        idx = np.minimum((np.cumsum(w) - w / 2.0) * n, n - 1).astype(int)
        mass = np.bincount(idx, w, minlength=n)
        keep = mass > 0
        x, w = (np.bincount(idx, w * x, minlength=n)[keep] / mass[keep]), mass[keep]
    grids = np.meshgrid(*([x] * dim), indexing="ij")
    weights = np.meshgrid(*([w] * dim), indexing="ij")
    P = np.stack(grids, axis=-1).reshape(-1, dim)
    W = np.prod(np.stack(weights, axis=-1).reshape(-1, dim), axis=1)
    return P, W / W.sum(), s


def search_shift_nd(cost, marginal: Mechanism, *, integer: bool) -> tuple[list, str]:
    """A shift vector t with E L(X + t) small, for X with i.i.d. coordinates of law ``marginal`` and
    a d-D cost, found numerically; (t as a list of d numbers, how it was found).

    A coordinate-wise search: X is replaced by a product quadrature (:func:`_nodes_nd`, at most
    SHIFT_POINTS_ND points) and each coordinate t_i in turn, the others held, is searched as in 1-D
    (:func:`search_shift`: grids on [−s, s] and around the place where the cost is smallest along
    that coordinate, zoomed; integers on ℤ^d), for up to SHIFT_SWEEPS_ND sweeps until none moves.
    A heuristic: any t gives a valid mechanism, and the caller prices the chosen one rigorously.

    >>> from optmech.costs_nd import parse_cost_nd
    >>> from optmech.mechanisms import DiscreteLaplace
    >>> search_shift_nd(parse_cost_nd("abs(x1 - 3) + abs(x2 + 1)", 2), DiscreteLaplace(epsilon=1, sensitivity=1),
    ...                 integer=True)[0]
    [3, -1]
    """
    dim = cost.dim
    P, W, s = _nodes_nd(marginal, integer, dim)
    t = np.zeros(dim)
    probe = _probe(s, integer)
    step = max(1, 2**20 // P.shape[0])
    sweeps = 0

    def expected(i: int, T: np.ndarray) -> np.ndarray:
        out = np.empty(T.size)
        with np.errstate(all="ignore"):
            for a in range(0, T.size, step):
                pts = np.broadcast_to(P + t, (min(step, T.size - a),) + P.shape).copy()
                pts[..., i] = P[:, i] + T[a:a + step, None]  # t_i = T, the other coordinates held
                e = np.asarray(cost(pts), dtype=float) @ W
                out[a:a + step] = np.where(np.isfinite(e), e, np.inf)
        return out

    for sweeps in range(1, SHIFT_SWEEPS_ND + 1):
        moved = False
        for i in range(dim):
            along = np.tile(t, (probe.size, 1))
            along[:, i] = probe
            with np.errstate(all="ignore"):
                m = _argmin_place(probe, np.asarray(cost(along), dtype=float))
            ti, _, _ = _line_search(lambda T, i=i: expected(i, T), s, m, integer)
            if ti != t[i]:
                t[i], moved = ti, True
        if not moved:
            break
    how = (f"a coordinate-wise numeric search ({sweeps} sweep{'s' if sweeps > 1 else ''}; each coordinate on "
           f"[{-s:.6g}, {s:.6g}] and around the cost's smallest value along it; product quadrature on {P.shape[0]} "
           "points)")
    return [int(v) if integer else float(v) + 0.0 for v in t], how


def at_best_shift_nd(item: T, cost, marginal: Mechanism | None, price: Callable[[Any], Price | None], *,
                     integer: bool) -> T:
    """``item`` (a reference or an upper bound of a centred d-D law) at its best shift vector: the
    d-D form of :func:`at_best_shift`, the one rule of every family.

    ``parameters["shift"]`` is a list of d numbers (integers on ℤ^d).  When
    :func:`centre_is_best_nd` holds for ``cost`` it is all zeros, by that function's proof, and
    nothing is searched.  Otherwise, when the law has i.i.d. coordinates of law ``marginal`` (None:
    no search, listed centred), :func:`search_shift_nd` finds a shift t, ``price(L_t)``
    (:func:`shifted_cost_nd`; the law's own route, the rigour of the centred value) prices it, and
    it is kept when cheaper than the centred value; the note says how t was found.
    """
    dim = cost.dim
    params = dict(item.parameters)
    params["shift"] = [0 if integer else 0.0] * dim
    value = float(item.value)
    if centre_is_best_nd(cost) or marginal is None or not math.isfinite(value):
        return dataclasses.replace(item, parameters=params)
    try:
        t, how = search_shift_nd(cost, marginal, integer=integer)
    except (ArithmeticError, ValueError, TypeError, SpecError, CostError):
        return dataclasses.replace(item, parameters=params, note=item.note + "; shift search failed, listed centred")
    if not any(t):
        return dataclasses.replace(item, parameters=params, note=f"{item.note}; centred ({how}: no cheaper shift)")
    shown = "(" + ", ".join(f"{v:g}" for v in t) + ")"
    return _priced_at_shift(item, params, value, lambda: price(shifted_cost_nd(cost, t)), t, shown, f"found by {how}",
                           lambda moved: f"shifted by t = {shown}: E L(X + t), a shift of additive noise being exactly "
                           f"as private (t found by {how}); cost at the shift: {moved.note}", how)


def shift_references_nd(items: list, cost, *, dim: int, integer: bool,
                        law: Callable[[Any], tuple[Mechanism, Callable[[Any], Price | None]] | None] = lambda item: None
                        ) -> list:
    """Every d-D law among ``items`` (References, Bounds or ReferenceValues) at its best shift
    (:func:`at_best_shift_nd`); lower bounds are returned unchanged.  ``law(item)`` gives, for a
    law with i.i.d. coordinates, its 1-D marginal and its pricing route (E L(X) for a cost), or
    None (no search: such a law is listed centred when the cost is an expression).  ``cost`` is a
    :class:`~optmech.costs_nd.CostND` of dimension ``dim`` or its text.

    >>> from optmech.mechanisms.base import Reference
    >>> [r.parameters for r in shift_references_nd([Reference("laplace", 2.0, {"scale": 1.0})], "l1",
    ...                                            integer=False, dim=2)]
    [{'scale': 1.0, 'shift': [0.0, 0.0]}]
    """
    from optmech.costs_nd import as_cost_nd

    cost = as_cost_nd(cost, dim)
    out = []
    for item in items:
        if getattr(item, "kind", None) == "lower":
            out.append(item)
            continue
        found = law(item) if getattr(item, "valid", True) is not False else None
        marginal, price = found if found is not None else (None, lambda c: None)
        out.append(at_best_shift_nd(item, cost, marginal, price, integer=integer))
    return out


def _l1_ball_count(R: int, d: int) -> int:
    """The number of points of ℤ^d with ‖x‖₁ <= R: Σ_j 2^j C(d, j) C(R, j)."""
    return sum(2**j * math.comb(d, j) * math.comb(R, j) for j in range(d + 1))


def _l1_ball_chunks(R: int, d: int):
    """The points of ℤ^d with ‖x‖₁ <= R as float arrays (n, d), one chunk per value of x1."""
    for a in range(-R, R + 1):
        r = R - abs(a)
        if d == 1:
            yield np.array([[float(a)]])
            continue
        k = np.arange(-r, r + 1, dtype=float)
        rest = np.stack(np.meshgrid(*([k] * (d - 1)), indexing="ij"), axis=-1).reshape(-1, d - 1)
        rest = rest[np.abs(rest).sum(axis=1) <= r]
        yield np.concatenate([np.full((rest.shape[0], 1), float(a)), rest], axis=1)


def product_discrete_laplace_price(cost, lam: float) -> Price | None:
    """E L(X) for X with i.i.d. discrete Laplace coordinates, P(X = x) = A λ^{‖x‖₁},
    A = ((1 − λ)/(1 + λ))^d, and a d-D cost (a :class:`~optmech.costs_nd.CostND`, typically an
    expression): a rigorous upper bound, accurate to about 1e-12 relative; None when the cost has no
    proven growth bound slow enough, or the sum would need more than PRICE_POINTS_ND points.

    The sum over the ℓ1 ball ‖x‖₁ <= R of A λ^{‖x‖₁} times the upper end of the cost's enclosure at
    x (:meth:`~optmech.costs_nd.CostND.enclose_points`), plus a bound of the rest: with the growth
    bound L(x) <= C (1 + ‖x‖₁)^P e^{r‖x‖₁} and at most 2^d (1 + k)^{d−1} points of ℓ1 norm k
    (signs times compositions of k into d parts, C(k + d − 1, d − 1) <= (1 + k)^{d−1}; exactly
    N_d(k) = Σ_j 2^j C(d, j) C(k − 1, j − 1)), the points with ‖x‖₁ >= K = R + 1 add at most
    A C Σ_{k>=K} N_d(k) (1 + k)^P q^k, q = λ e^r: summed term by term up to k = L (60/−ln q terms) and
    beyond it at most A C 2^d (1 + L')^M q^{L'} / (1 − ρ), L' = L + 1, M = d − 1 + P,
    ρ = (1 + 1/(1 + L'))^M q < 1 (a bound of the terms' ratio).  R is the smallest radius whose tail bound is below 1e-13 of a
    quadrature estimate of the value (below 1e-9 of it when the points allowed run out; the note
    gives the tail bound); the sum is widened by 1e-12 relative for the rounding of the weights.

    >>> import math
    >>> from optmech.costs_nd import parse_cost_nd
    >>> lam = math.exp(-1.0)
    >>> p = product_discrete_laplace_price(parse_cost_nd("abs(x1) + abs(x2)", 2), lam)
    >>> math.isclose(p.value, 2 * 2 * lam / (1 - lam**2), rel_tol=1e-11), p.exact
    (True, True)
    """
    from scipy import special

    from optmech.mechanisms.laplace import DiscreteLaplace

    d = cost.dim
    lam = float(lam)
    if not 0.0 < lam < 1.0:
        return None
    g = cost.growth()
    if g is None:
        return None
    C, P, r = (float(v) for v in g)
    q = lam * math.exp(r)
    if not q < 1.0:
        return None
    p0 = (1.0 - lam) / (1.0 + lam)
    M = d - 1 + P
    try:  # a float estimate of the value, to size the window (the search's product quadrature)
        pts, W, _ = _nodes_nd(DiscreteLaplace(epsilon=-math.log(lam), sensitivity=1), True, d)
        with np.errstate(all="ignore"):
            est = float(np.asarray(cost(pts), dtype=float) @ W)
    except (ValueError, ArithmeticError, SpecError):
        est = math.nan
    est = est if math.isfinite(est) and est > 0 else 1.0

    def tail(R: int) -> float:
        if C == 0.0:
            return 0.0
        K = R + 1
        L = K + int(math.ceil(60.0 / -math.log(q)))  # summed term by term up to L, bounded beyond
        k = np.arange(K, L + 1, dtype=float)
        with np.errstate(under="ignore"):
            size = sum(2.0**j * math.comb(d, j) * special.comb(k - 1, j - 1) for j in range(1, d + 1))
            terms = size * np.exp(P * np.log1p(k) + k * math.log(q))
        rho = (1.0 + 1.0 / (2.0 + L)) ** M * q
        if rho >= 1.0:
            return math.inf
        rest = math.exp(d * math.log(2.0) + M * math.log1p(L + 1) + (L + 1) * math.log(q) - math.log1p(-rho))
        return p0**d * C * (math.fsum(terms) + rest) * (1 + 1e-11)

    top = 1  # the largest radius within the points allowed
    while _l1_ball_count(2 * top, d) <= PRICE_POINTS_ND:
        top *= 2
    lo, hi = top, 2 * top
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _l1_ball_count(mid, d) <= PRICE_POINTS_ND else (lo, mid)
    top = lo
    if tail(top) <= 1e-13 * est:  # the smallest radius whose tail is small enough
        lo, hi = 0, top
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if tail(mid) <= 1e-13 * est else (mid, hi)
        R = hi
    else:
        R = top
    T = tail(R)
    if not T <= 1e-9 * est:
        return None
    body = []
    for x in _l1_ball_chunks(R, d):
        _, up = cost.enclose_points(x)
        if not np.all(np.isfinite(up)):
            return None
        body.append(math.fsum(p0**d * lam ** np.abs(x).sum(axis=1) * np.maximum(up, 0.0)))
    value = float(np.nextafter((math.fsum(body) * (1 + 1e-12) + T) * (1 + 1e-12), np.inf))
    return Price(value, True, f"exact sum over the {_l1_ball_count(R, d)} lattice points of the l1 ball of radius {R} "
                              f"of the pmf times the cost's upper enclosure, plus a proven tail bound ({T:.1e}, from the "
                              "cost's growth bound), rounded up", {})
