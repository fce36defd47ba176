"""``optmech.solve`` for (ε, δ)-DP: hockey-stick LP → solver → certificates → Result.

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
"""

from __future__ import annotations

import math
import time

import numpy as np

from optmech.audit import hockey_stick_array
from optmech.certify import (FAR_DECADES, FAR_MAX_CELLS, BestBracket, LatticeMechanism, dual_lower_bound,
                             is_infimum_at_infinity)
from optmech.errors import ProblemTooLarge, SolveFailed
from optmech.problems.approx import ApproxLP, build_approx, estimate_size, point_costs, shift_vectors
from optmech.mechanisms.approx_bounds import thm8_n
from optmech.problems.lattice import Grid1D
from optmech.result import ReferenceValue, Result, relative_gap, solver_info

_U = 2.0**-53
#: Bytes per LP nonzero / column HiGHS needs (conservative, as in optmech.api).
BYTES_PER_NNZ, BYTES_PER_COL = 160, 200


def _check_size(dim: int, D: int, N: int, budget: float, even: bool = True) -> None:
    cols, nnz = estimate_size(dim, D, N, even)
    need = BYTES_PER_NNZ * nnz + BYTES_PER_COL * cols
    if need > budget:
        raise ProblemTooLarge(
            f"the (epsilon, delta) LP needs about {need / 2**30:.1f} GiB ({cols} columns, {nnz} nonzeros; "
            f"dim {dim}, sensitivity {D}, half-width {N}); the limit is {budget / 2**30:.1f} GiB: raise delta "
            "or epsilon, lower the sensitivity or dimension, or set OPTMECH_MAX_MEMORY_GB"
        )


# -- upper bound ----------------------------------------------------------------------------------
def _product(line: np.ndarray, d: int) -> np.ndarray:
    u = line
    for _ in range(d - 1):
        u = np.multiply.outer(u, line)
    return u


def _uniform_box(delta: float, D: int, d: int) -> tuple[np.ndarray, int]:
    """The product uniform of width n = ⌈2Δ/δ⌉ per coordinate ((0, δ/2)-DP), on [−R, R]^d."""
    from optmech.mechanisms.uniform import uniform_width

    n = uniform_width(delta / 2.0, D)
    lo = -(n // 2)
    R = max(-lo, lo + n - 1)
    line = np.zeros(2 * R + 1)
    line[lo + R: lo + n + R] = 1.0 / n
    return _product(line, d), R


def _safe_box(epsilon: float, delta: float, D: int, d: int) -> tuple[np.ndarray, int, float]:
    """A cheap pmf on [−R, R]^d whose audited δ(ε) is at most δ/2: (pmf, R, audited δ)."""
    shifts = shift_vectors(d, D, half=False)
    if epsilon > 0:
        lam = math.exp(-epsilon / D)
        # the truncated law leaks about d·λ^(R+1−Δ)/(1−λ) mass past its edge per shift
        R = D + max(1, math.ceil(math.log(delta / (4 * d) * (1 - lam)) / math.log(lam)))
        for _ in range(8):
            k = np.arange(-R, R + 1)
            line = lam ** np.abs(k).astype(float)
            u = _product(line / math.fsum(line), d)
            du = float(hockey_stick_array(u, shifts, epsilon).max())
            if du <= delta / 2 or u.size > 4e7:
                break
            R = 2 * R
        if du <= delta / 2:
            return u, R, du
    u, R = _uniform_box(delta, D, d)
    return u, R, float(hockey_stick_array(u, shifts, epsilon).max())


def _pad(p: np.ndarray, R_from: int, R_to: int) -> np.ndarray:
    k = R_to - R_from
    return np.pad(p, k) if k > 0 else p


def _price(cost, p: np.ndarray, R: int) -> float:
    """Outward-rounded E L for masses p on [−R, R]^d (normalised by their sum)."""
    d = p.ndim
    side = 2 * R + 1
    coords = np.stack(np.unravel_index(np.arange(p.size), (side,) * d), axis=-1) - R
    nz = p.ravel() > 0
    _, hi = point_costs(cost, coords[nz])
    num = math.fsum(hi * p.ravel()[nz])
    den = math.fsum(p.ravel())
    if not (math.isfinite(num) and den > 0):
        return math.inf
    return float(np.nextafter(num * (1 + 4 * _U) / (den * (1 - 4 * _U)), np.inf))


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


def repair_delta(p: np.ndarray, R: int, epsilon: float, delta: float, D: int,
                 shifts: np.ndarray) -> tuple[np.ndarray, int, np.ndarray, float]:
    """Audit the normalised pmf p on [−R, R]^d for every shift; if some δ(ε) exceeds δ (solver
    tolerances), mix it with a cheap law of δ <= δ/2 (:func:`_safe_box`) at the smallest weight that
    the float audit then accepts (module docstring).  Returns (pmf, R, per-shift δ, weight)."""
    d = p.ndim
    per = hockey_stick_array(p, shifts, epsilon)
    if per.max() <= delta:
        return p, R, per, 0.0
    u, Ru, du = _safe_box(epsilon, delta, D, d)
    Rm = max(R, Ru)
    pu, uu = _pad(p, R, Rm), _pad(u, Ru, Rm)
    dp = float(per.max())
    # aim below δ by more than the audit's own rounding allowance, and widen the margin if needed
    margin = 64 * _U * (1.0 + delta)
    for _ in range(6):
        target = delta - margin
        lam = min(1.0, (dp - target) / (dp - du)) if dp > du else 1.0
        mix = (1 - lam) * pu + lam * uu
        per = hockey_stick_array(mix, shifts, epsilon)
        if per.max() <= delta:
            break
        margin *= 16
    return mix, Rm, per, lam


def upper_from_pmf(cost, p: np.ndarray, R: int, epsilon: float, delta: float, D: int) -> _Upper:
    """Audit p for every shift; repair by mixing with a (0, δ/2) uniform if needed; price it."""
    d = p.ndim
    shifts = shift_vectors(d, D, half=False)
    p = np.where(np.isfinite(p), np.maximum(p, 0.0), 0.0)
    s = math.fsum(p.ravel())
    if not s > 0:
        p = np.zeros_like(p)
        p[(R,) * d] = 1.0
        s = 1.0
    p = p / s
    p, R, per, mixed = repair_delta(p, R, epsilon, delta, D, shifts)
    real = float(per.max())
    certified = real <= delta
    value = _price(cost, p, R)
    note = "" if certified else f"audit failed: delta({epsilon:g}) = {real:.17g} > {delta:g}"
    return _Upper(p, R, value, real, per, certified and math.isfinite(value), mixed, note)


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
def approx_reference_values(problem, lo: float, up: float) -> list[ReferenceValue]:
    """The closed forms and the paper's bounds (:mod:`optmech.mechanisms.approx_bounds`)."""
    from optmech.mechanisms.approx_bounds import approx_references

    out = []
    for b in approx_references(problem.cost, problem.epsilon, problem.delta, int(problem.sensitivity), problem.dim):
        v = float(b.value)
        tol = 1e-12 if b.exact else 1e-9
        inside = bool(math.isfinite(v) and lo - tol * abs(v) <= v <= up + tol * abs(v))
        out.append(ReferenceValue(b.name, v, dict(b.parameters), inside, b.exact, b.note, valid=b.valid, kind=b.kind,
                                  conditions=dict(b.conditions)))
    return out


# -- the loop -----------------------------------------------------------------------------------------
def solve_approx(problem, *, solver: str = "default", time_limit: float | None = None, max_refinements: int = 12) -> Result:
    """Certified bracket for an (ε, δ)-DP problem on ℤ^d (see the module docstring)."""
    from optmech.budget import DEFAULT_TIME_LIMIT, memory_budget
    from optmech.solvers import load_profile, solve_lp

    t0 = time.perf_counter()
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    profile = load_profile(solver)
    eps, delta, d = problem.epsilon, problem.delta, problem.dim
    D = int(problem.sensitivity)
    cost = problem.cost
    n = thm8_n(eps, delta)  # the optimum's support is ≈ Δ(n + 1) [derived]
    N = int(2 * D * (math.ceil(n) + 2))  # closes the gap in one LP in our tests
    budget = memory_budget()
    _check_size(d, D, N, budget, problem.symmetry != "off")

    best = BestBracket()
    # a 1-D cost not proven nondecreasing in |x| may be cheapest far from 0: shifted copies are priced too
    far_ok = d == 1 and getattr(cost, "kind", "") == "expr" and not cost.is_symmetric_nondecreasing(integer=True)
    shift, far_upper = 0, None
    history: list[dict] = []
    last: tuple[ApproxLP, object] | None = None
    status, message = "gap_not_reached", ""
    for it in range(max_refinements):
        alp = build_approx(cost, eps, delta, D, N, dim=d, symmetry=problem.symmetry)
        remaining = max(1.0, time_limit - (time.perf_counter() - t0))
        try:
            raw = solve_lp(alp.lp, profile, time_limit=remaining)
        except SolveFailed as exc:
            if last is None:
                raise
            message = f"refinement stopped: {exc}"
            break
        last = (alp, raw)
        lo = dual_lower_bound(alp.lp, raw.row_dual, raw.objective)
        up = upper_from_pmf(cost, alp.box_masses(raw.x), alp.R, eps, delta, D)
        gap = best.update(lo, up)
        if it == 0 and far_ok and up.certified:
            far = _far_shift(cost, up, D)
            if far is not None and far[0] < best.upper_value:
                far_upper = _Upper(up.p, up.R, far[0], up.realised_delta, up.shifts_delta, True, up.mixed, up.note)
                best.upper, shift = far_upper, far[1]
                gap = relative_gap(best.lower, best.upper_value)
                floor = cost.domain_minimum(integer=True)
                if is_infimum_at_infinity(far[0], floor, up.value, problem.target_gap):
                    best.lower = max(best.lower, floor)
                    status = "infimum_at_infinity"
                    message = (f"V* is an infimum in [{best.lower:.6g}, {far[0]:.6g}], approached far from 0: the audited "
                               f"pmf shifted by {shift} costs <= {far[0]:.6g} and no noise costs less than the cost's "
                               "proven floor")
                    history.append({"iteration": it, "half_width": N, "lp": alp.lp.size(), "solver_objective": raw.objective,
                                    "lower_bound": lo.value, "upper_bound": far[0], "upper_certified": True,
                                    "mixed_weight": up.mixed, "layer_and_far_mass": math.nan,
                                    "relative_gap": relative_gap(best.lower, far[0]), "seconds": time.perf_counter() - t0})
                    last = (alp, raw)
                    break
        spill = alp.far_mass(raw.x) + alp.layer_mass(raw.x)
        history.append({
            "iteration": it, "half_width": N, "lp": alp.lp.size(), "solver_objective": raw.objective,
            "lower_bound": lo.value, "upper_bound": up.value, "upper_certified": up.certified,
            "mixed_weight": up.mixed, "layer_and_far_mass": spill, "relative_gap": gap,
            "seconds": time.perf_counter() - t0,
        })
        if gap <= problem.target_gap:
            status, message = "optimal", f"certified relative gap {gap:.3g} <= target {problem.target_gap:g}"
            break
        elapsed = time.perf_counter() - t0
        if elapsed > 0.5 * time_limit or elapsed + 6.0 * raw.seconds > time_limit:
            message = "time limit reached before the target gap"
            break
        if not up.certified and spill <= 1e-3 * problem.target_gap:
            message = f"the upper bound could not be certified: {up.note}"
            break
        if spill <= 1e-3 * problem.target_gap and len(history) >= 2 and gap > 0.5 * history[-2]["relative_gap"]:
            message = "a wider window does not help: the remaining gap is the solver's accuracy"
            break
        try:
            _check_size(d, D, 2 * N, budget, problem.symmetry != "off")
        except ProblemTooLarge:
            message = "size limit reached before the target gap (see OPTMECH_MAX_MEMORY_GB)"
            break
        N *= 2
    else:
        message = f"no convergence within {max_refinements} refinements"

    assert last is not None
    alp, raw = last
    certified = best.certified
    status, message = best.outcome(status, message)
    best_lo, lo_cert, best_up = best.lower, best.lower_certificate, best.upper
    up_value = best_up.value if best_up is not None else math.inf
    refs = approx_reference_values(problem, best_lo, up_value)
    mech = None
    if best_up is not None and d == 1:
        w = best_up.p.astype(float)
        mech = LatticeMechanism(Grid1D.integer(D), -best_up.R + (shift if best_up is far_upper else 0), w,
                                0.0, np.zeros(D), np.zeros(D), total=math.fsum(w))
    claims = [
        "(epsilon, delta)-DP as the hockey-stick condition for every shift 0 < ||v||_1 <= sensitivity "
        "[GV13, (18)/(103)]",
        "lower bound: relaxation on the box with an outer layer of width sensitivity and the far mass priced at "
        "the minimum cost outside",
        "upper bound: the LP's pmf on the box, audited for every shift with outward rounding"
        + (f" (mixed at weight {best_up.mixed:.3g} with a law of delta <= delta/2, to absorb solver tolerances)"
           if best_up is not None and best_up.mixed > 0 else ""),
    ]
    if far_upper is not None and best_up is far_upper:
        claims.append(f"upper bound: the audited pmf shifted by {shift} (a shift of (epsilon, delta)-DP noise is "
                      "(epsilon, delta)-DP), priced with rigorous enclosures: the cost is cheaper far from 0")
    if status == "infimum_at_infinity":
        claims.append("lower bound: E L(X) >= inf L for every noise X, and the cost's floor on ℤ is proven by interval "
                      "arithmetic")
    if alp.symmetry == "orbits":
        claims.append("signed-permutation orbit reduction: p constant on each orbit of the box, one shift per orbit "
                      "and one hockey-stick row per stabiliser orbit of inner points; the cost's lower enclosures were "
                      "proven equal (exact comparison at every point of the box) on each orbit, which is all the "
                      "relaxation uses (averaging any mechanism over the group keeps its box costs and outside mass, "
                      "and each hockey-stick sum is convex); no monotonicity is assumed")
    elif alp.even:
        claims.append("even reduction p(x) = p(-x): the cost's lower enclosures were proven equal at x and -x at every "
                      "point of the box (exact comparison), which is all the relaxation uses (symmetrising a mechanism "
                      "keeps its box costs and outside mass; the hockey-stick sums are convex); no monotonicity is "
                      "assumed")
    return Result(
        problem=problem.to_dict(),
        lower_bound=best_lo,
        upper_bound=up_value,
        certified=certified,
        status=status,
        message=message,
        seconds=time.perf_counter() - t0,
        references=refs,
        lp=alp.lp.size() | {"solver": raw.backend, "builder": alp.variant},
        solver=solver_info(raw, profile),
        mechanism=mech,
        mechanism_nd=_mechanism_nd(best_up, d, D) if best_up is not None and d > 1 else None,
        audit={
            "realised_delta": best_up.realised_delta if best_up else None,
            "target_delta": delta,
            "epsilon": eps,
            "passed": bool(best_up and best_up.certified),
            "shifts": int(len(best_up.shifts_delta)) if best_up else 0,
            "method": "hockey-stick sums for every shift, outward-rounded",
            "mixed_weight": best_up.mixed if best_up else None,
            "lower_bound_clipped_rows": lo_cert.clipped_rows if lo_cert else None,
            "lower_bound_error_term": lo_cert.error_term if lo_cert else None,
        },
        truncation={
            "half_width": alp.N, "box_half_width": alp.R, "dim": d,
            "lower_bound": "relaxation: hockey-stick rows on the inner box, outer layer without rows, far mass",
            "upper_bound": "restriction: the pmf on the box (zero outside), audited",
        },
        history=history,
        claims=claims,
    )

