"""The time and memory budgets every solve loop shares: what a promise of "at most T seconds and
M GiB" is made of.

``DEFAULT_TIME_LIMIT`` is the wall-clock budget of a solve when the caller gives none;
:func:`memory_budget` is the memory the process may use (``OPTMECH_MAX_MEMORY_GB``, default
``DEFAULT_MEMORY_GB``).  A module of its own so that every family's loop can import it without
importing the driver (:mod:`optmech.drive`).

Memory.  A family describes each LP before building it as an :class:`LPPlan` (rows, columns,
nonzeros, the builder that will build it, and any memory beside the LP); :meth:`LPPlan.peak_bytes`
is the estimated peak resident set of the whole process for that step: ``BASELINE_BYTES`` (the
interpreter, numpy, scipy, highspy and optmech, imported) plus ``BYTES_PER_NNZ`` per nonzero and
``BYTES_PER_LINE`` per row or column (the builder's arrays, their CSC copy, highspy's copy, HiGHS's
scaled copy, row-wise copy, LU factors and update etas, which grow with the simplex iterations),
plus the plan's ``extra_bytes``.  The constants are fitted to measured peaks
(``benchmarks/bench_budgets.py``: peak RSS of ``optmech solve`` in a child process minus the
baseline, against rows + columns and nonzeros, for every family) with a margin of at least 1.2 over
the worst measured ratio.

Time.  The loop (:mod:`optmech.loop`) starts a step only when its predicted build, solver start-up
(:data:`HIGHS_SETUP_SECONDS_PER_LINE`: HiGHS reads its clock only once its first simplex iteration
starts) and certification fit in what is left of the limit, and gives the solver what remains
after the certification's share; predictions come from the family's :class:`LPPlan` for the first
step and from the measured previous step afterwards (:class:`Pace`).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from optmech.errors import SolveFailed, SpecError

#: Default memory budget of a solve, the process's peak resident set (bytes: GiB × 2^30); override
#: with OPTMECH_MAX_MEMORY_GB.
DEFAULT_MEMORY_GB = 8.0
#: Wall-clock budget of a solve when the caller gives none (seconds), the same for every family.
DEFAULT_TIME_LIMIT = 300.0

#: Resident set of a process that has imported everything a solve needs and solved a tiny problem
#: (62–69 MiB measured for every family, 109 MiB for Wasserstein with its references), rounded up.
BASELINE_BYTES = 128 * 2**20
#: Bytes per LP nonzero and per row or column at the peak of building, solving (HiGHS) and
#: certifying one LP [measured, benchmarks/bench_budgets.py]: HiGHS's scaled and row-wise copies,
#: LU factors and update etas beside the builder's arrays, at most 1.5 KB per line with 2.5
#: nonzeros per line measured (Lipschitz chain LPs, 114k and 456k lines).  The factors grow with
#: the simplex iterations, so the peak depends on the path.  The default for builders not in
#: ``LP_BYTES``.
BYTES_PER_NNZ = 1000
BYTES_PER_LINE = 2500
#: (bytes per nonzero, bytes per line) by builder, matched by name prefix: at most 1.2 KB per line
#: with 1.6–2 nonzeros per line measured for the (ε, δ) hockey-stick LPs (Δ = 30, 60), the
#: d-dimensional lattice LPs (d = 2, 5) and the W1 LPs.  The general 1-D builder's LU fill grows
#: with the window times the period as well (its own term, :data:`optmech.families.pure1d.FILL_BYTES`).
LP_BYTES = {"hockey_stick": (500, 1000), "lattice_nd": (500, 1000), "cells_nd": (500, 1000),
            "shells_nd": (500, 1000), "wasserstein": (500, 1000), "relaxed_lp": (500, 1000),
            "general": (1000, 1500)}

#: Seconds per LP row or column that HiGHS spends before it first looks at its clock (our model
#: copy, then HiGHS's scaling, crash and first factorisation): 1.7–3.9 µs measured up to 3.5M
#: lines; so a solve given t seconds may take max(t, this × lines).
HIGHS_SETUP_SECONDS_PER_LINE = 5e-6
#: Generic build and certification rates (seconds per row, column or nonzero) for a family that
#: does not predict its own: at most 0.17 and 0.13 µs measured ((ε, δ), d-D lattice, W1 LPs);
#: measured rates replace them after the first step.
BUILD_SECONDS_PER_UNIT = 5e-7
CERTIFY_SECONDS_PER_UNIT = 1e-6
#: Time kept back for what follows the last solve (the family's report, the references, the
#: Result): at least this much, or the family's own prediction.
FINAL_SECONDS = 0.5
#: A step's predicted seconds are multiplied by this before they are compared with the time left.
TIME_SAFETY = 1.5


def memory_budget() -> float:
    """The memory a solve may use, in bytes (``OPTMECH_MAX_MEMORY_GB`` GiB, default 8)."""
    try:
        gb = float(os.environ.get("OPTMECH_MAX_MEMORY_GB", DEFAULT_MEMORY_GB))
    except ValueError:
        raise SpecError("OPTMECH_MAX_MEMORY_GB must be a number") from None
    return gb * 2**30


def lp_bytes(rows: float, cols: float, nonzeros: float, builder: str = "") -> float:
    """Bytes one LP of this shape needs at its peak, beyond the baseline (module docstring)."""
    per_nnz, per_line = next((v for k, v in LP_BYTES.items() if builder.startswith(k)), (BYTES_PER_NNZ, BYTES_PER_LINE))
    return per_nnz * float(nonzeros) + per_line * (float(rows) + float(cols))


@dataclass(frozen=True)
class LPPlan:
    """One step's LP, described before it is built: its shape, the builder that will build it,
    the memory beside it, and (optionally) the family's own time predictions.

    ``solver="chain"`` marks an LP the exact O(W) chain backend solves, ``solver="hockey_ipm"`` one the
    structured interior point solves (neither has HiGHS's start-up);
    ``lp_bytes`` overrides :func:`lp_bytes` for such LPs.  ``build_seconds``/``certify_seconds``
    are the family's predictions for building the LP and certifying its solution (``None``: the
    generic rates of this module).  ``growth`` is the exponent by which the measured build and
    certification seconds of an earlier step scale with the work ratio (``None``: :attr:`Pace.GROWTH`).
    """

    rows: int
    cols: int
    nonzeros: int
    builder: str
    extra_bytes: float = 0.0
    solver: str = "highs"
    lp_bytes: float | None = None
    build_seconds: float | None = None
    certify_seconds: float | None = None
    lps: int = 1  # LPs solved per step (a second one inside the certification: the first gets 1/lps of the time)
    growth: float | None = None

    @property
    def lines(self) -> int:
        return int(self.rows) + int(self.cols)

    @property
    def work(self) -> float:
        """Rows + columns + nonzeros: the unit the measured rates scale with."""
        return float(self.lines + int(self.nonzeros))

    def peak_bytes(self) -> float:
        """Estimated peak resident set of the process for this step (baseline included; a second LP
        solved inside the certification is in ``extra_bytes``)."""
        lp = self.lp_bytes if self.lp_bytes is not None else lp_bytes(self.rows, self.cols, self.nonzeros, self.builder)
        return BASELINE_BYTES + lp + float(self.extra_bytes)

    def setup_seconds(self) -> float:
        """Seconds the solver may run before it reads its clock (0 for the chain backend)."""
        return 0.0 if self.solver in ("chain", "hockey_ipm") else HIGHS_SETUP_SECONDS_PER_LINE * self.lines

    def to_dict(self) -> dict:
        return {"rows": int(self.rows), "cols": int(self.cols), "nonzeros": int(self.nonzeros),
                "builder": self.builder, "peak_bytes": float(self.peak_bytes())}


def gib(x: float) -> str:
    """Bytes as GiB for messages (two significant figures below 1 GiB)."""
    g = x / 2**30
    return f"{g:.2g}" if g < 1 else f"{g:.1f}"


@dataclass
class Prediction:
    """Predicted seconds of one step's phases (already multiplied by ``TIME_SAFETY``)."""

    build: float
    setup: float
    certify: float
    final: float

    @property
    def total(self) -> float:
        return self.build + 2.0 * self.setup + self.certify + self.final


class Pace:
    """Seconds per unit of work (:attr:`LPPlan.work`) of building and certifying, measured on the
    steps run so far; predictions for a larger LP scale them by (work ratio)^``GROWTH``."""

    GROWTH = 1.25

    def __init__(self) -> None:
        self.build: tuple[float, float] | None = None  # (seconds, work) of the last step
        self.certify: tuple[float, float] | None = None
        self.certify_lps = 1  # LPs solved in the last step (a second one inside its certification)

    def record(self, plan: LPPlan | None, build_s: float, certify_s: float) -> None:
        if plan is None:
            return
        self.build = (build_s, plan.work)
        self.certify = (certify_s, plan.work)
        self.certify_lps = plan.lps

    def _scaled(self, measured: tuple[float, float] | None, work: float, growth: float | None = None) -> float | None:
        if measured is None:
            return None
        s, w = measured
        ratio = max(work / max(w, 1.0), 1.0)
        return s * ratio ** (self.GROWTH if growth is None else growth)

    def predict(self, plan: LPPlan | None, final: float) -> Prediction:
        if plan is None:
            return Prediction(0.0, 0.0, 0.0, final)
        b = self._scaled(self.build, plan.work, plan.growth)
        # a certification that solved a second LP does not predict one that solves none
        c = self._scaled(self.certify, plan.work, plan.growth) if plan.lps >= self.certify_lps else None
        if b is None:
            b = plan.build_seconds if plan.build_seconds is not None else BUILD_SECONDS_PER_UNIT * plan.work
        if c is None:
            c = plan.certify_seconds if plan.certify_seconds is not None else CERTIFY_SECONDS_PER_UNIT * plan.work
        return Prediction(TIME_SAFETY * b, TIME_SAFETY * plan.setup_seconds(), TIME_SAFETY * c, final)


class TimeLimitReached(SolveFailed):
    """The time limit leaves no room for the work a result needs (a :class:`SolveFailed`: exit status 4
    at the command line).  Its message starts with ``time_limit``."""


def out_of_time(limit: float, reason: str) -> TimeLimitReached:
    """The one-line error for work that cannot fit in what is left of the limit (``reason`` says what)."""
    return TimeLimitReached(
        f"time_limit: {reason} (the limit is {limit:g} s); raise --time-limit (time_limit=), or make the problem "
        "smaller (sensitivity, resolution, dimension) or coarser (--target-gap)")


def now() -> float:
    return time.perf_counter()


def margin_seconds(limit: float) -> float:
    """The stated overrun of a solve past its time limit (docs/errors.md, Faults and guarantees): every solve
    returns within ``limit + margin_seconds(limit)`` of its start, measured by
    ``benchmarks/bench_budgets.py`` (interpreter start-up, about 1 s, comes on top at the command line)."""
    return max(1.0, 0.1 * float(limit)) if math.isfinite(limit) else math.inf
