"""Keep solver chatter off standard output, which belongs to the document optmech prints.

Solver libraries write to the process's file descriptor 1 from C/C++, below Python's
``sys.stdout``: highspy 1.16 prints a two-line banner when the first ``Highs()`` object of a
process is created (before any option can be set), and a HiGHS log, when asked for, goes to the
console too.  A ``--json`` document, a CSV table or a store export on standard output would then
start with junk lines.

:func:`solver_console` points file descriptor 1 elsewhere while solver code runs: to
``/dev/null`` (the default), or to standard error when the user asked for the solver's log
(``output_flag = true``, ``verbose = true`` or ``disp = true`` in a solver profile).  It flushes
Python's and C's stdio buffers on the way in and out, so nothing written before is lost and
nothing the solver buffered leaks out afterwards.  It is reentrant and thread-safe (one lock for
the process: file descriptors are process-wide), and it does nothing when file descriptor 1 is
closed or cannot be duplicated.  Every backend wraps its solver calls in it, whatever version of
highspy, scipy or cvxpy is installed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["solver_console", "wants_log"]

_LOCK = threading.RLock()
_depth = 0

#: profile options that ask a backend for its log (HiGHS, scipy's linprog, cvxpy)
LOG_OPTIONS = ("output_flag", "log_to_console", "disp", "verbose")


def wants_log(options: dict[str, Any]) -> bool:
    """Whether a profile's options ask for the solver's log (then it goes to standard error)."""
    return any(_truthy(options.get(name, False)) for name in LOG_OPTIONS)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "on", "yes")
    return bool(value)


def _libc_fflush() -> Any:
    """C's ``fflush``, or None where the C library cannot be loaded."""
    try:
        libc = ctypes.CDLL(None) if os.name == "posix" else ctypes.CDLL(ctypes.util.find_library("c") or "")
        fflush = libc.fflush
    except (OSError, AttributeError, TypeError):
        return None
    fflush.argtypes = [ctypes.c_void_p]
    return fflush


_FFLUSH = _libc_fflush()


def _flush_all() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    if _FFLUSH is not None:
        _FFLUSH(None)  # every C stdio stream: a solver's buffered printf must land where it was aimed


@contextlib.contextmanager
def solver_console(log: bool = False) -> Iterator[None]:
    """Run the body with file descriptor 1 on ``/dev/null`` (``log`` False) or on standard error.

    Nested uses keep the outermost target; concurrent threads share it (the lock is held for the
    whole body, so solver calls from several threads of one process run one at a time).
    """
    global _depth
    with _LOCK:
        if _depth > 0:
            _depth += 1
            try:
                yield
            finally:
                _depth -= 1
            return
        _flush_all()
        try:
            saved = os.dup(1)
        except OSError:  # no file descriptor 1: nothing to protect
            saved = -1
        target = -1
        try:
            if saved >= 0:
                target = 2 if log else os.open(os.devnull, os.O_WRONLY)
                os.dup2(target, 1)
        except OSError:
            target = -1
        _depth = 1
        try:
            yield
        finally:
            _depth = 0
            _flush_all()
            if saved >= 0:
                os.dup2(saved, 1)
                os.close(saved)
            if target > 2:
                os.close(target)
