"""Bound tables: one certified solve per (Δ, ε, δ) row, in parallel, as text, CSV, JSON or markdown.

``optmech table --privacy approx`` reproduces the lower/upper bound comparisons of [GV13]
([Geng13] Ch. 4) on the integer lattice and adds the certified optimum V*; with ``--domain
continuous`` it brackets V* for (ε, δ)-DP noise on the real line, or on ℝ^d (``--dim 2|3``, with
``--norm l1|l2`` sensitivity), and sets it beside the Gaussian ([DR14], [BW18]) and the truncated
Laplace [GDGK20]; ``--privacy pure`` compares V* with the staircase and Laplace closed forms.
Rows are independent and run in worker processes
(:func:`optmech.workers.process_pool`, whose workers exit with their parent); a progress bar (tqdm) is drawn on a terminal.

Column contract (more columns may be added, none renamed or removed):

* approx: ``sensitivity, epsilon, delta, lb_theorem, lb_theorem_valid, lb_relaxed_lp,
  v_star_lower, v_star_upper, ub_uniform, ub_laplace, ub_staircase, ratio_best_simple_to_v_star``
  (:data:`APPROX_COLUMNS`), on both domains; then, on the integer lattice,
  ``ub_discrete_gaussian, ratio_discrete_gaussian_to_v_star`` (:data:`APPROX_INTEGER_COLUMNS`), and
  on the real line ``ub_gaussian, ub_analytic_gaussian, ub_truncated_laplace,
  ratio_gaussian_to_v_star, ratio_truncated_laplace_to_v_star`` (:data:`APPROX_CONTINUOUS_COLUMNS`);
  then ``relative_gap, certified, lb_theorem_name, seconds``; on ℝ^d (d > 1) then also
  ``dim, norm, status`` (:data:`APPROX_ND_COLUMNS`; absent from 1-D tables).
* pure: ``sensitivity, epsilon, v_star_lower, v_star_upper, staircase, laplace, ratio_laplace_to_v_star``
  (:data:`PURE_COLUMNS`), then ``relative_gap, certified, seconds``; in d > 1 (ℤ^d or ℝ^d) then also
  ``l2_laplace, dim, norm, status`` (:data:`PURE_ND_COLUMNS`; absent from 1-D tables).

Every ``ratio_*_to_v_star`` divides by ``v_star_upper``, the upper end of the certified bracket
(v_star_lower <= V* <= v_star_upper): it never exceeds the true ratio to V* and is below it by a
factor of at least 1 − relative_gap (relative_gap = (upper − lower)/upper).  It is null when its
numerator is null or the row is not certified.

Integer lattice (``--domain integer``, the default for approx):
``ratio_best_simple_to_v_star`` is min(ub_uniform, ub_laplace) / v_star_upper (the best of the
two simple mechanisms of [GV13] against the certified optimum).  A theorem lower bound whose side
conditions fail is still shown, with ``lb_theorem_valid = false``: it is *not* a bound.
``ub_discrete_gaussian`` is the exact expected cost of the discrete Gaussian [CKS20] with the
smallest σ whose exact δ(ε) over the shifts 1..Δ is <= δ; null when it is not a valid bound or was
not computed (d > 1, ε = 0, or Δ above 64, where its calibration is too slow for a table row).

Real line and ℝ^d (``--domain continuous``, d in :data:`CONTINUOUS_APPROX_DIMS` = 1, 2, 3):

* ``lb_theorem``, ``lb_theorem_valid``, ``lb_theorem_name``, ``lb_relaxed_lp``: null.  The
  theorems and relaxed LPs of [GV13] are statements about noise on ℤ; optmech implements no
  closed-form lower bound for (ε, δ)-DP noise on ℝ, and the certified lower bound is ``v_star_lower``.
* Every ``ub_*`` is the expected cost of one (ε, δ)-DP (or stronger) noise law on ℝ (ℝ^d), taken
  from the solve's own references (those of
  :func:`optmech.mechanisms.approx.references.continuous_approx_references` for cost, ε, δ, Δ, dim and
  norm, each at its best shift by :func:`optmech.mechanisms.shifts.shift_references` on ℝ, 0 on
  ℝ^d where the costs are the named ones), so a row and ``solve`` agree on every reference value;
  null when that reference is not a valid bound (its side
  condition fails or its value is not finite), or when it has no law in that dimension:
  ``ub_uniform``: U[−Δ/(2δ), Δ/(2δ)], (0, δ)-DP;  ``ub_laplace``: Laplace(Δ/ε) (null at ε = 0);
  ``ub_staircase``: the δ = 0 optimum [Geng13, Thm 2.4] (other costs: the best staircase; null at ε = 0);
  ``ub_gaussian``: the classic Gaussian σ = Δ√(2 ln(1.25/δ))/ε of [DR14, Thm A.1], **null
  unless 0 < ε < 1**, where that calibration is proven (above it σ may not be (ε, δ)-DP at all);
  ``ub_analytic_gaussian``: the Gaussian with the smallest σ whose exact δ(ε) is <= δ
  [BW18, Thm 8] (valid for every ε; E|Z| = σ√(2/π), E Z² = σ²);
  ``ub_truncated_laplace``: the truncated Laplace of [GDGK20] (null at ε = 0, and in d > 1,
  where the references have no truncated Laplace).
  In d > 1 (module docstring of :mod:`optmech.mechanisms.approx.references`): the Gaussians are
  N(0, σ²I_d) calibrated to the ℓ2 sensitivity (Δ for either norm); ``ub_laplace`` is i.i.d.
  Laplace(Δ/ε) coordinates for ``--norm l1``, the ℓ2-Laplace for ``--norm l2``; ``ub_staircase``
  the best ℓ1 staircase; ``ub_uniform`` the product uniform.
* ``ratio_best_simple_to_v_star`` = min(ub_uniform, ub_laplace) / v_star_upper, as on ℤ.
* ``ratio_gaussian_to_v_star`` = the best *valid* Gaussian over v_star_upper:
  min(ub_gaussian, ub_analytic_gaussian) / v_star_upper over the non-null ones.  The analytic
  calibration is the smallest σ with δ(ε) <= δ, so it never exceeds the classic one and this is
  ub_analytic_gaussian / v_star_upper (for costs nondecreasing in |x|).
* ``ratio_truncated_laplace_to_v_star`` = ub_truncated_laplace / v_star_upper.

(ε, δ) on ℝ^d (d = 2, 3; pure tables: below): the costs are the d-D names ``l1``, ``l2``,
``l2sq`` (a 1-D name such as ``abs`` or ``square`` is refused, not translated), the sensitivity's
norm is ``norm`` (``--norm l1|l2``, validated by :class:`optmech.spec.Problem` as in ``solve``).
A d-D solve can be slow: ``--time-limit`` (per row) and ``--target-gap`` bound it, and a row that
stops early still reports its certified bracket, with ``status`` ``gap_not_reached`` and its
``relative_gap``.  Extra columns ``dim, norm, status``.

The text rendering of a real-line table leaves out those four null theorem columns, and in d > 1 the
truncated Laplace columns when they are null in every row (CSV, JSON, markdown and
:meth:`Table.to_frame` keep every column).

Pure ε-DP (``--privacy pure``) on the ``domain`` in ``dim`` dimensions, every problem ``solve`` takes
(ℤ, ℝ, ℤ^d, ℝ^d with the sensitivity's ``norm``): ``staircase`` is the expected cost of the best
staircase of the solve's references (``discrete_staircase`` on the lattice; in d > 1 the ℓ1 staircase,
or the staircase in the sensitivity's norm), ``laplace`` that of the (discrete) Laplace, i.i.d. coordinates
in d > 1 calibrated to the norm, and in d > 1 ``l2_laplace`` that of the ℓ2-Laplace (ℝ^d with ``--norm
l2`` only); each is null when the solve lists no such reference (a cost expression, say).
``ratio_laplace_to_v_star`` = laplace / v_star_upper.  A d-D row stopped by ``--time-limit`` keeps its
certified bracket with ``status`` ``gap_not_reached``.

Lipschitz privacy and Wasserstein utility have no tables: :func:`build_table` refuses them with one
line (solve them one problem at a time with ``optmech solve``).

For cost expressions the references' costs are numerical integrals (``exact = false`` in the
solve's JSON), not certified; for ``abs``, ``square`` and ``pow:P`` they are closed forms rounded up.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from concurrent.futures import as_completed
from itertools import product
from typing import Any, Sequence

from optmech.errors import SpecError

__all__ = ["build_table", "Table", "APPROX_COLUMNS", "APPROX_INTEGER_COLUMNS", "APPROX_CONTINUOUS_COLUMNS",
           "APPROX_ND_COLUMNS", "CONTINUOUS_APPROX_DIMS", "PURE_COLUMNS", "PURE_ND_COLUMNS", "KINDS", "FORMATS",
           "MAX_ROWS"]

APPROX_COLUMNS = (
    "sensitivity", "epsilon", "delta", "lb_theorem", "lb_theorem_valid", "lb_relaxed_lp", "v_star_lower",
    "v_star_upper", "ub_uniform", "ub_laplace", "ub_staircase", "ratio_best_simple_to_v_star",
)
#: After :data:`APPROX_COLUMNS` on the integer lattice: the discrete Gaussian [CKS20].
APPROX_INTEGER_COLUMNS = ("ub_discrete_gaussian", "ratio_discrete_gaussian_to_v_star")
#: After :data:`APPROX_COLUMNS` on the real line: the Gaussian ([DR14], [BW18]) and the truncated Laplace [GDGK20].
APPROX_CONTINUOUS_COLUMNS = ("ub_gaussian", "ub_analytic_gaussian", "ub_truncated_laplace", "ratio_gaussian_to_v_star",
                             "ratio_truncated_laplace_to_v_star")
APPROX_EXTRA = ("relative_gap", "certified", "lb_theorem_name", "seconds")
#: Columns of the integer contract that are null in every row on the real line (the text rendering leaves them out).
_NULL_ON_THE_REAL_LINE = ("lb_theorem", "lb_theorem_valid", "lb_relaxed_lp", "lb_theorem_name")
#: The dimensions of (ε, δ) tables on ℝ^d (``--domain continuous``): ℝ, ℝ² and ℝ³.
CONTINUOUS_APPROX_DIMS = (1, 2, 3)
#: After :data:`APPROX_EXTRA` in (ε, δ) tables on ℝ^d, d > 1: the dimension, the sensitivity's norm and the solve's status.
APPROX_ND_COLUMNS = ("dim", "norm", "status")
#: Columns left out of the text rendering on ℝ^d, d > 1, when null in every row (no d-D truncated Laplace).
_NULL_IN_ND_TEXT = ("ub_truncated_laplace", "ratio_truncated_laplace_to_v_star")
PURE_COLUMNS = ("sensitivity", "epsilon", "v_star_lower", "v_star_upper", "staircase", "laplace", "ratio_laplace_to_v_star")
PURE_EXTRA = ("relative_gap", "certified", "seconds")
#: After :data:`PURE_EXTRA` in pure tables on ℤ^d or ℝ^d, d > 1: the ℓ2-Laplace, the dimension, the norm, the status.
PURE_ND_COLUMNS = ("l2_laplace", "dim", "norm", "status")
#: The table kinds (the privacy notions with tables).
KINDS = ("pure", "approx")
#: Rows refused without ``--force``.
MAX_ROWS = 500
FORMATS = ("text", "csv", "json", "markdown")


def parse_list(name: str, text: str, *, integer: bool = False) -> list:
    """A comma-separated list of numbers; one-line SpecError when empty or malformed."""
    items = [t.strip() for t in str(text).split(",")]
    if not text or any(t == "" for t in items):
        raise SpecError(f"--{name} must be a comma-separated list of numbers, got {text!r}")
    out = []
    for t in items:
        try:
            v = float(t)
        except ValueError:
            raise SpecError(f"--{name}: {t!r} is not a number") from None
        if not math.isfinite(v):
            raise SpecError(f"--{name}: {t!r} is not a finite number")
        if integer:
            if v != int(v):
                raise SpecError(f"--{name}: {t!r} is not an integer")
            v = int(v)
        out.append(v)
    return out


# -- one row (runs in a worker process) ----------------------------------------------------------
def _ref(result, name: str):
    for r in result.references:
        if r.name == name:
            return r
    return None


def _num(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _problem(privacy: str, cost: str, sensitivity, epsilon: float, delta: float | None, dim: int, domain: str,
             target_gap: float | None, norm: str = "l1"):
    """One row's problem, through the one flat-parameter mapping (:meth:`optmech.spec.Problem.from_params`,
    which validates the norm as ``solve`` does)."""
    from optmech.spec import Problem

    return Problem.from_params({"privacy": privacy, "cost": cost, "sensitivity": sensitivity, "epsilon": epsilon,
                                "delta": delta, "dim": dim, "domain": domain, "target_gap": target_gap, "norm": norm})


def _check_nd_cost(cost, dim: int) -> None:
    """On ℝ^d, d > 1, the cost must be written as a d-D name (l1, l2, l2sq); a 1-D name is refused."""
    from optmech.problems.approx_cells_nd import COSTS

    name = str(cost).strip().lower()
    if dim > 1 and name not in COSTS:
        hint = {"abs": " (abs is a 1-D cost: say l1)", "square": " (square is a 1-D cost: say l2sq)"}.get(
            name, " (1-D costs need --dim 1)")
        raise SpecError(f"(epsilon, delta) tables on R^{dim} take the costs {', '.join(COSTS)}, got {str(cost)!r}{hint}")


def _valid_upper(refs, name: str) -> float | None:
    """The value of the reference (a Bound or ReferenceValue) named ``name`` in ``refs`` when it is a valid,
    finite upper bound; else None."""
    ref = next((r for r in refs if r.name == name), None)
    if ref is None or ref.valid is False:
        return None
    v = _num(ref.value)
    return v if v is not None and math.isfinite(v) else None


def _ratio(value: float | None, result) -> float | None:
    """``value / v_star_upper`` for a certified row (None when either is missing)."""
    up = result.upper_bound
    if value is None or not result.certified or not (up > 0 and math.isfinite(up)):
        return None
    return value / up


def approx_row(cost: str, sensitivity: int, epsilon: float, delta: float, dim: int, solver: str,
               time_limit: float | None, target_gap: float | None) -> dict[str, Any]:
    """One row of an (ε, δ) table on the integer lattice ℤ^dim (module docstring)."""
    import optmech

    r = optmech.solve(_problem("approx", cost, sensitivity, epsilon, delta, dim, "integer", target_gap),
                      solver=solver, time_limit=time_limit)
    thm, relaxed = _ref(r, "thm_lower_bound"), _ref(r, "relaxed_lp")
    uni, lap, st = _ref(r, "uniform"), _ref(r, "discrete_laplace"), _ref(r, "discrete_staircase")
    ub_u, ub_l = _num(uni.value) if uni else None, _num(lap.value) if lap else None
    best = min((v for v in (ub_u, ub_l) if v is not None and math.isfinite(v)), default=None)
    up = r.upper_bound
    ub_dg = _valid_upper(r.references, "discrete_gaussian")
    return {
        "sensitivity": sensitivity, "epsilon": epsilon, "delta": delta,
        "lb_theorem": _num(thm.value) if thm else None,
        "lb_theorem_valid": bool(thm.valid) if thm else False,
        "lb_relaxed_lp": _num(relaxed.value) if relaxed and relaxed.valid else None,
        "v_star_lower": r.lower_bound if r.certified else None,
        "v_star_upper": up if r.certified else None,
        "ub_uniform": ub_u, "ub_laplace": ub_l,
        "ub_staircase": _num(st.value) if st and st.valid else None,
        "ratio_best_simple_to_v_star": best / up if best is not None and r.certified and up > 0 else None,
        "ub_discrete_gaussian": ub_dg, "ratio_discrete_gaussian_to_v_star": _ratio(ub_dg, r),
        "relative_gap": r.relative_gap, "certified": r.certified,
        "lb_theorem_name": (thm.parameters.get("theorem") if thm else None), "seconds": r.seconds,
    }


def approx_real_row(cost: str, sensitivity: float, epsilon: float, delta: float, dim: int, solver: str,
                    time_limit: float | None, target_gap: float | None, norm: str = "l1") -> dict[str, Any]:
    """One row of an (ε, δ) table on ℝ or ℝ^d (module docstring: no theorem columns; the references the
    solve lists, those of :func:`optmech.mechanisms.approx.references.continuous_approx_references` for the
    row's cost, dim and norm, each at its best shift as the solve lists it, so that the row and ``solve``
    agree on every reference value)."""
    import optmech

    problem = _problem("approx", cost, sensitivity, epsilon, delta, dim, "continuous", target_gap, norm)
    r = optmech.solve(problem, solver=solver, time_limit=time_limit)
    refs = r.references  # the solve's own references: the same shift rule, the same values
    ub = {name: _valid_upper(refs, name) for name in
          ("uniform", "laplace", "staircase", "gaussian", "analytic_gaussian", "truncated_laplace")}
    if problem.dim > 1 and problem.norm == "l2":  # ub_laplace: the Laplace law of the norm, the l2-Laplace
        ub["laplace"] = _valid_upper(refs, "l2_laplace")
    best_simple = min((v for v in (ub["uniform"], ub["laplace"]) if v is not None), default=None)
    best_gauss = min((v for v in (ub["gaussian"], ub["analytic_gaussian"]) if v is not None), default=None)
    row = {
        "sensitivity": sensitivity, "epsilon": epsilon, "delta": delta,
        "lb_theorem": None, "lb_theorem_valid": None, "lb_relaxed_lp": None,
        "v_star_lower": r.lower_bound if r.certified else None,
        "v_star_upper": r.upper_bound if r.certified else None,
        "ub_uniform": ub["uniform"], "ub_laplace": ub["laplace"], "ub_staircase": ub["staircase"],
        "ratio_best_simple_to_v_star": _ratio(best_simple, r),
        "ub_gaussian": ub["gaussian"], "ub_analytic_gaussian": ub["analytic_gaussian"],
        "ub_truncated_laplace": ub["truncated_laplace"],
        "ratio_gaussian_to_v_star": _ratio(best_gauss, r),
        "ratio_truncated_laplace_to_v_star": _ratio(ub["truncated_laplace"], r),
        "relative_gap": r.relative_gap, "certified": r.certified, "lb_theorem_name": None, "seconds": r.seconds,
    }
    if problem.dim > 1:
        row |= {"dim": problem.dim, "norm": problem.norm, "status": str(r.status)}
    return row


def pure_row(cost: str, sensitivity: float, epsilon: float, domain: str, solver: str,
             time_limit: float | None, target_gap: float | None, dim: int = 1, norm: str = "l1") -> dict[str, Any]:
    """One row of a pure ε-DP table on ℤ^dim or ℝ^dim (module docstring)."""
    import optmech

    problem = _problem("pure", cost, sensitivity, epsilon, None, dim, domain, target_gap, norm)
    r = optmech.solve(problem, solver=solver, time_limit=time_limit)
    st = _ref(r, "staircase" if domain == "continuous" else "discrete_staircase")
    lap = _ref(r, "laplace" if domain == "continuous" else "discrete_laplace")
    up = r.upper_bound
    lv = _num(lap.value) if lap else None
    row = {
        "sensitivity": sensitivity, "epsilon": epsilon,
        "v_star_lower": r.lower_bound if r.certified else None,
        "v_star_upper": up if r.certified else None,
        "staircase": _num(st.value) if st else None, "laplace": lv,
        "ratio_laplace_to_v_star": lv / up if lv is not None and r.certified and up > 0 else None,
        "relative_gap": r.relative_gap, "certified": r.certified, "seconds": r.seconds,
    }
    if problem.dim > 1:
        l2 = _ref(r, "l2_laplace")
        row |= {"l2_laplace": _num(l2.value) if l2 else None, "dim": problem.dim, "norm": problem.norm,
                "status": str(r.status)}
    return row


def _run_row(kind: str, kwargs: dict) -> dict:
    """Worker entry point: a row, or the row's parameters with its one-line error."""
    from optmech.errors import OptmechError

    try:
        return _ROWS[kind](**kwargs)
    except OptmechError as exc:
        keys = ("sensitivity", "epsilon", "delta")
        if kwargs.get("dim", 1) > 1 and kind != "approx":
            keys += ("dim", "norm")
        return {k: kwargs[k] for k in keys if k in kwargs} | {"certified": False, "error": " ".join(str(exc).split())}


#: The row function of each job kind (``approx`` on ℤ^d, ``approx_continuous`` on ℝ^d, ``pure``).
_ROWS = {"approx": approx_row, "approx_continuous": approx_real_row, "pure": pure_row}


# -- the table ------------------------------------------------------------------------------------
class Table(list):
    """The rows of a bound table (a list of dicts, one per (Δ, ε[, δ]) in grid order) with its kind.

    :meth:`to_frame` gives a pandas DataFrame with the table's columns; :meth:`render` the text,
    CSV, JSON or markdown that ``optmech table`` prints.

    >>> t = build_table("pure", cost="abs", sensitivities=[1], epsilons=[1.0], domain="integer", workers=1)
    >>> t, t.columns[:3], t.render("csv").splitlines()[0].split(",")[:3]
    (<Table pure: 1 rows>, ['sensitivity', 'epsilon', 'v_star_lower'], ['sensitivity', 'epsilon', 'v_star_lower'])

    ``domain`` is the noise's domain, ``"integer"`` or ``"continuous"``, and ``dim`` the dimension;
    for (ε, δ) tables they pick the columns (module docstring).
    """

    def __init__(self, kind: str, rows=(), domain: str = "integer", dim: int = 1):
        super().__init__(rows)
        self.kind = kind
        self.domain = domain
        self.dim = dim

    @property
    def columns(self) -> list[str]:
        """The column names, in order (the contract of the module docstring, then the extras)."""
        return columns(self.kind, self, self.domain, self.dim)

    def to_frame(self):
        """The rows as a pandas DataFrame with :attr:`columns` (pandas needed: ``pip install 'optmech[pandas]'``).

        >>> t = build_table("pure", cost="abs", sensitivities=[1], epsilons=[1.0, 2.0], workers=1)
        >>> df = t.to_frame()
        >>> list(df.columns[:4]), len(df), bool((df.v_star_lower <= df.v_star_upper).all())
        (['sensitivity', 'epsilon', 'v_star_lower', 'v_star_upper'], 2, True)
        """
        try:
            import pandas as pd
        except ImportError:
            raise SpecError("a table as a DataFrame needs pandas: pip install 'optmech[pandas]'") from None
        return pd.DataFrame.from_records([{c: r.get(c) for c in self.columns} for r in self], columns=self.columns)

    def render(self, fmt: str = "text") -> str:
        """The table as ``text``, ``csv``, ``json`` or ``markdown`` (what ``optmech table --format`` prints)."""
        return render(self.kind, list(self), fmt, domain=self.domain, dim=self.dim)

    def __repr__(self) -> str:
        where = ""
        if self.kind == "approx" and self.domain == "continuous":
            where = " on the real line" if self.dim == 1 else f" on R^{self.dim}"
        elif self.kind == "pure" and self.dim > 1:
            where = f" on {'R' if self.domain == 'continuous' else 'Z'}^{self.dim}"
        return f"<Table {self.kind}{where}: {len(self)} rows>"

    def _repr_html_(self) -> str:
        import html

        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c), False, c))}</td>" for c in self.columns)
                       + "</tr>" for r in self)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def build_table(kind: str, *, cost: str, sensitivities: Sequence, epsilons: Sequence[float],
                deltas: Sequence[float] = (), dim: int = 1, domain: str = "integer", solver: str = "default",
                time_limit: float | None = None, target_gap: float | None = None, workers: int | None = None,
                force: bool = False, progress: bool | None = None, norm: str = "l1") -> Table:
    """All rows, in the order of the grid (Δ outermost, then ε, then δ), as a :class:`Table`.

    Rows run in ``workers`` processes (all cores by default; 1 runs in this process); the call
    works from plain scripts and notebooks alike (no ``if __name__ == "__main__"`` guard needed).
    ``domain`` is the noise's domain: ``"integer"`` (the lattice ℤ^dim) or ``"continuous"`` (ℝ^dim;
    (ε, δ) tables there take d in :data:`CONTINUOUS_APPROX_DIMS`, and for d > 1 the costs ``l1``,
    ``l2``, ``l2sq`` and ``norm`` ``"l1"`` or ``"l2"``, the sensitivity's norm).  ``time_limit``
    (seconds per row) and ``target_gap`` bound each row's solve; a row stopped early keeps its
    certified bracket (``status`` ``gap_not_reached`` in d > 1).

    >>> t = build_table("approx", cost="abs", sensitivities=[1], epsilons=[0.5], deltas=[0.1], workers=1)
    >>> row = t[0]
    >>> row["certified"], row["v_star_lower"] <= row["v_star_upper"] <= row["ub_laplace"]
    (True, True)
    >>> t = build_table("approx", cost="abs", sensitivities=[1], epsilons=[1.0], deltas=[0.05], domain="continuous",
    ...                 target_gap=1e-3, workers=1)
    >>> row = t[0]
    >>> t, row["ub_gaussian"], row["v_star_upper"] <= row["ub_truncated_laplace"] <= row["ub_analytic_gaussian"]
    (<Table approx on the real line: 1 rows>, None, True)
    >>> t = build_table("approx", cost="l2", sensitivities=[1], epsilons=[1.0], deltas=[0.05], domain="continuous",
    ...                 dim=2, norm="l2", target_gap=0.5, time_limit=1, workers=1)
    >>> row = t[0]
    >>> t, row["norm"], row["ub_truncated_laplace"], row["v_star_lower"] <= row["v_star_upper"] <= row["ub_laplace"]
    (<Table approx on R^2: 1 rows>, 'l2', None, True)
    """
    if kind not in KINDS:
        raise SpecError(f"tables are for pure and approx privacy (on Z, R, Z^d and R^d), got {kind!r}: solve "
                        "Lipschitz privacy and Wasserstein utility one problem at a time with optmech solve")
    if domain == "nonnegative":
        raise SpecError("tables are on Z or R (domain integer or continuous); for noise on N use optmech solve "
                        "--domain nonnegative, or a sweep spec with domain = \"nonnegative\" (optmech run)")
    if domain not in ("integer", "continuous"):
        raise SpecError(f"domain must be integer or continuous, got {domain!r}")
    if kind == "approx" and domain == "continuous":
        if dim not in CONTINUOUS_APPROX_DIMS:
            raise SpecError(f"(epsilon, delta) tables on R^d take --dim {', '.join(map(str, CONTINUOUS_APPROX_DIMS))} "
                            f"with --domain continuous, got --dim {dim}")
        grid = list(product(sensitivities, epsilons, deltas))
        for D, e, dl in grid:  # validate before forking (the norm as solve validates it, then the d-D cost name)
            _problem("approx", cost, D, e, dl, dim, "continuous", target_gap, norm)
        _check_nd_cost(cost, dim)
        jobs = [dict(cost=cost, sensitivity=float(D), epsilon=e, delta=dl, dim=dim, solver=solver,
                     time_limit=time_limit, target_gap=target_gap, norm=norm) for D, e, dl in grid]
        job_kind = "approx_continuous"
    elif kind == "approx":
        grid = list(product(sensitivities, epsilons, deltas))
        for D, e, dl in grid:  # validate before forking
            _problem("approx", cost, D, e, dl, dim, "integer", target_gap, norm)
        jobs = [dict(cost=cost, sensitivity=int(D), epsilon=e, delta=dl, dim=dim, solver=solver,
                     time_limit=time_limit, target_gap=target_gap) for D, e, dl in grid]
        job_kind = "approx"
    else:
        grid = list(product(sensitivities, epsilons))
        for D, e in grid:  # validate before forking (dimension, norm and cost as solve validates them)
            _problem("pure", cost, D, e, None, dim, domain, target_gap, norm)
        jobs = [dict(cost=cost, sensitivity=D, epsilon=e, domain=domain, solver=solver, time_limit=time_limit,
                     target_gap=target_gap, dim=dim, norm=norm) for D, e in grid]
        job_kind = "pure"
    if len(jobs) > MAX_ROWS and not force:
        raise SpecError(f"the table has {len(jobs)} rows, more than the limit of {MAX_ROWS}: shrink the lists or pass --force")
    if progress is None:
        progress = sys.stderr.isatty()
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    rows: list[dict | None] = [None] * len(jobs)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), unit="row", file=sys.stderr, leave=False)
    try:
        if workers == 1:
            for i, job in enumerate(jobs):
                rows[i] = _run_row(job_kind, job)
                if bar:
                    bar.update()
        else:
            from optmech.workers import process_pool

            with process_pool(workers) as pool:  # its workers exit when this process dies, even by SIGKILL
                futures = {pool.submit(_run_row, job_kind, job): i for i, job in enumerate(jobs)}
                for fut in as_completed(futures):
                    rows[futures[fut]] = fut.result()
                    if bar:
                        bar.update()
    finally:
        if bar:
            bar.close()
    return Table(kind, [r for r in rows if r is not None], domain=domain, dim=dim)


def columns(kind: str, rows: list[dict], domain: str = "integer", dim: int = 1) -> list[str]:
    """The columns of a table of ``kind`` on ``domain`` in ``dim`` dimensions, in order (module docstring),
    and ``error`` when a row failed."""
    if kind == "approx":
        refs = APPROX_CONTINUOUS_COLUMNS if domain == "continuous" else APPROX_INTEGER_COLUMNS
        base = list(APPROX_COLUMNS + refs + APPROX_EXTRA)
        if domain == "continuous" and dim > 1:
            base += APPROX_ND_COLUMNS
    else:
        base = list(PURE_COLUMNS + PURE_EXTRA)
        if dim > 1:
            base += PURE_ND_COLUMNS
    if any("error" in r for r in rows):
        base.append("error")
    return base


def _cell(v: Any, machine: bool, column: str = "") -> str:
    """A CSV cell (``machine``: empty for null, ``repr`` of floats) or a text/markdown cell, whose numbers
    and missing values are written as ``optmech solve`` writes them (:mod:`optmech.render`: values to 12
    digits, the relative gap to 3, seconds to the millisecond, ``—`` for a missing value)."""
    from optmech.render import format_gap, format_seconds, format_value

    if isinstance(v, bool):
        return "true" if v else "false"
    if not machine:
        return {"relative_gap": format_gap, "seconds": format_seconds}.get(column, format_value)(v)
    if v is None:
        return ""
    if isinstance(v, float):
        if not math.isfinite(v):
            return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
        return repr(v)
    return str(v)


def render(kind: str, rows: list[dict], fmt: str, *, domain: str | None = None, dim: int | None = None) -> str:
    """The table as text, csv, json or markdown (``domain`` and ``dim``: those of ``rows`` when it is a
    :class:`Table`, else integer and 1)."""
    if domain is None:
        domain = getattr(rows, "domain", "integer")
    if dim is None:
        dim = getattr(rows, "dim", 1)
    cols = columns(kind, rows, domain, dim)
    if fmt == "json":
        def enc(v):
            if isinstance(v, float) and not math.isfinite(v):
                return "inf" if v > 0 else ("-inf" if v < 0 else None)
            return v

        return json.dumps([{c: enc(r.get(c)) for c in cols} for r in rows], indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([_cell(r.get(c), True) for c in cols])
        return buf.getvalue()
    if fmt == "text" and kind == "approx" and domain == "continuous":
        cols = [c for c in cols if c not in _NULL_ON_THE_REAL_LINE]  # always null there: left out of the text only
        if dim > 1:  # no d-D truncated Laplace: its columns are left out of the text when null throughout
            cols = [c for c in cols if c not in _NULL_IN_ND_TEXT or any(r.get(c) is not None for r in rows)]
    cells = [[_cell(r.get(c), False, c) for c in cols] for r in rows]
    if fmt == "markdown":
        out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
        out += ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join(out) + "\n"
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(cols)]
    out = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    out += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out) + "\n"
