"""Exceptions raised by optmech.

Every error a user can cause derives from :class:`OptmechError`; the CLI turns it into a
one-line message and a nonzero exit status.
"""

from __future__ import annotations


class OptmechError(Exception):
    """Base class of all optmech errors."""


class SpecError(OptmechError, ValueError):
    """An invalid problem specification (bad ε, Δ, resolution, cost, ...)."""


class CostError(SpecError):
    """A cost expression that is malformed, unsafe, or not a valid nonnegative cost."""


class ProblemTooLarge(SpecError):
    """A problem whose estimated memory or size exceeds the configured limits."""


class SolverUnavailable(OptmechError, ImportError):
    """A requested solver backend is not installed."""


class SolveFailed(OptmechError):
    """Every solver option in the profile failed to produce an optimal solution."""


class CertificationError(OptmechError):
    """A certificate could not be established."""


class Interrupted(KeyboardInterrupt):
    """A signal (SIGINT, SIGTERM, SIGHUP) stopped a command that cleans up after itself.

    It derives from :class:`KeyboardInterrupt`, so ``except Exception`` does not swallow it and
    cleanup written for Ctrl-C runs unchanged; the CLI exits with 128 + ``signum``.
    """

    def __init__(self, signum: int, message: str = ""):
        super().__init__(message)
        self.signum = int(signum)
