"""``optmech reproduce``: run the catalogue of the source papers' tables and figures, and write a report.

Data flow: the catalogue (TOML specs in ``optmech/catalogue``, linked as ``problems/`` at the
repository root) → one deduplicated sweep (:func:`optmech.sweep.run_sweep`, local processes, results
in ``DIR/results.sqlite``, resumed when run again) → one report per spec (:data:`REPORTS`; each
recomputes the paper's closed forms independently and marks agreement) → ``DIR/README.md`` and
``DIR/figures/*.png``.  The report cites the papers by the tags of :mod:`optmech.sources` and ends
with their full references; each section opens with its paper's full citation and one sentence on what
``--quick`` leaves out (:mod:`optmech.reproduce.scope`, computed from the spec's quick and full problem
lists), and its tables put what the paper states beside the certified bracket.

A disagreement with a paper is a finding, reported with the corrected value; it does not make the
command fail.  A problem that fails is reported in its section and makes the exit status nonzero.
"""

from __future__ import annotations

import datetime
import os
import platform
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from optmech.reproduce.report import REPORTS, Context, Section, md_table, plural
from optmech.sources import REFERENCES, cite, citation, references_markdown, section_tags

# the reports register themselves on import
from optmech.reproduce import seed000, seed002, seed003, seed004, conjecture, gaussian, norms, integer_noise  # noqa: E402,F401  isort:skip

__all__ = ["REPORTS", "catalogue_paths", "load_catalogue", "reproduce", "ReproduceOutcome"]


def catalogue_paths() -> list[Path]:
    """The catalogue's spec files, sorted by name (paper first, then item)."""
    root = resources.files("optmech") / "catalogue"
    return sorted((Path(str(p)) for p in root.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name)


def load_catalogue(*, quick: bool = False, only: list[str] | None = None) -> list:
    """Validated catalogue specs (quick grids with ``quick``); ``only`` keeps names containing any of its strings."""
    from optmech.errors import SpecError
    from optmech.sweep import load_spec

    specs = [load_spec(str(p), quick=quick) for p in catalogue_paths()]
    if only:
        specs = [s for s in specs if any(o in s.name for o in only)]
        if not specs:
            raise SpecError(f"--only {','.join(only)} matches no catalogue spec")
    return specs


@dataclass
class ReproduceOutcome:
    out: str
    sections: list[Section] = field(default_factory=list)
    computed: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    #: the sweep's outcome when a signal stopped it (no report is written then), else None
    interrupted: object = None

    def to_dict(self) -> dict:
        return {
            "out": self.out, "report": str(Path(self.out) / "README.md"), "computed": self.computed,
            "skipped": self.skipped, "failed": self.failed, "seconds": self.seconds,
            "sections": [{"name": s.name, "seed": s.seed, "paper": cite(s.seed), "item": s.item,
                          "cites": [f"[{t}]" for t in (s.cites or section_tags(s.seed, s.item))], "scope": s.scope,
                          "agreed": s.agreed, "differed": s.differed, "checks": len(s.checks), "failed": s.failed,
                          "figures": s.figures} for s in self.sections],
        }


def reproduce(out: str | os.PathLike, *, quick: bool = False, workers: int | None = None,
              only: list[str] | None = None, progress: bool = False) -> ReproduceOutcome:
    """Run the catalogue into ``out/results.sqlite`` (resuming) and write ``out/README.md`` and figures.

    When a signal stops the sweep (see :func:`optmech.sweep.run_sweep`), the finished problems stay
    in the store, no report is written, and :attr:`ReproduceOutcome.interrupted` holds the sweep's
    outcome; running again resumes.
    """
    from optmech.reproduce.scope import spec_scope
    from optmech.store import ResultStore, problem_key
    from optmech.sweep import SweepSpec, normalised, run_sweep

    t0 = time.perf_counter()
    outdir = Path(out)
    specs = load_catalogue(quick=quick, only=only)
    paths = {p.stem: p for p in catalogue_paths()}
    outdir.mkdir(parents=True, exist_ok=True)
    store_path = outdir / "results.sqlite"
    union, seen = [], set()
    for s in specs:
        for p in s.problems:
            k = problem_key(normalised(p))
            if k not in seen:
                seen.add(k)
                union.append(p)
    sweep = run_sweep(SweepSpec("reproduce", "", tuple(union)), str(store_path), workers=workers, resume=True,
                      progress=progress)
    errors = {e["key"]: e["error"] for e in sweep.errors}
    outcome = ReproduceOutcome(str(outdir), computed=sweep.computed, skipped=sweep.skipped, failed=sweep.failed)
    if sweep.interrupted is not None:  # Ctrl-C or SIGTERM: what finished is stored; no half report
        outcome.interrupted = sweep
        outcome.seconds = time.perf_counter() - t0
        return outcome
    with ResultStore(store_path) as store:
        for s in specs:
            rows = []
            for p in s.problems:
                q = normalised(p)
                k = problem_key(q)
                rows.append((q, store.get(k) if store.has(k) else None))
            ctx = Context(s, rows, outdir, quick, errors)
            section = REPORTS[s.reproduce["report"]](ctx)
            section.scope = spec_scope(paths[s.name], quick_run=quick) if s.name in paths else ""
            section.cites = section_tags(section.seed, f"{section.item} {s.description or ''}")
            outcome.sections.append(section)
    outcome.seconds = time.perf_counter() - t0
    _write_readme(outdir, outcome, quick)
    return outcome


def _source(s: Section) -> str:
    """What a section's italic source line names: the paper's tag, or "Conjecture" and the paper it comes from."""
    tag = cite(s.seed)
    return tag if tag != s.seed else s.seed.capitalize()


def _paper(s: Section) -> str:
    """The summary table's paper cell: the tag of the section's paper ("[GKOV15] (conjecture)" for the conjecture)."""
    tags = s.cites or section_tags(s.seed, s.item)
    if cite(s.seed) != s.seed or not tags:
        return cite(s.seed)
    return f"[{tags[0]}] ({s.seed})"


def _citation_lines(s: Section) -> list[str]:
    """"**Paper:** [GV13] Q. Geng, ...", then "**Also cited:** ..." for the other papers the item names."""
    tags = [t for t in (s.cites or section_tags(s.seed, s.item)) if t in REFERENCES]
    if not tags:
        return []
    lines = [f"**Paper:** {citation(tags[0])}"]
    if len(tags) > 1:
        lines[0] += "  "  # a markdown line break
        lines.append("**Also cited:** " + " ".join(citation(t) for t in tags[1:]))
    return ["\n".join(lines), ""]


def _counts(checks) -> str:
    """"42 statements agree, 1 differs (…), 4 are not compared", verbs agreeing with the counts."""
    a, d, n = (sum(c.ok is v for c in checks) for v in (True, False, None))
    return (f"{plural(a, 'statement')} {'agrees' if a == 1 else 'agree'}, {d} {'differs' if d == 1 else 'differ'} "
            f"(findings, each with the corrected value), {n} {'is' if n == 1 else 'are'} not compared")


def _anchor(s: Section) -> str:
    return s.name.lower().replace(".", "").replace(" ", "-")


def _write_readme(outdir: Path, o: ReproduceOutcome, quick: bool) -> None:
    """DIR/README.md: summary, one section per spec, the errata, the references; written to a temporary file, then renamed."""
    from optmech.errata import ERRATA, errata_for
    from optmech.store import optmech_version

    checks = [c for s in o.sections for c in s.checks]
    lines = [
        "# optmech reproduction report",
        "",
        f"optmech {optmech_version()} · {'quick' if quick else 'full'} catalogue · "
        f"{datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')} · "
        f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()} · {o.seconds:.0f} s",
        "",
        f"**{_counts(checks)}.** "
        f"Problems: {o.computed} solved now, {o.skipped} reused from `results.sqlite`, {o.failed} failed.",
        "",
        "Every optimum below is a certified bracket [lower, upper]: the lower end comes from an exactly "
        "dual-feasible certificate, the upper end from an exactly audited mechanism (`optmech store show "
        "results.sqlite KEY` gives the full record). Closed forms are recomputed from the papers' formulas, "
        "independently of the solver. Numbers a paper prints rounded (\"about 15-fold\") are compared "
        "within the tolerance stated in the check. Papers are cited by tag, e.g. [Geng13, Thm 2.5]; the full "
        "references are at the end ([References](#references)). Each section names its paper in full, puts what "
        "the paper states beside what optmech certifies, and says which problems "
        + ("`--quick` left out (the full run adds them)." if quick else "`--quick` would leave out."),
        "",
        md_table(["experiment", "paper", "item", "agree", "differ", "not compared", "failed problems"],
                 [[f"[{s.name}](#{_anchor(s)})", _paper(s), s.item, str(s.agreed), str(s.differed),
                   str(len(s.checks) - s.agreed - s.differed), str(s.failed)] for s in o.sections]),
        "",
    ]
    for s in o.sections:
        lines += [f"<a id=\"{_anchor(s)}\"></a>", f"## {s.name}: {s.title}", "", f"*{_source(s)}, {s.item}.*", ""]
        lines += _citation_lines(s)
        if s.scope:
            lines += [f"*{s.scope}*", ""]
        for b in s.body:
            lines += [b, ""]
        if s.checks:
            lines += [md_table(["statement", "paper states", "optmech finds", "", "note"],
                               [[c.claim, c.seed, c.optmech, c.mark, c.note] for c in s.checks]), ""]
        for f in s.figures:
            lines += [f"![{Path(f).stem}]({f})", ""]
        known = errata_for(s.name)
        if known:
            lines += [f"**Errata bearing on this item** ({len(known)}):", ""]
            lines += [f"- {e.sentence()}" for e in known]
            lines.append("")
    lines += ["## Errata we know of", "",
              "Each erratum is checked against the paper's text; corrected values are computed here.", ""]
    lines.append(md_table(["paper", "where", "printed", "corrected", "corrected value"],
                          [[cite(e.seed), e.where, e.printed, e.corrected, e.value_phrase()] for e in ERRATA]))
    lines += ["", "<a id=\"references\"></a>", "## References", "",
              "The source papers, cited above by these tags (section, equation and theorem numbers are the "
              "paper's own):", ""]
    lines += references_markdown()
    lines += ["", "---", "Rerun: `optmech reproduce " + ("--quick " if quick else "") + f"--out {outdir.name}` "
              "(finished problems are reused from results.sqlite)."]
    tmp = outdir / "README.md.part"
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, outdir / "README.md")
