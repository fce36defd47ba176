"""The (ε, δ)-DP family on ℤ^d: hockey-stick LP → solver → certificates (loop: :mod:`optmech.drive`).

Lower bound: the repaired dual of the relaxation LP of :mod:`optmech.problems.approx` (weak
duality with an a-priori rounding term, :func:`optmech.certify.dual_lower_bound`).

Upper bound: the LP's primal on the box, negatives clipped, as a finitely supported pmf; its
δ(ε) is audited for *every* shift 0 < ‖v‖₁ <= Δ with outward rounding
(:func:`optmech.audit.hockey_stick_array`), and its cost is summed with outward rounding.  If the
audit finds δ(ε) above δ (solver tolerances), the pmf is mixed with a cheap law that is
(ε, δ_u)-DP with δ_u <= δ/2: the discrete Laplace λ = e^{−ε/Δ} (per coordinate) truncated where
its hockey-stick sum falls below δ/2 when ε > 0, the uniform law of width ⌈2Δ/δ⌉ when ε = 0.
Each hockey-stick sum is convex in the pair of laws, so the mixture weight
λ = (δ_p − δ)/(δ_p − δ_u) restores δ; the mixture is audited again.

The loop doubles the inner half-width N (starting from 2Δ(n + 2), n = ln(1 + (e^ε − 1)/(2δ))/ε)
while the relaxation still uses its outer layer or far mass and the
gap is above the target.

In 1-D a size is ``(N, shifts)`` and two things make the LP several times smaller [derived]:

* **Edge rows** (``build_approx(..., edge_rows=True)``): the outer layer keeps the rows whose partner
  is in the box, and each shift v has one more row Σ_{x ∈ E_v} p(x) − (e^ε − 1)·far_side <= T_v
  over the |v| box points E_v whose partner lies outside, with T_v in v's budget.  It is one of the
  exact law's hockey-stick terms: S = E_v ∪ (everything beyond the box) has
  P(S) − e^ε P(S + v) >= P(E_v) + far_side − e^ε far_side, since S + v lies beyond the box.  Without
  these rows the relaxation moves mass into the layer (free of rows) unless N is about twice the
  optimum's support; with them it is exact from N ≈ Δ(n + 1) in our tests, so the loop starts at
  N = ⌈Δ(n + 1)⌉ + Δ.
* **Shift row generation**: dropping every row of a shift enlarges the feasible set, so the LP that
  keeps some shifts is a relaxation and its repaired dual a certified lower bound.  The first LP
  keeps the largest ⌈Δ·START_SHIFT_SHARE⌉ shifts (the budget duals of the others were zero in every
  case we solved: the optimum's blocks have period Δ); a step whose audited primal exceeds δ at a
  dropped shift is followed by the same LP with those shifts added.  The upper bound audits every
  shift, kept or not.
* **Coarse-to-fine levels** (Δ >= COARSE_FROM with a divisor k > 1, Δ/k >= COARSE_START) [derived]:
  the randomised rounding of the integer noise X to the multiples of k (to ik or (i+1)k with the
  weights of linear interpolation) commutes with shifts by multiples of k, so it is (ε, δ)-DP on kℤ
  for the shifts |m| <= Δ/k; with the node prices of :class:`~optmech.problems.approx_cells.NodeCosts`
  (the cost at the node less the chord error of its segments; exact for |x|) the LP of sensitivity
  Δ/k on the nodes is a relaxation of V* and its repaired dual a certified lower bound.  The upper
  bound spreads each node's mass evenly over the k integers ik − ⌊k/2⌋ .. ik − ⌊k/2⌋ + k − 1: at a
  shift v = ak + b (0 <= b < k) the hockey-stick sum of that pmf is the mix ((k − b)/k, b/k) of the
  node pmf's sums at a and a + 1, so it is private when the node pmf is (k | Δ); it is audited at
  every shift 1..Δ anyway and priced at the integers.  Each step halves k (a divisor of Δ) down to
  k = 1, the exact LP, within the time limit.  For |x| the coarse lower bound is k·V*(Δ/k) and the
  bracket's width the centre block's ≈ (k/4)·p_0: Δ = 256 at k = 16 gives 9e-6.
* **Budget slack**: 1-D LPs are solved with the budget δ − 1e-14 (the duals certified against δ,
  losing 1e-14·Σ|y_budget|), room for the audit's outward rounding of about 2e-15, so the primal
  passes without the mixing repair.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from optmech.audit import hockey_stick_array
from optmech.budget import FINAL_SECONDS, LPPlan, gib, memory_budget
from optmech.certify import (CLOSED_FORM_WIDENING, FAR_DECADES, FAR_MAX_CELLS, LatticeMechanism, dual_lower_bound,
                             is_infimum_at_infinity, reference_inside)
from optmech.certify_decay import decay_lower_bound, onesided_lower_bound
from optmech.families.approx_decay import (DECAY_FROM, FIRST_SHARE, TAIL_MASS, DecaySize, coarse_allowed,
                                           decay_lp_plan, decay_plan_rows, far_node_price, finer_level, first_level,
                                           prepared_decay_lp, tail_share,
                                           kept_shifts, layout_for, onesided_layout_parts)
from optmech.families.base import Built, Step, Stop
from optmech.mechanisms.approx.bounds import thm8_n
from optmech.problems.approx import approx_mode, build_approx, estimate_size, outside_min, point_costs, shift_vectors
from optmech.problems.approx_decay import DecayLP, OneSidedLayout, build_decay, build_decay_onesided
from optmech.problems.approx_cells import NodeCosts
from optmech.problems.approx_periodic import build_aggregated, zone_periods
from optmech.problems.lattice import Grid1D
from optmech.repair import repair_delta
from optmech.result import ReferenceValue

_U = 2.0**-53
#: 1-D: the share of the shifts (the largest ones) that the first LP keeps (module docstring).
START_SHIFT_SHARE = 0.4
#: 1-D: all shifts are kept up to this sensitivity (row generation only pays on large LPs).
ALL_SHIFTS_UP_TO = 8
#: 1-D: the window's growth factor while the relaxation uses its outer layer or far mass (edge rows
#: make the first window nearly right; an asymmetric cost's support reaches about 10 % further).
WIDEN_1D = 1.5
#: 1-D, no ±x reduction: the first window is this much wider (an asymmetric cost's optimum reached
#: 1.12·Δ(n + 1) on its cheap side in our tests).
ASYMMETRIC_REACH = 1.25
#: 1-D: from this sensitivity on, the loop starts on a coarse lattice (module docstring) when Δ has a divisor
#: k > 1 with Δ/k >= COARSE_START, and refines k down to 1 (the exact LP).
COARSE_FROM = 32
#: 1-D: the coarse lattice's sensitivity Δ/k at the first step (at least this much).
COARSE_START = 16
#: 1-D, even cost: from this sensitivity on, the exact level (k = 1) solves the aggregated relaxation of
#: :mod:`optmech.problems.approx_periodic` (one row per shift and residue class of the middle zone),
#: falling back to the per-point LP when its primal needs a substantial mixing repair.
AGGREGATE_FROM = 16
#: its zone starts AGGREGATE_BAND periods from 0 and ends AGGREGATE_OUTER_BAND periods before the support's
#: estimated end (an outer band of 1 period left the relaxation 1e-5 short in our measurements; 2 was exact).
AGGREGATE_BAND, AGGREGATE_OUTER_BAND = 1, 2
#: a mixing weight above this means the aggregated relaxation's primal is not private (its classes did not
#: match the optimum's), not that the solver's tolerances left a hair of excess (weights ~1e-6 at δ = 1e-8):
#: the loop then solves the per-point LP of the same window instead
AGGREGATE_REPAIR = 1e-3
#: 1-D: the LP is solved with the budget δ − DELTA_SLACK·δ/0.01 (its duals certified against δ): room for the
#: audit's outward rounding, so that the primal passes without the mixing repair.
DELTA_SLACK = 1e-14
#: 1-D coarse levels: a spread pmf whose full audit would sum more than this many terms ((2R + 1)·2Δ) is
#: audited through its node law instead (``ApproxFamily._spread_upper``; about 10 s of audit at this size).
SPREAD_AUDIT_TERMS = 1e9
#: 1-D: at most this many re-solves with a budget slack after a step whose primal needed the mixing repair.
MAX_SLACK_TRIES = 2
#: a decay step whose certified lower end is further than this (relative) below its law's cost did not find an
#: extendable dual (optmech.certify_decay): the loop goes on with the per-point path
DECAY_FAILED_GAP = 1e-3
#: A dropped shift is added when the primal's audited δ exceeds δ by this relative margin.
SHIFT_VIOLATION = 1e-9


# -- upper bound ----------------------------------------------------------------------------------
def _price(cost, p: np.ndarray, R: int) -> float:
    """Outward-rounded E L for masses p on [−R, R]^d (normalised by their sum)."""
    d = p.ndim
    side = 2 * R + 1
    coords = np.stack(np.unravel_index(np.arange(p.size), (side,) * d), axis=-1) - R
    nz = p.ravel() > 0
    _, hi = point_costs(cost, coords[nz])
    return outward_mean(hi, p.ravel()[nz], math.fsum(p.ravel()))


def outward_mean(prices: np.ndarray, masses: np.ndarray, total: float) -> float:
    """An upper bound of Σ prices·masses / total (nonnegative masses, upper-bound prices), rounded
    outward; inf when it is not finite or the total is not positive."""
    num = math.fsum(np.asarray(prices, dtype=float) * np.asarray(masses, dtype=float))
    if not (math.isfinite(num) and total > 0):
        return math.inf
    return float(np.nextafter(num * (1 + 4 * _U) / (total * (1 - 4 * _U)), np.inf))


def _far_shift(cost, up: "_Upper", D: int) -> tuple[float, int] | None:
    """The cheapest shift of the audited 1-D pmf by ±10^j·Δ (a shift of (ε,δ)-DP noise is (ε,δ)-DP)
    and its outward-rounded cost; None when no shift is cheaper than the pmf itself."""
    p = up.p.ravel()
    nz = np.flatnonzero(p > 0)
    k = (nz - up.R).astype(float)
    den = math.fsum(p)
    best = None
    for sign in (1, -1):
        prev = math.inf
        for j in FAR_DECADES:
            c = sign * 10**j * D
            if abs(c) > FAR_MAX_CELLS:
                break
            _, hi = cost.enclose(k + c, k + c)
            num = math.fsum(hi * p[nz])
            v = float(np.nextafter(num * (1 + 4 * _U) / (den * (1 - 4 * _U)), np.inf)) if math.isfinite(num) else math.inf
            if v > 2.0 * prev:
                break
            prev = v
            if v < up.value and (best is None or v < best[0]):
                best = (v, c)
    return best


class _Upper:
    """A certified upper bound: an audited pmf on a box and its outward-rounded cost."""

    def __init__(self, p: np.ndarray, R: int, value: float, realised: float, shifts_delta: np.ndarray,
                 certified: bool, mixed: float, note: str = "") -> None:
        self.p, self.R, self.value = p, R, value
        self.realised_delta, self.shifts_delta = realised, shifts_delta
        self.certified, self.mixed, self.note = certified, mixed, note
        #: per-shift δ of the pmf before the mixing repair (None when no repair was needed)
        self.pre_repair_delta: np.ndarray | None = None
        #: a coarse level's node law audited at its shifts ±1..Δ/k (``ApproxFamily._spread_upper``), else None
        self.node_delta: np.ndarray | None = None


def upper_from_pmf(cost, p: np.ndarray, R: int, epsilon: float, delta: float, D: int, price=None,
                   nonnegative: bool = False) -> _Upper:
    """Audit p for every shift; repair by mixing with a cheap law of δ <= δ/2 if needed
    (:func:`optmech.repair.repair_delta`; moved onto ℕ when ``nonnegative``); price it
    (``price(p, R)``: an outward-rounded cost of the masses p on [−R, R]; default: the cost at the points)."""
    d = p.ndim
    shifts = shift_vectors(d, D, half=False)
    p = np.where(np.isfinite(p), np.maximum(p, 0.0), 0.0)
    s = math.fsum(p.ravel())
    if not s > 0:
        p = np.zeros_like(p)
        p[(R,) * d] = 1.0
        s = 1.0
    p = p / s
    per0 = hockey_stick_array(p, shifts, epsilon)
    p, R, per, mixed = repair_delta(p, R, epsilon, delta, D, shifts, per=per0, nonnegative=nonnegative)
    real = float(per.max())
    certified = real <= delta
    value = _price(cost, p, R) if price is None else price(p, R)
    note = "" if certified else f"audit failed: delta({epsilon:g}) = {real:.17g} > {delta:g}"
    up = _Upper(p, R, value, real, per, certified and math.isfinite(value), mixed, note)
    if mixed > 0:
        up.pre_repair_delta = per0
    return up


#: the audit of the truncated geometric on ℕ sums (2T + 1)·2Δ terms; beyond this many (about 10 s) it is skipped
NONNEGATIVE_AUDIT_TERMS = 1e9


def nonnegative_geometric_upper(cost, epsilon: float, delta: float, sensitivity: int) -> "_Upper | None":
    """The truncated discrete Laplace law p(x) ∝ λ^{|x|} on [−T, T], λ = e^{−ε/Δ}, with the smallest
    private half-width T (derived and certified in interval arithmetic by
    :func:`optmech.mechanisms.approx.deployed_integer.truncated_geometric_law`), moved onto ℕ: p(x) ∝
    λ^{|x − T|} on [0, 2T] (a shift of (ε, δ)-DP noise is (ε, δ)-DP); audited again here for every shift
    with outward rounding on the float masses and priced at the integers: a certified upper bound for
    noise on ℕ (T is raised by one, at most three times, if the float masses fail the audit).  None
    when no audited law passes, or when the audit would sum more than ``NONNEGATIVE_AUDIT_TERMS`` terms."""
    from optmech.mechanisms.approx.deployed_integer import truncated_geometric_law

    law = truncated_geometric_law(epsilon, delta, sensitivity)
    T = int(law.parameters["T"])
    if (2 * T + 1) * 2 * sensitivity > NONNEGATIVE_AUDIT_TERMS:  # the audit would take minutes
        name = str(getattr(cost, "spec", cost)).strip()
        if name not in ("abs", "square") or not law.private:
            return None
        # the law's own certificate: δ(T) in closed form, in interval arithmetic (deployed_integer), and
        # E Y = T, E Y² = E X² + T² enclosed there; widened by CLOSED_FORM_WIDENING
        from optmech.mechanisms.approx.deployed_integer import truncated_geometric_nonneg_law

        moved = truncated_geometric_nonneg_law(epsilon, delta, sensitivity, base=law)
        hi = moved.cost("abs" if name == "abs" else "square")[1]
        up = _Upper(None, 0, float(np.nextafter(hi * (1 + CLOSED_FORM_WIDENING), np.inf)), float(moved.delta_bound),
                    np.zeros(0), True, 0.0, f"the truncated discrete Laplace on [0, {2 * T}] centred at {T}, closed form")
        up.cells, up.reference, up.parameters = None, "truncated_geometric_nonnegative", {"half_width": T, "centre": T}
        return up
    for _ in range(4):
        x = np.arange(2 * T + 1)
        p = np.concatenate([np.zeros(2 * T), np.exp(-epsilon / sensitivity * np.abs(x - T))])
        up = upper_from_pmf(cost, p, 2 * T, epsilon, delta, sensitivity, nonnegative=True)
        if up.certified and up.mixed == 0:
            up.reference, up.parameters = "truncated_geometric_nonnegative", {"half_width": T, "centre": T}
            up.note = f"the truncated discrete Laplace on [0, {2 * T}] centred at {T}, audited"
            return up
        T += 1
    return None


def closed_form_uppers(cost, epsilon: float, delta: float, sensitivity: float, dim: int = 1,
                       norm: str = "l1") -> list[_Upper]:
    """The valid closed-form references on ℝ or ℝ^d as certified upper bounds on V*.

    Each reference of :func:`~optmech.mechanisms.approx.references.continuous_approx_references`
    that is ``valid`` (its side conditions hold) and ``exact`` (a closed form, not a quadrature) is an
    (ε, δ)-DP noise law (the staircase and Laplace are ε-DP, the truncated Laplace and the Gaussians
    meet δ at the worst shift, the uniform is (0, δ)-DP) with that expected cost; the value is widened
    by :data:`CLOSED_FORM_WIDENING`.  The bound carries ``reference`` (its name) and ``parameters``
    (its calibration) and no masses (``p`` is None).
    """
    from optmech.mechanisms.approx.references import continuous_approx_references

    return [up for b in continuous_approx_references(cost, epsilon, delta, sensitivity, dim=dim, norm=norm)
            for up in _closed_form_upper(b)]


def _closed_form_upper(bound) -> list[_Upper]:
    """A valid, exact closed-form upper :class:`~optmech.mechanisms.approx.bounds.Bound` as a certified
    upper bound (its value widened by ``CLOSED_FORM_WIDENING``; no masses or cells: ``p`` and ``cells``
    are None, ``reference`` and ``parameters`` name the law), or none."""
    v = float(bound.value)
    if not (bound.kind == "upper" and bound.valid and bound.exact and math.isfinite(v) and v > 0):
        return []
    up = _Upper(None, 0, float(np.nextafter(v * (1 + CLOSED_FORM_WIDENING), np.inf)), 0.0, np.zeros(0), True, 0.0,
                f"closed form: {bound.name}")
    up.cells, up.reference, up.parameters = None, bound.name, dict(bound.parameters)
    return [up]


def _mechanism_nd(up: _Upper, d: int, D: int) -> dict:
    """The audited pmf on ℤ^d as JSON (``lattice_pmf_nd``, finite support: every listed point)."""
    side = 2 * up.R + 1
    flat = np.flatnonzero(up.p.ravel() > 0)
    pts = np.stack(np.unravel_index(flat, (side,) * d), axis=-1) - up.R
    return {
        "kind": "lattice_pmf_nd", "dim": d, "norm": "l1", "sensitivity": D, "symmetry": "none",
        "representatives": pts.tolist(), "mass": (up.p.ravel()[flat] / math.fsum(up.p.ravel())).tolist(),
        "tail_factor": 0.0, "tail_rate": 0.0,
        "rule": "P(x) = mass[i] at x = representatives[i]; 0 elsewhere (finite support)",
    }


# -- references ------------------------------------------------------------------------------------
def approx_reference_values(problem, lo: float, up: float, ctx=None, *, nonnegative_law=None) -> list[ReferenceValue]:
    """The closed forms and the paper's bounds (:mod:`optmech.mechanisms.approx.bounds`); in 1-D each
    law at its best integer shift (:func:`optmech.mechanisms.shifts.shift_references`, the rule
    of every family), except a uniform law whose second exact sum would not fit the time left.  In
    d > 1 the costs are the named l1, l2, l2sq, linf, so every law's best shift is 0, proven
    (:func:`optmech.mechanisms.shifts.centre_is_best_nd`: convex costs even in every coordinate;
    the product discrete Laplace, the ℓ1 staircase and the product uniform are symmetric under each
    coordinate reflection about a centre within 1/2 of 0): ``parameters["shift"]`` is d zeros."""
    from optmech.families.relaxed import UNIFORM_SECONDS_PER_POINT, approx_references
    from optmech.mechanisms.shifts import shift_references, shift_references_nd

    D = int(problem.sensitivity)
    bounds = approx_references(problem.cost, problem.epsilon, problem.delta, D, problem.dim, ctx=ctx)
    if getattr(problem.domain, "nonnegative", False):
        return reference_values(nonnegative_references(bounds, problem, nonnegative_law), lo, up)
    if problem.dim == 1:
        bounds += discrete_gaussian_bounds(problem.cost, problem.epsilon, problem.delta, D)

        def unsearched(b) -> str | None:
            if b.name != "uniform":
                return None
            need = 2.0 * UNIFORM_SECONDS_PER_POINT * float(b.parameters.get("width", 0))
            if need > min(SHIFTED_UNIFORM_SECONDS, ctx.remaining() - FINAL_SECONDS if ctx is not None else math.inf):
                return f"no shift searched: pricing a shift sums over its {b.parameters.get('width')} integers again, about {need:.2g} s"
            return None

        bounds = shift_references(bounds, problem.cost, epsilon=problem.epsilon, sensitivity=D, delta=problem.delta,
                                  integer=True, unsearched=unsearched)
    else:
        bounds = shift_references_nd(bounds, problem.cost, dim=problem.dim, integer=True)
    return reference_values(bounds, lo, up)


def nonnegative_references(bounds: list, problem, law: "_Upper | None" = None) -> list:
    """The references of a problem on ℕ: the lower bounds on V* over ℤ (a law on ℕ is a law on ℤ, so
    they bound the optimum on ℕ from below too), and the truncated discrete Laplace moved onto ℕ
    (:func:`nonnegative_geometric_upper`, audited; ``law``: that bound, when the caller has it).  The
    two-sided laws are left out: they are not supported on ℕ."""
    from optmech.mechanisms.approx.bounds import make_bound

    out = [b for b in bounds if b.kind == "lower"]
    if problem.epsilon > 0:
        up = law if law is not None else nonnegative_geometric_upper(problem.cost, problem.epsilon, problem.delta,
                                                                     int(problem.sensitivity))
        if up is not None:
            out.append(make_bound("truncated_geometric_nonnegative", up.value, "upper", {"audit passed": True},
                                  dict(up.parameters, realised_delta=up.realised_delta), True,
                                  "the truncated discrete Laplace (double geometric) lambda = exp(-epsilon/sensitivity) on "
                                  "[0, 2T] centred at T, T the smallest half-width with delta(epsilon) <= delta "
                                  "(closed form, derived), audited for every shift; cost summed with outward rounding"))
    return out


#: The uniform law on ℤ is moved to its best shift only when its second exact sum takes at most this
#: many seconds (by ``UNIFORM_SECONDS_PER_POINT``, twice over), and within a solve fits the time left.
SHIFTED_UNIFORM_SECONDS = 0.5


def reference_values(bounds: list, lo: float, up: float) -> list[ReferenceValue]:
    """:class:`~optmech.mechanisms.approx.bounds.Bound` objects as the Result's references, each placed
    against the certified bracket [lo, up] (:func:`optmech.certify.reference_inside`)."""
    out = []
    for b in bounds:
        v = float(b.value)
        inside = reference_inside(v, lo, up, b.exact)
        out.append(ReferenceValue(b.name, v, dict(b.parameters), inside, b.exact, b.note, valid=b.valid, kind=b.kind,
                                  conditions=dict(b.conditions)))
    return out


def audit_record(best_up: "_Upper | None", epsilon: float, delta: float, method: str) -> dict:
    """The Result's ``audit`` for an audited (ε, δ) upper bound (None: no upper bound was certified)."""
    return {
        "realised_delta": best_up.realised_delta if best_up else None,
        "target_delta": delta,
        "epsilon": epsilon,
        "passed": bool(best_up and best_up.certified),
        "shifts": int(len(best_up.shifts_delta)) if best_up else 0,
        "method": method,
        "mixed_weight": best_up.mixed if best_up else None,
    }


#: The discrete Gaussian's calibration sums O(Δ·σ) terms per trial σ (about 3 s at Δ = 100): beyond
#: this sensitivity it is not computed within a solve.
DISCRETE_GAUSSIAN_MAX_SENSITIVITY = 64
#: Its seconds per Δ² (σ grows like Δ), for the time the loop keeps back: 0.44 s measured at Δ = 64, ε = 0.1,
#: δ = 0.01 on the 2-core machine, taken 1.5 times over.
DISCRETE_GAUSSIAN_SECONDS_PER_SENSITIVITY2 = 1.6e-4


def discrete_gaussian_bounds(cost, epsilon: float, delta: float, sensitivity: int) -> list:
    """The discrete Gaussian [CKS20] calibrated by its exact δ(ε) audit, as an upper bound (1-D)."""
    from optmech.mechanisms.approx.bounds import make_bound
    from optmech.mechanisms.approx.references import discrete_approx_references

    if epsilon <= 0 or sensitivity > DISCRETE_GAUSSIAN_MAX_SENSITIVITY:
        why = "epsilon = 0" if epsilon <= 0 else f"sensitivity above {DISCRETE_GAUSSIAN_MAX_SENSITIVITY}"
        return [make_bound("discrete_gaussian", math.nan, "upper", {}, {}, True, f"not computed ({why})")]
    return discrete_approx_references(cost, epsilon, delta, sensitivity)


# -- the family ---------------------------------------------------------------------------------------
def uses_backend(ctx, backend: str) -> bool:
    """Whether the solve's profile sends the per-point LP on ℤ (builder ``hockey_stick``) to ``backend`` (the
    per-point LPs of the exact level are
    then solved by the structured interior point of :mod:`optmech.solvers.hockey_ipm`, faster than the
    aggregated relaxation by HiGHS, so the loop does not aggregate)."""
    profile = getattr(ctx, "profile", None)
    return any(a.backend == backend and "hockey_stick" in a.when.get("builders", ("hockey_stick",))
               for a in getattr(profile, "attempts", ()))


class ApproxFamily:
    """(ε, δ)-DP on ℤ^d (δ > 0): the hockey-stick LPs of :mod:`optmech.problems.approx`.

    Sizes are the inner half-width N, starting from 2Δ(n + 2), n = ln(1 + (e^ε − 1)/(2δ))/ε
    (the optimum's support is ≈ Δ(n + 1) [derived]), doubled while the relaxation still uses its
    outer layer or far mass.
    """

    name = "approx"
    max_steps = 12

    def __init__(self, problem, ctx) -> None:
        self.problem, self.ctx = problem, ctx
        self.eps, self.delta, self.d = problem.epsilon, problem.delta, problem.dim
        self.D = int(problem.sensitivity)
        #: noise on ℕ (``--domain nonnegative``): no ±x reduction, p(x) = 0 for x < 0 in every LP and law
        self.nonneg = bool(getattr(problem.domain, "nonnegative", False))
        self.symmetry = "off" if self.nonneg else problem.symmetry
        self.even = self.symmetry != "off"
        cost = problem.cost
        # a 1-D cost not proven nondecreasing in |x| may be cheapest far from 0: shifted copies are priced too
        self.far_ok = (self.d == 1 and not self.nonneg and getattr(cost, "kind", "") == "expr"
                       and not cost.is_symmetric_nondecreasing(integer=True))
        self.far_upper, self.shift, self.infimum = None, 0, None
        #: noise on ℕ: the audited truncated geometric of :meth:`initial_uppers`, reused by the references
        self.nonneg_law: _Upper | None = None
        #: whether the exact level may use the aggregated relaxation (off after a step whose primal needed repair)
        self.aggregate = self.d == 1 and self.even and not self.nonneg and not uses_backend(ctx, "hockey_ipm")
        self.prev_gap = math.inf
        self._plans: dict = {}
        # 1-D: the budget slack s of the LP solved (δ − s): a primal exactly at δ fails the audit by its own
        # outward rounding (~2e-15), and the mixing repair that follows costs seconds at large Δ
        # relative to δ: the certificate loses s·λ with the budget's dual λ ~ Δ/(εδ), and the audit's own rounding
        # scales with the hockey-stick sums (about δ); 1e-14 at δ = 0.01 as measured there
        self.slack, self.slack_tries = (DELTA_SLACK * self.delta / 0.01 if self.d == 1 else 0.0), 0
        #: 1-D on ℤ, an even cost, Δ >= DECAY_FROM: the periodic-decay path first (:mod:`optmech.families.approx_decay`)
        self.decay = self.d == 1 and self.eps > 0 and self.D >= DECAY_FROM and (
            self.nonneg or (self.even and approx_mode(cost, self.D, self._window(self.D), symmetry=self.symmetry) == "even"))
        self.decay_tail_tries = 0
        #: set when a decay step's dual did not extend (DECAY_FAILED_GAP): the next step is the per-point path's
        self.decay_failed = False

    def initial_uppers(self) -> list:
        """Certified upper bounds before any LP (so that a time limit or an interrupt always has a bracket).

        1-D: the discrete Laplace law p(x) ∝ e^{−ε|x|/Δ} (ε-DP for integer shifts |v| <= Δ, hence
        (ε, δ)-DP), audited and priced with the rigorous lattice machinery of the pure family (cost
        enclosures on a window of ±2Δ, geometric tails bounded by the cost's proven growth):
        :func:`optmech.families.pure1d.laplace_upper`; and, for a cost proven symmetric and
        nondecreasing on ℤ, the optimal discrete staircase [Geng13, Thm 2.13] (ε-DP), its closed-form
        cost widened by ``CLOSED_FORM_WIDENING``.  d > 1: the product discrete Laplace law
        (ε-DP for ℓ1 sensitivity Δ [GV13, (120)–(128)]), whose cost is a closed form for ``l1`` and
        ``l2sq``, widened by ``CLOSED_FORM_WIDENING``; none for other costs."""
        if self.eps <= 0:
            return []
        if self.nonneg:
            up = self.nonneg_law = nonnegative_geometric_upper(self.problem.cost, self.eps, self.delta, self.D)
            return [up] if up is not None else []
        if self.d == 1:
            from optmech.families.pure1d import laplace_upper
            from optmech.spec import PureDP

            pure = dataclasses.replace(self.problem, privacy=PureDP(self.eps))
            up = laplace_upper(pure, Grid1D.integer(self.D))
            out: list = [up] if up.certified and math.isfinite(up.value) else []
            from optmech.mechanisms.approx.bounds import staircase_upper_bound

            return out + _closed_form_upper(staircase_upper_bound(self.problem.cost, self.eps, self.D))
        from optmech.mechanisms.approx.bounds import laplace_upper_bound

        return _closed_form_upper(laplace_upper_bound(self.problem.cost, self.eps, self.D, self.d))

    def initial_lower(self) -> float:
        """A certified lower bound before any LP: the cost's proven floor on ℤ (0 for the named d-D
        costs), raised to [GV13]'s theorem bound (Thm 8 at ε > 0, Thms 1/2 at ε = 0; d × Thm 8 in d-D)
        where its side conditions hold, narrowed by ``CLOSED_FORM_WIDENING``."""
        from optmech.mechanisms.approx.bounds import theorem_lower_bound

        floor = float(self.problem.cost.domain_minimum(integer=True)) if self.d == 1 else 0.0
        self.initial_lower_source = "the cost's proven floor on ℤ" if self.d == 1 else "the cost's floor (nonnegative)"
        try:
            b = theorem_lower_bound(self.problem.cost, self.eps, self.delta, self.D, self.d)
        except Exception:  # noqa: BLE001 - the theorem bound is optional here; the floor stands
            return floor
        v = float(b.value)
        if b.valid and b.exact and math.isfinite(v) and v > 0:
            v = float(np.nextafter(v * (1 - CLOSED_FORM_WIDENING), -np.inf))
            if v > floor:
                self.initial_lower_source = f"[GV13]'s theorem bound ({b.parameters.get('theorem', 'thm_lower_bound')})"
                return v
        return floor

    def final_seconds(self) -> float:
        """The report's share of the time limit: :data:`~optmech.budget.FINAL_SECONDS` plus the discrete
        Gaussian reference (1-D, Δ up to :data:`DISCRETE_GAUSSIAN_MAX_SENSITIVITY`), computed after the last solve."""
        if self.d != 1 or self.eps <= 0 or self.D > DISCRETE_GAUSSIAN_MAX_SENSITIVITY:
            return FINAL_SECONDS
        return FINAL_SECONDS + DISCRETE_GAUSSIAN_SECONDS_PER_SENSITIVITY2 * self.D ** 2

    @property
    def step_factor(self) -> float:
        """After a decay step whose dual did not extend, the next step (the per-point path's first, far smaller
        than the decay LP) is not predicted from it: the loop's default factor otherwise."""
        if self.decay_failed:
            return 0.25
        raise AttributeError("step_factor")

    def start(self):
        n = thm8_n(self.eps, self.delta)
        if self.d != 1:
            return int(2 * self.D * (math.ceil(n) + 2))  # closes the gap in one LP in our tests
        if self.decay:
            final = max(FINAL_SECONDS, self.final_seconds())
            k = first_level(self.D, FIRST_SHARE * max(0.0, self.ctx.remaining() - final),
                            coarse_allowed(self.problem.cost) and not self.nonneg, one_sided=self.nonneg)
            if k is not None:
                return self._decay_size(k)
            self.decay = False
        return self._classic_start()

    def _classic_start(self):
        """The first size of the per-point path (coarse levels, then the exact LP)."""
        k = self._first_factor()
        return self._level(k, self._window(self.D // k))

    def _decay_size(self, k: int, tail: int | None = None, shifts: tuple[int, ...] | None = None) -> DecaySize:
        m = self.D // k
        K, W = layout_for(self.eps, self.delta, m)
        if self.nonneg:  # noise on ℕ: the one-sided layout, a tail of 3m
            W = 3 * m
        return DecaySize(k, K, W if tail is None else tail,
                         kept_shifts(m, one_sided=self.nonneg) if shifts is None else shifts, self.nonneg)

    def _window(self, m: int) -> int:
        """The first half-width for sensitivity m (coarse nodes when m < Δ): Δ(n + 1) + Δ, wider
        without the ±x reduction (the support reaches further on the cost's cheap side)."""
        n = thm8_n(self.eps, self.delta)
        N = int(math.ceil(m * (n + 1))) + m
        if self.nonneg:  # the support on ℕ is about [0, 2m(n + 1)]: the box's right half must hold it
            return int(math.ceil(2 * ASYMMETRIC_REACH * m * (n + 1))) + m
        if approx_mode(self.problem.cost, self.D, N * (self.D // m), symmetry=self.symmetry) == "none":
            N = int(math.ceil(ASYMMETRIC_REACH * m * (n + 1))) + m
        return N

    def _level(self, k: int, N: int):
        """The size of the LP with coarse factor k (1: the exact LP) on half-width N (in nodes), with the
        starting shift set: the largest START_SHIFT_SHARE of them (all up to ALL_SHIFTS_UP_TO)."""
        m = self.D // k
        keep = m if m <= ALL_SHIFTS_UP_TO else max(1, math.ceil(m * START_SHIFT_SHARE))
        shifts = tuple(range(m - keep + 1, m + 1))
        return (N, shifts) if k == 1 else (N, shifts, k)

    def _first_factor(self) -> int:
        """The largest divisor k of Δ with Δ/k >= COARSE_START (1 below COARSE_FROM or without one)."""
        if self.D < COARSE_FROM:
            return 1
        return max((k for k in range(1, self.D + 1) if self.D % k == 0 and self.D // k >= COARSE_START), default=1)

    def _next_factor(self, k: int) -> int:
        """The next, finer level: the largest divisor of Δ below k that at most doubles Δ/k (else the
        largest divisor below k)."""
        below = [d for d in range(1, k) if self.D % d == 0]
        near = [d for d in below if 2 * d >= k]
        return max(near or below)

    @staticmethod
    def _half_width(size) -> int:
        return size if isinstance(size, int) else size[0]

    def plan(self, N) -> LPPlan:
        """The LP of half-width N before it is built: the reduction :func:`build_approx` will use
        (decided on the box, as the builder does, once the smallest LP it could be fits the memory
        budget), its columns and nonzeros (:func:`estimate_size`; rows <= columns + shifts), and the
        uniform reference's sum beside it (:func:`optmech.families.relaxed.uniform_bytes`)."""
        from optmech.families.relaxed import uniform_bytes

        if isinstance(N, DecaySize):
            return self._decay_plan(N)
        size = N
        N = self._half_width(size)
        if size not in self._plans:
            even = self.even
            cols, nnz = estimate_size(self.d, self.D, N, even)  # the smallest the LP can be (orbits when d > 1)
            mode = "orbits" if even and self.d > 1 else ("even" if even else "none")
            extra = uniform_bytes(self.delta, self.D)
            shifts = (2 * self.D + 1) ** self.d
            if LPPlan(cols + shifts, cols, nnz, "", extra).peak_bytes() <= memory_budget():
                mode = approx_mode(self.problem.cost, self.D, N, dim=self.d, symmetry=self.symmetry)
                cols, nnz = estimate_size(self.d, self.D, N, mode != "none", orbits=mode == "orbits")
            builder = "hockey_stick_orbits" if mode == "orbits" else "hockey_stick"
            rows = cols + shifts
            if not isinstance(size, int):  # 1-D with edge rows and kept shifts: counted exactly
                m = self.D // (size[2] if len(size) == 3 else 1)
                if len(size) == 3:
                    mode = "even" if self._nodes(m).even(np.arange(-(N + m), N + m + 1)) else "none"
                box = 2 * (N + m) + 1
                mags = np.asarray(size[1], dtype=np.int64)
                signs = 1 if mode == "even" else 2  # the ±x reduction keeps one of ±v
                T = signs * int(np.sum(box - mags))  # every box point whose partner is in the box
                K = signs * len(mags)
                n_p = (box + 1) // 2 if mode == "even" else box
                cols = n_p + 1 + T + K
                nnz = 3 * T + signs * int(np.sum(mags + 2)) + T + K + n_p + 1
                rows = 1 + T + 2 * K
                if self._aggregated(N, m):  # the zones' points leave the per-point rows of |v| < m for class rows
                    builder = "hockey_stick_aggregated" if len(size) == 2 else builder
                    mags = np.unique(np.append(mags[mags >= min(mags)], m))
                    zone = 2 * m * zone_periods(self.eps, self.delta, m, N, AGGREGATE_BAND, AGGREGATE_OUTER_BAND)
                    small = int(np.sum(mags < m))
                    T = int(np.sum(box - mags)) - small * zone
                    C = small * 2 * m  # class rows: two zones of m residues per shift below m
                    K = len(mags)
                    cols = n_p + 1 + m + T + C + K
                    rows = 1 + T + C + m + 2 * K
                    nnz = 4 * T + 6 * C + m + zone // 2 + int(np.sum(mags + 2)) + K + n_p + 1
            self._plans[size] = LPPlan(rows=rows, cols=cols, nonzeros=nnz, builder=builder, extra_bytes=extra)
        return self._plans[size]

    def _decay_plan(self, size: DecaySize) -> LPPlan:
        """The decay LP's shape (:func:`optmech.problems.approx_decay.decay_rows`), and its audit's terms for the
        certification's seconds (every fine shift over the spread law's support)."""
        from optmech.families.relaxed import uniform_bytes

        if size not in self._plans:
            m = self.D // size.factor
            if size.one_sided:
                G, C, Kd, W, R = onesided_layout_parts(size.periods, size.tail, m)
                T = len(size.shifts) * (R - (G + Kd - 2) * m + m // 2 + 4)
                n_p = 2 * m + C + W
            else:
                T = decay_plan_rows(m, size.tail, len(size.shifts))
                n_p = m + size.tail
                R = (size.periods * m + size.tail) * size.factor
            self._plans[size] = decay_lp_plan(T, n_p, len(size.shifts), 2.0 * R * 2 * self.D,
                                              extra_bytes=uniform_bytes(self.delta, self.D))
        return self._plans[size]

    def estimate_bytes(self, size) -> float:
        return self.plan(size).peak_bytes()

    def size_message(self, size, need: float, budget: float) -> str:
        lp = self.plan(size)
        N = self._half_width(size) if not isinstance(size, DecaySize) else size.describe(self.D)["half_width"]
        return (f"the (epsilon, delta) LP needs about {gib(need)} GiB ({lp.builder} builder, {lp.cols} columns, "
                f"{lp.nonzeros} nonzeros; dim {self.d}, sensitivity {self.D}, half-width {N}); the limit is "
                f"{gib(budget)} GiB: raise delta or epsilon, lower the sensitivity or dimension, or set "
                "OPTMECH_MAX_MEMORY_GB")

    def build(self, size) -> Built:
        if isinstance(size, DecaySize):
            return self._build_decay(size)
        if isinstance(size, int):
            alp = build_approx(self.problem.cost, self.eps, self.delta, self.D, size, dim=self.d,
                               symmetry=self.symmetry)
            return Built(alp.lp, {"half_width": size}, alp, alp.variant)
        N, shifts, k = (*size, 1) if len(size) == 2 else size
        m = self.D // k
        if self._aggregated(N, m):
            alp = build_aggregated(self.problem.cost, self.eps, self.delta, m, N, band=AGGREGATE_BAND,
                                   outer_band=AGGREGATE_OUTER_BAND, min_shift=min(shifts), symmetry=self.symmetry,
                                   nodes=self._nodes(m) if k > 1 else None)
            alp = dataclasses.replace(alp, lp=dataclasses.replace(alp.lp, meta=dict(alp.lp.meta, builder=alp.variant)))
        else:
            alp = build_approx(self.problem.cost, self.eps, self.delta, m, N, dim=1, symmetry=self.symmetry,
                               keep_shifts=np.asarray(shifts, dtype=np.int64)[:, None], edge_rows=True,
                               nodes=self._nodes(m) if k > 1 else None, nonnegative=self.nonneg)
        lp = alp.lp
        ru = lp.row_upper.copy()
        if self.slack > 0:  # solve with the budget δ − s; the duals are certified against alp.lp (budget δ)
            ru[lp.row_blocks["budget"]] = self.delta - self.slack
        # masses of about 1/(2R): solved as S·p (S a power of two near the box size, optmech.solvers.base),
        # so that the solver's absolute tolerances do not add up to a hockey-stick excess over ~1e3 rows
        scale = 2.0 ** math.ceil(math.log2(2 * alp.R + 1))
        meta = dict(lp.meta, solve_scale=scale)
        meta.setdefault("builder", alp.variant if k == 1 else "hockey_stick_coarse")
        lp = dataclasses.replace(lp, row_upper=ru, meta=meta)
        desc = {"half_width": N * k, "shifts_kept": len(shifts), "delta_slack": self.slack}
        if k > 1:
            desc.update(coarse_factor=k, coarse_sensitivity=m, coarse_half_width=N)
        return Built(lp, desc, alp, alp.variant if k == 1 else "hockey_stick_coarse")

    def _build_decay(self, size: DecaySize) -> Built:
        """The restricted LP of :mod:`optmech.problems.approx_decay` at coarse factor k (node prices when k > 1),
        solved with the budget δ − s (its duals are certified against δ, :meth:`lower`)."""
        k = size.factor
        m = self.D // k
        prices, _ = self._decay_prices(k)
        if size.one_sided:
            G, C, Kd, W, _ = onesided_layout_parts(size.periods, size.tail, m)
            dlp = build_decay_onesided(self.problem.cost, self.eps, self.delta, OneSidedLayout(m, G, C, Kd, W, self.eps),
                                       shifts=size.shifts, prices=prices)
        else:  # rows from one period left of 0 on: the others were slack in every case measured (the audit
            # decides on the law all the same)
            dlp = build_decay(self.problem.cost, self.eps, self.delta, m, size.periods, size.tail, shifts=size.shifts,
                              prices=prices, first_point=-m)
        dlp.decay_size = size
        lp = prepared_decay_lp(dlp, self.delta - self.slack)
        desc = dict(size.describe(self.D), delta_slack=self.slack)
        return Built(lp, desc, dlp, "hockey_stick_decay")

    def _decay_prices(self, k: int):
        if k > 1:
            nodes = self._nodes(self.D // k)
            return nodes.lower, (lambda limit: far_node_price(nodes, limit))
        cost = self.problem.cost
        return (lambda z: point_costs(cost, np.asarray(z)[:, None])[0]), (lambda limit: outside_min(cost, limit, 1))

    def _aggregated(self, N: int, m: int) -> bool:
        """Whether the LP of half-width N (in nodes) and sensitivity m (Δ/k) is the aggregated relaxation:
        m >= AGGREGATE_FROM, the ±x reduction applies, and a zone of at least one whole period fits
        between the bands."""
        if not (self.aggregate and m >= AGGREGATE_FROM):
            return False
        if m == self.D:
            even = approx_mode(self.problem.cost, self.D, N, symmetry=self.symmetry) == "even"
        else:
            even = self.symmetry != "off" and self._nodes(m).even(np.arange(-(N + m), N + m + 1))
        return even and zone_periods(self.eps, self.delta, m, N, AGGREGATE_BAND, AGGREGATE_OUTER_BAND) >= 1

    def _nodes(self, m: int) -> NodeCosts:
        """The node prices of the coarse lattice kℤ, k = Δ/m (module docstring)."""
        return NodeCosts(self.problem.cost, float(self.D), m)

    def lower(self, built: Built, raw):
        """The repaired dual, certified against the LP with the budget δ (weak duality holds for any
        multipliers, so the LP solved with δ − s only costs s·Σ|y_budget|)."""
        if isinstance(built.model, DecayLP):
            prices, outside = self._decay_prices(built.size.get("coarse_factor", 1))
            bound = onesided_lower_bound if built.model.layout.one_sided else decay_lower_bound
            cert = bound(built.model, raw.row_dual, prices, outside, solver_objective=raw.objective)
            self.decay_failed = not cert.value > (1 - DECAY_FAILED_GAP) * raw.objective
            return cert
        return dual_lower_bound(built.model.lp, raw.row_dual, raw.objective)

    def upper(self, built: Built, raw) -> "_Upper":
        alp = built.model
        k = built.size.get("coarse_factor", 1)
        if isinstance(alp, DecayLP):
            p, R = alp.layout.pmf(raw.x[:alp.layout.columns]), alp.R - 1
            if alp.layout.one_sided:  # masses on [0, R): the audit's array is [−(R − 1), R − 1]
                p = np.concatenate([np.zeros(R), p])
        else:
            p, R = alp.box_masses(raw.x), alp.R
        if k > 1:  # node i's mass spread evenly over the k integers ik − ⌊k/2⌋ .. ik − ⌊k/2⌋ + k − 1
            lo = -R * k - (0 if self.nonneg else k // 2)  # on ℕ: ik .. ik + k − 1 (stays on ℕ)
            block = p / k
            fine = np.repeat(block, k)
            R = max(-lo, lo + fine.size - 1)
            p = np.zeros(2 * R + 1)
            p[lo + R: lo + R + fine.size] = fine
            if fine.size * 2.0 * self.D > SPREAD_AUDIT_TERMS:
                up = self._spread_upper(block, k, p, R)
                up.coarse_factor = k
                return up
        up = upper_from_pmf(self.problem.cost, p, R, self.eps, self.delta, self.D, nonnegative=self.nonneg)
        up.coarse_factor = k
        return up

    def _spread_upper(self, block: np.ndarray, k: int, p: np.ndarray, R: int) -> "_Upper":
        """The spread pmf's upper bound without auditing its (2R + 1)·2Δ terms (module docstring, coarse
        levels) [derived]: the fine law is the renormalised block masses w_i = fl(p_i/k) spread evenly over
        blocks of k integers, and its hockey-stick sum at v = ak + b (0 <= b < k) is the mix
        ((k − b)/k)·δ_w(a) + (b/k)·δ_w(a + 1) of the node law's sums (δ_w(0) = 0).  So the node law w is
        audited at the node shifts 0 < |a| <= Δ/k (outward rounding, :func:`optmech.audit.hockey_stick_array`)
        and every fine shift's δ is bounded by that mix, rounded up.  Where the bound exceeds δ no repair
        is tried (it would need the full audit): the step then has no certified upper bound."""
        m = self.D // k
        node = hockey_stick_array(block, shift_vectors(1, m, half=False), self.eps)  # shifts −m..−1, 1..m
        d_pos = np.concatenate([[0.0], node[m:]])  # δ_w(a), a = 0..m
        d_neg = np.concatenate([[0.0], node[:m][::-1]])  # δ_w(−a), a = 0..m
        v = np.arange(1, self.D + 1)
        a, b = v // k, v % k
        frac = b / k
        a1 = np.minimum(a + 1, m)

        def mix(dd: np.ndarray) -> np.ndarray:
            return np.nextafter((1 - frac) * dd[a] + frac * dd[a1], np.inf) * (1 + 4 * _U)

        per = np.concatenate([mix(d_neg)[::-1], mix(d_pos)])  # the order of shift_vectors: −Δ..−1, 1..Δ
        real = float(per.max())
        certified = real <= self.delta
        value = _price(self.problem.cost, p, R)
        note = "" if certified else f"audit failed: delta({self.eps:g}) = {real:.17g} > {self.delta:g}"
        up = _Upper(p, R, value, real, per, certified and math.isfinite(value), 0.0, note)
        up.node_delta = node  # the node law's audit, which :meth:`_violated_coarse` reads instead of redoing it
        return up

    def extra_uppers(self, step: Step) -> list:
        """At the first step, for a 1-D cost not proven nondecreasing in |x|: the audited pmf shifted
        by ±10^j·Δ (a shift of (ε, δ)-DP noise is (ε, δ)-DP), priced with rigorous enclosures."""
        up = step.upper
        if step.iteration != 0 or not self.far_ok or not up.certified:
            return []
        far = _far_shift(self.problem.cost, up, self.D)
        if far is None:
            return []
        self.far_upper = _Upper(up.p, up.R, far[0], up.realised_delta, up.shifts_delta, True, up.mixed, up.note)
        self.shift = far[1]
        floor = self.problem.cost.domain_minimum(integer=True)
        if is_infimum_at_infinity(far[0], floor, up.value, self.problem.target_gap):
            self.infimum = floor
        return [self.far_upper]

    def diagnostics(self, built: Built, raw, upper) -> dict:
        alp = built.model
        if isinstance(alp, DecayLP):
            return {"mixed_weight": upper.mixed, "tail_mass": tail_share(alp, raw.x), "layer_and_far_mass": 0.0}
        return {"mixed_weight": upper.mixed, "layer_and_far_mass": alp.far_mass(raw.x) + alp.layer_mass(raw.x)}

    def grow(self, step: Step, best) -> int | Stop:
        if isinstance(step.built.model, DecayLP):
            return self._grow_decay(step)
        gap, up = step.gap, step.upper
        spill = step.diagnostics["layer_and_far_mass"]
        target = self.problem.target_gap
        prev, self.prev_gap = self.prev_gap, gap
        if self.infimum is not None:
            return Stop(f"V* is an infimum in [{max(best.lower, self.infimum):.6g}, {best.upper_value:.6g}], approached "
                        f"far from 0: the audited pmf shifted by {self.shift} costs <= {best.upper_value:.6g} and no noise "
                        "costs less than the cost's proven floor", status="infimum_at_infinity", lower=self.infimum)
        alp = step.built.model
        k = step.built.size.get("coarse_factor", 1)
        if k > 1:  # a coarse level: widen, add violated shifts, else the next (finer) level
            self.prev_gap = math.inf
            if spill > 1e-3 * target:
                return int(math.ceil(WIDEN_1D * alp.N)), self._kept(alp), k
            violated = self._violated_coarse(step)
            if violated:
                return alp.N, tuple(sorted(set(self._kept(alp)) | violated)), k
            if alp.variant == "hockey_stick_aggregated" and (up.mixed > AGGREGATE_REPAIR or not up.certified):
                self.aggregate = False  # the per-point LP of the same level decides (see the exact level)
                return alp.N, self._kept(alp), k
            k2 = self._next_factor(k)
            return self._level(k2, int(math.ceil(alp.N * k / k2)))
        if self.d == 1:  # widen first: a primal that spills into the layer fails the audit at any shift
            if spill > 1e-3 * target:
                return int(math.ceil(WIDEN_1D * alp.N)), self._kept(alp)
            violated = self._violated(step)
            if violated:
                self.prev_gap = prev
                return alp.N, tuple(sorted(set(self._kept(alp)) | violated))
            if alp.variant == "hockey_stick_aggregated" and (up.mixed > AGGREGATE_REPAIR or not up.certified) \
                    and gap > target:
                # the aggregated relaxation's primal is a candidate only: where it needed the repair, the
                # per-point LP of the same window decides (module docstring)
                self.aggregate = False
                self.prev_gap = prev
                return alp.N, self._kept(alp)
            if up.mixed > 0 and self.slack_tries < MAX_SLACK_TRIES:
                # the gap is the mixing repair's (solver tolerances): the same LP with the budget δ − s
                excess = float(np.max(up.pre_repair_delta)) - self.delta if up.pre_repair_delta is not None else 0.0
                self.slack = min(0.5 * self.delta, max(2.0 * excess, 4.0 * self.slack))
                self.slack_tries += 1
                self.prev_gap = prev
                return alp.N, self._kept(alp)
        if not up.certified and spill <= 1e-3 * target:
            return Stop(f"the upper bound could not be certified: {up.note}")
        if spill <= 1e-3 * target and step.iteration >= 1 and gap > 0.5 * prev:
            return Stop("a wider window does not help: the remaining gap is the solver's accuracy")
        return 2 * alp.N if self.d != 1 else (2 * alp.N, self._kept(alp))

    def _grow_decay(self, step: Step):
        """The next step after a decay step (:mod:`optmech.families.approx_decay`): the dropped shifts the law
        violates, a longer tail, a finer level, or (at k = 1, the target missed) the per-point path."""
        dlp, up = step.built.model, step.upper
        k = step.built.size.get("coarse_factor", 1)
        m = self.D // k
        size = dlp.decay_size
        violated = self._violated_decay(step)
        if violated:
            return dataclasses.replace(size, shifts=tuple(sorted(set(size.shifts) | violated)))
        if step.diagnostics.get("tail_mass", 0.0) > TAIL_MASS and self.decay_tail_tries < 2:
            self.decay_tail_tries += 1
            return dataclasses.replace(size, tail=size.tail + m)
        if self.decay_failed or not step.lower.value > (1 - DECAY_FAILED_GAP) * up.value:
            # the dual built from this LP does not extend past the support (at large ε and tiny δ the burden of the
            # last rows, multiplied by e^ε per period, outgrows the cost): the per-point path for the lower end,
            # this step's audited law kept as the upper end
            self.decay = False
            return self._classic_start()
        if up.mixed > 0 and self.slack_tries < MAX_SLACK_TRIES:
            excess = float(np.max(up.pre_repair_delta)) - self.delta if up.pre_repair_delta is not None else 0.0
            self.slack = min(0.5 * self.delta, max(2.0 * excess, 4.0 * self.slack))
            self.slack_tries += 1
            return size
        if k > 1:
            final = max(FINAL_SECONDS, self.final_seconds())
            k2 = finer_level(self.D, k, FIRST_SHARE * max(0.0, self.ctx.remaining() - final))
            self.decay_tail_tries = 0
            return self._decay_size(k2)
        if self.decay_tail_tries < 1:  # a longer tail once: the law may need more room to end
            self.decay_tail_tries += 1
            return dataclasses.replace(size, tail=size.tail + 2 * m)
        self.decay = False
        return self._classic_start()

    def _violated_decay(self, step: Step) -> set[int]:
        """Dropped shifts (of the decay LP's lattice) where the step's law exceeds δ: at k = 1 read off the
        audit (before any repair); on a coarse level the node law is audited at its shifts."""
        dlp = step.built.model
        kept = {int(v) for v in dlp.shifts}
        m = dlp.layout.sensitivity
        if m == self.D:
            per = np.asarray(step.upper.pre_repair_delta if step.upper.pre_repair_delta is not None
                             else step.upper.shifts_delta)
            if per.size != 2 * self.D:
                return set()
            mags = shift_vectors(1, self.D, half=False)[:, 0]  # signed on ℕ (the one-sided LP keeps signed shifts)
            mags = mags if dlp.layout.one_sided else np.abs(mags)
        else:
            p = dlp.layout.pmf(step.raw.x[:dlp.layout.columns])
            if not p.sum() > 0:
                return set()
            shifts = shift_vectors(1, m, half=False)
            per = step.upper.node_delta if isinstance(step.upper, _Upper) and step.upper.node_delta is not None else None
            if per is None:
                per = hockey_stick_array(p / math.fsum(p), shifts, self.eps)
            mags = np.abs(shifts[:, 0])
        return {int(v) for v in mags[per > self.delta * (1 + SHIFT_VIOLATION)] if int(v) not in kept}

    @staticmethod
    def _kept(alp) -> tuple[int, ...]:
        return tuple(sorted({int(v) for v in np.abs(alp.shifts[:, 0])}))

    def _violated(self, step: Step) -> set[int]:
        """Dropped shift magnitudes at which the step's audited primal exceeds δ (before any repair):
        ``shifts_delta`` lists the shifts −Δ..−1, 1..Δ in the order of :func:`shift_vectors`."""
        per = np.asarray(step.upper.pre_repair_delta if step.upper.pre_repair_delta is not None
                         else step.upper.shifts_delta)
        if per.size != 2 * self.D:
            return set()
        mags = np.abs(shift_vectors(1, self.D, half=False)[:, 0])
        kept = set(self._kept(step.built.model))
        return {int(v) for v in mags[per > self.delta * (1 + SHIFT_VIOLATION)] if int(v) not in kept}

    def _violated_coarse(self, step: Step) -> set[int]:
        """Dropped shifts m of the coarse lattice at which its LP's masses (normalised) exceed δ."""
        alp = step.built.model
        p = alp.box_masses(step.raw.x)
        if not p.sum() > 0:
            return set()
        m = alp.sensitivity
        shifts = shift_vectors(1, m, half=False)
        per = step.upper.node_delta if isinstance(step.upper, _Upper) else None  # audited already by _spread_upper (the same law)
        if per is None:
            per = hockey_stick_array(p / math.fsum(p), shifts, self.eps)
        kept = set(self._kept(alp))
        mags = np.abs(shifts[:, 0])
        return {int(v) for v in mags[per > self.delta * (1 + SHIFT_VIOLATION)] if int(v) not in kept}

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        return approx_reference_values(self.problem, lower, upper, self.ctx,
                                       nonnegative_law=self.nonneg_law)

    def _report_closed_form(self, best, last: Step | None) -> dict:
        """The report when the upper end is one of :meth:`initial_uppers` (no LP's pmf was cheaper, or no LP
        finished): its mechanism and audit, and how each end of the bracket was found."""
        from optmech.mechanisms.tabulated import Tabulated

        eps, delta, d, D = self.eps, self.delta, self.d, self.D
        up = best.upper
        mech, claims = None, ["(epsilon, delta)-DP as the hockey-stick condition for every shift 0 < ||v||_1 <= "
                              "sensitivity [GV13, (18)/(103)]"]
        if up is not None and not isinstance(up, _Upper):  # the pure family's certified discrete Laplace
            mech = Tabulated.from_law(up.mechanism, eps, delta=delta)
            audit = {"realised_delta": 0.0, "target_delta": delta, "epsilon": eps, "passed": bool(up.certified),
                     "shifts": D, "realised_epsilon": float(up.audit.realised_epsilon)
                     if hasattr(up.audit, "realised_epsilon") else None,
                     "method": "epsilon-DP audit of the discrete Laplace law (ratio test on the window, geometric "
                               "tails), outward-rounded: epsilon-DP, hence (epsilon, delta)-DP", "mixed_weight": None}
            claims.append("upper bound: the discrete Laplace law p(x) ~ exp(-epsilon |x| / sensitivity), audited as "
                          "epsilon-DP (so (epsilon, delta)-DP) and priced with rigorous cost enclosures and tail bounds; "
                          "no LP's audited pmf was cheaper")
        elif up is not None and up.reference == "truncated_geometric_nonnegative":
            audit = {"realised_delta": up.realised_delta, "target_delta": delta, "epsilon": eps, "passed": True,
                     "shifts": D, "method": "closed form: delta(T) of the truncated discrete Laplace, the largest over "
                     "the shifts 1..sensitivity (proven), certified in interval arithmetic "
                     "(optmech.mechanisms.approx.deployed_integer); the law on N is its translate by T",
                     "mixed_weight": None}
            claims.append(f"upper bound: the truncated discrete Laplace law on [0, 2T], T = {up.parameters['half_width']}, "
                          "private by its closed-form delta(T) and priced by its closed-form moments (widened by 1e-12 "
                          "relative); too large to audit shift by shift here; no LP's audited pmf was cheaper")
        elif up is not None:
            if up.reference == "discrete_laplace" and d > 1:
                from optmech.mechanisms.laplace_nd import DiscreteLaplaceND

                mech = DiscreteLaplaceND(epsilon=eps, sensitivity=D, dim=d)
            elif up.reference == "discrete_staircase" and d == 1:
                from optmech.mechanisms.discrete_staircase import DiscreteStaircase

                mech = DiscreteStaircase(epsilon=eps, sensitivity=D, r=int(up.parameters["r"]))
            audit = {"realised_delta": 0.0, "target_delta": delta, "epsilon": eps, "passed": True, "shifts": 0,
                     "method": f"closed form: the {up.reference} law, epsilon-DP by its own proof "
                               + ("[GV13, (120)-(128)]" if d > 1 else "[Geng13, Thm 2.13]"),
                     "mixed_weight": None}
            claims.append(f"upper bound: the closed-form {up.reference} law (epsilon-DP, hence (epsilon, delta)-DP), its "
                          "closed-form expected cost widened by 1e-12 relative; no LP's audited pmf was cheaper")
        else:
            audit = audit_record(None, eps, delta, "none")
        if last is None:
            claims.append(f"lower bound without an LP: {getattr(self, 'initial_lower_source', 'the cost floor')}"
                          + ("" if best.lower > -math.inf else " (none)"))
        truncation: dict = {"dim": d, "upper_bound": "closed form (no truncation)"}
        if last is not None and isinstance(last.built.model, DecayLP):
            desc = last.built.size
            truncation |= {"half_width": desc.get("half_width"), "layout": desc.get("layout"),
                           "lower_bound": "dual of the full problem on Z (checked at every integer; beyond the checked "
                                          "range the cost's proven minimum outside)"}
            claims.append("lower bound: a dual of the full problem on Z built from the duals of the LP over "
                          "periodic-decay laws, checked at every integer with outward rounding [derived, "
                          "optmech.certify_decay]")
        elif last is not None:
            alp = last.built.model
            k_last = last.built.size.get("coarse_factor", 1)
            truncation |= {"half_width": alp.N * k_last, "box_half_width": alp.R * k_last,
                           "lower_bound": "relaxation: hockey-stick rows between box points, one edge row per shift "
                                          "with the far mass, far mass priced at the cost's minimum outside"}
        else:
            truncation["lower_bound"] = getattr(self, "initial_lower_source", "none")
        return {"mechanism": mech, "audit": audit, "truncation": truncation, "claims": claims}

    def _tabulated(self, up: "_Upper"):
        """The audited 1-D pmf of ``up`` as the result's mechanism (moved by the far shift when it is that bound)."""
        from optmech.mechanisms.tabulated import Tabulated

        D = self.D
        w = up.p.astype(float)
        shift = self.shift if up is self.far_upper else 0
        law = LatticeMechanism(Grid1D.integer(D), -up.R + shift, w, 0.0, np.zeros(D), np.zeros(D), total=math.fsum(w))
        return Tabulated.from_law(law, self.eps, delta=self.delta)

    def _report_decay(self, best, last: Step | None) -> dict:
        """The report when the last step was a periodic-decay step (:mod:`optmech.families.approx_decay`)."""
        eps, delta, D = self.eps, self.delta, self.D
        best_up = best.upper
        mech = self._tabulated(best_up)
        k_last = last.built.size.get("coarse_factor", 1) if last is not None else 1
        k_up = getattr(best_up, "coarse_factor", 1) if best_up is not None else 1
        claims = [
            "(epsilon, delta)-DP as the hockey-stick condition for every shift 0 < |v| <= sensitivity [GV13, (18)]",
            "lower bound: a dual of the full problem on Z (multipliers y_{v,x} in [0, lambda_v] for every shift and "
            "point, checked at every integer with outward rounding; weak duality gives V* >= theta - delta * sum "
            "lambda_v), built from the duals of the LP over periodic-decay laws p(x) = e^{-epsilon floor(|x|/m)} "
            "u_{|x| mod m} with a free tail, and a least chain for the shift m; no shape of the optimum is assumed "
            "[derived, optmech.certify_decay]",
            "upper bound: the LP's periodic-decay law, audited for every shift with outward rounding"
            + (f" (mixed at weight {best_up.mixed:.3g} with a law of delta <= delta/2, to absorb solver tolerances)"
               if isinstance(best_up, _Upper) and best_up.mixed > 0 else ""),
        ]
        if k_last > 1:
            claims.append(f"lower bound (coarse level k = {k_last}): the randomised rounding of the noise to the multiples "
                          f"of k is (epsilon, delta)-DP on kZ for the shifts up to sensitivity/k = {D // k_last}; the dual "
                          "is checked on the nodes with their proven node prices (cost less chord errors), a relaxation "
                          "[derived]")
        if k_up > 1:
            claims.append(f"upper bound (coarse level k = {k_up}): the node law's masses spread evenly over blocks of k "
                          "integers, audited for every shift 0 < |v| <= sensitivity and priced at the integers")
        if self.nonneg:
            claims.append("noise on N: the LP's laws grow by e^epsilon per period from 0 and decay after a free centre "
                          "block (both shifts of every kept magnitude are rows); the dual's constraints are needed at "
                          "z >= 0 only (a law on N has no mass below 0), with chains for the shifts -m and +m; every "
                          "audited law is supported on N")
        desc = last.built.size if last is not None else {}
        return {
            "mechanism": mech,
            "audit": audit_record(best_up if isinstance(best_up, _Upper) else None, eps, delta,
                                  "hockey-stick sums for every shift, outward-rounded"),
            "truncation": {"dim": 1, "half_width": desc.get("half_width"), "layout": desc.get("layout"),
                           "periods": desc.get("periods"), "tail": desc.get("tail"),
                           "lower_bound": "dual of the full problem on Z (checked at every integer; beyond the checked "
                                          "range the cost's proven minimum outside)",
                           "upper_bound": "restriction: the periodic-decay law (zero beyond its tail), audited"},
            "claims": claims,
        }

    def report(self, best, last: Step | None, status: str) -> dict:
        eps, delta, d, D = self.eps, self.delta, self.d, self.D
        best_up = best.upper
        has_pmf = isinstance(best_up, _Upper) and getattr(best_up, "p", None) is not None
        if not has_pmf or (last is None and not self.nonneg):
            return self._report_closed_form(best, last)
        alp = last.built.model if last is not None else None
        if isinstance(alp, DecayLP):
            return self._report_decay(best, last)
        mech = None
        if best_up is not None and d == 1:
            mech = self._tabulated(best_up)
        elif best_up is not None:
            from optmech.mechanisms.solved import mechanism_from_solver_dict

            mech = mechanism_from_solver_dict(_mechanism_nd(best_up, d, D) | {"epsilon": eps, "delta": delta})
        claims = [
            "(epsilon, delta)-DP as the hockey-stick condition for every shift 0 < ||v||_1 <= sensitivity "
            "[GV13, (18)/(103)]",
            ("lower bound: relaxation on the box with an outer layer of width sensitivity and the far mass priced at "
             "the minimum cost outside" if d > 1 else
             "lower bound: relaxation on the box: the hockey-stick rows between box points of the shifts kept (a dropped "
             "shift only enlarges the feasible set), one edge row per shift (the points whose partner leaves the box, "
             "with the far mass), the far mass priced at the minimum cost outside; the duals of the LP solved with the "
             "budget delta - 1e-14 are certified against delta"),
            ("upper bound: the truncated discrete Laplace law on [0, 2T] (T = "
             f"{best_up.parameters.get('half_width')}), audited for every shift with outward rounding; no LP's audited "
             "pmf was cheaper" if getattr(best_up, "reference", None) == "truncated_geometric_nonnegative" else
             "upper bound: the LP's pmf on the box, audited for every shift with outward rounding"
             + (f" (mixed at weight {best_up.mixed:.3g} with a law of delta <= delta/2, to absorb solver tolerances)"
                if best_up is not None and best_up.mixed > 0 else "")),
        ]
        if self.nonneg:
            claims.append("noise on N: every LP fixes p(x) = 0 at x < 0 (still a relaxation of the problem on N: a law "
                          "on N is a law on Z), and every audited law is supported on N")
        if last is None:
            claims[1] = f"lower bound without an LP: {getattr(self, 'initial_lower_source', 'the cost floor')}"
        k_up = getattr(best_up, "coarse_factor", 1) if best_up is not None else 1
        k_last = last.built.size.get("coarse_factor", 1) if last is not None else 1
        if k_last > 1:
            claims.append(f"lower bound (coarse level k = {k_last}): the randomised rounding of the noise to the multiples "
                          f"of k is (epsilon, delta)-DP on kZ for the shifts up to sensitivity/k = {self.D // k_last}; the "
                          "LP on the nodes, priced at the cost less its proven chord errors, is a relaxation [derived]")
        if k_up > 1:
            claims.append(f"upper bound (coarse level k = {k_up}): the coarse LP's masses spread evenly over blocks of k "
                          "integers, audited for every shift 0 < |v| <= sensitivity and priced at the integers")
        if self.far_upper is not None and best_up is self.far_upper:
            claims.append(f"upper bound: the audited pmf shifted by {self.shift} (a shift of (epsilon, delta)-DP noise is "
                          "(epsilon, delta)-DP), priced with rigorous enclosures: the cost is cheaper far from 0")
        if status == "infimum_at_infinity":
            claims.append("lower bound: E L(X) >= inf L for every noise X, and the cost's floor on ℤ is proven by "
                          "interval arithmetic")
        if alp is None:
            pass
        elif alp.symmetry == "orbits":
            claims.append("signed-permutation orbit reduction: p constant on each orbit of the box, one shift per orbit "
                          "and one hockey-stick row per stabiliser orbit of inner points; the cost's lower enclosures were "
                          "proven equal (exact comparison at every point of the box) on each orbit, which is all the "
                          "relaxation uses (averaging any mechanism over the group keeps its box costs and outside mass, "
                          "and each hockey-stick sum is convex); no monotonicity is assumed")
        elif alp.even:
            claims.append("even reduction p(x) = p(-x): the cost's lower enclosures (the node prices at a coarse level) "
                          "were proven equal at x and -x at every "
                          "point of the box (exact comparison), which is all the relaxation uses (symmetrising a mechanism "
                          "keeps its box costs and outside mass; the hockey-stick sums are convex); no monotonicity is "
                          "assumed")
        return {
            "mechanism": mech,
            "audit": audit_record(best_up, eps, delta, "hockey-stick sums for every shift, outward-rounded"),
            "truncation": {"dim": d, "lower_bound": getattr(self, "initial_lower_source", "none"),
                           "upper_bound": "the truncated discrete Laplace law on N (finite support)"} if alp is None else {
                "half_width": alp.N * k_last, "box_half_width": alp.R * k_last, "dim": d,
                "lower_bound": ("relaxation: hockey-stick rows on the inner box, outer layer without rows, far mass"
                                if d > 1 else "relaxation: hockey-stick rows between box points, one edge row per shift "
                                "with the far mass, far mass priced at the cost's minimum outside"),
                "upper_bound": "restriction: the pmf on the box (zero outside), audited",
            },
            "claims": claims,
        }
