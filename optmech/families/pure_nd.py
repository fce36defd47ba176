"""The pure ε-DP family in d dimensions: LPs of :mod:`optmech.problems.pure_nd` → certificates
(the loop is :func:`optmech.drive.run`).

Lower bound: the repaired dual of the relaxation (lattice points; on ℝ^d the nodes of the randomised
rounding at second-order prices for the named convex costs, :func:`optmech.problems.pure_nd.node_costs`, and
for expressions at prices from interval second-order jets where the cost is proven C² on a cube,
:func:`optmech.problems.pure_nd.expression_node_costs`), as in 1-D.

The problem in the builders' terms, the LP plans and the upper end of an LP solution (the majorant
repair, extension and audit) are in :mod:`optmech.families.pure_nd_setup`; the closed-form upper ends
and the references in :mod:`optmech.families.pure_nd_references`.
"""

from __future__ import annotations

import dataclasses
import math
import time

from optmech.budget import BASELINE_BYTES, FINAL_SECONDS, LPPlan, gib, memory_budget
from optmech.certify import CLOSED_FORM_WIDENING, PRIVACY_MARGIN
from optmech.errors import SolveFailed
from optmech.families.base import Built, Step, Stop, default_lower
from optmech.result import ReferenceValue
from optmech.families.pure_nd_references import (ReferenceUpper, closed_form_uppers_nd, dominated_uppers,
                                                 lattice_staircase_upper, linear_uppers, references_nd)
from optmech.problems.pure_nd import RING_FROM, RING_WIDTH, SECOND_ORDER_COSTS, PureNDLP
from optmech.families.pure_nd_setup import (LAYER_ORBIT_LIMIT, LAYERED_SHELLS, Setup, Upper, ball_orbits, lp_bytes,
                                            lp_plan, radius, setup_for, upper_from_lp)

__all__ = ["PureNDFamily", "REFINE_TIME_EXPONENT", "refine_seconds", "setup_for", "upper_from_lp"]


class PureNDFamily:
    """Pure ε-DP on ℤ^d or ℝ^d (cells), or the ℓ1-layer (shell) LP with ``layered=True``.

    Sizes are the domain's half-width R (lattice units), grown by half (whole multiples of the
    sensitivity) while the gap is not the discretisation's.  On the continuous domain each step
    also solves the cell restriction LP for its upper bound, unless the thin-shell layered LP
    (solved once, first) already gives a certified, tighter one.  When the remaining gap is the
    discretisation's and the resolution was not given (``Continuous()``), the cells are halved
    (``REFINE_FACTOR``) on the same region while :func:`refine_seconds` predicts that the finer LP fits the
    time left: the second-order prices close the gap like h² (about 4× per halving) where the relaxation's
    shifts are the ball's own (ℓ1, ℓ∞), and refinement stops once a halving gains less than
    ``REFINE_MIN_GAIN``.
    """

    name = "pure_nd"
    max_steps = 6
    #: cells per Δ are multiplied by this at each refinement
    REFINE_FACTOR = 2
    #: a refinement must shrink the gap by at least this factor for the next one to be tried
    REFINE_MIN_GAIN = 1.5
    #: a larger domain must shrink the bracket's width U - L to at most this share for the next one to be tried
    GROWTH_MIN_GAIN = 0.75
    #: row generation (ℓ2 sensitivity on cells): rounds at most, and the share of the time left a relaxation's
    #: re-solve may take (the restriction's may take all of it: its law must meet every row before its repair)
    GENERATE_ROUNDS, GENERATE_SHARE = 4, 0.25

    def __init__(self, problem, ctx, *, layered: bool = False) -> None:
        from optmech.spec import Continuous

        self.problem, self.ctx = problem, ctx
        self.s = setup_for(problem, layered=layered)
        self.fine: Upper | None = None
        self.prev_gap = math.inf
        self._plans: dict = {}
        # the resolution is the family's to choose only when the user did not give one
        self.refinable = (self.s.cells and not self.s.layered and isinstance(problem.domain, Continuous)
                          and problem.domain.resolution is None)
        self.gap_before_refining: float | None = None
        self.coarsened_from: int | None = None  # the default resolution, when the first LP would not have fitted
        if self.refinable:
            self._fit_first_resolution(getattr(ctx, "time_limit", math.inf))
        self.resolutions: list[int] = []  # of the cell LPs solved, in order
        self.generated_rows = 0  # rows row generation added (ℓ2 sensitivity on cells)
        self._built_at = time.perf_counter()  # when the last relaxation was built: its solve's seconds follow
        self._final_raw: tuple | None = None  # (built, the solution after row generation)
        # (resolution, audited value, seconds) of the last restriction LP
        self._restriction: tuple[int, float, float] | None = None
        self._bracket: tuple[float, float] | None = None  # (lower, upper) when the last step grew
        self._skipped_at: int | None = None  # the resolution whose restriction LP was skipped, and why
        self._skip_note = ""

    def _fit_first_resolution(self, time_limit: float) -> None:
        """Halve the default resolution (down to 2 cells per Δ) while the first relaxation LP would have more rows
        than :func:`first_step_rows` allows for the time limit: a coarse bracket instead of none (ℓ∞ sensitivity,
        ‖x‖₁, ε = 0.5 in d = 2: 310,246 rows at 4 cells per Δ, which did not finish in 60 s and left the
        norm comparison's 0.33; at 2 cells per Δ 40,756 rows and 0.0026 in 3.9 s; measured)."""
        allowed = first_step_rows(time_limit)
        while self.s.n_lat > 2 and lp_plan(self.s, radius(self.s)).rows > allowed:
            self.coarsened_from = self.coarsened_from or self.s.n_lat
            self.s = dataclasses.replace(self.s, n_lat=max(2, self.s.n_lat // 2))

    def _coupled_layers(self) -> bool:
        """ℤ^d, ℓ1 sensitivity, cost ‖x‖₁, symmetry "auto": the coupled layer bound applies
        (:mod:`optmech.problems.lattice_layers`)."""
        s = self.s
        return (not s.cells and not s.layered and s.norm == "l1" and s.cost.kind == "l1" and s.d >= 2
                and self.problem.symmetry == "auto")

    def initial_uppers(self) -> list:
        """The fine layered upper bound (ℓ1, costs l1/l2sq) and, on ℝ^d, the exact closed-form ε-DP
        laws (:func:`closed_form_uppers_nd`); on ℤ^d with the coupled layer bound, the best ℓ1 lattice
        staircase: the bracket's upper end is the best of them and the LPs'."""
        if self._coupled_layers():
            return [lattice_staircase_upper(self.s)]  # the lattice staircase: V* in every case solved so far
        out = []
        if self.s.cells:
            need, _ = lp_bytes(self.s, radius(self.s))
            if need <= memory_budget():
                self.fine = _fine_layered_upper(self.s, self.ctx)
            if self.s.cost.kind != "expr" and not self.s.layered:  # the layered variant bounds layered laws only
                out = closed_form_uppers_nd(self.s)
            elif not self.s.layered:  # an expression proven below a named cost: that cost's laws bound it;
                # a linear combination of coordinate terms and norms: the laws priced exactly for it; independent
                # Laplace laws with their own scales, priced on cells (optmech.families.pure_nd_product)
                from optmech.families.pure_nd_product import PRODUCT_SECONDS, product_laplace_uppers

                out = (dominated_uppers(self.s) + linear_uppers(self.s)
                       + product_laplace_uppers(self.s, min(PRODUCT_SECONDS, 0.1 * self.ctx.time_limit)))
        return ([self.fine] if self.fine is not None and self.fine.certified else []) + out

    def start(self):
        """The domain's half-width R, or first the coupled ℓ1-layer LP ``("layers", R)`` where it applies."""
        if self._coupled_layers() and ball_orbits(radius(self.s), self.s.d) <= LAYER_ORBIT_LIMIT:
            return ("layers", radius(self.s))
        return radius(self.s)

    def initial_lower(self) -> float:
        """On ℝ^d with a named cost and ``symmetry="auto"``: the norm-comparison bound
        (:func:`optmech.families.radial.comparison_lower`).  A cost expression's marginal bound comes after the
        LPs (:meth:`final_lower`)."""
        from optmech.families.radial import comparison_lower

        self.comparison = None
        # the bound rests on the radial reduction: not with symmetry "orbits"/"off", nor for the layered variant
        if self.s.cells and self.s.cost.kind != "expr" and not self.s.layered and self.problem.symmetry == "auto":
            try:
                self.comparison = comparison_lower(self.s.cost.kind, self.s.norm, self.s.eps, self.s.d, self.s.delta,
                                                   self.ctx.solve_lp)
            except SolveFailed:
                self.comparison = None
        return self.comparison[0] if self.comparison is not None else 0.0

    def final_lower(self, seconds: float, gap: float = math.inf, after_lps: bool = True) -> float | None:
        """On ℝ^d with a cost expression: the marginal bound
        (:func:`optmech.families.pure_nd_marginal.marginal_lower`) within ``seconds`` (at most ``MARGINAL_SECONDS``),
        or None.  It runs after the cell LPs: they are the main bound and it rarely beats them, so it takes the
        time they left (the loop starts no step in the second half of the limit) instead of time they need, and at
        most the share kept back for it (:meth:`final_seconds`) unless no LP ran (``after_lps`` false); after the
        LPs only while the bracket's relative ``gap`` exceeds ``MARGINAL_AFTER_GAP``."""
        if not (self.s.cells and self.s.cost.kind == "expr" and not self.s.layered):
            return None
        from optmech.families.pure_nd_marginal import (MARGINAL_AFTER_GAP, MARGINAL_SECONDS, MARGINAL_SHARE,
                                                       marginal_lower)

        if after_lps and gap <= MARGINAL_AFTER_GAP:
            return None

        seconds = min(MARGINAL_SECONDS, seconds)
        if after_lps:
            seconds = min(seconds, MARGINAL_SHARE * self.ctx.time_limit)
        if seconds < 1.0:
            return None
        self.comparison = marginal_lower(self.s, seconds)
        return self.comparison[0] if self.comparison is not None else None

    def final_seconds(self) -> float:
        """With a cost expression on ℝ^d: the report's share plus the marginal bound's (:meth:`final_lower`),
        ``MARGINAL_SHARE`` of the time limit and at most ``MARGINAL_SECONDS``, kept back from the LPs."""
        if not (self.s.cells and self.s.cost.kind == "expr" and not self.s.layered):
            return FINAL_SECONDS
        from optmech.families.pure_nd_marginal import MARGINAL_SECONDS, MARGINAL_SHARE

        return FINAL_SECONDS + min(MARGINAL_SECONDS, MARGINAL_SHARE * self.ctx.time_limit)

    def fallback_lower(self) -> tuple[float | None, str]:
        """When no LP fits the time limit: on ℝ^d with a named cost (a norm or its square: nonnegative), the
        comparison bound or the floor; with a cost expression, the marginal bound in the time left."""
        if not self.s.cells:
            return None, ""
        if self.s.cost.kind == "expr":
            if self.final_lower(self.ctx.remaining() - FINAL_SECONDS, after_lps=False) is None:
                return None, ""
            return self.comparison
        comp = getattr(self, "comparison", None)
        if comp is not None and comp[0] > 0:
            return comp[0], comp[1]
        return 0.0, "the cost's floor on R^d (a norm or its square is nonnegative)"

    def plan(self, R) -> LPPlan:
        """The LP of half-width R before it is built (:func:`lp_plan`), cached per R; for ``("layers", R)``
        the coupled layer LP (R + 2 columns, at most Δ rows per sphere)."""
        if isinstance(R, tuple):
            n, rows = R[1] + 2, 1 + int(self.s.delta) * (R[1] + 1)
            return LPPlan(rows=rows, cols=n, nonzeros=n + 2 * rows, builder="layers_coupled")
        key = (self.s.n_lat, R)
        if key not in self._plans:
            s = self.s
            group = None
            if s.reduced and s.cost.kind == "expr" and \
                    lp_plan(s, R, group="signed_permutations").peak_bytes() > memory_budget():
                group = "signed_permutations"  # too large whatever the cost's symmetry: no need to check the cube
            plan = lp_plan(s, R, group)
            if s.cells and not (self.fine is not None and self.fine.certified) and self._skip_restriction(s.n_lat) is None:
                # the cell restriction LP, built and solved inside upper() while this one is held
                up = lp_plan(s, R, group, side="upper")
                plan = dataclasses.replace(plan, lps=2, extra_bytes=plan.extra_bytes + up.peak_bytes() - BASELINE_BYTES)
            self._plans[key] = plan
        return self._plans[key]

    def estimate_bytes(self, R: int) -> float:
        return self.plan(R).peak_bytes()

    def size_message(self, R: int, need: float, budget: float) -> str:
        s = self.s
        what = "shell" if s.layered else "cell" if s.cells else "lattice"
        return (f"the {s.d}-dimensional {what} LP needs about {gib(need)} GiB ({self.plan(R).cols - 1} variables on the "
                f"domain of half-width {R}); the limit is {budget / 2**30:.1f} GiB: raise epsilon or the target gap, "
                "lower the sensitivity, resolution or dimension, or set OPTMECH_MAX_MEMORY_GB")

    def build(self, R) -> Built:
        if isinstance(R, tuple):  # the coupled ℓ1-layer LP (optmech.problems.lattice_layers)
            from optmech.couplings import prove_unit_couplings
            from optmech.problems.lattice_layers import build_layer_lp, coupled_pairs

            levels = R[1]
            unit = prove_unit_couplings(levels, self.s.d, deadline=self.ctx.t0 + 0.5 * self.ctx.time_limit)
            pairs = coupled_pairs(levels, int(self.s.delta), unit)
            lp = build_layer_lp(self.s.eps, int(self.s.delta), self.s.d, 1, levels, pairs)
            info = {"levels": levels, "unit_couplings_proven": int(sum(unit)), "layer_rows": len(pairs)}
            return Built(lp, {"layers": levels}, info, "layers_coupled")
        alp = self.s.build(R, "lower")
        size = {"half_width": R} | ({"resolution": self.s.n_lat} if self.s.cells else {})
        self._built_at = time.perf_counter()
        return Built(alp.lp, size, alp, alp.variant)

    def lower(self, built: Built, raw):
        """The repaired dual of the relaxation (:func:`~optmech.families.base.default_lower`); where the LP keeps
        only the ring's rows, first the rows its solution violates join it while a solve fits
        (:meth:`_generate_rows`; any subset of rows is a relaxation, so every round's dual certifies)."""
        if isinstance(built.model, PureNDLP) and built.model.generated:
            solved = time.perf_counter() - self._built_at  # the loop's solve of this LP
            alp, raw = self._generate_rows(built.model, raw, self.GENERATE_SHARE, solved)
            built.lp, built.model = alp.lp, alp
            self._final_raw = (built, raw)
        return default_lower(built, raw)

    def _generate_rows(self, alp: PureNDLP, raw, share: float, last: float) -> tuple[PureNDLP, object]:
        """Row generation on an LP that keeps some shifts' rows (:func:`optmech.problems.pure_nd.ring_shifts`): while
        the solution ``raw`` violates pending rows, they join the LP and it is solved again (cold), at most
        ``GENERATE_ROUNDS`` times and while a solve like the ``last`` (seconds) fits in ``share`` of the time left; a
        solve that fails keeps the last solution.  (The LP and its solution, ``self.generated_rows`` counts the rows.)"""
        for _ in range(self.GENERATE_ROUNDS):
            bad = alp.violated(raw.x)
            if bad.size == 0 or 1.5 * last > share * self.ctx.remaining():
                break
            grown = alp.with_rows(bad)
            t0 = time.perf_counter()
            try:
                nxt = self.ctx.solve_lp(grown.lp, share=share)
            except SolveFailed:
                break
            if getattr(nxt, "x", None) is None:
                break
            alp, raw, last = grown, nxt, time.perf_counter() - t0
            self.generated_rows += int(bad.size)
        return alp, raw

    def upper(self, built: Built, raw) -> Upper:
        s = self.s
        if built.builder == "layers_coupled":
            return lattice_staircase_upper(s)
        if s.cells and self.fine is not None and self.fine.certified:
            return self.fine
        if s.cells:
            skip = self._skip_restriction(built.model.sensitivity)
            if skip is not None:
                self._skipped_at, self._skip_note = built.model.sensitivity, skip
                return Upper(math.inf, math.nan, False, 0.0, skip)
            t_up = time.perf_counter()
            ulp = s.build(built.model.support.R, "upper")
            t0 = time.perf_counter()
            uraw = self.ctx.solve_lp(ulp.lp)
            if ulp.generated:  # rows of the ring first; its solution is repaired and audited against every shift
                ulp, uraw = self._generate_rows(ulp, uraw, 1.0, time.perf_counter() - t0)
            up = upper_from_lp(ulp, uraw.x, s)
            self._restriction = (built.model.sensitivity, up.value if up.certified else math.inf,
                                 time.perf_counter() - t_up)
            return up
        return upper_from_lp(built.model, raw.x, s)

    def _skip_restriction(self, n: int) -> str | None:
        """Why the cells' restriction LP is not solved at resolution ``n``, or None.  Its gap to the relaxation
        closes like the cell width (first order: it prices whole cells and covers every shift a cell pair may
        need), so after a refinement it is skipped when, at the last resolution, even half its distance to the
        lower end left it above the best upper end (a closed-form law, say)."""
        if self._restriction is None or n <= self._restriction[0] or self._bracket is None:
            return None
        m, value, _ = self._restriction
        lower, best = self._bracket
        if not (value - 0.5 * (value - lower) > best):
            return None
        return (f"the cells' restriction LP was not solved at resolution {n}: at resolution {m} its audited law cost "
                f"{value:.6g}, and halving its distance to the lower end {lower:.6g} (it closes like the cell width) "
                f"would still leave it above the best upper end {best:.6g}")

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        if built.builder == "layers_coupled":
            return dict(built.model)
        if self._final_raw is not None and self._final_raw[0] is built:  # the solution after row generation
            raw = self._final_raw[1]
        if built.model.cells and built.model.sensitivity not in self.resolutions:  # a solved step's resolution
            self.resolutions.append(built.model.sensitivity)
        return {"far_mass": built.model.far_mass(raw.x), "tail_mass_bound": upper.tail_mass}

    def grow(self, step: Step, best) -> int | Stop:
        if step.built.builder == "layers_coupled":  # not tight enough: the full LP (its own growth rules)
            return radius(self.s)
        s, alp, gap = self.s, step.built.model, step.gap
        far, up = step.diagnostics["far_mass"], step.upper
        # the growth rule compares absolute gaps U - L: the relative gap (U - L)/U hardly moves while a heavy tail
        # keeps U far above L, even when each larger domain divides U - L by several; the domain grows while each
        # step (1.5 times the half-width) shrinks U - L to at most GROWTH_MIN_GAIN of what it was
        width = best.upper_value - best.lower
        self._bracket = (best.lower, best.upper_value)
        prev, self.prev_gap = self.prev_gap, width
        refined, self.gap_before_refining = self.gap_before_refining, None
        if refined is not None and gap > refined / self.REFINE_MIN_GAIN:
            return Stop(f"refining the cells to resolution {s.n_lat} shrank the gap only from {refined:.3g} to "
                        f"{gap:.3g}: the remaining gap is the relaxation's (its lattice shifts stand in for the ball's "
                        "real ones), not the cells' width")
        # the restriction's tail matters only where its law is the bracket's upper end (not when a closed form beat
        # it, nor when it was skipped at this resolution)
        skipped = self._skipped_at == s.n_lat
        tail_ok = skipped or (up.certified and (up.tail_mass < 1e-3 * gap or up.value > best.upper_value))
        if s.cells and far < 1e-3 * gap and tail_ok:
            if self.refinable:  # the same region in cells REFINE_FACTOR times finer (the loop checks memory)
                # a restriction LP the finer step skips (_skip_restriction) does not count in its prediction
                finer = s.n_lat * self.REFINE_FACTOR
                spent = self._restriction[2] if self._restriction is not None and self._restriction[0] == s.n_lat else 0.0
                skip = spent if self._skip_restriction(finer) is not None else 0.0
                need = refine_seconds(max(step.seconds - skip, 0.0), s.d)
                if need > self.ctx.remaining():
                    return Stop(f"the remaining gap is the discretisation at resolution {s.n_lat} (truncation is "
                                f"negligible); refining to resolution {s.n_lat * self.REFINE_FACTOR} would need about "
                                f"{need:.3g} s, more than the {self.ctx.remaining():.3g} s left: raise --time-limit")
                self.s = dataclasses.replace(s, n_lat=s.n_lat * self.REFINE_FACTOR)
                self.gap_before_refining, self.prev_gap = gap, math.inf
                return alp.support.R * self.REFINE_FACTOR
            return Stop(f"the remaining gap is the discretisation at resolution {s.n_lat} (truncation is negligible): "
                        "raise --resolution to shrink it")
        if far > 0.5 and alp.lp.c[alp.lp.col_blocks["far"].start] <= 0.0:
            return Stop(f"the cost {s.cost.spec!r} could not be bounded away from 0 outside the domain by interval "
                        "arithmetic (e.g. a term 0.5*x1 beside abs(x1)), so the lower bound is not informative; write "
                        "its terms sign-definite, e.g. where(x1 > 0, 1.5*x1, 0.5*abs(x1)) for abs(x1) + 0.5*x1")
        if prev < math.inf and width > self.GROWTH_MIN_GAIN * prev:
            return Stop(f"growing the domain to half-width {alp.support.R} shrank the bracket's width only from {prev:.3g} "
                        f"to {width:.3g} (mass at the domain's edge {far:.2g}, tail mass of the upper law {up.tail_mass:.2g}):"
                        " a larger domain is not expected to help")
        return int(math.ceil(1.5 * alp.support.R / s.n_lat)) * s.n_lat

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        return references_nd(self.problem, self.s, lower, upper)

    def report(self, best, last: Step | None, status: str) -> dict:
        if last is not None and last.built.builder == "layers_coupled":
            return _report_layers(self.s, best, last.diagnostics)
        out = self._report(best, last)
        if len(self.resolutions) > 1:
            out["claims"].append(
                "the cells were refined (no resolution was given): resolutions "
                + ", ".join(str(n) for n in self.resolutions) + " on the same region; each step's certificates hold "
                "on their own, and the bracket keeps the best certified end of any step")
            out.setdefault("lp", {})["resolutions"] = list(self.resolutions)
        if self.coarsened_from is not None:
            out["claims"].append(
                f"the cells start at resolution {min(self.resolutions or [self.s.n_lat])}, not the default "
                f"{self.coarsened_from}: the first relaxation LP there would have had more than "
                f"{first_step_rows(self.ctx.time_limit):.0f} rows, more than the time limit fits (set the resolution "
                "with Continuous(resolution=...) or --resolution)")
        if any(r >= RING_FROM for r in self.resolutions) and self.s.rings:
            out["claims"].append(
                f"row generation (l2 sensitivity): each cell LP from resolution {RING_FROM} on first kept the rows of "
                "the shifts in the ball's outer "
                f"ring, n - {RING_WIDTH:g} <= ||k||_2 <= n cells (optmech.problems.pure_nd.ring_shifts), and "
                f"{self.generated_rows} rows of the other shifts that a solution violated joined it; any subset of the "
                "rows is a relaxation, so the repaired dual certifies whatever was kept, and a restriction LP's law is "
                "repaired and audited against every shift")
            out.setdefault("lp", {})["generated_rows"] = int(self.generated_rows)
        if self._skip_note:
            out["claims"].append(self._skip_note)
        comp = getattr(self, "comparison", None)
        if comp is not None:
            used = comp[0] >= best.lower
            out["claims"].append(f"{'the lower bound is' if used else 'a weaker certified lower bound:'} {comp[1]}: "
                                 f"{comp[0]:.9g}")
        return out

    def _setup_of(self, last: Step | None) -> Setup:
        """The setup at the last solved step's resolution (the family may have refined past it)."""
        if last is None or not self.s.cells:
            return self.s
        return dataclasses.replace(self.s, n_lat=last.built.model.sensitivity)

    def _report(self, best, last: Step | None) -> dict:
        from optmech.mechanisms.solved import mechanism_from_solver_dict

        if last is None or isinstance(best.upper, ReferenceUpper):
            # no LP fitted, or a closed-form law beat the LPs' upper bounds: that law is the mechanism
            return _report_reference(self._setup_of(last), best, last)
        alp = last.built.model
        s = self._setup_of(last)
        best_up = best.upper
        dom = f"Z^{s.d}" if not s.cells else f"R^{s.d} in cells of width {s.h:g} (resolution {s.n_lat})"
        where = ("l1 ball ||x||_1 <= R" if alp.support.shape == "ball" else f"cube [-R, R]^{s.d}")
        if s.cells:
            claims = [
                f"pure epsilon-DP on {dom}, sensitivity {s.delta:g} in the {s.norm} norm; lower bound: the randomised "
                "rounding of any epsilon-DP noise to the nodes h*z satisfies the lattice rows for shifts of <= "
                f"{s.n_lat} cells (post-processing that commutes with them), {_node_price_text(s)}"
                + f", every pair inside the {where} (unit-step recursion), the mass outside priced at the cost's minimum "
                "there less the largest interpolation error (a relaxation)",
                (f"upper bound: the {best_up.note}, extended with a closed-form tail bound" if best_up is not None and
                 "shells" in best_up.note else
                 "upper bound: a density constant on cells whose rows cover every cell pair that a shift in the ball "
                 "connects (l1: the l1 ball of radius n-1 plus the unit cube), priced at "
                 + _cell_mean_text(s) + "; its smallest "
                 "beta-majorant, extended with a closed-form tail bound, audited"),
            ]
        else:
            claims = [
                f"pure epsilon-DP on Z^{s.d}, sensitivity {int(s.delta)} in the {s.norm} norm: every pair inside the "
                f"{where} (unit-step recursion), the mass outside priced at the cost's minimum there (a relaxation)",
                "upper bound: smallest beta-majorant of the LP's masses, extended to Z^d with a closed-form tail bound",
            ]
        group = getattr(alp.support, "group", "none")
        if group != "none":
            name = "signed-permutation" if group == "signed_permutations" else "coordinate-sign"
            claims.append(f"{name} symmetry: one variable per orbit (the cost"
                          + ("'s node prices are the least over each orbit (the largest on the upper side), valid "
                             "whatever the cost's symmetry: the rounded law averaged over the group is feasible and costs "
                             "at most the same there; the group is the one under which the cost's cell enclosures are "
                             "invariant" if s.cost.kind == "expr" and s.cells else
                             " was proven invariant at every point or cell of the LP's domain by exact comparison of "
                             "its enclosures, which is all the relaxation uses" if s.cost.kind == "expr" else
                             " and the norm are invariant by construction")
                          + ("" if s.cost.kind == "expr" and s.cells else
                             "; averaging a mechanism over the group keeps the relaxation's value, so a group-invariant "
                             "optimum exists") + ")")
        lp_info = {"orbits": len(alp.support.reps)}
        if s.cells:
            lp_info |= {"resolution": s.n_lat, "cell_width": s.h}
        mech = None
        if best_up is not None:
            beta = math.exp(-s.eps + min(PRIVACY_MARGIN, s.eps * 1e-3))
            mech = mechanism_from_solver_dict(_mechanism_nd(best_up, s) | {"epsilon": s.eps, "beta": beta})
        return {
            "mechanism": mech, "lp": lp_info, "claims": claims,
            "audit": {"realised_epsilon": best_up.realised_epsilon if best_up else None, "target_epsilon": s.eps,
                      "passed": bool(best_up and best_up.certified),
                      "method": "majorant fixed point on the domain, outward-rounded",
                      "tail_mass_bound": best_up.tail_mass if best_up else None},
            "truncation": {"half_width": alp.support.R, "dim": s.d, "norm": s.norm,
                           "lower_bound": "relaxation: in-domain pairs, far mass at the minimum cost outside",
                           "upper_bound": "beta-majorant of the domain's masses with geometric tails outside"},
        }


#: how the seconds of a cell-LP step grow when its cells are halved on the same region, per dimension + 1:
#: 2^(d+1) times the variables and rows, solved superlinearly (measured 27-30x in d = 2 from 4 to 8 cells per
#: Delta, l1 sensitivity; 2^(1.7 (d+1)) = 34 there)
REFINE_TIME_EXPONENT = 1.7
#: the first cell LP's rows that fit a minute (its step solves the relaxation and the restriction, of about the same
#: size): ℓ∞ sensitivity, ‖x‖₁, 4 cells per Δ took 8.6 s at 79,366 rows and 54 s at 189,368 (d = 2; measured);
#: the step's seconds grew like rows^2.1 there
FIRST_STEP_ROWS, FIRST_STEP_SECONDS, FIRST_STEP_EXPONENT = 120_000, 60.0, 2.1


def first_step_rows(time_limit: float) -> float:
    """The rows the first cell LP may have within ``time_limit`` seconds (:data:`FIRST_STEP_ROWS` per minute, scaled
    by the measured growth of a step's seconds with its rows)."""
    if not math.isfinite(time_limit):
        return math.inf
    return FIRST_STEP_ROWS * (max(time_limit, 1.0) / FIRST_STEP_SECONDS) ** (1.0 / FIRST_STEP_EXPONENT)


def refine_seconds(step_seconds: float, d: int) -> float:
    """The predicted seconds of a cell-LP step after halving the cells, from the last step's."""
    return step_seconds * 2.0 ** (REFINE_TIME_EXPONENT * (d + 1))


def _node_price_text(s: Setup) -> str:
    """How the cell LP's lower side priced its nodes (the claims)."""
    if s.cost.kind in SECOND_ORDER_COSTS:
        return ("each node priced at the cost there less the proven multilinear interpolation error on the cubes "
                "around it (second order; optmech.problems.pure_nd.node_costs)")
    return ("each node priced at the cost's enclosure there less the smaller of two proven bounds of the "
            "multilinear interpolation error on the cubes around it: (1/8) sum_i w_i^2 sup (d^2 L/dx_i^2)_+ from "
            "interval second-order jets where the cost is proven C^2 on the cube (second order), else the bound on "
            "sub-boxes (first order); nodes on the box's edge and the mass outside at the cost's minimum beyond "
            "(optmech.problems.pure_nd.expression_node_costs)")


def _cell_mean_text(s: Setup) -> str:
    """How the cell restriction priced its cells (the claims)."""
    if s.cost.kind in SECOND_ORDER_COSTS:
        return ("proven upper bounds of the cube means (exact for l1 and l2sq, Jensen for l2, the corner average for "
                "linf)")
    return ("proven upper bounds of the cube means (on sub-boxes the smaller of the enclosure's upper end and "
            "L(mid) + sum_i w_i^2 sup (d^2 L/dx_i^2)_+ / 24 where the cost is proven C^2)")


def _report_layers(s: Setup, best, info: dict) -> dict:
    """The report when the coupled ℓ1-layer LP was the last step (its gap met the target)."""
    up = best.upper
    claims = [
        f"pure epsilon-DP on Z^{s.d}, sensitivity {int(s.delta)} in the l1 norm, cost ||x||_1",
        f"lower bound: the l1-layer LP on the spheres ||x||_1 = 0..{info['levels']} (far mass priced at the cost's "
        "minimum beyond), lifted to Z^d: for every sphere pair in its rows the uniform laws have a coupling within "
        f"l1 distance Delta, composed of unit-step couplings proven by exact integer transport on orbits "
        f"({info['unit_couplings_proven']} of {info['levels']} proven), so its dual is a dual of the full lattice LP",
        f"upper bound: the closed-form {getattr(up, 'reference', 'law')} ({getattr(up, 'note', '')})",
    ]
    mech = getattr(up, "mechanism", None)
    return {
        "mechanism": mech, "lp": {"levels": info["levels"], "layer_rows": info["layer_rows"]},
        "claims": claims,
        "audit": {"realised_epsilon": None, "target_epsilon": s.eps, "passed": True,
                  "method": "closed form: the l1 lattice staircase (its level moves by at most one)",
                  "tail_mass_bound": None},
        "truncation": {"half_width": info["levels"], "dim": s.d, "norm": s.norm,
                       "lower_bound": "relaxation: l1 spheres up to the radius, far mass at the minimum cost outside",
                       "upper_bound": "closed form (no truncation)"},
    }


def _report_reference(s: Setup, best, last: Step | None) -> dict:
    """The report when no LP of the lower bound fitted the time limit (``last`` None: the fallback
    bracket), or when a closed-form law is the bracket's upper end: the mechanism of the upper end (that
    law, or the audited shell density solved first)."""
    from optmech.mechanisms.solved import mechanism_from_solver_dict

    up = best.upper
    ref = getattr(up, "reference", None)
    claims = [f"pure epsilon-DP on {'R' if s.cells else 'Z'}^{s.d}, sensitivity {s.delta:g} in the {s.norm} norm",
              "no LP of the lower bound fitted the time limit: the lower bound is the cost's floor, or the norm "
              "comparison or the marginal bound below" if last is None
              else (f"the cell LP's lower bound: its repaired dual (resolution {s.n_lat}; the randomised rounding to "
                    f"the nodes, {_node_price_text(s)})" if s.cells else
                    "lower bound: the repaired dual of the lattice LP (every pair in the l1 ball or cube, far mass at the "
                    "cost's minimum outside: a relaxation)")]
    if ref is not None:
        exact = getattr(up, "closed_form", True)
        widened = ("" if "widened" in up.note or not exact else
                   f", its exact expected cost widened by {CLOSED_FORM_WIDENING:g} relative")
        claims.append(f"upper bound: the {'closed-form ' if exact else ''}{ref} law ({up.note}){widened}")
        mech, method = up.mechanism, f"closed form: the {ref} law (its own privacy proof)"
        audit = {"realised_epsilon": None, "tail_mass_bound": None}
    else:
        claims.append(f"upper bound: the {up.note}, extended with a closed-form tail bound")
        beta = math.exp(-s.eps + min(PRIVACY_MARGIN, s.eps * 1e-3))
        mech = mechanism_from_solver_dict(_mechanism_nd(up, s) | {"epsilon": s.eps, "beta": beta})
        method = "majorant fixed point on the domain, outward-rounded"
        audit = {"realised_epsilon": up.realised_epsilon, "tail_mass_bound": up.tail_mass}
    lp_info = {"resolution": s.n_lat, "cell_width": s.h}
    if last is not None:
        lp_info["orbits"] = len(last.built.model.support.reps)
    return {
        "mechanism": mech, "lp": lp_info, "claims": claims,
        "audit": audit | {"target_epsilon": s.eps, "passed": True, "method": method},
        "truncation": {"half_width": None if last is None else last.built.model.support.R, "dim": s.d, "norm": s.norm,
                       "lower_bound": "the cost's floor (no LP)" if last is None else
                       "relaxation: in-domain pairs, far mass at the minimum cost outside",
                       "upper_bound": f"closed form: {ref}" if ref is not None else up.note},
    }


def _fine_layered_upper(s: Setup, ctx) -> Upper | None:
    """On the continuous domain with ℓ1 sensitivity and an ℓ1-shell-priced cost (l1, l2sq): the best
    nonincreasing density constant on thin ℓ1 shells (LAYERED_SHELLS per Δ; a restriction of the
    layered LP with 2 rows per shell) is an exactly ε-DP, audited upper bound, far tighter than the
    cell restriction and cheaper; None where it does not apply."""
    import dataclasses

    if s.norm != "l1" or s.cost.kind not in ("l1", "l2sq", "l2", "linf") or s.layered:
        return None
    f = dataclasses.replace(s, layered=True, reduced=False, monotone=True, n_lat=max(LAYERED_SHELLS, 8 * s.n_lat),
                            gap=min(s.gap, 1e-9))
    ulp = f.build(radius(f), "upper")
    try:
        raw = ctx.solve_lp(ulp.lp, share=0.25)
    except SolveFailed:
        return None  # an optional, tighter upper bound: the cell restriction remains
    up = upper_from_lp(ulp, raw.x, f)
    up.note = f"best nonincreasing density constant on l1 shells of width {f.h:g} (layered LP), audited"
    return up


def _mechanism_nd(up: Upper, s: Setup) -> dict:
    """The upper-bound mechanism as JSON: per-point (or per-cell) masses of the representatives, or
    the density per ℓ1 shell."""
    tail = {"tail_factor": up.tail_factor, "tail_rate": up.tail_rate}
    head = {"dim": s.d, "norm": s.norm, "sensitivity": int(s.delta) if not s.cells else s.delta}
    if up.layout == "shells":
        w = up.width
        dens = up.masses / w**s.d if s.cells else up.masses
        return {"kind": "l1_shell_density_nd", **head, "shell_width": w, "continuous": bool(s.cells),
                "density": dens.tolist(), **tail,
                "rule": ("density (continuous: per unit volume; lattice: mass per point) on the shell "
                         "k*shell_width <= ||x||_1 < (k+1)*shell_width is density[k]; beyond the listed shells the mass "
                         "per shell-point is <= tail_factor * tail_rate**k")}
    out = {
        "kind": "lattice_pmf_nd" if up.layout == "points" else "cell_pmf_nd",
        **head,
        "symmetry": {"signed_permutations": "signed permutations", "signs": "coordinate signs"}.get(up.group, "none"),
        "representatives": up.reps.tolist(),
        "mass": up.masses.tolist(),
        **tail,
        "rule": ("P(x) = mass[i] where representatives[i] is x itself (symmetry none), its absolute values (coordinate "
                 "signs) or its sorted absolute values (signed permutations); any point not listed has "
                 "P(x) <= tail_factor * tail_rate**||x||_1"),
    }
    if up.layout == "cells":
        out["cell_width"] = up.width
        out["rule"] = ("cells h*(z + [-1/2, 1/2)^d) with h = cell_width carry the mass of their index z, by the rule: "
                       + out["rule"].replace("x", "z") + "; the density is mass / h^d on the cell")
    return out
