"""Sweep specs: a TOML file naming one problem or a grid of problems, validated, expanded and run.

Format (every key optional except ``name`` and ``epsilon``, which may sit in ``[problem]``, ``[grid]``
or ``[zip]``)::

    name = "staircase-gain"            # the experiment's name
    description = "free text"
    [problem]                          # fixed parameters of every problem
    privacy = "pure"                   # pure | approx | lipschitz
    domain = "continuous"              # integer | continuous
    cost = "abs"
    sensitivity = 1
    [grid]                             # axes: non-empty lists; the sweep is their product
    epsilon = [0.5, 1.0, 2.0]
    cost = ["abs", "square"]
    [quick]                            # optional: smaller values for some [grid] axes (--quick)
    epsilon = [1.0]
    [reproduce]                        # optional: what `optmech reproduce` reports for this spec
    seed = "000"                       # the paper: "000".."004" (optmech.sources.TAGS), "conjecture" or "comparison"
    item = "Fig. 2.7"                  # the table, figure or statement reproduced
    report = "staircase_gain"          # the report that compares the results with the paper

Parameters: ``privacy``, ``epsilon``, ``delta``, ``sensitivity``, ``domain``, ``resolution``,
``cost``, ``dim``, ``norm``, ``target_gap``, ``utility`` (cost | wasserstein | surrogate),
``input`` (an input spec for the Wasserstein utility) and ``time_limit`` (seconds for that problem's
solve, passed to :func:`optmech.solve`; not a problem parameter).  A parameter may be fixed or swept, not
both.  Unknown keys, wrong types, empty grids, sweeps above :data:`MAX_PROBLEMS` (without
``force``) and any problem that ``optmech solve`` would refuse (:func:`check_problems`: a bad cost
expression, ε ≤ 0, …) are refused with one-line errors, before anything runs or any store is created.

``[zip]`` holds axes stepped together (lists of one length: ``epsilon = [0.1, 0.05]`` and
``delta = [0.1, 0.05]`` give the pairs (0.1, 0.1) and (0.05, 0.05)); the sweep is the product of the
``[grid]`` axes with those rows.  ``[quick]`` may only shorten axes of ``[grid]`` or ``[zip]``
(zipped ones to one common length); ``[reproduce]`` names one of the reports of
:mod:`optmech.reproduce`.
"""

from __future__ import annotations

import itertools
import math
import os
import time
import tomllib
from dataclasses import dataclass, field

from optmech.errors import SpecError

__all__ = ["SweepSpec", "SweepOutcome", "load_spec", "parse_spec", "check_problems", "run_job", "run_sweep",
           "MAX_PROBLEMS", "PARAMETERS", "GRACE_SECONDS"]

#: Largest sweep run without ``--force``.
MAX_PROBLEMS = 500
#: Parameter name -> accepted Python types.
PARAMETERS: dict[str, tuple[type, ...]] = {
    "privacy": (str,), "epsilon": (int, float), "delta": (int, float), "sensitivity": (int, float),
    "domain": (str,), "resolution": (int,), "cost": (str,), "dim": (int,), "norm": (str,),
    "target_gap": (int, float), "utility": (str,), "input": (str,), "time_limit": (int, float),
}
_CHOICES = {"privacy": ("pure", "approx", "lipschitz"), "domain": ("integer", "nonnegative", "continuous"),
            "norm": ("l1", "l2", "linf"), "utility": ("cost", "wasserstein", "surrogate")}
_TOP = {"name", "description", "problem", "grid", "zip", "quick", "reproduce"}
_REPRODUCE = {"seed": str, "item": str, "report": str, "title": str}


@dataclass(frozen=True)
class SweepSpec:
    """A validated spec: its name, and the problems (parameter dicts) in a fixed order.

    >>> spec = parse_spec({"name": "demo", "problem": {"cost": "abs"}, "grid": {"epsilon": [0.5, 1.0]}})
    >>> spec.name, spec.problems
    ('demo', ({'cost': 'abs', 'epsilon': 0.5}, {'cost': 'abs', 'epsilon': 1.0}))
    """

    name: str
    description: str
    problems: tuple[dict, ...]
    #: the ``[reproduce]`` table ({} for a plain sweep)
    reproduce: dict = field(default_factory=dict)


def _check_value(where: str, key: str, v) -> None:
    types = PARAMETERS[key]
    if isinstance(v, bool) or not isinstance(v, types):
        want = " or ".join("number" if t in (int, float) else t.__name__ for t in types)
        raise SpecError(f"{where}: {key} must be a {want}, got {v!r}")
    if isinstance(v, float) and not math.isfinite(v):
        raise SpecError(f"{where}: {key} must be finite, got {v!r}")
    if key in _CHOICES and v not in _CHOICES[key]:
        raise SpecError(f"{where}: {key} must be one of {', '.join(_CHOICES[key])}, got {v!r}")
    if key == "time_limit" and v <= 0:
        raise SpecError(f"{where}: time_limit must be positive (seconds), got {v!r}")


def _check_reproduce(source: str, rep) -> dict:
    if not isinstance(rep, dict):
        raise SpecError(f"{source}: [reproduce] must be a table")
    bad = sorted(set(rep) - set(_REPRODUCE))
    if bad:
        raise SpecError(f"{source}: unknown key(s) in [reproduce]: {', '.join(bad)}; allowed: {', '.join(sorted(_REPRODUCE))}")
    for k in ("seed", "item", "report"):
        if k not in rep:
            raise SpecError(f"{source}: [reproduce] needs {k}")
    for k, v in rep.items():
        if not isinstance(v, str) or not v.strip():
            raise SpecError(f"{source} [reproduce]: {k} must be a non-empty string, got {v!r}")
    from optmech.reproduce.report import REPORTS

    if rep["report"] not in REPORTS:
        raise SpecError(f"{source} [reproduce]: unknown report {rep['report']!r}; known: {', '.join(sorted(REPORTS))}")
    return dict(rep)


def _check_axis(source: str, table: str, k: str, values) -> None:
    if not isinstance(values, list):
        raise SpecError(f"{source} [{table}]: {k} must be a list of values, got {values!r}")
    if not values:
        raise SpecError(f"{source} [{table}]: {k} is an empty list")
    for v in values:
        _check_value(f"{source} [{table}]", k, v)


def parse_spec(data: dict, *, source: str = "spec", force: bool = False, quick: bool = False) -> SweepSpec:
    """Validate a parsed TOML document and expand its grid (module docstring).

    With ``quick`` the axes named in ``[quick]`` replace those of ``[grid]``.

    >>> doc = {"name": "pairs", "problem": {"privacy": "approx"}, "zip": {"epsilon": [0.1, 0.5], "delta": [0.01, 0.05]},
    ...        "grid": {"sensitivity": [1, 2]}}
    >>> [(p["sensitivity"], p["epsilon"], p["delta"]) for p in parse_spec(doc).problems]
    [(1, 0.1, 0.01), (1, 0.5, 0.05), (2, 0.1, 0.01), (2, 0.5, 0.05)]
    >>> parse_spec({"name": "bad", "grid": {"epsilon": []}})
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: spec [grid]: epsilon is an empty list
    """
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a spec is a TOML table")
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise SpecError(f"{source}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_TOP))}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"{source}: name must be a non-empty string")
    desc = data.get("description", "")
    if not isinstance(desc, str):
        raise SpecError(f"{source}: description must be a string")
    fixed, grid, zipped, short = (data.get(t, {}) for t in ("problem", "grid", "zip", "quick"))
    for title, table in (("problem", fixed), ("grid", grid), ("zip", zipped), ("quick", short)):
        if not isinstance(table, dict):
            raise SpecError(f"{source}: [{title}] must be a table")
        bad = sorted(set(table) - set(PARAMETERS))
        if bad:
            raise SpecError(f"{source}: unknown parameter(s) in [{title}]: {', '.join(bad)}; "
                            f"allowed: {', '.join(sorted(PARAMETERS))}")
    for a, b, what in ((fixed, grid, "fixed in [problem] and swept in [grid]"),
                       (fixed, zipped, "fixed in [problem] and swept in [zip]"),
                       (grid, zipped, "swept in both [grid] and [zip]")):
        both = sorted(set(a) & set(b))
        if both:
            raise SpecError(f"{source}: {', '.join(both)} {what}")
    for k, v in fixed.items():
        _check_value(f"{source} [problem]", k, v)
    not_swept = sorted(set(short) - set(grid) - set(zipped))
    if not_swept:
        raise SpecError(f"{source}: [quick] may only shorten axes of [grid] or [zip]; not swept: {', '.join(not_swept)}")

    def axis(table: str, k: str, values: list) -> list:
        _check_axis(source, table, k, values)
        if k in short:
            _check_axis(source, "quick", k, short[k])
            if quick:
                return short[k]
        return values

    axes = [(k, axis("grid", k, v)) for k, v in grid.items()]
    zaxes = [(k, axis("zip", k, v)) for k, v in zipped.items()]
    for where, use_quick in (("zip", False), ("quick", True)):
        lengths = {k: len(short[k] if use_quick and k in short else zipped[k]) for k in zipped}
        if len(set(lengths.values())) > 1 and (where == "zip" or any(k in short for k in zipped)):
            raise SpecError(f"{source}: the [{where}] lists of zipped axes must have one length, got "
                            + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
    rep = _check_reproduce(source, data["reproduce"]) if "reproduce" in data else {}
    if "epsilon" not in fixed and "epsilon" not in grid and "epsilon" not in zipped:
        raise SpecError(f"{source}: epsilon is required (in [problem], [grid] or [zip])")
    count = math.prod(len(v) for _, v in axes) * (len(zaxes[0][1]) if zaxes else 1)
    if count > MAX_PROBLEMS and not force:
        raise SpecError(f"{source}: the sweep has {count} problems, more than {MAX_PROBLEMS}: use --force to run it")
    zrows = [dict(zip([k for k, _ in zaxes], combo)) for combo in zip(*[v for _, v in zaxes])] if zaxes else [{}]
    problems = tuple(dict(fixed) | dict(zip([k for k, _ in axes], combo)) | z
                     for combo in itertools.product(*[v for _, v in axes]) for z in zrows)
    check_problems(problems, source=source)
    return SweepSpec(name.strip(), desc, problems, rep)


def check_problems(problems, *, source: str = "spec") -> None:
    """Refuse, in one line, the first problem that :meth:`optmech.spec.Problem.from_params` refuses
    (its parameters less ``time_limit``): a cost that is not a valid expression, ε ≤ 0, δ outside
    [0, 1), a combination no family solves, …, exactly as ``optmech solve`` refuses the same flags.
    The line names the problem by its number (1-based, in the sweep's order) and its parameters.
    :func:`parse_spec` calls it, so a spec is refused before any store is created or anything runs.

    >>> check_problems([{"epsilon": 1.0}, {"epsilon": -1.0, "cost": "abs"}])
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: spec: problem 2 of 2 (epsilon=-1.0, cost='abs'): epsilon must be positive, got -1
    """
    from optmech.errors import OptmechError
    from optmech.spec import Problem

    seen: set[str] = set()
    for i, p in enumerate(problems):
        params = {k: v for k, v in p.items() if k != "time_limit"}
        key = repr(sorted(params.items()))
        if key in seen:
            continue
        seen.add(key)
        try:
            Problem.from_params(params)
        except OptmechError as exc:
            where = ", ".join(f"{k}={v!r}" for k, v in p.items())
            raise SpecError(f"{source}: problem {i + 1} of {len(problems)} ({where}): {exc}") from None


def load_spec(path: str, *, force: bool = False, quick: bool = False) -> SweepSpec:
    """Read and validate a TOML spec file (one-line SpecError on any problem).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.toml")
    >>> _ = open(path, "w").write('name = "s"\\n[grid]\\nepsilon = [1.0, 2.0]\\n[quick]\\nepsilon = [1.0]\\n')
    >>> len(load_spec(path).problems), len(load_spec(path, quick=True).problems)
    (2, 1)
    """
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"no such spec file: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(f"{path}: tables or arrays nested too deeply to be a spec") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SpecError(f"cannot read {path}: {exc}") from None
    return parse_spec(data, source=path, force=force, quick=quick)


def normalised(params: dict) -> dict:
    """The parameters with defaults filled in and numbers as floats: what the store key hashes."""
    out = {"privacy": "pure", "utility": "cost", "domain": "continuous", "sensitivity": 1.0, "dim": 1, "norm": "l1",
           "cost": "abs"} | dict(params)
    for k in ("epsilon", "delta", "sensitivity", "target_gap", "time_limit"):
        if k in out:
            out[k] = float(out[k])
    return out


def run_job(params: dict) -> dict:
    """Solve one problem of a sweep (:meth:`optmech.spec.Problem.from_params` of its parameters, less
    ``time_limit``, which goes to :func:`optmech.solve`); return the Result's JSON dict (raises OptmechError
    on bad input).

    >>> d = run_job({"epsilon": 1.0, "domain": "integer", "cost": "abs"})
    >>> d["certified"], d["lower_bound"] <= d["upper_bound"]
    (True, True)
    """
    import optmech
    from optmech.spec import Problem

    t0 = time.perf_counter()
    delay = os.environ.get(TEST_DELAY_VARIABLE)
    if delay:  # test-only: every problem lasts at least this long, whatever the machine's speed
        time.sleep(float(delay))
    params = dict(params)
    limit = params.pop("time_limit", None)
    r = optmech.solve(Problem.from_params(params), time_limit=limit)
    d = r.to_dict()
    d["wall_seconds"] = time.perf_counter() - t0
    return d


#: Test-only: seconds each sweep problem sleeps before its solve (the signal tests need problems that are
#: in flight for a known time on any machine; unset in normal use).
TEST_DELAY_VARIABLE = "OPTMECH_TEST_JOB_DELAY"
#: Seconds without any Dask worker before a sweep says so.
NO_WORKERS_NOTICE = 5.0
#: Seconds a sweep waits to connect to a Dask scheduler (at most ``--worker-timeout``).
CONNECT_TIMEOUT = 10.0
#: Seconds a sweep waits for a Dask scheduler to have a worker before it gives up (``--worker-timeout``).
WORKER_TIMEOUT = 60.0
#: Seconds a sweep waits, after the first SIGINT or SIGTERM, for the problems in flight (a second signal abandons them).
GRACE_SECONDS = 10.0


@dataclass
class SweepOutcome:
    """What a sweep did: counts, the first errors, and whether a signal stopped it.

    ``stored`` counts the spec's problems present in the store at the end (skipped or computed);
    ``interrupted`` names the signal that stopped the sweep (``"SIGINT"``, ``"SIGTERM"``) or is
    ``None``; ``abandoned`` counts problems in flight that were given up (never recorded).

    >>> out = SweepOutcome(computed=3, skipped=2, failed=0, errors=[], store="s.sqlite", problems=8, stored=5,
    ...                    interrupted="SIGINT", abandoned=1)
    >>> out.stop_line()
    'interrupted (SIGINT): 5 of 8 stored, 1 in flight abandoned; rerun with --resume to compute the rest'
    """

    computed: int
    skipped: int
    failed: int
    errors: list
    store: str
    problems: int
    stored: int = 0
    interrupted: str | None = None
    abandoned: int = 0
    #: why the sweep stopped early without a signal (the Dask scheduler lost, no workers), or None
    lost: str | None = None

    def to_dict(self) -> dict:
        return {"computed": self.computed, "skipped": self.skipped, "failed": self.failed, "problems": self.problems,
                "stored": self.stored, "interrupted": self.interrupted, "abandoned": self.abandoned, "lost": self.lost,
                "store": self.store, "errors": self.errors[:20]}

    def stop_line(self) -> str:
        """The line printed when a signal (or a lost cluster) stopped the sweep: N of M stored; rerun
        with --resume."""
        extra = f", {self.abandoned} in flight abandoned" if self.abandoned else ""
        why = self.lost if self.interrupted is None else f"interrupted ({self.interrupted})"
        return f"{why}: {self.stored} of {self.problems} stored{extra}; rerun with --resume to compute the rest"


class _Stop:
    """Signal state of a running sweep: the first SIGINT/SIGTERM stops handing out work and starts the
    grace period; a second one abandons the problems in flight."""

    def __init__(self, grace: float, notify):
        self.grace = grace
        self.notify = notify
        self.signal: str | None = None
        self.deadline = math.inf
        self.abandon = False
        self.in_flight = 0

    def __call__(self, signum, frame=None) -> None:
        import signal

        if self.signal is None:
            self.signal = signal.Signals(signum).name
            self.deadline = time.monotonic() + self.grace
            if self.in_flight:
                self.notify(f"{self.signal}: no new problems; waiting up to {self.grace:g} s for the {self.in_flight} "
                            "in flight (send it again to abandon them)")
        elif not self.abandon:
            self.abandon = True
            self.notify(f"{signal.Signals(signum).name} again: abandoning the problems in flight")

    def expired(self) -> bool:
        return self.abandon or (self.signal is not None and time.monotonic() >= self.deadline)


class _Handlers:
    """Install ``stop`` for SIGINT and SIGTERM while the sweep runs (main thread only), then restore."""

    def __init__(self, stop: _Stop, enabled: bool):
        import threading

        self.stop = stop
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.saved: dict = {}

    def __enter__(self):
        import signal

        if self.enabled:
            for s in (signal.SIGINT, signal.SIGTERM):
                self.saved[s] = signal.signal(s, self.stop)
        return self

    def __exit__(self, *exc):
        import signal

        for s, h in self.saved.items():
            signal.signal(s, h)


class _Executor:
    """A uniform face on the two ways to run problems: a local :class:`~optmech.workers.WorkerPool` or
    a Dask cluster."""

    window: int = 1

    def submit(self, fn, arg):
        raise NotImplementedError

    def health(self) -> str | None:
        """Why the sweep cannot go on (e.g. its cluster is lost), or None."""
        return None

    def wait(self, futures: list, timeout: float) -> set:
        import concurrent.futures as cf

        done, _ = cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return done

    def abandon(self, futures: list) -> None:
        """Give up ``futures`` (the tasks in flight) and release the workers."""

    def close(self) -> None:
        """Release the workers once every task has finished."""


class _PoolExecutor(_Executor):
    def __init__(self, workers: int):
        from optmech.workers import process_pool

        self.pool = process_pool(workers)  # workers ignore SIGINT/SIGTERM and exit with this process
        self.window = workers

    def submit(self, fn, arg):
        from concurrent.futures.process import BrokenProcessPool

        from optmech.workers import process_pool

        try:
            return self.pool.submit(fn, arg)
        except BrokenProcessPool:  # a worker was killed (out of memory?): its tasks failed; go on with a new pool
            self.pool.terminate()
            self.pool = process_pool(self.window)
            return self.pool.submit(fn, arg)

    def abandon(self, futures: list) -> None:
        self.pool.terminate()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _quiet_cluster_logs(record) -> bool:
    """Logging filter: drop the Dask client's records (and its event loop's) while a sweep reports them."""
    return not record.name.startswith(("distributed", "tornado", "asyncio"))


class _DaskExecutor(_Executor):
    """A Dask cluster.  The scheduler's loss ends the sweep with what is stored (the problems in
    flight are not failures); a scheduler without workers is reported after
    :data:`NO_WORKERS_NOTICE` seconds and given up after ``worker_timeout`` seconds."""

    def __init__(self, scheduler: str, worker_timeout: float, notify):
        import logging

        try:
            from dask.distributed import Client
        except ImportError:
            raise SpecError("--scheduler needs dask.distributed: pip install 'optmech[dask]'") from None
        # the client logs connection failures as tracebacks: the sweep reports them in one line instead
        # (a filter on the handlers that print them: distributed's own and the root logger's)
        self._handlers = [*logging.getLogger("distributed").handlers, *logging.getLogger().handlers]
        for h in self._handlers:
            h.addFilter(_quiet_cluster_logs)
        connect = max(1.0, min(CONNECT_TIMEOUT, worker_timeout))  # a scheduler is no use without workers either
        try:
            self.client = Client(scheduler, timeout=f"{connect:g}s")
        except (OSError, TimeoutError) as exc:
            self._restore_logging()
            raise SpecError(f"cannot reach the Dask scheduler at {scheduler} within {connect:g} s: "
                            f"{type(exc).__name__}") from None
        self.address = scheduler
        self.worker_timeout = worker_timeout
        self.notify = notify
        self.lost: str | None = None
        self._checked = -math.inf
        self._idle_since: float | None = None
        self._told = False
        self.window = 4
        self.health()

    def _restore_logging(self) -> None:
        for h in self._handlers:
            h.removeFilter(_quiet_cluster_logs)

    def health(self) -> str | None:
        """Why the sweep cannot go on (scheduler lost, no workers for too long), or None; checks the
        workers at most once a second."""
        now = time.monotonic()
        if self.lost is not None or now - self._checked < 1.0:
            return self.lost
        self._checked = now
        try:
            threads = sum(self.client.nthreads().values())
        except Exception:  # noqa: BLE001 - any failure to ask the scheduler is its loss
            self.lost = f"the Dask scheduler at {self.address} was lost"
            return self.lost
        self.window = max(4, 2 * threads)
        if threads:
            self._idle_since = None
            return None
        if self._idle_since is None:
            self._idle_since = now
        idle = now - self._idle_since
        if idle >= NO_WORKERS_NOTICE and not self._told:
            self._told = True
            self.notify(f"no Dask workers have joined the scheduler at {self.address}; waiting up to "
                        f"{self.worker_timeout:g} s (--worker-timeout) for one")
        if idle >= self.worker_timeout:
            self.lost = f"no Dask worker joined the scheduler at {self.address} within {self.worker_timeout:g} s"
        return self.lost

    def submit(self, fn, arg):
        return self.client.submit(fn, arg, pure=False)

    def wait(self, futures: list, timeout: float) -> set:
        from dask.distributed import wait

        try:
            wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        except Exception as exc:  # noqa: BLE001 - futures cancelled under us: the connection is gone
            if "cancel" in type(exc).__name__.lower():
                self.lost = f"the Dask scheduler at {self.address} was lost"
            else:
                raise
        if any(f.status == "cancelled" for f in futures):
            self.lost = f"the Dask scheduler at {self.address} was lost"
        return {f for f in futures if f.done()}

    def abandon(self, futures: list) -> None:
        try:
            if self.lost is None:
                self.client.cancel(futures)
        finally:
            self.close()

    def close(self) -> None:
        try:
            self.client.close(timeout=5 if self.lost is None else 1)
        except Exception:  # noqa: BLE001 - a lost scheduler cannot be said goodbye to
            pass
        if self.lost is None:
            self._restore_logging()
        # else the dead client's reconnection task goes on logging tracebacks for seconds after close():
        # its loggers stay quiet (the sweep has reported the loss in one line)


def _stderr(line: str) -> None:
    import sys

    sys.stderr.write(f"optmech: {line}\n")
    sys.stderr.flush()


def run_sweep(spec: SweepSpec, store_path: str, *, workers: int | None = None, scheduler: str | None = None,
              resume: bool = False, progress: bool = False, grace: float = GRACE_SECONDS,
              handle_signals: bool = True, notify=_stderr, worker_timeout: float = WORKER_TIMEOUT) -> SweepOutcome:
    """Run every problem of ``spec`` into the store; with ``resume`` skip those already stored.

    Results are written by this process only, one transaction per problem, as they finish, so an
    interrupted sweep (SIGKILL included) keeps every finished row and ``resume`` continues it.
    Problems are solved in ``workers`` local worker processes (all cores by default; even one
    worker keeps this process free to answer signals at once), or on the Dask cluster at
    ``scheduler``.

    Signals (when called from the main thread and ``handle_signals``): the first SIGINT or SIGTERM
    stops handing out problems and waits up to ``grace`` seconds for those in flight, storing each
    that finishes; a second signal, or the end of the grace period, abandons the rest (they are
    never recorded, so no row is partial and ``resume`` computes them).  The sweep then returns
    with :attr:`SweepOutcome.interrupted` set; ``notify`` receives the progress lines.

    >>> spec = parse_spec({"name": "demo", "problem": {"domain": "integer"}, "grid": {"epsilon": [1.0, 2.0]}})
    >>> import os, tempfile
    >>> out = run_sweep(spec, os.path.join(tempfile.mkdtemp(), "demo.sqlite"), workers=1)
    >>> (out.computed, out.stored, out.failed, out.interrupted)
    (2, 2, 0, None)
    """
    import os
    from collections import deque

    from optmech.store import ResultStore, problem_key

    # the store keys and records the normalised parameters; the solve reads the spec's own (a default
    # filled in for one family, such as cost, must not reach another's Problem.from_params)
    jobs = [(problem_key(normalised(p)), normalised(p), p) for p in spec.problems]
    outcome = SweepOutcome(0, 0, 0, [], str(store_path), len(jobs))
    stop = _Stop(grace, notify)
    # the handlers are in place before the store exists: a signal at any moment after it does is answered
    # with the outcome (nothing started is abandoned, nothing finished is lost)
    with _Handlers(stop, handle_signals), ResultStore(store_path) as store:
        todo: deque = deque()
        for key, p, raw in jobs:
            if resume and store.has(key):
                outcome.skipped += 1
            else:
                todo.append((key, p, raw))
        bar = None
        if progress and todo:
            from tqdm import tqdm

            bar = tqdm(total=len(todo), desc=spec.name, unit="problem")

        def record(key: str, p: dict, fut) -> None:
            try:
                res = fut.result()
            except Exception as exc:  # a problem that fails is counted and retried by the next --resume
                outcome.failed += 1
                outcome.errors.append({"key": key, "error": f"{type(exc).__name__}: {exc}"})
            else:
                store.put(key, p, res, spec.name)
                outcome.computed += 1
            if bar is not None:
                bar.update(1)

        workers = workers or os.cpu_count() or 1
        executor: _Executor | None = None
        in_flight: dict = {}
        try:
            if todo:
                executor = (_DaskExecutor(scheduler, worker_timeout, notify) if scheduler is not None
                            else _PoolExecutor(workers))
            while todo or in_flight:
                while todo and len(in_flight) < executor.window and stop.signal is None:
                    key, p, raw = todo.popleft()
                    in_flight[executor.submit(run_job, raw)] = (key, p)
                stop.in_flight = len(in_flight)
                if not in_flight:
                    break
                if stop.expired() or executor.health() is not None:
                    break
                for fut in executor.wait(list(in_flight), timeout=0.2):
                    key, p = in_flight.pop(fut)
                    if (stop.signal is not None and _broken(fut)) or executor.health() is not None:
                        outcome.abandoned += 1  # a worker ended by the signal, or the cluster lost:
                        continue                # not a failure of the problem
                    record(key, p, fut)
                if executor.health() is not None:
                    break
        finally:
            if in_flight:  # a signal's grace period ended, or an exception: give the rest up
                if stop.signal is not None and not stop.abandon:
                    notify(f"grace period of {grace:g} s over: abandoning the {len(in_flight)} problem(s) in flight")
                outcome.abandoned += len(in_flight)
                executor.abandon(list(in_flight))
            elif executor is not None:
                executor.close()
            if bar is not None:
                bar.close()
        outcome.interrupted = stop.signal
        if executor is not None and stop.signal is None:
            outcome.lost = executor.health()
        outcome.stored = sum(store.has(k) for k, _, _ in jobs)
    return outcome


def _broken(fut) -> bool:
    """True when the future failed because its worker process died (not because its problem failed)."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        exc = fut.exception(timeout=0)
    except Exception:  # noqa: BLE001 - cancelled
        return True
    return isinstance(exc, BrokenProcessPool)
