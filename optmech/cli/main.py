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
from optmech.cli import mechanisms, recommend, solve, sweeps
from optmech.cli.args import EXIT_INPUT, EXIT_INTERNAL, EXIT_SOLVER, HelpFormatter, epilog, paragraph


#: A command-line word that argparse reads as a negative number, not as an option.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class OptmechParser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2.

    An option the command does not know is reported by name, with the closest known option
    suggested (``--epsilom``: did you mean ``--epsilon``?), and before a missing required option:
    argparse checks the required ones first, so ``solve --epsilom 1`` would otherwise only say that
    ``--epsilon`` is missing.  Each subcommand reports its own unknown words (it is an
    OptmechParser too), so the suggestions come from that subcommand's options.
    """

    given: list[str] = []

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        self.given = list(sys.argv[1:] if args is None else args)
        ns, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error("unrecognized arguments: " + " ".join(extras))
        return ns, extras

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.startswith("unrecognized arguments: "):
            unknown = self.unknown_options(message[len("unrecognized arguments: "):].split(" "))
        elif message.startswith(("the following arguments are required", "one of the arguments")):
            unknown = self.unknown_options(self.given)
        else:
            unknown = []
        if unknown:
            message = self.unknown_message(unknown)
        sys.stderr.write(f"optmech: error: {one_line(message)}\n")
        raise SystemExit(EXIT_INPUT)

    def option_strings(self) -> list[str]:
        """Every option string this parser (command) accepts."""
        return [s for action in self._actions for s in action.option_strings]

    def unknown_options(self, words: Sequence[str]) -> list[str]:
        """The words of ``words`` that look like options this parser does not know (``--name=value``
        counted by its name; a unique prefix of a long option, a short option with its value attached
        and negative numbers are known; nothing after ``--``)."""
        known = self.option_strings()
        out = []
        for word in words:
            if word == "--":
                break
            if len(word) < 2 or word[0] not in self.prefix_chars or _NEGATIVE_NUMBER.match(word) or " " in word:
                continue
            name = word.split("=", 1)[0] if word.startswith("--") else word
            if name in known or (not word.startswith("--") and word[:2] in known):
                continue
            if self.allow_abbrev and name.startswith("--") and any(k.startswith(name) for k in known):
                continue
            if name not in out:
                out.append(name)
        return out

    def unknown_message(self, unknown: Sequence[str]) -> str:
        """One line naming the unknown options, each with its closest known option where one is close."""
        import difflib

        longs = [k for k in self.option_strings() if k.startswith("--")]
        parts = []
        for name in unknown:
            close = difflib.get_close_matches(name, longs, n=1, cutoff=0.6)
            parts.append(f"{name} (did you mean {close[0]}?)" if close else name)
        s = "s" if len(unknown) > 1 else ""
        return f"unrecognized option{s} for {self.prog}: {', '.join(parts)}; see {self.prog} --help"


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
    recommend.add_parsers(sub)
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
