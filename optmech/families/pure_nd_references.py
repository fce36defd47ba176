"""The pure ε-DP family in d dimensions, part 2: the closed-form laws as certified upper ends
(:func:`closed_form_uppers_nd`) and the references listed beside the bracket (:func:`references_nd`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optmech.certify import CLOSED_FORM_WIDENING, reference_inside
from optmech.errors import SpecError
from optmech.costs_nd import norm_factor
from optmech.result import ReferenceValue
from optmech.families.pure_nd_setup import Setup

__all__ = ["ReferenceUpper", "NUMERIC_COSTS", "closed_form_uppers_nd", "dominated_uppers", "lattice_staircase_upper",
           "linear_uppers",
           "references_nd"]


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
    #: False when the value is a certified numerical price of the law, not its closed-form cost widened
    closed_form: bool = True


#: (law, cost) pairs whose expected cost is a quadrature, not a closed form: never certified upper bounds.
NUMERIC_COSTS = {("laplace", "l2"), ("l2_laplace", "linf"), ("staircase:l1", "l2"), ("staircase:l2", "linf")}
#: laws whose density is a function of ‖x‖₂ (radial): their ‖x‖∞ cost in ℝ² is E‖X‖₂ · 2√2/π (:func:`_numeric_cost_bound`)
RADIAL_L2_LAWS = ("l2_laplace", "staircase:l2")


def closed_form_uppers_nd(s: Setup) -> list[ReferenceUpper]:
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
    # γ* depends on the cost's order only (StaircaseND.optimal): ‖x‖₂ and ‖x‖∞ take the γ of ‖x‖₁
    order_cost = "l1" if s.cost.spec in ("l2", "linf") else s.cost.spec
    try:
        st = StaircaseND.optimal(order_cost, epsilon=s.eps, sensitivity=s.delta, dim=s.d, norm=s.norm)
        laws.append(("staircase", st, f"the staircase in the {s.norm} norm at its best gamma = {st.gamma:.6g} "
                                      "(epsilon-DP by the triangle inequality)"))
    except SpecError:
        pass
    for name, mech, note in laws:
        key = f"staircase:{s.norm}" if name == "staircase" else name
        params = dict(mech.parameters) | ({"scale": float(mech.scale)} if hasattr(mech, "scale") else {})
        try:
            if (key, s.cost.spec) in NUMERIC_COSTS:
                raise SpecError("a quadrature, not a closed form")
            v = float(mech.expected_cost(s.cost.spec))
        except SpecError:  # no closed form of this cost: a proven bound from one of another cost
            bound = _numeric_cost_bound(mech, key, s.cost.spec)
            if bound is not None:
                out.append(ReferenceUpper(bound[0], name, params, mech, f"{note}; {bound[1]}"))
            continue
        if math.isfinite(v) and v > 0:
            out.append(ReferenceUpper(float(np.nextafter(v * (1 + CLOSED_FORM_WIDENING), np.inf)), name, params,
                                      mech, note))
    return out


def _numeric_cost_bound(mech, key: str, cost: str) -> tuple[float, str] | None:
    """For a law whose expected ``cost`` is a quadrature (``NUMERIC_COSTS``) or has no formula, a certified upper
    bound from a closed form: E‖X‖₂ <= √(E‖X‖₂²) (Jensen) and E‖X‖∞ <= E‖X‖₂ (pointwise), each closed form widened by
    ``CLOSED_FORM_WIDENING`` and rounded up; None where neither closed form exists."""
    via = {"l2": "l2sq", "linf": "l2"}.get(cost)
    if via is None or (key, via) in NUMERIC_COSTS:
        return None
    try:
        v = float(mech.expected_cost(via))
    except SpecError:
        return None
    if not (math.isfinite(v) and v > 0):
        return None
    v = float(np.nextafter(v * (1 + CLOSED_FORM_WIDENING), np.inf))
    if cost == "l2":
        return (float(np.nextafter(math.sqrt(v) * (1 + 2.0**-52), np.inf)),
                f"its E||X||_2 is a quadrature: bounded by sqrt(E||X||_2^2) (Jensen), exact, widened by "
                f"{CLOSED_FORM_WIDENING:g} relative")
    if key in RADIAL_L2_LAWS and getattr(mech, "dim", None) == 2:
        # a radial law X = R U (R independent of the direction U, uniform on the circle): E||X||_inf = E||X||_2 E||U||_inf,
        # E||U||_inf = (2/pi) int_{-pi/4}^{pi/4} cos t dt = 2 sqrt(2)/pi (the eight arcs where one coordinate is largest)
        m = float(np.nextafter(2.0 * math.sqrt(2.0) / math.pi * (1 + 2.0**-50), np.inf))
        return (float(np.nextafter(v * m * (1 + 2.0**-52), np.inf)),
                f"radial: E||X||_inf = E||X||_2 E||U||_inf with E||U||_inf = 2 sqrt(2)/pi on the circle, from its exact "
                f"E||X||_2 widened by {CLOSED_FORM_WIDENING:g} relative")
    return v, (f"its E||X||_inf is a quadrature: bounded by its exact E||X||_2 (||x||_inf <= ||x||_2), widened by "
               f"{CLOSED_FORM_WIDENING:g} relative")


def dominated_uppers(s: Setup) -> list[ReferenceUpper]:
    """For a cost expression L on ℝ^d: the closed-form laws of :func:`closed_form_uppers_nd` for each named
    cost h with L <= L_h + η proven almost everywhere (:func:`optmech.costs.dominance.dominating_named`).
    Each law has a density, so E L(X) <= E L_h(X) + η: its exact E L_h (widened) plus η, rounded up, is a
    certified upper end for V*(L), although the law was calibrated for h."""
    import dataclasses

    from optmech.costs.dominance import dominating_named
    from optmech.costs_nd import as_cost_nd

    tree = s.cost.tree
    if s.cost.kind != "expr" or tree is None:
        return []
    out = []
    for h, eta in dominating_named(tree, s.d).items():
        for up in closed_form_uppers_nd(dataclasses.replace(s, cost=as_cost_nd(h, s.d))):
            value = float(np.nextafter(up.value + eta, np.inf)) if eta > 0 else up.value
            out.append(ReferenceUpper(
                value, up.reference, up.parameters | {"dominating_cost": h}, up.mechanism,
                f"{up.note}; its exact expected {h} cost widened by {CLOSED_FORM_WIDENING:g} relative"
                + (f" plus {eta:.3g}" if eta > 0 else "") + f" bounds E cost(X): the cost is proven <= {h}"
                + (f" + {eta:.3g}" if eta > 0 else "") + " almost everywhere on R^d (where-branches decided on condition "
                "boxes, common terms cancelled exactly, interval arithmetic on each box: optmech.costs.dominance)"))
    return out


def linear_uppers(s: Setup) -> list[ReferenceUpper]:
    r"""For a cost expression that is exactly a linear combination L = c_0 + Σ_j c_j·u_j of the terms |x_i|, x_i²
    and ‖x‖₂, ‖x‖∞ (written out; :func:`optmech.costs.dominance.linear_terms`, each c_j enclosed by rationals,
    its upper end used since E u_j >= 0) — anisotropic
    costs such as |x1| + 2|x2|, mixtures such as ‖x‖₂ + 0.1‖x‖₁: the closed-form laws of
    :func:`closed_form_uppers_nd` priced *exactly* for L [derived].  Each law (i.i.d. Laplace, the ℓ2-Laplace,
    the staircase in an unweighted ℓp ball) is invariant under permutations and sign changes of the coordinates,
    so E|X_i| = E‖X‖₁/d and E X_i² = E‖X‖₂²/d for every i, and by linearity
    E L(X) = c_0 + Σ_j c_j E u_j(X), each E u_j a closed form.  The staircase is taken at the best γ of each
    order present (γ* depends on the cost's order only, :meth:`StaircaseND.optimal`).  The sum is formed in
    exact rationals from the laws' costs, widened by 2·``CLOSED_FORM_WIDENING`` times Σ_j |c_j E u_j|, and
    rounded up.  [] when L is not such a combination or a needed cost is a quadrature (``NUMERIC_COSTS``)."""
    import dataclasses
    from fractions import Fraction

    from optmech.costs.dominance import linear_terms, named_tree
    from optmech.costs.interval import fraction_up
    from optmech.costs_nd import as_cost_nd

    tree = s.cost.tree
    if s.cost.kind != "expr" or tree is None:
        return []
    named = {named_tree(k, s.d): k for k in ("l2", "linf")}
    parts: list[tuple[Fraction, str | None, int]] = []  # (c_j, the named cost whose mean gives E u_j, divisor)
    for _, c, u in linear_terms(tree):  # every E u_j >= 0: the coefficient's upper end bounds c_j E u_j above
        if u[0] == "const":
            parts.append((c, None, 1))
        elif u[0] in ("abs", "sq") and u[1][0] == "var":
            parts.append((c, "l1" if u[0] == "abs" else "l2sq", s.d))
        elif u in named:
            parts.append((c, named[u], 1))
        else:
            return []
    kinds = sorted({k for _, k, _ in parts if k is not None})
    if not kinds:
        return []
    laws: dict[tuple, ReferenceUpper] = {}
    for order_kind in sorted({"l2sq" if k == "l2sq" else "l1" for k in kinds}):
        for up in closed_form_uppers_nd(dataclasses.replace(s, cost=as_cost_nd(order_kind, s.d))):
            laws.setdefault((up.reference, tuple(sorted(up.parameters.items()))), up)
    out = []
    widen = Fraction(2 * CLOSED_FORM_WIDENING)
    label = {("l1", s.d): "|x_i|", ("l2sq", s.d): "x_i^2", (None, 1): "1"}
    written = " + ".join(f"{float(c):g}*E[{label.get((k, div), k)}]" for c, k, div in parts)
    for up in laws.values():
        mech = up.mechanism
        key = f"staircase:{s.norm}" if up.reference == "staircase" else up.reference
        try:
            means = {k: float(mech.expected_cost(k)) for k in kinds}
        except SpecError:
            continue
        if any((key, k) in NUMERIC_COSTS or not math.isfinite(v) for k, v in means.items()):
            continue
        total, size = Fraction(0), Fraction(0)
        for c, k, div in parts:
            term = c if k is None else c * Fraction(means[k]) / div
            total += term
            size += abs(term)
        value = fraction_up(total + widen * size)
        if value > 0:
            out.append(ReferenceUpper(
                value, up.reference, up.parameters | {"exact_for_expression": True}, mech,
                f"{up.note}; E cost(X) = {written} exactly (the cost is a linear combination of these terms; the law "
                "is invariant under coordinate permutations and sign changes, so E|X_i| = E||X||_1/d and E X_i^2 = "
                f"E||X||_2^2/d), widened by {2 * CLOSED_FORM_WIDENING:g} relative"))
    return out


def lattice_staircase_upper(s: Setup) -> ReferenceUpper:
    """The best ℓ1 lattice staircase (ε-DP for ℓ1 sensitivity Δ on ℤ^d: the level moves by at most one),
    its series cost widened by 1e-10 relative (the sums of up to ~10^4 positive terms)."""
    from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND, discrete_staircase_nd_costs

    vals = discrete_staircase_nd_costs("l1", s.eps, int(s.delta), s.d)
    r = int(np.argmin(vals)) + 1
    mech = DiscreteStaircaseND(epsilon=s.eps, sensitivity=int(s.delta), r=r, dim=s.d)
    return ReferenceUpper(float(np.nextafter(vals[r - 1] * (1 + 1e-10), np.inf)), "discrete_staircase", {"r": r}, mech,
                          f"the best l1 lattice staircase (r = {r}), its series cost widened by 1e-10 relative")


def references_nd(problem, s: Setup, lo: float, up: float) -> list[ReferenceValue]:
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
