r"""(ε, δ)-DP on ℝ^d with ℓ2 sensitivity and the radial costs ``l2``, ``l2sq``: the radial upper end and the
marginal lower bound, in any dimension d >= 2.

Upper end (:func:`radial_shell_upper`).  The shell LP of :mod:`optmech.problems.approx_radial` (a
nonincreasing density constant on spherical shells, one shift of norm Δ) proposes a law; the
family restores monotonicity on the inner shells whose monotone rows the LP left out, audits it
(:func:`optmech.mechanisms.solved.radial_shells.radial_delta_upper`, proven: a nonincreasing radial
profile's worst shift has norm Δ) and prices it by proven shell means.  Where the audit exceeds δ
(the solver's feasibility tolerance summed over many rows, or the LP's quadrature of the kernel),
the LP is solved again with its budget lowered by 1.5 times the excess (at most
:data:`BUDGET_RETRIES` times).  Resolutions k = Δ/h double while the time share allows.

Refinement at the jumps.  The LP's laws are radial staircases: the density is flat on plateaus and falls by e^ε
across a jump, the plateaus' widths shrinking with the radius (d = 10, ε = 1, δ = 1e-3: 0.85Δ near r = 1.7,
0.6Δ near r = 24; d = 100: 0.25Δ), and where a jump falls between two edges the LP smears it over two shells
(drops of 0.46ε and 0.54ε), which costs first order in h (k = 10, 20, 40: 7.055, 7.037, 7.028).  So each
resolution's law is refined where it drops (:func:`_refine`): the next LP keeps the uniform edges and every edge
where the last law's density changes (so that law stays feasible), and adds edges h/4, h/16, ... apart around each
drop between shells that carry mass; the narrow shells give the jumps room to move and leave the plateaus
coarse.  Nothing about the staircase is assumed: each refined law is audited and priced like any other (the
audit's and the kernel's pieces follow the median shell width, so a few narrow shells do not multiply them).
Measured at d = 10, ε = 1, δ = 1e-3: 7.0250 in 12 s from k = 10, where the uniform k = 40 gave 7.028 in 37 s.
A later search may resume a law's refinement (``resume``): the family hands back the time its lower end leaves.
The shells
run from an inner ball (one shell, up to where the analytic Gaussian's radius has mass below 1e-9,
less 2Δ) to a radius beyond the Gaussian's bulk by the 1-D support length n·Δ of [GV13, (58)–(60)];
a proposal with mass in its outer shells, or an infeasible LP, widens it 1.5 times.

Lower end (:func:`radial_marginal_lower`) [derived].  Each coordinate X₁ of (ε, δ)-DP noise for ℓ2
sensitivity Δ is (ε, δ)-DP on ℝ for sensitivity Δ (the shifts t·e₁, |t| <= Δ, are in the ball, and
dropping the other coordinates is post-processing).  For ``l2sq``, E‖X‖² = Σ_i E X_i² >= d·V*_1D(x²)
for every law.  For ``l2``, V* is an infimum over radial laws (:mod:`optmech.problems.approx_radial`),
for which X = R·U with U uniform on the sphere independent of R, so E|X₁| = E R · E|U₁| and
E‖X‖₂ = E|X₁|/E|U₁| >= V*_1D(|x|)/E|U₁| (:func:`optmech.exact.sphere.abs_coordinate_mean`).
V*_1D is the 1-D family's certified lower bound.  The bound is far from tight in high dimension
(it ignores that the 1-D marginal of a radial law is a scale mixture of the sphere's coordinate
laws).  The slab relaxation (:func:`radial_slabs_lower`, :mod:`optmech.problems.approx_radial_slabs`) keeps the
distance from the shift's axis as well and is far stronger (ε = 1, δ = 1e-3, ‖x‖₂: within 1.2 % of the audited law
at d = 10, where the marginal bound is half of it).  The larger of the two is the lower end.
"""

from __future__ import annotations

import math
import time

import numpy as np

from optmech.costs.interval import round_down
from optmech.errors import OptmechError, SolveFailed
from optmech.exact.sphere import abs_coordinate_mean, shell_volumes
from optmech.families.approx import outward_mean
from optmech.mechanisms.solved.radial_shells import (
    radial_delta_upper,
    shell_moment_upper,
)
from optmech.problems.approx_radial import build_radial_shells
from optmech.problems.approx_radial_slabs import (SMALL_DELTA, build_slab_relaxation, certify_slabs, multiplier_max,
                                                  seed_rows, slab_edges, violated_rows)

__all__ = ["BUDGET_RETRIES", "RadialUpper", "SLABS_FIRST", "SLABS_GROWTH", "SLABS_MOST", "radial_applies",
           "radial_marginal_lower", "radial_shell_upper", "radial_slabs_lower", "radial_support", "slab_window",
           "upper_law_reach"]

#: Re-solves of one resolution with a lowered budget after an audit above δ.
BUDGET_RETRIES = 3
#: First resolution (shells per sensitivity) and the largest tried.
FIRST_RESOLUTION, MAX_RESOLUTION = 10, 160
#: Largest number of LP columns a resolution may have.
MAX_COLUMNS = 400_000
#: Mass in the outer Δ of the shells above which the support is widened.
OUTER_MASS = 1e-12
#: Local refinement at the law's jumps: rounds at most, the drop (in log density) that marks a jump, the edges
#: either side of one, and the relative gain below which the rounds stop.
REFINE_ROUNDS, REFINE_DROP, REFINE_WINDOW, REFINE_GAIN = 6, 1e-3, 2, 1e-5
#: Refinement only between shells one of which carries this share of the mass; each refined LP gets at most
#: this share of the time left (one that runs out leaves the time to the next resolution).
REFINE_MASS, REFINE_SHARE = 1e-6, 0.5
#: Target relative gap of the nested 1-D solve of the marginal bound, and its seconds at most.
MARGINAL_GAP, MARGINAL_SECONDS = 1e-4, 10.0


def radial_applies(norm: str, cost, dim: int) -> bool:
    """Whether the radial path applies: ℓ2 sensitivity and the cost ``l2`` or ``l2sq`` (functions of ‖x‖₂)."""
    return norm == "l2" and cost in ("l2", "l2sq") and int(dim) >= 2


class RadialUpper:
    """An audited radial shell density and its outward-rounded cost (the loop's upper-bound record)."""

    reference = None
    cells = None

    def __init__(self, edges: np.ndarray, density: np.ndarray, value: float, realised: float, certified: bool,
                 resolution: int, note: str = "", refined: int = 0, narrowest: float | None = None) -> None:
        self.edges, self.density = edges, density
        self.value, self.realised_delta, self.certified = value, realised, certified
        self.resolution, self.note = resolution, note
        self.refined, self.narrowest = refined, narrowest  # rounds of refinement at the jumps, the narrowest shell
        # where a later search may resume its refinement: its level's uniform edges, the spacing of its last
        # round's edges, the budget it passed with, its LP's seconds, and whether the refinement had converged
        self.base: np.ndarray | None = None
        self.spacing, self.budget, self.seconds, self.converged = None, None, None, False
        self.mixed = 0.0
        self.shifts_delta = np.array([realised])
        self.p = None


def _infeasible(exc: SolveFailed) -> bool:
    attempts = getattr(exc, "attempts", None) or ()
    return any("infeasible" in " ".join(map(str, a)).lower() for a in attempts) or "infeasible" in str(exc).lower()


def radial_support(epsilon: float, delta: float, sensitivity: float, d: int) -> tuple[float, float]:
    """(inner radius, outer radius) of the shells (module docstring)."""
    from scipy.stats import chi

    from optmech.mechanisms.approx.bounds import thm8_n
    from optmech.mechanisms.approx.gaussian import analytic_gaussian_sigma

    sigma = float(analytic_gaussian_sigma(epsilon, delta, sensitivity))
    inner = max(0.0, sigma * float(chi.ppf(1e-9, d)) - 2.0 * sensitivity)
    outer = sigma * float(chi.ppf(1.0 - 1e-9, d)) + (float(thm8_n(epsilon, delta)) + 2.0) * sensitivity
    return inner, outer


def _edges(inner: float, outer: float, h: float) -> np.ndarray:
    """Shells of width h from ``inner`` to beyond ``outer``; inside ``inner``, shells whose widths double inward
    (h, 2h, 4h, ...: the inner region holds almost no mass, and few shells keep the LP small)."""
    n = max(2, int(math.ceil((outer - inner) / h)))
    shells = inner + h * np.arange(n + 1, dtype=float)
    if inner == 0.0:
        return shells
    graded, x, w = [], inner, h
    while x - w > w:
        x -= w
        graded.append(x)
        w *= 2.0
    return np.concatenate([[0.0], graded[::-1], shells])


def _density(masses: np.ndarray, edges: np.ndarray, d: int) -> np.ndarray:
    """Densities (up to the common factor V_d e_n^d) of the LP's masses, made nonincreasing from the outside in
    (raising an inner shell whose monotone row the LP left out: the audit covers the law as returned)."""
    lo, hi = shell_volumes(edges, d)
    w = 0.5 * (lo + hi)
    g = np.where(w > 0, masses / np.where(w > 0, w, 1.0), 0.0)
    g = np.maximum.accumulate(g[::-1])[::-1]
    return g


def _price(edges: np.ndarray, g: np.ndarray, d: int, cost: str) -> float:
    """A proven upper bound of E L(‖X‖) for the shell density g (L = r or r²): the shells' upper mean prices,
    weighted by their volumes from above, over the total from below (:func:`~optmech.families.approx.outward_mean`)."""
    lo, hi = shell_volumes(edges, d)
    mom = shell_moment_upper(edges, d, 1 if cost == "l2" else 2)
    return outward_mean(mom, g * hi, float(round_down(math.fsum((g * lo).tolist()), 2.0**-50)))


def radial_shell_upper(cost: str, epsilon: float, delta: float, sensitivity: float, d: int, solve_lp,
                       seconds: float, resolution: int | None = None, start: int | None = None,
                       resume: RadialUpper | None = None,
                       last_seconds: float | None = None) -> tuple[RadialUpper | None, list[dict]]:
    """The best audited radial shell law found within ``seconds`` (module docstring), and one record per LP
    solved (resolution, shells, columns, budget, audited δ, value, seconds).

    ``solve_lp(lp, seconds)`` solves an LP within that many seconds and returns an object with ``x``
    (raising :class:`~optmech.errors.SolveFailed` on failure).  ``resolution`` fixes k (shells per Δ);
    ``start`` is the first k of the doubling (default :data:`FIRST_RESOLUTION`).  ``resume`` (a law an earlier
    search returned) first goes on refining that law where its rounds had not converged; ``last_seconds`` (the
    seconds of the earlier search's last resolution) decides whether ``start`` fits.
    """
    state: dict = {"best": None, "log": []}
    try:
        _search(cost, epsilon, delta, sensitivity, d, solve_lp, seconds, resolution, state, start, resume,
                last_seconds)
    except KeyboardInterrupt as exc:  # what finished stays: the caller reads it off the exception
        exc.radial_best, exc.radial_log = state["best"], state["log"]  # type: ignore[attr-defined]
        raise
    return state["best"], state["log"]


def _search(cost: str, epsilon: float, delta: float, sensitivity: float, d: int, solve_lp, seconds: float,
            resolution: int | None, state: dict, start: int | None = None, resume: RadialUpper | None = None,
            last_seconds: float | None = None) -> None:
    t0 = time.perf_counter()
    inner, outer = radial_support(epsilon, delta, sensitivity, d)
    log: list[dict] = state["log"]
    k = int(resolution) if resolution else int(start or FIRST_RESOLUTION)

    def left() -> float:
        return seconds - (time.perf_counter() - t0)

    def solve(edges: np.ndarray, budget: float, k: int, refined: int, base: np.ndarray, spacing: float,
              widen: bool = False, share: float = 1.0) -> tuple[str, float, float]:
        """One shell LP on ``edges`` with the budget lowered after each audit above δ (at most BUDGET_RETRIES
        times): ("ok", the budget that passed, the value) when a law passed its audit, else ("infeasible" |
        "outer" (mass in the outer Δ, checked where ``widen``) | "stop", budget, inf); each LP's record joins the
        log, and a law that passed replaces a dearer best and is ``state["law"]`` (``base`` and ``spacing``: the
        level's uniform edges and the spacing of the edges added around its jumps); each LP gets ``share`` of the
        time left."""
        t_call = time.perf_counter()
        for _ in range(BUDGET_RETRIES + 1):
            model = build_radial_shells(cost, epsilon, budget, sensitivity, d, edges)
            try:
                raw = solve_lp(model.lp, max(0.5, share * left()))
            except SolveFailed as exc:  # the time share ran out or the solver failed: keep what was found
                return ("infeasible" if _infeasible(exc) else "stop"), budget, math.inf
            x = getattr(raw, "x", None)
            if x is None:
                return "infeasible", budget, math.inf
            masses = model.masses(x)
            total = math.fsum(masses.tolist())
            if not total > 0:
                return "stop", budget, math.inf
            if widen and math.fsum(masses[edges[1:] > edges[-1] - sensitivity].tolist()) / total > OUTER_MASS:
                return "outer", budget, math.inf
            g = _density(masses, edges, d)
            realised = radial_delta_upper(edges, g, epsilon, sensitivity, d)
            value = _price(edges, g, d, cost)
            ok = realised <= delta and math.isfinite(value)
            log.append({"resolution": k, "refined": refined, "shells": int(edges.size - 1), "columns": model.lp.cols,
                        "budget": budget, "audited_delta": realised, "value": value, "certified": ok,
                        "seconds": time.perf_counter() - t_call})
            if ok:
                if state["best"] is None or value < state["best"].value:
                    up = RadialUpper(edges, g, value, realised, True, k, refined=refined,
                                     narrowest=float(np.diff(edges).min()))
                    up.base, up.spacing, up.budget, up.seconds = base, spacing, budget, time.perf_counter() - t_call
                    state["best"] = up
                state["law"] = (edges, g)
                return "ok", budget, value
            budget = budget - 1.5 * (realised - delta) - 1e-3 * delta
            if not budget > 0:
                return "stop", budget, math.inf
        return "stop", budget, math.inf

    if resume is not None and resume.base is not None and not resume.converged and not resolution:
        state["law"] = (resume.edges, resume.density)
        _refine(resume.base, resume.spacing, resume.value, resume.budget, resume.resolution, d, solve, left,
                0.5 * resume.seconds, state, rounds_done=resume.refined)
    while True:
        h = sensitivity / k
        cols = ((outer - inner) / h) * (k + 3)
        if cols > MAX_COLUMNS or left() <= 0.5 or (not resolution and k > MAX_RESOLUTION):
            break
        if last_seconds is not None and last_seconds * 10.0 > left():  # a doubling costs about 8 times
            break
        t_k = time.perf_counter()
        budget = delta * (1.0 - 2e-3)
        state["law"] = None
        for widened in range(3):
            edges = _edges(inner, outer, h)
            status, budget, value = solve(edges, budget, k, 0, edges, h, widen=widened < 2)
            if status in ("infeasible", "outer") and widened < 2:  # the support is too small
                outer = inner + 1.5 * (outer - inner)
                continue
            break
        last_seconds = time.perf_counter() - t_k
        if resolution:
            break
        # refinement at the law's jumps (module docstring): a refined LP costs a few times its level's
        if state["law"] is not None:
            _refine(edges, h, value, budget, k, d, solve, left, last_seconds, state)
        k *= 2
        if k > MAX_RESOLUTION:
            break


def _refine(base: np.ndarray, spacing: float, value: float, budget: float, k: int, d: int, solve, left, first: float,
            state: dict, rounds_done: int = 0) -> None:
    """Rounds of local refinement of a level's uniform shells at the last law's jumps (module docstring):
    the new edges are the uniform ones, every edge where the last law's density changes (so that law stays
    feasible), and :data:`REFINE_WINDOW` edges either side of each drop by more than :data:`REFINE_DROP` (in
    log) between shells one of which has :data:`REFINE_MASS`, spaced ``spacing``/4, /16, ... (``spacing`` = h
    at a level's first round); rounds stop when one gains less than :data:`REFINE_GAIN` of the value or no drop
    is left (converged: the best law, where it is of this level, says so), or the next (predicted at 1.5 times the
    last, the first at twice ``first``) does not fit the time left, or an LP fails.  ``rounds_done``: rounds an
    earlier search ran on this law."""
    if _refine_rounds(base, spacing, value, budget, k, d, solve, left, first, state, rounds_done):
        best = state["best"]
        if best is not None and best.resolution == k:
            best.converged = True


def _refine_rounds(base: np.ndarray, spacing: float, value: float, budget: float, k: int, d: int, solve, left,
                   first: float, state: dict, rounds_done: int) -> bool:
    """The rounds of :func:`_refine`; True when they converged."""
    took = 2.0 * first
    for refined in range(rounds_done + 1, rounds_done + REFINE_ROUNDS + 1):
        if 1.5 * took > left():
            return False
        edges, g = state["law"]
        logs = np.log(np.maximum(g, np.finfo(float).tiny))
        step = np.diff(logs)  # step[i]: into shell i + 1, at edge i + 1
        mass = g * shell_volumes(edges, d)[0]
        mass = mass / mass.sum()
        live = np.maximum(mass[1:], mass[:-1]) > REFINE_MASS  # edges between shells that carry mass
        change = edges[1:-1][(step < 0) & live]
        drops = edges[1:-1][(step < -REFINE_DROP) & live]
        if drops.size == 0:
            return True
        spacing /= 4.0
        near = (drops[:, None] + spacing * np.arange(-REFINE_WINDOW, REFINE_WINDOW + 1)[None, :]).ravel()
        new = np.unique(np.concatenate([base, change, near[(near > 0) & (near < base[-1])]]))
        new = new[np.concatenate([[True], np.diff(new) > 1e-9 * base[-1]])]
        t = time.perf_counter()
        status, budget, got = solve(new, budget, k, refined, base, spacing, share=REFINE_SHARE)
        took = time.perf_counter() - t
        if status != "ok":
            return False
        if got > value * (1.0 - REFINE_GAIN):
            return True
        value = got
    return False


def radial_marginal_lower(cost: str, epsilon: float, delta: float, sensitivity: float, d: int,
                          seconds: float = MARGINAL_SECONDS, gap: float = MARGINAL_GAP) -> tuple[float, str] | None:
    """The marginal lower bound of the module docstring, with its description; None when the 1-D solve
    gives nothing within ``seconds`` (its target relative gap ``gap``)."""
    import optmech
    from optmech.spec import ApproxDP, Continuous, Problem

    one_d = "abs" if cost == "l2" else "square"
    if seconds < 0.5:  # too little time for a 1-D solve
        return None
    try:
        r = optmech.solve(Problem(privacy=ApproxDP(epsilon, delta), cost=one_d, sensitivity=sensitivity,
                                  domain=Continuous(), target_gap=gap),
                          time_limit=seconds, references=False)
    except OptmechError:
        return None
    if r.status == "interrupted":  # the signal was meant for the whole solve: pass it on
        raise KeyboardInterrupt
    v = float(r.lower_bound)
    if not (math.isfinite(v) and v > 0):
        return None
    if cost == "l2sq":
        bound = float(round_down(d * v, 2.0**-50))
        why = (f"the marginal bound: each coordinate is (epsilon, delta)-DP on R for the sensitivity (data processing), "
               f"so E||X||^2 = sum_i E X_i^2 >= d V*_1D(x^2) = {d} x {v:.9g} (the 1-D family's certified lower bound)")
    else:
        _, mean_hi = abs_coordinate_mean(d)
        bound = float(round_down(v / mean_hi, 2.0**-50))
        why = (f"the marginal bound: V* is attained over radial laws X = R U (rotation averaging), X_1 is (epsilon, "
               f"delta)-DP on R for the sensitivity, and E||X||_2 = E|X_1| / E|U_1| >= V*_1D(|x|) / E|U_1| = {v:.9g} / "
               f"{mean_hi:.9g} (the 1-D family's certified lower bound; E|U_1| = Gamma(d/2)/(sqrt(pi) Gamma((d+1)/2)))")
    return bound, why


def _keep(best: list, value: float, power: int, sensitivity: float, why: str) -> None:
    """Record the certified bound ``value`` (at sensitivity 1) in ``best`` when it is the largest so far, with the
    description ``why``: V*(Δ) = Δ^m V*(1)."""
    if not (math.isfinite(value) and value > 0):
        return
    bound = float(round_down(round_down(float(sensitivity) ** power) * value))
    if best[0] is None or bound > best[0][0]:
        best[0] = (bound, f"{why}: {value:.9g} at sensitivity 1, times sensitivity^{power}")


#: Nodes per sensitivity along the shift of the slab relaxation's first LP, and its finest.
SLABS_FIRST, SLABS_MOST = 2, 16
#: Spacing of the slab LP's first radii (column generation adds more where the dual function dips).
SLABS_SPACING = 1.0 / 16.0
#: Growth of the first slab LP's solve time per doubling of the nodes (measured 9-18 at d = 2, 3, 10 and 100 with
#: every row; with the rows generated 9-13 from 4 to 8 nodes at d = 10 and 100), and a level's LP seconds over its
#: first LP's (the later rounds are warm-started; measured 1.2-1.9): a doubling is tried only when their product
#: times this level's first LP, and the certificate's reserve, fit the time left.  A finer level that runs out of
#: time leaves the coarser level's certificate its reserve.
SLABS_GROWTH, SLABS_LEVEL = 12.0, 1.5
#: Column-generation rounds per resolution at most, the radii added per round at most, and the seconds at most and
#: at least of the quick certificate that locates the dips of each round (it runs as long as the round's LP took).
SLABS_ROUNDS, SLABS_ADD, SLABS_PROBE_SECONDS, SLABS_PROBE_MIN = 16, 1500, 2.0, 0.3
#: Column-generation rounds of a level that a finer level follows (its warm-started rounds are cheap next to the
#: finer level's LPs, and a converged coarse level is what is left when the finer one runs out of time: at d = 100,
#: ε = 1, δ = 1e-3, 45 s, two rounds left the bound at 24.63, six at 24.82; at d = 10, ε = 4: 1.997 and 2.015).
SLABS_COARSE_ROUNDS = 6
#: Least distance of a radius column generation adds from the LP's radii and from each other.
SLABS_SEPARATION = 1e-3
#: Relative depth below the LP's value from which a dip of the dual function adds radii (a shallower dip costs the
#: bound at most this much).
SLABS_DIP = 1e-4
#: Share of the seconds kept for the last certificate (no further LP starts when it would eat into it); its
#: linear enclosures converge in 2-5 s at 8 nodes per sensitivity (d = 10 to 100, δ = 1e-3).
SLABS_CERTIFY_SHARE = 0.1
#: Row generation from the second level on: a finer level's first LP keeps the rows near the rows whose multipliers
#: the last level's LP made nonzero (within SLABS_ROW_REACH of its nodes and slabs) and the rows its law violates at
#: the finer resolution; a round adds every row the LP's law violates by more than SLABS_ROW_VIOLATION·δ (dropping
#: rows only relaxes: the certificate is as valid).  At d = 10 and 100, ε = 1, δ = 1e-3, 8 nodes per sensitivity,
#: about a quarter of the rows carried a multiplier (at d = 100 only those with a <= 0).
SLABS_ROW_REACH, SLABS_ROW_VIOLATION = 1, 1e-7
#: Radii past each slab edge (in slab widths) in every level's first LP.
SLABS_PAST_EDGE = np.array([0.005, 0.015, 0.03, 0.06])
#: The window ends 2Δ past the radius the analytic Gaussian exceeds with this probability (δ < SMALL_DELTA: the
#: second; there the optimum's tail is thin, and a wider window only adds radii where the LP's dual dips).
SLABS_TAIL, SLABS_TAIL_SMALL_DELTA = 1e-4, 1e-2


def slab_window(epsilon: float, delta: float, d: int) -> tuple[float, float]:
    """(first slab edge, window radius) of the slab relaxation at sensitivity 1: the window ends 2Δ past the
    radius the analytic Gaussian exceeds with probability :data:`SLABS_TAIL` (:data:`SLABS_TAIL_SMALL_DELTA` at
    δ below SMALL_DELTA), and the slabs below the radius it exceeds with probability 1 − 1e-9 (less 2Δ) are one.  Any window and any edges give a valid bound (mass beyond the window is
    priced L(window), rows that leave it are dropped); these only decide how tight and how large the LP is."""
    from scipy.stats import chi

    from optmech.mechanisms.approx.gaussian import analytic_gaussian_sigma

    sigma = float(analytic_gaussian_sigma(epsilon, delta, 1.0))
    first = max(0.0, sigma * float(chi.ppf(1e-9, d)) - 2.0)
    tail = SLABS_TAIL_SMALL_DELTA if delta < SMALL_DELTA else SLABS_TAIL
    return first, sigma * float(chi.ppf(1.0 - tail, d)) + 2.0


def upper_law_reach(up: "RadialUpper", d: int, sensitivity: float, tail: float = 1e-8) -> float:
    """The radius (at sensitivity 1) beyond which the radial shell law ``up`` has mass below ``tail``."""
    e = np.asarray(up.edges, dtype=float) / float(sensitivity)
    m = np.maximum(np.asarray(up.density, dtype=float), 0.0) * shell_volumes(e, d)[0]
    m /= m.sum()
    above = np.cumsum(m[::-1])[::-1]  # mass of shells i, i + 1, ...
    i = int(np.argmax(above < tail)) if (above < tail).any() else e.size - 1
    return float(e[i])


def slab_width(n: int, d: int) -> float:
    """The slab width β at n nodes per sensitivity: 1/n up to 4 nodes in d <= 16, else 2/n.  Wider slabs halve the
    LP (at ε = 1, δ = 1e-3, 60 s, with 8 nodes: d = 10 reached 7.005 with slabs 1/4 wide, where 1/8 left no time
    for the column generation and the bound stayed at 4 nodes' 6.995; d = 5: 4.300 against 4.290; measured)."""
    return (2.0 if d > 16 or n >= 8 else 1.0) / n


def radial_slabs_lower(cost: str, epsilon: float, delta: float, sensitivity: float, d: int, solve_lp,
                       seconds: float, reach: float | None = None) -> tuple[float, str] | None:
    """The slab relaxation's certified lower bound (:mod:`optmech.problems.approx_radial_slabs`) with its
    description, or None (too little time, or no LP solved).

    Levels of :data:`SLABS_FIRST`, 2·SLABS_FIRST, ... nodes per sensitivity (slabs :func:`slab_width` wide).  From the
    second level on, rows are generated (:data:`SLABS_ROW_REACH`): the first LP keeps the rows near those whose
    multipliers the last level used and those its law violates at the finer resolution, and each round adds the
    rows the LP's law violates; fewer rows only relax, so every certificate stays valid.  At each level, column
    generation: the LP on radii proposes multipliers, a quick branch and bound (as long as the LP took, within
    :data:`SLABS_PROBE_MIN` and :data:`SLABS_PROBE_SECONDS`) finds the radii where the dual function φ dips below the
    LP's value by more than :data:`SLABS_DIP` of it, every dip and not only the least (``certify_slabs(level=)``),
    those radii join the LP (one per :data:`SLABS_SEPARATION`, a tenth of it where every dip lies that close to an
    LP radius; a round with nothing to add ends the level), and the next LP starts from the last simplex basis (the
    new columns at zero keep it feasible; added rows enter basic).  A level that a finer one follows (predicted from its first LP by
    :data:`SLABS_GROWTH` and :data:`SLABS_LEVEL`) runs :data:`SLABS_COARSE_ROUNDS` rounds and hands on the radii its
    last LP weighted (or fewer, where they stall); the last level goes on until no dip is deep and no row is
    violated, or no LP fits before the reserve
    (:data:`SLABS_CERTIFY_SHARE` of ``seconds``, held only while a certificate is pending), which the last
    certificate gets: of the relaxations whose quick certificate stopped early, the one whose least value of φ seen,
    less Λδ, is highest (what it can certify at most).  Every round's certificate is a valid bound and the best is
    kept.  ``solve_lp(lp, seconds)`` solves an LP and returns an object with ``row_dual`` and ``objective`` (and
    ``x`` and ``basis`` where it has them).  ``reach`` (at sensitivity 1; e.g. :func:`upper_law_reach` of the
    audited radial law) caps the window at ``reach`` + 2.  An interrupt keeps what finished: the best bound rides
    on the exception (``slabs_best``)."""
    best: list = [None]
    try:
        _slabs_search(cost, epsilon, delta, sensitivity, d, solve_lp, seconds, best, reach)
    except KeyboardInterrupt as exc:
        exc.slabs_best = best[0]  # type: ignore[attr-defined]
        raise
    return best[0]


def _slabs_search(cost: str, epsilon: float, delta: float, sensitivity: float, d: int, solve_lp, seconds: float,
                  best: list, reach: float | None) -> None:
    t0 = time.perf_counter()
    power = 1 if cost == "l2" else 2
    first_edge, outer = slab_window(epsilon, delta, d)
    if reach is not None and math.isfinite(reach) and reach > first_edge:
        outer = min(outer, float(reach) + 2.0)
    grid = np.arange(SLABS_SPACING, outer, SLABS_SPACING)
    radii, n = grid, SLABS_FIRST
    full_reserve = SLABS_CERTIFY_SHARE * seconds
    pending = None  # (model, duals, LP value, n, potential) of the relaxation the last certificate is for
    top = -math.inf  # the best bound so far at sensitivity 1

    def left() -> float:
        return seconds - (time.perf_counter() - t0)

    def reserve() -> float:  # the last certificate's time, when one is pending; else the next LP's quick one
        return full_reserve if pending is not None else min(full_reserve, SLABS_PROBE_SECONDS + 0.5)

    def finer_fits(first_lp: float) -> bool:  # a finer level exists, and its LPs and the last certificate fit
        return 2 * n <= SLABS_MOST and SLABS_GROWTH * SLABS_LEVEL * first_lp + reserve() <= left()

    def certify_pending() -> None:
        model, dual, lp_value, level, _ = pending
        value, info = certify_slabs(model, dual, seconds=max(0.2, left() - 0.2))
        _keep_slabs(best, value, info, level, power, sensitivity, lp_value)

    rows = None  # the first level keeps every row
    while n <= SLABS_MOST and left() > 1.0:
        beta = slab_width(n, d)
        edges = slab_edges(beta, outer, first_edge)
        # φ dips just past the slab edges, where a slab opens on the sphere of radius r (τ has a square-root onset)
        radii = np.union1d(radii, (edges[1:, None] + beta * SLABS_PAST_EDGE[None, :]).ravel())
        prev = start = first_lp = None
        for round_ in range(SLABS_ROUNDS):
            model = build_slab_relaxation(power, epsilon, delta, d, n, edges, outer, radii, start, rows)
            t_lp = time.perf_counter()
            try:  # every LP leaves the reserve to the last certificate
                raw = solve_lp(model.lp, max(1.0, left() - reserve()))
                dual = getattr(raw, "row_dual", None)
            except (SolveFailed, OptmechError):
                dual = None
            if dual is None:
                if prev is None:  # this level has no LP: the last level's certificate gets the time
                    if pending is not None and left() > 0.5:
                        certify_pending()
                    return
                break
            took = time.perf_counter() - t_lp
            first_lp = took if first_lp is None else first_lp
            solved = (model, raw)
            dual = np.asarray(dual)
            lp_value = float(raw.objective) * model.scale
            # a quick branch and bound locates the dips of φ below the LP's value plus Λδ, every one of them, within
            # the LP's own seconds (at least SLABS_PROBE_MIN, at most SLABS_PROBE_SECONDS)
            lam_delta = multiplier_max(model, dual) * model.delta
            probe = max(SLABS_PROBE_MIN, min(SLABS_PROBE_SECONDS, took, left()))
            value, info = certify_slabs(model, dual, seconds=probe, level=lp_value + lam_delta - SLABS_DIP * abs(lp_value))
            _keep_slabs(best, value, info, n, power, sensitivity, lp_value)
            # the last certificate goes to the relaxation whose quick one stopped early with the most to gain: the
            # least value of φ seen less Λδ bounds what its certificate can reach (from above), and the latest
            # wins ties (a finer level's LP may stand above a coarser one's while its quick bound is still below)
            potential = min(info["phi_seen"], lp_value + info["multiplier_max"] * delta) - info["multiplier_max"] * delta
            if info["rounds_left"] and (pending is None or potential >= pending[4]):
                pending = (model, dual, lp_value, n, potential)
            top = max(top, value)
            if pending is not None and pending[4] <= top:
                pending = None  # what it could certify, a bound already reaches
            z = lp_value + info["multiplier_max"] * delta
            low = info["seen_values"] < z - SLABS_DIP * abs(lp_value)  # Λδ may be far above the LP's value
            # the rows left out that the LP's law violates (row generation)
            added = violated_rows(model, getattr(raw, "x", None), SLABS_ROW_VIOLATION)
            # stalled: neither the LP's value nor what its certificate can reach moved (the dips only moved
            # elsewhere; the quick certificate's own value varies with where its seconds ran out)
            stalled = (prev is not None and prev[0] - lp_value <= SLABS_DIP * abs(lp_value)
                       and potential - prev[1] <= SLABS_DIP * abs(lp_value) and added is None)
            prev = (lp_value, potential)
            # where a finer level fits, a level's column generation only prepares its radii (SLABS_COARSE_ROUNDS,
            # or until it stalls); the last level goes on while dips are deep or rows are violated and LPs fit
            finer = finer_fits(first_lp)
            if ((not low.any() and added is None) or (finer and (stalled or round_ + 1 >= SLABS_COARSE_ROUNDS))
                    or took + reserve() > left()):
                break
            radii = model.radii
            if low.any():
                cand = info["seen_radii"][low][np.argsort(info["seen_values"][low])]
                # at most one new radius per SLABS_SEPARATION, none that close to an LP radius (nearly equal columns
                # stall the interior point)
                near = np.abs(model.radii[np.clip(np.searchsorted(model.radii, cand), 1, model.radii.size - 1)
                                          - np.array([[1], [0]])] - cand).min(axis=0)
                # where every dip lies that close to an LP radius (a dip just past a slab edge's onset, located
                # precisely by the certificate's linear enclosures), a tenth of the separation
                apart = SLABS_SEPARATION if (near > SLABS_SEPARATION).any() else 0.1 * SLABS_SEPARATION
                cand = cand[near > apart]
                _, pick = np.unique(np.round(cand / apart), return_index=True)
                radii = np.concatenate([model.radii, cand[np.sort(pick)][:SLABS_ADD]])
                if radii.size == model.radii.size and added is None:
                    break  # nothing to add: the next LP would be this one
            if added is not None:
                rows = np.concatenate([model.rows, added])
            start = (model, getattr(raw, "basis", None))
        # a finer level when its LPs (predicted from this level's first) and the last certificate fit; otherwise
        # this level's certificate gets the time left, and a finer level follows only if it still fits after it
        if not finer_fits(first_lp):
            if pending is not None:
                certify_pending()
                pending = None
            if not finer_fits(first_lp):
                return
        # the next level starts from the grid and the radii this level's last LP put mass on, and from the rows near
        # those its multipliers used and those its law violates at the finer resolution
        model, raw = solved
        x = getattr(raw, "x", None)
        mass = None if x is None else np.asarray(x, dtype=float)[1: 1 + model.radii.size]
        # (an interior point's masses are nowhere 0: those above 1e-9 of the largest)
        radii = grid if mass is None else np.union1d(grid, model.radii[mass > 1e-9 * max(mass.max(initial=0.0), 1e-300)])
        n *= 2
        beta = slab_width(n, d)
        rows = seed_rows(model, getattr(raw, "row_dual", None), getattr(raw, "x", None), n,
                         slab_edges(beta, outer, first_edge), SLABS_ROW_REACH, SLABS_ROW_VIOLATION)
    if pending is not None and left() > 0.5:
        certify_pending()


def _keep_slabs(best: list, value: float, info: dict, n: int, power: int, sensitivity: float,
                lp_value: float) -> None:
    _keep(best, value, power, sensitivity, (
        f"the slab relaxation (optmech.problems.approx_radial_slabs): weak duality over the test functions "
        f"hat_k(<x, w>) 1{{dist(x, axis w) in slab j}} ({n} nodes per sensitivity along the shift), its "
        f"multipliers from an LP on {info['radii']} radii (LP value {lp_value:.9g}), inf over every r >= 0 of the "
        f"Lagrangian bounded with outward rounding on {info['subintervals']} sub-intervals"))
