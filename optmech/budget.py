"""The time and memory budgets every solve loop shares.

``DEFAULT_TIME_LIMIT`` is the wall-clock budget of a solve when the caller gives none;
:func:`memory_budget` is the memory one LP may use (``OPTMECH_MAX_MEMORY_GB``, default
``DEFAULT_MEMORY_GB``).  A module of its own so that every family's loop can import it without
importing the driver (:mod:`optmech.drive`).
"""

from __future__ import annotations

import os

from optmech.errors import SpecError

#: Default memory budget for one LP (bytes); override with OPTMECH_MAX_MEMORY_GB.
DEFAULT_MEMORY_GB = 8.0
#: Wall-clock budget of a solve when the caller gives none (seconds), the same for every family.
DEFAULT_TIME_LIMIT = 300.0
#: Bytes per LP nonzero and per row or column that HiGHS needs, a conservative estimate [measured]:
#: every family's size estimate uses these.
BYTES_PER_NNZ = 160
BYTES_PER_LINE = 200


def memory_budget() -> float:
    """The memory one LP may use, in bytes (``OPTMECH_MAX_MEMORY_GB`` GiB, default 8)."""
    try:
        gb = float(os.environ.get("OPTMECH_MAX_MEMORY_GB", DEFAULT_MEMORY_GB))
    except ValueError:
        raise SpecError("OPTMECH_MAX_MEMORY_GB must be a number") from None
    return gb * 2**30
