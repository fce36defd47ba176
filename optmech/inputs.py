r"""Input distributions p_X on ℤ for the Wasserstein utility [QHFL22, §III-C, §V].

The Wasserstein objective of :mod:`optmech.problems.wasserstein` compares a *random* input X with
the output X + θ, so it needs the input's pmf [QHFL22, §III-C].  This module
builds it from a short spec string or reads it from a CSV file.

Specs (lattice step Δ = 1, as in the paper's simulations):

``poisson:RATE:LO:HI``
    The Poisson(RATE) pmf restricted to the integers LO..HI and renormalised (the paper's
    "Poisson γ = 5" input [QHFL22, §V]; it does not say how it truncates, so the renormalised
    restriction is our choice).
``gaussian:MU:SIGMA:LO:HI``
    The floor-binned Gaussian p(k) = ∫_k^{k+1} φ((t − μ)/σ)/σ dt [QHFL22, (2), the binning the
    paper uses for its Gaussian input], restricted to LO..HI and renormalised.
``uniform:LO:HI``
    p(k) = 1/(HI − LO + 1) on LO..HI.

CSV files have the header ``k,p``: integer support points (no duplicates) and nonnegative
masses summing to 1 within :data:`SUM_TOL`; the masses are then renormalised to sum to 1.

Limits, shared with the audit's pmf files (:mod:`optmech.audit_files`): every support point and
every LO, HI satisfies ``|k| <= MAX_ABS_K`` (2**53, the largest range in which every integer is
exact in a float64); a CSV line is at most :data:`MAX_LINE_CHARS` characters.

Every malformed input raises :class:`~optmech.errors.SpecError` with a one-line message.
"""

from __future__ import annotations

import csv
import decimal
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from optmech.errors import SpecError

__all__ = ["InputPMF", "SUM_TOL", "MAX_SUPPORT", "MAX_ABS_K", "MAX_LINE_CHARS", "parse_input_spec", "read_input_pmf",
           "input_from_arrays", "parse_support_point", "csv_rows", "check_json_numbers"]

#: A given pmf must sum to 1 within this absolute tolerance.
SUM_TOL = 1e-9
#: Largest support range LO..HI accepted (the W1 LP has one row per output point).
MAX_SUPPORT = 1_000_000
#: Largest |k| of a support point (and of LO, HI): 2**53, beyond which float64 skips integers.
MAX_ABS_K = 2**53
#: Longest line a ``k,p`` CSV file may have (a float written in full takes under 30).
MAX_LINE_CHARS = 65_536

_K_RANGE = f"|k| <= 2**53 = {MAX_ABS_K}"


def _show(text: str, n: int = 40) -> str:
    """``repr`` of text, cut to n characters (any other value: its repr, cut)."""
    if not isinstance(text, str):
        text = repr(text)
        return text if len(text) <= n else text[:n] + "…"
    return repr(text if len(text) <= n else text[:n] + "…")


def parse_support_point(text: str, where: str, what: str = "k") -> int:
    """An integer support point from text, exactly: ``7``, ``-3``, ``3.0`` and ``3e2`` are accepted
    (integral values, read as decimals, never rounded through a float); ``1.5``, ``nan``, ``inf`` and
    anything beyond ``|k| <= MAX_ABS_K`` raise a one-line SpecError starting with ``where``.

    >>> parse_support_point(" 3e2 ", "f line 2"), parse_support_point("-0", "f line 2")
    (300, 0)
    >>> parse_support_point("1e21", "f line 2")
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: f line 2: k = '1e21' is out of range; support points need |k| <= 2**53 = 9007199254740992
    """
    t = text.strip()
    digits = t[1:] if t[:1] in ("+", "-") else t
    if 0 < len(digits) <= 15 and digits.isascii() and digits.isdigit():  # the usual case: |k| < 10**15 < 2**53
        return int(t)
    try:
        with decimal.localcontext() as ctx:
            ctx.Emax, ctx.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
            d = decimal.Decimal(t)
    except (decimal.DecimalException, ValueError):
        raise SpecError(f"{where}: {what} must be an integer, got {_show(text)}") from None
    if d.is_nan():
        raise SpecError(f"{where}: {what} must be an integer, got {_show(text)}")
    if d.is_infinite() or abs(d) > MAX_ABS_K:
        raise SpecError(f"{where}: {what} = {_show(t)} is out of range; support points need {_K_RANGE}")
    if d != d.to_integral_value():
        raise SpecError(f"{where}: {what} must be an integer, got {_show(text)}")
    return int(d)


def check_json_numbers(obj, where: str, label: str = "") -> None:
    """Refuse a JSON document (as parsed) holding a number that is not finite (``NaN``,
    ``Infinity``) or beyond ``|x| <= MAX_ABS_K`` (2**53): no saved mechanism needs one, and such
    numbers overflow the integer arithmetic (k_lo, steps, sensitivities) downstream.

    >>> check_json_numbers({"k_lo": -3, "weights": [0.5, 0.5]}, "m.json")
    >>> check_json_numbers({"k_lo": 1e21, "weights": [0.5, 0.5]}, "m.json")
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: m.json: k_lo = 1e+21 is out of range; numbers in a mechanism need |x| <= 2**53 = 9007199254740992
    """
    stack = [(label, obj)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, dict):
            stack.extend((f"{path}.{k}" if path else str(k), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", x) for i, x in enumerate(v))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            if isinstance(v, float) and not math.isfinite(v):
                raise SpecError(f"{where}: {_clip(path)} = {v!r} is not finite")
            if abs(v) > MAX_ABS_K:
                raise SpecError(f"{where}: {_clip(path)} = {_clip(repr(v))} is out of range; numbers in a mechanism "
                                f"need |x| <= 2**53 = {MAX_ABS_K}")


def _clip(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "…"


def csv_rows(path: str | Path, where: Callable[[int], str], cannot: str, max_rows: int) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank row of a CSV file, read in bounded memory.

    UTF-8 (a leading BOM is dropped), any line ending.  A line longer than
    :data:`MAX_LINE_CHARS`, more than ``max_rows`` rows after the header, a file that is not
    UTF-8 or cannot be read, and a malformed CSV (an unclosed quote) each raise a one-line
    SpecError: ``cannot`` is the prefix for a file that cannot be read, ``where(n)`` names line n.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> _ = open(path, "w").write("k,p\\r\\n\\r\\n-1,0.5\\r\\n")
    >>> list(csv_rows(path, lambda n: f"x.csv line {n}", "cannot read x.csv", 10))
    [(1, ['k', 'p']), (3, ['-1', '0.5'])]
    >>> _ = open(path, "a").write("0,0.25\\n1,0.25\\n")
    >>> list(csv_rows(path, lambda n: f"x.csv line {n}", "cannot read x.csv", 2))
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: x.csv line 5: more than 2 rows after the header (the most a pmf here may have)
    """
    line_no = 0

    def lines(fh) -> Iterator[str]:
        nonlocal line_no
        while True:
            line = fh.readline(MAX_LINE_CHARS + 2)  # room for the line ending, \r\n
            if not line:
                return
            line_no += 1
            if len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
                raise SpecError(f"{where(line_no)}: line longer than {MAX_LINE_CHARS} characters")
            yield line

    try:
        fh = open(path, newline="", encoding="utf-8-sig")
    except OSError as e:
        raise SpecError(f"{cannot}: {e.strerror or e}") from None
    rows = 0
    try:
        with fh:
            reader = csv.reader(lines(fh), strict=True)
            for row in reader:
                if not "".join(row).strip():
                    continue
                rows += 1
                if rows > max_rows + 1:
                    raise SpecError(f"{where(reader.line_num)}: more than {max_rows} rows after the header "
                                    "(the most a pmf here may have)")
                yield reader.line_num, row
    except UnicodeDecodeError as e:
        raise SpecError(f"{cannot}: not UTF-8 text ({e.reason})") from None
    except csv.Error as e:
        first = str(e).splitlines()[0] if str(e) else "malformed CSV"
        raise SpecError(f"{where(line_no)}: malformed CSV ({first})") from None
    except OSError as e:
        raise SpecError(f"{cannot}: {e.strerror or e}") from None


@dataclass(frozen=True)
class InputPMF:
    """A pmf on the integers: sorted distinct support ``k`` (int64) and masses ``p`` (sum 1).

    ``label`` records where it came from (the spec string or the file name).

    >>> x = input_from_arrays([0, 2], [0.25, 0.75])
    >>> x.lo, x.hi, x.dense().tolist(), x.cdf().tolist(), x.mean()
    (0, 2, [0.25, 0.0, 0.75], [0.25, 0.25, 1.0], 1.5)
    """

    k: np.ndarray
    p: np.ndarray
    label: str = ""

    @property
    def lo(self) -> int:
        return int(self.k[0])

    @property
    def hi(self) -> int:
        return int(self.k[-1])

    def dense(self) -> np.ndarray:
        """Masses on lo..hi (zeros in the gaps)."""
        out = np.zeros(self.hi - self.lo + 1)
        out[self.k - self.lo] = self.p
        return out

    def cdf(self) -> np.ndarray:
        """F_X(k) for k = lo..hi (F_X = 0 below lo and 1 from hi on); the last entry is exactly 1."""
        F = np.cumsum(self.dense())
        F[-1] = 1.0
        return np.minimum(F, 1.0)

    def mean(self) -> float:
        return float(math.fsum(self.k.astype(float) * self.p))

    def to_dict(self) -> dict:
        return {"label": self.label, "lo": self.lo, "hi": self.hi, "support_points": int(len(self.k)),
                "mean": self.mean()}


def _fail(msg: str) -> None:
    raise SpecError(msg)


def input_from_arrays(k, p, label: str = "arrays") -> InputPMF:
    """Validate (k, p) and return the renormalised :class:`InputPMF` (SpecError on bad data).

    >>> x = input_from_arrays([3, 1], [0.25, 0.75])  # sorted by k
    >>> x.k.tolist(), x.p.tolist()
    ([1, 3], [0.75, 0.25])
    >>> input_from_arrays([0, 1], [1, 3])
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: input pmf arrays: masses sum to 4.0, not 1 (tolerance 1e-09)
    >>> input_from_arrays([0.5], [1.0])
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: input pmf arrays: support points must be integers
    """
    k_arr = np.asarray(k)
    try:
        p_arr = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise SpecError(f"input pmf {label}: masses must be numbers") from None
    if k_arr.ndim != 1 or p_arr.ndim != 1 or len(k_arr) != len(p_arr) or len(k_arr) == 0:
        _fail(f"input pmf {label}: k and p must be 1-D arrays of the same nonzero length")
    if k_arr.dtype.kind in "iu":
        if len(k_arr) and (k_arr.max() > MAX_ABS_K or (k_arr.dtype.kind == "i" and k_arr.min() < -MAX_ABS_K)):
            _fail(f"input pmf {label}: a support point is out of range; support points need {_K_RANGE}")
        k_int = k_arr.astype(np.int64)
    else:
        try:
            k_f = k_arr.astype(float)
        except (TypeError, ValueError, OverflowError):
            raise SpecError(f"input pmf {label}: support points must be integers") from None
        if not (np.all(np.isfinite(k_f)) and np.all(k_f == np.round(k_f))):
            _fail(f"input pmf {label}: support points must be integers")
        if np.any(np.abs(k_f) > MAX_ABS_K):
            _fail(f"input pmf {label}: a support point is out of range; support points need {_K_RANGE}")
        k_int = k_f.astype(np.int64)
    if len(np.unique(k_int)) != len(k_int):
        srt = np.sort(k_int)
        dup = int(srt[np.flatnonzero(np.diff(srt) == 0)[0]])
        _fail(f"input pmf {label}: duplicate support point k = {dup}")
    if not np.all(np.isfinite(p_arr)):
        _fail(f"input pmf {label}: masses must be finite")
    if np.any(p_arr < 0):
        _fail(f"input pmf {label}: negative mass {float(p_arr[np.argmax(p_arr < 0)])!r} at k = {int(k_int[np.argmax(p_arr < 0)])}")
    total = math.fsum(p_arr)
    if not abs(total - 1.0) <= SUM_TOL:
        _fail(f"input pmf {label}: masses sum to {total!r}, not 1 (tolerance {SUM_TOL:g})")
    order = np.argsort(k_int)
    k_int, p_arr = k_int[order], p_arr[order]
    keep = p_arr > 0
    if not np.any(keep):
        _fail(f"input pmf {label}: no positive mass")
    k_int, p_arr = k_int[keep], p_arr[keep] / total
    if int(k_int[-1]) - int(k_int[0]) + 1 > MAX_SUPPORT:
        _fail(f"input pmf {label}: support range {k_int[0]}..{k_int[-1]} exceeds {MAX_SUPPORT} points")
    return InputPMF(k_int, p_arr, label)


def _num(text: str, what: str, spec: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise SpecError(f"input spec {_show(spec, 80)}: {what} must be a number, got {_show(text)}") from None
    if not math.isfinite(x):
        raise SpecError(f"input spec {_show(spec, 80)}: {what} must be finite, got {_show(text)}")
    return x


def _int(text: str, what: str, spec: str) -> int:
    return parse_support_point(text, f"input spec {_show(spec, 80)}", what)


def _range(fields: list[str], spec: str) -> tuple[int, int]:
    lo, hi = _int(fields[0], "LO", spec), _int(fields[1], "HI", spec)
    if lo > hi:
        raise SpecError(f"input spec {_show(spec, 80)}: LO = {lo} > HI = {hi}")
    if hi - lo + 1 > MAX_SUPPORT:
        raise SpecError(f"input spec {_show(spec, 80)}: range LO..HI has more than {MAX_SUPPORT} points")
    return lo, hi


_FIELDS = {"poisson": 3, "gaussian": 4, "uniform": 2}


def parse_input_spec(spec: str) -> InputPMF:
    """``poisson:RATE:LO:HI`` | ``gaussian:MU:SIGMA:LO:HI`` | ``uniform:LO:HI`` → :class:`InputPMF`.

    The Poisson law is truncated to LO..HI and renormalised; the Gaussian puts on k the mass of
    [k, k + 1).

    >>> x = parse_input_spec("uniform:0:3")
    >>> x.k.tolist(), x.p.tolist()
    ([0, 1, 2, 3], [0.25, 0.25, 0.25, 0.25])
    >>> round(parse_input_spec("poisson:5:0:60").mean(), 12)
    5.0
    """
    if not isinstance(spec, str) or not spec.strip():
        raise SpecError(f"input spec must be a non-empty string, got {_show(spec, 80)}")
    parts = [s.strip() for s in spec.strip().split(":")]
    family = parts[0].lower()
    if family not in _FIELDS:
        raise SpecError(f"input spec {_show(spec, 80)}: unknown family {parts[0]!r} (poisson, gaussian, uniform)")
    fields = parts[1:]
    if len(fields) != _FIELDS[family]:
        usage = {"poisson": "poisson:RATE:LO:HI", "gaussian": "gaussian:MU:SIGMA:LO:HI", "uniform": "uniform:LO:HI"}
        raise SpecError(f"input spec {_show(spec, 80)}: expected {usage[family]} ({_FIELDS[family]} fields, got {len(fields)})")
    from scipy import special, stats

    if family == "uniform":
        lo, hi = _range(fields, spec)
        k = np.arange(lo, hi + 1)
        return InputPMF(k, np.full(len(k), 1.0 / len(k)), spec)
    if family == "poisson":
        rate = _num(fields[0], "RATE", spec)
        if not rate > 0:
            raise SpecError(f"input spec {_show(spec, 80)}: RATE must be > 0, got {fields[0]!r}")
        lo, hi = _range(fields[1:], spec)
        if hi < 0:
            raise SpecError(f"input spec {_show(spec, 80)}: the Poisson law has no mass on {lo}..{hi}")
        k = np.arange(max(lo, 0), hi + 1)
        logp = stats.poisson.logpmf(k, rate)
        p = np.exp(logp - np.max(logp))
    else:
        mu, sigma = _num(fields[0], "MU", spec), _num(fields[1], "SIGMA", spec)
        if not sigma > 0:
            raise SpecError(f"input spec {_show(spec, 80)}: SIGMA must be > 0, got {fields[1]!r}")
        lo, hi = _range(fields[2:], spec)
        k = np.arange(lo, hi + 1)
        a, b = (k - mu) / sigma, (k + 1 - mu) / sigma
        # ∫_k^{k+1}: difference of the cdf on the left half, of the survival function on the right
        p = np.where(b <= 0, special.ndtr(b) - special.ndtr(a), special.ndtr(-a) - special.ndtr(-b))
        p = np.maximum(p, 0.0)
    total = math.fsum(p)
    if not total > 0 or not math.isfinite(total):
        raise SpecError(f"input spec {_show(spec, 80)}: no representable mass on {lo}..{hi}")
    p = p / total
    keep = p > 0
    return InputPMF(k[keep].astype(np.int64), p[keep], spec)


def read_input_pmf(path: str | Path) -> InputPMF:
    """Read a CSV with header ``k,p`` (one support point per line) → :class:`InputPMF`.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> _ = open(path, "w").write("k,p\\n-1,0.5\\n1,0.5\\n")
    >>> read_input_pmf(path).mean()
    0.0
    """
    path = Path(path)
    name = path.name
    rows = csv_rows(path, lambda n: f"input pmf {name}, line {n}", f"cannot read input pmf {str(path)!r}",
                    MAX_SUPPORT)
    header = next(rows, None)
    if header is None or [c.strip().lower() for c in header[1]] != ["k", "p"]:
        rows.close()
        raise SpecError(f"input pmf {name}: the first line must be the header 'k,p'")
    ks, ps = [], []
    for i, row in rows:
        if len(row) != 2:
            raise SpecError(f"input pmf {name}, line {i}: expected two fields k,p")
        k = parse_support_point(row[0], f"input pmf {name}, line {i}")
        try:
            pf = float(row[1])
        except ValueError:
            raise SpecError(f"input pmf {name}, line {i}: p must be a number, got {_show(row[1].strip())}") from None
        ks.append(k)
        ps.append(pf)
    if not ks:
        raise SpecError(f"input pmf {name}: no data rows")
    return input_from_arrays(np.array(ks, dtype=np.int64), np.array(ps), name)
