r"""Guarded closed forms and certified relaxations for (ε, δ)-DP additive noise on ℤ and ℤ^d.

Every function returns a :class:`Bound`: the value, whether it is a lower or an upper bound on the
optimal expected cost V*, whether it is **valid** (every side condition it rests on holds), each
side condition by name, and its provenance.  A lower-bound formula whose side condition fails is
still evaluated (so that the failure can be seen) but is flagged ``valid=False`` and its note says
plainly that it is *not* a bound.  Source: [GV13] = Geng & Viswanath, (ε, δ) optimal noise for integer
queries (equation numbers are the paper's), the same as Ch. 4 of
the dissertation [Geng13] (its Thm 4.x = paper Thm x).

Functions
---------
:func:`theorem_lower_bound` (``thm_lower_bound``)
    ε = 0, Δ = 1: [GV13] Thm 1 (V* itself).  ε = 0, Δ >= 2: [GV13] Thm 2 (29), needs 1/(2δ) ∈ ℤ and (28).
    ε > 0: [GV13] Thm 8 (62) with the partial-atom generalisation for non-integer n, needs (61).
    d > 1, ε = 0: [GV13] Thm 16 (ℓ1, (76)) / Thm 17 (ℓ2², (77)), need 1/(2δ) ∈ ℤ.  d > 1, ε > 0:
    d × the 1-D Thm 8 value by the marginal argument [derived, not a theorem of the paper].
:func:`relaxed_lp_lower_bound` (``relaxed_lp``)
    The paper's relaxed LPs, truncated so that the finite LP is still a relaxation, solved and
    certified through their duals (:func:`optmech.certify.dual_lower_bound`): always a valid
    lower bound when it returns ``valid=True``.
:func:`uniform_upper_bound`, :func:`laplace_upper_bound`, :func:`staircase_upper_bound`
    Costs of (0, δ)-DP uniform noise, (ε, 0)-DP discrete Laplace noise and the (ε, 0) discrete
    staircase optimum: valid upper bounds (pure DP and (0, δ)-DP both imply (ε, δ)-DP).
:func:`approx_references`
    All of the above.

How ``valid`` is decided
------------------------
``Bound.valid`` is ``all(Bound.conditions.values())`` for every bound, and the ``conditions`` dict
holds exactly the side conditions the validity rests on.

* Cost condition ``cost_symmetric_nondecreasing``: L(k) = L(−k), L nondecreasing on k >= 0 and
  L(0) = 0 (the papers' standing assumption, [GV13] §II).  Named costs (``abs``, ``square``,
  ``pow:P``) satisfy it exactly; for expressions it is proven on all of ℤ
  (``Cost.is_symmetric_nondecreasing(integer=True)``), never sampled on a window.
* Integrality (``inv_2delta_integer``, n integer, Δ/(2δ) ∈ ℤ): x is taken as the integer N when
  ``|x − N| <= INTEGER_RTOL·max(1, N)`` (1e-9).  Decimal inputs such as δ = 0.01 are not binary
  fractions (1/(2·0.01) evaluates to 50 within 1 ulp); an exact rational test of the float would
  reject every such δ.  The values are computed so that this tolerance cannot produce an
  invalid bound: Thm 2, 16, 17 and 8 values are the *dual objective of the paper's explicit
  dual certificate evaluated at the given δ* (the certificates' feasibility does not involve δ,
  and at δ = 1/(2N) the objective equals the printed formula), and Thm 1 is the exact optimum
  of its relaxation p_k <= δ at the given δ (equal to (22) at δ = 1/(2N)).
* Thm 8 for non-integer n (partial atom) [derived].  With n' = ⌊n⌋, the primal puts a·b^i on
  1 + iΔ (i < n') and the leftover half-mass r = ½ − Σ_{i<n'} a b^i on 1 + n'Δ.  The dual
  certificate (181)–(185) built with n_c = ⌈n⌉ = n' + 1 atoms is complementary to that primal
  (the rows of the last, partial atom carry zero multipliers in (182) exactly as those of the
  last atom do for integer n), its constraints (173), (175), (176) hold for any nondecreasing L
  and (174) ⇔ (61) with n = n_c (derivation (186)–(190), which uses only the identity (177) that
  the certificate satisfies by construction).  Hence: **valid = cost condition ∧ (61) evaluated
  with n_c = ⌈n⌉** (n_c = n when n is an integer within the tolerance), and the value is the
  certificate's dual objective at the given δ, which equals the partial-atom primal value
  (``parameters["primal_value"]``; tests/test_approx_bounds.py checks both equalities and the
  certificate's feasibility on a long window).  ``parameters["n_integer"]`` records whether n
  was an integer; it is not a validity condition.  (61) fails for ℓ1 and ℓ2 costs whenever
  Δ <= 2, so those values are always flagged invalid.
* Thm 2 (ε = 0): valid = cost condition ∧ 1/(2δ) ∈ ℤ ∧ (28).  (28) ⇔ (137) for the certificate
  (142)–(146), i.e. ½μ <= y_0 (not merely y_0 >= 0).  For ℓ1, (28) ⇔ Δ >= 3 (32).  When
  1/(2δ) is not an integer no value is given (nan): use ``relaxed_lp``.
* Thm 1 (ε = 0, Δ = 1): valid = cost condition ∧ 1/(2δ) ∈ ℤ.  The Thm 2 formula, evaluated at
  Δ = 1 for comparison, is reported in ``parameters`` (it fails (28) and exceeds V*).
* Thm 16 / 17 (d > 1, ε = 0, costs ``l1`` / ``l2sq``): valid = 1/(2δ) ∈ ℤ.  Other d-D costs have
  no theorem: nan, ``valid=False``.
* d > 1, ε > 0: every marginal of d-D (ε, δ)-DP noise is 1-D (ε, δ)-DP for shifts |s| <= Δ
  (post-processing), and ``l1`` / ``l2sq`` are sums of per-coordinate costs, so V*_d >= d·V*_1;
  the value is d × the 1-D Thm 8 value with the 1-D conditions.
* Upper bounds: valid iff the value is finite (ε > 0 for Laplace and staircase).  The uniform
  mechanism of width n = ⌈Δ/δ⌉ (:class:`~optmech.mechanisms.uniform.Uniform`) is (0, Δ/n)-DP
  with Δ/n <= δ, hence (ε, δ)-DP for every ε >= 0.
* ``relaxed_lp``: valid iff the LP was solved and certified (and, for the symmetric variant, the
  cost is symmetric); see :func:`relaxed_lp_lower_bound`.

Tested by: tests/test_approx_bounds.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

from optmech.costs import Cost, as_cost
from optmech.errors import ProblemTooLarge, SpecError
from optmech.mechanisms import numerics as nx

__all__ = [
    "Bound",
    "theorem_lower_bound",
    "uniform_upper_bound",
    "laplace_upper_bound",
    "staircase_upper_bound",
    "thm8_n",
    "make_bound",
    "check_epsilon",
    "check_delta",
    "check_all",
    "resolve_cost",
    "cost_symmetric",
    "SEPARABLE",
    "RELAXED_VARIANTS",
    "MAX_WINDOW",
    "MAX_DOUBLINGS",
    "LP_IMPROVEMENT_RTOL",
    "INTEGER_RTOL",
    "MAX_DIM",
]

#: Relative tolerance of the integrality tests (1/(2δ), Δ/(2δ), n); see the module docstring.
INTEGER_RTOL = 1e-9
#: Largest dimension accepted (beyond 8 only the (epsilon, delta) radial path on R^d asks).
MAX_DIM = 128
#: Largest ε accepted (b = e^{−ε} must not underflow; e^ε must not overflow).
EPS_MAX = nx.EPS_MAX
#: Largest number of terms a closed form may sum (n·Δ or 1/(2δ) integers).
MAX_TERMS = 20_000_000
#: Largest half-window K of a relaxed LP (the LP has O(K) rows, columns and nonzeros).
MAX_WINDOW = 1_000_000
#: The relaxed-LP window is doubled until the certified value improves by at most this (relative).
LP_IMPROVEMENT_RTOL = 1e-12
#: Largest number of window doublings of a relaxed LP.
MAX_DOUBLINGS = 6

_ND_COSTS = ("l1", "l2", "l2sq", "linf")
#: d-D cost → the per-coordinate cost whose sum it is (separable costs only).
SEPARABLE = {"l1": "abs", "l2sq": "square"}
#: d-D cost names accepted at d = 1 (they all reduce to a 1-D cost there).
_ND_AT_1D = {"l1": "abs", "l2": "abs", "linf": "abs", "l2sq": "square"}
RELAXED_VARIANTS = ("symmetric", "all_k")


# ------------------------------------------------------------------------------------------------
# the result type
# ------------------------------------------------------------------------------------------------
def _json(v: Any) -> Any:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not math.isfinite(f):
            return "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")
        return f
    if isinstance(v, dict):
        return {str(k): _json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_json(x) for x in v]
    return v


@dataclass(frozen=True)
class Bound:
    """A value bracketing V* from one side, with its validity and provenance.

    Attributes
    ----------
    name : str
        ``thm_lower_bound``, ``relaxed_lp``, ``uniform``, ``discrete_laplace`` or ``discrete_staircase``.
    value : float
        The value; nan or inf where it is not defined (e.g. Laplace at ε = 0).
    kind : {"lower", "upper"}
    valid : bool
        True only when every side condition in ``conditions`` holds; a lower bound is a bound only then.
    conditions : dict[str, bool]
        Each side condition by name, e.g. ``{"inv_2delta_integer": True, "condition_28": False}``.
    parameters : dict
        Theorem used, intermediate quantities (n, atoms, window, solver, ...).
    exact : bool
        True for a closed form or an exact finite sum, False for a numeric value.
    note : str
        Provenance; for an invalid value it says that it is NOT a valid bound and why.
    """

    name: str
    value: float
    kind: str
    valid: bool
    conditions: dict[str, bool] = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    exact: bool = True
    note: str = ""

    def to_dict(self) -> dict:
        """JSON-safe dict (non-finite floats as ``"nan"``, ``"inf"``, ``"-inf"``; numpy scalars as Python)."""
        return {
            "name": self.name,
            "value": _json(float(self.value)),
            "kind": self.kind,
            "valid": bool(self.valid),
            "conditions": {str(k): bool(v) for k, v in self.conditions.items()},
            "parameters": _json(self.parameters),
            "exact": bool(self.exact),
            "note": self.note,
        }


def make_bound(name: str, value: float, kind: str, conditions: dict[str, bool], parameters: dict, exact: bool, note: str) -> Bound:
    conditions = {k: bool(v) for k, v in conditions.items()}
    valid = all(conditions.values()) and not math.isnan(value)
    if kind == "upper":
        valid = valid and math.isfinite(value)
    return Bound(name, float(value), kind, bool(valid), conditions, parameters, exact, note)


# ------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------
def check_epsilon(epsilon: Any) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real) or not math.isfinite(float(epsilon)):
        raise SpecError(f"epsilon must be a finite real number >= 0, got {epsilon!r}")
    eps = float(epsilon)
    if not 0.0 <= eps <= EPS_MAX:
        raise SpecError(f"epsilon must be in [0, {EPS_MAX:g}], got {epsilon!r}")
    return eps


def check_delta(delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, Real) or not math.isfinite(float(delta)):
        raise SpecError(f"delta must be a real number in (0, 1), got {delta!r}")
    d = float(delta)
    if d == 0.0:
        raise SpecError("delta = 0 is pure DP: use the pure-DP references (optmech.mechanisms.references_for)")
    if not 0.0 < d < 1.0:
        raise SpecError(f"delta must be in (0, 1), got {delta!r}")
    return d


def check_dim(dim: Any) -> int:
    return nx.check_int_range(dim, "dim", 1, MAX_DIM)


def check_all(epsilon: Any, delta: Any, sensitivity: Any, dim: Any) -> tuple[float, float, int, int]:
    if (not isinstance(epsilon, bool) and isinstance(epsilon, Real) and float(epsilon) == 0.0
            and not isinstance(delta, bool) and isinstance(delta, Real) and float(delta) == 0.0):
        raise SpecError("epsilon = delta = 0 allows no information through: no additive noise satisfies it")
    return (check_epsilon(epsilon), check_delta(delta), nx.check_sensitivity(sensitivity, integer=True), check_dim(dim))


def resolve_cost(cost: Any, dim: int) -> tuple[Cost | None, str | None]:
    """(1-D cost, None) for d = 1; (per-coordinate cost or None, d-D name) for d > 1."""
    if dim == 1:
        if isinstance(cost, str) and cost.strip().lower() in _ND_AT_1D:
            cost = _ND_AT_1D[cost.strip().lower()]
        return as_cost(cost), None
    if not isinstance(cost, str) or cost.strip().lower() not in _ND_COSTS:
        raise SpecError(f"d-dimensional costs are {', '.join(_ND_COSTS)}; got {cost!r}")
    name = cost.strip().lower()
    return (as_cost(SEPARABLE[name]) if name in SEPARABLE else None), name


# ------------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------------
def _L(cost: Cost, x: Any) -> np.ndarray:
    return nx.evaluate(cost, np.asarray(x, dtype=float))


def _L1(cost: Cost, x: float) -> float:
    return float(_L(cost, np.array([float(x)]))[0])


def _near_int(x: float) -> int | None:
    """The integer N >= 1 within INTEGER_RTOL·max(1, N) of x, else None."""
    if not math.isfinite(x):
        return None
    n = round(x)
    if n >= 1 and abs(x - n) <= INTEGER_RTOL * max(1.0, float(n)):
        return int(n)
    return None


def _cost_condition(cost: Cost, sensitivity: int) -> bool:
    """L symmetric and nondecreasing in |k| on all of ℤ (proven: ``Cost.is_symmetric_nondecreasing``)
    and L(0) = 0."""
    if not nx.is_symmetric_nondecreasing(cost, sensitivity, "integer"):
        return False
    return _L1(cost, 0.0) == 0.0


def cost_symmetric(cost: Cost) -> bool:
    """L(x) = L(−x) for every x, proven by construction (``Cost.is_even``)."""
    return cost.is_even()


def _expressible(terms: float, what: str) -> None:
    if terms > MAX_TERMS:
        raise ProblemTooLarge(f"{what} needs {terms:.3g} terms (limit {MAX_TERMS:.0e})")


def _sum(x: np.ndarray) -> float:
    return math.fsum(np.asarray(x, dtype=float).ravel())


# ------------------------------------------------------------------------------------------------
# closed forms: [GV13] Thm 1, 2, 8, 16, 17
# ------------------------------------------------------------------------------------------------
def thm8_n(epsilon: float, delta: float) -> float:
    r"""n with Σ_{k<n} a b^k = ½ [GV13, (58)–(60)]: n = (1/ε) ln(1 + (e^ε − 1)/(2δ)).

    Evaluated as 1 + log1p((1 − b)(1/(2δ) − 1))/ε (no overflow of e^ε, no cancellation for small
    ε); n = 1/(2δ) at ε = 0 (the limit, where a = δ and b = 1).
    """
    eps, dlt = float(epsilon), float(delta)
    if eps == 0.0:
        return 1.0 / (2.0 * dlt)
    u = -math.expm1(-eps)
    return 1.0 + math.log1p(u * (1.0 / (2.0 * dlt) - 1.0)) / eps


def _chain_sum(cost: Cost, sensitivity: int, top: int, b: float, eps: float) -> float:
    r"""Σ_{k=2}^{top} y_k for y_k = b(y_{k+Δ} + L(k+Δ) − L(k+Δ−1)) (k <= top), y_k = 0 (k > top).

    The recursions (144) (b = 1) and (183).  Along a residue class k_q = 2 + r + qΔ,
    y_q = Σ_{j>q} b^{j−q} D(k_j) with D(x) = L(x) − L(x−1), so Σ_q y_q = Σ_j D(k_j)·b(1 − b^j)/(1 − b)
    (= j when b = 1) [derived]: O(top) evaluations, no recursion.
    """
    D = sensitivity
    if top < 2:
        return 0.0
    r = np.arange(D)
    count = np.where(top - 2 - r >= 0, (top - 2 - r) // D + 1, 0)  # number of j for each residue
    jmax = int(count.max())
    if jmax == 0:
        return 0.0
    _expressible(float(jmax) * D, "the dual certificate")
    j = np.arange(1, jmax + 1)
    k = 2 + r[:, None] + j[None, :] * D
    diff = _L(cost, k) - _L(cost, k - 1)
    if b == 1.0:
        w = j.astype(float)
    else:
        w = b * -np.expm1(-eps * j) / -math.expm1(-eps)
    mask = j[None, :] <= count[:, None]
    return _sum(np.where(mask, diff * w[None, :], 0.0))


def _thm8_core(cost: Cost, eps: float, delta: float, sensitivity: int) -> dict:
    """Thm 8 (62) with the partial-atom generalisation and the App. D certificate (see module doc)."""
    D = sensitivity
    b, u = nx.b_and_u(eps)
    a = delta * b + u / 2.0  # (58): (δ + (e^ε − 1)/2) e^{−ε}
    n = thm8_n(eps, delta)
    n_int = _near_int(n)
    if n_int is not None:
        n_full, n_c, r = n_int, n_int, 0.0
    else:
        n_full = int(math.floor(n))
        n_c = n_full + 1
        r = 0.5 - a * -math.expm1(-eps * n_full) / u
        r = min(max(r, 0.0), a * math.exp(-eps * n_full))
    _expressible(float(n_c) * D, "Thm 8")
    # partial-atom primal (170): a b^i on 1 + iΔ (i < n_full), r on 1 + n_full Δ (half line)
    i = np.arange(n_full)
    primal = 2.0 * _sum(a * np.exp(-eps * i) * _L(cost, 1 + i * D)) + 2.0 * r * _L1(cost, 1 + n_full * D)
    # dual certificate (181)–(185) with n_c atoms, objective (172) at the given δ
    i = np.arange(1, n_c)
    bi = np.exp(-eps * i)
    L_iD, L_1iD, L_1im1D = _L(cost, i * D), _L(cost, 1 + i * D), _L(cost, 1 + (i - 1) * D)
    mu = _L1(cost, 1 + (n_c - 1) * D)
    y0 = _sum(bi * (L_iD - L_1im1D))
    y1 = _sum(bi * (L_1iD - L_iD))
    chain = _chain_sum(cost, D, 1 + (n_c - 2) * D, b, eps)
    total = math.fsum([y0, y1, chain])
    value = mu - (2.0 * delta + math.expm1(eps)) * total
    lhs61 = _sum(bi * (2.0 * L_iD - L_1im1D - L_1iD))
    rhs61 = _L1(cost, 1.0)
    return {
        "n": n, "n_integer": n_int is not None, "atoms": n_c, "full_atoms": n_full, "partial_atom_mass": r,
        "a": a, "b": b, "primal_value": primal, "value": value, "mu": mu, "y0": y0, "y1": y1,
        "y_sum": total, "condition_61_lhs": lhs61, "condition_61_rhs": rhs61, "condition_61": lhs61 >= rhs61,
    }


def _thm2_core(cost: Cost, delta: float, sensitivity: int, N: int) -> dict:
    """Thm 2 (29) via the App. A certificate (142)–(146) with N = 1/(2δ), objective (136) at δ."""
    D = sensitivity
    _expressible(float(N) * D, "Thm 2")
    i = np.arange(1, N + 1)
    mu = _L1(cost, 1 + N * D)  # (142)
    L1 = _L1(cost, 1.0)
    y1 = _sum(_L(cost, 1 + i * D) - _L(cost, i * D))  # (145)
    y0 = mu - L1 - y1  # (146)
    chain = _chain_sum(cost, D, (N - 1) * D + 1, 1.0, 0.0)  # (143)–(144)
    total = math.fsum([y0, y1, chain])
    value = mu - 2.0 * delta * total
    k = np.arange(N)
    formula = 2.0 * delta * _sum(_L(cost, 1 + k * D))  # (29), exact at δ = 1/(2N)
    rhs28 = 2.0 * (L1 + y1)
    return {"N": N, "value": value, "formula_29": formula, "mu": mu, "y0": y0, "y1": y1, "y_sum": total,
            "condition_28_lhs": mu, "condition_28_rhs": rhs28, "condition_28": mu >= rhs28}


def _thm_lower_1d(cost: Cost, eps: float, delta: float, D: int) -> Bound:
    name = "thm_lower_bound"
    if eps > 0.0:
        n = thm8_n(eps, delta)
        ok_cost = _cost_condition(cost, D)
        try:
            t = _thm8_core(cost, eps, delta, D)
        except ProblemTooLarge as exc:
            return make_bound(name, math.nan, "lower", {"cost_symmetric_nondecreasing": ok_cost, "condition_61": False},
                          {"theorem": "[GV13] Thm 8 ([Geng13] Thm 4.8)", "n": n}, True, f"NOT evaluated: {exc}")
        conds = {"cost_symmetric_nondecreasing": ok_cost, "condition_61": t.pop("condition_61")}
        params = {"theorem": "[GV13] Thm 8 ([Geng13] Thm 4.8)", **t}
        params.pop("value")
        how = ("n is an integer: (62) exactly" if t["n_integer"] else
               f"n = {t['n']:.6g} is not an integer: partial-atom generalisation [derived], "
               f"{t['full_atoms']} atoms a·b^i on 1 + iΔ and the leftover half-mass {t['partial_atom_mass']:.6g} "
               f"on 1 + {t['full_atoms']}Δ; certificate (181)–(185) with n_c = ⌈n⌉ = {t['atoms']} atoms")
        if all(conds.values()):
            note = (f"valid lower bound on V* [GV13, Thm 8, (62); Geng13, Thm 4.8]: {how}; the value is the "
                    "objective (172) of the dual certificate (181)–(185) at the given δ, feasible because (61) holds")
        else:
            why = []
            if not conds["condition_61"]:
                why.append(f"(61) fails with n = {t['atoms']} ({t['condition_61_lhs']:.6g} < L(1) = {t['condition_61_rhs']:.6g}), "
                           "so the certificate violates (174)")
            if not ok_cost:
                why.append("the cost is not symmetric, nondecreasing on k >= 0 with L(0) = 0")
            note = f"NOT a valid lower bound: {'; '.join(why)} [GV13, Thm 8]; {how}"
        return make_bound(name, t["value"], "lower", conds, params, True, note)

    # ε = 0
    m = 1.0 / (2.0 * delta)
    N = _near_int(m)
    ok_cost = _cost_condition(cost, D)
    if D == 1:
        conds = {"inv_2delta_integer": N is not None, "cost_symmetric_nondecreasing": ok_cost}
        params: dict[str, Any] = {"theorem": "[GV13] Thm 1 ([Geng13] Thm 4.1)", "inv_2delta": m, "N": N, "exact_optimum": True}
        if N is None:
            return make_bound(name, math.nan, "lower", conds, params, True,
                          f"NOT evaluated: [GV13] Thm 1 assumes 1/(2δ) ∈ ℤ, here 1/(2δ) = {m:.10g}; use relaxed_lp")
        _expressible(2.0 * N, "Thm 1")
        k = np.arange(-N, N)
        # exact optimum of the relaxation p_k <= δ (k ∈ ℤ) at the given δ; = (22) at δ = 1/(2N)
        value = delta * _sum(_L(cost, k)) + (1.0 - 2.0 * N * delta) * _L1(cost, float(N))
        params["formula_22"] = delta * _sum(_L(cost, k))
        try:
            t2 = _thm2_core(cost, delta, D, N)
            params["thm2"] = {"value": t2["value"], "condition_28": t2["condition_28"], "valid": False,
                              "note": "[GV13] Thm 2 at Δ = 1 fails (28) and exceeds V*: not a bound"}
        except ProblemTooLarge:
            pass
        if all(conds.values()):
            note = ("V* itself [GV13, Thm 1, (22); Geng13, Thm 4.1]: uniform mass δ on [−1/(2δ), 1/(2δ) − 1] is optimal; "
                    "a lower bound (and attained)")
        else:
            note = "NOT a valid lower bound: the cost is not symmetric, nondecreasing on k >= 0 with L(0) = 0 [GV13, Thm 1]"
        return make_bound(name, value, "lower", conds, params, True, note)

    conds = {"inv_2delta_integer": N is not None, "condition_28": False, "cost_symmetric_nondecreasing": ok_cost}
    params = {"theorem": "[GV13] Thm 2 ([Geng13] Thm 4.2)", "inv_2delta": m, "N": N}
    if N is None:
        return make_bound(name, math.nan, "lower", conds, params, True,
                      f"NOT evaluated: [GV13] Thm 2 assumes 1/(2δ) ∈ ℤ, here 1/(2δ) = {m:.10g}; use relaxed_lp")
    try:
        t = _thm2_core(cost, delta, D, N)
    except ProblemTooLarge as exc:
        return make_bound(name, math.nan, "lower", conds, params, True, f"NOT evaluated: {exc}")
    conds["condition_28"] = t.pop("condition_28")
    params.update({k: v for k, v in t.items() if k != "value"})
    if all(conds.values()):
        note = ("valid lower bound on V* [GV13, Thm 2, (29); Geng13, Thm 4.2]: the objective (136) of the dual "
                "certificate (142)–(146) at the given δ (= (29) at δ = 1/(2N)), feasible because (28) holds")
    else:
        why = []
        if not conds["condition_28"]:
            why.append(f"(28) fails ({t['condition_28_lhs']:.6g} < {t['condition_28_rhs']:.6g}), so the certificate "
                       "violates (137): ½μ > y_0")
        if not ok_cost:
            why.append("the cost is not symmetric, nondecreasing on k >= 0 with L(0) = 0")
        note = f"NOT a valid lower bound: {'; '.join(why)} [GV13, Thm 2]"
    return make_bound(name, t["value"], "lower", conds, params, True, note)


def _thm_nd_eps0(name_nd: str, delta: float, D: int, d: int) -> Bound:
    """[GV13] Thm 16 (ℓ1) / Thm 17 (ℓ2²): dual candidates (242)–(243) / (252)–(253) at the given δ."""
    name = "thm_lower_bound"
    m = 1.0 / (2.0 * delta)
    N = _near_int(m)
    thm = "[GV13] Thm 16 ([Geng13] Thm 4.16)" if name_nd == "l1" else "[GV13] Thm 17 ([Geng13] Thm 4.17)"
    conds = {"inv_2delta_integer": N is not None}
    params: dict[str, Any] = {"theorem": thm, "inv_2delta": m, "N": N, "dim": d}
    if N is None:
        return make_bound(name, math.nan, "lower", conds, params, True,
                      f"NOT evaluated: {thm.split(' (')[0]} assumes 1/(2δ) ∈ ℤ, here 1/(2δ) = {m:.10g}; use relaxed_lp")
    _expressible(2.0 * N, thm)
    k = np.arange(1, N + 1, dtype=float)
    if name_nd == "l1":
        mu1 = D * float(N)  # μ/d = Δ/(2δ) (242)
        y = np.concatenate([[mu1], np.maximum(mu1 - k * D, 0.0), np.maximum(mu1 - (k - 1) * D - 1.0, 0.0)])  # (243)
        formula = d * D / (4.0 * delta) - (D - 1) / 2.0 * d  # (76)
    else:
        mu1 = (D * float(N)) ** 2  # μ/d = Δ²/(4δ²) (252)
        y = np.concatenate([[mu1], mu1 - (k * D) ** 2, mu1 - ((k - 1) * D + 1.0) ** 2])  # (253)
        formula = d * D**2 / (12.0 * delta**2) + (1.0 / D - 1.0) * d * D**2 / (4.0 * delta) + (1 - D) / 2.0 * d + d * D**2 / 6.0  # (77)
    value = d * (mu1 - delta * _sum(y))
    params.update({"mu": d * mu1, "formula": formula})
    note = (f"valid lower bound on V* ({thm}): dual objective of the paper's candidate at the given δ "
            "(= the printed formula at δ = 1/(2N)), feasible for the dual of (75) with k ∈ ℤ "
            "(k ∈ ℕ as printed: see the erratum on (73)–(75) [GV13])")
    return make_bound(name, value, "lower", conds, params, True, note)


def theorem_lower_bound(cost: Any, epsilon: float, delta: float, sensitivity: int, dim: int = 1) -> Bound:
    r"""The paper's closed-form lower bound on V* for (ε, δ)-DP integer noise, with its side conditions.

    Parameters
    ----------
    cost : Cost or str
        1-D: a cost (``abs``, ``square``, ``pow:P``, an expression; ``l1``/``l2``/``linf`` mean
        ``abs`` and ``l2sq`` means ``square``).  d > 1: ``l1``, ``l2``, ``l2sq`` or ``linf``.
    epsilon : float in [0, 700]
    delta : float in (0, 1)
    sensitivity : int >= 1 (ℓ1 sensitivity when dim > 1)
    dim : int in [1, 8]

    Returns
    -------
    Bound
        ``name="thm_lower_bound"``, ``kind="lower"``.  Which theorem is used, and how ``valid``
        is decided, is listed in the module docstring; ``parameters["theorem"]`` names it.

    Notes
    -----
    * ε = 0, Δ = 1: [GV13] Thm 1, :math:`V^* = \sum_{k=-1/(2δ)}^{1/(2δ)-1} δL(k)` (22).
    * ε = 0, Δ >= 2: [GV13] Thm 2, :math:`V_{LB} = 2δ\sum_{i=0}^{1/(2δ)-1} L(1+iΔ)` (29), needs (28).
    * ε > 0: [GV13] Thm 8, :math:`V_{LB} = 2\sum_{k=0}^{n-1} a b^k L(1+kΔ)` (62),
      a = (δ + (e^ε − 1)/2)e^{−ε}, b = e^{−ε}, needs (61); partial atom for non-integer n.
    * d > 1: Thm 16 / 17 at ε = 0; d × Thm 8 (marginal argument, derived) at ε > 0.

    Raises
    ------
    SpecError
        Bad ε, δ, Δ, dim or cost.
    """
    eps, dlt, D, d = check_all(epsilon, delta, sensitivity, dim)
    marg, name_nd = resolve_cost(cost, d)
    if d == 1:
        return _thm_lower_1d(marg, eps, dlt, D)
    if name_nd not in SEPARABLE:
        return make_bound("thm_lower_bound", math.nan, "lower", {"cost_has_theorem": False}, {"dim": d, "cost": name_nd},
                      True, f"no theorem: [GV13] §V gives lower bounds for the separable costs l1 and l2sq only, not {name_nd}")
    if eps == 0.0:
        return _thm_nd_eps0(name_nd, dlt, D, d)
    one = _thm_lower_1d(marg, eps, dlt, D)
    value = d * one.value
    params = {"theorem": "d × [GV13] Thm 8 by the marginal argument [derived]", "dim": d,
              "one_dimensional": one.parameters, "one_dimensional_value": one.value}
    if one.valid:
        note = ("valid lower bound on V* [derived, not a theorem of the paper]: each marginal of d-D (ε,δ)-DP noise is 1-D "
                f"(ε,δ)-DP for |s| <= Δ and {name_nd} is a sum over coordinates, so V*_d >= d·V*_1 >= d × ([GV13] Thm 8): "
                + one.note)
    else:
        note = "NOT a valid lower bound: d × the 1-D [GV13] Thm 8 value, which is invalid here: " + one.note
    return make_bound("thm_lower_bound", value, "lower", one.conditions, params, True, note)


# ------------------------------------------------------------------------------------------------
# upper bounds
# ------------------------------------------------------------------------------------------------
def uniform_upper_bound(cost: Any, delta: float, sensitivity: int, dim: int = 1) -> Bound:
    r"""Exact cost of uniform noise of width n = ⌈Δ/δ⌉ per coordinate: a valid upper bound on V*.

    The mechanism is :class:`~optmech.mechanisms.uniform.Uniform` [GV13, (30), (78); Geng13, (4.13),
    (4.28)], (0, Δ/n)-DP with Δ/n <= δ, hence (ε, δ)-DP for every ε >= 0 [GV13, Thm 3, Thm 9,
    Thm 18].  Its cost is an exact finite sum.  When Δ/(2δ) is an integer M (within
    INTEGER_RTOL) the paper's closed form is also reported in ``parameters`` and compared:
    1-D (31) = 2Σ_{i=1}^{M−1} L(i)/(2M) + L(M)/(2M) (symmetric L with L(0) = 0); d > 1:
    Cor 19 dΔ/(4δ) (``l1``), Cor 20 dΔ²/(12δ²) + d/6 (``l2sq``), both at δ = Δ/(2M).  They
    describe width 2M, which is the width used unless the float δ lies just below Δ/(2M).
    """
    dlt, D, d = check_delta(delta), nx.check_sensitivity(sensitivity, integer=True), check_dim(dim)
    marg, name_nd = resolve_cost(cost, d)
    from optmech.mechanisms.uniform import Uniform

    try:
        mech = Uniform(delta=dlt, sensitivity=D, dim=d)
        value = mech.expected_cost(marg if d == 1 else name_nd)
    except SpecError as exc:
        return make_bound("uniform", math.nan, "upper", {}, {"dim": d}, True, f"not computed: {exc}")
    n = mech.n
    params: dict[str, Any] = {"width": n, "realised_delta": D / n, "dim": d,
                              "theorem": "[GV13] Thm 3/9 ([Geng13] Thm 4.3/4.9)" if d == 1 else "[GV13] Thm 18 ([Geng13] Thm 4.18)"}
    M = _near_int(D / (2.0 * dlt))
    params["half_width_integer"] = M is not None
    closed = None
    if M is not None:
        if d == 1:
            if _cost_condition(marg, D):
                i = np.arange(1, M)
                closed = 2.0 * _sum(_L(marg, i)) / (2.0 * M) + _L1(marg, float(M)) / (2.0 * M)  # (31), δ/Δ = 1/(2M)
                params["closed_form_source"] = "[GV13] (31) ([Geng13] (4.14))"
        elif name_nd == "l1":
            closed = d * M / 2.0  # Cor 19 (80): dΔ/(4δ) at δ = Δ/(2M)
            params["closed_form_source"] = "[GV13] Cor 19 (80) ([Geng13] Cor 4.19)"
        elif name_nd == "l2sq":
            closed = d * M * M / 3.0 + d / 6.0  # Cor 20 (87): dΔ²/(12δ²) + d/6 at δ = Δ/(2M)
            params["closed_form_source"] = "[GV13] Cor 20 (87) ([Geng13] Cor 4.20)"
    params["closed_form"] = closed
    if closed is not None:
        params["closed_form_agrees"] = bool(n == 2 * M and abs(closed - value) <= 1e-12 * max(1.0, abs(value)))
    note = (f"upper bound: exact cost of uniform noise on {n} consecutive integers per coordinate, "
            f"(0, {D}/{n})-DP hence (ε, δ)-DP for every ε [GV13, (30)/(78), Thm 3/9/18]")
    return make_bound("uniform", value, "upper", {}, params, True, note)


def laplace_upper_bound(cost: Any, epsilon: float, sensitivity: int, dim: int = 1) -> Bound:
    r"""Cost of discrete Laplace noise, λ = e^{−ε/Δ} [GV13, Thm 10, Cor 11 (66); Geng13, Cor 4.11; d-D (120)–(128)].

    (ε, 0)-DP, hence (ε, δ)-DP: a valid upper bound for ε > 0.  Not defined at ε = 0 (value inf,
    ``valid=False``).  d > 1: product law; ``l1`` = 2dλ/(1−λ²), ``l2sq`` = 2dλ/(1−λ)² exact,
    ``l2``/``linf`` numeric (:func:`~optmech.mechanisms.laplace_nd.discrete_laplace_nd_cost`).
    """
    eps, D, d = check_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=True), check_dim(dim)
    marg, name_nd = resolve_cost(cost, d)
    conds = {"epsilon_positive": eps > 0.0}
    if eps == 0.0:
        return make_bound("discrete_laplace", math.inf, "upper", conds, {"dim": d}, True,
                      "not defined at ε = 0 (λ = 1 is not a distribution): NOT a bound")
    lam = math.exp(-eps / D)
    params: dict[str, Any] = {"lambda": lam, "dim": d}
    if d == 1:
        from optmech.mechanisms.laplace import discrete_laplace_reference

        ref = discrete_laplace_reference(marg, eps, D)
        return make_bound("discrete_laplace", ref.value, "upper", conds, params, ref.exact, ref.note)
    from optmech.mechanisms.laplace_nd import discrete_laplace_nd_cost

    value = discrete_laplace_nd_cost(name_nd, eps, D, d)
    exact = name_nd in SEPARABLE
    return make_bound("discrete_laplace", value, "upper", conds, params, exact,
                  "upper bound: product discrete Laplace, ε-DP for ℓ1 sensitivity Δ [GV13, (120)–(128)]"
                  + ("" if exact else "; numeric"))


def staircase_upper_bound(cost: Any, epsilon: float, sensitivity: int, dim: int = 1) -> Bound:
    r"""Cost of the (ε, 0)-optimal discrete staircase min_r Σ L P_r [Geng13, (2.17), Thm 2.13]: an upper bound.

    Each P_r is ε-DP, hence (ε, δ)-DP, so min_r P_r is a valid upper bound for ε > 0 and any cost.
    d > 1: Δ = 1 is the product of geometric laws (= discrete Laplace with λ = e^{−ε}); Δ > 1 the best
    ℓ1 discrete staircase on ℤ^d (:mod:`optmech.mechanisms.discrete_staircase_nd`), priced for
    ``l1`` and ``l2sq`` (other costs: nan, ``valid=False``).
    """
    eps, D, d = check_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=True), check_dim(dim)
    marg, name_nd = resolve_cost(cost, d)
    conds = {"epsilon_positive": eps > 0.0}
    if eps == 0.0:
        return make_bound("discrete_staircase", math.inf, "upper", conds, {"dim": d}, True,
                      "not defined at ε = 0: NOT a bound")
    if d == 1:
        from optmech.mechanisms.discrete_staircase import discrete_staircase_reference, optimal_r

        ref = discrete_staircase_reference(marg, eps, D)
        if ref is not None:
            return make_bound("discrete_staircase", ref.value, "upper", conds, dict(ref.parameters), ref.exact,
                          "upper bound (ε,0)-DP, hence (ε,δ)-DP; " + ref.note)
        r, v = optimal_r(marg, eps, D)
        return make_bound("discrete_staircase", v, "upper", conds, {"r": r}, False,
                      "upper bound: min_r of the discrete staircase P_r costs, each (ε,0)-DP [Geng13, (2.17)]; numeric")
    if D == 1:
        from optmech.mechanisms.laplace_nd import discrete_laplace_nd_cost

        value = discrete_laplace_nd_cost(name_nd, eps, 1, d)
        exact = name_nd in SEPARABLE
        return make_bound("discrete_staircase", value, "upper", conds, {"dim": d, "lambda": math.exp(-eps)}, exact,
                      "upper bound: product of geometric laws (the Δ = 1 staircase, [Geng13] Thm 2.12), ε-DP for the shifts ±e_m")
    conds["sphere_sum_cost"] = name_nd in ("l1", "l2sq")
    if name_nd not in ("l1", "l2sq"):
        return make_bound("discrete_staircase", math.nan, "upper", conds, {"dim": d}, True,
                      f"the d-D discrete staircase is priced for l1 and l2sq only, not {name_nd}: NOT a bound")
    from optmech.mechanisms.discrete_staircase_nd import discrete_staircase_nd_costs

    values = discrete_staircase_nd_costs(name_nd, eps, D, d)
    r = int(np.argmin(values)) + 1
    return make_bound("discrete_staircase", float(values[r - 1]), "upper", conds, {"dim": d, "r": r}, False,
                  "upper bound: the best ℓ1 discrete staircase on ℤ^d, (ε,0)-DP for ℓ1 "
                  "sensitivity Δ; series over lattice spheres (tail < 1e-17)")
