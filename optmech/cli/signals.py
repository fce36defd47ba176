"""Signals during a solve: SIGINT, SIGTERM and SIGHUP raise :class:`~optmech.errors.Interrupted`.

Python turns only SIGINT into an exception (KeyboardInterrupt); SIGTERM and SIGHUP end the process
at once, losing the bracket found so far.  Inside :class:`InterruptOnSignals` each of the three
raises :class:`~optmech.errors.Interrupted` (a KeyboardInterrupt carrying the signal's number)
in the main thread; the solver backends pass it on within about 0.05 s (HiGHS's solve is
cancelled, :func:`optmech.solvers.highs.run_interruptibly`), and the solve loop ends with the best
certified bracket it has (status ``interrupted``, :func:`optmech.loop.run`).  The command prints
it and exits with 128 + the signal (130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from optmech.errors import Interrupted

#: The signals a solve answers with its bracket.
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


#: seconds after which a signal that arrived inside an import is raised again (SIGALRM)
DEFER_SECONDS = 0.05


def _inside_import(frame: Any) -> bool:
    """Whether ``frame`` (where the signal handler was called) runs inside Python's import machinery."""
    while frame is not None:
        if "importlib._bootstrap" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def preload_extensions() -> None:
    """Import the compiled modules a solve loads on first use (scipy's sparse matrices, special functions,
    filters and root finders; the library imports them lazily so that commands which solve nothing start fast).
    Called before the handlers go in: a signal raised inside an extension module's initialisation surfaces as
    ``ImportError: initialization failed``, not as the interrupt, and the bracket found so far would be lost."""
    import scipy.ndimage  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.sparse  # noqa: F401
    import scipy.special  # noqa: F401


class InterruptOnSignals:
    """While active, the first of SIGINT/SIGTERM/SIGHUP raises :class:`Interrupted`; ``signum`` keeps it.

    A second signal also raises (so a second Ctrl-C cuts the report short, with the CLI's one line
    ``optmech: interrupted``).  Signals that were ignored (``nohup``, a background job) stay ignored;
    outside the main thread nothing is installed.  A signal that lands inside an import (a module a solve
    loads on first use) is raised again ``DEFER_SECONDS`` later from SIGALRM: raised there, it would be
    reported as "Exception ignored" and lost, and the solve would run on to its time limit.

    >>> with InterruptOnSignals() as sig:
    ...     pass
    >>> sig.signum is None
    True
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.saved: dict[int, Any] = {}
        self.pending: int | None = None
        self.can_defer = False

    def __call__(self, signum: int, frame: Any = None) -> None:
        if self.signum is None:
            self.signum = int(signum)
        if self.can_defer and _inside_import(frame):
            # an exception raised here would be lost ("Exception ignored in ... _get_module_lock"), and the solve
            # would run on: the signal is raised again from SIGALRM once the import has had DEFER_SECONDS
            self.pending = int(signum)
            signal.setitimer(signal.ITIMER_REAL, DEFER_SECONDS)
            return
        raise Interrupted(signum)

    def _again(self, signum: int, frame: Any = None) -> None:
        pending, self.pending = self.pending, None
        if pending is not None:
            self(pending, frame)

    def __enter__(self) -> "InterruptOnSignals":
        preload_extensions()
        if threading.current_thread() is threading.main_thread():
            for name in SIGNALS:
                s = getattr(signal, name, None)
                if s is not None and signal.getsignal(s) is not signal.SIG_IGN:
                    self.saved[s] = signal.signal(s, self)
            if self.saved and hasattr(signal, "setitimer"):
                self.saved[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._again)
                self.can_defer = True
        return self

    def __exit__(self, *exc: Any) -> bool:
        if self.can_defer:
            signal.setitimer(signal.ITIMER_REAL, 0.0)
            self.can_defer, self.pending = False, None
        for s, h in self.saved.items():
            signal.signal(s, h)
        self.saved.clear()
        return False


__all__ = ["InterruptOnSignals", "SIGNALS", "preload_extensions"]
