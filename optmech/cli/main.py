"""The ``optmech`` parser, the dispatch to the command modules, and the exit-status mapping.

Exit status: 0 success; 2 invalid input (one line on stderr); 3 the result could not be certified
(printed, plainly labelled UNCERTIFIED); 4 the solver failed; 1 an internal error; 130 interrupted;
141 the reader of stdout went away.  Heavy modules are imported only inside commands, so
``optmech --version`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from optmech import __version__
from optmech.cli import mechanisms, solve, sweeps
from optmech.cli.args import EXIT_INPUT, EXIT_INTERNAL, EXIT_SOLVER, HelpFormatter, epilog, paragraph


class OptmechParser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"optmech: error: {message}\n")
        raise SystemExit(EXIT_INPUT)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every subcommand, as the command modules define it."""
    p = OptmechParser(
        prog="optmech", formatter_class=HelpFormatter,
        description=paragraph("Optimal differential-privacy noise by linear programming, with certified bounds. Every "
                    "command shares one grammar: a flag has the same default wherever it appears, and list "
                    "flags take comma-separated, space-separated or repeated values. "
                    "`optmech COMMAND --help` describes each command, its defaults and its exit statuses."),
        epilog=epilog(["optmech solve --epsilon 1 --cost abs",
                       "optmech table --privacy approx --sensitivity 1,3 --epsilon 0.1 0.5 --delta 0.05",
                       "optmech reproduce --quick --out report"],
                      (0, 2, 3, 4, 1),
                      notes="Also: 130 when interrupted, 141 when the reader of stdout goes away (optmech ... | head)."))
    p.add_argument("--version", action="version", version=f"optmech {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=OptmechParser, metavar="COMMAND")
    solve.add_parsers(sub)
    mechanisms.add_parsers(sub)
    sweeps.add_parsers(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from optmech.errors import OptmechError, SolveFailed, SolverUnavailable

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_INPUT
    try:
        return args.handler(args)
    except (SolveFailed, SolverUnavailable) as exc:
        sys.stderr.write(f"optmech: solver failed: {one_line(exc)}\n")
        return EXIT_SOLVER
    except OptmechError as exc:
        sys.stderr.write(f"optmech: error: {one_line(exc)}\n")
        return EXIT_INPUT
    except BrokenPipeError:  # the reader went away (`optmech ... | head`): stop quietly, as other tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        sys.stderr.write(f"optmech: error: {one_line(exc)}\n")
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
        sys.stderr.write(f"optmech: internal error: {type(exc).__name__}: {one_line(exc)} (set OPTMECH_DEBUG=1 for a traceback)\n")
        return EXIT_INTERNAL


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (its type name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__
