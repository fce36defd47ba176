"""The ``optmech`` parser, the dispatch to the command modules, and the exit-status mapping.

Exit status: 0 success; 2 invalid input (one line on stderr); 3 the result could not be certified
(printed, plainly labelled UNCERTIFIED); 4 the solver failed; 1 an internal error; 130 interrupted
(128 + the signal: 143 for SIGTERM, 129 for SIGHUP where a command cleans up after them, as
``sample`` and the sweeps do); 141 the reader of stdout went away.  Heavy modules are imported only
inside commands, so ``optmech --version`` stays fast.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Sequence

from optmech import __version__
from optmech.cli import mechanisms, solve, sweeps
from optmech.cli.args import EXIT_INPUT, EXIT_INTERNAL, EXIT_SOLVER, HelpFormatter, epilog, paragraph


class OptmechParser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"optmech: error: {one_line(message)}\n")
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
                      notes="Also: 130 when interrupted (143 on SIGTERM), 141 when the reader of stdout goes away "
                            "(optmech ... | head)."))
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
    except KeyboardInterrupt as exc:  # Ctrl-C, or an Interrupted raised by a command's own signal handler
        signum = getattr(exc, "signum", 2)
        detail = f": {one_line(exc)}" if str(exc) else ""
        sys.stderr.write(f"optmech: interrupted{detail}\n")
        return 128 + signum
    except Exception as exc:  # an internal bug: one line unless OPTMECH_DEBUG asks for the traceback
        import os

        if os.environ.get("OPTMECH_DEBUG"):
            raise
        sys.stderr.write(f"optmech: internal error: {type(exc).__name__}: {one_line(exc)} (set OPTMECH_DEBUG=1 for a traceback)\n")
        return EXIT_INTERNAL


#: Characters never written raw to the terminal: C0 controls (ESC included), DEL, C1 controls and the
#: Unicode bidirectional overrides.  Newlines and tabs are folded into spaces instead.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(ch: str) -> str:
    if ch == "\r":
        return "\\r"
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def one_line(exc: BaseException | str) -> str:
    """An exception's message (or a text) on one line, safe for a terminal; its type name when it has none.

    Line breaks and runs of whitespace become one space; other control characters (ESC, CR, NUL, DEL,
    C1, bidirectional overrides) are written escaped, as ``\\x1b`` or ``\\r``, so text from the user
    (a file name, a cost expression) cannot move the cursor or recolour the terminal.  Other Unicode
    (ε, Δ, ≤) is kept as it is.
    """
    text = str(exc).replace("\r\n", "\n")
    text = " ".join(_CONTROL.sub(lambda m: _escape(m.group()), text).split())
    return text or (type(exc).__name__ if isinstance(exc, BaseException) else "")
