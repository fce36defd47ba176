"""Bound tables: one certified solve per (Δ, ε, δ) row, in parallel, as text, CSV, JSON or markdown.

``optmech table --privacy approx`` reproduces the lower/upper bound comparisons of [GV13]
([Geng13] Ch. 4) and adds the certified optimum V*; ``--privacy pure`` compares V* with the staircase
and Laplace closed forms.  Rows are independent and run in worker processes
(:func:`optmech.workers.process_pool`, whose workers exit with their parent); a progress bar (tqdm) is drawn on a terminal.

Column contract (more columns may be added, none renamed):

* approx: ``sensitivity, epsilon, delta, lb_theorem, lb_theorem_valid, lb_relaxed_lp,
  v_star_lower, v_star_upper, ub_uniform, ub_laplace, ub_staircase, ratio_best_simple_to_v_star``
* pure: ``sensitivity, epsilon, v_star_lower, v_star_upper, staircase, laplace, ratio_laplace_to_v_star``

``ratio_best_simple_to_v_star`` is min(ub_uniform, ub_laplace) / v_star_upper (the best of the
two simple mechanisms of [GV13] against the certified optimum; dividing by the upper end of the
bracket makes it conservative by at most the relative gap).  ``ratio_laplace_to_v_star`` is
laplace / v_star_upper.  A theorem lower bound whose side conditions fail is still shown, with
``lb_theorem_valid = false``: it is *not* a bound.
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

__all__ = ["build_table", "Table", "APPROX_COLUMNS", "PURE_COLUMNS", "FORMATS", "MAX_ROWS"]

APPROX_COLUMNS = (
    "sensitivity", "epsilon", "delta", "lb_theorem", "lb_theorem_valid", "lb_relaxed_lp", "v_star_lower",
    "v_star_upper", "ub_uniform", "ub_laplace", "ub_staircase", "ratio_best_simple_to_v_star",
)
APPROX_EXTRA = ("relative_gap", "certified", "lb_theorem_name", "seconds")
PURE_COLUMNS = ("sensitivity", "epsilon", "v_star_lower", "v_star_upper", "staircase", "laplace", "ratio_laplace_to_v_star")
PURE_EXTRA = ("relative_gap", "certified", "seconds")
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
             target_gap: float | None):
    """One row's problem, through the one flat-parameter mapping (:meth:`optmech.spec.Problem.from_params`)."""
    from optmech.spec import Problem

    return Problem.from_params({"privacy": privacy, "cost": cost, "sensitivity": sensitivity, "epsilon": epsilon,
                                "delta": delta, "dim": dim, "domain": domain, "target_gap": target_gap})


def approx_row(cost: str, sensitivity: int, epsilon: float, delta: float, dim: int, solver: str,
               time_limit: float | None, target_gap: float | None) -> dict[str, Any]:
    import optmech

    r = optmech.solve(_problem("approx", cost, sensitivity, epsilon, delta, dim, "integer", target_gap),
                      solver=solver, time_limit=time_limit)
    thm, relaxed = _ref(r, "thm_lower_bound"), _ref(r, "relaxed_lp")
    uni, lap, st = _ref(r, "uniform"), _ref(r, "discrete_laplace"), _ref(r, "discrete_staircase")
    ub_u, ub_l = _num(uni.value) if uni else None, _num(lap.value) if lap else None
    best = min((v for v in (ub_u, ub_l) if v is not None and math.isfinite(v)), default=None)
    up = r.upper_bound
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
        "relative_gap": r.relative_gap, "certified": r.certified,
        "lb_theorem_name": (thm.parameters.get("theorem") if thm else None), "seconds": r.seconds,
    }


def pure_row(cost: str, sensitivity: float, epsilon: float, domain: str, solver: str,
             time_limit: float | None, target_gap: float | None) -> dict[str, Any]:
    import optmech

    r = optmech.solve(_problem("pure", cost, sensitivity, epsilon, None, 1, domain, target_gap),
                      solver=solver, time_limit=time_limit)
    st = _ref(r, "staircase" if domain == "continuous" else "discrete_staircase")
    lap = _ref(r, "laplace" if domain == "continuous" else "discrete_laplace")
    up = r.upper_bound
    lv = _num(lap.value) if lap else None
    return {
        "sensitivity": sensitivity, "epsilon": epsilon,
        "v_star_lower": r.lower_bound if r.certified else None,
        "v_star_upper": up if r.certified else None,
        "staircase": _num(st.value) if st else None, "laplace": lv,
        "ratio_laplace_to_v_star": lv / up if lv is not None and r.certified and up > 0 else None,
        "relative_gap": r.relative_gap, "certified": r.certified, "seconds": r.seconds,
    }


def _run_row(kind: str, kwargs: dict) -> dict:
    """Worker entry point: a row, or the row's parameters with its one-line error."""
    from optmech.errors import OptmechError

    try:
        return approx_row(**kwargs) if kind == "approx" else pure_row(**kwargs)
    except OptmechError as exc:
        keys = ("sensitivity", "epsilon", "delta")
        return {k: kwargs[k] for k in keys if k in kwargs} | {"certified": False, "error": " ".join(str(exc).split())}


# -- the table ------------------------------------------------------------------------------------
class Table(list):
    """The rows of a bound table (a list of dicts, one per (Δ, ε[, δ]) in grid order) with its kind.

    :meth:`to_frame` gives a pandas DataFrame with the table's columns; :meth:`render` the text,
    CSV, JSON or markdown that ``optmech table`` prints.

    >>> t = build_table("pure", cost="abs", sensitivities=[1], epsilons=[1.0], domain="integer", workers=1)
    >>> t, t.columns[:3], t.render("csv").splitlines()[0].split(",")[:3]
    (<Table pure: 1 rows>, ['sensitivity', 'epsilon', 'v_star_lower'], ['sensitivity', 'epsilon', 'v_star_lower'])
    """

    def __init__(self, kind: str, rows=()):
        super().__init__(rows)
        self.kind = kind

    @property
    def columns(self) -> list[str]:
        """The column names, in order (the contract of the module docstring, then the extras)."""
        return columns(self.kind, self)

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
        return render(self.kind, list(self), fmt)

    def __repr__(self) -> str:
        return f"<Table {self.kind}: {len(self)} rows>"

    def _repr_html_(self) -> str:
        import html

        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c), False))}</td>" for c in self.columns)
                       + "</tr>" for r in self)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def build_table(kind: str, *, cost: str, sensitivities: Sequence, epsilons: Sequence[float],
                deltas: Sequence[float] = (), dim: int = 1, domain: str = "integer", solver: str = "default",
                time_limit: float | None = None, target_gap: float | None = None, workers: int | None = None,
                force: bool = False, progress: bool | None = None) -> Table:
    """All rows, in the order of the grid (Δ outermost, then ε, then δ), as a :class:`Table`.

    Rows run in ``workers`` processes (all cores by default; 1 runs in this process); the call
    works from plain scripts and notebooks alike (no ``if __name__ == "__main__"`` guard needed).

    >>> t = build_table("approx", cost="abs", sensitivities=[1], epsilons=[0.5], deltas=[0.1], workers=1)
    >>> row = t[0]
    >>> row["certified"], row["v_star_lower"] <= row["v_star_upper"] <= row["ub_laplace"]
    (True, True)
    """
    if kind == "approx":
        grid = list(product(sensitivities, epsilons, deltas))
        for D, e, dl in grid:  # validate before forking
            _problem("approx", cost, D, e, dl, dim, "integer", target_gap)
        jobs = [dict(cost=cost, sensitivity=int(D), epsilon=e, delta=dl, dim=dim, solver=solver,
                     time_limit=time_limit, target_gap=target_gap) for D, e, dl in grid]
    else:
        if dim != 1:
            raise SpecError("pure-DP tables are 1-dimensional (--dim 1)")
        grid = list(product(sensitivities, epsilons))
        for D, e in grid:  # validate before forking
            _problem("pure", cost, D, e, None, 1, domain, target_gap)
        jobs = [dict(cost=cost, sensitivity=D, epsilon=e, domain=domain, solver=solver, time_limit=time_limit,
                     target_gap=target_gap) for D, e in grid]
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
                rows[i] = _run_row(kind, job)
                if bar:
                    bar.update()
        else:
            from optmech.workers import process_pool

            with process_pool(workers) as pool:  # its workers exit when this process dies, even by SIGKILL
                futures = {pool.submit(_run_row, kind, job): i for i, job in enumerate(jobs)}
                for fut in as_completed(futures):
                    rows[futures[fut]] = fut.result()
                    if bar:
                        bar.update()
    finally:
        if bar:
            bar.close()
    return Table(kind, [r for r in rows if r is not None])


def columns(kind: str, rows: list[dict]) -> list[str]:
    base = list(APPROX_COLUMNS + APPROX_EXTRA) if kind == "approx" else list(PURE_COLUMNS + PURE_EXTRA)
    if any("error" in r for r in rows):
        base.append("error")
    return base


def _cell(v: Any, machine: bool) -> str:
    if v is None:
        return "" if machine else "—"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
        return repr(v) if machine else f"{v:.10g}"
    return str(v)


def render(kind: str, rows: list[dict], fmt: str) -> str:
    """The table as text, csv, json or markdown."""
    cols = columns(kind, rows)
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
    cells = [[_cell(r.get(c), False) for c in cols] for r in rows]
    if fmt == "markdown":
        out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
        out += ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join(out) + "\n"
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(cols)]
    out = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    out += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out) + "\n"
