"""Readers of the files the audit takes: a ``k,p`` CSV or the JSON of ``optmech solve --save``
(its ``mechanism`` field, kind ``lattice_pmf``), and :func:`audit_file`, the ``optmech audit``
command's engine call.  Every problem with a file is one :class:`~optmech.errors.SpecError` line.
The audit itself is :mod:`optmech.audit`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterable

import numpy as np

from optmech.audit import MAX_EXTENDED_POINTS, PMF_SUM_TOL, audit, check_pmf, check_sensitivity, finite_pmf
from optmech.errors import SpecError
from optmech.inputs import MAX_ABS_K, check_json_numbers, csv_rows, parse_support_point
from optmech.problems.lattice import LatticeMechanism

__all__ = ["read_pmf_csv", "load_pmf", "audit_file"]


def _short(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "…"


def _parse_k(text: str, where: str) -> int:
    """An integer k, read exactly; integral decimals such as '3.0' or '3e2' are accepted, '1.5' is
    not, nor |k| > MAX_ABS_K (2**53)."""
    return parse_support_point(text, where)


def _parse_p(text: str, where: str) -> float:
    try:
        x = float(text.strip())
    except ValueError:
        raise SpecError(f"{where}: p must be a number, got {_short(text)}") from None
    if not math.isfinite(x):
        raise SpecError(f"{where}: p must be finite, got {_short(text)}")
    if x < 0:
        raise SpecError(f"{where}: p must be >= 0, got {_short(text)}")
    return x


def read_pmf_csv(path: str | Path) -> LatticeMechanism:
    """Read a pmf from a CSV file with header ``k,p`` (one row per support point).

    Rules: k are distinct integers with ``|k| <= MAX_ABS_K`` (2**53; integral spellings like
    ``3.0`` are accepted, ``1.5`` is not; missing k are zero mass); p finite and >= 0; the p sum to 1 within
    ``PMF_SUM_TOL`` (1e-9); blank lines are ignored.  The masses are used as given, not
    renormalised.  Lines are at most :data:`~optmech.inputs.MAX_LINE_CHARS` characters, and there
    are at most ``MAX_EXTENDED_POINTS`` rows.  Every violation raises a one-line
    :class:`SpecError` naming the line.
    """
    name = str(path)
    ks: list[int] = []
    ps: list[float] = []
    header = None
    rows = csv_rows(path, lambda n: f"{name} line {n}", f"cannot read pmf file {name!r}", MAX_EXTENDED_POINTS)
    for line, row in rows:
        where = f"{name} line {line}"
        if header is None:
            header = [f.strip().lower() for f in row]
            if header != ["k", "p"]:
                raise SpecError(f"{name}: the first line must be the header 'k,p', got {_short(','.join(row))}")
            continue
        if len(row) != 2:
            raise SpecError(f"{where}: expected 2 fields 'k,p', got {len(row)}: {_short(','.join(row))}")
        ks.append(_parse_k(row[0], where))
        ps.append(_parse_p(row[1], where))
    if header is None:
        raise SpecError(f"{name}: empty file (expected a header 'k,p' and rows)")
    if not ks:
        raise SpecError(f"{name}: no rows after the header 'k,p'")
    k = np.asarray(ks, dtype=np.int64)
    uniq, counts = np.unique(k, return_counts=True)
    if np.any(counts > 1):
        dup = int(uniq[np.argmax(counts > 1)])
        raise SpecError(f"{name}: k = {dup} appears more than once")
    total = math.fsum(ps)
    if not abs(total - 1.0) <= PMF_SUM_TOL:
        raise SpecError(f"{name}: p sums to {total!r}, not 1 within PMF_SUM_TOL = {PMF_SUM_TOL:g}")
    return finite_pmf(k, np.asarray(ps))


def _load(path: str | Path) -> tuple[LatticeMechanism, int | None, str]:
    """(pmf, the sensitivity a saved solve used or None, format)."""
    name = str(path)
    if not name.lower().endswith(".json"):
        return read_pmf_csv(path), None, "csv"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"cannot read pmf file {name!r}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise SpecError(f"cannot read pmf file {name!r}: not UTF-8 ({e.reason})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"{name}: malformed JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except (ValueError, RecursionError) as e:  # a number of more than 4300 digits; nesting too deep
        raise SpecError(f"{name}: unreadable JSON ({type(e).__name__}: {_clip(str(e), 80)})") from None
    if not isinstance(data, dict):
        raise SpecError(f"{name}: expected a JSON object written by 'optmech solve --save'")
    mech = data.get("mechanism") if "mechanism" in data else (data if "kind" in data else None)
    if not isinstance(mech, dict):
        raise SpecError(f"{name}: no 'mechanism' object (write one with 'optmech solve --save FILE')")
    kind = mech.get("kind")
    if kind == "piecewise_constant_density":
        raise SpecError(
            f"{name}: the mechanism is a piecewise-constant density on the continuous domain; "
            "the audit handles lattice pmfs (solve with --domain integer)"
        )
    if kind != "lattice_pmf":
        raise SpecError(f"{name}: unknown mechanism kind {kind!r} (expected 'lattice_pmf')")
    from optmech.problems.lattice import lattice_mechanism_from_dict

    check_json_numbers(mech, name)
    try:
        pmf = lattice_mechanism_from_dict(mech)
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise SpecError(f"{name}: malformed mechanism ({type(e).__name__}: {_clip(str(e), 120)})") from None
    check_pmf(pmf)
    if not (-MAX_ABS_K <= pmf.k_lo and pmf.k_lo + len(pmf.weights) - 1 <= MAX_ABS_K):
        raise SpecError(f"{name}: the pmf window starts at k_lo = {_clip(str(pmf.k_lo), 40)}; "
                        f"support points need |k| <= 2**53 = {MAX_ABS_K}")
    saved = None
    try:
        x = float(mech.get("sensitivity"))
        if math.isfinite(x) and x == int(x) and x >= 1:
            saved = int(x)
    except (TypeError, ValueError):
        pass
    return pmf, saved, "json"


def load_pmf(path: str | Path) -> LatticeMechanism:
    """A pmf from a file: ``*.json`` is the output of ``optmech solve --save`` (its
    ``mechanism`` field, kind ``lattice_pmf``); anything else is a ``k,p`` CSV
    (:func:`read_pmf_csv`).  Raises a one-line SpecError on any problem."""
    return _load(path)[0]


def audit_file(
    path: str | Path,
    sensitivity: int | str | None,
    epsilons: Iterable[float | str] | None = None,
    *,
    deltas: Iterable[float | str] | None = None,
) -> dict:
    """The CLI payload: :func:`load_pmf` then :func:`audit`, as a JSON-safe dict.

    ``sensitivity`` must be an integer >= 1; it may be None for a ``--save`` JSON, which then
    uses the sensitivity the mechanism was solved for.  ε (and δ) values must be finite and
    >= 0 (δ <= 1); strings are kept verbatim as keys.  The dict is :meth:`AuditReport.to_dict`
    plus ``file`` and ``format``.
    """
    pmf, saved, fmt = _load(path)
    if sensitivity is None:
        if saved is None:
            raise SpecError("a sensitivity is required (an integer >= 1)")
        sensitivity = saved
    D = check_sensitivity(sensitivity)
    report = audit(pmf, D, epsilons, deltas=deltas)
    return {"file": str(path), "format": fmt, **report.to_dict()}


