"""Shared helpers for the optmech benchmarks: isolated runs, tables, JSON output, metadata.

Every benchmark case runs in a fresh child process (``multiprocessing`` with the ``spawn``
start method) so that a case which hangs, exhausts memory or ignores its time limit is killed
after a hard deadline and reported, instead of stopping the whole run.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import multiprocessing as mp
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
REPO_ROOT = BENCH_DIR.parent

#: The asymmetric cost used by the benchmarks: x for x > 0 and 2|x| for x < 0.
ASYMMETRIC_COST = "where(x > 0, x, 2*abs(x))"


# -- isolated execution ------------------------------------------------------------------------


def _child(conn: Any, fn: Callable[..., dict], kwargs: dict) -> None:
    """Run ``fn(**kwargs)`` and send ``{"ok": True, ...}`` or the exception back through ``conn``."""
    try:
        out = fn(**kwargs)
        conn.send({"ok": True, **out})
    except BaseException as exc:  # noqa: BLE001 - everything is reported, nothing escapes
        conn.send({
            "ok": False,
            "error_type": type(exc).__name__,
            "error": str(exc),
            "traceback": traceback.format_exc(limit=8),
        })
    finally:
        conn.close()


def run_isolated(fn: Callable[..., dict], kwargs: dict, hard_timeout: float) -> dict:
    """Run ``fn(**kwargs)`` in a fresh process; kill it after ``hard_timeout`` seconds.

    ``fn`` must be a module-level function returning a JSON-serialisable dict.  The result is
    that dict with ``ok=True``, or ``ok=False`` with ``error_type``/``error`` (and
    ``error_type="HardTimeout"`` when the child was killed, ``"ChildDied"`` when it exited
    without answering, e.g. killed for memory).  ``wall_s_parent`` is the parent-side wall time,
    process start-up and imports included.
    """
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, kwargs), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    send.close()
    result: dict | None = None
    try:
        if recv.poll(hard_timeout):
            try:
                result = recv.recv()
            except EOFError:
                result = None
        if result is None:
            if proc.is_alive():
                result = {"ok": False, "error_type": "HardTimeout",
                          "error": f"killed after {hard_timeout:.0f} s without an answer"}
            else:
                result = {"ok": False, "error_type": "ChildDied",
                          "error": f"child exited with code {proc.exitcode} without an answer"}
    finally:
        if proc.is_alive():
            proc.kill()  # only the child this function started, by its handle
        proc.join(5)
        recv.close()
    result["wall_s_parent"] = time.perf_counter() - t0
    return result


# -- formatting --------------------------------------------------------------------------------


#: A launcher that runs ``argv[1:]`` as its child and writes ``maxrss KIB`` to stderr last.  On
#: Linux a process's ``ru_maxrss`` survives ``execve`` and starts from the forking process's
#: resident set (with ``vfork``, from its peak), so a child started straight from a large process
#: (a test runner hours into its suite) reports the runner's peak, not its own.  The launcher is
#: a bare interpreter (``-S``, only ``os`` and ``sys``) of about 10 MiB, so what it reports is the
#: child's own peak, as ``/usr/bin/time -v`` run from a shell would report it.
PEAK_LAUNCHER = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "sys.stderr.write('\\nmaxrss %d\\n' % usage.ru_maxrss)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def run_measured(args: Sequence[str], env: dict | None = None, timeout: float = 900.0,
                 cwd: str | os.PathLike | None = None) -> dict:
    """Run ``python ARGS`` in a child (through :data:`PEAK_LAUNCHER`) and return its exit status
    ``rc``, ``wall`` seconds (interpreter start-up included), ``peak_bytes`` (the child's own peak
    resident set), ``stdout`` and ``stderr`` (without the launcher's line).  After ``timeout``
    seconds the child's whole process group is killed (``rc`` is then negative).  ``cwd`` is the
    child's working directory (default: this process's)."""
    import signal
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-S", "-c", PEAK_LAUNCHER, *args], stdout=out, stderr=err,
                             env=env, cwd=cwd, start_new_session=True)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        text, error = out.read().decode(), err.read().decode()
    head, sep, last = error.rstrip("\n").rpartition("\nmaxrss ")
    peak = int(last) * 1024 if sep and last.isdigit() else 0
    return {"rc": p.returncode, "wall": wall, "peak_bytes": peak, "stdout": text,
            "stderr": head if sep else error}


def fmt(x: Any, spec: str = ".4g") -> str:
    """Format a number for a table; ``None``/NaN as ``—``, other objects with ``str``."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return "—" if math.isnan(x) else format(x, spec)
    return str(x)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table with columns padded for reading in a terminal."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])


def short_error(res: dict, limit: int = 160) -> str:
    """``ErrorType: message`` cut to ``limit`` characters, for a table cell."""
    text = f"{res.get('error_type', 'Error')}: {res.get('error', '')}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- results -----------------------------------------------------------------------------------


def rel_distance_to_bracket(value: float, lower: float, upper: float) -> tuple[float, str]:
    """Distance of ``value`` to ``[lower, upper]`` relative to ``|upper|``, and the side.

    The side is ``"inside"`` (distance 0), ``"below"`` (under the certified lower bound: the
    value cannot be the optimum of the true problem) or ``"above"``.
    """
    if not all(math.isfinite(v) for v in (value, lower, upper)):
        return math.nan, "n/a"
    scale = abs(upper) if upper != 0 else 1.0
    if value < lower:
        return (lower - value) / scale, "below"
    if value > upper:
        return (value - upper) / scale, "above"
    return 0.0, "inside"


def json_safe(obj: Any) -> Any:
    """Recursively replace non-finite floats by strings (``"inf"``, ``"-inf"``, ``"nan"``)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def metadata() -> dict:
    """Machine, versions and the repository commit, for the JSON files."""
    versions: dict[str, str | None] = {}
    try:
        import importlib.metadata as im

        for pkg in ("optmech", "numpy", "scipy", "highspy", "cvxpy"):
            try:
                versions[pkg] = im.version(pkg)
            except im.PackageNotFoundError:
                versions[pkg] = None
    except Exception:  # noqa: BLE001
        pass
    commit = None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip() or None
    except Exception:  # noqa: BLE001
        pass
    return {
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average_1_5_15": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "versions": versions,
        "git_commit": commit,
        "argv": sys.argv,
    }


def write_json(path: Path, payload: dict) -> Path:
    """Write ``payload`` (plus metadata) as indented JSON, creating the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"metadata": metadata(), **payload}
    path.write_text(json.dumps(json_safe(doc), indent=2) + "\n")
    return path


def read_json(path: Path) -> dict:
    """What ``path`` already holds (empty when absent or unreadable): an earlier run's results."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _first_key(d: Any, *keys: str) -> Any:
    """The first of ``keys`` present (and not None) in the dict ``d``; the Result layout is in flux."""
    if not isinstance(d, dict):
        return None
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return None


def result_summary(r: Any) -> dict:
    """The compact, JSON-ready part of an ``optmech`` Result that the benchmarks report."""
    return {
        "lower_bound": float(r.lower_bound),
        "upper_bound": float(r.upper_bound),
        "relative_gap": float(r.relative_gap),
        "certified": bool(r.certified),
        "status": r.status,
        "message": r.message,
        "seconds": float(r.seconds),
        "lp": dict(r.lp),
        "window": list(r.truncation.get("window", [])) if isinstance(r.truncation, dict) else None,
        "steps_per_period": _first_key(r.truncation, "steps_per_period", "period_steps"),
        "cells_per_period": _first_key(r.problem, "cells_per_period", "resolution"),
        "refinements": len(r.history),
    }


def highs_solve_csc(A: Any, c: Any, col_lower: Any, col_upper: Any, row_lower: Any, row_upper: Any,
                    time_limit: float) -> Any:
    """Solve ``min c·x, row_lower <= A x <= row_upper, col_lower <= x <= col_upper`` (A a scipy CSC
    matrix) with HiGHS's defaults, quietly (the banner of the first ``Highs()`` stays off the
    table); returns the ``highspy.Highs`` object for its status and objective.  The naive
    baselines' solve."""
    import highspy

    from optmech.solvers.console import solver_console

    with solver_console():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
    lp.col_cost_ = c
    lp.col_lower_, lp.col_upper_ = col_lower, col_upper
    lp.row_lower_, lp.row_upper_ = row_lower, row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    h.passModel(lp)
    with solver_console():
        h.run()
    return h
