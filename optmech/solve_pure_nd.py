"""``optmech.solve`` for pure ε-DP on ℤ^d: the full lattice LP → certificates → Result.

Lower bound: the repaired dual of the relaxation of :mod:`optmech.problems.pure_nd`.

Upper bound (reference/numerics.md §5 in d dimensions).  The LP's masses on the cube are repaired
to their smallest β-majorant for the norm's unit steps, φ = max(φ, β·dilate_Δ(φ)) iterated to its
fixed point (β = e^{−ε + 1e-11}), computed on orbit representatives.  Extended to ℤ^d by
P(x) = max_y w(y) β^{ρ(x, y)} (ρ the lattice path metric of steps in the ball), it is a β-majorant
everywhere, hence ε-DP.  For ℓ1 and ℓ∞ the in-domain path metric is the global one, so the
extension agrees with φ on the domain; for ℓ2 the majorant is computed on the cube enlarged by a
Steinitz margin 2dΔ and used on the inner cube only.  Outside the LP's domain
P(x) <= A q^{‖x‖₁} with q = β^{1/(cΔ)} (c = 1, √d, d for ℓ1, ℓ2, ℓ∞) and A = max_y w(y) q^{−‖y‖₁},
so the tail's mass and cost have closed-form bounds.  The upper bound is (Σ_cube L⁺ φ + tail) /
Σ_cube φ, outward-rounded.
"""

from __future__ import annotations

import math
import time

import numpy as np

from optmech.certify import PRIVACY_MARGIN, BestBracket, dual_lower_bound
from optmech.errors import ProblemTooLarge, SolveFailed
from optmech.problems.approx import point_costs
from optmech.problems.pure_nd import PureNDLP, build_pure_nd
from optmech.result import Result, ReferenceValue, solver_info

_U = 2.0**-53
BYTES_PER_NNZ, BYTES_PER_COL = 160, 200


class _Upper:
    def __init__(self, value: float, realised: float, certified: bool, tail_mass: float, note: str = "",
                 reps: np.ndarray | None = None, masses: np.ndarray | None = None, tail_factor: float = math.nan,
                 tail_rate: float = math.nan) -> None:
        self.value, self.realised_epsilon, self.certified, self.tail_mass, self.note = value, realised, certified, tail_mass, note
        self.reps, self.masses, self.tail_factor, self.tail_rate = reps, masses, tail_factor, tail_rate


def _dilate(phi: np.ndarray, nb: np.ndarray, times: int) -> np.ndarray:
    """max of phi over `times` unit steps (neighbours outside the cube contribute nothing)."""
    ext = np.append(phi, 0.0)  # index −1 -> 0
    out = phi
    for _ in range(times):
        out = ext[nb].max(axis=1)
        ext = np.append(out, 0.0)
    return out


def _tail_sums(R: int, d: int, q: float) -> tuple[float, float, float]:
    """Σ_{x ∉ [−R, R]^d} q^{‖x‖₁} · {1, ‖x‖₁, ‖x‖₂²}, cancellation-free.

    With H_m = Σ_{t∈ℤ} |t|^m q^{|t|}, B_m its part |t| <= R and E_m = H_m − B_m (summed directly):
    mass = E_0 Σ_j H_0^j B_0^{d−1−j}; ℓ1 = d[E_1 H_0^{d−1} + B_1 (H_0^{d−1} − B_0^{d−1})]; ℓ2² likewise.
    """
    u = 1.0 - q
    qr = q ** (R + 1)
    E0 = 2 * qr / u
    E1 = 2 * qr * ((R + 1) - R * q) / u**2
    E2 = 2 * qr * ((R + 1) ** 2 - (2 * R * R + 2 * R - 1) * q + R * R * q * q) / u**3
    t = np.arange(1, R + 1, dtype=float)
    qt = q**t
    B0 = 1.0 + 2 * math.fsum(qt)
    B1 = 2 * math.fsum(t * qt)
    B2 = 2 * math.fsum(t * t * qt)
    H0 = B0 + E0
    diff = E0 * math.fsum(H0**j * B0 ** (d - 1 - j) for j in range(d))  # H0^d − B0^d
    diff_1 = E0 * math.fsum(H0**j * B0 ** (d - 2 - j) for j in range(d - 1)) if d > 1 else 0.0  # H0^(d−1) − B0^(d−1)
    T1 = d * (E1 * H0 ** (d - 1) + B1 * diff_1)
    T2 = d * (E2 * H0 ** (d - 1) + B2 * diff_1)
    return diff, T1, T2


def _ball_tail_sums(R: int, d: int, q: float) -> tuple[float, float, float]:
    """Σ_{‖x‖₁ > R} q^{‖x‖₁} · {1, ‖x‖₁, ‖x‖₂²} by lattice-sphere sums, truncated where a ratio
    bound puts the remainder below 1e-17 of the first term (and added as that bound)."""
    from optmech.mechanisms.discrete_staircase_nd import sphere_l2sq_sums, sphere_sizes

    a = -math.log(q)
    K = max(R + 1, int(math.ceil(2 * (d + 1) / a)))
    K = int(K + 45.0 / a) + 2
    k = np.arange(R + 1, K + 1)
    w = np.exp(-a * k)
    s0, s2 = sphere_sizes(k, d), sphere_l2sq_sums(k, d)
    T0, T1, T2 = math.fsum(s0 * w), math.fsum(k * s0 * w), math.fsum(s2 * w)
    # remainder: terms k^(d+1) q^k decrease by at least e^{−a/2} per step beyond K >= 2(d+1)/a
    rem = float(K ** (d + 1) * 2.0**d * math.exp(-a * K) / -math.expm1(-a / 2.0))
    return T0 + rem, T1 + rem, T2 + rem


def _norm_factor(norm: str, d: int) -> float:
    """c with ‖v‖ >= ‖v‖₁/c (ℓ1: 1, ℓ2: √d, ℓ∞: d)."""
    return {"l1": 1.0, "l2": math.sqrt(d), "linf": float(d)}[norm]


def _enlarged(alp: PureNDLP, w: np.ndarray):
    """ℓ2: the LP's masses on the cube enlarged by the Steinitz margin 2dΔ, with its neighbour table.

    A shortest lattice path of ℓ2 steps <= Δ between two points of the cube can be reordered so that
    it stays within 2dΔ of the segment joining them (Steinitz lemma with the Grinberg–Sevastyanov
    constant d, applied to the steps minus their mean), so on the inner cube the majorant computed
    on the enlarged cube is the global one.
    """
    from optmech.problems.pure_nd import norm_steps, orbit_points

    d, D, R = alp.dim, alp.sensitivity, alp.orbits.R
    big = orbit_points(d, R + 2 * d * D, reduced=alp.orbits.reduced, shape="cube")
    wb = np.zeros(len(big.reps))
    wb[big.index(alp.orbits.reps)] = w
    steps, _ = norm_steps("l2", d, D)
    nb = big.index(big.reps[:, None, :] + steps[None, :, :])
    inner = np.all(np.abs(big.reps) <= R, axis=1)
    return big, wb, nb, inner


def upper_from_lp(alp: PureNDLP, x: np.ndarray, cost: str, epsilon: float) -> _Upper:
    """Majorant repair, audit and pricing (module docstring)."""
    w = alp.masses(x)
    if not np.any(w > 0):
        w = np.zeros_like(w)
        w[0] = 1.0  # the origin
    if alp.norm == "l2":
        orb, w_dom, nb, inner = _enlarged(alp, w)
        layers = 1
    else:
        orb, w_dom, nb, layers = alp.orbits, w, alp.neighbours, alp.layers
        inner = np.ones(len(w), dtype=bool)
    beta = math.exp(-epsilon + min(PRIVACY_MARGIN, epsilon * 1e-3))
    phi = w_dom.copy()
    for _ in range(100_000):
        new = np.maximum(phi, beta * _dilate(phi, nb, layers))
        if np.array_equal(new, phi):
            break
        phi = new
    # audit: phi(x) >= β_true · phi(y) for every in-domain pair within the ball
    worst = float(np.max(_dilate(phi, nb, layers) / np.maximum(phi, np.finfo(float).tiny)))
    realised = float(np.nextafter(math.log(worst) * (1 + 4 * _U) + 4 * _U, np.inf)) if worst > 0 else 0.0
    # outside the LP's domain: P(x) = max_y w(y) β^{ρ(x,y)} <= A q^{‖x‖₁}, q = β^{1/(cΔ)},
    # A = max_y w(y) q^{−‖y‖₁} (ρ(x, y) >= ‖x − y‖/Δ >= ‖x − y‖₁/(cΔ), triangle inequality)
    q = beta ** (1.0 / (_norm_factor(alp.norm, alp.dim) * alp.sensitivity))
    n1 = np.abs(orb.reps).sum(axis=1).astype(float)
    top = float(np.max(w_dom * np.exp(-n1 * math.log(q)))) * (1 + 1e-12)
    dom = alp.orbits
    T0, T1, T2 = _tail_sums(dom.R, alp.dim, q) if dom.shape == "cube" else _ball_tail_sums(dom.R, alp.dim, q)
    _, hi = point_costs(cost, orb.reps[inner])
    mass = math.fsum(orb.size[inner] * phi[inner])
    num = math.fsum(orb.size[inner] * hi * phi[inner])
    tail_cost = top * (T2 if cost == "l2sq" else T1)  # l2, linf <= l1
    value = (num + tail_cost) * (1 + 1e-12) / (mass * (1 - 1e-12))
    ok = realised <= epsilon and math.isfinite(value)
    note = "" if ok else f"audit failed: realised epsilon {realised:.17g} > {epsilon:.17g}"
    return _Upper(float(np.nextafter(value, np.inf)), min(realised, epsilon) if ok else realised, ok,
                  top * T0 / mass, note, orb.reps[inner], phi[inner] / mass, top / mass, q)


def _candidate_value(cost: str, epsilon: float, D: int, d: int, norm: str) -> float:
    """An easy ε-DP law's cost, to size the cube: i.i.d. discrete Laplace with λ = e^{−ε/(cΔ)}."""
    from optmech.mechanisms.multidim import discrete_laplace_nd_cost

    return discrete_laplace_nd_cost(cost, epsilon / _norm_factor(norm, d), D, d)


def _cube_radius(cost: str, epsilon: float, D: int, d: int, norm: str, v_ub: float, gap: float) -> int:
    c = _norm_factor(norm, d)
    R = D
    from optmech.problems.pure_nd import domain_outside_min

    shape = "ball" if norm == "l1" else "cube"
    while domain_outside_min(cost, R, d, shape) < 4 * v_ub:
        R += D
    # mass criterion: the mass of an ℓ1-decaying law beyond radius R, ≈ |S_R| e^{−εR/(cΔ)}/(1 − e^{−ε/(cΔ)}),
    # far below the target gap (|S_R| <= 2^d (R+1)^(d−1)/(d−1)!)
    lgam = math.lgamma(d)
    while (d * math.log(2) + (d - 1) * math.log(R + 1) - lgam - epsilon * R / (c * D)
           - math.log(-math.expm1(-epsilon / (c * D)))) > math.log(gap):
        R += D
    return R


def _check_size(d: int, R: int, layers: int, steps: int, budget: float) -> None:
    n = math.comb(R + d, d)  # orbits of the cube (the ℓ1 ball has fewer)
    nnz = n * (layers * steps * 2 + 3)
    need = BYTES_PER_NNZ * nnz + BYTES_PER_COL * n * (layers + 1)
    if need > budget:
        raise ProblemTooLarge(
            f"the {d}-dimensional lattice LP needs about {need / 2**30:.1f} GiB ({n} orbits on the cube of half-width {R}); "
            f"the limit is {budget / 2**30:.1f} GiB: raise epsilon or the target gap, lower the sensitivity or dimension, "
            "or set OPTMECH_MAX_MEMORY_GB"
        )


def solve_pure_nd(problem, *, solver: str = "default", time_limit: float | None = None, max_refinements: int = 6) -> Result:
    """Certified bracket for pure ε-DP on ℤ^d (see the module docstring)."""
    from optmech.api import DEFAULT_TIME_LIMIT, memory_budget
    from optmech.problems.pure_nd import norm_steps
    from optmech.solvers import load_profile, solve_lp

    t0 = time.perf_counter()
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    profile = load_profile(solver)
    eps, d, D, cost, norm = problem.epsilon, problem.dim, int(problem.sensitivity), problem.cost, problem.norm
    steps, layers = norm_steps(norm, d, D)
    v0 = _candidate_value(cost, eps, D, d, norm)
    R = _cube_radius(cost, eps, D, d, norm, v0, problem.target_gap)
    budget = memory_budget()
    _check_size(d, R, layers, len(steps), budget)
    best = BestBracket()
    history: list[dict] = []
    last = None
    status, message = "gap_not_reached", ""
    for it in range(max_refinements):
        alp = build_pure_nd(cost, eps, D, R, dim=d, norm=norm, reduced=problem.symmetry != "off")
        try:
            raw = solve_lp(alp.lp, profile, time_limit=max(1.0, time_limit - (time.perf_counter() - t0)))
        except SolveFailed as exc:
            if last is None:
                raise
            message = f"refinement stopped: {exc}"
            break
        last = (alp, raw)
        lo = dual_lower_bound(alp.lp, raw.row_dual, raw.objective)
        up = upper_from_lp(alp, raw.x, cost, eps)
        gap = best.update(lo, up)
        history.append({"iteration": it, "half_width": R, "lp": alp.lp.size(), "solver_objective": raw.objective,
                        "lower_bound": lo.value, "upper_bound": up.value, "upper_certified": up.certified,
                        "far_mass": alp.far_mass(raw.x), "relative_gap": gap, "seconds": time.perf_counter() - t0})
        if gap <= problem.target_gap:
            status, message = "optimal", f"certified relative gap {gap:.3g} <= target {problem.target_gap:g}"
            break
        elapsed = time.perf_counter() - t0
        if elapsed > 0.5 * time_limit or elapsed + 8.0 * raw.seconds > time_limit:
            message = "time limit reached before the target gap"
            break
        if len(history) >= 2 and gap > 0.5 * history[-2]["relative_gap"]:
            message = "a larger cube does not help: the remaining gap is the solver's accuracy"
            break
        newR = int(math.ceil(1.5 * R / D)) * D
        try:
            _check_size(d, newR, layers, len(steps), budget)
        except ProblemTooLarge:
            message = "size limit reached before the target gap (see OPTMECH_MAX_MEMORY_GB)"
            break
        R = newR
    else:
        message = f"no convergence within {max_refinements} refinements"
    assert last is not None
    alp, raw = last
    certified = best.certified
    status, message = best.outcome(status, message)
    best_lo, lo_cert, best_up = best.lower, best.lower_certificate, best.upper
    up_value = best_up.value if best_up else math.inf
    refs = _references(problem, best_lo, up_value)
    claims = [
        f"pure epsilon-DP on Z^{d}, sensitivity {D} in the {norm} norm: every pair inside the "
        + ("l1 ball ||x||_1 <= R" if alp.orbits.shape == "ball" else f"cube [-R, R]^{d}")
        + " (unit-step recursion), the mass outside priced at the cost's minimum there (a relaxation)",
        "upper bound: smallest beta-majorant of the LP's masses, extended to Z^d with a closed-form tail bound",
    ]
    if alp.orbits.reduced:
        claims.append("signed-permutation symmetry: one variable per orbit (the cost and the norm are invariant; "
                      "averaging an optimum over the group is optimal) [reference/multidim.md §9]")
    return Result(
        problem=problem.to_dict(), lower_bound=best_lo, upper_bound=up_value, certified=certified, status=status,
        message=message, seconds=time.perf_counter() - t0, references=refs,
        lp=alp.lp.size() | {"solver": raw.backend, "builder": alp.variant, "orbits": len(alp.orbits.reps)},
        solver=solver_info(raw, profile), mechanism=None,
        mechanism_nd=_mechanism_nd(best_up, alp) if best_up is not None else None,
        audit={"realised_epsilon": best_up.realised_epsilon if best_up else None, "target_epsilon": eps,
               "passed": bool(best_up and best_up.certified), "method": "majorant fixed point on the cube, outward-rounded",
               "tail_mass_bound": best_up.tail_mass if best_up else None,
               "lower_bound_clipped_rows": lo_cert.clipped_rows if lo_cert else None,
               "lower_bound_error_term": lo_cert.error_term if lo_cert else None},
        truncation={"half_width": alp.orbits.R, "dim": d, "norm": norm,
                    "lower_bound": "relaxation: in-cube pairs, far mass at the minimum cost outside",
                    "upper_bound": "beta-majorant of the cube's masses with geometric tails outside"},
        history=history, claims=claims,
    )


def _mechanism_nd(up: _Upper, alp: PureNDLP) -> dict:
    """The upper-bound mechanism on ℤ^d as JSON: per-point masses of the orbit representatives."""
    return {
        "kind": "lattice_pmf_nd",
        "dim": alp.dim,
        "norm": alp.norm,
        "sensitivity": alp.sensitivity,
        "symmetry": "signed permutations" if alp.orbits.reduced else "none",
        "representatives": up.reps.tolist(),
        "mass": up.masses.tolist(),
        "tail_factor": up.tail_factor,
        "tail_rate": up.tail_rate,
        "rule": ("P(x) = mass[i] where representatives[i] is x itself (symmetry none) or the sorted absolute values "
                 "of x (signed permutations); any point not listed has P(x) <= tail_factor * tail_rate**||x||_1"),
    }


def _references(problem, lo: float, up: float) -> list[ReferenceValue]:
    """Closed forms for the d-D problem: the ℓ1 lattice staircase (its best r; Δ = 1: i.i.d.
    geometric, exactly optimal for separable costs) and the i.i.d. discrete Laplace."""
    from optmech.mechanisms.multidim import discrete_laplace_nd_cost

    eps, d, D, cost, norm = problem.epsilon, problem.dim, int(problem.sensitivity), problem.cost, problem.norm
    out = []

    def add(name, value, params, exact, note):
        v = float(value)
        tol = 1e-12 if exact else 1e-9
        inside = bool(math.isfinite(v) and lo - tol * abs(v) <= v <= up + tol * abs(v))
        out.append(ReferenceValue(name, v, params, inside, exact, note, kind="upper"))

    c = _norm_factor(norm, d)
    add("discrete_laplace", discrete_laplace_nd_cost(cost, eps / c, D, d), {"lambda": math.exp(-eps / (c * D))}, True,
        f"upper bound: i.i.d. discrete Laplace, epsilon-DP for {norm} sensitivity {D}")
    if norm == "l1" and cost in ("l1", "l2sq"):
        from optmech.mechanisms.discrete_staircase_nd import discrete_staircase_nd_costs

        vals = discrete_staircase_nd_costs(cost, eps, D, d)
        r = int(np.argmin(vals)) + 1
        add("discrete_staircase", vals[r - 1], {"r": r}, False,
            "the best l1 lattice staircase (reference/multidim.md §8): an upper bound; equal to the lattice optimum in "
            "every case the digest tested (d = 3..5)")
    return out
