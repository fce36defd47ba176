"""The (ε, δ)-DP family on ℝ (1-D): the lattice LP of :mod:`optmech.problems.approx_cells`.

A size is ``(n, N)``: n cells per sensitivity (h = Δ/n) and the inner half-width N in nodes.  Each
step builds the integer (ε, δ) relaxation with sensitivity n whose node prices are those of the
randomised-rounding relaxation (:class:`~optmech.problems.approx_cells.NodeCosts`); its repaired
dual is a certified lower bound on V*(ℝ).  Its primal, read as the density q_k/h on the centred
cells, is audited for every integer shift 0 < |m| <= n (which is the audit of every real shift
|t| <= Δ, by the linearity (1) of that module's docstring), mixed with a cheap law when solver
tolerances leave δ(ε) above δ, and priced by rigorous upper bounds of the cost's mean on each cell.

The loop widens the window while the relaxation uses its outer layer or far mass, and otherwise
halves the cells (the bracket's width is O(h²) for smooth costs and for |x|).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.budget import LPPlan, gib
from optmech.errors import SpecError
from optmech.families.approx import audit_record, reference_values, upper_from_pmf
from optmech.families.base import Built, Step, Stop, default_lower
from optmech.mechanisms.approx_bounds import thm8_n
from optmech.problems.approx import build_approx, estimate_size
from optmech.problems.approx_cells import NodeCosts, cell_mean_upper, cells_law
from optmech.result import ReferenceValue

_U = 2.0**-53
#: Cells per sensitivity of the first LP (``--resolution`` overrides it).
FIRST_CELLS = 8
#: The window is widened (not refined) while the layer and far mass exceed this share of the target gap.
SPILL_SHARE = 1e-3


class ApproxRealFamily:
    """(ε, δ)-DP on ℝ, d = 1 (δ > 0): sizes ``(n, N)``, module docstring."""

    name = "approx_real"
    max_steps = 12

    def __init__(self, problem, ctx) -> None:
        self.problem, self.ctx = problem, ctx
        self.eps, self.delta = problem.epsilon, problem.delta
        self.D = float(problem.sensitivity)
        cost = problem.cost
        floor = cost.domain_minimum(integer=False)
        if not floor >= 0.0:
            raise SpecError(f"(epsilon, delta)-DP on the real line needs a cost proven nonnegative on ℝ; the proven "
                            f"floor of {cost} is {floor:g}")
        self.prev_gap = math.inf
        self._plans: dict = {}

    def initial_uppers(self) -> list:
        return []

    def start(self) -> tuple[int, int]:
        res = getattr(self.problem.domain, "resolution", None)
        n = int(res) if res else FIRST_CELLS
        blocks = thm8_n(self.eps, self.delta)
        return n, int(2 * n * (math.ceil(blocks) + 2))

    def plan(self, size: tuple[int, int]) -> LPPlan:
        """The LP of ``size`` before it is built: the even or full hockey-stick LP with sensitivity n."""
        if size not in self._plans:
            n, N = size
            even = self.problem.symmetry != "off" and self.problem.cost.is_even()
            cols, nnz = estimate_size(1, n, N, even)
            self._plans[size] = LPPlan(rows=cols + 2 * n + 1, cols=cols, nonzeros=nnz, builder="hockey_stick_cells")
        return self._plans[size]

    def estimate_bytes(self, size: tuple[int, int]) -> float:
        return self.plan(size).peak_bytes()

    def size_message(self, size: tuple[int, int], need: float, budget: float) -> str:
        lp = self.plan(size)
        return (f"the (epsilon, delta) LP on the real line needs about {gib(need)} GiB ({lp.cols} columns, "
                f"{lp.nonzeros} nonzeros; {size[0]} cells per sensitivity, half-width {size[1]} cells); the limit is "
                f"{gib(budget)} GiB: lower --resolution, raise delta or epsilon, or set OPTMECH_MAX_MEMORY_GB")

    def build(self, size: tuple[int, int]) -> Built:
        n, N = size
        nodes = NodeCosts(self.problem.cost, self.D, n)
        alp = build_approx(self.problem.cost, self.eps, self.delta, n, N, symmetry=self.problem.symmetry, nodes=nodes)
        return Built(alp.lp, {"cells_per_sensitivity": n, "half_width_cells": N, "cell_width": self.D / n},
                     (n, alp), "hockey_stick_cells")

    lower = staticmethod(default_lower)

    def _price(self, n: int):
        cost, D = self.problem.cost, self.D

        def price(p: np.ndarray, R: int) -> float:
            k = np.arange(-R, R + 1)
            nz = p > 0
            hi = cell_mean_upper(cost, k[nz], D, n)
            num = math.fsum(hi * p[nz])
            den = math.fsum(p)
            if not (math.isfinite(num) and den > 0):
                return math.inf
            return float(np.nextafter(num * (1 + 4 * _U) / (den * (1 - 4 * _U)), np.inf))

        return price

    def upper(self, built: Built, raw):
        n, alp = built.model
        up = upper_from_pmf(self.problem.cost, alp.box_masses(raw.x), alp.R, self.eps, self.delta, n,
                            price=self._price(n))
        up.cells = n  # the cells its masses live on (the best upper bound may come from an earlier step)
        return up

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        _, alp = built.model
        return {"mixed_weight": upper.mixed, "layer_and_far_mass": alp.far_mass(raw.x) + alp.layer_mass(raw.x)}

    def grow(self, step: Step, best) -> tuple[int, int] | Stop:
        """Widen while the relaxation uses its outer layer or far mass; else refine the cells by the
        factor the O(h²) width of the bracket asks for (1.5 to 4), on a window fitted to the
        support the LP found (with a quarter more and two sensitivities to spare)."""
        n, alp = step.built.model
        gap, up = step.gap, step.upper
        spill = step.diagnostics["layer_and_far_mass"]
        target = self.problem.target_gap
        prev, self.prev_gap = self.prev_gap, gap
        if not up.certified and spill <= SPILL_SHARE * target:
            return Stop(f"the upper bound could not be certified: {up.note}")
        if spill > SPILL_SHARE * target:
            return n, 2 * alp.N
        if step.iteration >= 2 and gap > 0.9 * prev:
            return Stop("finer cells do not help: the remaining gap is the solver's accuracy")
        factor = min(4.0, max(1.5, 1.15 * math.sqrt(gap / target))) if math.isfinite(gap) and gap > 0 else 2.0
        m = int(math.ceil(n * factor))
        p = alp.box_masses(step.raw.x)
        used = np.flatnonzero(p > 1e-15 * max(float(p.max()), 1e-300))
        reach = (float(np.max(np.abs(used - alp.R))) / n) if used.size else float(alp.N) / n  # in sensitivities
        N = int(math.ceil((1.25 * reach + 2.0) * m))
        return m, min(N, int(math.ceil(alp.N * m / n)))

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        return continuous_reference_values(self.problem, lower, upper)

    def report(self, best, last: Step | None, status: str) -> dict:
        from optmech.mechanisms.tabulated import Tabulated

        eps, delta, D = self.eps, self.delta, self.D
        best_up = best.upper
        n, alp = last.built.model
        mech = None
        if best_up is not None:
            mech = Tabulated.from_law(cells_law(best_up.p, best_up.R, D, best_up.cells), eps, delta=delta)
        claims = [
            "(epsilon, delta)-DP on the real line: the hockey-stick divergence for every real shift |t| <= sensitivity "
            "[GV13, (18)]",
            f"upper bound: the LP's masses as a density constant on {n} centred cells per sensitivity; for such a density "
            "the hockey-stick divergence is linear in the shift between multiples of the cell width, so the audit of the "
            "integer shifts 1..n (outward rounding) is the audit of every real shift; cost = the masses times proven "
            "upper bounds of the cost's mean on each cell"
            + (f" (mixed at weight {best_up.mixed:.3g} with a law of delta <= delta/2, to absorb solver tolerances)"
               if best_up is not None and best_up.mixed > 0 else ""),
            "lower bound: the randomised rounding of any (epsilon, delta)-DP noise to the nodes k*h is (epsilon, delta)-DP "
            "for the integer shifts |m| <= n (post-processing that commutes with shifts by whole cells); its expected "
            "node cost exceeds E L(X) by at most the proven chord error of L between nodes, which the node prices "
            "subtract; the relaxation LP (window, outer layer, far mass priced at the cost's proven minimum beyond it) "
            "is certified through its repaired dual",
        ]
        if alp.even:
            claims.append("even reduction p(x) = p(-x): the node prices were proven equal at k and -k at every node of the "
                          "box (exact comparison), which is all the relaxation uses; no monotonicity is assumed")
        return {
            "mechanism": mech,
            "audit": audit_record(best_up, eps, delta,
                                  "hockey-stick sums of the cell masses for every integer shift 1..n (exact for every "
                                  "real shift of a cell-constant density), outward-rounded"),
            "truncation": {
                "cells_per_sensitivity": n, "cell_width": D / n, "half_width_cells": alp.N, "box_half_width_cells": alp.R,
                "lower_bound": "relaxation: randomised rounding to the nodes; hockey-stick rows on the inner nodes, outer "
                               "layer without rows, far mass",
                "upper_bound": "restriction: density constant on the centred cells of the box (zero outside), audited",
            },
            "claims": claims,
        }


def continuous_reference_values(problem, lo: float, up: float) -> list[ReferenceValue]:
    """The reference mechanisms for (ε, δ) on ℝ (:mod:`optmech.mechanisms.approx_references`)."""
    from optmech.mechanisms.approx_references import continuous_approx_references

    return reference_values(continuous_approx_references(problem.cost, problem.epsilon, problem.delta,
                                                         problem.sensitivity), lo, up)
