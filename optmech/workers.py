"""Local worker processes that never outlive their parent.

:func:`process_pool` is the ``spawn`` :class:`~concurrent.futures.ProcessPoolExecutor` that sweeps
and tables use.  Each worker runs :func:`watch_parent` as its initializer: a daemon thread that
polls the parent's process id and ends the worker at once (``os._exit``) when the parent is gone,
however it ended (SIGKILL included, where no cleanup of the parent can run).  A worker orphaned
mid-solve would otherwise keep computing at full CPU until its LP finished.
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["process_pool", "watch_parent", "PARENT_POLL_SECONDS"]

#: How often a worker checks that its parent is alive (seconds).
PARENT_POLL_SECONDS = 0.5


def watch_parent(parent_pid: int, interval: float = PARENT_POLL_SECONDS) -> None:
    """Worker initializer: exit this process as soon as ``parent_pid`` is no longer its parent."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="optmech-parent-watch", daemon=True).start()


def process_pool(workers: int):
    """A ``spawn`` process pool of ``workers`` processes whose workers exit when this process dies."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=watch_parent, initargs=(os.getpid(),))
