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

Every malformed input raises :class:`~optmech.errors.SpecError` with a one-line message.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import special, stats

from optmech.errors import SpecError

__all__ = ["InputPMF", "SUM_TOL", "MAX_SUPPORT", "parse_input_spec", "read_input_pmf", "input_from_arrays"]

#: A given pmf must sum to 1 within this absolute tolerance.
SUM_TOL = 1e-9
#: Largest support range LO..HI accepted (the W1 LP has one row per output point).
MAX_SUPPORT = 1_000_000


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
        k_int = k_arr.astype(np.int64)
    else:
        try:
            k_f = k_arr.astype(float)
        except (TypeError, ValueError):
            raise SpecError(f"input pmf {label}: support points must be integers") from None
        if not (np.all(np.isfinite(k_f)) and np.all(k_f == np.round(k_f))) or np.any(np.abs(k_f) > 2**52):
            _fail(f"input pmf {label}: support points must be integers")
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
        raise SpecError(f"input spec {spec!r}: {what} must be a number, got {text!r}") from None
    if not math.isfinite(x):
        raise SpecError(f"input spec {spec!r}: {what} must be finite, got {text!r}")
    return x


def _int(text: str, what: str, spec: str) -> int:
    x = _num(text, what, spec)
    if x != int(x) or abs(x) > 2**52:
        raise SpecError(f"input spec {spec!r}: {what} must be an integer, got {text!r}")
    return int(x)


def _range(fields: list[str], spec: str) -> tuple[int, int]:
    lo, hi = _int(fields[0], "LO", spec), _int(fields[1], "HI", spec)
    if lo > hi:
        raise SpecError(f"input spec {spec!r}: LO = {lo} > HI = {hi}")
    if hi - lo + 1 > MAX_SUPPORT:
        raise SpecError(f"input spec {spec!r}: range LO..HI has more than {MAX_SUPPORT} points")
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
        raise SpecError(f"input spec must be a non-empty string, got {spec!r}")
    parts = [s.strip() for s in spec.strip().split(":")]
    family = parts[0].lower()
    if family not in _FIELDS:
        raise SpecError(f"input spec {spec!r}: unknown family {parts[0]!r} (poisson, gaussian, uniform)")
    fields = parts[1:]
    if len(fields) != _FIELDS[family]:
        usage = {"poisson": "poisson:RATE:LO:HI", "gaussian": "gaussian:MU:SIGMA:LO:HI", "uniform": "uniform:LO:HI"}
        raise SpecError(f"input spec {spec!r}: expected {usage[family]} ({_FIELDS[family]} fields, got {len(fields)})")
    if family == "uniform":
        lo, hi = _range(fields, spec)
        k = np.arange(lo, hi + 1)
        return InputPMF(k, np.full(len(k), 1.0 / len(k)), spec)
    if family == "poisson":
        rate = _num(fields[0], "RATE", spec)
        if not rate > 0:
            raise SpecError(f"input spec {spec!r}: RATE must be > 0, got {fields[0]!r}")
        lo, hi = _range(fields[1:], spec)
        if hi < 0:
            raise SpecError(f"input spec {spec!r}: the Poisson law has no mass on {lo}..{hi}")
        k = np.arange(max(lo, 0), hi + 1)
        logp = stats.poisson.logpmf(k, rate)
        p = np.exp(logp - np.max(logp))
    else:
        mu, sigma = _num(fields[0], "MU", spec), _num(fields[1], "SIGMA", spec)
        if not sigma > 0:
            raise SpecError(f"input spec {spec!r}: SIGMA must be > 0, got {fields[1]!r}")
        lo, hi = _range(fields[2:], spec)
        k = np.arange(lo, hi + 1)
        a, b = (k - mu) / sigma, (k + 1 - mu) / sigma
        # ∫_k^{k+1}: difference of the cdf on the left half, of the survival function on the right
        p = np.where(b <= 0, special.ndtr(b) - special.ndtr(a), special.ndtr(-a) - special.ndtr(-b))
        p = np.maximum(p, 0.0)
    total = math.fsum(p)
    if not total > 0 or not math.isfinite(total):
        raise SpecError(f"input spec {spec!r}: no representable mass on {lo}..{hi}")
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
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise SpecError(f"cannot read input pmf {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"cannot read input pmf {str(path)!r}: not UTF-8 text ({exc.reason})") from None
    rows = list(csv.reader(line for line in text.splitlines() if line.strip()))
    if not rows or [c.strip().lower() for c in rows[0]] != ["k", "p"]:
        raise SpecError(f"input pmf {path.name}: the first line must be the header 'k,p'")
    ks, ps = [], []
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != 2:
            raise SpecError(f"input pmf {path.name}, line {i}: expected two fields k,p")
        try:
            kf = float(row[0])
        except ValueError:
            raise SpecError(f"input pmf {path.name}, line {i}: k must be an integer, got {row[0].strip()!r}") from None
        if not (math.isfinite(kf) and kf == int(kf)):
            raise SpecError(f"input pmf {path.name}, line {i}: k must be an integer, got {row[0].strip()!r}")
        try:
            pf = float(row[1])
        except ValueError:
            raise SpecError(f"input pmf {path.name}, line {i}: p must be a number, got {row[1].strip()!r}") from None
        ks.append(int(kf))
        ps.append(pf)
    if not ks:
        raise SpecError(f"input pmf {path.name}: no data rows")
    return input_from_arrays(np.array(ks, dtype=np.int64), np.array(ps), path.name)
