"""Certificates: a rigorous lower bound from the LP dual, an exactly private mechanism above.

Lower bound.  For ``min c·x, rl <= A x <= ru, 0 <= x <= cu`` and any
multipliers y, weak duality gives, with s = c − Aᵀy,

    c·x >= Σ_i (y_i·rl_i if y_i > 0 else y_i·ru_i) + Σ_j min(0, s_j)·cu_j.

The certificate (1) clips y to the signs the one-sided rows allow, (2) re-optimises the
normalisation multiplier exactly (a 1-D concave piecewise-linear maximisation), and
(3) evaluates the bound with an a-priori floating-point error term that also covers the
difference between the LP's float data and the true coefficients (e^ε, cost bounds, scaling),
so the bound holds for the exact relaxation.  It is a bound on V* because every builder in
:mod:`optmech.problems` produces a relaxation.

Upper bound.  The window masses of the LP primal are repaired to
their smallest majorant φ(x) = max_y p(y)·β^{⌈|x−y|/W⌉} with β slightly above e^{−ε}; φ is
ε-DP on the whole lattice, including its geometric tails (the majorant of a finitely supported
function extends periodically beyond the window).  The repaired mechanism's privacy is audited
with outward rounding over the window and two tail periods each side (all further pairs are
scaled copies), and its cost is summed with outward rounding, tails included.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from optmech.costs import Cost
from optmech.lp import LinearProgram
from optmech.problems.lattice import Grid1D, LatticeMechanism  # noqa: F401  (LatticeMechanism: re-exported)

U = 2.0**-53  # unit roundoff
#: Relative error allowed between the LP's float data and the exact relaxation's coefficients.
#: Every coefficient the builders emit is at most ~8 roundings (each <= U, exp/log within 1 ulp)
#: away from its exact value: e^{±ε}, ratios of scale factors, widths and outward-rounded cost
#: bounds divided by a scale.  8U ≈ 8.9e-16, so 1e-14 leaves a factor of ten.
DATA_RELERR = 1e-14
#: Log-margin by which the repaired mechanism is *more* private than required.
PRIVACY_MARGIN = 1e-11
#: Relative widening of a closed-form reference's floating-point value before it serves as a certified
#: upper bound (each is a closed form of a few correctly rounded operations, or rounded up already).
CLOSED_FORM_WIDENING = 1e-12


# ------------------------------------------------------------------------------------------------
# lower bound
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LowerCertificate:
    value: float
    normalisation_multiplier: float
    clipped_rows: int
    error_term: float
    solver_objective: float
    #: how much lower the bound is than it would be without the allowance for rounding and data
    #: errors in the reduced costs (``gamma·mag``): large at extreme ε, where coefficients span e^ε
    rounding_loss: float = 0.0


#: While a :func:`recording` block is active, every certificate issued by :func:`dual_lower_bound`
#: is appended here as ``(lp, y, certificate)`` with ``y`` the repaired multipliers it used.
_RECORDERS: list[list] = []


@contextlib.contextmanager
def recording():
    """Collect ``(lp, y, LowerCertificate)`` for every lower bound certified inside the block.

    ``y`` holds the repaired row multipliers, the normalisation row's included, so that
    :func:`exact_dual_bound` can re-derive the bound in rational arithmetic.  For tests and audits;
    it keeps every LP alive, so use it on small problems.
    """
    log: list = []
    _RECORDERS.append(log)
    try:
        yield log
    finally:
        _RECORDERS.remove(log)


def exact_dual_bound(lp: LinearProgram, y: np.ndarray) -> Fraction:
    """The weak-duality bound of ``y`` for ``lp``'s data, evaluated exactly (``fractions.Fraction``).

    For ``min c·x, rl <= A x <= ru, cl <= x <= cu`` and multipliers ``y`` with the signs the rows
    allow (``y_i <= 0`` where ``rl_i = −∞``, ``y_i >= 0`` where ``ru_i = +∞``), every feasible ``x``
    has ``c·x >= Σ_i y_i·(rl_i if y_i > 0 else ru_i) + Σ_j (min(0, s_j)·cu_j + max(0, s_j)·cl_j)``
    with ``s = c − Aᵀy``: the reduced costs are the exact dual slacks, so the dual is feasible by
    construction and the bound is exact for the floating-point data as given (every float is a
    rational).  Raises ValueError when a sign condition or a needed bound fails.
    """
    F = Fraction
    rl, ru, cl, cu = lp.row_lower, lp.row_upper, lp.col_lower, lp.col_upper
    yv = np.asarray(y, dtype=float)
    if np.any((yv > 0) & ~np.isfinite(rl)) or np.any((yv < 0) & ~np.isfinite(ru)):
        raise ValueError("a multiplier has the wrong sign for a one-sided row")
    A = lp.A.tocsc()
    yf = [F(v) for v in yv.tolist()]
    total = F(0)
    for i, v in enumerate(yf):
        if v > 0:
            total += v * F(float(rl[i]))
        elif v < 0:
            total += v * F(float(ru[i]))
    data, indices, indptr = A.data.tolist(), A.indices.tolist(), A.indptr.tolist()
    for j in range(A.shape[1]):
        sj = F(float(lp.c[j]))
        for t in range(indptr[j], indptr[j + 1]):
            v = yf[indices[t]]
            if v:
                sj -= F(data[t]) * v
        if sj < 0:
            if not math.isfinite(cu[j]):
                raise ValueError(f"column {j} has a negative reduced cost and no upper bound")
            total += sj * F(float(cu[j]))
        elif sj > 0 and cl[j] != 0:
            if not math.isfinite(cl[j]):
                raise ValueError(f"column {j} has a positive reduced cost and no lower bound")
            total += sj * F(float(cl[j]))
    return total


#: far centres tried for costs not proven nondecreasing in |x|: ±10^j·Δ for j in FAR_DECADES, at
#: most FAR_MAX_CELLS lattice points or cells out (indices and edges stay exact in float64)
FAR_DECADES = range(2, 16)
FAR_MAX_CELLS = 2.0**40
#: far noise within this fraction (or the target gap) of the reference cost of the cost's proven
#: floor answers the problem: V* is an infimum in [floor, far cost]
INFIMUM_TOL = 1e-6


def is_infimum_at_infinity(far_value: float, floor: float, reference: float, target_gap: float) -> bool:
    """Whether noise far from 0 (cost ``far_value``) is within the tolerance of the cost's proven floor,
    measured against ``reference``, the cost of the noise centred at 0 (and at most half of it)."""
    return far_value <= 0.5 * reference and far_value - floor <= max(target_gap, INFIMUM_TOL) * reference


def _best_multiplier(s: np.ndarray, a: np.ndarray, u: np.ndarray, rhs0: float) -> float:
    """The z maximising F(z) = rhs0·z + Σ_j min(0, s_j − z a_j)·u_j (a_j > 0): F'(z) = rhs0 − Σ_{s_j/a_j < z}
    a_j u_j, so the optimum is the first breakpoint s_j/a_j where the drop reaches rhs0."""
    bp = s / a
    order = np.argsort(bp)
    pos = int(np.searchsorted(np.cumsum((a * u)[order]), rhs0))
    return float(bp[order[min(pos, len(order) - 1)]])


def _row_terms(y: np.ndarray, rl: np.ndarray, ru: np.ndarray) -> np.ndarray:
    """Each row's term in the dual objective: y·rl where y > 0, y·ru where y < 0 (infinite bounds read as 0,
    which the sign clipping makes exact)."""
    return np.where(y > 0, y * np.where(np.isfinite(rl), rl, 0.0), y * np.where(np.isfinite(ru), ru, 0.0))


def dual_lower_bound(lp: LinearProgram, row_dual: np.ndarray, solver_objective: float = math.nan) -> LowerCertificate:
    """Certified lower bound of ``lp`` from approximate row duals (any vector is acceptable).

    Uses the sign convention ``c = Aᵀy + s`` (HiGHS); the normalisation row index is taken from
    ``lp.meta["normalisation_row"]`` and must be an equality row with a nonnegative coefficient
    on every column it touches.
    """
    y = np.array(row_dual, dtype=float, copy=True)
    y[~np.isfinite(y)] = 0.0
    rl, ru = lp.row_lower, lp.row_upper
    clip_pos = ~np.isfinite(rl) & (y > 0)  # ≤-only rows need y <= 0
    clip_neg = ~np.isfinite(ru) & (y < 0)  # ≥-only rows need y >= 0
    y[clip_pos | clip_neg] = 0.0
    i0 = int(lp.meta.get("normalisation_row", 0))
    rhs0 = float(lp.row_lower[i0])
    y[i0] = 0.0

    A = lp.A
    absA = abs(A)
    s = lp.c - A.T @ y
    mag = np.abs(lp.c) + absA.T @ np.abs(y)
    nnz_col = np.diff(A.indptr)
    gamma = (nnz_col + 4) * U * 1.01 + DATA_RELERR
    s_lo = s - gamma * mag - np.finfo(float).tiny

    # row terms (other than the normalisation row)
    row_term = _row_terms(y, rl, ru)
    row_term[i0] = 0.0

    a0 = A[[i0], :].toarray().ravel()
    cu = lp.col_upper
    fixed = a0 == 0
    const = math.fsum(np.minimum(0.0, s_lo[fixed]) * cu[fixed]) + math.fsum(row_term)
    # maximise F(z) = rhs0·z + Σ_{a_j>0} min(0, s_lo_j − z a_j)·cu_j over z
    idx = np.flatnonzero(~fixed)
    aj, sj, uj = a0[idx], s_lo[idx], cu[idx]
    z = _best_multiplier(sj, aj, uj, rhs0)
    # guard against rounding in the breakpoint itself: evaluate F at z (a lower bound for any z)
    diff = sj - z * aj
    scale_j = (np.abs(sj) + np.abs(z * aj)) * uj
    terms = np.minimum(0.0, diff) * uj
    fixed_terms = np.minimum(0.0, s_lo[fixed]) * cu[fixed]
    value = math.fsum([rhs0 * z, const, math.fsum(terms)])
    # rounding of this evaluation: every product and difference is within a few ulps
    maybe_neg = diff < 4 * U * (np.abs(sj) + np.abs(z * aj))
    err = 8 * U * (
        abs(rhs0 * z) + float(np.sum(np.abs(fixed_terms))) + float(np.sum(np.abs(row_term)))
        + float(np.sum(scale_j[maybe_neg]))
    )
    value = float(np.nextafter(value - err, -np.inf))
    with np.errstate(all="ignore"):  # the same maximisation with the reduced costs as computed (no allowance)
        s_j = s[idx]
        z0 = _best_multiplier(s_j, aj, uj, rhs0) if len(idx) else 0.0
        free = rhs0 * z0 + float(np.sum(np.minimum(0.0, s_j - z0 * aj) * uj)) + float(np.sum(np.minimum(0.0, s[fixed]) * cu[fixed]))
        loss = max(0.0, free - (rhs0 * z + float(np.sum(terms)) + float(np.sum(fixed_terms))))
    cert = LowerCertificate(
        value=value,
        normalisation_multiplier=z,
        clipped_rows=int(np.count_nonzero(clip_pos | clip_neg)),
        error_term=float(err),
        solver_objective=float(solver_objective),
        rounding_loss=loss if math.isfinite(loss) else math.inf,
    )
    if _RECORDERS:
        y_used = y.copy()
        y_used[i0] = z
        for log in _RECORDERS:
            log.append((lp, y_used, cert))
    return cert


#: rounds of :func:`polish_row_duals`, and the mass columns each one repairs at most
POLISH_ROUNDS = 3
POLISH_COLUMNS = 100
#: ... and another round runs only after one that raised the bound by more than this much of it (a second round
#: at 194 cells per sensitivity took 1.9 s for 4e-16; measured)
POLISH_MIN_GAIN = 1e-9


def polish_row_duals(lp: LinearProgram, row_dual: np.ndarray, target: float, rows: np.ndarray, *,
                     rounds: int = POLISH_ROUNDS, max_columns: int = POLISH_COLUMNS,
                     seconds: float = math.inf) -> np.ndarray:
    """Row duals whose :func:`dual_lower_bound` is at least that of ``row_dual`` [derived].

    That certificate sets the normalisation row's multiplier z at the least ratio (c − Aᵀy)_j / a₀_j over the
    mass columns (a₀_j > 0; less what the column bounds allow), so a few columns whose reduced costs an
    interior point left short lower the bound by that much.  The structured interior point of
    :mod:`optmech.solvers.hockey_ipm` stalls at a dual residual near 1e-8 of the largest price, and not evenly:
    at ε = 5, δ = 1e-6, x² and 194 cells per sensitivity the shortfall sat on one column (the last node of the
    flat centre) and the bound was 1.7e-3 below the LP's objective (measured).

    Each round re-optimises the multipliers of the given ``rows`` (≤ rows: rl = −∞, multiplier <= 0) that touch
    the (at most ``max_columns``) mass columns whose ratio is below the z at which the dual objective would reach
    ``target`` (the primal objective; the other rows' terms, as the budget's −β·δ, count against it), together
    with z, every other multiplier fixed: maximise z + Σ_r ru_r·dy_r subject to (c − Aᵀy)_j − (Aᵀdy)_j >= a₀_j z
    on every column those rows touch (>= 0 where a₀_j = 0), z at most the least ratio of the mass columns they do
    not touch, and y_r + dy_r <= 0.  On the hockey-stick rows of :func:`optmech.problems.approx.build_approx` it
    is feasible (their multipliers at 0 leave each epigraph column the reduced cost ω·β >= 0 of its budget row,
    and z can fall); a round is kept only when the bound, recomputed by :func:`dual_lower_bound`, rose, so the
    duals never get worse, and whatever comes out is certified like any other duals.
    The LP has a few hundred rows per column repaired and HiGHS's simplex solves it: on the cell LPs on ℝ (ε = 5,
    δ = 1e-6, x²) it took 0.03–1.7 s at 69–263 cells per sensitivity, and the bound's shortfall against the
    objective fell from 1.7e-5 to 3e-6 (69 cells), 1.7e-3 to 1.5e-5 (194) and 3.7e-5 to 3e-6 (263) of it
    (measured).  Rounds stop when one gains less than POLISH_MIN_GAIN of the bound, or when ``seconds`` have
    passed (a round's LP gets the time left as its HiGHS time limit; the first round always runs).
    """
    import time
    import scipy.sparse as sp

    from optmech.solvers.highs import HighsBackend

    y = np.array(row_dual, dtype=float, copy=True)
    y[~np.isfinite(y)] = 0.0
    i0 = int(lp.meta.get("normalisation_row", 0))
    A = sp.csr_array(lp.A)
    AT = sp.csr_array(lp.A.T)
    Ac = sp.csc_array(lp.A)
    a0 = A[[i0], :].toarray().ravel()
    mass = a0 > 0
    movable = np.zeros(lp.rows, dtype=bool)
    movable[np.asarray(rows, dtype=np.int64)] = True
    movable &= ~np.isfinite(lp.row_lower) & np.isfinite(lp.row_upper)
    movable[i0] = False
    rl, ru = lp.row_lower, lp.row_upper
    rhs0 = float(rl[i0])
    best = dual_lower_bound(lp, y).value
    t_end = time.perf_counter() + seconds
    for k in range(rounds):
        left = t_end - time.perf_counter()
        if k > 0 and left <= 0:
            break
        y_rest = y.copy()
        y_rest[i0] = 0.0
        s = lp.c - AT @ y_rest
        ratio = np.full(lp.cols, np.inf)
        ratio[mass] = s[mass] / a0[mass]
        # the z at which the dual objective rhs0·z + Σ (other rows' terms) would reach the target
        z_target = (target - math.fsum(_row_terms(y_rest, rl, ru))) / rhs0 if rhs0 > 0 else target
        bad = np.flatnonzero(ratio < z_target)
        if bad.size == 0:
            break
        bad = bad[np.argsort(ratio[bad])][:max_columns]
        touch = np.unique(Ac[:, bad].indices)
        touch = touch[movable[touch]]
        if touch.size == 0:
            break
        sub = A[touch]
        cols = np.unique(sub.indices)
        untouched = mass.copy()
        untouched[cols] = False
        z_cap = float(ratio[untouched].min()) if untouched.any() else math.inf
        big = 1e6 * (1.0 + float(np.max(np.abs(y))) + float(np.max(np.abs(ratio[mass]))))
        nr = touch.size
        M = sp.hstack([sp.csr_array(sub[:, cols].T), sp.csr_array(a0[cols][:, None])]).tocsc()
        sub_lp = LinearProgram(
            c=-np.append(lp.row_upper[touch], 1.0), A=M, row_lower=np.full(cols.size, -math.inf),
            row_upper=s[cols],
            col_lower=np.full(nr + 1, -big), col_upper=np.append(-y[touch], min(z_cap, big)),
            meta={"builder": "dual_polish"})
        options = {"solver": "simplex", "presolve": "on", "primal_feasibility_tolerance": 1e-10,
                   "dual_feasibility_tolerance": 1e-10}
        if k > 0 and math.isfinite(left):
            options["time_limit"] = left
        raw = HighsBackend().solve(sub_lp, options)
        if raw.x is None:
            break
        trial = y.copy()
        trial[touch] = np.minimum(y[touch] + raw.x[:nr], 0.0)
        trial[i0] = raw.x[nr]
        value = dual_lower_bound(lp, trial).value
        if not value > best:
            break
        gain, (y, best) = value - best, (trial, value)
        if gain <= POLISH_MIN_GAIN * abs(best):
            break
    return y


# ------------------------------------------------------------------------------------------------
# mechanisms with geometric tails, primal repair, audit
# ------------------------------------------------------------------------------------------------
def repair_majorant(weights: np.ndarray, W: int, beta: float, max_iter: int | None = None) -> np.ndarray:
    """Smallest φ >= weights with φ(x) >= β·φ(y) for |x − y| <= W (on the window).

    Iterates φ ← max(φ, β·slidingmax_{2W+1}(φ)); the fixed point is
    φ(x) = max_y w(y)·β^{⌈|x−y|/W⌉} because ⌈|x−y|/W⌉ is the path metric of steps <= W.
    Each pass costs O(N) (van Herk filter); passes stop at the fixed point.
    """
    from scipy.ndimage import maximum_filter1d  # lazy: scipy's first import costs the command line about 0.2 s

    phi = np.array(weights, dtype=float, copy=True)
    phi[~(phi > 0)] = 0.0
    limit = max_iter if max_iter is not None else len(phi) // max(W, 1) + 5
    for _ in range(limit + 1):
        spread = beta * maximum_filter1d(phi, size=2 * W + 1, mode="constant", cval=0.0)
        new = np.maximum(phi, spread)
        if np.array_equal(new, phi):
            break
        phi = new
    return phi


def repaired_mechanism(grid: Grid1D, k_lo: int, weights: np.ndarray, epsilon: float) -> LatticeMechanism:
    """Repair window weights to an exactly ε-DP law on the whole lattice (geometric tails)."""
    W = grid.W
    beta = math.exp(-epsilon + min(PRIVACY_MARGIN, epsilon * 1e-3))
    phi = repair_majorant(weights, W, beta)
    # the infinite majorant continues periodically with the running max over the edge periods
    right_gen = np.maximum.accumulate(phi[-W:][::-1])[::-1]
    left_gen = np.maximum.accumulate(phi[:W])
    return LatticeMechanism(grid, int(k_lo), phi, beta, left_gen, right_gen)


@dataclass(frozen=True)
class PrivacyAudit:
    """Result of auditing a lattice law for pure ε-DP.

    ``realised_epsilon`` is an upper bound (outward-rounded) of log max p(k)/p(k+s) over
    0 < |s| <= W, or ``inf`` when some ratio is unbounded (a zero next to a positive mass).
    """

    realised_epsilon: float
    target_epsilon: float
    passed: bool
    worst_index: int | None
    method: str


def audit_pure(
    k_first: int, weights: np.ndarray, W: int, epsilon: float, *, exact: bool = False
) -> PrivacyAudit:
    """Audit pure ε-DP of weights on consecutive lattice indices (window semantics: only pairs
    that both lie in the array are checked; use :meth:`LatticeMechanism.extended` to include tails).

    ``exact=False`` uses sliding max/min in floating point with outward rounding of the final
    logarithm (comparisons of floats are exact, so only the ratio and log are rounded).
    ``exact=True`` recomputes the worst ratio of every window in rational arithmetic and compares
    its logarithm with ε at 50 significant digits (slow; for tests and small cases).
    """
    from scipy.ndimage import maximum_filter1d, minimum_filter1d  # lazy: scipy's first import costs the command line about 0.2 s

    w = np.asarray(weights, dtype=float)
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        return PrivacyAudit(math.inf, epsilon, False, int(np.argmax(~np.isfinite(w) | (w < 0))), "sign")
    size = W + 1
    if len(w) < 2:
        return PrivacyAudit(0.0, epsilon, True, None, "trivial")
    size = min(size, len(w))
    # windows [j, j+size-1]: scipy centres a window of size s on i as [i - s//2, i + (s-1)//2]
    mx = maximum_filter1d(w, size=size, mode="nearest")
    mn = minimum_filter1d(w, size=size, mode="nearest")
    half = size // 2
    start = np.arange(len(w) - size + 1)
    centre = start + half
    wmax, wmin = mx[centre], mn[centre]
    if np.any(wmin <= 0) and np.any(wmax > 0):
        bad = int(start[np.argmax((wmin <= 0) & (wmax > 0))])
        return PrivacyAudit(math.inf, epsilon, False, k_first + bad, "float")
    with np.errstate(all="ignore"):
        ratio = wmax / wmin
    worst = int(np.argmax(ratio))
    if exact:
        return _exact_windows(k_first, start, wmax, wmin, ratio, epsilon)
    r = float(ratio[worst])
    real = math.log(r) if r > 0 else 0.0
    real = float(np.nextafter(np.nextafter(real + 4 * U * max(1.0, abs(real)) + 2 * U, np.inf), np.inf))
    return PrivacyAudit(real, epsilon, real <= epsilon, k_first + int(start[worst]), "float")


def _exact_windows(
    k_first: int, start: np.ndarray, wmax: np.ndarray, wmin: np.ndarray, ratio: np.ndarray, epsilon: float
) -> PrivacyAudit:
    """Exact verdict over every window that floating point cannot clear.

    Window extrema are exact (comparisons of floats); only their quotient is rounded, by at most
    one ulp.  So every window whose true ratio could exceed e^ε, or could be the largest, has a
    float ratio within a few ulps of e^ε or of the float maximum.  Those are re-checked with
    rationals and 50-digit logarithms; all others are cleared by the float comparison.
    """
    import mpmath

    slack = 1.0 - 8 * U
    top = float(np.max(ratio))
    cand = np.flatnonzero((ratio >= top * slack) | (ratio >= math.exp(epsilon) * slack * (1 - 8 * U)))
    passed, real, worst = True, 0.0, int(cand[0])
    with mpmath.workdps(50):
        eps_exact = mpmath.mpf(epsilon)
        best = mpmath.mpf(0)
        for i in cand:
            fr = Fraction(float(wmax[i])) / Fraction(float(wmin[i]))
            log_r = mpmath.log(mpmath.mpf(fr.numerator)) - mpmath.log(mpmath.mpf(fr.denominator))
            if log_r > eps_exact:
                passed = False
            if log_r > best:
                best, worst = log_r, int(i)
        real = float(np.nextafter(float(best), np.inf)) if best > 0 else 0.0
    if passed:
        real = min(real, epsilon)  # proved <= ε exactly; ε itself is then a valid upper bound
    return PrivacyAudit(real, epsilon, passed, k_first + int(start[worst]), "exact")


def audit_mechanism(mech: LatticeMechanism, epsilon: float, *, exact: bool = False) -> PrivacyAudit:
    """Audit a mechanism with geometric tails: window plus two tail periods each side suffice."""
    k0, ext = mech.extended(periods=2)
    return audit_pure(k0, ext, mech.grid.W, epsilon, exact=exact)


# ------------------------------------------------------------------------------------------------
# upper bound
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UpperCertificate:
    value: float
    mechanism: LatticeMechanism
    audit: PrivacyAudit
    repaired_mass: float  # relative change of the total weight made by the repair
    tail_mass: float
    certified: bool
    note: str = ""


def mechanism_cost_upper(mech: LatticeMechanism, cost: Cost) -> tuple[float, float]:
    """Outward-rounded (numerator upper bound, normaliser lower bound) of the expected cost."""
    grid, W = mech.grid, mech.grid.W
    k = np.arange(mech.k_lo, mech.k_hi + 1)
    L_hi = grid.cost_upper(cost, k)
    t_right = grid.tail_sums(cost, np.arange(mech.k_hi - W + 1, mech.k_hi + 1), +1, mech.beta, bound="upper")
    t_left = grid.tail_sums(cost, np.arange(mech.k_lo, mech.k_lo + W), -1, mech.beta, bound="upper")
    width = grid.width(k)
    wl, wr = mech._edge_widths()
    with np.errstate(all="ignore"):
        parts = np.concatenate([mech.weights * width * L_hi, mech.right_gen * wr * t_right, mech.left_gen * wl * t_left])
    if np.any(np.isnan(parts)):
        parts = np.where(np.isnan(parts), np.inf, parts)
    num = math.fsum(parts) if np.all(np.isfinite(parts)) else math.inf
    num = num * (1 + 4 * U * 8) if math.isfinite(num) else num
    tail_factor = mech.beta / (1.0 - mech.beta)
    den = math.fsum(mech.weights * width) + tail_factor * (math.fsum(mech.left_gen * wl) + math.fsum(mech.right_gen * wr))
    den = den * (1 - 64 * U)
    return num, den


def upper_bound(grid: Grid1D, k_lo: int, weights: np.ndarray, epsilon: float, cost: Cost) -> UpperCertificate:
    """Repair, audit and price window weights: a certified upper bound on V*."""
    w = np.asarray(weights, dtype=float)
    w = np.where(np.isfinite(w), np.maximum(w, 0.0), 0.0)
    before = math.fsum(w)
    if not before > 0:
        # the relaxation parked all its mass outside the window: nothing to repair
        w = np.zeros_like(w)
        w[len(w) // 2] = 1.0
        before = 0.0
    mech = repaired_mechanism(grid, k_lo, w, epsilon)
    audit = audit_mechanism(mech, epsilon)
    num, den = mechanism_cost_upper(mech, cost)
    mech.total = den / (1 - 64 * U)
    value = num / den if den > 0 else math.inf
    value = float(np.nextafter(value * (1 + 4 * U), np.inf)) if math.isfinite(value) else math.inf
    after = math.fsum(mech.weights)
    note = ""
    certified = audit.passed and math.isfinite(value)
    if not audit.passed:
        note = f"audit failed: realised epsilon {audit.realised_epsilon:.17g} > {epsilon:.17g}"
    elif not math.isfinite(value):
        note = "the expected cost of the mechanism's tail could not be bounded (cost grows too fast)"
    return UpperCertificate(
        value=value,
        mechanism=mech,
        audit=audit,
        repaired_mass=(after - before) / before if before > 0 else math.inf,
        tail_mass=mech.tail_mass() if mech.total > 0 else math.nan,
        certified=certified,
        note=note,
    )


def relative_gap(lo: float, up: float) -> float:
    """(up − lo)/|up| clipped at 0; inf when either end is missing (0 when both agree)."""
    if not (math.isfinite(lo) and math.isfinite(up)) or up <= 0:
        return math.inf if up != lo else 0.0
    return max(0.0, (up - lo) / abs(up))


# ------------------------------------------------------------------------------------------------
# the best bracket over refinements
# ------------------------------------------------------------------------------------------------
#: Relative tolerance with which a reference value counts as inside a certified bracket: exact closed
#: forms (evaluated to a few ulps) and values computed numerically (quadrature, root finding).
INSIDE_TOL_EXACT, INSIDE_TOL_NUMERIC = 1e-12, 1e-9


def reference_inside(value: float, lower: float, upper: float, exact: bool = True) -> bool:
    """Whether a reference value lies in [lower, upper] up to its evaluation accuracy (one rule
    for every family: ``INSIDE_TOL_EXACT`` relative for exact closed forms, ``INSIDE_TOL_NUMERIC``
    otherwise)."""
    v = float(value)
    tol = (INSIDE_TOL_EXACT if exact else INSIDE_TOL_NUMERIC) * abs(v)
    return bool(math.isfinite(v) and lower - tol <= v <= upper + tol)


@dataclass
class BestBracket:
    """The best certified lower bound and the best certified upper bound seen over a solve loop.

    Each bound is valid on its own, so the bracket keeps the largest lower bound and the smallest
    certified upper bound of any refinement.  ``upper`` objects need ``value`` and ``certified``.
    """

    lower: float = -math.inf
    lower_certificate: LowerCertificate | None = None
    upper: object | None = None

    def update(self, lo: LowerCertificate, up) -> float:
        """Record one refinement's bounds; return the relative gap of the best bracket."""
        if lo.value > self.lower:
            self.lower, self.lower_certificate = lo.value, lo
        self.offer_upper(up)
        return relative_gap(self.lower, self.upper_value)

    def offer_upper(self, up) -> None:
        """Keep ``up`` if it is certified and below the best upper bound so far."""
        if up is not None and up.certified and (self.upper is None or up.value < self.upper.value):
            self.upper = up

    @property
    def upper_value(self) -> float:
        return self.upper.value if self.upper is not None else math.inf

    @property
    def certified(self) -> bool:
        return math.isfinite(self.lower) and self.upper is not None and bool(self.upper.certified)

    def outcome(self, status: str, message: str) -> tuple[str, str]:
        """The loop's final (status, message): ``uncertified`` unless both bounds are certified."""
        if self.certified:
            return status, message
        return "uncertified", message or "a certificate could not be established"
