"""Pure ε-DP on ℝ^d with a cost that is a power of the sensitivity's own norm: the radial family.

For the cost ‖x‖_K^m (m = 1, 2) and sensitivity Δ in the same norm K, the K-symmetric decreasing
rearrangement (Brunn–Minkowski) reduces the problem to one dimension, the same for every norm
(:mod:`optmech.problems.radial`, where the proof is).  Its LP is solved by the radial bisection of
:mod:`optmech.solvers.chain` (or any backend of the profile) and certified by the repaired dual
(:func:`optmech.certify.dual_lower_bound`): a lower bound with O(h²) error.  The upper bound is
the staircase in the norm K at its best γ, a closed form [GKOV15, §II; derived for other norms in
:mod:`optmech.mechanisms.staircase_nd`], ε-DP by the triangle inequality, widened by
``CLOSED_FORM_WIDENING``.

Sizes are the grid's nodes per Δ, n (a power of two); the period count P is fixed by ε, d and m
(:func:`optmech.problems.radial.periods_needed`).  Each step predicts the n that reaches the
target gap from the measured O(n^{-2}) convergence.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from optmech.budget import LPPlan, gib
from optmech.certify import CLOSED_FORM_WIDENING, reference_inside
from optmech.errors import CostError, SpecError
from optmech.families.base import Built, Step, Stop, default_lower
from optmech.problems.radial import build_radial, periods_needed, radial_lp_size
from optmech.result import ReferenceValue

#: Named cost → (the norm L, the power m) with cost ‖x‖_L^m.
NORM_POWERS = {"l1": ("l1", 1), "l2": ("l2", 1), "linf": ("linf", 1), "l1sq": ("l1", 2), "l2sq": ("l2", 2),
               "linfsq": ("linf", 2)}
#: (cost kind, sensitivity norm) → the power m of the norm that the cost is.
RADIAL_COSTS = {(kind, L): m for kind, (L, m) in NORM_POWERS.items()}
#: Nodes per Δ of the first LP when no resolution is given.
FIRST_NODES = 32
#: Most nodes per Δ the family grows to.
MAX_NODES = 1 << 14


def radial_power(problem) -> int | None:
    """The power m when ``problem`` is pure ε-DP on ℝ^d (d >= 2) with cost ‖x‖_K^m for its own
    sensitivity norm K and ``symmetry="auto"``; None otherwise."""
    from optmech.costs_nd import as_cost_nd
    from optmech.spec import ApproxDP, Continuous, Lipschitz

    if problem.dim < 2 or not isinstance(problem.domain, Continuous) or problem.symmetry != "auto":
        return None
    if isinstance(problem.privacy, Lipschitz) or (isinstance(problem.privacy, ApproxDP) and problem.delta > 0):
        return None
    if getattr(problem, "objective", None) is not None and getattr(problem.objective, "name", "") == "wasserstein":
        return None
    try:
        kind = as_cost_nd(problem.cost, problem.dim).kind
    except CostError:  # not a d-D cost this family reads: another family decides
        return None
    return RADIAL_COSTS.get((kind, problem.norm))


def radial_lower_bound(epsilon: float, dim: int, power: int, solve_lp, n: int = 64) -> float:
    """A certified lower bound on the radial optimum V_rad(m) (sensitivity 1): the repaired dual of the
    radial LP with n nodes per Δ, solved by ``solve_lp`` (relative error about 2e-5 at n = 64)."""
    r = build_radial(epsilon, dim, power, n, periods_needed(epsilon, dim, power))
    raw = solve_lp(r.lp)
    return max(0.0, default_lower(Built(r.lp, {}, r, r.variant), raw).value)


#: min over x != 0 of ‖x‖_L / ‖x‖_K for (L, K) in d dimensions: 1 when ‖·‖_L >= ‖·‖_K
#: (‖x‖₁ >= ‖x‖₂ >= ‖x‖∞), else ‖x‖₂ >= ‖x‖₁/√d, ‖x‖∞ >= ‖x‖₁/d, ‖x‖∞ >= ‖x‖₂/√d.
_RANK = {"l1": 0, "l2": 1, "linf": 2}


def norm_ratio_power(L: str, K: str, d: int, m: int) -> float:
    """(min ‖x‖_L/‖x‖_K)^m rounded down (see ``_RANK``)."""
    if _RANK[L] <= _RANK[K]:
        return 1.0
    dd = float(d) if (L, K) == ("linf", "l1") else math.sqrt(d)
    v = 1.0 / dd**m
    return float(np.nextafter(v * (1 - 4 * 2.0**-53), 0.0))


def comparison_lower(cost_kind: str, norm: str, epsilon: float, dim: int, sensitivity: float, solve_lp):
    """(value, note) of the norm-comparison bound V* >= (aΔ)^m V_rad(m) for the cost ‖x‖_L^m with
    sensitivity in K, a = min ‖x‖_L/‖x‖_K: the cost is >= a^m ‖x‖_K^m, whose optimum is the radial one
    (:mod:`optmech.problems.radial`); None for an expression."""
    order = NORM_POWERS.get(cost_kind)
    if order is None:
        return None
    L, m = order
    a_m = norm_ratio_power(L, norm, dim, m)
    v = radial_lower_bound(epsilon, dim, m, solve_lp) * a_m * sensitivity**m
    v = float(np.nextafter(v * (1 - 8 * 2.0**-53), -np.inf)) if v > 0 else 0.0
    return v, (f"the norm comparison ||x||_{L[1:]}^{m} >= {a_m:.6g} ||x||_{norm[1:]}^{m} with the radial optimum of "
               f"||x||_{norm[1:]}^{m} (proven for every norm)")


def _pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


class _StaircaseUpper:
    """The staircase in the norm K at γ*: a certified upper bound (closed form, widened)."""

    certified = True

    def __init__(self, eps: float, delta: float, d: int, m: int, norm: str) -> None:
        from optmech.mechanisms.staircase_nd import StaircaseND, optimal_gamma_nd, staircase_nd_moment

        self.gamma = optimal_gamma_nd(f"pow:{m}", eps, d)
        exact = staircase_nd_moment(m, eps, delta, self.gamma, d)
        self.exact_value = float(exact)
        self.value = float(np.nextafter(exact * (1 + CLOSED_FORM_WIDENING), np.inf))
        self.mechanism = StaircaseND(epsilon=eps, sensitivity=delta, gamma=self.gamma, dim=d, norm=norm)
        self.note = (f"the staircase in the {norm} norm at its best gamma = {self.gamma:.6g} (closed form; epsilon-DP by the "
                     "triangle inequality)")


class RadialFamily:
    """Pure ε-DP on ℝ^d, cost ‖x‖_K^m, sensitivity in K: the exact 1-D radial reduction (module docstring)."""

    name = "radial_nd"
    max_steps = 6
    size_is_explicit = False

    def __init__(self, problem, ctx) -> None:
        m = radial_power(problem)
        if m is None:
            raise SpecError("the radial family needs pure epsilon-DP on R^d with the cost a power of the sensitivity's norm")
        self.problem, self.ctx = problem, ctx
        self.eps, self.d, self.m = float(problem.epsilon), int(problem.dim), m
        self.delta, self.norm = float(problem.sensitivity), problem.norm
        self.periods = periods_needed(self.eps, self.d, self.m)
        res = problem.domain.resolution
        self.fixed = res is not None
        self.size_is_explicit = self.fixed
        self.first = _pow2(res) if res is not None else FIRST_NODES
        self.rounded = res is not None and self.first != res
        self.stair = _StaircaseUpper(self.eps, self.delta, self.d, self.m, self.norm)

    # -- sizes -------------------------------------------------------------------------------------
    def start(self) -> int:
        return self.first

    def initial_uppers(self) -> list:
        return [self.stair]

    def fallback_lower(self) -> tuple[float, str]:
        return 0.0, "the cost's floor on R^d (a norm's power is nonnegative)"

    def plan(self, n: int) -> LPPlan:
        rows, cols, nnz = radial_lp_size(n, self.periods)
        return LPPlan(rows=rows, cols=cols, nonzeros=nnz, builder="radial", solver="chain")

    def estimate_bytes(self, n: int) -> float:
        return self.plan(n).peak_bytes()

    def size_message(self, n: int, need: float, budget: float) -> str:
        return (f"the radial LP needs about {gib(need)} GiB ({n} nodes per sensitivity over {self.periods} periods); the "
                f"limit is {budget / 2**30:.1f} GiB: lower --resolution or set OPTMECH_MAX_MEMORY_GB")

    def build(self, n: int) -> Built:
        r = build_radial(self.eps, self.d, self.m, n, self.periods)
        return Built(r.lp, {"nodes_per_sensitivity": n, "periods": self.periods}, r, r.variant)

    # -- certificates ------------------------------------------------------------------------------
    def lower(self, built: Built, raw):
        cert = default_lower(built, raw)
        scale = self.delta**self.m  # V*(Δ) = Δ^m V*(1)
        value = cert.value * scale
        value = float(np.nextafter(value * (1 - 4 * 2.0**-53), -np.inf)) if value > 0 else min(value, 0.0)
        # the tail argument needs the last node's cost s_N^m >= ν (module docstring of the builder)
        s_end = float(built.model.periods + 1)
        if s_end**self.m * scale < self.stair.value:
            raise SpecError("the radial grid ends before the cost exceeds the optimum (internal sizing error)")
        return dataclasses.replace(cert, value=value)

    def upper(self, built: Built, raw):
        return self.stair

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        x = raw.x
        grid = float(built.lp.c @ x) * self.delta**self.m if x is not None else math.nan
        return {"nodes_per_sensitivity": built.model.n, "grid_staircase_value": grid,
                "lp_value": float(raw.objective) * self.delta**self.m}

    def grow(self, step: Step, best) -> int | Stop:
        n = step.built.model.n
        if self.fixed:
            return Stop(f"the remaining gap is the discretisation at {n} nodes per sensitivity: raise --resolution "
                        "(the gap falls like its inverse square)")
        gap, target = step.gap, self.problem.target_gap
        factor = math.sqrt(max(gap, 1e-300) / target) * 1.3 if gap > 0 else 2.0
        nxt = _pow2(int(math.ceil(n * min(max(factor, 2.0), 16.0))))
        if nxt > MAX_NODES:
            return Stop(f"the grid reached {n} nodes per sensitivity, the family's limit ({MAX_NODES})")
        return nxt

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        from optmech.costs_nd import norm_factor
        from optmech.mechanisms.laplace_nd import l2_laplace_cost, laplace_nd_cost

        out: list[ReferenceValue] = []
        eps, d, D, norm = self.eps, self.d, self.delta, self.norm
        cost = self.problem.cost if isinstance(self.problem.cost, str) else str(self.problem.cost)
        cost = {"abs": "l1", "square": "l2sq"}.get(cost.lower(), cost.lower())

        def add(name, value, params, exact, note):
            v = float(value)
            out.append(ReferenceValue(name, v, params, reference_inside(v, lower, upper, exact), exact, note, kind="upper"))

        add("staircase", self.stair.exact_value, {"gamma": self.stair.gamma, "norm": norm}, True,
            f"the staircase in the {norm} norm at its best gamma: an upper bound (closed form); the certified bracket "
            "shows how close V* is to it")
        c = norm_factor(norm, d)  # ‖t‖₁ <= c‖t‖: i.i.d. Laplace calibrated for l1 sensitivity cΔ
        scale = c * D / eps
        if cost == "linfsq":  # max of d i.i.d. Exp(s) is Σ_i s E_i / i (Rényi): E M² = s²(H_d² + Σ 1/i²)
            lap = scale**2 * (math.fsum(1.0 / i for i in range(1, d + 1)) ** 2 + math.fsum(1.0 / i**2 for i in range(1, d + 1)))
        else:
            lap = laplace_nd_cost("pow:2" if cost == "l1sq" else cost, eps / c, D, d)  # pow:2 is ‖x‖₁²
        add("laplace", lap, {"scale": scale}, cost != "l2",  # E‖X‖₂ of i.i.d. Laplace is a quadrature
            f"upper bound: i.i.d. Laplace, epsilon-DP for {norm} sensitivity {D:g}")
        if norm == "l2":
            try:
                add("l2_laplace", l2_laplace_cost(cost, eps, d, D), {"scale": D / eps}, cost != "linf",
                    "upper bound: density proportional to exp(-epsilon ||x||_2 / Delta) [KHP15]")
            except SpecError:
                pass
        from optmech.mechanisms.shifts import shift_references_nd  # shift 0, proven for these costs

        return shift_references_nd(out, cost, dim=d, integer=False)

    def report(self, best, last: Step | None, status: str) -> dict:
        norm, d, m = self.norm, self.d, self.m
        what = f"||x||_{norm[1:]}" + ("^2" if m == 2 else "")
        claims = [
            f"pure epsilon-DP on R^{d}, sensitivity {self.delta:g} in the {norm} norm, cost {what}: exactly the 1-D radial "
            "problem (proven: replacing each level set of an epsilon-DP density by the centred ball of the same volume "
            "keeps epsilon-DP by the Brunn-Minkowski inequality and does not raise a nondecreasing cost of the norm), the "
            "same for every norm",
            "lower bound: the repaired dual of the radial LP (nodes on a grid of the radius, each atom of the tail measure "
            "priced at the ball's cost minus the bound h^2/8 max C'' of its interpolation error): a certificate for the "
            "continuous problem, error O(h^2)",
            f"upper bound: {self.stair.note}, its exact expected cost widened by {CLOSED_FORM_WIDENING:g} relative",
        ]
        if last is not None:
            g, v = last.diagnostics.get("grid_staircase_value"), last.diagnostics.get("lp_value")
            if g is not None and v is not None and math.isfinite(g) and v > 0:
                claims.append(f"checked, not certified: on the last grid the best staircase with its steps on the grid "
                              f"has LP objective {g:.12g} and the LP's dual optimum is {v:.12g} (relative difference "
                              f"{abs(g - v) / v:.1e}): the optimal radial profile on the grid is a staircase")
        if self.rounded:
            claims.append(f"resolution {self.problem.domain.resolution} was rounded up to {self.first} nodes per "
                          "sensitivity (the radial grid needs a power of two for exact node radii)")
        lp_info: dict = {"periods": self.periods}
        if last is not None:
            lp_info |= {"resolution": last.built.model.n, "cell_width": self.delta / last.built.model.n,
                        "grid_staircase_value": last.diagnostics.get("grid_staircase_value"),
                        "lp_value": last.diagnostics.get("lp_value")}
        return {
            "mechanism": self.stair.mechanism, "lp": lp_info, "claims": claims,
            "audit": {"realised_epsilon": None, "target_epsilon": self.eps, "passed": True,
                      "method": f"closed form: the staircase in the {norm} norm (triangle inequality)",
                      "tail_mass_bound": None},
            "truncation": {"half_width": (self.periods + 1) * self.delta, "dim": d, "norm": norm,
                           "lower_bound": "radial relaxation: atoms beyond the last node and privacy rows beyond "
                                          f"{self.periods} periods dropped (a relaxation)",
                           "upper_bound": "closed form (no truncation)"},
        }
