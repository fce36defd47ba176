"""The five source papers are cited by tag, and nothing shipped points outside the repository.

(a) No shipped file (README.md, the docs pages and everything under optmech/, problems/, solvers/) contains a
    ``../shared`` path or a ``reference/<name>.md`` pointer (files a user of the package does not have).
(b) Every citation tag used in optmech/, docs/ and README.md is defined in the README's References section
    (and the section defines exactly the tags of :mod:`optmech.sources`).
(c) ``optmech reproduce`` writes a report that names the papers by tag, lists their full references,
    and points nowhere outside the repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from optmech.sources import REFERENCES, TAGS, WORKS, cite

ROOT = Path(__file__).resolve().parents[1]

#: ``../shared`` or a ``reference/<name>.md`` pointer
POINTER = re.compile(r"\.\./shared|\breference/[A-Za-z0-9_.-]+\.md")
#: a citation tag in square brackets: ``[Geng13]``, ``[GV13, Thm 2]``, ``[derived; Geng13, (3.7)]``, ``[GKOV15; ...]``
TAG = re.compile(r"(?:\[|;\s*)([A-Z][A-Za-z]*\d{2})(?=[,;\]])")
#: files allowed to carry a pointer / a citation by catalogue code (none)
PENDING_POINTER: set[str] = set()
PENDING_CODE_CITE: set[str] = set()


def _shipped_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "docs").rglob("*.py"))]
    for top in ("optmech", "problems", "solvers"):
        for p in sorted((ROOT / top).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo"):
                files.append(p)
    return files


def _text(p: Path) -> str:
    return p.read_text(encoding="utf-8", errors="replace")


def _references_section(readme: str) -> str:
    m = re.search(r"^## References\n(.*?)(?=^## |\Z)", readme, flags=re.S | re.M)
    assert m, "README.md has no '## References' section"
    return m.group(1)


def test_no_shipped_file_points_outside_the_repository():
    offenders = {}
    for p in _shipped_files():
        hits = [f"{i}: {line.strip()}" for i, line in enumerate(_text(p).splitlines(), 1) if POINTER.search(line)]
        if hits:
            offenders[p.relative_to(ROOT).as_posix()] = hits
    unexpected = {k: v for k, v in offenders.items() if k not in PENDING_POINTER}
    assert not unexpected, unexpected


def test_the_pointer_pattern_catches_what_it_must():
    for bad in ("see ../shared/seeds/000.txt", "(reference/multidim.md §7)", "`reference/approx-dp.md` §3"):
        assert POINTER.search(bad), bad
    for ok in ("[Geng13, Thm 2.5]", "problems/README.md", "HiGHS docs, guide/kkt.md"):
        assert not POINTER.search(ok), ok


def test_tags_and_references_agree():
    assert set(TAGS) == {"000", "001", "002", "003", "004"}
    assert set(TAGS.values()) == set(REFERENCES)
    assert cite("000") == "[Geng13]" and cite("conjecture") == "conjecture"
    section = _references_section(_text(ROOT / "README.md"))
    defined = set(re.findall(r"\*\*\[([A-Za-z]+\d{2})\]\*\*", section))
    assert defined == set(REFERENCES) | set(WORKS), defined
    assert not set(REFERENCES) & set(WORKS)
    for tag, citation in {**REFERENCES, **WORKS}.items():
        # every citation names its work by a quoted title, or (a preprint whose title we do not quote) its arXiv id
        found = re.search(r'"([^"]+)"', citation) or re.search(r"(arXiv:\d{4}\.\d{4,5})", citation)
        assert found is not None, (tag, citation)
        assert found.group(1) in section, (tag, found.group(1))
    assert "cited by these tags" in section


def test_every_tag_used_is_defined_in_the_readme():
    defined = set(re.findall(r"\*\*\[([A-Za-z]+\d{2})\]\*\*", _references_section(_text(ROOT / "README.md"))))
    used: dict[str, set[str]] = {}
    files = [ROOT / "README.md"] + [p for p in _shipped_files() if p.parts[len(ROOT.parts)] in ("optmech", "docs")]
    for p in files:
        for tag in TAG.findall(_text(p)):
            used.setdefault(tag, set()).add(p.relative_to(ROOT).as_posix())
    assert set(REFERENCES) <= set(used), "every paper is cited somewhere"
    undefined = {t: sorted(f) for t, f in used.items() if t not in defined}
    assert not undefined, undefined


def test_no_paper_is_cited_by_its_file_or_catalogue_code():
    code_cite = re.compile(r"\bseeds? 00[0-4]\b|\[(?:seed )?00[0-4][\] ,]|\b00[0-4]_[0-9a-f]{16}\.txt")
    offenders = []
    for p in _shipped_files():
        if p.relative_to(ROOT).as_posix() in PENDING_CODE_CITE:
            continue
        for i, line in enumerate(_text(p).splitlines(), 1):
            if code_cite.search(line):
                offenders.append(f"{p.relative_to(ROOT).as_posix()}:{i}: {line.strip()}")
    assert not offenders, offenders


def test_reproduce_report_names_the_papers_and_lists_the_references(tmp_path):
    out = tmp_path / "report"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "optmech", "reproduce", "--quick", "--out", str(out), "--only",
                        "fig2.5", "--workers", "1"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    text = (out / "README.md").read_text(encoding="utf-8")
    refs = _references_section(text)
    for tag, citation in REFERENCES.items():
        assert f"**[{tag}]**" in refs and citation in refs, tag
    assert "| [Geng13] | Fig. 2.5" in text and "*[Geng13], Fig. 2.5" in text
    assert "../shared" not in text and not POINTER.search(text) and "reference/" not in text
    assert "*Seed " not in text and "| seed |" not in text


def test_a_section_cites_its_paper_first_then_the_others_it_names():
    from optmech.sources import citation, section_tags, tags_in

    assert tags_in("Cors 12–15 ([Geng13] Cors 4.12–4.15); [GV13, Thm 2]; [Geng13]") == ["Geng13", "GV13"]
    assert tags_in("no tags, [x] or [Geng13x]") == []
    assert section_tags("002", "Cors 12–15 ([Geng13] Cors 4.12–4.15)") == ["GV13", "Geng13"]
    assert section_tags("conjecture", "[GKOV15] Thm 2 (d > 2), lattice analogue") == ["GKOV15"]
    assert section_tags("000", "Fig. 2.5") == ["Geng13"]
    for tag, ref in REFERENCES.items():
        assert citation(tag) == f"[{tag}] {ref}"
