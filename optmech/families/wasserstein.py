r"""The Wasserstein family: optimal lattice noise for the W1 utility of [QHFL22, §IV-C].

``optmech.solve(Problem(privacy, objective=Wasserstein(input_pmf), sensitivity=m, domain=IntegerLattice()))`` minimises W1(X, X + θ) (or the paper's surrogate P2,
which is E|θ| [derived]) over noise θ on ℤ that is ε-DP (δ = 0) or
(ε, δ)-DP for integer sensitivity m.

Lower bound: the repaired dual (:func:`optmech.certify.dual_lower_bound`) of the relaxation LP of
:mod:`optmech.problems.wasserstein` (window −K..K; pure DP: the O(N) window-minimum privacy rows of
:mod:`optmech.problems.windows` and the geometric tail profile beyond the window; the W1 terms
outside the input's support priced exactly and linearly, absolute values only on the support;
excess far masses priced at their smallest possible cost).

Upper bound, δ = 0: the LP's window masses are repaired to their ε-DP majorant with periodic
geometric tails (:func:`optmech.certify.repaired_mechanism`, ratio β slightly above e^{−ε});
its realised ε is audited over the whole lattice by :func:`optmech.audit.realised_epsilon`
(outward rounding) and its W1 is evaluated by :func:`~optmech.problems.wasserstein.w1_of_mechanism`:
the window plus enough tail periods exactly (long double sums), the rest bounded by the
closed-form geometric moment Σ p(l)|l|, plus 1e-13 relative for rounding; the bound is added.

Upper bound, δ > 0: the LP's window pmf (finite support), audited with
:func:`optmech.audit.hockey_stick_array` for every shift 0 < |s| <= m; if the solver's tolerances
leave δ(ε) above δ, it is mixed with a cheap law of δ_u <= δ/2 (the hockey-stick sums are convex)
and audited again.  Its W1 is exact (finite support).

References (each with its exact W1, by :func:`~optmech.problems.wasserstein.w1_of_lattice_law`, and
its audited ε): the GKOV discrete staircase P_r for every
r = 1..m (the best one under W1 and the E|θ|-optimal one), the discrete Laplace λ = e^{−ε/m},
the paper's floor-binned Laplacian at the tight calibration λ = m/ε and at the paper's
λ = (m+1)/ε (errata 1), the paper's staircase (20) with a = 5 and a = 20, ρ = e^{−ε/⌈m/a⌉}
(errata 2), and for δ > 0 the uniform law with the corrected δ = m/n (errata 3) and the paper's
Exponential (23) normalised and calibrated to its true profile δ = 1 − e^{−ηm} (errata 4; it is
never ε-DP).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.audit import hockey_stick_array, realised_epsilon
from optmech.budget import FINAL_SECONDS, LPPlan, gib, memory_budget
from optmech.certify import LatticeMechanism, repaired_mechanism
from optmech.families.base import Built, Step, Stop, default_lower
from optmech.inputs import InputPMF
from optmech.problems.lattice import Grid1D
from optmech.problems.wasserstein import (
    build_wasserstein,
    mechanism_total,
    w1_of_lattice_law,
    w1_of_mechanism,
    w1_of_pmf,
    w1_of_pmf_bounded,
)
from optmech.result import ReferenceValue

__all__ = ["WassersteinFamily", "staircase_mechanism", "wasserstein_references", "UpperW1"]


# ------------------------------------------------------------------------------------------------
# mechanisms as LatticeMechanism (window + periodic geometric tails)
# ------------------------------------------------------------------------------------------------
def _mech(W: int, k_lo: int, weights, beta: float, left_gen, right_gen) -> LatticeMechanism:
    mech = LatticeMechanism(Grid1D.integer(W), int(k_lo), np.asarray(weights, float), float(beta),
                            np.asarray(left_gen, float), np.asarray(right_gen, float))
    mech.total = mechanism_total(mech)
    return mech


def staircase_mechanism(epsilon: float, m: int, r: int) -> LatticeMechanism:
    """GKOV discrete staircase P_r [Geng13, (2.17)]: flat block of 2r − 1 points, steps of width m."""
    b = math.exp(-epsilon)
    i = np.arange(-(m - 1), m)
    w = np.where(np.abs(i) < r, 1.0, b)
    return _mech(m, -(m - 1), w, b, w[:m], w[-m:])


def discrete_laplace_mechanism(epsilon: float, m: int) -> LatticeMechanism:
    lam = math.exp(-epsilon / m)
    return _mech(1, 0, [1.0], lam, [1.0], [1.0])


def binned_laplacian_mechanism(lam_scale: float) -> LatticeMechanism:
    """[QHFL22, (2), §IV-B]: Laplace(0, λ) floor-binned: α^k (k >= 0), α^{−k−1} (k < 0), α = e^{−1/λ}."""
    a = math.exp(-1.0 / lam_scale)
    return _mech(1, -1, [1.0, 1.0], a, [1.0], [1.0])


def staircase003_mechanism(epsilon: float, m: int, a: int) -> tuple[LatticeMechanism, float]:
    """[QHFL22, (20)]: ρ^j on [ja, (j+1)a) and on [−(j+1)a, −ja); ρ = e^{−ε/⌈m/a⌉} (tight by (21))."""
    rho = math.exp(-epsilon / math.ceil(m / a))
    w = np.ones(2 * a)
    return _mech(a, -a, w, rho, w[:a], w[-a:]), rho


def _finite(k_lo: int, p: np.ndarray, W: int) -> LatticeMechanism:
    return _mech(W, k_lo, p, 0.0, np.zeros(W), np.zeros(W))


# ------------------------------------------------------------------------------------------------
# upper bound
# ------------------------------------------------------------------------------------------------
class UpperW1:
    """A certified upper bound: the audited noise law ``mechanism`` and its W1 (or E|θ|) rounded up.

    ``initial`` is True for the discrete Laplace law found before any LP (:meth:`WassersteinFamily.initial_uppers`)."""

    def __init__(self, value, mechanism, realised_epsilon, realised_delta, certified, note="", mixed=0.0,
                 initial: bool = False):
        self.value = value
        self.mechanism = mechanism
        self.realised_epsilon = realised_epsilon
        self.realised_delta = realised_delta
        self.certified = certified
        self.note = note
        self.mixed = mixed
        self.initial = initial


def _objective_input(inp: InputPMF, utility: str) -> InputPMF | None:
    return None if utility == "surrogate" else inp


def _upper_pure(inp, utility, p_window, K, epsilon, m) -> UpperW1:
    w = np.where(np.isfinite(p_window), np.maximum(p_window, 0.0), 0.0)
    if not math.fsum(w) > 0:
        w = np.zeros_like(w)
        w[len(w) // 2] = 1.0
    mech = repaired_mechanism(Grid1D.integer(m), -K, w, epsilon)
    mech.total = mechanism_total(mech)
    eps_real = realised_epsilon(mech, m)
    val, err = w1_of_mechanism(_objective_input(inp, utility), mech)
    value = float(np.nextafter(val + err, np.inf))
    ok = eps_real is not None and eps_real <= epsilon
    note = "" if ok else f"audit failed: realised epsilon {eps_real} > {epsilon}"
    return UpperW1(value, mech, eps_real, 0.0, ok, note)


def _upper_approx(inp, utility, p_window, K, epsilon, delta, m) -> UpperW1:
    from optmech.repair import repair_delta

    p = np.where(np.isfinite(p_window), np.maximum(p_window, 0.0), 0.0)
    p = p / math.fsum(p)
    shifts = np.concatenate([np.arange(1, m + 1), -np.arange(1, m + 1)])[:, None]
    p, R, per, mixed = repair_delta(p, K, epsilon, delta, m, shifts)
    k_lo, d_p = -R, float(per.max())
    val, err = w1_of_pmf_bounded(_objective_input(inp, utility), k_lo, p)
    value = float(np.nextafter(val + err + 1e-13 * val + 1e-16, np.inf))
    ok = d_p <= delta
    mech = _finite(k_lo, p, m)
    return UpperW1(value, mech, None, d_p, ok, "" if ok else f"audit failed: delta {d_p} > {delta}", mixed)


# ------------------------------------------------------------------------------------------------
# references
# ------------------------------------------------------------------------------------------------
def _ref(name, val_err, params, lo, up, note="", exact=True, valid=None) -> ReferenceValue:
    v, err = val_err
    tol = err + 1e-12 * abs(v)
    inside = bool(math.isfinite(v) and lo - tol <= v <= up + tol and valid is not False)
    return ReferenceValue(name, float(v), params, inside, exact, note, valid=valid)


def wasserstein_references(inp: InputPMF, epsilon: float, m: int, delta: float, utility: str,
                           lo: float = -math.inf, up: float = math.inf) -> tuple[list[ReferenceValue], dict]:
    """References with exact W1 (or E|θ|) and audited ε; also {r: value} of the GKOV family."""
    X = _objective_input(inp, utility)
    refs: list[ReferenceValue] = []
    fam = {}
    for r in range(1, m + 1):
        fam[r] = w1_of_lattice_law(X, staircase_mechanism(epsilon, m, r))
    ab = {r: w1_of_lattice_law(None, staircase_mechanism(epsilon, m, r))[0] for r in range(1, m + 1)}
    r_best = min(fam, key=lambda r: fam[r][0])
    r_abs = min(ab, key=lambda r: ab[r])
    refs.append(_ref("discrete_staircase", fam[r_best], {"r": r_best, "r_abs_optimal": r_abs}, lo, up,
                     "GKOV P_r minimising this utility over r = 1..m [Geng13, (2.17)]"))
    refs.append(_ref("discrete_staircase_abs_optimal_r", fam[r_abs], {"r": r_abs}, lo, up,
                     "GKOV P_r with the E|theta|-optimal r (the optimum of the paper's surrogate P2)"))
    mech = discrete_laplace_mechanism(epsilon, m)
    refs.append(_ref("discrete_laplace", w1_of_lattice_law(X, mech),
                     {"lambda": math.exp(-epsilon / m), "realised_epsilon": realised_epsilon(mech, m)}, lo, up,
                     "two-sided geometric p ~ exp(-epsilon|k|/m)"))
    for tag, lam, note in (
        ("tight", m / epsilon, "[QHFL22] floor-binned Laplacian at the tight calibration lambda = m/epsilon "
                               "(errata 1: the paper's (19) epsilon = (m+1)/lambda is loose); a shifted geometric"),
        ("paper", (m + 1) / epsilon, "[QHFL22] floor-binned Laplacian at the paper's calibration lambda = (m+1)/epsilon "
                                     "(Table V); it actually runs at epsilon*m/(m+1)"),
    ):
        mech = binned_laplacian_mechanism(lam)
        refs.append(_ref(f"binned_laplacian_{tag}", w1_of_lattice_law(X, mech),
                         {"lambda": lam, "realised_epsilon": realised_epsilon(mech, m)}, lo, up, note))
    for a in (5, 20):
        mech, rho = staircase003_mechanism(epsilon, m, a)
        refs.append(_ref(f"staircase003_a{a}", w1_of_lattice_law(X, mech),
                         {"a": a, "rho": rho, "realised_epsilon": realised_epsilon(mech, m)}, lo, up,
                         "[QHFL22] staircase (20), rho = exp(-epsilon/ceil(m/a)); (21) is tight; errata 2: the text's "
                         "c_b = 1/rho^c is off by one step"))
    if delta > 0:
        n = math.ceil(m / delta)
        if n <= 2_000_000:
            k_lo = -((n - 1) // 2)
            p = np.full(n, 1.0 / n)
            d_u = float(np.max(hockey_stick_array(p, np.arange(1, m + 1)[:, None], epsilon)))
            if d_u > delta:  # m/n == delta exactly: the outward-rounded audit needs one more point
                n += 1
                k_lo = -((n - 1) // 2)
                p = np.full(n, 1.0 / n)
                d_u = float(np.max(hockey_stick_array(p, np.arange(1, m + 1)[:, None], epsilon)))
            refs.append(_ref("uniform", (w1_of_pmf(X, k_lo, p), 1e-13 * n), {"width": n, "realised_delta": d_u},
                             lo, up, "uniform on n = ceil(m/delta) points, delta = m/n for every epsilon "
                                     "(errata 3: the paper's m*Delta/(b-a+Delta) is wrong for Delta != 1)",
                             valid=d_u <= delta))
        if delta < 1:
            eta = -math.log1p(-delta) / m
            beta = math.exp(-eta)
            mech = _mech(1, 1, [1.0], beta, [0.0], [1.0])  # k >= 1 only
            val = w1_of_lattice_law(X, mech)
            refs.append(_ref("exponential003", val, {"eta": eta, "realised_epsilon": None}, lo, up,
                             "[QHFL22] (23) normalised and calibrated to its true profile delta = 1 - exp(-eta*m) "
                             "(errata 4: one-sided, never epsilon-DP; the paper's epsilon = eta*m is false)",
                             valid=True))
    return refs, {r: fam[r][0] for r in fam}


# ------------------------------------------------------------------------------------------------
# the loop
# ------------------------------------------------------------------------------------------------
def initial_half_width(inp: InputPMF, epsilon: float, m: int, target_gap: float) -> int:
    """The first version's (ε, δ) window: K >= width + m, with tail e^{−εK/m} far below the target
    (no tail profile there).  Kept for the direct LP the tests compare with."""
    L = math.log(1.0 / target_gap) + 8.0
    return int(max(inp.hi - inp.lo + m, math.ceil(m * L / epsilon)) + (inp.hi - inp.lo) + m)


#: Seconds of :func:`wasserstein_references` per m² and per m·w² (w the input's width): m staircases, each
#: priced exactly; 0.8–1.5e-6 and about 5e-9 measured (m = 300 to 3000, w = 30 to 400), with a margin.
REFS_SECONDS_PER_M2, REFS_SECONDS_PER_MW2 = 1.5e-6, 1e-8

#: (ε, δ): the first window reaches m plus this many times m(n + 1).
APPROX_REACH = 1.25


def approx_half_width(inp: InputPMF, epsilon: float, delta: float, m: int) -> int:
    """(ε, δ)-DP: the first window half-width, max(width + m, m + ⌈1.25·m(n + 1)⌉) with
    n = ln(1 + (e^ε − 1)/(2δ))/ε ([GV13] Thm 8's n; n → 1/(2δ) as ε → 0).  The (ε, δ) optimum for |x|
    on ℤ lives on |x| <= m(n + 1) (observed), and the W1 optimum was no wider in every case measured:
    the bracket on m + m(n + 1) already equalled that of a window three times as wide.  The builder
    needs width + m.  With the edge rows the relaxation is tight there; the family doubles K while the
    LP keeps mass near the edges or beyond them."""
    n = math.log1p(math.expm1(epsilon) / (2.0 * delta)) / epsilon if epsilon > 0 else 1.0 / (2.0 * delta)
    return int(max(inp.hi - inp.lo + m, m + math.ceil(APPROX_REACH * m * (n + 1.0))))


class WassersteinFamily:
    """The W1 (or surrogate E|θ|) objective on ℤ [QHFL22, §IV-C], pure or (ε, δ)-DP.

    Sizes are the window half-width K.  Pure DP starts at K = w + max(m, ⌈m/ε⌉) (w + m is the smallest
    window the builder allows; the geometric tail profile beyond the window makes the relaxation tight
    there in every case measured) and doubles K while the LP's objective stays noticeably below the
    upper bound; (ε, δ)-DP starts at :func:`approx_half_width` and doubles while the relaxation parks
    mass near the edges or beyond them.
    """

    name = "wasserstein"
    max_steps = 4

    def __init__(self, problem, ctx) -> None:
        self.problem, self.ctx = problem, ctx
        self.inp = problem.objective.input
        self.utility = problem.objective.name
        self.eps, self.delta, self.m = problem.epsilon, problem.delta, int(problem.sensitivity)
        self._refs_key: tuple | None = None
        #: why the references were not computed (empty when they were)
        self.references_skipped = ""

    def initial_uppers(self) -> list:
        """A certified upper bound before any LP (so that a time limit or an interrupt always has a bracket):
        the discrete Laplace law p(k) ∝ λ^{|k|}, λ = e^{−ε/m}, on the window −m..m, repaired to its
        smallest majorant with ratio β = e^{−ε + margin} per m steps and periodic geometric tails (strictly
        ε-DP for the shifts 1..m, hence (ε, δ)-DP), audited over all of ℤ and priced by
        :func:`~optmech.problems.wasserstein.w1_of_mechanism` exactly like an LP's law (:func:`_upper_pure`).
        For every input X, W1(X, X + θ) <= E|θ| (couple X with X + θ), and E|θ| = 2λ/(1 − λ²) for the
        unrepaired law; the repair moves the value by about 1e-11 relative."""
        m = self.m
        if self.estimate_bytes(self.start()) > memory_budget():
            return []  # the loop refuses the first LP with one line (its size is the user's): no bound is needed
        k = np.arange(-m, m + 1)
        up = _upper_pure(self.inp, self.utility, np.exp(-self.eps * np.abs(k) / m), m, self.eps, m)
        up.initial = True
        return [up] if up.certified and math.isfinite(up.value) else []

    def initial_lower(self) -> float:
        """A certified lower bound before any LP: 0 (W1 and E|θ| are nonnegative)."""
        return 0.0

    def fallback_lower(self) -> tuple[float, str]:
        """The same bound and what it is, for the answer when the first LP does not fit in the time limit."""
        return 0.0, "0 (W1 and E|theta| are nonnegative)"

    def start(self) -> int:
        smallest = self.inp.hi - self.inp.lo + self.m
        if self.delta == 0:
            # an excess far mass costs h(±(K + 1)) >= K + 1 − w in the relaxation; the optimum is below
            # E|θ| of the discrete Laplace, about m/ε, so K − w >= m/ε keeps excess mass from paying
            return self.inp.hi - self.inp.lo + max(self.m, math.ceil(self.m / self.eps))
        return max(approx_half_width(self.inp, self.eps, self.delta, self.m), smallest)

    def plan(self, K: int) -> LPPlan:
        """The W1 LP on the window −K..K before it is built (:func:`build_wasserstein`, N = 2K + 1):
        N + 2 columns for the pmf and far masses and the normalisation row (N + 2 nonzeros); pure DP:
        the window-minimum rows of :mod:`optmech.problems.windows` (2N auxiliary columns, at most 6N
        rows of 2 nonzeros); (ε, δ): 2mN hockey-stick rows of 3 nonzeros, their 2mN τ columns and 2m
        sums, and 2m edge rows (|s| + 2 nonzeros) with their 2m columns; the W1 terms on the input's
        support (w = x_hi − x_lo): 2w cdf columns and rows (the first with K − w + 3 nonzeros, the others
        3), and w t columns with 2 rows of 1 + (support) nonzeros."""
        N, m = 2 * K + 1, self.m
        support = self.inp.hi - self.inp.lo + 1  # the input's points lo..hi (those of mass 0 have no entries)
        w = support - 1
        rows, cols, nnz = 1, N + 2, N + 2
        if self.delta > 0:
            rows, cols, nnz = rows + 2 * m * N + 2 * m, cols + 2 * m * N, nnz + 3 * 2 * m * N + 2 * m * N
            rows, cols, nnz = rows + 2 * m, cols + 2 * m, nnz + m * (m + 1) + 6 * m  # the edge rows and their T_s
        else:
            rows, cols, nnz = rows + 6 * N, cols + 2 * N, nnz + 2 * 6 * N
        if self.utility == "wasserstein" and w > 0:
            rows, cols = rows + 2 * w + 2 * w, cols + 2 * w + w
            nnz += (K - w + 3) + 3 * (2 * w - 1) + 2 * w * (1 + support)
        return LPPlan(rows=rows, cols=cols, nonzeros=nnz, builder="wasserstein")

    def estimate_bytes(self, K: int) -> float:
        return self.plan(K).peak_bytes()

    def size_message(self, K: int, need: float, budget: float) -> str:
        return (f"the W1 LP needs about {gib(need)} GiB (window half-width {K}, m = {self.m}); the limit is "
                f"{gib(budget)} GiB: lower the sensitivity, raise epsilon, or set OPTMECH_MAX_MEMORY_GB")

    def build(self, K: int) -> Built:
        wl = build_wasserstein(self.inp, self.eps, self.m, K, delta=self.delta, utility=self.utility)
        return Built(wl.lp, {"half_width": K}, wl, "wasserstein")

    lower = staticmethod(default_lower)

    def upper(self, built: Built, raw) -> UpperW1:
        p = built.model.window_masses(raw.x)
        K = built.model.K
        if self.delta == 0:
            return _upper_pure(self.inp, self.utility, p, K, self.eps, self.m)
        return _upper_approx(self.inp, self.utility, p, K, self.eps, self.delta, self.m)

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        p = built.model.window_masses(raw.x)
        m = self.m
        up = getattr(upper, "value", math.nan)
        certified = bool(getattr(upper, "certified", False)) and up != 0 and math.isfinite(up)
        relax = (up - raw.objective) / abs(up) if certified else math.inf
        return {"far_mass": built.model.far_mass(raw.x), "edge_mass": float(np.sum(p[:m]) + np.sum(p[-m:])),
                "relaxation_gap": float(relax)}

    def grow(self, step: Step, best) -> int | Stop:
        """Pure DP: stop once the LP's objective is within half the target of the upper bound (a wider
        window can raise the relaxation by no more than that; the rest of the gap is the dual's
        certification); else double K.  (ε, δ): stop once the far and edge masses are negligible (at most
        1e-3 of the target gap).  Were they 0, the LP's optimum extended by zeros would be feasible for any
        wider window at the same cost (its pairs that leave the window are covered by the edge rows, whose
        left sides are then 0), so a wider window would have the same value."""
        dg = step.diagnostics
        target = self.problem.target_gap
        if self.delta == 0 and dg["relaxation_gap"] <= 0.5 * target:
            return Stop("a wider window does not help: the LP's objective is within half the target gap of the upper "
                        "bound, and the remaining gap is the solver's accuracy")
        if self.delta > 0 and dg["far_mass"] + dg["edge_mass"] <= 1e-3 * target:
            return Stop("a wider window does not help: the remaining gap is the solver's accuracy")
        return 2 * step.built.model.K

    def references_seconds(self) -> float:
        """The predicted seconds of :func:`wasserstein_references` (``REFS_SECONDS_PER_M2``, ``REFS_SECONDS_PER_MW2``)."""
        w = self.inp.hi - self.inp.lo
        return REFS_SECONDS_PER_M2 * self.m**2 + REFS_SECONDS_PER_MW2 * self.m * w * w

    def final_seconds(self) -> float:
        """The report's share of the time limit: :data:`~optmech.budget.FINAL_SECONDS` plus the references
        (m staircases), computed after the last solve."""
        return FINAL_SECONDS + self.references_seconds()

    def _references(self, lower: float, upper: float) -> tuple[list[ReferenceValue], dict]:
        """:func:`wasserstein_references` for this bracket, computed once (report and references ask); none
        when they would need more than the time left (or ``FINAL_SECONDS``, if more): a time limit reached
        before the first LP, or a large m (:attr:`references_skipped` then says why)."""
        key = (lower, upper)
        if self._refs_key != key:
            need = self.references_seconds()
            if need > max(self.ctx.remaining(), FINAL_SECONDS):
                self.references_skipped = (f"the references (the discrete staircases r = 1..{self.m} and the [QHFL22] "
                                           f"laws, about {need:.3g} s) were not computed: less time was left")
                self._refs = ([], {})
            else:
                self.references_skipped = ""
                self._refs = wasserstein_references(self.inp, self.eps, self.m, self.delta, self.utility, lower, upper)
            self._refs_key = key
        return self._refs

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        refs, self._staircase_family = self._references(lower, upper)
        return refs

    def report(self, best, last: Step | None, status: str) -> dict:
        """The family's part of the Result; ``last`` is None when no LP finished (a time limit or an interrupt
        before the first one), and the upper end may be the discrete Laplace law of :meth:`initial_uppers`.
        An interrupted solve skips the staircase comparison (it evaluates m staircases)."""
        from optmech.mechanisms.tabulated import Tabulated

        eps, m, delta, utility = self.eps, self.m, self.delta, self.utility
        wl = last.built.model if last is not None else None
        up = best.upper
        initial = up is not None and bool(getattr(up, "initial", False))
        structure, family = None, None
        if status != "interrupted":
            refs, family = self._references(best.lower, best.upper_value)
            family = family or None
            if up is not None and delta == 0 and refs:
                r_best = refs[0].parameters["r"]
                st = staircase_mechanism(eps, m, r_best)
                K = wl.K if wl is not None else max(m, -up.mechanism.k_lo)
                k = np.arange(-K, K + 1)
                diff = float(np.max(np.abs(up.mechanism.mass(k) - st.mass(k))))
                structure = {"nearest_staircase_r": r_best, "max_abs_mass_difference": diff}
        claims = []
        if wl is not None:
            claims += [
                "W1(X, X+theta) = sum_k |F_X(k) - F_{X+theta}(k)| is convex in p_theta; exact LP with epigraph rows "
                "[derived]; [QHFL22, §IV-C] calls it non-convex",
                "lower bound: relaxation on the window -K..K; W1 terms outside the input's support are linear in the "
                "noise law (their sign is known) and priced exactly, absolute values only on the support; excess far "
                "masses at their smallest cost (see optmech.problems.wasserstein)",
            ]
            if delta == 0:
                claims.append("pure DP relaxation: all pairs within m by O(N) window-minimum rows (exactly the pair rows), "
                              "and the geometric lower profile p(x + qm) >= e^(-q epsilon) p(x) beyond the window")
        else:
            claims.append("lower bound without an LP: 0, since W1(X, X+theta) and E|theta| are nonnegative (no LP "
                          "finished)")
        if initial:
            claims.append(
                "upper bound found before any LP: the discrete Laplace law p(k) ~ lambda^|k|, lambda = exp(-epsilon/m), "
                "repaired to its smallest majorant with ratio beta = exp(-epsilon + min(1e-11, epsilon/1000)) per m steps "
                "and periodic geometric tails: strictly epsilon-DP for every shift 1..m (audited over all of Z, outward-rounded)"
                + (", hence (epsilon, delta)-DP" if delta > 0 else "")
                + "; its " + ("E|theta|" if utility == "surrogate" else "W1 (<= E|theta| = 2 lambda/(1 - lambda^2) for "
                                                                          "every input, by the coupling of X with X+theta)")
                + " summed exactly on the window and enough tail periods, the remainder bounded"
                + ("" if wl is None else "; no LP's audited law was cheaper"))
        elif delta == 0:
            claims.append("upper bound: majorant-repaired window with geometric tails, epsilon audited over all of Z for "
                          "every shift 1..m; W1 summed exactly on the window and enough tail periods, remainder bounded")
        else:
            claims.append("upper bound: the LP's finite pmf, hockey-stick delta audited for every shift 0 < |s| <= m"
                          + (f" (mixed at weight {up.mixed:.3g} with a delta/2 law)" if up is not None and up.mixed else ""))
        if utility == "surrogate":
            claims.append("surrogate P2 of [QHFL22] equals E|theta| for every input [derived]")
        if status != "interrupted" and self.references_skipped:
            claims.append(self.references_skipped)
        mech = None
        if up is not None:
            mech = Tabulated.from_law(up.mechanism, eps, delta=delta)
        if initial:
            upper_trunc = "restriction: the repaired discrete Laplace law with periodic geometric tails (no truncation)"
        elif delta == 0:
            upper_trunc = "restriction: repaired window with periodic geometric tails"
        else:
            upper_trunc = "restriction: finite pmf on the window (zero outside), audited"
        if wl is None:
            lower_trunc = "0 (no LP)"
        else:
            lower_trunc = ("relaxation: window rows" + (", geometric tail profile beyond the window" if delta == 0 else "")
                           + ", excess far masses at their smallest W1 cost")
        out = {
            "mechanism": mech,
            "audit": {
                "realised_epsilon": up.realised_epsilon if up else None,
                "realised_delta": up.realised_delta if up else None,
                "target_epsilon": eps,
                "target_delta": delta,
                "passed": bool(up and up.certified),
                "structure": structure,
                "staircase_family": family,
            },
            "truncation": {"half_width": wl.K if wl is not None else None, "lower_bound": lower_trunc,
                           "upper_bound": upper_trunc},
            "claims": claims,
        }
        if wl is None:
            out["builder"] = "none (no LP finished)"
        return out
