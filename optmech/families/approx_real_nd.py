"""The (ε, δ)-DP family on ℝ^d (d >= 2, ℓ1 or ℓ2 sensitivity, costs l1, l2, l2sq): the lattice LPs of
:mod:`optmech.problems.approx_cells_nd`.

A size is ``(n, N)``: n cells per sensitivity (h = Δ/n) and the inner half-width N in nodes.  Each
step solves two LPs on ℤ^d, both with the signed-permutation reduction of
:mod:`optmech.problems.approx` (the shift sets, the box and the prices are invariant under it):

* the relaxation: node prices, the lattice shifts of the sensitivity ball; its duals (computed at
  the budget δ − s and certified against the budget δ, as in :mod:`optmech.families.approx_real`)
  give the lower bound;
* the candidate: cube-cell mean prices, the corner shifts of equation (1) of that module (every
  real shift of norm <= Δ); its primal, audited exactly on those shifts and priced by proven cell
  means, gives the upper bound.

The loop widens the window while the relaxation uses its outer layer or far mass, else doubles n.

The Result's mechanism is the law whose cost is the bracket's upper end: the audited cube density
(:class:`~optmech.mechanisms.solved.CubePMFND`, masses per signed-permutation orbit), or, when a
closed-form reference is cheaper, that reference with its own calibration (``LaplaceND`` for ℓ1
sensitivity, ``L2Laplace`` for ℓ2, ``UniformContinuous``, the ℓ2 ``StaircaseND``, and for the
Gaussians :class:`~optmech.mechanisms.approx.gaussian_nd.GaussianND`: the d-D pair has the 1-D curve).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from optmech.audit import hockey_stick_array
from optmech.budget import LPPlan, gib
from optmech.certify import dual_lower_bound
from optmech.costs_nd import as_cost_nd
from optmech.errors import SpecError
from optmech.families.approx import (
    audit_record,
    closed_form_uppers,
    outward_mean,
    reference_values,
)
from optmech.families.approx_radial import (
    MARGINAL_GAP,
    MARGINAL_SECONDS,
    MAX_RESOLUTION,
    RadialUpper,
    radial_applies,
    radial_marginal_lower,
    radial_slabs_lower,
    upper_law_reach,
    radial_shell_upper,
)
from optmech.families.base import Built, Step, Stop
from optmech.lp import LinearProgram
from optmech.mechanisms.approx.bounds import thm8_n
from optmech.problems.approx import build_approx
from optmech.problems.approx_cells_nd import (
    COSTS,
    NORMS,
    audit_shifts,
    ball_shifts,
    cell_mean_upper_nd,
    cell_prices,
    node_prices,
)
from optmech.result import ReferenceValue

#: Shells per sensitivity of the one radial shell LP solved when the user fixes the cube LP's ``--resolution``,
#: and the seconds of the marginal bound's 1-D solve then.
RADIAL_QUICK_RESOLUTION, MARGINAL_QUICK_SECONDS = 10, 2.0
#: Seconds at most of the slab relaxation's lower bound, and the seconds left it needs to run.
SLABS_SECONDS, SLABS_MIN_LEFT = 45.0, 4.0
#: Shares of the time left of the radial shell law (upper end) and of the slab relaxation (lower end), whether a
#: cube-cell LP follows them (d <= 3) or none fits.  Measured for a radial cost at d = 2, eps = 1, delta = 1e-3,
#: 60 s: the first cube LP's lower end was 1.7515 (its next step refused), the shell-pair relaxation of an earlier
#: version 1.862 with 95 % of the time left and 1.793 with 80 %; the slab relaxation 1.912 with 95 %.
RADIAL_SHARE, SLABS_SHARE = 0.3, 0.95
#: Cells per sensitivity of the first LP (``--resolution`` overrides it).
FIRST_CELLS = {2: 4, 3: 2}
SPILL_SHARE = 1e-3


@dataclasses.dataclass
class _Model:
    n: int
    alp: object
    lp_true: LinearProgram


class _Upper:
    """An audited cell pmf on the box [−R, R]^d and its outward-rounded cost."""

    def __init__(self, p, R, value, realised, certified, note="", shifts_delta=()):
        self.p, self.R, self.value, self.realised_delta = p, R, value, realised
        self.certified, self.note, self.mixed = certified, note, 0.0
        self.shifts_delta = np.asarray(shifts_delta, dtype=float)
        self.n = None  # cubes per sensitivity of the audit (set by ``_audit``)


def _estimate(d: int, shifts: int, R: int, N: int) -> tuple[int, int]:
    """(columns, nonzeros) of the signed-permutation-reduced LP: points/|G| plus, per shift orbit,
    inner points/|Stab| — in all about |S|·(2N+1)^d/|G| rows (|G| = 2^d·d!)."""
    G = 2**d * math.factorial(d)
    p = (2 * R + 1) ** d // G + (R + 1) ** (d - 1) + 1
    t = shifts * (2 * N + 1) ** d // G + shifts
    return p + 1 + t, 4 * t + p + 1


class ApproxRealNDFamily:
    """(ε, δ)-DP on ℝ^d, d >= 2 (δ > 0): sizes ``(n, N)``, module docstring."""

    name = "approx_real_nd"
    max_steps = 8

    def __init__(self, problem, ctx) -> None:
        self.problem, self.ctx = problem, ctx
        self.eps, self.delta, self.d = problem.epsilon, problem.delta, int(problem.dim)
        self.D = float(problem.sensitivity)
        self.norm = problem.norm
        self.slack_scale = 1.0
        self._radial_law = None  # the audited radial shell law of initial_uppers: its reach sizes the slab window
        cost = problem.cost
        cost = as_cost_nd(getattr(cost, "spec", cost) if not hasattr(cost, "dim") else cost, self.d)
        if cost.kind == "expr":
            whole = np.full(self.d, -np.inf), np.full(self.d, np.inf)
            floor = float(cost.enclose_box(*whole)[0])
            if not floor >= 0.0:
                raise SpecError(f"(epsilon, delta)-DP on R^d needs a cost proven nonnegative on R^d; the enclosure of "
                                f"{cost.spec} over R^{self.d} reaches {floor:g}")
        elif cost.kind not in COSTS:
            raise SpecError(f"(epsilon, delta)-DP on R^d supports the costs {', '.join(COSTS)} and expressions in "
                            f"x1..x{self.d}, got {cost.spec}")
        if self.norm not in NORMS:
            raise SpecError(f"(epsilon, delta)-DP on R^d supports l1 and l2 sensitivity, got {self.norm!r}")
        self.expression = cost.kind == "expr"
        self.cost = cost if self.expression else cost.kind  # named costs travel as their names
        self._plans: dict = {}
        #: ℓ2 sensitivity with l2/l2sq: the radial upper end and the marginal lower bound (:mod:`approx_radial`)
        self.radial = not self.expression and radial_applies(self.norm, self.cost, self.d)
        self.radial_log: list[dict] = []
        self._marginal: tuple[float, str] | None = None
        self._pending_interrupt: KeyboardInterrupt | None = None

    def _cube_lp_fits(self) -> bool:
        from optmech.budget import memory_budget

        if self.d > 8:  # (2R + 1)^d cells: far beyond any memory (and beyond a float)
            return False
        return self.estimate_bytes(self._first_size()) <= memory_budget()

    def initial_uppers(self) -> list:
        """The valid closed-form references (ℓ2-Laplace or i.i.d. Laplace, the analytic Gaussian, ...) as
        certified upper bounds (:func:`~optmech.families.approx.closed_form_uppers`); for ℓ2 sensitivity
        with ``l2``/``l2sq`` also the audited radial shell law (:func:`~optmech.families.approx_radial.radial_shell_upper`),
        within 30 % of the time (:data:`RADIAL_SHARE`).  An interrupt there keeps what was found and is raised again by :meth:`start`."""
        if self.expression:  # the references' costs are closed forms of the named costs
            return []
        out = closed_form_uppers(self.cost, self.eps, self.delta, self.D, dim=self.d, norm=self.norm)
        if not self.radial or self.ctx is None:
            return out
        share = RADIAL_SHARE * self.ctx.remaining()
        fixed = RADIAL_QUICK_RESOLUTION if self.size_is_explicit else None  # --resolution: one quick shell LP

        up, self._pending_interrupt = self._radial_search(share, resolution=fixed)
        self._radial_law = up
        return out + ([up] if up is not None else [])

    def fallback_uppers(self) -> list:
        """When no cube-cell LP fits the time or memory: the radial search goes on with most of the time left
        (:func:`~optmech.families.approx_radial.radial_shell_upper`), refining the best law further where its
        refinement had not converged, then from the next resolution where that fits."""
        if not self.radial or self.ctx is None or self.size_is_explicit or self._pending_interrupt is not None:
            return []
        tried = [r for r in self.radial_log if not r.get("refined")]
        start = 2 * max(r["resolution"] for r in tried) if tried else None
        last = max(tried, key=lambda r: r["resolution"])["seconds"] if tried else None
        law = self._radial_law
        resume = law if isinstance(law, RadialUpper) and not law.converged else None
        if resume is None and start is not None and start > MAX_RESOLUTION:
            return []
        # an interrupt: the loop answers next
        up, _ = self._radial_search(0.85 * self.ctx.remaining(), start=start, resume=resume, last_seconds=last)
        if up is not None and (law is None or up.value < law.value):
            self._radial_law = up
        return [up] if up is not None else []

    def _radial_search(self, seconds: float, **kw) -> tuple:
        """(best radial shell law or None, the interrupt that stopped the search or None) of
        :func:`~optmech.families.approx_radial.radial_shell_upper` within ``seconds``; its LP records join
        :attr:`radial_log`, those before an interrupt too."""
        try:
            up, log = radial_shell_upper(self.cost, self.eps, self.delta, self.D, self.d, self._solve, seconds, **kw)
            stopped = None
        except KeyboardInterrupt as exc:  # keep what finished
            up, log, stopped = getattr(exc, "radial_best", None), getattr(exc, "radial_log", []), exc
        self.radial_log += log
        return up, stopped

    def _solve(self, lp: LinearProgram, seconds: float):
        """Solve ``lp`` through the context within about ``seconds``."""
        return self.ctx.solve_lp(lp, share=min(1.0, seconds / max(self.ctx.remaining(), 1e-9)))

    @property
    def size_is_explicit(self) -> bool:
        """Whether the user chose the resolution (``--resolution``): a first LP beyond memory is then
        refused; otherwise the loop answers with the bracket found without an LP."""
        return getattr(self.problem.domain, "resolution", None) is not None

    def fallback_lower(self) -> tuple[float, str]:
        """When even the first LP does not fit the time limit: the marginal bound where it was computed
        (:func:`~optmech.families.approx_radial.radial_marginal_lower`), else the cost's floor (norms, or an
        expression proven nonnegative on R^d)."""
        if self._marginal is not None:
            return self._marginal
        return 0.0, ("the cost's floor on R^d (proven nonnegative)" if self.expression else
                     "the cost's floor on R^d (l1, l2 and l2sq are nonnegative)")

    def initial_lower(self) -> float:
        """The marginal bound for ℓ2 sensitivity with ``l2``/``l2sq`` (within :data:`MARGINAL_SECONDS` and 15 % of
        the time left), and the slab relaxation's where larger
        (within :data:`SLABS_SECONDS` and :data:`SLABS_SHARE` of the time left, when :data:`SLABS_MIN_LEFT` seconds
        were left; an interrupt there keeps its best bound and is raised again by :meth:`start`);
        else the cost's floor, held from the start: an interrupt before the first LP still has a bracket."""
        if self.radial and self._pending_interrupt is None and self.ctx is not None:
            gap = min(0.1, max(MARGINAL_GAP, self.problem.target_gap / 10))  # far below the bracket's own target
            cap = MARGINAL_QUICK_SECONDS if self.size_is_explicit else MARGINAL_SECONDS  # --resolution: a quick run
            self._marginal = radial_marginal_lower(self.cost, self.eps, self.delta, self.D, self.d,
                                                   min(cap, 0.15 * self.ctx.remaining()), gap)
            # the slab relaxation, where stronger, when the time left affords its LP and certificate
            left = self.ctx.remaining()
            if not self.size_is_explicit and left >= SLABS_MIN_LEFT:
                seconds = min(SLABS_SECONDS, SLABS_SHARE * left)
                try:
                    law = self._radial_law
                    reach = upper_law_reach(law, self.d, self.D) if law is not None else None
                    slabs = radial_slabs_lower(self.cost, self.eps, self.delta, self.D, self.d, self._solve, seconds,
                                               reach)
                except KeyboardInterrupt as exc:  # keep what finished; start() raises the interrupt again
                    slabs, self._pending_interrupt = getattr(exc, "slabs_best", None), exc
                if slabs is not None and (self._marginal is None or slabs[0] > self._marginal[0]):
                    self._marginal = slabs
        return self.fallback_lower()[0]

    def start(self) -> tuple[int, int] | Stop:
        if self._pending_interrupt is not None:  # interrupted in initial_uppers: the loop now holds their bounds
            exc, self._pending_interrupt = self._pending_interrupt, None
            raise exc
        if self.radial and not self.size_is_explicit and not self._cube_lp_fits():
            from optmech.budget import memory_budget

            need = (f"about {self.estimate_bytes(self._first_size()) / 2**30:.2g} GiB" if self.d <= 8 else
                    "more than any memory")
            return Stop(f"the cube-cell LP on R^{self.d} does not fit in memory ({need} at its coarsest size, limit "
                        f"{memory_budget() / 2**30:.3g} GiB): the bracket is the radial path's (the larger of the marginal "
                        "lower bound and the slab relaxation's, and the audited radial shell law)")
        return self._first_size()

    def _first_size(self) -> tuple[int, int]:
        res = getattr(self.problem.domain, "resolution", None)
        n = int(res) if res else FIRST_CELLS.get(self.d, 2)
        # the radial mass grows like r^(d−1): a wider window than the 1-D one
        return n, int(n * (math.ceil(thm8_n(self.eps, self.delta)) + 2 * self.d))

    def plan(self, size) -> LPPlan:
        """The larger of the step's two LPs (the candidate: the corner shifts, one more layer)."""
        if size not in self._plans:
            n, N = size
            shifts = len(audit_shifts(self.d, n, self.norm)) if (n + 2) ** self.d < 10**6 else (2 * n + 3) ** self.d
            cols, nnz = _estimate(self.d, shifts, N + n + 1, N)
            self._plans[size] = LPPlan(rows=cols, cols=cols, nonzeros=nnz, builder="hockey_stick_cells_nd", lps=2)
        return self._plans[size]

    def estimate_bytes(self, size) -> float:
        return self.plan(size).peak_bytes()

    def size_message(self, size, need: float, budget: float) -> str:
        lp = self.plan(size)
        return (f"the (epsilon, delta) LP on R^{self.d} needs about {gib(need)} GiB ({lp.cols} columns, {lp.nonzeros} "
                f"nonzeros; {size[0]} cells per sensitivity, half-width {size[1]} cells); the limit is {gib(budget)} "
                "GiB: lower --resolution or --dim, raise delta or epsilon, or set OPTMECH_MAX_MEMORY_GB")

    def _slack(self) -> float:
        """s of the LPs' budget δ − s: room for the solver's feasibility tolerance, so that a candidate's
        exact audit passes at δ; multiplied by 8 after a candidate that failed by less than 1 %."""
        return min(self.delta * 1e-3, 2e-9 * self.slack_scale)

    def _with_budget(self, lp: LinearProgram, budget: float) -> LinearProgram:
        ru = lp.row_upper.copy()
        ru[lp.row_blocks["budget"]] = budget
        return dataclasses.replace(lp, row_upper=ru)

    def build(self, size) -> Built:
        n, N = size
        R = N + n
        prices = node_prices(self.cost, self.d, n, R, self.D)
        alp = build_approx(self.cost, self.eps, self.delta, n, N, dim=self.d, symmetry=self.problem.symmetry,
                           shift_set=ball_shifts(self.d, n, self.norm), prices=prices)
        lp = self._with_budget(alp.lp, self.delta - self._slack())
        return Built(lp, {"cells_per_sensitivity": n, "half_width_cells": N, "cell_width": self.D / n},
                     _Model(n, alp, alp.lp), "hockey_stick_cells_nd")

    def lower(self, built: Built, raw):
        return dual_lower_bound(built.model.lp_true, raw.row_dual, raw.objective)

    def _audit(self, p: np.ndarray, R: int, n: int) -> _Upper:
        p = np.where(np.isfinite(p), np.maximum(p, 0.0), 0.0)
        s = math.fsum(p.ravel())
        if not s > 0:
            return _Upper(p, R, math.inf, math.inf, False, "empty candidate")
        p = p / s
        per = hockey_stick_array(p, audit_shifts(self.d, n, self.norm), self.eps)
        real = float(per.max())
        side = 2 * R + 1
        pts = np.stack(np.unravel_index(np.flatnonzero(p.ravel() > 0), (side,) * self.d), axis=-1) - R
        mean = cell_mean_upper_nd(self.cost, pts, self.D, n)
        value = outward_mean(mean, p.ravel()[p.ravel() > 0], math.fsum(p.ravel()))
        ok = real <= self.delta and math.isfinite(value)
        if not ok and real <= self.delta * 1.01:  # the solver's tolerance, not the design: more slack next time
            self.slack_scale *= 8.0
        up = _Upper(p, R, value, real, ok, "" if ok else f"audit failed: delta({self.eps:g}) = {real:.6g} > "
                                                          f"{self.delta:g}", per)
        up.n = n  # the cubes' width is sensitivity / n
        return up

    def upper(self, built: Built, raw):
        """The relaxation's own primal is rarely private for the corner shifts: it is audited all the same."""
        m = built.model
        return self._audit(m.alp.box_masses(raw.x), m.alp.R, m.n)

    def extra_uppers(self, step: Step) -> list:
        """Two candidates, each audited: the relaxation's own masses on wider cubes (Δ/m for the largest
        m < n whose corner shifts they pass; free), and the candidate LP of the step's size (module
        docstring) while the time allows."""
        out = []
        m_ = step.built.model
        q = m_.alp.box_masses(step.raw.x)
        for m in range(m_.n - 1, 0, -1):
            up = self._audit(q, m_.alp.R, m)
            if up.certified:
                up.cells = m
                out.append(up)
                break
        n, N = step.built.size["cells_per_sensitivity"], step.built.size["half_width_cells"]
        if self.ctx is None or self.ctx.remaining() < 4.0 * max(step.seconds, self.ctx.elapsed()):
            return out
        R = N + n + 1
        prices = cell_prices(self.cost, self.d, n, R, N, self.D)
        alp = build_approx(self.cost, self.eps, self.delta, n + 1, N, dim=self.d, symmetry=self.problem.symmetry,
                           shift_set=audit_shifts(self.d, n, self.norm), prices=prices)
        try:
            raw = self.ctx.solve_lp(self._with_budget(alp.lp, self.delta - self._slack()), share=0.5)
        except Exception:  # noqa: BLE001 - an optional candidate: the step's own bounds stand
            return out
        if raw.x is None:
            return out
        up = self._audit(alp.box_masses(raw.x), alp.R, n)
        up.cells = n
        return out + ([up] if up.certified else [])

    def diagnostics(self, built: Built, raw, upper) -> dict:
        alp = built.model.alp
        return {"layer_and_far_mass": alp.far_mass(raw.x) + alp.layer_mass(raw.x)}

    def grow(self, step: Step, best):
        n, alp = step.built.model.n, step.built.model.alp
        spill = step.diagnostics["layer_and_far_mass"]
        if spill > SPILL_SHARE * self.problem.target_gap:
            return n, int(math.ceil(1.5 * alp.N))
        return 2 * n, 2 * alp.N

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        """The references of :func:`optmech.mechanisms.approx.references.continuous_approx_references`, each
        at its best shift, ``parameters["shift"]`` (:func:`optmech.mechanisms.shifts.shift_references_nd`,
        the rule of every family): d zeros, proven for the named costs l1, l2, l2sq
        (:func:`optmech.mechanisms.shifts.centre_is_best_nd`: convex and even in every coordinate; the
        product uniform, i.i.d. Laplace, ℓ2-Laplace, staircase and N(0, σ²I_d) are symmetric under each
        coordinate reflection).  A cost expression has none (their costs are closed forms of the named costs)."""
        from optmech.mechanisms.approx.references import continuous_approx_references
        from optmech.mechanisms.shifts import shift_references_nd

        if self.expression:  # the references' costs are closed forms of the named costs
            return []
        bounds = continuous_approx_references(self.cost, self.eps, self.delta, self.D, dim=self.d, norm=self.norm)
        return reference_values(shift_references_nd(bounds, self.cost, dim=self.d, integer=False), lower, upper)

    def _cube_mechanism(self, up: _Upper):
        """The audited cube masses as a :class:`~optmech.mechanisms.solved.CubePMFND`: density
        p_k/h^d on h(k + [-1/2, 1/2)^d), h = Δ/n, listed per signed-permutation orbit where the masses
        are exactly invariant (the reduced LPs' masses are), else cube by cube."""
        from optmech.mechanisms.solved import mechanism_from_solver_dict, orbit_sizes

        d, side = self.d, 2 * up.R + 1
        flat = np.flatnonzero(up.p.ravel() > 0)
        pts = np.stack(np.unravel_index(flat, (side,) * d), axis=-1) - up.R
        mass = up.p.ravel()[flat]
        reps, inv, counts = np.unique(np.sort(np.abs(pts), axis=1), axis=0, return_inverse=True, return_counts=True)
        inv = inv.ravel()
        lo, hi = np.full(len(reps), np.inf), np.full(len(reps), -np.inf)
        np.minimum.at(lo, inv, mass)
        np.maximum.at(hi, inv, mass)
        if np.array_equal(lo, hi) and np.array_equal(counts, orbit_sizes(reps, "signed_permutations")):
            symmetry, listed, masses = "signed permutations", reps, lo
        else:
            symmetry, listed, masses = "none", pts, mass
        return mechanism_from_solver_dict({
            "kind": "cube_pmf_nd", "dim": d, "norm": self.norm, "sensitivity": self.D, "cell_width": self.D / up.n,
            "symmetry": symmetry, "representatives": listed.tolist(), "mass": masses.tolist(),
            "epsilon": self.eps, "delta": self.delta, "realised_delta": float(up.realised_delta),
            "rule": ("density mass[i] / cell_width^d on each cube cell_width*(z + [-1/2, 1/2)^d) whose index z is "
                     "representatives[i] (symmetry none) or has sorted absolute values representatives[i] (signed "
                     "permutations); 0 elsewhere (finite support)"),
        })

    def _reference_mechanism(self, up: _Upper):
        """(mechanism or None, claim): the closed-form reference that is the upper bound, as the library
        mechanism with the reference's own calibration (``up.parameters``)."""
        from optmech.mechanisms.laplace_nd import L2Laplace, LaplaceND
        from optmech.mechanisms.uniform import UniformContinuous

        name, par = up.reference, getattr(up, "parameters", {}) or {}
        mech = None
        if name in ("laplace", "l2_laplace") and par.get("law") in ("product", "l2_laplace"):
            cls = LaplaceND if par["law"] == "product" else L2Laplace
            mech = cls(epsilon=self.eps, sensitivity=self.D, dim=self.d)
            if mech.scale == par.get("scale") and mech.dim == par.get("dim"):
                what = ("i.i.d. Laplace coordinates, pure epsilon-DP for l1 sensitivity" if cls is LaplaceND else
                        "density ~ exp(-epsilon ||x||_2 / sensitivity), pure epsilon-DP for l2 sensitivity")
                return mech, (f"mechanism: the {name} reference itself, {cls.__name__}(epsilon={self.eps!r}, "
                              f"sensitivity={self.D!r}, dim={self.d}) (scale {mech.scale!r}, the reference's "
                              f"calibration): {what} {self.D:g}, hence (epsilon, delta)-DP")
        elif name == "uniform" and "l1_sensitivity" in par:
            mech = UniformContinuous(delta=self.delta, sensitivity=par["l1_sensitivity"], dim=self.d)
            if mech.half == par.get("half_width") and mech.dim == par.get("dim"):
                return mech, (f"mechanism: the uniform reference itself, UniformContinuous(delta={self.delta!r}, "
                              f"sensitivity={mech.sensitivity!r}, dim={self.d}) (U[-a, a]^d, a = {mech.half!r}, the "
                              f"reference's calibration): (0, delta)-DP for l1 sensitivity {mech.sensitivity:g}"
                              + ("" if self.norm == "l1" else f", hence for l2 sensitivity {self.D:g} (||t||_1 <= "
                                                              "sqrt(d) ||t||_2)") + ", hence (epsilon, delta)-DP")
        elif name == "staircase" and par.get("norm") == "l2" and "gamma" in par:
            from optmech.mechanisms.staircase_nd import StaircaseND

            mech = StaircaseND(epsilon=self.eps, sensitivity=self.D, gamma=par["gamma"], dim=self.d, norm="l2")
            return mech, (f"mechanism: the staircase reference itself, StaircaseND(epsilon={self.eps!r}, sensitivity="
                          f"{self.D!r}, gamma={par['gamma']!r}, dim={self.d}, norm='l2'): density g(||x||_2) with the "
                          "1-D staircase profile g, pure epsilon-DP for l2 sensitivity (|r - r'| <= ||v||_2 by the "
                          "triangle inequality) [MDA26], hence (epsilon, delta)-DP")
        elif name in ("gaussian", "analytic_gaussian") and "sigma" in par:
            from optmech.mechanisms.approx.gaussian_nd import GaussianND

            d2 = par.get("l2_sensitivity", self.D)
            mech = GaussianND(sigma=par["sigma"], epsilon=self.eps, sensitivity=d2, dim=self.d)
            if mech.delta <= self.delta:
                return mech, (f"mechanism: the {name} reference itself, GaussianND(sigma={mech.sigma!r}, epsilon="
                              f"{self.eps!r}, sensitivity={d2!r}, dim={self.d}): N(0, sigma^2 I_d), whose pair at a "
                              f"shift v has the 1-D curve at ||v||_2, so delta(epsilon) = {mech.delta:.9g} <= delta for "
                              f"every shift of l2 norm <= {d2:g}" + ("" if self.norm == "l2" else
                                                                     " (and of l1 norm: ||v||_2 <= ||v||_1)")
                              + " [BW18, Thm 8]")
        return None, (f"mechanism: none returned; the upper bound is the {name} reference (parameters {par}), which "
                      "has no d-dimensional library mechanism with that calibration")

    @staticmethod
    def _refined_note(up: RadialUpper) -> str:
        """How the law's shells were refined at its jumps (empty when they were not)."""
        if not up.refined:
            return ""
        return (f", refined {up.refined} times at the density's jumps down to shells {up.narrowest:.3g} wide "
                "(optmech.families.approx_radial)")

    def _radial_claims(self, best) -> list[str]:
        """What the radial path did: the shell LPs (audited proposals) and the marginal bound."""
        out = ["radial path (l2 sensitivity, cost a function of ||x||_2): V* is an infimum over radial laws (rotation "
               "averaging keeps (epsilon, delta)-DP and the cost); for a nonincreasing radial density the worst shift "
               "has norm equal to the sensitivity (proven), so one shift is audited"]
        if self.radial_log:
            tried = "; ".join(f"{r['resolution']} shells per sensitivity"
                              + (f" refined at the jumps ({r['refined']})" if r.get("refined") else "")
                              + f": {r['value']:.9g} "
                              f"(audited delta {r['audited_delta']:.3g}, {'certified' if r['certified'] else 'above delta'})"
                              for r in self.radial_log)
            out.append(f"radial shell LPs (proposals, each audited and priced by proven shell means): {tried}")
        else:
            out.append("radial shell LPs: none solved within the time share")
        if self._marginal is not None:
            out.append(f"lower bound candidate: {self._marginal[1]}: {self._marginal[0]:.9g}"
                       + (" (the bracket's lower end)" if best.lower == self._marginal[0] else ""))
        return out

    def _radial_mechanism(self, up: RadialUpper):
        from optmech.mechanisms.solved import mechanism_from_solver_dict

        return mechanism_from_solver_dict({
            "kind": "radial_shell_density_nd", "dim": self.d, "norm": "l2", "sensitivity": self.D,
            "edges": up.edges.tolist(), "density": up.density.tolist(), "epsilon": self.eps, "delta": self.delta,
            "realised_delta": float(up.realised_delta),
            "rule": ("density proportional to density[i] where edges[i] <= ||x||_2 < edges[i + 1], 0 beyond edges[-1] "
                     "(normalised over the shells' volumes)"),
        })

    def report(self, best, last: Step | None, status: str) -> dict:
        n = last.built.model.n if last is not None else None
        up = best.upper
        ref = getattr(up, "reference", None)
        claims = [
            f"(epsilon, delta)-DP on R^{self.d} with {self.norm} sensitivity: the hockey-stick divergence for every real "
            "shift of norm <= sensitivity [GV13, (18)]",
        ]
        if last is not None:  # the cube-cell LPs ran
            claims += [
            "cube candidates for the upper bound: masses on the cubes h(k + [-1/2, 1/2)^d) as a cell-constant density; "
            "its hockey-stick divergence at a real shift is the multilinear interpolation of the lattice divergences "
            "at the corners of the shift's unit cube, so the exact audit (outward rounding) of every corner v with "
            "||(|v| - 1)_+|| <= n covers every real shift; cost = proven upper bounds of the cost's mean on each cube",
            "lower bound: the coordinatewise randomised rounding of any (epsilon, delta)-DP noise to the nodes is "
            "(epsilon, delta)-DP for the lattice shifts of norm <= n; the node prices subtract proven bounds of the "
            "multilinear interpolation error (0 for l1, d h^2/4 for l2sq, min(h sqrt(d)/2, d h^2/(8 r)) for l2); "
            "signed-permutation reduction (the shift sets, box and prices are invariant); duals certified against "
            "the budget delta",
            ]
        if self.radial:
            claims += self._radial_claims(best)
        mech = None
        if up is None or not up.certified:
            claims.append("mechanism: none (no certified upper bound)")
        elif isinstance(up, RadialUpper):
            mech = self._radial_mechanism(up)
            claims.append(
                f"mechanism: the audited radial shell density (radial_shell_density_nd): density g_i on the shells "
                f"e_i <= ||x||_2 < e_(i+1) ({up.edges.size - 1} shells, {up.resolution} per sensitivity beyond the inner "
                f"ball{self._refined_note(up)}), nonincreasing, zero beyond {up.edges[-1]:.6g}; (epsilon, delta) = ({self.eps:g}, {self.delta:g}) "
                f"as audited (realised delta <= {up.realised_delta:.9g}); pdf and sampler; the upper bound is its cost "
                "priced by proven shell means")
        elif ref is not None:
            claims.append(f"the upper bound is the reference mechanism {ref!r} (its own privacy proof and exact cost): "
                          "no audited cell density at the resolutions solved was cheaper")
            mech, line = self._reference_mechanism(up)
            claims.append(line)
        else:
            mech = self._cube_mechanism(up)
            claims.append(
                f"mechanism: the audited cube density (cube_pmf_nd): density p_k / h^d on the cubes h(k + [-1/2, 1/2)^d) "
                f"of the box ||k||_inf <= {up.R}, h = {self.D / up.n!r} ({up.n} cubes per sensitivity), zero elsewhere, "
                f"listed per {'signed-permutation orbit' if mech.group != 'none' else 'cube'}; (epsilon, delta) = "
                f"({self.eps:g}, {self.delta:g}) as audited (realised delta {up.realised_delta:.9g}); exact pdf and "
                "sampler; the upper bound is its cost priced by the proven cube means")
        radial_audit = ("the hockey-stick divergence of the radial shell density at one shift of l2 norm equal to the "
                        "sensitivity (the worst for a nonincreasing radial profile, proven), bounded from above by "
                        "Abel summation over the shells and proven enclosures of the sphere's coordinate cdf")
        return {
            "mechanism": mech,
            "audit": (audit_record(up, self.eps, self.delta, radial_audit if isinstance(up, RadialUpper) else
                                   "hockey-stick sums of the cube masses at every corner shift (exact for every real "
                                   "shift of norm <= sensitivity), outward-rounded") if ref is None else
                      {"realised_delta": None, "target_delta": self.delta, "epsilon": self.eps, "passed": True,
                       "shifts": 0, "method": f"closed form: the {ref} reference (its own privacy proof)",
                       "mixed_weight": None}),
            "truncation": {"cells_per_sensitivity": n, "cell_width": None if n is None else self.D / n,
                           "half_width_cells": None if last is None else last.built.model.alp.N},
            "claims": claims,
        }
