"""Command-line interface: ``optmech solve|sample|mechanism|audit|solvers ...``.

Exit status: 0 success; 2 invalid input (one line on stderr); 3 the result could not be certified
(printed, plainly labelled UNCERTIFIED); 4 the solver failed; 1 an internal error.
Heavy modules are imported only inside commands, so ``optmech --version`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Sequence

from optmech import __version__
from optmech.cli_args import parse_number as _number

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_UNCERTIFIED, EXIT_SOLVER = 0, 1, 2, 3, 4


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"optmech: error: {message}\n")
        raise SystemExit(EXIT_INPUT)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="optmech", description="Optimal differential-privacy noise by LP, with certified bounds.")
    p.add_argument("--version", action="version", version=f"optmech {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    s = sub.add_parser("solve", help="solve one problem and print the certified bracket")
    s.add_argument("--privacy", default="pure", choices=["pure", "approx", "lipschitz"],
                   help="privacy notion: pure ε-DP, approx (ε,δ)-DP, or lipschitz (ε per unit distance) (default: pure)")
    s.add_argument("--utility", default="cost", choices=["cost", "wasserstein", "surrogate"],
                   help="what to minimise: the expected --cost (default), the 1-Wasserstein distance between X and X + noise "
                        "for an input X (--input-pmf or --input), or the paper's surrogate E|noise| [QHFL22]")
    s.add_argument("--input-pmf", default=None, metavar="FILE", help="input distribution of X for --utility: a CSV with header k,p")
    s.add_argument("--input", default=None, metavar="SPEC",
                   help="built-in input distribution: poisson:RATE:LO:HI, gaussian:MU:SIGMA:LO:HI or uniform:LO:HI")
    s.add_argument("--epsilon", required=True, help="privacy parameter ε > 0 (ε >= 0 with --privacy approx)")
    s.add_argument("--delta", default=None, help="δ in [0, 1) for --privacy approx")
    s.add_argument("--dim", default="1", help="dimension d of the query (d > 1: costs l1|l2|l2sq|linf or an expression in x1..xd)")
    s.add_argument("--candidate", default=None, metavar="staircase|layered|laplace|FILE.json",
                   help="conjecture mode: compare this mechanism's exact cost with the certified lower bound")
    s.add_argument("--norm", default="l1", help="norm of the sensitivity in d > 1 dimensions: l1 (default), l2 or linf (pure DP)")
    s.add_argument("--sensitivity", default="1", help="sensitivity Δ > 0 (integer on the integer domain; default 1)")
    s.add_argument("--domain", default="continuous", choices=["integer", "continuous"], help="noise domain (default: continuous)")
    s.add_argument("--resolution", default=None, help="cells per Δ on the continuous domain (default: automatic in 1-D, 4 in d = 2, 2 in d >= 3)")
    s.add_argument("--target-gap", default=None, help="relative gap at which to stop (default 1e-9 integer, 1e-4 continuous)")
    s.add_argument("--cost", default="abs", help="abs | square | pow:P | an expression in x; with --dim d > 1: l1 | l2 | l2sq | linf | an expression in x1..xd (default: abs = l1)")
    s.add_argument("--solver", default="default", help="solver profile name or TOML file (default: default)")
    s.add_argument("--time-limit", default=None, help="wall-clock budget in seconds")
    s.add_argument("--no-symmetry", action="store_true", help="never use the symmetric monotone fast path")
    s.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    s.add_argument("--plot", metavar="FILE", default=None, help="write a PNG of the mechanism beside the best closed form")
    s.add_argument("--save", metavar="FILE", default=None, help="write the result, mechanism included, as JSON")
    sub.add_parser("solvers", help="list solver backends and profiles")
    rn = sub.add_parser("run", help="run a sweep spec (TOML) into a result store")
    rn.add_argument("spec", metavar="SPEC.toml")
    rn.add_argument("--workers", default=None, help="local worker processes (default: all cores; 1 runs in this process)")
    rn.add_argument("--scheduler", default=None, metavar="ADDRESS", help="a Dask scheduler, tcp://host:port (optmech[dask])")
    rn.add_argument("--store", default=None, metavar="FILE.sqlite", help="the result store (default: SPEC's name .sqlite)")
    rn.add_argument("--resume", action="store_true", help="skip the problems already in the store")
    rn.add_argument("--force", action="store_true", help="allow sweeps above the size limit")
    rn.add_argument("--json", action="store_true", help="print a summary object: computed, skipped, failed")
    rn.add_argument("--quick", action="store_true", help="use the spec's [quick] grid axes")
    rp = sub.add_parser("reproduce", help="run the catalogue of the source papers' tables and figures; write DIR/README.md and figures")
    rp.add_argument("--out", required=True, metavar="DIR", help="the report folder (results.sqlite in it is resumed)")
    rp.add_argument("--quick", action="store_true", help="the small grids (within 2 minutes on 2 cores)")
    rp.add_argument("--workers", default=None, help="local worker processes (default: all cores; 1 runs in this process)")
    rp.add_argument("--only", default=None, metavar="NAMES", help="comma-separated parts of catalogue names to run (e.g. 000,fig2.7)")
    rp.add_argument("--list", action="store_true", help="list the catalogue and exit")
    rp.add_argument("--json", action="store_true", help="print a summary object on stdout")
    st = sub.add_parser("store", help="browse a result store: ls, show KEY, export")
    st.add_argument("action", choices=["ls", "show", "export"], help="ls: one line per problem; show: one record; export: a table")
    st.add_argument("store", metavar="STORE", help="the SQLite store written by optmech run --store")
    st.add_argument("key", nargs="?", default=None, help="the problem key (show)")
    st.add_argument("--format", default="csv", choices=["csv", "json"], help="export format (default csv)")
    st.add_argument("--out", default=None, help="export: write to FILE instead of stdout")
    st.add_argument("--json", action="store_true", help="ls/show: JSON output")
    c = sub.add_parser("compare", help="the epsilon-DP optimum, the epsilon-Lipschitz optimum and Laplace side by side")
    c.add_argument("--epsilon", required=True, help="ε > 0 (DP with sensitivity 1; Lipschitz per unit distance)")
    c.add_argument("--cost", default="abs", help="1-D cost (abs, square, pow:P, expression), or l1|l2sq (|l2 with --norm l2) with --dim")
    c.add_argument("--dim", default="1", help="dimension d")
    c.add_argument("--norm", default="l1", help="l1 (default) or l2, in d > 1 dimensions")
    c.add_argument("--resolution", default=None, help="cells per unit for the DP solve in d > 1 (default 4 in d = 2)")
    c.add_argument("--time-limit", default=None, help="wall-clock budget per solve in seconds")
    c.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    c.add_argument("--plot", metavar="FILE", default=None, help="write a PNG: costs with brackets (and 1-D densities)")
    t = sub.add_parser("table", help="a bound table: one certified solve per (sensitivity, epsilon[, delta]) row")
    t.add_argument("--privacy", required=True, choices=["approx", "pure"])
    t.add_argument("--cost", default="abs", help="cost (1-D spec, or l1|l2|l2sq|linf with --dim > 1; default abs)")
    t.add_argument("--sensitivity", required=True, help="comma-separated sensitivities Δ")
    t.add_argument("--epsilon", required=True, help="comma-separated ε values")
    t.add_argument("--delta", default=None, help="comma-separated δ values (--privacy approx)")
    t.add_argument("--dim", default="1", help="dimension d (--privacy approx)")
    t.add_argument("--domain", default=None, choices=["integer", "continuous"], help="pure DP: noise domain (default integer)")
    t.add_argument("--format", default="text", choices=["text", "csv", "json", "markdown"])
    t.add_argument("--out", default=None, help="write the table to FILE instead of stdout")
    t.add_argument("--workers", default=None, help="worker processes (default: all cores)")
    t.add_argument("--force", action="store_true", help="allow tables above the row limit")
    t.add_argument("--solver", default="default", help="solver profile name or TOML file")
    t.add_argument("--time-limit", default=None, help="wall-clock budget per row in seconds")
    t.add_argument("--target-gap", default=None, help="relative gap at which each row stops")
    from optmech.cli_mechanisms import add_parsers

    add_parsers(sub)
    return p


def _problem(args: argparse.Namespace):
    from optmech.costs import parse_cost
    from optmech.errors import SpecError
    from optmech.spec import ApproxDP, Continuous, IntegerLattice, Problem, PureDP

    eps = _number("epsilon", args.epsilon)
    delta = _number("sensitivity", args.sensitivity)
    gap = _number("target-gap", args.target_gap)
    dim = _number("dim", args.dim, integer=True)
    if args.privacy == "approx":
        if args.delta is None:
            raise SpecError("--privacy approx needs --delta")
        if args.resolution is not None:
            raise SpecError("--resolution applies only to --domain continuous")
        privacy = ApproxDP(eps, _number("delta", args.delta))
        if args.domain != "integer":
            raise SpecError("--privacy approx is solved on the integer domain: add --domain integer")
        cost = args.cost if dim > 1 else parse_cost(args.cost)
        return Problem(privacy=privacy, cost=cost, sensitivity=delta, domain=IntegerLattice(), target_gap=gap,
                       symmetry="off" if args.no_symmetry else "auto", dim=dim, norm=args.norm)
    if args.delta is not None:
        raise SpecError("--delta applies only to --privacy approx")
    if dim != 1:
        if args.domain == "integer":
            if args.resolution is not None:
                raise SpecError("--resolution applies only to --domain continuous")
            domain = IntegerLattice()
        else:
            domain = Continuous(_number("resolution", args.resolution, integer=True) if args.resolution is not None else None)
        return Problem(privacy=PureDP(eps), cost=args.cost, sensitivity=delta, domain=domain, target_gap=gap,
                       symmetry="off" if args.no_symmetry else "auto", dim=dim, norm=args.norm)
    if args.domain == "integer":
        if args.resolution is not None:
            from optmech.errors import SpecError

            raise SpecError("--resolution applies only to --domain continuous")
        domain = IntegerLattice()
    else:
        domain = Continuous(_number("resolution", args.resolution, integer=True))
    return Problem(
        privacy=PureDP(eps),
        cost=parse_cost(args.cost),
        sensitivity=delta,
        domain=domain,
        target_gap=gap,
        symmetry="off" if args.no_symmetry else "auto",
    )


def _fmt(x: float) -> str:
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.12g}"


def format_result(result) -> str:
    """Readable text table of a Result."""
    pr = result.problem
    tag = "certified" if result.certified else "UNCERTIFIED — not an optimum"
    if pr.get("privacy") == "lipschitz" or pr.get("kind") == "wasserstein":
        return _format_other(result, tag)
    if pr.get("privacy") == "approx":
        return _format_approx(result, tag)
    if pr.get("dim", 1) > 1:
        return _format_nd(result, tag)
    head = (
        f"optmech {__version__} — 1-D pure ε-DP, epsilon={pr['epsilon']:g}, sensitivity={pr['sensitivity']:g}, "
        f"{pr['domain']}" + (f" (resolution {pr['resolution']})" if pr.get("resolution") else "")
        + (f" ({pr['cells_per_period']} cells per Δ, refined)" if pr.get("cells_per_period") and not pr.get("resolution") else "")
        + f", cost {pr['cost']}"
    )
    a = result.audit
    rows = [
        head,
        *_bracket_rows(result, tag),
        f"  realised epsilon  {a['realised_epsilon']:.15g} (audit {'passed' if a['passed'] else 'FAILED'})",
        f"  LP                rows {result.lp['rows']}, cols {result.lp['cols']}, nonzeros {result.lp['nonzeros']}"
        f" ({result.lp['builder']} builder, {result.solver['backend']} {result.solver['method']} {result.solver['version']})",
        f"  time              {result.seconds:.3f} s",
    ]
    if result.references:
        rows.append("  closed forms")
        rows.append(f"    {'name':<20}{'value':<22}{'inside bracket':<16}parameters")
        for r in result.references:
            params = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.parameters.items())
            rows.append(f"    {r.name:<20}{_fmt(r.value):<22}{'yes' if r.inside_bracket else 'no':<16}{params}")
    for c in result.claims:
        rows.append(f"  note: {c}")
    return "\n".join(rows + _candidate_rows(result))


def _format_nd(result, tag: str) -> str:
    pr, a = result.problem, result.audit
    rows = [
        f"optmech {__version__} — pure ε-DP on {'R' if pr.get('domain') == 'continuous' else 'Z'}^{pr['dim']}, "
        f"epsilon={pr['epsilon']:g}, sensitivity={pr['sensitivity']:g} "
        f"({pr['norm']}), cost {pr['cost']}",
        *_bracket_rows(result, tag),
        f"  realised epsilon  {a['realised_epsilon']!s:.17} (audit {'passed' if a['passed'] else 'FAILED'})",
        f"  LP                rows {result.lp['rows']}, cols {result.lp['cols']}, nonzeros {result.lp['nonzeros']}, "
        f"{result.lp['orbits']} orbits ({result.lp['builder']} builder)",
        f"  time              {result.seconds:.3f} s",
    ]
    for r in result.references:
        rows.append(f"  {r.name:<20}{_fmt(r.value):<22}{'inside bracket' if r.inside_bracket else 'outside bracket'}")
    rows += [f"  note: {c}" for c in result.claims]
    return "\n".join(rows + _candidate_rows(result))


def _format_approx(result, tag: str) -> str:
    pr, a = result.problem, result.audit
    rows = [
        f"optmech {__version__} — (ε,δ)-DP, epsilon={pr['epsilon']:g}, delta={pr['delta']:g}, "
        f"sensitivity={pr['sensitivity']:g} (ℓ1), dim {pr['dim']}, integer domain, cost {pr['cost']}",
        *_bracket_rows(result, tag),
        f"  audited delta     {a['realised_delta']!s:.17} over {a['shifts']} shifts (audit {'passed' if a['passed'] else 'FAILED'})",
        f"  LP                rows {result.lp['rows']}, cols {result.lp['cols']}, nonzeros {result.lp['nonzeros']}"
        f" ({result.lp['builder']} builder, {result.solver['backend']} {result.solver['method']} {result.solver['version']})",
        f"  time              {result.seconds:.3f} s",
    ]
    if result.references:
        rows.append("  bounds and closed forms")
        rows.append(f"    {'name':<20}{'kind':<7}{'value':<22}{'valid':<7}note")
        for r in result.references:
            valid = "-" if r.valid is None else ("yes" if r.valid else "NO")
            rows.append(f"    {r.name:<20}{(r.kind or '-'):<7}{_fmt(r.value):<22}{valid:<7}{r.note[:70]}")
    for c in result.claims:
        rows.append(f"  note: {c}")
    return "\n".join(rows)


def _format_other(result, tag: str) -> str:
    """Lipschitz privacy and Wasserstein utility: bracket, audit, references, claims."""
    pr, a = result.problem, result.audit or {}
    if pr.get("kind") == "wasserstein":
        inp = pr["input"]
        what = "surrogate utility E|noise| (P2 of [QHFL22])" if pr["utility"] == "surrogate" else "Wasserstein (W1) utility"
        head = (f"optmech {__version__} — {what}, {pr['privacy']} DP, epsilon={pr['epsilon']:g}"
                + (f", delta={pr['delta']:g}" if pr.get("delta") else "") + f", sensitivity m={pr['sensitivity']}, "
                f"input {inp.get('label', 'pmf')}")
    else:
        head = (f"optmech {__version__} — Lipschitz privacy, epsilon={pr['epsilon']:g} per unit distance, dim {pr['dim']} "
                f"({pr['norm']}), {pr['domain']}" + (f" (resolution {pr['resolution']})" if pr.get("resolution") else "")
                + f", cost {pr['cost']}")
    rows = [head, *_bracket_rows(result, tag)]
    if a.get("realised_epsilon") is not None:
        rows.append(f"  realised epsilon  {a['realised_epsilon']!s:.17} (audit {'passed' if a.get('passed') else 'FAILED'})")
    if result.lp:
        rows.append(f"  LP                rows {result.lp.get('rows')}, cols {result.lp.get('cols')}, "
                    f"nonzeros {result.lp.get('nonzeros')}")
    rows.append(f"  time              {result.seconds:.3f} s")
    for r in result.references:
        rows.append(f"  {r.name:<34}{_fmt(r.value):<22}{'inside bracket' if r.inside_bracket else 'outside bracket'}")
    rows += [f"  note: {c}" for c in result.claims]
    return "\n".join(rows)


def _bracket_rows(result, tag: str) -> list[str]:
    """The certified bracket, its relative gap and the status: the same three lines in every report."""
    return [
        f"  bracket ({tag})  [{_fmt(result.lower_bound)}, {_fmt(result.upper_bound)}]",
        f"  relative gap      {result.relative_gap:.3g}",
        f"  status            {result.status}: {result.message}",
    ]


def _candidate_rows(result) -> list[str]:
    c = result.candidate
    if not c:
        return []
    verdict = "optimal within the certificate" if c["optimal_within_certificate"] else "NOT shown optimal"
    gap = c["gap_to_lower_bound"]
    return [f"  candidate         {c['name']}: {_fmt(c['value'])}, gap to the lower bound "
            f"{'n/a' if gap is None else f'{gap:.3g}'} ({verdict})"]


def _solve_other(args: argparse.Namespace, tl: float | None):
    """--privacy lipschitz [KHP15] and --utility wasserstein|surrogate [QHFL22]: their own solvers."""
    from optmech.errors import SpecError

    for flag, value in (("--candidate", args.candidate), ("--plot", args.plot)):
        if value is not None:
            raise SpecError(f"{flag} applies to --utility cost with pure or approx privacy")
    gap = _number("target-gap", args.target_gap)
    if args.utility != "cost":
        from optmech.inputs import parse_input_spec, read_input_pmf
        from optmech.solve_wasserstein import solve_wasserstein

        if args.privacy == "lipschitz":
            raise SpecError("--utility wasserstein|surrogate takes --privacy pure or approx, not lipschitz")
        if (args.input_pmf is None) == (args.input is None):
            raise SpecError(f"--utility {args.utility} needs exactly one of --input-pmf FILE and --input SPEC")
        if args.domain != "integer" or args.dim != "1" or args.resolution is not None:
            raise SpecError(f"--utility {args.utility} is solved on the 1-D integer lattice: add --domain integer")
        inp = read_input_pmf(args.input_pmf) if args.input_pmf is not None else parse_input_spec(args.input)
        eps = _number("epsilon", args.epsilon)
        m = _number("sensitivity", args.sensitivity, integer=True)
        delta = 0.0
        if args.privacy == "approx":
            if args.delta is None:
                raise SpecError("--privacy approx needs --delta")
            delta = _number("delta", args.delta)
        elif args.delta is not None:
            raise SpecError("--delta applies only to --privacy approx")
        kw = {} if gap is None else {"target_gap": gap}
        return solve_wasserstein(inp, eps, m, delta=delta, utility=args.utility, time_limit=tl, solver=args.solver, **kw)
    from optmech.solve_lipschitz import solve_lipschitz

    if args.delta is not None:
        raise SpecError("Lipschitz privacy has no delta: drop --delta (or use --privacy approx)")
    if args.input_pmf is not None or args.input is not None:
        raise SpecError("--input-pmf/--input apply to --utility wasserstein|surrogate")
    kw = {} if gap is None else {"target_gap": gap}
    return solve_lipschitz(_number("epsilon", args.epsilon), args.cost, dim=_number("dim", args.dim, integer=True),
                           norm=args.norm, domain=args.domain,
                           resolution=_number("resolution", args.resolution, integer=True), time_limit=tl,
                           solver=args.solver, **kw)


def _cmd_solve(args: argparse.Namespace) -> int:
    import optmech

    tl = _number("time-limit", args.time_limit)
    if tl is not None and not (tl > 0 and math.isfinite(tl)):
        from optmech.errors import SpecError

        raise SpecError(f"time-limit must be positive, got {args.time_limit!r}")
    if args.privacy == "lipschitz" or args.utility != "cost":
        result = _solve_other(args, tl)
        sys.stdout.write((result.to_json() if args.json else format_result(result)) + "\n")
        if args.save:
            with open(args.save, "w", encoding="utf-8") as fh:
                json.dump(result.to_dict(include_mechanism=True), fh, indent=1)
        return EXIT_OK if result.certified else EXIT_UNCERTIFIED
    if args.input_pmf is not None or args.input is not None:
        from optmech.errors import SpecError

        raise SpecError("--input-pmf/--input apply to --utility wasserstein|surrogate")
    problem = _problem(args)
    if args.plot is not None:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:
            from optmech.errors import SpecError

            raise SpecError("--plot needs matplotlib (pip install matplotlib)")
    candidate = None
    if args.candidate is not None:
        from optmech.candidate import prepare_candidate
        from optmech.errors import SpecError

        if args.privacy != "pure":
            raise SpecError("--candidate applies to pure DP")
        candidate = prepare_candidate(problem, args.candidate)  # bad candidates fail before the solve
    result = optmech.solve(problem, solver=args.solver, time_limit=tl)
    if args.candidate is not None:
        import dataclasses

        from optmech.candidate import evaluate_candidate

        result = dataclasses.replace(result, candidate=evaluate_candidate(problem, result, args.candidate, candidate))
    if args.json:
        sys.stdout.write(result.to_json() + "\n")
    else:
        sys.stdout.write(format_result(result) + "\n")
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump(result.to_dict(include_mechanism=True), fh, indent=1)
    if args.plot:
        from optmech.plots import plot_result

        plot_result(result, args.plot)
    return EXIT_OK if result.certified else EXIT_UNCERTIFIED


def _cmd_table(args: argparse.Namespace) -> int:
    import os
    import tempfile

    from optmech.errors import SpecError
    from optmech.table import build_table, parse_list, render

    dim = _number("dim", args.dim, integer=True)
    sens = parse_list("sensitivity", args.sensitivity, integer=(args.privacy == "approx" or args.domain != "continuous"))
    eps = parse_list("epsilon", args.epsilon)
    if args.privacy == "approx":
        if args.delta is None:
            raise SpecError("--privacy approx needs --delta")
        if args.domain not in (None, "integer"):
            raise SpecError("--privacy approx tables are on the integer domain")
        deltas = parse_list("delta", args.delta)
    else:
        if args.delta is not None:
            raise SpecError("--delta applies only to --privacy approx")
        deltas = []
    workers = _number("workers", args.workers, integer=True)
    if workers is not None and workers < 1:
        raise SpecError(f"--workers must be >= 1, got {args.workers!r}")
    tl = _number("time-limit", args.time_limit)
    if tl is not None and not (tl > 0 and math.isfinite(tl)):
        raise SpecError(f"time-limit must be positive, got {args.time_limit!r}")
    if args.out:
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise SpecError(f"--out folder does not exist: {folder}")
    rows = build_table(args.privacy, cost=args.cost, sensitivities=sens, epsilons=eps, deltas=deltas, dim=dim,
                       domain=args.domain or "integer", solver=args.solver, time_limit=tl,
                       target_gap=_number("target-gap", args.target_gap), workers=workers, force=args.force)
    text = render(args.privacy, rows, args.format)
    if args.out:
        fd, tmp = tempfile.mkstemp(prefix=".optmech-", dir=os.path.dirname(os.path.abspath(args.out)))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, args.out)
    else:
        sys.stdout.write(text)
    failed = [r for r in rows if not r.get("certified")]
    if failed:
        sys.stderr.write(f"optmech: {len(failed)} of {len(rows)} rows are not certified (see the certified/error columns)\n")
        return EXIT_UNCERTIFIED
    return EXIT_OK


def _cmd_solvers(args: argparse.Namespace) -> int:
    from optmech.solvers import available_backends
    from optmech.solvers.profiles import profile_names

    for name, ok in available_backends().items():
        print(f"backend {name:<8} {'installed' if ok else 'not installed'}")
    for name in profile_names():
        print(f"profile {name}")
    return EXIT_OK


def _workers(text: str | None) -> int | None:
    """--workers: None (all cores) or an integer >= 1."""
    from optmech.errors import SpecError

    workers = _number("workers", text, integer=True)
    if workers is not None and workers < 1:
        raise SpecError(f"workers must be at least 1, got {workers}")
    return workers


def _cmd_run(args: argparse.Namespace) -> int:
    """``optmech run SPEC.toml``: validate, then run the sweep into the store."""
    import os

    from optmech.sweep import load_spec, run_sweep

    spec = load_spec(args.spec, force=args.force, quick=args.quick)
    workers = _workers(args.workers)
    store = args.store or os.path.splitext(args.spec)[0] + ".sqlite"
    progress = sys.stderr.isatty() and not os.environ.get("CI")
    out = run_sweep(spec, store, workers=workers, scheduler=args.scheduler, resume=args.resume, progress=progress)
    if args.json:
        sys.stdout.write(json.dumps(out.to_dict()) + "\n")
    else:
        sys.stdout.write(f"{spec.name}: {out.computed} computed, {out.skipped} skipped, {out.failed} failed "
                         f"({out.problems} problems) -> {store}\n")
        for e in out.errors[:5]:
            sys.stdout.write(f"  failed {e['key']}: {e['error']}\n")
    return EXIT_OK if out.failed == 0 else EXIT_UNCERTIFIED


def _cmd_reproduce(args: argparse.Namespace) -> int:
    """``optmech reproduce [--quick] --out DIR``: the catalogue, its store, DIR/README.md and figures."""
    import os

    from optmech.errors import SpecError
    from optmech.reproduce import load_catalogue, reproduce
    from optmech.sources import cite

    only = None if args.only is None else [t.strip() for t in args.only.split(",") if t.strip()]
    if args.only is not None and not only:
        raise SpecError("--only needs at least one name")
    if args.list:
        for spec in load_catalogue(quick=args.quick, only=only):
            rep = spec.reproduce
            sys.stdout.write(f"{spec.name}: {cite(rep['seed'])}, {rep['item']} ({len(spec.problems)} problems)\n")
        return EXIT_OK
    workers = _workers(args.workers)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise SpecError(f"--out {args.out} exists and is not a folder")
    progress = sys.stderr.isatty() and not os.environ.get("CI")
    out = reproduce(args.out, quick=args.quick, workers=workers, only=only, progress=progress)
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


def _cmd_store(args: argparse.Namespace) -> int:
    """``optmech store ls|show|export STORE``: read-only browsing of a result store."""
    import os

    from optmech.errors import SpecError
    from optmech.store import ResultStore

    if not os.path.isfile(args.store):
        raise SpecError(f"no such store: {args.store}")
    if args.action == "show" and args.key is None:
        raise SpecError("store show needs a KEY (see store ls)")
    if args.action != "show" and args.key is not None:
        raise SpecError(f"store {args.action} takes no KEY")
    with ResultStore(args.store) as st:
        if args.action == "export":
            text = st.export(args.format)
            if args.out is None:
                sys.stdout.write(text)
            else:
                tmp = args.out + ".part"
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, args.out)
            return EXIT_OK
        if args.action == "show":
            if not st.has(args.key):
                raise SpecError(f"no problem with key {args.key!r} in {args.store}")
            rec = st.record(args.key)
            sys.stdout.write(json.dumps(rec, indent=1, default=str) + "\n")
            return EXIT_OK
        rows = st.rows()
        if args.json:
            sys.stdout.write(json.dumps(rows, default=str) + "\n")
            return EXIT_OK
        sys.stdout.write(f"{len(rows)} problem(s) in {args.store}\n")
        def num(v, spec: str) -> str:
            return format(v, spec) if isinstance(v, (int, float)) else str(v)

        for r in rows:
            sys.stdout.write(f"  {r['key']}  [{num(r['lower_bound'], '.12g')}, {num(r['upper_bound'], '.12g')}]  "
                             f"gap {num(r['relative_gap'], '.3g')}  {num(r['seconds'], '.3g')} s\n")
    return EXIT_OK


def _cmd_compare(args: argparse.Namespace) -> int:
    from optmech.compare import compare, format_compare, plot_compare, to_json
    from optmech.errors import SpecError

    eps = _number("epsilon", args.epsilon)
    dim = _number("dim", args.dim, integer=True)
    tl = _number("time-limit", args.time_limit)
    if tl is not None and not (tl > 0 and math.isfinite(tl)):
        raise SpecError(f"time-limit must be positive, got {args.time_limit!r}")
    if args.plot is not None and not args.plot.lower().endswith(".png"):
        raise SpecError(f"--plot writes a PNG: the file name must end in .png, got {args.plot!r}")
    c = compare(eps, args.cost, dim=dim, norm=args.norm, resolution=_number("resolution", args.resolution, integer=True),
                time_limit=tl)
    sys.stdout.write((json.dumps(to_json(c), indent=2, default=float) if args.json else format_compare(c)) + "\n")
    if args.plot:
        plot_compare(c, args.plot)
    return EXIT_OK if all(r["certified"] for r in c["rows"]) else EXIT_UNCERTIFIED


def main(argv: Sequence[str] | None = None) -> int:
    from optmech.errors import OptmechError, SolveFailed, SolverUnavailable

    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_INPUT
    try:
        if args.command == "solve":
            return _cmd_solve(args)
        if args.command == "table":
            return _cmd_table(args)
        if args.command == "compare":
            return _cmd_compare(args)
        if args.command == "store":
            return _cmd_store(args)
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "reproduce":
            return _cmd_reproduce(args)
        if args.command in ("sample", "mechanism", "audit"):
            from optmech import cli_mechanisms

            return getattr(cli_mechanisms, f"cmd_{args.command}")(args)
        return _cmd_solvers(args)
    except (SolveFailed, SolverUnavailable) as exc:
        sys.stderr.write(f"optmech: solver failed: {_one_line(exc)}\n")
        return EXIT_SOLVER
    except OptmechError as exc:
        sys.stderr.write(f"optmech: error: {_one_line(exc)}\n")
        return EXIT_INPUT
    except BrokenPipeError:  # the reader went away (`optmech ... | head`): stop quietly, as other tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        sys.stderr.write(f"optmech: error: {_one_line(exc)}\n")
        return EXIT_INPUT
    except MemoryError:
        sys.stderr.write("optmech: error: out of memory; lower the problem size or raise --target-gap\n")
        return EXIT_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("optmech: interrupted\n")
        return 130
    except Exception as exc:  # an internal bug: one line unless OPTMECH_DEBUG asks for the traceback
        import os

        if os.environ.get("OPTMECH_DEBUG"):
            raise
        sys.stderr.write(f"optmech: internal error: {type(exc).__name__}: {_one_line(exc)} (set OPTMECH_DEBUG=1 for a traceback)\n")
        return EXIT_INTERNAL


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
