"""The family protocol: what a problem family supplies to the one solve loop (:mod:`optmech.drive`).

A family turns a :class:`~optmech.spec.Problem` into a sequence of LPs of growing size or
resolution, and each LP's solution into a certified upper bound.  The driver owns everything
else: the time and memory budgets, solver failures, the stop rules, the best bracket, the
history, the references' comparison with the bracket and the :class:`~optmech.result.Result`.

A family object is made per solve, ``Family(problem, context)``, so it may keep state between
steps (the first upper bound, a refined grid, the widening history).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from optmech.certify import LowerCertificate, dual_lower_bound
from optmech.lp import LinearProgram


@dataclass
class Context:
    """What the driver lends a family: the solver profile and the clock.

    ``solve_lp(lp, share=1.0)`` solves an LP with at most ``share`` of the time left after
    ``reserve`` (the seconds the loop keeps for certifying the step and reporting; none left: it
    fails at once) and raises :class:`~optmech.errors.SolveFailed` on failure.
    """

    profile: Any
    time_limit: float
    t0: float
    solve_lp: Callable[..., Any]
    reserve: float = 0.0

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self) -> float:
        """Seconds left of the time limit (0 once it has passed)."""
        return max(0.0, self.time_limit - self.elapsed())


@dataclass
class Built:
    """One LP and what the family needs to read its solution.

    ``size`` describes the LP's window/resolution for the history (JSON-safe values);
    ``model`` is the builder's own object (e.g. :class:`~optmech.problems.pure.PureLP`).
    """

    lp: LinearProgram
    size: dict
    model: Any
    builder: str


@dataclass
class Step:
    """What one LP gave: its lower certificate, its upper bound and the family's diagnostics."""

    iteration: int
    built: Built
    raw: Any
    lower: LowerCertificate
    upper: Any
    gap: float
    seconds: float
    diagnostics: dict = field(default_factory=dict)


@dataclass
class Stop:
    """The family's answer when no further step can help (or none is needed).

    ``status`` overrides the driver's default (``gap_not_reached``); ``lower`` is an extra certified
    lower bound (e.g. the cost's proven floor when V* is an infimum at infinity).
    """

    message: str
    status: str | None = None
    lower: float | None = None


class UpperBound(Protocol):
    """A certified upper bound: the audited mechanism's outward-rounded cost."""

    value: float
    certified: bool


class Family(Protocol):
    """One problem family behind the driver (see the module docstring and docs/how-it-works.md).

    Sizes are opaque to the driver except through :meth:`estimate_bytes`.
    """

    name: str
    #: Upper limit on the number of LPs one solve may use.
    max_steps: int

    def start(self) -> Any | Stop:
        """The first size (window, half-width, resolution), or a :class:`Stop` when the answer needs
        no LP (then :meth:`initial_uppers` holds its upper bound)."""

    def initial_uppers(self) -> list:
        """Certified upper bounds known before any LP (closed forms, far-centred noise)."""

    def estimate_bytes(self, size: Any) -> float:
        """Peak resident set of the process (imports included) while it builds, solves and certifies
        the LP of ``size``: :meth:`optmech.budget.LPPlan.peak_bytes` of :meth:`plan`."""

    def plan(self, size: Any) -> Any:
        """Optional: the LP of ``size`` before it is built, an :class:`optmech.budget.LPPlan` (the builder
        :meth:`build` will use, rows, columns, nonzeros, memory beside the LP, predicted seconds);
        the loop's time checks use it (a family without it is timed from its measured steps only)."""

    def initial_lower(self) -> float:
        """Optional: a certified lower bound known before the family's LPs (e.g. a theorem's bound
        from another problem); the bracket's lower end is the best of it and the LPs'."""

    def fallback_lower(self) -> tuple[float, str]:
        """Optional: a certified lower bound that needs no LP and what it is, returned with the first
        upper bound when the first LP does not fit in the time limit."""

    def final_lower(self, seconds: float, gap: float) -> float | None:
        """Optional: a certified lower bound computed after the LPs within ``seconds`` (the time left less
        :data:`optmech.budget.FINAL_SECONDS`), when the bracket's relative ``gap`` misses its target; None when none."""

    def final_seconds(self) -> float:
        """Optional: the seconds the family's :meth:`final_lower`, :meth:`references` and :meth:`report` need
        after the last solve, when more than :data:`optmech.budget.FINAL_SECONDS` (the loop keeps the larger
        back from the LPs' time)."""

    def size_message(self, size: Any, need: float, budget: float) -> str:
        """The one-line error when even the first LP is over the memory budget."""

    def build(self, size: Any) -> Built:
        """The LP of ``size``."""

    def lower(self, built: Built, raw: Any) -> LowerCertificate:
        """The certified lower bound of one LP (default: the repaired dual, :func:`default_lower`)."""

    def upper(self, built: Built, raw: Any) -> UpperBound:
        """The certified upper bound of one LP's solution (audit + outward-rounded cost)."""

    def extra_uppers(self, step: Step) -> list:
        """More certified upper bounds derived from a step (e.g. shifted copies)."""

    def diagnostics(self, built: Built, raw: Any, upper: Any) -> dict:
        """Family-specific numbers for the history (e.g. the mass outside the window)."""

    def grow(self, step: Step, best: Any) -> Any | Stop:
        """The next size, or :class:`Stop` with the reason no step can help."""

    def references(self, lower: float, upper: float) -> list:
        """Closed forms and theorem bounds: :class:`~optmech.result.ReferenceValue` items (their
        ``inside_bracket`` is recomputed by the driver with one tolerance)."""

    def report(self, best: Any, last: Step | None, status: str) -> dict:
        """The family's part of the Result: ``mechanism`` (a library Mechanism), ``audit``,
        ``truncation``, ``claims``, ``lp`` extras and ``problem`` extras."""


def default_lower(built: Built, raw: Any) -> LowerCertificate:
    """The shared lower bound: the repaired dual of the relaxation LP (:func:`optmech.certify.dual_lower_bound`)."""
    return dual_lower_bound(built.lp, raw.row_dual, raw.objective)


def json_float(x: float | None) -> float | None:
    """A float for the history (None for NaN)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(x)
