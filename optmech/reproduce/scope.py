"""What ``--quick`` leaves out of a catalogue spec, in one sentence for its report section.

The sentence is computed from the two problem lists of the spec (:func:`optmech.sweep.load_spec`
with ``quick=True`` and ``quick=False``), never from the TOML text, so it says exactly what the two
runs solve: how many problems each has, and per swept parameter the values only the full run has
(or the values it uses instead, where ``[quick]`` replaces an axis rather than shortening it).
Axes stepped together (``[zip]``, e.g. ε = δ) are named together.
"""

from __future__ import annotations

from pathlib import Path

from optmech.reproduce.report import fmt

__all__ = ["Axis", "axes", "scope_sentence", "spec_scope"]

#: parameter -> its symbol in the reports (the Wasserstein reports call the sensitivity m, [KHP15] the dimension n)
_SYMBOL = {"epsilon": "ε", "delta": "δ", "sensitivity": "Δ", "dim": "d", "resolution": "resolution",
           "cost": "cost", "norm": "norm", "input": "input", "privacy": "privacy", "domain": "domain",
           "utility": "utility", "target_gap": "target gap", "time_limit": "time limit (s)"}


def _symbol(key: str, problems) -> str:
    p0 = problems[0] if problems else {}
    if key == "sensitivity" and p0.get("utility") in ("wasserstein", "surrogate"):
        return "m"
    if key == "dim" and p0.get("privacy") == "lipschitz":
        return "n"
    return _SYMBOL.get(key, key)


def _value(v) -> str:
    if isinstance(v, str):
        kind = v.split(":")[0]
        return {"gaussian": "Gaussian", "poisson": "Poisson"}.get(kind, v) if ":" in v else v
    return fmt(float(v) if isinstance(v, int) and not isinstance(v, bool) else v)


def _distinct(values) -> list:
    out: list = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


class Axis:
    """One swept parameter, or several stepped together: its name and its values in each run."""

    def __init__(self, keys: tuple[str, ...], symbols: tuple[str, ...], full: list, quick: list):
        self.keys, self.symbols, self.full, self.quick = keys, symbols, full, quick

    @property
    def added(self) -> list:
        """Values of the full run that quick mode does not run."""
        return [v for v in self.full if v not in self.quick]

    @property
    def replaced(self) -> bool:
        """``[quick]`` runs values the full run does not have (a different axis, not a shorter one)."""
        return any(v not in self.full for v in self.quick)

    def name(self, values: list) -> str:
        if len(self.keys) == 1:
            return self.symbols[0]
        if all(len(set(map(_value, t))) == 1 for t in values):
            return " = ".join(self.symbols)
        return "(" + ", ".join(self.symbols) + ")"

    def text(self, values: list) -> str:
        """``ε ∈ {0.5, 2}``, ``δ = 0.05``, ``ε = δ ∈ {0.1, 0.02}``, ``(ε, δ) ∈ {(0.1, 0.2), …}``."""
        name = self.name(values)
        if len(self.keys) == 1:
            shown = [_value(t[0]) for t in values]
        elif "=" in name:
            shown = [_value(t[0]) for t in values]
        else:
            shown = ["(" + ", ".join(_value(x) for x in t) + ")" for t in values]
        return f"{name} = {shown[0]}" if len(shown) == 1 else f"{name} ∈ {{{', '.join(shown)}}}"

    def bare(self, values: list) -> str:
        """The values alone: ``4`` or ``{0.5, 2}``."""
        return self.text(values).split(" = " if len(values) == 1 else " ∈ ", 1)[1] if len(self.keys) == 1 \
            else self.text(values)


def axes(full: list[dict], quick: list[dict]) -> list[Axis]:
    """The parameters that vary within a run or differ between the runs, zipped ones merged."""
    keys = _distinct(k for p in list(full) + list(quick) for k in p)
    vary = [k for k in keys
            if len(_distinct(p.get(k) for p in full)) > 1
            or _distinct(p.get(k) for p in full) != _distinct(p.get(k) for p in quick)]
    groups: list[list[str]] = []
    for k in vary:
        for g in groups:
            a = g[0]
            na, nk = len(_distinct(p.get(a) for p in full)), len(_distinct(p.get(k) for p in full))
            pairs = len(_distinct((p.get(a), p.get(k)) for p in full))
            if na > 1 and na == nk == pairs:
                g.append(k)
                break
        else:
            groups.append([k])
    out = []
    for g in groups:
        t = tuple(g)
        out.append(Axis(t, tuple(_symbol(k, full) for k in t), _distinct(tuple(p.get(k) for k in t) for p in full),
                        _distinct(tuple(p.get(k) for k in t) for p in quick)))
    return out


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def scope_sentence(full: list[dict], quick: list[dict], *, quick_run: bool = True) -> str:
    """The sentence a section prints about ``--quick``; ``quick_run``: the report comes from a quick run."""
    nf, nq = len(full), len(quick)
    differ = [a for a in axes(full, quick) if a.full != a.quick]
    if nq == nf and not differ:
        return (f"Quick mode runs the full grid: {nq} problem{'s' if nq != 1 else ''}." if quick_run else
                f"Full run: {nf} problem{'s' if nf != 1 else ''}; `--quick` runs the same grid.")
    shown = ", ".join(a.text(a.quick) for a in differ)
    adds = [a.text(a.added) for a in differ if a.added and not a.replaced]
    instead = [(f"{a.name(a.full)} {a.bare(a.full)}", a.bare(a.quick)) for a in differ if a.replaced]
    if quick_run:
        rest = []
        if adds:
            rest.append("adds " + _and(adds))
        if instead:
            rest.append("uses " + _and([f"{f} instead of {q}" for f, q in instead]))
        return f"Quick mode: {nq} of {nf} problem{'s' if nf != 1 else ''} ({shown}); the full run {' and '.join(rest)}."
    rest = []
    if adds:
        rest.append("leaving out " + _and(adds))
    if instead:
        rest.append("at " + _and([f"{a.name(a.quick)} {a.bare(a.quick)} instead of {a.bare(a.full)}"
                                  for a in differ if a.replaced]))
    return (f"Full run: {nf} problem{'s' if nf != 1 else ''}; `--quick` runs {nq} of "
            f"{'them' if nf != 1 else 'it'} ({shown}), {', '.join(rest)}.")


def spec_scope(path: str | Path, *, quick_run: bool = True) -> str:
    """:func:`scope_sentence` for a spec file, from its quick and its full problem list."""
    from optmech.sweep import load_spec

    full = list(load_spec(str(path), quick=False, force=True).problems)
    quick = list(load_spec(str(path), quick=True, force=True).problems)
    return scope_sentence(full, quick, quick_run=quick_run)
