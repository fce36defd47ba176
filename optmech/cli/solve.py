"""``optmech solve``, ``optmech table`` and ``optmech compare``: certified solves from the command line.

Parsers are added by :func:`add_parsers` (each with its handler as ``args.handler``);
:mod:`optmech.cli.main` dispatches and maps errors to exit statuses.  Heavy modules are imported
only inside the commands.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from optmech.cli.args import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_SOLVER,
    EXIT_UNCERTIFIED,
    PLOT_FORMATS,
    ListAction,
    add_command,
    add_cost,
    add_dim,
    add_domain,
    add_json,
    add_norm,
    add_privacy,
    add_sensitivity,
    add_solver,
    add_target_gap,
    add_time_limit,
    add_workers,
    check_output_path,
    is_default,
    parse_number_list,
    plot_formats,
    parse_time_limit,
    parse_workers,
)
from optmech.cli.args import parse_number as _number

ALL_EXITS = (EXIT_OK, EXIT_INPUT, EXIT_UNCERTIFIED, EXIT_SOLVER, EXIT_INTERNAL)


def add_parsers(sub) -> None:
    """The ``solve``, ``table`` and ``compare`` subcommands."""
    s = add_command(
        sub, "solve", summary="solve one problem and print the certified bracket",
        description="Find the noise distribution of minimum expected cost for one privacy problem and print a "
                    "certified bracket [lower, upper] around the optimum, the closed forms that apply, and the "
                    "audit of the upper-bound mechanism. Pure ε-DP on ℤ, ℝ, ℤ^d and ℝ^d; (ε,δ)-DP on ℤ, ℤ^d, ℝ and ℝ^d "
                    "(the integer lattice unless --domain continuous); Lipschitz privacy; and Wasserstein utility "
                    "on ℤ; --candidate compares a given mechanism with the certified lower bound.",
        examples=["optmech solve --epsilon 1 --cost abs",
                  "optmech solve --epsilon 1 --sensitivity 2 --domain integer --cost square --json",
                  "optmech solve --privacy approx --epsilon 0.5 --delta 0.05 --sensitivity 3 --domain integer",
                  "optmech solve --dim 2 --epsilon 1 --domain integer --cost l1 --candidate staircase",
                  "optmech solve --privacy lipschitz --epsilon 1 --cost square"],
        exits=ALL_EXITS,
        notes="Also: 130 when interrupted by Ctrl-C (143 SIGTERM, 129 SIGHUP): the solve stops within about a second "
              "and prints the best certified bracket it has (status interrupted), or says that none existed yet. "
              "A --time-limit ends with the best certified bracket (status gap_not_reached) and says what the next "
              "step would have needed.")
    add_privacy(s, help="privacy notion: pure ε-DP, approx (ε,δ)-DP, or lipschitz (ε per unit distance)")
    s.add_argument("--utility", default="cost", choices=["cost", "wasserstein", "surrogate"],
                   help="what to minimise: the expected --cost (default), the 1-Wasserstein distance between X and X + noise "
                        "for an input X (--input-pmf or --input), or the paper's surrogate E|noise| [QHFL22]")
    s.add_argument("--input-pmf", default=None, metavar="FILE", help="input distribution of X for --utility: a CSV with header k,p")
    s.add_argument("--input", default=None, metavar="SPEC",
                   help="built-in input distribution: poisson:RATE:LO:HI, gaussian:MU:SIGMA:LO:HI or uniform:LO:HI")
    s.add_argument("--epsilon", required=True, help="privacy parameter ε > 0 (ε >= 0 with --privacy approx); required")
    s.add_argument("--delta", default=None, help="δ in [0, 1) for --privacy approx (required there)")
    add_dim(s, help="dimension d of the query (d > 1 takes the d-dimensional costs listed under --cost)")
    s.add_argument("--candidate", default=None, metavar="staircase|layered|laplace|FILE.json",
                   help="conjecture mode: compare this mechanism's exact cost with the certified lower bound")
    add_norm(s, help="norm of the sensitivity (Lipschitz: of the distance) in d > 1 dimensions: l1, l2 or linf for "
                     "pure DP; l1 for (ε,δ) on ℤ^d, l1 or l2 for (ε,δ) on ℝ^d (--domain continuous); l1 or l2 for "
                     "--privacy lipschitz")
    add_sensitivity(s, help="sensitivity Δ > 0 (an integer on the integer domain)")
    add_domain(s, help="noise domain: integer lattice, nonnegative integers (support in N, for --privacy approx in "
                       "1-D) or continuous reals (default: continuous; integer for --privacy "
                       "approx, which is also solved on ℝ and ℝ^d with --domain continuous, and for --utility "
                       "wasserstein|surrogate, which are solved on the lattice only)")
    s.add_argument("--resolution", default=None, help="cells per Δ on the continuous domain (default: automatic in 1-D; in d > 1 from 4 (d = 2) or 2 (d >= 3), "
                        "refined while the finer LP fits the time limit; a given resolution is kept)")
    add_target_gap(s)
    add_cost(s, help="abs | square | pow:P | an expression in x; with --dim d > 1: l1 | l2 | l2sq | linf | an expression "
                     "in x1..xd (abs means l1 there, square l2sq), and l1sq | linfsq for pure DP on ℝ^d with --norm "
                     "l1 | linf")
    add_solver(s)
    add_time_limit(s)
    s.add_argument("--no-symmetry", action="store_true", help="never use a symmetry reduction (same as --symmetry off)")
    s.add_argument("--symmetry", choices=("auto", "orbits", "off"), default=None,
                   help="auto (default): every proven reduction, the radial one on R^d when the cost is a power of the "
                        "sensitivity's norm; orbits: the coordinate-symmetry orbits only (the cell LP on R^d); off: none")
    add_json(s)
    s.add_argument("--plot", metavar="FILE", default=None,
                   help=f"draw the mechanism beside the best closed form into FILE ({plot_formats()}); needs matplotlib")
    s.add_argument("--save", metavar="FILE", default=None, help="write the result, mechanism included, as JSON")
    s.set_defaults(handler=_cmd_solve)

    t = add_command(
        sub, "table", summary="a bound table: one certified solve per (sensitivity, epsilon[, delta]) row",
        description="Solve every combination of the listed sensitivities, ε values (and δ values with --privacy "
                    "approx) in parallel and print one row per problem: the certified bracket beside the papers' "
                    "bounds and the simple mechanisms (uniform, Laplace, staircase). Lists are comma-separated, "
                    "space-separated or repeated: --epsilon 0.5,1 2 --epsilon 4 is four values. (ε,δ) tables are on "
                    "the integer lattice unless you say --domain continuous (the real line, or R^d with --dim 2|3, "
                    "--norm l1|l2 and a cost l1|l2|l2sq: the certified optimum beside the Gaussian, Laplace and, in "
                    "1-D, the truncated Laplace; bound a d-D table's time with --time-limit per row and a coarse "
                    "--target-gap); pure-DP tables are on the --domain (continuous unless you say integer).",
        examples=["optmech table --privacy approx --sensitivity 1,3 --epsilon 0.1 0.5 --delta 0.05 --format csv",
                  "optmech table --privacy approx --domain continuous --epsilon 0.5,1,2 --delta 0.01,0.1 --target-gap 1e-3",
                  "optmech table --epsilon 0.5 1 2 --domain integer --format markdown",
                  "optmech table --privacy approx --dim 2 --cost l1 --epsilon 1 --delta 0.01 --delta 0.1 --out t.json --format json",
                  "optmech table --privacy approx --domain continuous --dim 2 --norm l2 --cost l2 --epsilon 1 --delta 1e-3 "
                  "--time-limit 30 --format csv"],
        exits=(EXIT_OK, EXIT_INPUT, EXIT_UNCERTIFIED, EXIT_INTERNAL),
        notes="Exit status 3 means at least one row could not be certified (see its certified/error columns).")
    add_privacy(t, choices=("pure", "approx"))
    add_cost(t, help="cost: abs | square | pow:P | an expression in x; with --dim d > 1: l1 | l2 | l2sq | linf on the "
                     "integer domain, l1 | l2 | l2sq with --domain continuous")
    add_sensitivity(t, as_list=True, help="sensitivities Δ (integers on the integer domain)")
    t.add_argument("--epsilon", required=True, action=ListAction, metavar="E", help="ε values; a list (required)")
    t.add_argument("--delta", default=None, action=ListAction, metavar="D", help="δ values; a list (required with --privacy approx)")
    add_dim(t, help="dimension d (--privacy approx; 1, 2 or 3 with --domain continuous)")
    add_norm(t, help="norm of the sensitivity in d > 1 dimensions: l1, or l2 with --domain continuous (as in solve)")
    add_domain(t, help="noise domain (default: continuous for pure DP, integer for --privacy approx, where continuous "
                       "means (epsilon, delta) noise on R^d, --dim 1, 2 or 3)")
    t.add_argument("--format", default="text", choices=["text", "csv", "json", "markdown"], help="output format")
    t.add_argument("--out", default=None, metavar="FILE", help="write the table to FILE instead of stdout")
    add_workers(t)
    t.add_argument("--force", action="store_true", help="allow tables above the row limit (500 rows)")
    add_solver(t)
    add_time_limit(t, per="row")
    add_target_gap(t, help="relative gap (upper - lower)/upper at which each row stops", dp_only=True)
    t.set_defaults(handler=_cmd_table)

    c = add_command(
        sub, "compare", summary="the epsilon-DP optimum, the epsilon-Lipschitz optimum and Laplace side by side",
        description="For one ε and a sensitivity of 1 (one unit of distance), print three certified rows: the ε-DP "
                    "optimum on R^d, the ε-Lipschitz optimum, and Laplace noise, which satisfies both; optionally "
                    "a bar chart of the brackets (and, in 1-D, the densities).",
        examples=["optmech compare --epsilon 1 --cost abs",
                  "optmech compare --epsilon 2 --cost square --json",
                  "optmech compare --epsilon 1 --dim 2 --cost l2sq --norm l2 --plot compare.png"],
        exits=ALL_EXITS)
    c.add_argument("--epsilon", required=True, help="ε > 0 (DP with sensitivity 1; Lipschitz per unit distance); required")
    add_cost(c, help="1-D cost (abs, square, pow:P, expression), or l1|l2sq (|l2 with --norm l2) with --dim")
    add_dim(c)
    add_norm(c, help="norm in d > 1 dimensions: l1 or l2")
    c.add_argument("--resolution", default=None, help="cells per unit for the DP solve in d > 1 (default: 4 in d = 2)")
    add_time_limit(c)
    add_json(c)
    c.add_argument("--plot", metavar="FILE", default=None,
                   help=f"draw the costs with their brackets (and, in 1-D, the densities) into FILE ({plot_formats()})")
    c.set_defaults(handler=_cmd_compare)


def _problem(args: argparse.Namespace):
    """The problem the flags describe, through the one flat-parameter mapping
    (:meth:`optmech.spec.Problem.from_params`, which refuses invalid combinations with one line)."""
    from optmech.spec import Problem

    return Problem.from_params({
        "privacy": args.privacy, "epsilon": args.epsilon, "delta": args.delta, "sensitivity": args.sensitivity,
        "domain": None if is_default(args.domain) else str(args.domain), "resolution": args.resolution,
        "cost": None if args.utility != "cost" else args.cost, "utility": args.utility,
        "input": args.input, "input_pmf": args.input_pmf, "dim": args.dim, "norm": args.norm,
        "target_gap": args.target_gap, "symmetry": "off" if args.no_symmetry else (args.symmetry or "auto"),
    })


def format_result(result) -> str:
    """Readable text report of a Result, the same for every family (:func:`optmech.render.format_result`)."""
    from optmech.render import format_result as render_result

    return render_result(result)


def _cmd_solve(args: argparse.Namespace) -> int:
    import os

    import optmech
    from optmech.errors import SpecError

    if args.save is not None:  # every file the command writes is checked before any work
        check_output_path("--save", args.save)
    if args.plot is not None:
        check_output_path("--plot", args.plot, PLOT_FORMATS)
        if args.save is not None and os.path.abspath(args.save) == os.path.abspath(args.plot):
            raise SpecError(f"--save and --plot name the same file {args.save!r}: give each its own")
    tl = _number("time-limit", args.time_limit)
    if tl is not None and not (tl > 0 and math.isfinite(tl)):
        raise SpecError(f"time-limit must be positive, got {args.time_limit!r}")
    problem = _problem(args)
    if args.plot is not None:
        import importlib.util

        if args.privacy == "lipschitz" and problem.dim > 1:
            raise SpecError("--plot draws Lipschitz mechanisms in 1-D only (--dim 1)")
        if importlib.util.find_spec("matplotlib") is None:
            raise SpecError("--plot needs matplotlib (pip install matplotlib)")
    from optmech.cli.signals import InterruptOnSignals

    # one call for every family; a bad --candidate fails before the solve.  Ctrl-C, SIGTERM or SIGHUP end
    # the solve within about a second with the best certified bracket it has (status interrupted)
    with InterruptOnSignals() as signals:
        result = optmech.solve(problem, solver=args.solver, time_limit=tl, candidate=args.candidate)
    interrupted = result.status == "interrupted"
    sys.stdout.write((result.to_json() if args.json else format_result(result)) + "\n")
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump(result.to_dict(include_mechanism=True), fh, indent=1)
    if interrupted:  # what finished is printed (and saved); the plot is skipped
        sys.stderr.write(f"optmech: interrupted: {result.message}\n")
        return 128 + (signals.signum or 2)
    if args.plot:
        from optmech.plots import plot_result

        plot_result(result, path=args.plot)
    return EXIT_OK if result.certified else EXIT_UNCERTIFIED


def _cmd_table(args: argparse.Namespace) -> int:
    import os
    import tempfile

    from optmech.errors import SpecError
    from optmech.table import build_table

    dim = _number("dim", args.dim, integer=True)
    if args.privacy == "approx":  # the lattice unless --domain continuous is written (the real line)
        domain = "integer" if is_default(args.domain) else str(args.domain)
    else:
        domain = str(args.domain)
    sens = parse_number_list("--sensitivity", args.sensitivity, integer=(domain == "integer"))
    eps = parse_number_list("--epsilon", args.epsilon)
    if args.privacy == "approx":
        if args.delta is None:
            raise SpecError("--privacy approx needs --delta")
        deltas = parse_number_list("--delta", args.delta)
    else:
        if args.delta is not None:
            raise SpecError("--delta applies only to --privacy approx")
        deltas = []
    workers = parse_workers(args.workers)
    tl = parse_time_limit(args.time_limit)
    if args.out is not None:
        check_output_path("--out", args.out)
    rows = build_table(args.privacy, cost=args.cost, sensitivities=sens, epsilons=eps, deltas=deltas, dim=dim,
                       domain=domain, solver=args.solver, time_limit=tl,
                       target_gap=_number("target-gap", args.target_gap), workers=workers, force=args.force,
                       norm=args.norm)
    text = rows.render(args.format)
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


def _cmd_compare(args: argparse.Namespace) -> int:
    from optmech.compare import compare, format_compare, to_json
    from optmech.plots import plot_compare

    eps = _number("epsilon", args.epsilon)
    dim = _number("dim", args.dim, integer=True)
    tl = parse_time_limit(args.time_limit)
    if args.plot is not None:
        check_output_path("--plot", args.plot, PLOT_FORMATS)
    c = compare(eps, args.cost, dim=dim, norm=args.norm, resolution=_number("resolution", args.resolution, integer=True),
                time_limit=tl)
    sys.stdout.write((json.dumps(to_json(c), indent=2, default=float) if args.json else format_compare(c)) + "\n")
    if args.plot:
        plot_compare(c, path=args.plot)
    return EXIT_OK if all(r["certified"] for r in c["rows"]) else EXIT_UNCERTIFIED
