"""Text reports: one renderer for every family's :class:`~optmech.result.Result`, and the value format
that ``optmech solve`` and ``optmech table`` share.

Every report has the same shape: a header naming the problem, the certified bracket with its relative
gap and status (:func:`bracket_rows`), the privacy audit, the LP's size, the time, then one table of
the references (:func:`reference_rows`: name, kind, value, inside bracket, valid, parameters, and the
reference's note wrapped at word boundaries under it, never cut), the claims, and the candidate.

Values are written by :func:`format_value`: 12 significant digits, ``inf``/``-inf`` for infinities,
and :data:`MISSING` (``—``) for a value that is absent (None) or not a number; relative gaps by
:func:`format_gap` (3 digits) and times by :func:`format_seconds` (milliseconds); in ``solve`` and in
``table``'s text and markdown alike.

>>> format_value(0.1 + 0.2), format_value(float("nan")), format_value(None), format_value(float("inf"))
('0.3', '—', '—', 'inf')
>>> wrap("a note that is long enough to wrap at a word boundary", indent=4, width=24)
['    a note that is long', '    enough to wrap at a', '    word boundary']
"""

from __future__ import annotations

import math
import textwrap
from typing import Any, Iterable

from optmech import __version__

__all__ = ["MISSING", "NOTE_WIDTH", "format_value", "format_gap", "format_seconds", "format_parameters", "wrap", "reference_rows",
           "bracket_rows", "candidate_rows", "format_result"]

#: How a missing value (None, or a float that is not a number) is written in every text output.
MISSING = "—"
#: The width at which notes are wrapped (at word boundaries; a word longer than that stays whole).
NOTE_WIDTH = 110
_NAME_W, _KIND_W, _VALUE_W, _INSIDE_W, _VALID_W = 20, 7, 22, 16, 7


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def format_value(x: Any, digits: int = 12) -> str:
    """A value as text: ``digits`` significant digits for numbers, ``inf``/``-inf``, :data:`MISSING` for
    None or NaN, ``yes``/``no`` for booleans, anything else as ``str``."""
    if _missing(x):
        return MISSING
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        if isinstance(x, float) and math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return f"{x:.{digits}g}"
    return str(x)


def format_gap(x: Any) -> str:
    """A relative gap (3 significant digits; :data:`MISSING` when absent or not a number)."""
    return format_value(x, 3)


def format_seconds(x: Any) -> str:
    """A duration in seconds, to the millisecond (:data:`MISSING` when absent or not a number)."""
    if _missing(x) or isinstance(x, bool) or not isinstance(x, (int, float)):
        return format_value(x)
    return f"{x:.3f}" if math.isfinite(x) else format_value(x)


def format_parameters(parameters: dict | None) -> str:
    """``k=v, ...`` for the scalar parameters, floats to 6 significant digits (:data:`MISSING` when there
    are none), short lists of numbers (a d-D shift) as ``k=(a, b)``; other lists and mappings (a solve's
    history, say) are left to the JSON output, which says so."""
    if not parameters:
        return MISSING
    out, left = [], []
    for k, v in parameters.items():
        if isinstance(v, (list, tuple)) and 0 < len(v) <= 8 and all(
                isinstance(u, (int, float)) and not isinstance(u, bool) for u in v):
            out.append(f"{k}=({', '.join(format_value(u, 6) for u in v)})")
        elif isinstance(v, (list, tuple, dict, set)):
            left.append(k)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(f"{k}={format_value(v, 6)}")
        else:
            out.append(f"{k}={v}")
    text = ", ".join(out) if out else MISSING
    return text + (f" ({', '.join(left)}: in the --json output)" if left else "")


def wrap(text: str, indent: int, width: int = NOTE_WIDTH) -> list[str]:
    """``text`` wrapped at word boundaries into lines of at most ``width`` characters, each indented by
    ``indent`` spaces (a single word longer than the line stays whole: nothing is ever cut)."""
    pad = " " * indent
    return textwrap.wrap(" ".join(str(text).split()), width=width, initial_indent=pad, subsequent_indent=pad,
                         break_long_words=False, break_on_hyphens=False)


def reference_rows(references: Iterable, indent: int = 2) -> list[str]:
    """The references table of every report: a title line, a header line, then per reference one line
    (name, kind, value, inside bracket, valid, parameters) and its note wrapped below it."""
    refs = list(references)
    if not refs:
        return []
    pad, sub = " " * indent, " " * (indent + 2)
    name_w = max(_NAME_W, *(len(r.name) + 2 for r in refs))
    rows = [f"{pad}references (closed forms and bounds)",
            f"{sub}{'name':<{name_w}}{'kind':<{_KIND_W}}{'value':<{_VALUE_W}}{'inside bracket':<{_INSIDE_W}}"
            f"{'valid':<{_VALID_W}}parameters"]
    for r in refs:
        valid = MISSING if r.valid is None else ("yes" if r.valid else "NO")
        head = (f"{sub}{r.name:<{name_w}}{(r.kind or MISSING):<{_KIND_W}}{format_value(r.value):<{_VALUE_W}}"
                f"{('yes' if r.inside_bracket else 'no'):<{_INSIDE_W}}{valid:<{_VALID_W}}")
        # the parameters start on the row and wrap, at word boundaries, under the note's indent
        rows += textwrap.wrap(format_parameters(r.parameters), width=max(NOTE_WIDTH, len(head) + 20),
                              initial_indent=head, subsequent_indent=" " * (indent + 4),
                              break_long_words=False, break_on_hyphens=False)
        if r.note:  # the reference's note, whole, wrapped at word boundaries
            rows += textwrap.wrap(" ".join(str(r.note).split()), width=NOTE_WIDTH,
                                  initial_indent=" " * (indent + 4) + "note: ", subsequent_indent=" " * (indent + 10),
                                  break_long_words=False, break_on_hyphens=False)
    return rows


def bracket_rows(result, tag: str) -> list[str]:
    """The certified bracket, its relative gap and the status: the same three lines in every report."""
    return [
        f"  bracket ({tag})  [{format_value(result.lower_bound)}, {format_value(result.upper_bound)}]",
        f"  relative gap      {format_gap(result.relative_gap)}",
        f"  status            {result.status}: {result.message}",
    ]


def candidate_rows(result) -> list[str]:
    """The conjecture-mode line (``--candidate``), when the result has one."""
    c = result.candidate
    if not c:
        return []
    verdict = "optimal within the certificate" if c["optimal_within_certificate"] else "NOT shown optimal"
    return [f"  candidate         {c['name']}: {format_value(c['value'])}, gap to the lower bound "
            f"{format_gap(c['gap_to_lower_bound'])} ({verdict})"]


def _g17(v: Any) -> str:
    """A float at full precision (17 significant digits, exponent kept), or its text when not a number."""
    return format_value(v, 17) if isinstance(v, (int, float)) or v is None else str(v)


def _audit_row(result) -> str:
    a = result.audit or {}
    verdict = f"(audit {'passed' if a.get('passed') else 'FAILED'})"
    if a.get("realised_delta") is not None and str(a.get("method", "")).startswith("closed form"):
        return f"  privacy           {a['method']}"  # no audit ran: the law is private by its own proof
    if a.get("realised_delta") is not None:
        return f"  audited delta     {_g17(a['realised_delta'])} over {a.get('shifts')} shifts {verdict}"
    if a.get("realised_epsilon") is not None:
        return f"  realised epsilon  {_g17(a['realised_epsilon'])} {verdict}"
    if a.get("method"):
        return f"  privacy           {a['method']}"
    return f"  privacy           {MISSING} {verdict}" if a else f"  privacy           {MISSING}"


def _lp_row(result) -> str:
    lp, solver = result.lp or {}, result.solver or {}
    if not lp:
        return f"  LP                {MISSING}"
    text = (f"  LP                rows {format_value(lp.get('rows'))}, cols {format_value(lp.get('cols'))}, "
            f"nonzeros {format_value(lp.get('nonzeros'))}")
    if "orbits" in lp:
        text += f", {lp['orbits']} orbits"
    elif "layer_rows" in lp:
        text += f", the coupled l1-layer LP: {lp['levels'] + 1} spheres, {lp['layer_rows']} rows"
    elif lp.get("periods"):
        text += f", {lp.get('resolution')} nodes per sensitivity, {lp.get('periods')} periods"
    what = [f"{lp['builder']} builder"] if lp.get("builder") else []
    if solver.get("backend"):
        what.append(" ".join(str(solver[k]) for k in ("backend", "method", "version") if solver.get(k)))
    return text + (f" ({', '.join(what)})" if what else "")


def _head(result) -> str:
    pr = result.problem
    v = f"optmech {__version__} — "
    if pr.get("kind") == "wasserstein":
        inp = pr["input"]
        what = "surrogate utility E|noise| (P2 of [QHFL22])" if pr["utility"] == "surrogate" else "Wasserstein (W1) utility"
        return (v + f"{what}, {pr['privacy']} DP, epsilon={pr['epsilon']:g}"
                + (f", delta={pr['delta']:g}" if pr.get("delta") else "") + f", sensitivity m={pr['sensitivity']}, "
                f"input {inp.get('label', 'pmf')}")
    if pr.get("privacy") == "lipschitz":
        return (v + f"Lipschitz privacy, epsilon={pr['epsilon']:g} per unit distance, dim {pr['dim']} "
                f"({pr['norm']}), {pr['domain']}" + (f" (resolution {pr['resolution']})" if pr.get("resolution") else "")
                + f", cost {pr['cost']}")
    if pr.get("privacy") == "approx":
        return (v + f"(ε,δ)-DP, epsilon={pr['epsilon']:g}, delta={pr['delta']:g}, sensitivity={pr['sensitivity']:g} "
                f"({'ℓ2' if pr.get('norm') == 'l2' else 'ℓ1'}), dim {pr['dim']}, {pr.get('domain', 'integer')} domain, "
                f"cost {pr['cost']}")
    if pr.get("dim", 1) > 1:
        return (v + f"pure ε-DP on {'R' if pr.get('domain') == 'continuous' else 'Z'}^{pr['dim']}, "
                f"epsilon={pr['epsilon']:g}, sensitivity={pr['sensitivity']:g} ({pr['norm']}), cost {pr['cost']}")
    return (v + f"1-D pure ε-DP, epsilon={pr['epsilon']:g}, sensitivity={pr['sensitivity']:g}, {pr['domain']}"
            + (f" (resolution {pr['resolution']})" if pr.get("resolution") else "")
            + (f" ({pr['cells_per_period']} cells per Δ, refined)" if pr.get("cells_per_period") and not pr.get("resolution")
               else "")
            + f", cost {pr['cost']}")


def format_result(result) -> str:
    """The text report of a Result of any family (module docstring): what ``optmech solve`` prints."""
    tag = "certified" if result.certified else "UNCERTIFIED — not an optimum"
    rows = [_head(result), *bracket_rows(result, tag), _audit_row(result), _lp_row(result),
            f"  time              {format_seconds(result.seconds)} s", *reference_rows(result.references)]
    rows += [f"  note: {c}" for c in result.claims]
    return "\n".join(rows + candidate_rows(result))
