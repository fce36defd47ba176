"""``optmech recommend``: which noise to add, the certified optimum beside every deployable mechanism.

The parser is added by :func:`add_parsers` (handler in ``args.handler``); the work is
:func:`optmech.recommendation.recommend`.
"""

from __future__ import annotations

import argparse
import math
import sys

from optmech.cli.args import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_SOLVER,
    EXIT_UNCERTIFIED,
    add_command,
    add_cost,
    add_dim,
    add_domain,
    add_json,
    add_norm,
    add_sensitivity,
    add_solver,
    add_time_limit,
    is_default,
    parse_time_limit,
)
from optmech.cli.args import parse_number as _number

FORMATS = ("text", "json", "csv")


def add_parsers(sub) -> None:
    """The ``recommend`` subcommand."""
    r = add_command(
        sub, "recommend", summary="which noise to add: the certified optimum beside every deployable mechanism",
        description="Answer \"which noise should I add?\" with a certificate. Solve the optimal-noise problem for the "
                    "query (integer or real answers, dimension, the sensitivity's norm and Δ), the guarantee (ε, or "
                    "(ε,δ) with --delta) and the cost, then rank the deployable mechanisms calibrated exactly to the "
                    "same guarantee (Laplace / discrete Laplace, the Gaussians, the truncated Laplace and truncated "
                    "discrete Laplace with an exact δ, the staircases, the rounded Tulap, the optimum): each with its "
                    "exact expected cost, its certified ratio to V*, its sampler, the OpenDP constructor that ships "
                    "it and its calibration. The recommendation is the optimum unless a standard mechanism costs no "
                    "more than the optimum's mechanism or is certified within --prefer-standard of V*.",
        examples=["optmech recommend --epsilon 1 --domain integer",
                  "optmech recommend --epsilon 1 --delta 1e-6 --sensitivity 10",
                  "optmech recommend --epsilon 1 --delta 1e-6 --sensitivity 10 --prefer-standard 1% --format csv",
                  "optmech recommend --epsilon 0.5 --delta 1e-6 --domain continuous --cost square --json",
                  "optmech recommend --epsilon 1 --delta 1e-6 --sensitivity 4 --compositions 10"],
        exits=(EXIT_OK, EXIT_INPUT, EXIT_UNCERTIFIED, EXIT_SOLVER, EXIT_INTERNAL),
        notes="Also: 130 when interrupted (143 on SIGTERM): the table is printed for the best certified bracket found "
              "so far. Exit status 3 means the V* bracket is not certified (the table is printed, labelled "
              "UNCERTIFIED).")
    r.add_argument("--epsilon", required=True, help="privacy parameter ε > 0; required")
    r.add_argument("--delta", default=None,
                   help="δ in [0, 1): (ε,δ)-DP; omitted or 0: pure ε-DP (default: 0)")
    add_sensitivity(r, help="sensitivity Δ > 0 of the query in --norm (an integer for integer answers)")
    add_domain(r, help="what the noise takes: integer (integer answers), nonnegative (noise on N, (ε,δ) in 1-D) or "
                       "continuous (real answers) (default: as optmech solve: continuous for ε-DP, integer for (ε,δ))")
    add_dim(r, help="dimension d of the query")
    add_norm(r, help="norm of the sensitivity in d > 1 dimensions: l1, l2 or linf (what optmech solve takes there)")
    add_cost(r, help="the utility: abs | square | pow:P | an expression in x; in d > 1: l1 | l2 | l2sq | linf")
    r.add_argument("--prefer-standard", default="0", metavar="TOL",
                   help="recommend the cheapest standard mechanism certified within TOL of V* (1%%, 0.5%% or 0.01); "
                        "at 0 a standard mechanism is preferred only when it costs no more than the optimum's "
                        "mechanism (default: 0)")
    r.add_argument("--compositions", default="1", metavar="K",
                   help="K > 1: also calibrate each candidate for K identical releases under the total (ε,δ) by "
                        "privacy loss distributions (dp_accounting; 1-D) and rank the per-release costs (default: 1)")
    r.add_argument("--format", default="text", choices=FORMATS,
                   help="text (default), json (one document, as --json) or csv (the ranked table, the bracket on "
                        "every row)")
    add_json(r, help="print one JSON document on stdout (same as --format json)")
    add_solver(r)
    add_time_limit(r)
    r.add_argument("--target-gap", default=None, metavar="GAP",
                   help="relative gap of the V* bracket at which to stop (default: the problem family's, but no finer "
                        "than 1e-4, which ranks mechanisms to about 4 digits in seconds)")
    r.set_defaults(handler=_cmd_recommend)


def parse_tolerance(text: str) -> float:
    """``1%`` -> 0.01, ``0.01`` -> 0.01: a relative tolerance in [0, 10).

    >>> parse_tolerance("1%"), parse_tolerance("0.5 %"), parse_tolerance("0.02")
    (0.01, 0.005, 0.02)
    """
    from optmech.errors import SpecError

    raw = str(text).strip()
    scale = 1.0
    if raw.endswith("%"):
        raw, scale = raw[:-1].strip(), 0.01
    try:
        v = float(raw) * scale
    except ValueError:
        raise SpecError(f"--prefer-standard must be a tolerance such as 1% or 0.01, got {text!r}") from None
    if not (math.isfinite(v) and 0 <= v < 10):
        raise SpecError(f"--prefer-standard must be a tolerance in [0, 1000%), got {text!r}")
    return round(v, 15)


def _cmd_recommend(args: argparse.Namespace) -> int:
    from optmech.cli.signals import InterruptOnSignals
    from optmech.errors import SpecError
    from optmech.recommendation import recommend

    fmt = "json" if args.json else args.format
    if args.json and args.format not in ("text", "json"):
        raise SpecError(f"--json and --format {args.format} ask for two outputs: give one")
    eps = _number("epsilon", args.epsilon)
    delta = _number("delta", args.delta) if args.delta is not None else 0.0
    dim = _number("dim", args.dim, integer=True)
    k = _number("compositions", args.compositions, integer=True)
    tol = parse_tolerance(args.prefer_standard)
    tl = parse_time_limit(args.time_limit)
    gap = _number("target-gap", args.target_gap)
    from optmech.errors import Interrupted
    from optmech.recommendation import add_compositions

    if k < 1:
        raise SpecError(f"compositions must be a positive integer, got {args.compositions!r}")
    domain = None if is_default(args.domain) else str(args.domain)
    if k > 1:  # refused before any solve (dimension, dp_accounting installed)
        from optmech.recommendation import check_compositions, problem_for

        check_compositions(problem_for(eps, delta, sensitivity=args.sensitivity, domain=domain, dim=dim,
                                       norm=args.norm, cost=args.cost), k)
    interrupted = None
    with InterruptOnSignals() as signals:
        rec = recommend(eps, delta, sensitivity=args.sensitivity, domain=domain, dim=dim, norm=args.norm, cost=args.cost, prefer_standard=tol, time_limit=tl,
                        solver=args.solver, target_gap=gap)
        if rec.status == "interrupted":
            interrupted = "the table is for the best certified bracket found so far"
            rec.notes.append(f"interrupted: {interrupted}")
        elif k > 1:
            try:  # the single-release table is finished: an interrupt here keeps it
                add_compositions(rec, k)
            except Interrupted:
                interrupted = "the composition table was not finished; the single-release table is complete"
                rec.notes.append(f"interrupted: {interrupted}")
    text = {"json": rec.to_json, "csv": rec.to_csv}.get(fmt, rec.__str__)()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if interrupted:
        sys.stderr.write(f"optmech: interrupted: {interrupted}\n")
        return 128 + (signals.signum or 2)
    return EXIT_OK if rec.certified else EXIT_UNCERTIFIED
