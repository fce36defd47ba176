"""What the command modules share: exit statuses, number and list parsing, the help layout, and
every flag that more than one command takes (defined once here, with one default).

No command lives here; :mod:`optmech.cli.main` assembles the parser and dispatches.
"""

from __future__ import annotations

import argparse
import math
import os
import textwrap
from typing import Iterable, Sequence

from optmech.budget import DEFAULT_TIME_LIMIT
from optmech.errors import SpecError
from optmech.spec import DEFAULT_GAPS

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_UNCERTIFIED, EXIT_SOLVER = 0, 1, 2, 3, 4

#: What each exit status means, in the words every command's help uses.
EXIT_MEANINGS = {
    EXIT_OK: "success",
    EXIT_INPUT: "invalid input (one line on stderr, nothing on stdout)",
    EXIT_UNCERTIFIED: "a result could not be certified (printed, plainly labelled UNCERTIFIED)",
    EXIT_SOLVER: "the solver failed (time or iteration limit before any optimal LP, an infeasible LP)",
    EXIT_INTERNAL: "an internal error (a bug; OPTMECH_DEBUG=1 shows the traceback)",
}

#: Width of the description and notes in every --help.
WIDTH = 88

#: The one default of each flag that several commands take.
DEFAULTS = {
    "privacy": "pure",
    "dim": "1",
    "norm": "l1",
    "sensitivity": "1",
    "domain": "continuous",
    "cost": "abs",
    "solver": "default",
    "time_limit": None,   # the engine's budget, DEFAULT_TIME_LIMIT seconds
    "target_gap": None,   # the problem family's (optmech.spec.DEFAULT_GAPS; see target_gap_defaults())
    "workers": None,      # all cores
    "json": False,
}


#: The image formats every ``--plot`` writes (matplotlib's savefig picks the format from the extension).
PLOT_FORMATS = ("png", "pdf", "svg")


def extensions(formats: Sequence[str]) -> str:
    """File extensions in words: ``(".png", ".pdf", ".svg")`` as ``".png, .pdf or .svg"``.

    >>> extensions(PLOT_FORMATS), extensions(["npy"])
    ('.png, .pdf or .svg', '.npy')
    """
    names = [f".{f}" for f in formats]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def plot_formats() -> str:
    """What every ``--plot`` help says about the file it writes."""
    return f"{extensions(PLOT_FORMATS)}: the extension picks the format"


# -- output paths -----------------------------------------------------------------------------------
def check_output_path(flag: str, path: str, formats: Sequence[str] | None = None, *, folder: bool = False) -> None:
    """Refuse, in one line (:class:`~optmech.errors.SpecError`), an output path that cannot be written,
    before a command does any work.

    A file (the default): ``path`` is not an existing folder, its folder exists and is writable, an
    existing file there is writable, and with ``formats`` its extension is one of them (``"png"``,
    ``"npy"``, ...; case-insensitive).  A folder (``folder=True``, created with its parents by the
    command): ``path`` is not an existing file, and the nearest folder that exists on its way is
    writable.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_output_path("--plot", os.path.join(d, "a.PDF"), PLOT_FORMATS)
    >>> check_output_path("--save", os.path.join(d, "no", "x.json"))
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: --save: cannot create ...: folder ... does not exist
    >>> check_output_path("--plot", os.path.join(d, "a.jpg"), PLOT_FORMATS)
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: --plot writes .png, .pdf or .svg (the extension picks the format), got '...a.jpg'
    """
    text = os.fspath(path)
    if not text:
        raise SpecError(f"{flag} needs a {'folder' if folder else 'file'} name")
    full = os.path.abspath(text)
    if folder:
        if os.path.exists(full) and not os.path.isdir(full):
            raise SpecError(f"{flag} {text} exists and is not a folder")
        near = full
        while not os.path.exists(near):
            near = os.path.dirname(near)
        if not os.path.isdir(near):
            raise SpecError(f"{flag}: cannot create {text}: {near} is a file, not a folder")
        if not os.access(near, os.W_OK | os.X_OK):
            what = f"{flag} {text} is not writable" if near == full else \
                f"{flag}: cannot create {text}: folder {near} is not writable"
            raise SpecError(what)
        return
    if formats is not None:
        ext = os.path.splitext(text)[1].lower().lstrip(".")
        if ext not in formats:
            raise SpecError(f"{flag} writes {extensions(formats)} (the extension picks the format), got {text!r}")
    if os.path.isdir(full):
        raise SpecError(f"{flag} {text} is a folder; give a file name")
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        why = "is a file, not a folder" if os.path.exists(parent) else "does not exist"
        raise SpecError(f"{flag}: cannot create {text}: folder {parent} {why}")
    if os.path.exists(full):
        if not os.access(full, os.W_OK):
            raise SpecError(f"{flag} {text} is not writable")
    if not os.access(parent, os.W_OK | os.X_OK):
        what = f"{flag} {text}: its folder {parent} is not writable" if os.path.exists(full) else \
            f"{flag}: cannot create {text}: folder {parent} is not writable"
        raise SpecError(what)


# -- numbers and lists ------------------------------------------------------------------------------
def parse_number(name: str, text: str | None, *, integer: bool = False) -> float | int | None:
    """``text`` as a number (an integer with ``integer``), None when absent; one-line SpecError otherwise."""
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        raise SpecError(f"{name} must be a number, got {text!r}") from None
    if math.isnan(v):
        raise SpecError(f"{name} must be a number, got {text!r}")
    if integer:
        if not math.isfinite(v) or v != int(v):
            raise SpecError(f"{name} must be an integer, got {text!r}")
        return int(v)
    return v


def parse_workers(text: str | None) -> int | None:
    """--workers: None (all cores) or an integer >= 1."""
    workers = parse_number("workers", text, integer=True)
    if workers is not None and workers < 1:
        raise SpecError(f"workers must be at least 1, got {workers}")
    return workers


def parse_time_limit(text: str | None) -> float | None:
    """--time-limit: None (the engine's default budget) or a positive finite number of seconds."""
    tl = parse_number("time-limit", text)
    if tl is not None and not (tl > 0 and math.isfinite(tl)):
        raise SpecError(f"time-limit must be positive, got {text!r}")
    return tl


def list_items(flag: str, values: str | Iterable[str] | None, *, what: str = "value") -> list[str]:
    """The items of a list flag, however they were written: ``1,2 3 --flag 4`` gives ["1", "2", "3", "4"].

    ``values`` is what :class:`ListAction` stored (or a flag's string default). An empty item
    (``1,,2``, ``1,``) or no item at all is a one-line SpecError; None (the flag absent) gives [].
    """
    if values is None:
        return []
    raw = [values] if isinstance(values, str) else list(values)
    items = [t.strip() for v in raw for t in str(v).split(",")]
    if not any(items):
        raise SpecError(f"{flag} needs at least one {what}")
    if "" in items:
        raise SpecError(f"{flag} has an empty item in {','.join(items)!r}: separate {what}s by one comma or by "
                        "spaces, with no comma at either end")
    return items


def parse_number_list(flag: str, values, *, integer: bool = False) -> list:
    """A list flag of finite numbers (integers with ``integer``), in the order given."""
    out = []
    for t in list_items(flag, values, what="number"):
        try:
            v = float(t)
        except ValueError:
            raise SpecError(f"{flag}: {t!r} is not a number") from None
        if not math.isfinite(v):
            raise SpecError(f"{flag}: {t!r} is not a finite number")
        if integer:
            if v != int(v):
                raise SpecError(f"{flag}: {t!r} is not an integer")
            v = int(v)
        out.append(v)
    return out


class ListAction(argparse.Action):
    """A list flag: comma-separated, space-separated or repeated (``--epsilon 0.5,1 2 --epsilon 4``).

    Stores the items split at commas and stripped (empty ones kept, for :func:`list_items` to
    refuse with a clear message); the first use replaces the default.
    """

    def __init__(self, option_strings, dest, nargs="+", **kwargs):
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        cur = getattr(namespace, self.dest, None)
        items = list(cur) if isinstance(cur, list) else []
        items += [t.strip() for v in values for t in v.split(",")]
        setattr(namespace, self.dest, items)


class DefaultValue(str):
    """A flag's default, marked so that a command can tell it from the same text given explicitly."""


def is_default(value) -> bool:
    """True when ``value`` is a flag's default rather than something the user wrote."""
    return isinstance(value, DefaultValue)


# -- the help layout --------------------------------------------------------------------------------
class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Description and epilog as written (examples stay one per line); every option with a default
    shows it, as "(default: X)" unless its help already says what the default is."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" in text or "default" in text.lower() or not action.option_strings:
            return text
        if action.default in (None, False, argparse.SUPPRESS) or isinstance(action.default, list):
            return text
        return text + " (default: %(default)s)"


def epilog(examples: Sequence[str], exits: Sequence[int], notes: str = "") -> str:
    """The examples and the exit statuses of a command, for its ``--help``."""
    lines = ["Examples:"] + [f"  {e}" for e in examples]
    lines += ["", "Exit status:"] + [f"  {code}  {EXIT_MEANINGS[code]}" for code in exits]
    if notes:
        lines += ["", textwrap.fill(notes, WIDTH)]
    return "\n".join(lines)


def paragraph(text: str) -> str:
    """A description as one paragraph wrapped to the help's width."""
    return textwrap.fill(" ".join(text.split()), WIDTH)


def add_command(sub, name: str, *, summary: str, description: str, examples: Sequence[str],
                exits: Sequence[int], notes: str = "") -> argparse.ArgumentParser:
    """A subcommand with the common help layout: a one-paragraph description, examples, exit statuses."""
    return sub.add_parser(name, help=summary, description=paragraph(description), formatter_class=HelpFormatter,
                          epilog=epilog(examples, exits, notes))


# -- the shared flags (one definition, one default each) --------------------------------------------
def add_privacy(p, *, choices: Sequence[str] = ("pure", "approx", "lipschitz"), help: str | None = None) -> None:
    p.add_argument("--privacy", default=DEFAULTS["privacy"], choices=list(choices),
                   help=help or "privacy notion: pure ε-DP or approx (ε,δ)-DP")


def add_dim(p, *, help: str = "dimension d of the query") -> None:
    p.add_argument("--dim", default=DEFAULTS["dim"], help=help)


def add_norm(p, *, help: str = "norm of the sensitivity in d > 1 dimensions: l1, l2 or linf") -> None:
    p.add_argument("--norm", default=DEFAULTS["norm"], help=help)


def add_sensitivity(p, *, as_list: bool = False, help: str = "sensitivity Δ > 0 (an integer on the integer domain)") -> None:
    if as_list:
        p.add_argument("--sensitivity", action=ListAction, default=DEFAULTS["sensitivity"], metavar="S",
                       help=help + f"; a list (default: {DEFAULTS['sensitivity']})")
    else:
        p.add_argument("--sensitivity", default=DEFAULTS["sensitivity"], help=help)


def add_domain(p, *, help: str = "noise domain: the integer lattice or the reals", mechanism: bool = False) -> None:
    """--domain; with ``mechanism`` (sample, mechanism) it only picks uniform noise's domain and defaults to
    the family's own (each other family lives on one domain), so there the default is not ``continuous``."""
    if mechanism:
        p.add_argument("--domain", default=None, choices=["integer", "continuous"],
                       help=help + " (default: the family's own domain; integer for uniform)")
    else:
        p.add_argument("--domain", default=DefaultValue(DEFAULTS["domain"]), choices=["integer", "nonnegative", "continuous"],
                       help=help)


def add_cost(p, *, help: str = "cost of the noise: abs | square | pow:P | an expression in x") -> None:
    p.add_argument("--cost", default=DEFAULTS["cost"], help=help)


def add_solver(p) -> None:
    p.add_argument("--solver", default=DEFAULTS["solver"], metavar="NAME|FILE",
                   help="solver profile name or TOML file (optmech solvers lists them)")


def add_time_limit(p, *, per: str = "solve") -> None:
    p.add_argument("--time-limit", default=DEFAULTS["time_limit"], metavar="SECONDS",
                   help=f"wall-clock budget per {per} in seconds (default: {DEFAULT_TIME_LIMIT:g})")


def target_gap_defaults(*, dp_only: bool = False) -> str:
    """Every family's default relative target gap, in words, read from :data:`optmech.spec.DEFAULT_GAPS`;
    with ``dp_only`` only the pure and (ε,δ)-DP families' (what ``optmech table`` solves).

    >>> target_gap_defaults()
    '1e-9 on ℤ and 1e-4 on ℝ (pure DP in 1-D; (ε,δ) on ℤ, ℤ^d, ℝ and ℝ^d), 1e-6 for pure DP in d > 1 ...'
    """
    g = {k: f"{v:.0e}".replace("e-0", "e-").replace("e+0", "e") for k, v in DEFAULT_GAPS.items()}
    text = (f"{g['integer']} on ℤ and {g['continuous']} on ℝ (pure DP in 1-D; (ε,δ) on ℤ, ℤ^d, ℝ and ℝ^d), "
            f"{g['lattice_nd']} for pure DP in d > 1 (ℤ^d and ℝ^d)")
    if dp_only:
        return text
    return text + f", {g['lipschitz']} for --privacy lipschitz, {g['wasserstein']} for --utility wasserstein|surrogate"


def add_target_gap(p, *, help: str = "relative gap (upper - lower)/upper at which to stop", dp_only: bool = False) -> None:
    p.add_argument("--target-gap", default=DEFAULTS["target_gap"], metavar="GAP",
                   help=help + f" (default: the problem family's: {target_gap_defaults(dp_only=dp_only)})")


def add_workers(p, *, one: str = "1 runs in this process") -> None:
    p.add_argument("--workers", default=DEFAULTS["workers"], metavar="N",
                   help=f"local worker processes; {one} (default: all cores)")


def add_json(p, *, help: str = "print one JSON object on stdout") -> None:
    p.add_argument("--json", action="store_true", default=DEFAULTS["json"], help=help + " (default: text)")
