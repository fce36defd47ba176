"""Solver layer: backends, the one dual sign convention, profiles, fallback, lazy imports."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from optmech.errors import SolveFailed, SolverUnavailable, SpecError
from optmech.lp import LinearProgram
from optmech.solvers import (
    BACKENDS,
    RawSolution,
    SolverProfile,
    Status,
    available_backends,
    get_backend,
    load_profile,
    profile_names,
    solve_lp,
)
from optmech.solvers.profiles import Attempt, parse_profile

ROOT = Path(__file__).resolve().parents[1]
INF = np.inf

# (backend, options, tolerance): every installed route; Clarabel is an interior-point method
# without crossover, so its duals are only accurate to ~1e-8
ROUTES = [
    ("highs", {}, 1e-9),
    ("highs", {"solver": "simplex"}, 1e-9),
    ("highs", {"solver": "ipm", "run_crossover": "on"}, 1e-9),
    ("scipy", {"method": "highs"}, 1e-9),
    ("scipy", {"method": "highs-ds"}, 1e-9),
    ("scipy", {"method": "highs-ipm"}, 1e-9),
    ("cvxpy", {"solver": "HIGHS"}, 1e-9),
    ("cvxpy", {"solver": "CLARABEL"}, 1e-6),
    ("clarabel", {}, 1e-8),
]


def _route_id(route):
    backend, options, _ = route
    return "-".join([backend, *map(str, options.values())])


def _skip_unavailable(backend: str, options: dict) -> None:
    if not available_backends()[backend]:
        pytest.skip(f"{backend} not installed")
    if backend == "cvxpy":
        import cvxpy as cp

        if options.get("solver") not in cp.installed_solvers():
            pytest.skip(f"cvxpy solver {options.get('solver')} not installed")


def tiny_lp(c=(1.0, 2.0), row_lower=(1.0, -INF), row_upper=(INF, 0.25), col_lower=(0.0, 0.0)) -> LinearProgram:
    """min c·x  s.t.  x0 + x1 >= 1,  x0 - x1 <= 0.25,  0 <= x <= 5  (optimum x = (0.625, 0.375))."""
    return LinearProgram(
        c=np.array(c, dtype=float),
        A=sp.csc_array(np.array([[1.0, 1.0], [1.0, -1.0]])),
        row_lower=np.array(row_lower, dtype=float),
        row_upper=np.array(row_upper, dtype=float),
        col_lower=np.array(col_lower, dtype=float),
        col_upper=np.full(2, 5.0),
    )


def random_lp(n: int = 1000, m: int = 400, seed: int = 0) -> LinearProgram:
    """A feasible LP with every kind of row (≤, ≥, ranged, equality) around a random interior point."""
    rng = np.random.default_rng(seed)
    nnz = 10 * n
    rows, cols = rng.integers(0, m, nnz), np.repeat(np.arange(n), nnz // n)
    A = sp.csc_array(sp.coo_array((rng.uniform(-1, 1, nnz), (rows, cols)), shape=(m, n)))
    x0 = rng.uniform(0.2, 0.8, n)
    ax = A @ x0
    kind = rng.integers(0, 4, m)  # 0 ≤, 1 ≥, 2 ranged, 3 equality
    lo = np.where(kind == 0, -INF, ax - rng.uniform(0, 0.1, m))
    up = np.where(kind == 1, INF, ax + rng.uniform(0, 0.1, m))
    lo = np.where(kind == 3, ax, lo)
    up = np.where(kind == 3, ax, up)
    return LinearProgram(c=rng.normal(size=n), A=A, row_lower=lo, row_upper=up,
                         col_lower=np.zeros(n), col_upper=np.ones(n))


def check_kkt(lp: LinearProgram, sol: RawSolution, tol: float) -> None:
    """Stationarity ``c = Aᵀy + s``, the sign rules of optmech.solvers.base, and complementary slackness."""
    assert sol.status is Status.OPTIMAL, sol
    x, y, s = sol.x, sol.row_dual, sol.col_dual
    scale = 1.0 + np.abs(lp.c).max()
    np.testing.assert_allclose(lp.A.T @ y + s, lp.c, rtol=0, atol=1e-9 * scale)
    ax = lp.A @ x
    rl, ru, cl, cu = lp.row_lower, lp.row_upper, lp.col_lower, lp.col_upper
    ftol = max(tol, 1e-9) * 10
    # primal feasibility
    assert np.all(ax >= rl - ftol) and np.all(ax <= ru + ftol)
    assert np.all(x >= cl - ftol) and np.all(x <= cu + ftol)
    # signs: a row that is not at its lower bound has y <= 0; not at its upper bound, y >= 0
    at_lo, at_up = np.abs(ax - rl) <= ftol, np.abs(ax - ru) <= ftol
    assert np.all(y[~at_lo] <= tol), y[~at_lo]
    assert np.all(y[~at_up] >= -tol), y[~at_up]
    c_lo, c_up = np.abs(x - cl) <= ftol, np.abs(x - cu) <= ftol
    assert np.all(s[~c_lo] <= tol), s[~c_lo]
    assert np.all(s[~c_up] >= -tol), s[~c_up]
    # one-sided rows always have the sign of their side
    assert np.all(y[~np.isfinite(rl)] <= tol) and np.all(y[~np.isfinite(ru)] >= -tol)
    # complementary slackness: zero duality gap, with the active bound of each sign
    row_b = np.where(y > 0, np.where(np.isfinite(rl), rl, 0.0), np.where(np.isfinite(ru), ru, 0.0))
    col_b = np.where(s > 0, cl, cu)
    dual_obj = y @ row_b + s @ col_b
    assert abs(dual_obj - lp.c @ x) <= 100 * tol * scale * (1 + abs(lp.c @ x))


# ------------------------------------------------------------------------------------------------
# backends and the dual sign convention


def test_status_values_are_lower_case():
    assert [s.value for s in Status] == [
        "optimal", "inaccurate", "infeasible", "unbounded", "infeasible_or_unbounded",
        "time_limit", "iteration_limit", "error", "unknown",
    ]
    assert str(Status.OPTIMAL) == "optimal"


def test_highs_status_map_covers_the_enum():
    highspy = pytest.importorskip("highspy")
    from optmech.solvers.highs import STATUS_MAP

    assert set(highspy.HighsModelStatus.__members__) <= set(STATUS_MAP)
    assert STATUS_MAP["kOptimal"] is Status.OPTIMAL
    assert STATUS_MAP["kUnboundedOrInfeasible"] is Status.INFEASIBLE_OR_UNBOUNDED
    assert STATUS_MAP["kPostsolveError"] is Status.ERROR


@pytest.mark.parametrize("route", ROUTES, ids=_route_id)
def test_tiny_lp_dual_convention(route):
    backend, options, tol = route
    _skip_unavailable(backend, options)
    lp = tiny_lp()
    sol = get_backend(backend).solve(lp, options)
    check_kkt(lp, sol, tol)
    assert sol.backend == backend and sol.version
    assert sol.objective == pytest.approx(1.375, abs=10 * tol)
    np.testing.assert_allclose(sol.x, [0.625, 0.375], atol=10 * tol)
    # the ≥ row is at its lower bound: y >= 0; the ≤ row at its upper bound: y <= 0
    np.testing.assert_allclose(sol.row_dual, [1.5, -0.5], atol=10 * tol)
    np.testing.assert_allclose(sol.col_dual, [0.0, 0.0], atol=10 * tol)


@pytest.mark.parametrize("route", ROUTES, ids=_route_id)
def test_column_duals_at_bounds(route):
    """min x0 − 2 x1 with x0 >= 0.5: x0 at its lower bound (s >= 0), x1 at its upper bound (s <= 0)."""
    backend, options, tol = route
    _skip_unavailable(backend, options)
    lp = tiny_lp(c=(1.0, -2.0), col_lower=(0.5, 0.0))
    sol = get_backend(backend).solve(lp, options)
    check_kkt(lp, sol, tol)
    assert sol.objective == pytest.approx(-9.5, abs=10 * tol)
    np.testing.assert_allclose(sol.col_dual, [1.0, -2.0], atol=10 * tol)


@pytest.mark.parametrize("route", ROUTES, ids=_route_id)
def test_equality_row(route):
    backend, options, tol = route
    _skip_unavailable(backend, options)
    lp = tiny_lp(row_lower=(1.0, -INF), row_upper=(1.0, 0.25))
    sol = get_backend(backend).solve(lp, options)
    check_kkt(lp, sol, tol)
    np.testing.assert_allclose(sol.row_dual, [1.5, -0.5], atol=10 * tol)


@pytest.mark.parametrize("route", ROUTES, ids=_route_id)
def test_ranged_row_at_lower_side(route):
    backend, options, tol = route
    _skip_unavailable(backend, options)
    lp = tiny_lp(row_lower=(1.0, -3.0), row_upper=(4.0, 0.25))
    sol = get_backend(backend).solve(lp, options)
    check_kkt(lp, sol, tol)
    np.testing.assert_allclose(sol.row_dual, [1.5, -0.5], atol=10 * tol)


def test_highs_reports_iterations_and_method():
    pytest.importorskip("highspy")
    sol = get_backend("highs").solve(tiny_lp(), {"solver": "simplex", "presolve": "off"})
    assert sol.method == "simplex" and sol.iterations >= 1 and sol.raw_status == "kOptimal"
    assert sol.options == {"solver": "simplex", "presolve": "off"}


def test_highs_accepts_booleans_for_string_options():
    pytest.importorskip("highspy")
    sol = get_backend("highs").solve(tiny_lp(), {"presolve": False})
    assert sol.status is Status.OPTIMAL


@pytest.mark.parametrize("backend", ["highs", "scipy", "cvxpy"])
def test_infeasible(backend):
    _skip_unavailable(backend, {"solver": "HIGHS"} if backend == "cvxpy" else {})
    lp = tiny_lp(row_lower=(11.0, -INF))  # x0 + x1 >= 11 with x <= 5
    sol = get_backend(backend).solve(lp, {})
    assert sol.status in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)
    if backend == "highs":
        assert sol.x is None and sol.row_dual is None and np.isnan(sol.objective)


def test_solve_lp_infeasible_raises_one_line():
    pytest.importorskip("highspy")
    lp = tiny_lp(row_lower=(11.0, -INF))
    with pytest.raises(SolveFailed) as err:
        solve_lp(lp, "ipm")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("solver profile 'ipm'")
    assert msg.count("infeasible") == 2
    assert [a[:3] for a in err.value.attempts] == [("highs", "ipm", "infeasible"), ("highs", "simplex", "infeasible")]


def test_random_lp_highs_and_scipy_agree():
    pytest.importorskip("highspy")
    lp = random_lp()
    a = get_backend("highs").solve(lp, {"solver": "simplex"})
    b = get_backend("scipy").solve(lp, {"method": "highs"})
    assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-9)
    check_kkt(lp, a, 1e-7)
    check_kkt(lp, b, 1e-7)
    assert lp.c @ b.x == pytest.approx(a.objective, rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------------------------------------
# profiles


def test_shipped_profiles_load():
    names = profile_names()
    assert {"default", "ipm", "fast", "scipy", "cvxpy", "structured"} <= set(names)
    for name in names:
        prof = load_profile(name)
        assert prof.name == name and prof.attempts and prof.description
        assert all(a.backend in BACKENDS for a in prof.attempts)
    default = load_profile("default")
    assert [(a.backend, a.options.get("solver", a.options.get("method"))) for a in default.attempts] == [
        ("hockey_ipm", None), ("chain", None), ("clarabel", None), ("highs", "ipm"), ("hockey_ipm", None),
        ("highs", "ipm"), ("highs", "simplex"), ("highs", "ipm"), ("scipy", "highs"),
    ]
    # the structured interior point for the large periodic-decay LPs of (ε, δ) on ℤ (optmech/problems/approx_decay.py)
    assert default.attempts[0].when == {"builders": ["hockey_stick_decay"]}
    assert default.attempts[2].when == {"builders": ["general"], "min_columns": 3000}
    # IPX first, for the aggregated (ε, δ) LP on ℤ only (optmech/problems/approx_periodic.py)
    assert default.attempts[3].when == {"builders": ["hockey_stick_aggregated"]}
    assert default.attempts[3].options["run_crossover"] == "on"
    # the structured interior point for the large cell LPs of (ε, δ) on ℝ only (optmech/solvers/hockey_ipm.py)
    assert default.attempts[4].when == {"builders": ["hockey_stick_cells"], "min_columns": 20000}
    # IPX for the slab relaxation's LP at small δ only (optmech/problems/approx_radial_slabs.py)
    assert default.attempts[5].when == {"builders": ["radial_slabs_small_delta"]}
    assert default.attempts[7].options["run_crossover"] == "on"


def test_solvers_folder_matches_package_profiles():
    pkg, top = ROOT / "optmech" / "profiles", ROOT / "solvers"
    pkg_files = sorted(p.name for p in pkg.glob("*.toml"))
    assert pkg_files == sorted(p.name for p in top.glob("*.toml"))
    match, mismatch, errors = filecmp.cmpfiles(pkg, top, pkg_files, shallow=False)
    assert mismatch == [] and errors == [], f"solvers/ differs from optmech/profiles/: {mismatch + errors}"
    assert (top / "README.md").is_file()


def test_load_profile_from_path(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('description = "x"\n[[attempt]]\nbackend = "scipy"\n[attempt.options]\nmethod = "highs-ds"\n')
    prof = load_profile(str(path))
    assert prof == SolverProfile("mine", (Attempt("scipy", {"method": "highs-ds"}),), "x")
    assert load_profile(prof) is prof


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("[[attempt]\nbackend = 'highs'\n", "invalid TOML"),
        ("[[attempt]]\nbackend = 'gurobi'\n", "unknown backend 'gurobi'"),
        ("[[attempt]]\nbackend = 'highs'\nsolver = 'ipm'\n", "unknown key(s) solver"),
        ("colour = 1\n[[attempt]]\nbackend = 'highs'\n", "unknown key(s) colour"),
        ("attempt = [1, 2]\n", "attempt 1 is not a table"),
        ("attempt = 'highs'\n", "non-empty array of tables"),
        ("description = 'nothing'\n", "no [[attempt]] tables"),
        ("[[attempt]]\nbackend = 'highs'\noptions = 3\n", "options must be a table"),
        ("[[attempt]]\nbackend = 'highs'\n[attempt.options]\nsolver = [1]\n", "option solver must be"),
    ],
)
def test_malformed_profiles(tmp_path, text, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_profile(str(path))
    msg = str(err.value)
    assert fragment in msg and msg.startswith("solver profile 'bad'") and "\n" not in msg


def test_unknown_profile_name_lists_the_available_ones(tmp_path):
    with pytest.raises(SpecError, match="available: cvxpy, default, fast, ipm, scipy"):
        load_profile("nonesuch")
    with pytest.raises(SpecError, match="cannot read"):
        load_profile(str(tmp_path / "missing.toml"))
    with pytest.raises(SpecError, match="nor a path ending in .toml"):
        load_profile("some/dir/profile")


def test_unknown_highs_option_is_a_spec_error():
    pytest.importorskip("highspy")
    prof = SolverProfile("t", (Attempt("highs", {"no_such_option": 1}),))
    with pytest.raises(SpecError, match="no_such_option"):
        solve_lp(tiny_lp(), prof)
    with pytest.raises(SpecError, match="'solver', 'hipo-xyz'"):
        get_backend("highs").solve(tiny_lp(), {"solver": "hipo-xyz"})


def test_unknown_scipy_option_is_a_spec_error():
    with pytest.raises(SpecError, match="unknown option 'run_crossover'"):
        get_backend("scipy").solve(tiny_lp(), {"run_crossover": "on"})
    with pytest.raises(SpecError, match="method 'simplex'"):
        get_backend("scipy").solve(tiny_lp(), {"method": "simplex"})


# ------------------------------------------------------------------------------------------------
# fallback chain


@pytest.mark.parametrize("first", [{"simplex_iteration_limit": 0}, {"time_limit": 0.0}])
def test_fallback_records_the_failed_attempt(first):
    pytest.importorskip("highspy")
    prof = SolverProfile("t", (Attempt("highs", {"solver": "simplex", **first}), Attempt("scipy", {})))
    sol = solve_lp(tiny_lp(), prof)
    assert sol.status is Status.OPTIMAL and sol.backend == "scipy"
    [(backend, method, status, message)] = sol.options["failed_attempts"]
    assert (backend, method) == ("highs", "simplex")
    assert status in ("iteration_limit", "time_limit") and message


def test_time_limit_overrides_the_profile():
    prof = SolverProfile("t", (Attempt("scipy", {"time_limit": 0.0}),))
    sol = solve_lp(tiny_lp(), prof, time_limit=30.0)
    assert sol.status is Status.OPTIMAL and 0 < sol.options["time_limit"] <= 30.0


def test_unavailable_backend_counts_as_failed(monkeypatch):
    from optmech.solvers.cvxpy_backend import CvxpyBackend

    monkeypatch.setattr(CvxpyBackend, "available", lambda self: False)
    prof = SolverProfile("t", (Attempt("cvxpy", {"solver": "HIGHS"}), Attempt("scipy", {})))
    sol = solve_lp(tiny_lp(), prof)
    assert sol.backend == "scipy"
    [(backend, method, status, message)] = sol.options["failed_attempts"]
    assert (backend, method, status) == ("cvxpy", "HIGHS", "error") and message.startswith("not installed")
    with pytest.raises(SolverUnavailable, match="no backend installed"):
        solve_lp(tiny_lp(), SolverProfile("t", (Attempt("cvxpy", {}),)))


def test_optimal_without_duals_is_downgraded():
    sol = RawSolution(Status.OPTIMAL, "x", "ok", 1.0, np.zeros(2), None, None, "b", "m", "v", 0.0)
    assert sol.status is Status.INACCURATE


def test_importing_solvers_imports_no_solver_package():
    code = (
        "import sys, optmech.solvers as s; s.available_backends(); s.load_profile('default');"
        "bad = [m for m in ('highspy', 'cvxpy', 'scipy.optimize') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode == 0, out.stdout + out.stderr


def test_user_facing_profiles_match_the_shipped_ones() -> None:
    """solvers/*.toml is the copy users edit; optmech/profiles/*.toml ships in the wheel."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    shipped = {p.name: p.read_text() for p in (root / "optmech" / "profiles").glob("*.toml")}
    user = {p.name: p.read_text() for p in (root / "solvers").glob("*.toml")}
    assert shipped and shipped == user


def test_chain_backend_matches_highs_on_the_periodic_lp():
    """The O(W) chain solution and HiGHS agree on the one-period LP, and the chain's dual is
    (up to rounding) exactly feasible, so its certificate is as tight as the objective."""
    from optmech.certify import dual_lower_bound
    from optmech.costs import parse_cost
    from optmech.problems.lattice import Grid1D
    from optmech.problems.pure import build_periodic
    from optmech.solvers.chain import ChainBackend

    for grid in (Grid1D.integer(7), Grid1D.from_edges(1.0, [0.013, 0.2, 0.31])):
        for cost in ("abs", "square", "min(abs(x), 2)"):
            plp = build_periodic(grid, 1.3, parse_cost(cost))
            chain = ChainBackend().solve(plp.lp, {})
            highs = solve_lp(plp.lp, "ipm")
            assert chain.ok and highs.ok
            assert chain.objective == pytest.approx(highs.objective, rel=1e-9)
            lower = dual_lower_bound(plp.lp, chain.row_dual).value
            assert lower <= chain.objective and lower == pytest.approx(chain.objective, rel=1e-12)


def test_chain_backend_declines_other_lps():
    from optmech.solvers.chain import ChainBackend

    lp = tiny_lp()
    assert not ChainBackend().accepts(lp)
    assert not ChainBackend().solve(lp, {}).ok


# ------------------------------------------------------------------------------------------------
# attempt conditions ([attempt.when]) and the Clarabel backend


def _general_lp(cols: int, builder: str = "general") -> LinearProgram:
    return LinearProgram(c=np.zeros(cols), A=sp.csc_array((1, cols)), row_lower=np.zeros(1), row_upper=np.ones(1),
                         col_lower=np.zeros(cols), col_upper=np.ones(cols), meta={"builder": builder})


def test_when_conditions_select_attempts():
    from optmech.solvers import backend_for

    prof = parse_profile(
        'description = "x"\n[[attempt]]\nbackend = "clarabel"\n[attempt.when]\nbuilders = ["general"]\n'
        'min_columns = 10\n[[attempt]]\nbackend = "highs"\n', "w")
    first = prof.attempts[0]
    assert first.applies(_general_lp(10)) and not first.applies(_general_lp(9))
    assert not first.applies(_general_lp(10, "periodic"))
    assert backend_for(prof, "general", 10) == ("clarabel" if available_backends()["clarabel"] else "highs")
    assert backend_for(prof, "general", 9) == "highs"
    assert backend_for("default", "periodic", 10) == "chain"


@pytest.mark.parametrize("text, message", [
    ('[attempt.when]\nsize = 3', "unknown condition(s) size"),
    ('[attempt.when]\nbuilders = "general"', "when.builders must be a list"),
    ('[attempt.when]\nmin_columns = -1', "when.min_columns must be a nonnegative integer"),
    ('[attempt.when]\nmin_columns = true', "when.min_columns must be a nonnegative integer"),
])
def test_when_conditions_are_checked(text, message):
    with pytest.raises(SpecError) as err:
        parse_profile(f'[[attempt]]\nbackend = "clarabel"\n{text}\n', "w")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_clarabel_agrees_with_highs_on_a_random_lp():
    pytest.importorskip("highspy")
    _skip_unavailable("clarabel", {})
    lp = random_lp(n=300, m=120, seed=3)
    a = get_backend("highs").solve(lp, {"solver": "simplex"})
    b = get_backend("clarabel").solve(lp, {})
    assert b.status is Status.OPTIMAL and b.method == "ipm" and b.iterations >= 1
    assert b.objective == pytest.approx(a.objective, rel=1e-8, abs=1e-8)
    np.testing.assert_allclose(lp.A.T @ b.row_dual + b.col_dual, lp.c, atol=1e-9)


def test_clarabel_rejects_unknown_settings_and_keeps_stdout_clean():
    """Clarabel writes its log through Python's ``sys.stdout``: in a real process (not under pytest's
    capture, which swaps ``sys.stdout``) it must land on standard error, and stdout stay empty."""
    import subprocess
    import sys

    _skip_unavailable("clarabel", {})
    with pytest.raises(SpecError, match="no_such_setting"):
        get_backend("clarabel").solve(tiny_lp(), {"no_such_setting": 1})
    code = ("import sys; sys.path.insert(0, %r); from test_solvers import tiny_lp; "
            "from optmech.solvers import get_backend; "
            "print(get_backend('clarabel').solve(tiny_lp(), {'verbose': True}).status)") % str(ROOT / "tests")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "optimal\n" and "Clarabel" in proc.stderr


@pytest.mark.parametrize("route", [r for r in ROUTES if r[0] in ("highs", "clarabel")], ids=_route_id)
def test_solve_scale_returns_the_unscaled_solution_and_the_same_duals(route):
    """lp.meta["solve_scale"] = S solves in S·x: the primal and objective come back divided by S,
    the duals unchanged (the tiny LP's optimum x = (0.625, 0.375), y = (1.5, −0.5), derived by hand)."""
    import dataclasses

    backend, options, tol = route
    _skip_unavailable(backend, options)
    lp = tiny_lp()
    scaled = dataclasses.replace(lp, meta={"solve_scale": 1024.0})
    sol = get_backend(backend).solve(scaled, options)
    check_kkt(lp, sol, tol)
    assert sol.objective == pytest.approx(1.375, abs=10 * tol)
    np.testing.assert_allclose(sol.x, [0.625, 0.375], atol=10 * tol)
    np.testing.assert_allclose(sol.row_dual, [1.5, -0.5], atol=10 * tol)


def test_highs_returns_its_basis_on_request_and_starts_from_one():
    # min x0 + 2 x1 s.t. x0 + x1 >= 1, 0 <= x <= 10: a basis comes back only when the LP asks for it, and a solve that
    # starts from the optimal basis needs no iteration
    A = sp.csc_array(np.array([[1.0, 1.0]]))
    base = dict(c=np.array([1.0, 2.0]), A=A, row_lower=np.array([1.0]), row_upper=np.array([np.inf]),
                col_lower=np.zeros(2), col_upper=np.full(2, 10.0))
    plain = solve_lp(LinearProgram(**base), time_limit=10)
    assert plain.basis is None
    asked = solve_lp(LinearProgram(**base, meta={"keep_basis": True}), time_limit=10)
    cols, rows = asked.basis
    assert cols.tolist()[0] == 1 and cols.tolist()[1] == 0 and rows.size == 1  # x0 basic, x1 at its lower bound
    again = solve_lp(LinearProgram(**base, meta={"keep_basis": True, "start_basis": asked.basis}), time_limit=10)
    assert again.iterations == 0 and again.objective == pytest.approx(1.0) and "warm start" in again.method
    # a basis of other sizes is ignored
    wrong = solve_lp(LinearProgram(**base, meta={"start_basis": (np.zeros(3), np.zeros(1))}), time_limit=10)
    assert "warm start" not in wrong.method and wrong.objective == pytest.approx(1.0)
