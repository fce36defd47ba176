"""Local worker processes that never outlive their parent, and that work from any script.

:func:`process_pool` is the ``spawn`` process pool that sweeps and tables use (a
:class:`WorkerPool`).  Three properties matter to a user at a terminal or in a notebook:

* **Workers never outlive their parent.**  Each worker runs :func:`init_worker`: a daemon thread
  polls the parent's process id and ends the worker at once (``os._exit``) when the parent is
  gone, however it ended (SIGKILL included, where no cleanup of the parent can run).
* **Signals are the parent's business.**  Workers ignore SIGINT and SIGTERM, so a Ctrl-C at the
  terminal (delivered to the whole process group) or a SIGTERM sent to the group does not throw
  away the problems in flight: the parent decides whether to wait for them (the sweeps' grace
  period) or to end them with :meth:`WorkerPool.terminate` (SIGKILL).
* **No ``if __name__ == "__main__"`` guard needed.**  ``spawn`` normally re-runs the caller's main
  script in every worker, so a plain script that calls :func:`optmech.table.build_table` at top
  level would start pools recursively and fail with ``BrokenProcessPool``.  The workers here only
  run optmech's own functions, so they are started without importing the caller's ``__main__``
  (see :class:`LibraryProcess`); guarded scripts, ``python -c``, notebooks and ``python -m`` all
  behave alike.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.context
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Iterator

__all__ = ["process_pool", "WorkerPool", "watch_parent", "PARENT_POLL_SECONDS"]

#: How often a worker checks that its parent is alive (seconds).
PARENT_POLL_SECONDS = 0.5


def watch_parent(parent_pid: int, interval: float = PARENT_POLL_SECONDS) -> None:
    """Exit this process as soon as ``parent_pid`` is no longer its parent (a daemon thread polls).

    >>> import os
    >>> watch_parent(os.getppid(), interval=60)  # this process's parent is alive: nothing happens
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="optmech-parent-watch", daemon=True).start()


def init_worker(parent_pid: int) -> None:
    """Worker initializer: ignore SIGINT and SIGTERM (the parent decides), and exit with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    watch_parent(parent_pid)


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """While a worker is launched, make ``__main__`` look like an interactive session (no file, no
    spec), so ``spawn`` does not re-run the caller's script in the worker."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    missing = object()
    saved_file = main.__dict__.pop("__file__", missing)
    saved_spec = main.__dict__.get("__spec__", missing)
    if saved_spec is not missing:
        main.__spec__ = None
    try:
        yield
    finally:
        if saved_file is not missing:
            main.__file__ = saved_file
        if saved_spec is not missing:
            main.__spec__ = saved_spec


class LibraryProcess(multiprocessing.context.SpawnProcess):
    """A ``spawn`` process that does not import the caller's ``__main__`` (module docstring).

    Only functions importable from optmech may be sent to it, which is all the pools here do.
    """

    @staticmethod
    def _Popen(process_obj):  # noqa: N802 - the multiprocessing hook's name
        with _main_module_hidden():
            return multiprocessing.context.SpawnProcess._Popen(process_obj)


class LibraryContext(multiprocessing.context.SpawnContext):
    """The ``spawn`` context whose processes are :class:`LibraryProcess`."""

    Process = LibraryProcess


class WorkerPool(ProcessPoolExecutor):
    """A process pool with :meth:`terminate`; leaving its ``with`` block by an exception (Ctrl-C
    included) ends the workers at once instead of waiting for the tasks they are running.

    >>> import time
    >>> with process_pool(1) as pool:
    ...     slow = pool.submit(time.sleep, 600)
    ...     pool.terminate()  # the sleeping worker is killed, not waited for
    >>> type(slow.exception(timeout=30)).__name__
    'BrokenProcessPool'
    """

    def terminate(self) -> None:
        """Cancel what has not started and kill the workers (SIGKILL): their tasks are abandoned."""
        kill = getattr(ProcessPoolExecutor, "kill_workers", None)  # Python >= 3.14
        if kill is not None:
            kill(self)
            return
        procs = list((getattr(self, "_processes", None) or {}).values())
        self.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            with contextlib.suppress(Exception):
                p.kill()
        for p in procs:
            with contextlib.suppress(Exception):
                p.join(5)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.terminate()
            return False
        return super().__exit__(exc_type, exc, tb)


def process_pool(workers: int) -> WorkerPool:
    """A ``spawn`` pool of ``workers`` processes: they exit with this process, ignore the terminal's
    signals, and do not re-run the caller's script (module docstring).

    >>> with process_pool(1) as pool:
    ...     pool.submit(abs, -3).result()
    3
    """
    return WorkerPool(max_workers=workers, mp_context=LibraryContext(), initializer=init_worker,
                      initargs=(os.getpid(),))
