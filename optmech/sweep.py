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
    seed = "000"                       # the paper: "000".."004" (optmech.sources.TAGS), or "conjecture"
    item = "Fig. 2.7"                  # the table, figure or statement reproduced
    report = "staircase_gain"          # the report that compares the results with the paper

Parameters: ``privacy``, ``epsilon``, ``delta``, ``sensitivity``, ``domain``, ``resolution``,
``cost``, ``dim``, ``norm``, ``target_gap``, ``utility`` (cost | wasserstein | surrogate) and
``input`` (an input spec for the Wasserstein utility).  A parameter may be fixed or swept, not
both.  Unknown keys, wrong types, empty grids and sweeps above :data:`MAX_PROBLEMS` (without
``force``) are refused with one-line errors, before anything runs.

``[zip]`` holds axes stepped together (lists of one length: ``epsilon = [0.1, 0.05]`` and
``delta = [0.1, 0.05]`` give the pairs (0.1, 0.1) and (0.05, 0.05)); the sweep is the product of the
``[grid]`` axes with those rows.  ``[quick]`` may only shorten axes of ``[grid]`` or ``[zip]``
(zipped ones to one common length); ``[reproduce]`` names one of the reports of
:mod:`optmech.reproduce`.
"""

from __future__ import annotations

import itertools
import math
import time
import tomllib
from dataclasses import dataclass, field

from optmech.errors import SpecError

__all__ = ["SweepSpec", "load_spec", "parse_spec", "run_job", "MAX_PROBLEMS", "PARAMETERS"]

#: Largest sweep run without ``--force``.
MAX_PROBLEMS = 500
#: Parameter name -> accepted Python types.
PARAMETERS: dict[str, tuple[type, ...]] = {
    "privacy": (str,), "epsilon": (int, float), "delta": (int, float), "sensitivity": (int, float),
    "domain": (str,), "resolution": (int,), "cost": (str,), "dim": (int,), "norm": (str,),
    "target_gap": (int, float), "utility": (str,), "input": (str,),
}
_CHOICES = {"privacy": ("pure", "approx", "lipschitz"), "domain": ("integer", "continuous"),
            "norm": ("l1", "l2", "linf"), "utility": ("cost", "wasserstein", "surrogate")}
_TOP = {"name", "description", "problem", "grid", "zip", "quick", "reproduce"}
_REPRODUCE = {"seed": str, "item": str, "report": str, "title": str}


@dataclass(frozen=True)
class SweepSpec:
    """A validated spec: its name, and the problems (parameter dicts) in a fixed order."""

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
    return SweepSpec(name.strip(), desc, problems, rep)


def load_spec(path: str, *, force: bool = False, quick: bool = False) -> SweepSpec:
    """Read and validate a TOML spec file (one-line SpecError on any problem)."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"no such spec file: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path} is not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SpecError(f"cannot read {path}: {exc}") from None
    return parse_spec(data, source=path, force=force, quick=quick)


def normalised(params: dict) -> dict:
    """The parameters with defaults filled in and numbers as floats: what the store key hashes."""
    out = {"privacy": "pure", "utility": "cost", "domain": "continuous", "sensitivity": 1.0, "dim": 1, "norm": "l1",
           "cost": "abs"} | dict(params)
    for k in ("epsilon", "delta", "sensitivity", "target_gap"):
        if k in out:
            out[k] = float(out[k])
    return out


def run_job(params: dict) -> dict:
    """Solve one problem of a sweep (:meth:`optmech.spec.Problem.from_params` of its parameters);
    return the Result's JSON dict (raises OptmechError on bad input)."""
    import optmech
    from optmech.spec import Problem

    t0 = time.perf_counter()
    r = optmech.solve(Problem.from_params(dict(params)))
    d = r.to_dict()
    d["wall_seconds"] = time.perf_counter() - t0
    return d


@dataclass
class SweepOutcome:
    computed: int
    skipped: int
    failed: int
    errors: list
    store: str
    problems: int

    def to_dict(self) -> dict:
        return {"computed": self.computed, "skipped": self.skipped, "failed": self.failed, "problems": self.problems,
                "store": self.store, "errors": self.errors[:20]}


def _executor(workers: int, scheduler: str | None):
    """(submit, as_completed, close) for local processes or a Dask cluster."""
    if scheduler is not None:
        try:
            from dask.distributed import Client, as_completed
        except ImportError:
            raise SpecError("--scheduler needs dask.distributed: pip install 'optmech[dask]'") from None
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise SpecError(f"cannot reach the Dask scheduler at {scheduler} within 10 s: {type(exc).__name__}") from None
        return (lambda fn, arg: client.submit(fn, arg, pure=False)), as_completed, client.close
    from concurrent.futures import as_completed

    from optmech.workers import process_pool

    pool = process_pool(workers)  # its workers exit when this process dies, even by SIGKILL
    return pool.submit, as_completed, lambda: pool.shutdown(cancel_futures=True)


def run_sweep(spec: SweepSpec, store_path: str, *, workers: int | None = None, scheduler: str | None = None,
              resume: bool = False, progress: bool = False) -> SweepOutcome:
    """Run every problem of ``spec`` into the store; with ``resume`` skip those already stored.

    Results are written by this process only, one transaction per problem, as they finish, so an
    interrupted sweep (SIGKILL included) keeps every finished row and ``resume`` continues it.
    """
    import os

    from optmech.store import ResultStore, problem_key

    # the store keys and records the normalised parameters; the solve reads the spec's own (a default
    # filled in for one family, such as cost, must not reach another's Problem.from_params)
    jobs = [(problem_key(normalised(p)), normalised(p), p) for p in spec.problems]
    outcome = SweepOutcome(0, 0, 0, [], str(store_path), len(jobs))
    with ResultStore(store_path) as store:
        todo = []
        for key, p, raw in jobs:
            if resume and store.has(key):
                outcome.skipped += 1
            else:
                todo.append((key, p, raw))
        bar = None
        if progress and todo:
            from tqdm import tqdm

            bar = tqdm(total=len(todo), desc=spec.name, unit="problem")

        def record(key: str, p: dict, fut_result) -> None:
            try:
                res = fut_result()
            except Exception as exc:  # a problem that fails is counted and retried by the next --resume
                outcome.failed += 1
                outcome.errors.append({"key": key, "error": f"{type(exc).__name__}: {exc}"})
            else:
                store.put(key, p, res, spec.name)
                outcome.computed += 1
            if bar is not None:
                bar.update(1)

        workers = workers or os.cpu_count() or 1
        if scheduler is None and workers == 1:
            for key, p, raw in todo:
                record(key, p, lambda raw=raw: run_job(raw))
        elif todo:
            submit, as_completed, close = _executor(workers, scheduler)
            try:
                futs = {submit(run_job, raw): (key, p) for key, p, raw in todo}
                for f in as_completed(list(futs)):
                    key, p = futs[f]
                    record(key, p, f.result)
            finally:
                close()
        if bar is not None:
            bar.close()
    return outcome
