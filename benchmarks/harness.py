"""One harness for the optmech benchmarks: cases, a baseline in the same run, JSON-lines results, the table.

A benchmark file keeps only its cases::

    from harness import COMMIT, case, peer

    @case(name="Δ 50, |x|", baseline=COMMIT, params={"delta": 50})
    def abs_cost(delta: int) -> dict:
        import optmech
        r = optmech.solve(...)
        return {"lower": r.lower_bound, "upper": r.upper_bound, "gap": r.relative_gap, "certified": r.certified}

and the harness times it::

    python -m benchmarks.harness run benchmarks/bench_engine.py --baseline-commit <sha> --repeats 3 [--only NAME]
    python -m benchmarks.harness table [--write-readme]
    python -m benchmarks.harness list benchmarks/bench_naive.py

Baselines (the ``baseline=`` of :func:`case`), each timed in the same run as optmech:

* :data:`COMMIT`: the same case function on another tree of optmech, either ``--baseline-tree PATH``
  or ``--baseline-commit SHA`` (the harness makes a ``git worktree add --detach`` of that commit in a
  temporary folder and removes it after the run).  The tree is reached through ``PYTHONPATH`` (the
  child's working directory is the tree too); the child reports the file ``optmech`` was imported
  from, and a run that imported it from elsewhere is recorded as failed.
* :func:`against` (or a plain callable): another function, e.g. a naive LP; it receives the case's
  parameters it names and, if it has a parameter ``ours``, the dict optmech's side returned (its
  first repeat), e.g. to solve on the same window.
* :func:`peer`: a callable that uses a peer library; the library's version is recorded.

Timing.  Each repeat of each side runs in a fresh ``python`` process (``benchmarks/harness.py
_child``, started through ``_common.PEAK_LAUNCHER``): the bench file is loaded, the side's
``warmup`` (if any) runs untimed, then the case function is called once and its wall time
(``time.perf_counter`` around the call) is the repeat's seconds; what the function returns is kept.
The two sides alternate (ours first on even repeats, so a callable baseline can see ``ours``); the
figure is the median over ``--repeats`` (a case's ``max_repeats`` caps it).  Peak memory is the
child process's peak resident set (``ru_maxrss`` as seen by the launcher: interpreter, imports and
warm-up included; the largest over the repeats).  A repeat that raises, dies or exceeds the
timeout ends that side: the record says ``failed`` with the error and the run goes on.  Each side
has its own timeout per repeat: optmech's is the case's ``timeout`` (else ``--timeout``); the
baseline's is ``against(fn, timeout=...)`` / ``peer(..., timeout=...)``, else the case's
``baseline_timeout`` (the way to give :data:`COMMIT` its own), else optmech's.

The compared figure.  By default (``metric="seconds"``) the ratio compares the median seconds,
lower is better.  A case may instead name a number its function returns, ``metric=(key,
"higher")`` or ``(key, "lower")``, e.g. ``("rate", "higher")`` for a throughput benchmark that
measures samples/s inside its call: both sides' returned dicts must hold a number under ``key``
(a side whose dict lacks it is recorded as failed, ``MissingMetric``), and the ratio is the
median of optmech's values over the baseline's.  The seconds are recorded either way.

Results format (schema 1): one JSON object per line, one line per case per run, appended to
``benchmarks/results/<bench file stem>.jsonl`` (the folder is git-ignored).  Non-finite floats are
written as the strings ``"inf"``, ``"-inf"``, ``"nan"``.  Keys:

``schema``
    1.
``run_id``, ``date``
    The same for every record of one ``run`` invocation; ``date`` is UTC ISO 8601 at its start.
``file``, ``case``, ``params``, ``repeats``
    The bench file (relative to the repository), the case name, its parameters (after ``--set``)
    and the repeats asked for this case.
``status``
    ``"ok"``, ``"failed"`` (optmech's side failed) or ``"baseline_failed"``.
``ours``, ``baseline``
    One *side* each: ``kind`` (``"optmech"`` for ours; ``"commit"``, ``"callable"``, ``"peer"`` or
    ``"none"`` for the baseline), ``label``, ``tree`` and ``commit`` (``dirty``: uncommitted
    changes under ``optmech/``) for sides that run optmech from a tree, ``package``/``version``
    for a peer, ``ok``, ``skipped`` (a reason, or null), ``timeout_s`` (the limit per repeat;
    absent for no baseline), ``seconds`` (every repeat), ``seconds_median``, ``metric_values``
    (the compared figure, every repeat; the seconds by default), ``metric_median``, ``peak_rss_bytes`` (largest over repeats, or null), ``result`` (the dict
    the last repeat returned), ``error`` (``{"type", "message", "traceback"}`` or null) and, when
    ``result`` carries them (keys ``lower``/``lower_bound``, ``upper``/``upper_bound``,
    ``gap``/``relative_gap``, ``certified``), ``lower``, ``upper``, ``gap``, ``certified``.
``metric``
    ``{"key", "better"}``: ``{"key": "seconds", "better": "lower"}`` unless the case named another.
``ratio``
    ``ours.metric_median / baseline.metric_median``, or null: for seconds, below 1 means optmech
    is faster; for a ``"higher"`` figure such as a rate, above 1 does.
``brackets_overlap``
    For two certified brackets: whether they intersect (both contain the optimum, so they must);
    null otherwise.
``machine``
    ``cores`` (``os.cpu_count``), ``usable_cores`` (affinity), ``cpu_model``, ``platform``,
    ``python``, ``load_average`` (1/5/15 min, after the case).
``versions``
    numpy, scipy, highspy, cvxpy in the harness's environment.

The table (``table``) takes, for every (file, case), the latest record found in the results files
and prints one markdown table per bench file: case, baseline, optmech seconds, baseline seconds,
the ratio (tagged with the figure and its direction when it is not the seconds), optmech's gap (marked *uncertified* unless the case said ``certified``) and the case's
``note``; under it, the runs' dates, machines, commits and repeats.  ``--write-readme`` replaces
the text between ``<!-- benchmarks:begin -->`` and ``<!-- benchmarks:end -->`` in
``benchmarks/README.md`` with it (idempotent).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import importlib.util
import inspect
import itertools
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

if __name__ == "__main__":  # one module object, whether run as a script or imported by a bench file
    sys.modules.setdefault("harness", sys.modules[__name__])

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from _common import PEAK_LAUNCHER, REPO_ROOT, RESULTS_DIR, json_safe, markdown_table  # noqa: E402

SCHEMA = 1
README = BENCH_DIR / "README.md"
BEGIN, END = "<!-- benchmarks:begin -->", "<!-- benchmarks:end -->"

# -- the case API ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    """What a case is timed against: ``kind`` is ``"commit"``, ``"callable"`` or ``"peer"``."""

    kind: str
    fn: Callable[..., dict] | None = None
    label: str = ""
    package: str | None = None
    warmup: Callable[..., Any] | None = None
    timeout: float | None = None


#: The same case on another tree of optmech (``--baseline-commit SHA`` or ``--baseline-tree PATH``).
COMMIT = Baseline("commit", label="baseline commit")


def against(fn: Callable[..., dict], label: str | None = None, warmup: Callable[..., Any] | None = None,
            timeout: float | None = None) -> Baseline:
    """A callable baseline (e.g. a naive LP); ``fn`` must be a module-level function of the bench file.

    ``timeout`` (s): each baseline repeat's limit (default: the case's ``baseline_timeout``, else its timeout).
    """
    return Baseline("callable", fn, label or fn.__name__, None, warmup, _positive(timeout, "timeout"))


def peer(package: str, fn: Callable[..., dict], label: str | None = None,
         warmup: Callable[..., Any] | None = None, timeout: float | None = None) -> Baseline:
    """A baseline that runs the peer library ``package`` (its installed version is recorded); ``timeout`` as
    in :func:`against`."""
    return Baseline("peer", fn, label or package, package, warmup, _positive(timeout, "timeout"))


def _positive(x: float | None, what: str) -> float | None:
    if x is not None and not (isinstance(x, (int, float)) and x > 0 and math.isfinite(x)):
        raise ValueError(f"{what} must be a positive number of seconds, not {x!r}")
    return None if x is None else float(x)


#: What a case compares by default: the harness's wall seconds of the call, lower is better.
SECONDS = ("seconds", "lower")


def _as_metric(metric: str | tuple[str, str]) -> tuple[str, str]:
    """``"seconds"`` or ``(key, "higher" | "lower")``: the figure the ratio compares (see :func:`case`)."""
    if metric == "seconds" or metric == SECONDS or metric == ["seconds", "lower"]:
        return SECONDS
    if isinstance(metric, str):
        return (metric, "lower")
    if (isinstance(metric, (tuple, list)) and len(metric) == 2 and isinstance(metric[0], str) and metric[0]
            and metric[1] in ("higher", "lower")):
        if metric[0] == "seconds" and metric[1] != "lower":
            raise ValueError("metric 'seconds' is lower-is-better")
        return (metric[0], metric[1])
    raise ValueError(f"metric must be 'seconds', a result key, or (key, 'higher'|'lower'), not {metric!r}")


@dataclass(frozen=True)
class Case:
    """One benchmark case: ``fn(**params)`` returns a JSON-ready dict; the harness measures seconds."""

    name: str
    fn: Callable[..., dict]
    params: dict = field(default_factory=dict)
    baseline: Baseline | None = None
    warmup: Callable[..., Any] | None = None
    max_repeats: int | None = None
    timeout: float | None = None
    baseline_timeout: float | None = None
    metric: tuple[str, str] = SECONDS


def _as_baseline(b: Baseline | Callable[..., dict] | str | None) -> Baseline | None:
    if b is None or isinstance(b, Baseline) or hasattr(b, "kind") and hasattr(b, "fn"):
        return b  # type: ignore[return-value]
    if b == "commit":
        return COMMIT
    if callable(b):
        return against(b)
    raise ValueError(f"baseline must be COMMIT, 'commit', a callable or a Baseline, not {b!r}")


def _make_case(fn: Callable[..., dict], name: str | None, baseline: Any, params: dict | None,
               warmup: Callable[..., Any] | None, max_repeats: int | None, timeout: float | None,
               baseline_timeout: float | None, metric: str | tuple[str, str]) -> Case:
    return Case(name or fn.__name__, fn, dict(params or {}), _as_baseline(baseline), warmup, max_repeats,
                _positive(timeout, "timeout"), _positive(baseline_timeout, "baseline_timeout"), _as_metric(metric))


def add_case(fn: Callable[..., dict], name: str | None = None, *, baseline: Any = None, params: dict | None = None,
             warmup: Callable[..., Any] | None = None, max_repeats: int | None = None,
             timeout: float | None = None, baseline_timeout: float | None = None,
             metric: str | tuple[str, str] = "seconds") -> Case:
    """Register ``fn`` as a case (after the cases it already has); for cases made in a loop.  Options as
    in :func:`case`."""
    c = _make_case(fn, name, baseline, params, warmup, max_repeats, timeout, baseline_timeout, metric)
    fn.__bench_cases__ = [*getattr(fn, "__bench_cases__", []), c]  # type: ignore[attr-defined]
    return c


def case(name: str | None = None, *, baseline: Any = None, params: dict | None = None,
         warmup: Callable[..., Any] | None = None, max_repeats: int | None = None,
         timeout: float | None = None, baseline_timeout: float | None = None,
         metric: str | tuple[str, str] = "seconds") -> Callable[[Callable[..., dict]], Callable[..., dict]]:
    """Decorator: make the function a case (stacked decorators give several cases, top one first).

    ``baseline``: :data:`COMMIT`, a callable / :func:`against`, :func:`peer`, or None (no baseline).
    ``warmup(**params)`` runs untimed before each timed call; ``max_repeats`` caps ``--repeats``;
    ``timeout`` (s) overrides ``--timeout`` for each repeat of optmech's side; ``baseline_timeout`` (s)
    for each repeat of the baseline's (default: the case's timeout; an ``against``/``peer`` timeout
    wins over it).  ``metric``: what the ratio compares, ``"seconds"`` (the harness's wall seconds,
    lower is better; the default) or ``(key, "higher" | "lower")``, the number each side's returned
    dict holds under ``key`` (median over the repeats), e.g. ``("rate", "higher")`` for samples/s.
    """

    def deco(fn: Callable[..., dict]) -> Callable[..., dict]:
        c = _make_case(fn, name, baseline, params, warmup, max_repeats, timeout, baseline_timeout, metric)
        fn.__bench_cases__ = [c, *getattr(fn, "__bench_cases__", [])]  # type: ignore[attr-defined]
        return fn

    return deco


def load_bench(path: str | os.PathLike) -> Any:
    """Import a bench file by path (a fresh module object each call)."""
    path = Path(path).resolve()
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}_{next(_SEQ)}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_SEQ = itertools.count()


def discover(module: Any) -> list[Case]:
    """The module's cases in source order; names must be unique."""
    seen: set[int] = set()
    fns = []
    for obj in vars(module).values():
        if callable(obj) and getattr(obj, "__bench_cases__", None) and id(obj) not in seen:
            seen.add(id(obj))
            fns.append(obj)
    fns.sort(key=lambda f: getattr(getattr(f, "__code__", None), "co_firstlineno", 0))
    cases = [c for f in fns for c in f.__bench_cases__]
    names = [c.name for c in cases]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"duplicate case names in {getattr(module, '__file__', module)}: {dup}")
    return cases


def _accepted(fn: Callable[..., Any], params: dict, **extra: Any) -> dict:
    """The subset of ``params`` (and ``extra``) that ``fn`` names (all of them if it takes ``**kw``)."""
    sig = inspect.signature(fn)
    everything = {**params, **extra}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return everything
    return {k: v for k, v in everything.items() if k in sig.parameters}


# -- the child process -------------------------------------------------------------------------------


def _child_main(spec_path: str) -> int:
    """Run one timed call described by the JSON file ``spec_path``; write the outcome to ``spec["out"]``."""
    import resource

    spec = json.loads(Path(spec_path).read_text())
    out: dict[str, Any] = {"ok": False}
    try:
        cases = {c.name: c for c in discover(load_bench(spec["file"]))}
        c = cases[spec["case"]]
        if spec["side"] == "ours":
            fn, warm = c.fn, c.warmup
        else:
            fn, warm = c.baseline.fn, c.baseline.warmup
        params = spec["params"]
        kwargs = _accepted(fn, params, ours=spec.get("ours"))
        if warm is not None:
            warm(**_accepted(warm, params))
        t0 = time.perf_counter()
        res = fn(**kwargs)
        seconds = time.perf_counter() - t0
        out = {"ok": True, "seconds": seconds, "result": res if isinstance(res, dict) else {"value": res}}
    except BaseException as exc:  # noqa: BLE001 - recorded, never raised
        out = {"ok": False, "error": {"type": type(exc).__name__, "message": str(exc),
                                      "traceback": traceback.format_exc(limit=8)}}
    om = sys.modules.get("optmech")
    out["optmech_file"] = getattr(om, "__file__", None)
    out["peak_rss_self_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    Path(spec["out"]).write_text(json.dumps(json_safe(out), default=str))
    return 0


def _run_child(file: Path, case_name: str, side: str, params: dict, tree: Path, ours: dict | None,
               timeout: float) -> dict:
    """One repeat of one side in a fresh process; ``{"ok", "seconds", "result", "peak_rss_bytes", "error"}``."""
    from _common import run_measured

    with tempfile.TemporaryDirectory(prefix="optmech-bench-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(json_safe({"file": str(file), "case": case_name, "side": side,
                                                   "params": params, "ours": ours, "out": str(out_path)})))
        env = dict(os.environ, PYTHONPATH=str(tree))
        run = run_measured([str(Path(__file__).resolve()), "_child", str(spec_path)], env=env, timeout=timeout,
                           cwd=str(tree))
        try:
            out = json.loads(out_path.read_text())
        except (OSError, ValueError):
            out = None
    if out is None:
        why = "Timeout" if run["rc"] is not None and run["rc"] < 0 and run["wall"] >= timeout else "ChildDied"
        tail = (run["stderr"].strip().splitlines() or [""])[-1]
        msg = f"killed after {timeout:g} s" if why == "Timeout" else f"exit status {run['rc']}: {tail}"
        return {"ok": False, "error": {"type": why, "message": msg, "traceback": run["stderr"][-2000:]},
                "peak_rss_bytes": run["peak_bytes"] or None}
    out["peak_rss_bytes"] = run["peak_bytes"] or out.get("peak_rss_self_bytes")
    mfile = out.get("optmech_file")
    if out["ok"] and mfile and side == "ours" and not Path(mfile).resolve().is_relative_to(tree.resolve()):
        out["ok"] = False
        out["error"] = {"type": "WrongTree", "message": f"optmech imported from {mfile}, not from {tree}",
                        "traceback": ""}
    return out


# -- trees, machine ----------------------------------------------------------------------------------


def _git(tree: Path, *args: str) -> str | None:
    try:
        p = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def tree_info(tree: Path) -> dict:
    """``{"tree", "commit", "dirty"}``; dirty means uncommitted changes to tracked files under optmech/."""
    commit = _git(tree, "rev-parse", "HEAD")
    status = _git(tree, "status", "--porcelain", "--untracked-files=no", "--", "optmech")
    return {"tree": str(tree), "commit": commit, "dirty": bool(status) if status is not None else None}


@contextlib.contextmanager
def baseline_worktree(commit: str) -> Iterator[Path]:
    """A detached ``git worktree`` of ``commit`` in a temporary folder, removed afterwards."""
    sha = _git(REPO_ROOT, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if not sha:
        raise ValueError(f"not a commit of {REPO_ROOT}: {commit!r}")
    parent = Path(tempfile.mkdtemp(prefix="optmech-base-"))
    path = parent / sha[:12]
    p = subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "add", "--detach", str(path), sha],
                       capture_output=True, text=True)
    if p.returncode != 0:
        shutil.rmtree(parent, ignore_errors=True)
        raise RuntimeError(f"git worktree add failed: {p.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "remove", "--force", str(path)],
                       capture_output=True, text=True)
        shutil.rmtree(parent, ignore_errors=True)
        subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "prune"], capture_output=True, text=True)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """Cores, CPU model, platform, Python and the load average now."""
    return {
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }


def _versions(packages: Iterable[str] = ("numpy", "scipy", "highspy", "cvxpy")) -> dict:
    import importlib.metadata as im

    out: dict[str, str | None] = {}
    for pkg in packages:
        try:
            out[pkg] = im.version(pkg)
        except im.PackageNotFoundError:
            out[pkg] = None
    return out


# -- running -----------------------------------------------------------------------------------------

_BRACKET_KEYS = {"lower": ("lower", "lower_bound"), "upper": ("upper", "upper_bound"),
                 "gap": ("gap", "relative_gap"), "certified": ("certified",)}


def _summarise(side: dict, runs: list[dict], metric: tuple[str, str] = SECONDS) -> dict:
    """Fill a side's timing, metric, memory, result, error and bracket fields from its repeats."""
    ok_runs = [r for r in runs if r.get("ok")]
    failed = [r for r in runs if not r.get("ok")]
    side["ok"] = bool(runs) and not failed
    side["seconds"] = [r["seconds"] for r in ok_runs]
    side["seconds_median"] = statistics.median(side["seconds"]) if side["seconds"] else None
    if metric == SECONDS:
        side["metric_values"] = list(side["seconds"])
    else:
        vals = [_number((r.get("result") or {}).get(metric[0])) for r in ok_runs]
        side["metric_values"] = [v for v in vals if v is not None and not math.isnan(v)]
        if ok_runs and len(side["metric_values"]) < len(ok_runs) and side["ok"]:
            side["ok"] = False
            side["error"] = {"type": "MissingMetric", "traceback": "",
                             "message": f"the returned dict has no number under {metric[0]!r}"}
    side["metric_median"] = statistics.median(side["metric_values"]) if side["metric_values"] else None
    peaks = [r.get("peak_rss_bytes") for r in runs if r.get("peak_rss_bytes")]
    side["peak_rss_bytes"] = max(peaks) if peaks else None
    side["result"] = ok_runs[-1]["result"] if ok_runs else None
    if failed or "error" not in side:
        side["error"] = failed[0].get("error") if failed else None
    res = side["result"] or {}
    for key, names in _BRACKET_KEYS.items():
        side[key] = next((res[n] for n in names if res.get(n) is not None), None)
    return side


def _number(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v


def run_case(c: Case, file: Path, *, repeats: int, timeout: float, baseline_tree: Path | None,
             overrides: dict | None = None, run_id: str = "", date: str = "") -> dict:
    """Time one case (both sides, alternating) and return its record (see the module docstring)."""
    params = {**c.params, **(overrides or {})}
    n = max(1, min(repeats, c.max_repeats or repeats))
    limit = float(c.timeout or timeout)
    b = c.baseline
    base_limit = float((b.timeout if b is not None and getattr(b, "timeout", None) else None)
                       or c.baseline_timeout or limit)
    ours = {"kind": "optmech", "label": "optmech", **tree_info(REPO_ROOT), "skipped": None, "timeout_s": limit}
    if b is None:
        base: dict[str, Any] = {"kind": "none", "label": "—", "skipped": "no baseline"}
    elif b.kind == "commit":
        base = {"kind": "commit", "label": b.label, "skipped": None if baseline_tree else
                "no --baseline-commit / --baseline-tree given"}
        if baseline_tree:
            base.update(tree_info(baseline_tree))
            base["label"] = (base["commit"] or str(baseline_tree))[:10]
    else:
        base = {"kind": b.kind, "label": b.label, "package": b.package, "skipped": None}
        if b.package:
            base["version"] = _versions([b.package])[b.package]
    if b is not None:
        base["timeout_s"] = base_limit
    ours_runs: list[dict] = []
    base_runs: list[dict] = []
    first_ours: dict | None = None
    for i in range(n):
        order = ("ours", "base") if i % 2 == 0 else ("base", "ours")
        for which in order:
            if which == "ours":
                if ours_runs and not ours_runs[-1].get("ok"):
                    continue
                r = _run_child(file, c.name, "ours", params, REPO_ROOT, None, limit)
                ours_runs.append(r)
                if first_ours is None and r.get("ok"):
                    first_ours = r["result"]
            else:
                if base["skipped"] or (base_runs and not base_runs[-1].get("ok")):
                    continue
                if b is not None and b.kind != "commit" and b.fn is not None and "ours" in \
                        inspect.signature(b.fn).parameters and first_ours is None:
                    base["skipped"] = "optmech's side failed (this baseline needs its result)"
                    continue
                if b is not None and b.kind == "commit":
                    r = _run_child(file, c.name, "ours", params, baseline_tree, None,  # type: ignore[arg-type]
                                   base_limit)
                else:
                    r = _run_child(file, c.name, "baseline", params, REPO_ROOT, first_ours, base_limit)
                base_runs.append(r)
    metric = getattr(c, "metric", SECONDS)
    _summarise(ours, ours_runs, metric)
    if base["skipped"] is None or base_runs:
        _summarise(base, base_runs, metric)
    else:
        base.update(ok=None, seconds=[], seconds_median=None, metric_values=[], metric_median=None,
                    peak_rss_bytes=None, result=None, error=None)
    tn, tb = _number(ours.get("metric_median")), _number(base.get("metric_median"))
    ratio = tn / tb if tn is not None and tb and ours["ok"] and base.get("ok") else None
    overlap = None
    if ours.get("certified") is True and base.get("certified") is True:
        lo = [_number(s.get("lower")) for s in (ours, base)]
        hi = [_number(s.get("upper")) for s in (ours, base)]
        if None not in lo and None not in hi:
            overlap = max(lo) <= min(hi)  # type: ignore[type-var]
    status = "failed" if not ours["ok"] else ("baseline_failed" if base.get("ok") is False else "ok")
    return {"schema": SCHEMA, "run_id": run_id, "date": date, "file": _rel(file), "case": c.name, "params": params,
            "repeats": n, "status": status, "ours": ours, "baseline": base,
            "metric": {"key": metric[0], "better": metric[1]}, "ratio": ratio, "brackets_overlap": overlap, "machine": machine(), "versions": _versions()}


def _rel(file: Path) -> str:
    try:
        return Path(file).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(file)


def results_path(file: Path) -> Path:
    """Where ``run`` appends the records of ``file``: ``benchmarks/results/<stem>.jsonl``."""
    return RESULTS_DIR / f"{Path(file).stem}.jsonl"


def append_record(path: Path, record: dict) -> None:
    """Append one record as a JSON line (non-finite floats as strings)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(json_safe(record), ensure_ascii=False, default=str) + "\n")


def read_records(paths: Iterable[Path]) -> list[dict]:
    """Every schema-1 record of the given JSON-lines files, in file order (bad lines reported, skipped)."""
    out: list[dict] = []
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            print(f"harness: cannot read {path}: {exc}", file=sys.stderr)
            continue
        for k, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                print(f"harness: {path}:{k}: not JSON, skipped", file=sys.stderr)
                continue
            if not isinstance(rec, dict) or rec.get("schema") != SCHEMA or "case" not in rec or "file" not in rec:
                print(f"harness: {path}:{k}: not a schema-{SCHEMA} record, skipped", file=sys.stderr)
                continue
            out.append(rec)
    return out


def run_file(file: str | os.PathLike, *, repeats: int = 3, timeout: float = 600.0, only: Sequence[str] = (),
             baseline_commit: str | None = None, baseline_tree: str | os.PathLike | None = None,
             overrides: dict | None = None, results: Path | None = None,
             echo: Callable[[str], None] = print) -> list[dict]:
    """Run the (selected) cases of a bench file; append and return their records.

    ``only``: case names (an exact name selects that case alone), or substrings of names; each must
    select at least one case.
    """
    path = Path(file).resolve()
    cases = discover(load_bench(path))
    if only:
        names = {c.name for c in cases}
        hit = lambda o, n: o == n if o in names else o in n  # noqa: E731 - an exact name wins over substrings
        picked = [c for c in cases if any(hit(o, c.name) for o in only)]
        missing = [o for o in only if not any(hit(o, c.name) for c in cases)]
        if missing:
            raise ValueError(f"no case of {_rel(path)} matches {missing}; cases: {[c.name for c in cases]}")
        cases = picked
    out_path = results or results_path(path)
    run_id = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
    date = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    needs_tree = any(c.baseline is not None and c.baseline.kind == "commit" for c in cases)
    with contextlib.ExitStack() as stack:
        tree: Path | None = Path(baseline_tree).resolve() if baseline_tree else None
        if baseline_commit and needs_tree:
            tree = stack.enter_context(baseline_worktree(baseline_commit))
        records = []
        for c in cases:
            rec = run_case(c, path, repeats=repeats, timeout=timeout, baseline_tree=tree, overrides=overrides,
                           run_id=run_id, date=date)
            if baseline_commit and rec["baseline"]["kind"] == "commit":
                rec["baseline"]["tree"] = f"git worktree of {baseline_commit} (removed)"
            append_record(out_path, rec)
            records.append(json.loads(json.dumps(json_safe(rec), default=str)))
            echo(_one_line(rec))
    echo(f"wrote {len(records)} record(s) to {out_path}")
    return records


def _one_line(rec: dict) -> str:
    o, b = rec["ours"], rec["baseline"]
    if rec["status"] == "failed":
        return f"{rec['case']}: FAILED {_err(o)}"
    text = f"{rec['case']}: optmech {_s(o.get('seconds_median'))} s"
    if b.get("skipped"):
        return text + f"; baseline skipped ({b['skipped']})"
    if b.get("ok") is False:
        return text + f"; baseline {b['label']} FAILED {_err(b)}"
    return text + f", {b['label']} {_s(b.get('seconds_median'))} s, ratio {_s(rec.get('ratio'))}" + _metric_tag(rec)


def _metric_tag(rec: dict) -> str:
    """Empty for seconds; else `` (KEY, higher is better)``, the figure the ratio compares."""
    m = rec.get("metric") or {}
    if not m or m.get("key", "seconds") == "seconds":
        return ""
    return f" ({m['key']}, {m.get('better', 'lower')} is better)"


def _err(side: dict) -> str:
    e = side.get("error") or {}
    text = f"{e.get('type', 'Error')}: {e.get('message', '')}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= 120 else text[:119] + "…"


def _s(x: Any, spec: str = ".3g") -> str:
    v = _number(x)
    return "—" if v is None or math.isnan(v) else format(v, spec)


# -- the table ---------------------------------------------------------------------------------------


def latest(records: Iterable[dict]) -> list[dict]:
    """For each (file, case), the record with the latest ``date`` (a later line wins a tie); first-seen order."""
    best: dict[tuple[str, str], dict] = {}
    for rec in records:
        key = (rec["file"], rec["case"])
        if key not in best or str(rec.get("date", "")) >= str(best[key].get("date", "")):
            best[key] = rec
    return list(best.values())


def _gap_cell(side: dict) -> str:
    gap = _number(side.get("gap"))
    if gap is None:
        return "—"
    return f"{gap:.2g}" + ("" if side.get("certified") is True else " (uncertified)")


def render_table(records: Iterable[dict]) -> str:
    """Markdown: one table per bench file from the latest record of each case, then its runs."""
    recs = latest(records)
    if not recs:
        return ("_No harness results yet: run `python -m benchmarks.harness run benchmarks/bench_engine.py "
                "--baseline-commit <sha>`, then `python -m benchmarks.harness table --write-readme`._")
    parts: list[str] = []
    for file in sorted({r["file"] for r in recs}):
        rows, runs = [], {}
        for r in (x for x in recs if x["file"] == file):
            o, b = r["ours"], r["baseline"]
            runs.setdefault(r.get("run_id"), r)
            if r["status"] == "failed":
                rows.append([r["case"], b.get("label", "—"), "failed: " + _err(o), "—", "—", "—", ""])
                continue
            if b.get("skipped"):
                bcell = "— (" + str(b["skipped"]) + ")"
            elif b.get("ok") is False:
                bcell = "failed: " + _err(b)
            else:
                bcell = _s(b.get("seconds_median"))
            notes = [str(s["result"]["note"]) if isinstance(s.get("result"), dict) and s["result"].get("note")
                     else "" for s in (o, b)]
            note = notes[0] + (f"; baseline: {notes[1]}" if notes[1] and notes[1] != notes[0] and
                               b.get("kind") == "commit" else (f"; {notes[1]}" if notes[1] != notes[0] else ""))
            note = note.strip("; ")
            if r.get("brackets_overlap") is False:
                note = ("certified brackets DISJOINT; " + note).rstrip("; ")
            rows.append([r["case"], b.get("label", "—") + (f" {b['version']}" if b.get("version") else ""),
                         _s(o.get("seconds_median")), bcell,
                         _s(r.get("ratio")) + (_metric_tag(r) if r.get("ratio") is not None else ""),
                         _gap_cell(o), note])
        parts.append(f"#### `{file}`\n")
        rows = [[str(cell).replace("\\|", "|").replace("|", "\\|") for cell in row] for row in rows]
        parts.append(markdown_table(["case", "baseline", "optmech s", "baseline s", "optmech/baseline", "gap",
                                     "note"], rows))
        parts.append("")
        for rec in runs.values():
            m = rec.get("machine", {})
            o, b = rec["ours"], rec["baseline"]
            commit = (o.get("commit") or "?")[:10] + (" (+ uncommitted changes)" if o.get("dirty") else "")
            against_ = ""
            if b.get("kind") == "commit" and b.get("commit"):
                against_ = f" against {b['commit'][:10]}" + (" (+ uncommitted changes)" if b.get("dirty") else "")
            parts.append(f"Run {rec.get('date', '?')}: optmech {commit}{against_}; {m.get('cores', '?')} cores "
                         f"({m.get('cpu_model', '?')}), load {m.get('load_average')}; median of {rec.get('repeats')}"
                         " (fresh process per repeat, imports and warm-up untimed).")
        parts.append("")
    parts.append("optmech/baseline: the ratio of the seconds (below 1: optmech is faster) or, where the cell names "
                 "another figure, of that figure (e.g. rate, higher is better: above 1, optmech is faster). "
                 "gap: optmech's certified relative gap.")
    return "\n".join(parts).rstrip() + "\n"


def replace_block(text: str, block: str) -> str:
    """``text`` with what lies between the benchmark markers replaced by ``block`` (idempotent)."""
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < 0 or j < i:
        raise ValueError(f"markers {BEGIN} ... {END} not found (in that order)")
    return text[: i + len(BEGIN)] + "\n" + block.strip("\n") + "\n" + text[j:]


def write_readme(block: str, readme: Path = README) -> bool:
    """Replace the marked block of ``readme``; True when the file changed."""
    old = readme.read_text(encoding="utf-8")
    new = replace_block(old, block)
    if new != old:
        readme.write_text(new, encoding="utf-8")
    return new != old


# -- command line ------------------------------------------------------------------------------------


def _parse_set(items: Sequence[str]) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set wants KEY=VALUE, not {item!r}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``run`` / ``table`` / ``list`` (and the internal ``_child``); exit status 2 on bad input."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_child"]:
        return _child_main(argv[1])
    ap = argparse.ArgumentParser(prog="python -m benchmarks.harness", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="time the cases of bench files against their baselines")
    r.add_argument("files", nargs="+", type=Path)
    g = r.add_mutually_exclusive_group()
    g.add_argument("--baseline-commit", help="a commit: timed from a temporary git worktree")
    g.add_argument("--baseline-tree", type=Path, help="an existing checkout of optmech to compare with")
    r.add_argument("--repeats", type=int, default=3, help="timed runs per side (median)")
    r.add_argument("--only", action="append", default=[], help="case name or substring (repeatable)")
    r.add_argument("--timeout", type=float, default=600.0, help="seconds per repeat before it is killed")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case parameter (VALUE parsed as JSON when it can be)")
    r.add_argument("--results", type=Path, default=None, help="JSON-lines file (default results/<stem>.jsonl)")
    r.add_argument("--table", action="store_true", help="print the table of these records afterwards")
    t = sub.add_parser("table", help="the markdown table of the latest results")
    t.add_argument("--results", type=Path, action="append", default=None,
                   help="JSON-lines file(s) (default: benchmarks/results/*.jsonl)")
    t.add_argument("--write-readme", nargs="?", const=README, default=None, type=Path, metavar="README",
                   help="replace the marked block of README (default benchmarks/README.md)")
    ls = sub.add_parser("list", help="the cases of bench files")
    ls.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            for f in args.files:
                for c in discover(load_bench(f)):
                    kind = c.baseline.kind if c.baseline else "none"
                    print(f"{_rel(f)}\t{c.name}\tbaseline={kind}\tparams={json.dumps(c.params, ensure_ascii=False)}")
            return 0
        if args.cmd == "run":
            if args.repeats < 1:
                raise ValueError("--repeats must be at least 1")
            if args.timeout <= 0:
                raise ValueError("--timeout must be positive")
            if args.baseline_tree and not (args.baseline_tree / "optmech").is_dir():
                raise ValueError(f"--baseline-tree {args.baseline_tree}: no optmech/ package there")
            if args.baseline_commit and not _git(REPO_ROOT, "rev-parse", "--verify", "--quiet",
                                                 f"{args.baseline_commit}^{{commit}}"):
                raise ValueError(f"--baseline-commit {args.baseline_commit!r}: not a commit of {REPO_ROOT}")
            overrides = _parse_set(args.set)
            for f in args.files:
                if not f.is_file():
                    raise ValueError(f"no such bench file: {f}")
            recs: list[dict] = []
            for f in args.files:
                recs += run_file(f, repeats=args.repeats, timeout=args.timeout, only=args.only,
                                 baseline_commit=args.baseline_commit, baseline_tree=args.baseline_tree,
                                 overrides=overrides, results=args.results)
            if args.table:
                print()
                print(render_table(recs))
            return 0
        paths = args.results or sorted(RESULTS_DIR.glob("*.jsonl"))
        block = render_table(read_records(paths))
        if args.write_readme:
            changed = write_readme(block, args.write_readme)
            print(f"{args.write_readme}: {'updated' if changed else 'unchanged'}")
        else:
            print(block, end="")
        return 0
    except (ValueError, RuntimeError, FileNotFoundError, ImportError, SyntaxError) as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
