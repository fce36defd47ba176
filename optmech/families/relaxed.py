r"""The relaxed LPs of [GV13] solved through the one loop: certified lower bounds on V* for (ε, δ)-DP.

:func:`relaxed_lp_lower_bound` builds the truncated relaxed LP (:mod:`optmech.problems.relaxed`)
and runs it through :func:`optmech.loop.run` as a lower-bound-only family
(:class:`RelaxedLPFamily`: no upper bound; the window K is doubled until the certified value
improves by at most ``LP_IMPROVEMENT_RTOL``), so it shares the loop's time budget, failure
handling and history records.  :func:`approx_references` lists every bound of one (ε, δ)
problem: the theorem bounds and closed forms of :mod:`optmech.mechanisms.approx.bounds` plus this
one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from optmech.budget import FINAL_SECONDS, TIME_SAFETY, LPPlan, gib, memory_budget
from optmech.costs import as_cost
from optmech.errors import ProblemTooLarge, SolveFailed, SolverUnavailable, SpecError
from optmech.families.base import Built, Context, Step, Stop, default_lower
from optmech.loop import make_context, run
from optmech.lp import LinearProgram
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.approx.bounds import (LP_IMPROVEMENT_RTOL, MAX_DOUBLINGS, MAX_WINDOW, RELAXED_VARIANTS,
                                              SEPARABLE, Bound, check_all, check_delta, check_epsilon,
                                              cost_symmetric, laplace_upper_bound, make_bound, resolve_cost,
                                              staircase_upper_bound, theorem_lower_bound, thm8_n,
                                              uniform_upper_bound)
from optmech.problems.relaxed import build_all_k, build_symmetric

__all__ = ["RelaxedLPFamily", "relaxed_lp_lower_bound", "build_relaxed_lp", "approx_references"]


@dataclass
class NoUpper:
    """The relaxed LP proposes no mechanism: its family certifies a lower bound only."""

    value: float = math.inf
    certified: bool = False
    tail_mass: float = 0.0


class RelaxedLPFamily:
    """A lower-bound-only family: the relaxed LP on windows K0, 2K0, … (at most ``MAX_DOUBLINGS``
    doublings, K <= ``MAX_WINDOW``) until the certified value improves by <= ``LP_IMPROVEMENT_RTOL``."""

    name = "relaxed_lp"
    max_steps = MAX_DOUBLINGS + 1

    def __init__(self, build: Callable[[int], LinearProgram], K0: int) -> None:
        self.build_lp, self.K0 = build, K0
        self.prev = None

    def initial_uppers(self) -> list:
        return []

    def start(self) -> int:
        return self.K0

    def plan(self, K: int) -> LPPlan:
        """At most 4K + 4 rows and columns and 12K + 12 nonzeros (both variants: O(K), see
        :func:`build_relaxed_lp`)."""
        return LPPlan(rows=4 * K + 4, cols=4 * K + 4, nonzeros=12 * K + 12, builder="relaxed_lp")

    def estimate_bytes(self, K: int) -> float:
        return self.plan(K).peak_bytes()

    def size_message(self, K: int, need: float, budget: float) -> str:
        return f"the relaxed LP with window {K} needs about {gib(need)} GiB (limit {gib(budget)} GiB)"

    def build(self, K: int) -> Built:
        return Built(self.build_lp(K), {"K": K}, K, "relaxed_lp")

    lower = staticmethod(default_lower)

    def upper(self, built: Built, raw) -> NoUpper:
        return NoUpper()

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        return {}

    def grow(self, step: Step, best) -> int | Stop:
        value, prev = step.lower.value, self.prev
        self.prev = value
        if prev is not None and not value - prev > LP_IMPROVEMENT_RTOL * max(abs(prev), 1e-300):
            return Stop("the certified value stopped improving with the window")
        K = 2 * step.built.model
        return K if K <= MAX_WINDOW else Stop(f"the next window {K} exceeds {MAX_WINDOW}")

    def references(self, lower: float, upper: float) -> list:
        return []

    def report(self, best, last, status: str) -> dict:
        return {}


def build_relaxed_lp(cost: Any, epsilon: float, delta: float, sensitivity: int, K: int, variant: str = "symmetric") -> LinearProgram:
    r"""The truncated relaxed LP of [GV13] as a :class:`~optmech.lp.LinearProgram` (a relaxation of V*).

    ``variant="symmetric"``: (25)–(27) / (54)–(57) [Geng13, (4.8)–(4.10) / (4.19)–(4.22)], symmetric
    pmf, variables P_0..P_K.  Rows, with E = e^ε and the cumulative columns C_j = Σ_{k=1}^{j} P_k
    (sparse form: (e^ε − 1)Σ_{k<i} P_k + e^ε Σ_{k=i}^{i+Δ−1} P_k = e^ε C_{i+Δ−1} − C_{i−1}),

    .. math::

        P_0 + 2C_K + 2F = 1, \quad C_j - C_{j-1} - P_j = 0,\quad
        P_0\tfrac{1+E}{2} + E\,C_{\min(Δ-1,K)} \le δ + \tfrac{E-1}{2},\quad
        P_0\tfrac{E-1}{2} - C_{i-1} + E\,C_{\min(i+Δ-1,K)} \le δ + \tfrac{E-1}{2}\ (1 \le i \le K),

    objective L(0)P_0 + Σ_{k=1}^{K} (L(k) + L(−k))P_k + (min_{k>K} L(k) + min_{k<−K} L(k))F.
    At ε = 0 these are (26)–(27).  The normalisation is taken as an equality (any symmetric pmf
    satisfies it; the inequality of (54) gives the same value because every row coefficient is >= 0).

    ``variant="all_k"``: (75) / (104) at d = 1 with k ∈ ℤ (not ℕ as printed: :mod:`optmech.errata`), no symmetry, window
    [−K, K], survival columns T_j = P(X >= j) (T_{K+1} = right far mass F₊):
    T_{−K} + F₋ = 1, T_j − P_j − T_{j+1} = 0 and P(X >= k) − e^ε P(X >= k+Δ) = T_k − e^ε T_{k+Δ} <= δ
    for −K <= k <= K + 1 − Δ; objective Σ L(j)P_j + F₊ min_{k>K} L + F₋ min_{k<−K} L.

    Why the truncation is a relaxation (its optimum is <= the infinite relaxed LP's, hence <= V*).
    Map any feasible infinite point to the finite LP by keeping P inside the window and lumping the
    mass outside into the far masses.  Costs do not increase: the far masses are priced at rigorous
    lower bounds (interval enclosures) of L beyond the window.  Constraints stay satisfied:
    symmetric rows 0..K are kept with the part of their window beyond K dropped, and every
    dropped term has coefficient e^ε > 0, so the kept left side is <= the true one (rows i > K are
    implied by row K).  In the ``all_k`` rows the negative term −e^ε P(X >= k+Δ) is never
    truncated: rows are kept only when {>= k+Δ} is represented exactly (inside the window plus
    F₊); the rows that would need part of F₊ are dropped, and the rows with k < −K keep
    T_{−K} − e^ε T_{k+Δ} (the dropped part of their window, mass left of −K, has coefficient +1) and
    are implied by the row k = −K.  Dropping rows only relaxes.  Every column has a finite upper
    bound that every feasible point of the full relaxation satisfies (symmetric: P_0 <=
    (2δ+e^ε−1)/(1+e^ε), P_k <= a, C_j <= min(½, j·a), F <= ½; all_k: P_j <= δ + e^ε − 1, the rest
    <= 1; each implied by a row, widened by 1e-12), as :func:`optmech.certify.dual_lower_bound`
    needs.  O(K) rows, columns and nonzeros.

    Certification loss: ``dual_lower_bound`` charges every basic column about
    DATA_RELERR·|A_jᵀ y|·u_j, so the certified value sits about 2e-14·K (relative) below the
    solver's objective (≈ 1e-10 at K = 5000) [measured].
    """
    if variant not in RELAXED_VARIANTS:
        raise SpecError(f"variant must be one of {', '.join(RELAXED_VARIANTS)}, got {variant!r}")
    eps, dlt, D = check_epsilon(epsilon), check_delta(delta), nx.check_sensitivity(sensitivity, integer=True)
    K = nx.check_int_range(K, "K", max(D, 1), MAX_WINDOW)
    cost = as_cost(cost)
    builder = build_symmetric if variant == "symmetric" else build_all_k
    return builder(cost, eps, dlt, D, K)



def relaxed_lp_lower_bound(cost: Any, epsilon: float, delta: float, sensitivity: int, dim: int = 1, *,
                           solver: str = "default", variant: str | None = None, ctx: Context | None = None) -> Bound:
    r"""The paper's relaxed LP, truncated to a relaxation, solved and certified: a lower bound on V*.

    Parameters
    ----------
    cost, epsilon, delta, sensitivity, dim
        As in :func:`theorem_lower_bound`.
    solver : str
        Solver profile name (``optmech/profiles``) or path to a TOML profile.
    ctx : Context, optional
        The clock and profile of an enclosing solve (its time budget is shared); else a fresh one
        with the default budget.
    variant : {None, "symmetric", "all_k"}
        1-D only.  ``"symmetric"``: [GV13] (25)–(27) (ε = 0) / (54)–(57) (ε > 0), the default for named
        costs (exactly symmetric).  ``"all_k"``: the 1-D version of (75) / (104) with k ∈ ℤ (no
        symmetry; the default for expression costs, whose symmetry cannot be proved).  d > 1
        always uses (75) / (104) with k ∈ ℤ, which for the separable costs ``l1`` and ``l2sq``
        decouples over coordinates: its value is exactly d × the 1-D ``all_k`` value.

    Returns
    -------
    Bound
        ``name="relaxed_lp"``, ``kind="lower"``, ``exact=False``.  ``valid`` is True when the LP
        was solved and the value certified by :func:`optmech.certify.dual_lower_bound` (weak
        duality with the solver's duals, rounding accounted for): the truncated LP is a relaxation
        of the relaxed LP (see :func:`build_relaxed_lp`), which is a relaxation of the exact
        problem [GV13, §III-B, §IV-A, §V], so the value is <= V* by construction.  The symmetric
        variant also needs a symmetric cost (condition ``cost_symmetric``; exact for named costs,
        checked on the window's integers for expressions).

    Notes
    -----
    Window: K0 = Δ(⌈n⌉ + 2) with n = (1/ε)ln(1 + (e^ε − 1)/(2δ)) (1/(2δ) at ε = 0; the optimum's
    support ends near Δ(n + 1)), doubled until the certified value improves by at most
    1e-12 relative (at most 6 doublings, K <= 1e6).  The best certified value is returned;
    ``parameters["history"]`` lists every solve.
    """
    eps, dlt, D, d = check_all(epsilon, delta, sensitivity, dim)
    marg, name_nd = resolve_cost(cost, d)
    name = "relaxed_lp"
    if d > 1:
        if variant not in (None, "all_k"):
            raise SpecError(f"dim > 1 uses the all_k relaxation (75)/(104); variant {variant!r} is for dim = 1")
        if name_nd not in SEPARABLE:
            return make_bound(name, math.nan, "lower", {"cost_separable": False}, {"dim": d, "cost": name_nd}, False,
                          f"not available: (75)/(104) decouple over coordinates only for l1 and l2sq, not {name_nd}")
        one = relaxed_lp_lower_bound(marg, eps, dlt, D, 1, solver=solver, variant="all_k", ctx=ctx)
        value = float(np.nextafter(d * one.value, -np.inf)) if math.isfinite(one.value) else one.value
        params = {"dim": d, "relaxation": "[GV13] (75)/(104) with k ∈ ℤ" , "one_dimensional": one.parameters,
                  "one_dimensional_value": one.value}
        note = (f"d × the 1-D all_k relaxed LP: (75)/(104) with k ∈ ℤ decouple over coordinates for {name_nd} "
                "so this is their value; " + one.note)
        return make_bound(name, value, "lower", {**one.conditions, "cost_separable": True}, params, False, note)

    if variant is None:
        variant = "symmetric" if marg.kind != "expr" else "all_k"
    if variant not in RELAXED_VARIANTS:
        raise SpecError(f"variant must be one of {', '.join(RELAXED_VARIANTS)}, got {variant!r}")
    n = thm8_n(eps, dlt)
    if not math.isfinite(n) or D * (math.ceil(n) + 2.0) > MAX_WINDOW:
        return make_bound(name, math.nan, "lower", {"window_within_limit": False}, {"n": n, "variant": variant}, False,
                      f"not computed: the relaxed LP needs a window of about Δ(n + 2) = {D * (n + 2):.3g} > {MAX_WINDOW:g}")
    K0 = max(D * (int(math.ceil(n)) + 2), D + 1)
    conds: dict[str, bool] = {}
    if variant == "symmetric":
        conds["cost_symmetric"] = cost_symmetric(marg)
        if not conds["cost_symmetric"]:
            return make_bound(name, math.nan, "lower", {**conds, "certified": False}, {"variant": variant}, False,
                          "not computed: the symmetric relaxation (54)–(57) assumes a symmetric cost; use variant='all_k'")
    builder = build_symmetric if variant == "symmetric" else build_all_k
    which = ("[GV13] (25)–(27) ([Geng13] (4.8)–(4.10))" if eps == 0.0 else "[GV13] (54)–(57) ([Geng13] (4.19)–(4.22))") \
        if variant == "symmetric" else ("[GV13] (75) at d = 1, k ∈ ℤ" if eps == 0.0 else "[GV13] (104) at d = 1, k ∈ ℤ")
    try:
        ctx = ctx if ctx is not None else make_context(solver, None)
        family = RelaxedLPFamily(lambda K: builder(marg, eps, dlt, D, K), K0)
        r = run(family, ctx, 0.0)
    except (SolveFailed, SolverUnavailable, ProblemTooLarge) as exc:
        why = "too large" if isinstance(exc, ProblemTooLarge) else "the solver failed"
        return make_bound(name, math.nan, "lower", {**conds, "certified": False}, {"variant": variant, "relaxation": which},
                      False, f"NOT a bound: {why} ({' '.join(str(exc).split())})")
    value = r.best.lower
    hist = r.history
    converged = len(hist) >= 2 and not (hist[-1]["lower_bound"] - hist[-2]["lower_bound"]
                                        > LP_IMPROVEMENT_RTOL * max(abs(hist[-2]["lower_bound"]), 1e-300))
    info = {"history": hist, "K": hist[-1]["size"]["K"] if hist else None, "window_converged": converged,
            "solver": f"{r.last.raw.backend}/{r.last.raw.method}" if r.last is not None else None,
            "profile": ctx.profile.name}
    certified = math.isfinite(value)
    conds["certified"] = certified
    params = {"variant": variant, "relaxation": which, "n": n, **info}
    if certified:
        note = (f"valid lower bound on V*: the relaxed LP {which}, truncated at K = {info['K']} to a relaxation "
                "(far mass priced at the minimum cost beyond the window), solved and certified by weak duality "
                "(optmech.certify.dual_lower_bound); a relaxation of the exact problem by construction")
    else:
        note = "NOT a bound: the dual certificate gave no finite value"
    return make_bound(name, value, "lower", conds, params, False, note)



#: Uniform noise's exact cost is a sum over its whole support, about Δ/δ integers per coordinate:
#: 16 bytes and 100 ns per integer measured (Δ = 30, δ = 1e-6: 3·10^7 integers, 0.46 GiB, 3.0 s),
#: rounded up.  Within a solve (``ctx`` given) it is computed only when it takes at most
#: ``UNIFORM_MEMORY_SHARE`` of the memory budget and fits in the time left.
UNIFORM_BYTES_PER_POINT, UNIFORM_SECONDS_PER_POINT = 24, 2.5e-7
UNIFORM_MEMORY_SHARE = 0.25


def _uniform_points(delta: float, sensitivity: int) -> float:
    return math.ceil(float(sensitivity) / float(delta)) + 2.0


def uniform_bytes(delta: float, sensitivity: int) -> float:
    """Memory the uniform reference of a solve will take (0 when it will not be computed)."""
    need = UNIFORM_BYTES_PER_POINT * _uniform_points(delta, sensitivity)
    return need if need <= UNIFORM_MEMORY_SHARE * memory_budget() else 0.0


def _uniform_skipped(delta: float, sensitivity: int, ctx: Context | None) -> str | None:
    """Why the uniform reference is not computed within the solve of ``ctx`` (None: it is)."""
    if ctx is None:
        return None
    n = _uniform_points(delta, sensitivity)
    if uniform_bytes(delta, sensitivity) == 0.0:
        return (f"not computed: its exact cost sums over {n:.3g} integers (about {gib(UNIFORM_BYTES_PER_POINT * n)} GiB, "
                f"more than {UNIFORM_MEMORY_SHARE:g} of the memory budget)")
    need = TIME_SAFETY * UNIFORM_SECONDS_PER_POINT * n
    if ctx.elapsed() + need + FINAL_SECONDS > ctx.time_limit:
        return f"not computed: its exact cost sums over {n:.3g} integers (about {need:.3g} s), beyond the time limit"
    return None


def approx_references(cost: Any, epsilon: float, delta: float, sensitivity: int, dim: int = 1, *,
                      with_relaxed_lp: bool = True, solver: str = "default", ctx: Context | None = None) -> list[Bound]:
    """All bounds for one (ε, δ) problem: theorem and relaxed-LP lower bounds, then the upper bounds.

    Order: ``thm_lower_bound``, ``relaxed_lp`` (unless ``with_relaxed_lp=False``), ``uniform``,
    ``discrete_laplace``, ``discrete_staircase``.  Check ``Bound.valid`` before using a value.
    Within a solve (``ctx`` given) the relaxed LP shares its time budget, and the uniform bound is
    not computed (value NaN, the note says why) when its sum over ~Δ/δ integers would not fit in
    the time left or in ``UNIFORM_MEMORY_SHARE`` of the memory budget.
    """
    eps, dlt, D, d = check_all(epsilon, delta, sensitivity, dim)
    resolve_cost(cost, d)
    out = [theorem_lower_bound(cost, eps, dlt, D, d)]
    if with_relaxed_lp:
        out.append(relaxed_lp_lower_bound(cost, eps, dlt, D, d, solver=solver, ctx=ctx))
    skipped = _uniform_skipped(dlt, D, ctx)
    out.append(uniform_upper_bound(cost, dlt, D, d) if skipped is None else
               make_bound("uniform", math.nan, "upper", {}, {"dim": d}, True, skipped))
    out.append(laplace_upper_bound(cost, eps, D, d))
    out.append(staircase_upper_bound(cost, eps, D, d))
    return out
