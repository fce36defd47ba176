"""``optmech run``, ``optmech store`` and ``optmech reproduce``: sweeps into result stores, browsing
them, and the catalogue of the source papers' tables and figures.

Parsers are added by :func:`add_parsers` (each with its handler as ``args.handler``);
:mod:`optmech.cli.main` dispatches and maps errors to exit statuses.
"""

from __future__ import annotations

import argparse
import json
import sys

from optmech.cli.args import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_UNCERTIFIED,
    ListAction,
    add_command,
    add_json,
    add_workers,
    check_output_path,
    list_items,
    parse_workers,
)

_SWEEP_EXITS = (EXIT_OK, EXIT_INPUT, EXIT_UNCERTIFIED, EXIT_INTERNAL)


def add_parsers(sub) -> None:
    """The ``run``, ``store`` and ``reproduce`` subcommands."""
    rn = add_command(
        sub, "run", summary="run a sweep spec (TOML) into a result store",
        description="Validate a sweep spec (a TOML file: fixed parameters, a grid or zipped axes; every problem of "
                    "it is checked as optmech solve checks its flags, before the store is created), then solve its "
                    "problems on local worker processes or a Dask cluster, writing each certified result to a "
                    "SQLite store as it finishes; --resume computes only what the store lacks.",
        examples=["optmech run sweep.toml --workers 4",
                  "optmech run sweep.toml --store results.sqlite --resume --json",
                  "optmech run sweep.toml --scheduler tcp://127.0.0.1:8786"],
        exits=_SWEEP_EXITS,
        notes="Exit status 3 means at least one problem failed (listed in the output). Ctrl-C (or SIGTERM) stops "
              "handing out problems and stores those in flight that finish within --grace seconds; a second Ctrl-C "
              "abandons them. The run then says how many problems are stored and exits 130 (143 for SIGTERM); "
              "--resume continues it. A lost Dask scheduler, or one without workers for --worker-timeout seconds, "
              "ends the run the same way with exit status 3.")
    rn.add_argument("spec", metavar="SPEC.toml", help="the sweep spec")
    add_workers(rn, one="even 1 solves in a worker process, so that Ctrl-C is answered at once")
    rn.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="a Dask scheduler, tcp://host:port (optmech[dask]) (default: local processes)")
    rn.add_argument("--store", default=None, metavar="FILE.sqlite",
                    help="the result store, created or resumed; its folder must exist and be writable (default: the "
                         "spec's name, as NAME.sqlite in the current folder)")
    rn.add_argument("--resume", action="store_true", help="skip the problems already in the store")
    rn.add_argument("--worker-timeout", default="60", metavar="SECONDS",
                    help="with --scheduler: give up when the scheduler has had no worker for this long (default: 60)")
    rn.add_argument("--grace", default="10", metavar="SECONDS",
                    help="after Ctrl-C or SIGTERM, how long to wait for the problems in flight (default: 10)")
    rn.add_argument("--force", action="store_true", help="allow sweeps above the size limit (500 problems)")
    add_json(rn, help="print a summary object: computed, skipped, failed, problems, store")
    rn.add_argument("--quick", action="store_true", help="use the spec's [quick] grid axes")
    rn.set_defaults(handler=cmd_run)

    st = add_command(
        sub, "store", summary="browse a result store: ls, show KEY, export",
        description="Read a result store written by optmech run or optmech reproduce, without changing it: list its "
                    "problems (the parameters that vary between them, status, certified flag and bracket), show one "
                    "stored record, or export the rows as CSV or JSON. ls and export filter with --where and sort "
                    "with --sort (by default by the swept parameters).",
        examples=["optmech store ls results.sqlite",
                  "optmech store ls results.sqlite --where epsilon=0.5 --where 'sensitivity>=4' --sort=-relative_gap",
                  "optmech store show results.sqlite 10178e66",
                  "optmech store export results.sqlite --format json --out results.json"],
        exits=(EXIT_OK, EXIT_INPUT, EXIT_INTERNAL))
    st.add_argument("action", choices=["ls", "show", "export"],
                    help="ls: one line per problem; show: one record; export: a table")
    st.add_argument("store", metavar="STORE", help="the SQLite store written by optmech run --store")
    st.add_argument("key", nargs="?", default=None, help="show: the problem key, or a prefix naming one (see ls)")
    st.add_argument("--where", action="append", default=[], metavar="COND",
                    help="ls/export: keep rows with NAME=VALUE (or !=, <, <=, >, >=), e.g. epsilon=0.5; repeat to "
                         "combine (default: all rows)")
    st.add_argument("--sort", default=None, action=ListAction, metavar="COLUMN",
                    help="ls/export: sort by these columns, -COLUMN descending (write --sort=-COLUMN); a list "
                         "(default: the parameters that vary)")
    st.add_argument("--format", default="csv", choices=["csv", "json"], help="export format")
    st.add_argument("--out", default=None, metavar="FILE",
                    help="export: write to FILE, checked before reading the store (default: stdout)")
    add_json(st, help="ls/show: JSON output")
    st.set_defaults(handler=cmd_store)

    rp = add_command(
        sub, "reproduce", summary="run the catalogue of the source papers' tables and figures; write DIR/README.md and figures",
        description="Run every catalogue spec (one per table, figure or statement of the source papers, and the "
                    "conjecture checks) as one deduplicated sweep into DIR/results.sqlite, then write DIR/README.md "
                    "setting each certified result beside what the paper states, and DIR/figures/*.png. Running "
                    "again into the same DIR reuses every stored result.",
        examples=["optmech reproduce --quick --out report",
                  "optmech reproduce --out report --only 000,fig7 --workers 2",
                  "optmech reproduce --list --quick"],
        exits=_SWEEP_EXITS,
        notes="A disagreement with a paper does not fail the command; exit status 3 means a problem failed.")
    rp.add_argument("--out", default=None, metavar="DIR",
                    help="the report folder, created if absent (with its parents), results.sqlite in it resumed "
                         "(required, except with --list)")
    rp.add_argument("--quick", action="store_true", help="the small grids (within 2 minutes on 2 cores)")
    add_workers(rp, one="even 1 solves in a worker process, so that Ctrl-C is answered at once")
    rp.add_argument("--only", default=None, action=ListAction, metavar="NAME",
                    help="run the specs whose names contain one of these strings (e.g. 000,fig2.7); a list (default: all)")
    rp.add_argument("--list", action="store_true", help="list the catalogue (with --quick: its small grids) and exit; "
                                                         "needs no --out")
    add_json(rp, help="print a summary object on stdout")
    rp.set_defaults(handler=cmd_reproduce)


def cmd_run(args: argparse.Namespace) -> int:
    """``optmech run SPEC.toml``: validate, then run the sweep into the store."""
    import os

    from optmech.sweep import load_spec, run_sweep

    from optmech.cli.args import parse_number
    from optmech.errors import SpecError

    spec = load_spec(args.spec, force=args.force, quick=args.quick)  # every problem validated
    workers = parse_workers(args.workers)
    grace = parse_number("grace", args.grace)
    if grace is None or grace < 0:
        raise SpecError(f"--grace must be a number of seconds >= 0, got {args.grace!r}")
    store = default_store(spec.name) if args.store is None else args.store
    check_output_path("--store", store)
    progress = sys.stderr.isatty() and not os.environ.get("CI")
    worker_timeout = parse_number("worker-timeout", args.worker_timeout)
    if worker_timeout is None or not worker_timeout > 0:
        raise SpecError(f"--worker-timeout must be a number of seconds > 0, got {args.worker_timeout!r}")
    out = run_sweep(spec, store, workers=workers, scheduler=args.scheduler, resume=args.resume, progress=progress,
                    grace=grace, worker_timeout=worker_timeout)
    if args.json:
        sys.stdout.write(json.dumps(out.to_dict()) + "\n")
    else:
        sys.stdout.write(f"{spec.name}: {out.computed} computed, {out.skipped} skipped, {out.failed} failed "
                         f"({out.problems} problems) -> {store}\n")
        for e in out.errors[:5]:
            sys.stdout.write(f"  failed {e['key']}: {e['error']}\n")
    if out.interrupted is not None:
        import signal

        sys.stderr.write(f"optmech: {out.stop_line()}\n")
        return 128 + int(getattr(signal, out.interrupted))
    if out.lost is not None:
        sys.stderr.write(f"optmech: {out.stop_line()}\n")
        return EXIT_UNCERTIFIED
    return EXIT_OK if out.failed == 0 else EXIT_UNCERTIFIED


def default_store(name: str) -> str:
    """The store a spec writes to by default: its name as a file name, ``NAME.sqlite`` in the current folder.

    >>> default_store("staircase gain (ε ≈ 10)")
    'staircase-gain-ε-10.sqlite'
    """
    import re

    slug = re.sub(r"[^\w.-]+", "-", name.strip(), flags=re.UNICODE).strip("-.") or "sweep"
    return slug + ".sqlite"


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``optmech reproduce [--quick] --out DIR``: the catalogue, its store, DIR/README.md and figures."""
    import os

    from optmech.errors import SpecError
    from optmech.reproduce import load_catalogue, reproduce
    from optmech.sources import cite

    only = None if args.only is None else list_items("--only", args.only, what="name")
    if args.list:
        for spec in load_catalogue(quick=args.quick, only=only):
            rep = spec.reproduce
            sys.stdout.write(f"{spec.name}: {cite(rep['seed'])}, {rep['item']} ({len(spec.problems)} problems)\n")
        return EXIT_OK
    if args.out is None:
        raise SpecError("reproduce needs --out DIR, the report folder (only --list runs without it)")
    check_output_path("--out", args.out, folder=True)
    workers = parse_workers(args.workers)
    progress = sys.stderr.isatty() and not os.environ.get("CI")
    out = reproduce(args.out, quick=args.quick, workers=workers, only=only, progress=progress)
    if out.interrupted is not None:
        import signal

        stopped = out.interrupted
        if args.json:
            sys.stdout.write(json.dumps(out.to_dict() | {"interrupted": stopped.interrupted, "stored": stopped.stored,
                                                         "problems": stopped.problems,
                                                         "abandoned": stopped.abandoned}) + "\n")
        sys.stderr.write(f"optmech: {stopped.stop_line().replace('--resume', 'the same command')}; no report written\n")
        return 128 + int(getattr(signal, stopped.interrupted))
    if args.json:
        sys.stdout.write(json.dumps(out.to_dict()) + "\n")
    else:
        agreed = sum(s.agreed for s in out.sections)
        differed = sum(s.differed for s in out.sections)
        sys.stdout.write(f"optmech reproduce: {len(out.sections)} experiments, {agreed} statements agree, {differed} differ "
                         f"(findings), {out.failed} problems failed; {out.computed} solved, {out.skipped} reused, "
                         f"{out.seconds:.0f} s\n")
        for s in out.sections:
            sys.stdout.write(f"  {s.name:32s} {s.agreed:3d} agree {s.differed:3d} differ"
                             + (f"  {s.failed} FAILED" if s.failed else "") + "\n")
        sys.stdout.write(f"report: {os.path.join(args.out, 'README.md')}\n")
    return EXIT_OK if out.failed == 0 else EXIT_UNCERTIFIED


def cmd_store(args: argparse.Namespace) -> int:
    """``optmech store ls|show|export STORE``: read-only browsing of a result store."""
    import os

    from optmech.errors import SpecError
    from optmech.store import ResultStore

    if not os.path.isfile(args.store):
        raise SpecError(f"no such store: {args.store}")
    if args.out is not None:
        if args.action != "export":
            raise SpecError(f"--out applies to store export, not store {args.action}")
        check_output_path("--out", args.out)
    if args.action == "show" and args.key is None:
        raise SpecError("store show needs a KEY (see store ls)")
    if args.action != "show" and args.key is not None:
        raise SpecError(f"store {args.action} takes no KEY")
    if args.action == "show" and (args.where or args.sort is not None):
        raise SpecError("--where and --sort apply to store ls and store export")
    sort = None if args.sort is None else list_items("--sort", args.sort, what="column")
    with ResultStore(args.store, readonly=True) as st:  # browsing never writes, and works on read-only stores
        if args.action == "export":
            text = st.export(args.format, where=args.where, sort=sort)
            if args.out is None:
                sys.stdout.write(text)
            else:
                tmp = args.out + ".part"
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, args.out)
            return EXIT_OK
        if args.action == "show":
            key = _full_key(st, args.key, args.store)
            sys.stdout.write(json.dumps(st.record(key), indent=1, default=str) + "\n")
            return EXIT_OK
        rows = st.query(args.where, sort)
        if args.json:
            sys.stdout.write(json.dumps(rows, default=str) + "\n")
            return EXIT_OK
        sys.stdout.write(listing(rows, st.columns(), args.store, total=len(st)))
    return EXIT_OK


def _full_key(st, prefix: str, path: str) -> str:
    """The one stored key starting with ``prefix`` (one-line error when none or several do)."""
    from optmech.errors import SpecError

    if st.has(prefix):
        return prefix
    found = [k for k in st.keys() if k.startswith(prefix)] if prefix else []
    if not found:
        raise SpecError(f"no problem with key {prefix!r} in {path}")
    if len(found) > 1:
        raise SpecError(f"key prefix {prefix!r} names {len(found)} problems in {path}: give more characters")
    return found[0]


def listing(rows: list[dict], columns: list[str], path: str, *, total: int) -> str:
    """``store ls`` as text: a heading with the parameters every row shares, then one aligned line per
    problem: its key (12 characters, enough for ``store show``), the parameters that vary, status,
    certified flag, bracket, relative gap and seconds."""
    from optmech.store import parameter_names, varying

    shown = f"{len(rows)} of {total}" if len(rows) != total else f"{total}"
    lines = [f"{shown} problem(s) in {path}"]
    if not rows:
        return lines[0] + "\n"
    swept = varying(rows)
    fixed = [(n, rows[0].get(n)) for n in parameter_names(rows[0]) if n not in swept and rows[0].get(n) is not None]
    if fixed:
        lines[0] += " — " + ", ".join(f"{n}={_text(v)}" for n, v in fixed)

    def num(v, spec: str) -> str:
        return format(v, spec) if isinstance(v, (int, float)) and not isinstance(v, bool) else _text(v)

    head = ["key", *swept, "status", "certified", "lower_bound", "upper_bound", "gap", "seconds"]
    table = [head]
    for r in rows:
        table.append([r["key"][:12], *(_text(r.get(n)) for n in swept), _text(r.get("status")),
                      {True: "yes", False: "NO"}.get(r.get("certified"), "—"), num(r.get("lower_bound"), ".10g"),
                      num(r.get("upper_bound"), ".10g"), num(r.get("relative_gap"), ".2g"), num(r.get("seconds"), ".3g")])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines) + "\n"


def _text(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return format(v, "g")
    return str(v)
