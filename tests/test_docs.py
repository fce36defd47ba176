"""The documentation site (docs/): its configuration, its API reference's coverage, its local
extensions; and (slow, needs a built site and chromium) screenshots of the built pages.

Nothing here builds the site: the build is ``python -m sphinx -W --keep-going -b html docs
docs/_build/html`` (CI runs it); these checks are the fast part that a plain ``pytest`` can do.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api"

#: The public modules whose names the API reference must document, besides ``optmech`` itself.
PUBLIC_MODULES = [
    "optmech.spec", "optmech.drive", "optmech.result", "optmech.costs", "optmech.mechanisms",
    "optmech.mechanisms.approx", "optmech.mechanisms.solved", "optmech.recommendation",
    "optmech.interop.opendp", "optmech.interop.accounting", "optmech.table", "optmech.sweep",
    "optmech.store", "optmech.compare", "optmech.plots", "optmech.audit", "optmech.certify",
    "optmech.exact", "optmech.errors", "optmech.inputs", "optmech.workers",
]


def load_ext(name: str):
    """A module of docs/_ext, imported from its file (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"docs_ext_{name}", DOCS / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_names(module) -> list[str]:
    """``__all__``, or for a module without one, the names its own source defines at top level
    (functions, classes, assignments) that do not start with an underscore; imported names are
    not its public names."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = [node.name]
        elif isinstance(node, ast.Assign):
            found = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found = [node.target.id]
        else:
            found = []
        names += [n for n in found if not n.startswith("_") and n not in names]
    return names


def autosummary_entries(text: str) -> list[tuple[str, bool]]:
    """``(full name, has its own page)`` for every entry of every ``.. autosummary::`` block of an
    .rst source: names are made absolute with the ``.. currentmodule::`` (or ``.. automodule::``)
    in force, a leading ``~`` (display the last component) is dropped, and an entry has its own
    page when its block has a ``:toctree:`` option."""
    entries: list[tuple[str, bool]] = []
    current = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\.\. (?:currentmodule|automodule|module|py:module):: *(\S+)", line)
        if m:
            current = m.group(1)
        if re.match(r"\.\. autosummary::", line):
            toctree = False
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                body = lines[i].strip()
                if body.startswith(":toctree:"):
                    toctree = True
                elif body and not body.startswith(":"):
                    name = body.split()[0].lstrip("~")
                    entries.append((name, toctree))
                i += 1
            continue
        i += 1
    return [(resolve_entry(name, current), own) for name, own in entries]


def resolve_entry(name: str, current: str) -> str:
    """autosummary's lookup: the name relative to the current module if that imports, else as written."""
    if current:
        candidate = f"{current}.{name}"
        if lookup(candidate) is not MISSING:
            return candidate
    return name


MISSING = object()


def lookup(full: str):
    """The object a dotted name refers to (module prefix imported, then attributes), or MISSING."""
    parts = full.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, MISSING)
            if obj is MISSING:
                return MISSING
        return obj
    return MISSING


def test_conf_imports_and_reads_nothing_from_the_network():
    """docs/conf.py imports without building; its version is the package's; no intersphinx."""
    import optmech

    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(conf)
    finally:
        sys.path[:] = saved
    assert conf.release == optmech.__version__
    assert conf.project == "optmech"
    for ext in ("myst_parser", "sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc",
                "sphinx.ext.doctest", "sphinx_gallery.gen_gallery", "sphinx_copybutton", "cli_reference"):
        assert ext in conf.extensions, ext
    assert "sphinx.ext.intersphinx" not in conf.extensions  # the build must not download anything
    assert conf.nitpicky is False
    assert conf.myst_heading_anchors == 3
    gallery = conf.sphinx_gallery_conf
    assert gallery["examples_dirs"] == "examples" and gallery["gallery_dirs"] == "auto_examples"
    assert gallery["abort_on_example_error"] is True and gallery["filename_pattern"] == r"/plot_"
    for ext in conf.extensions:  # every extension it names is importable (installed or in docs/_ext)
        if ext in ("cli_reference", "plain_bars"):
            assert (DOCS / "_ext" / f"{ext}.py").is_file()
        else:
            assert importlib.util.find_spec(ext) is not None, ext


def test_every_public_name_is_in_the_api_reference():
    """Every name of ``optmech.__all__`` and of each public module's ``__all__`` (or, without one,
    its own public top-level names) is listed in that module's page docs/api/<module>.rst; a name
    that is the same class or function as one documented elsewhere may link there (``~path``), but
    then that other entry must have its own page (a ``:toctree:`` block)."""
    import optmech

    pages = {p.stem: autosummary_entries(p.read_text(encoding="utf-8")) for p in API.glob("*.rst")}
    with_page = {name for entries in pages.values() for name, own in entries if own}
    index = (API / "index.rst").read_text(encoding="utf-8")
    missing: list[str] = []
    for modname in ["optmech", *PUBLIC_MODULES]:
        module = importlib.import_module(modname)
        assert modname in pages, f"no API page docs/api/{modname}.rst"
        assert re.search(rf"^\s+{re.escape(modname)}\s*$", index, re.MULTILINE), f"docs/api/index.rst lacks {modname}"
        listed = pages[modname]
        for name in public_names(module):
            full = f"{modname}.{name}"
            obj = getattr(module, name)
            if any(entry == full for entry, _ in listed):
                continue
            same = [entry for entry, _ in listed
                    if (inspect.isclass(obj) or inspect.isfunction(obj)) and lookup(entry) is obj
                    and entry.rsplit(".", 1)[-1] == name]
            if same and all(entry in with_page for entry in same):
                continue
            missing.append(full)
    assert not missing, ("public names without an entry in docs/api/<module>.rst (add each to an "
                         "'.. autosummary::' block with ':toctree: generated/'): " + ", ".join(missing))
    assert optmech.__all__  # the check above ran on something


def test_the_api_reference_lists_only_existing_names():
    """No stale entry: every autosummary entry imports (the build would fail on one that does not)."""
    stale = [name for p in API.glob("*.rst") for name, _ in autosummary_entries(p.read_text(encoding="utf-8"))
             if lookup(name) is MISSING]
    assert not stale, stale


def test_the_coverage_parser_resolves_relative_and_shortened_entries():
    """The .rst reader that the coverage test relies on, on a hand-written source."""
    text = """Title
=====

.. currentmodule:: optmech.mechanisms

.. autosummary::
   :toctree: generated/

   Laplace

.. autosummary::

   ~approx.Gaussian
   ~optmech.spec.Problem
"""
    assert autosummary_entries(text) == [("optmech.mechanisms.Laplace", True),
                                         ("optmech.mechanisms.approx.Gaussian", False),
                                         ("optmech.spec.Problem", False)]


def test_plain_bars_escapes_running_text_only():
    """docs/_ext/plain_bars.py: |x| in running text is escaped; literals, roles, literal blocks,
    directives, doctests and grid tables are untouched (expected lines written out by hand)."""
    escape_bars = load_ext("plain_bars").escape_bars
    source = [
        "The cost |x| and ``a|b`` and :math:`|y|` and ``--dim",
        "2|3`` wrapped, |s|<=Δ::",
        "",
        "    literal |x|",
        "",
        ".. math::",
        "",
        r"   \|x\|_1",
        "",
        ">>> 1 | 2",
        "3",
        "",
        r"already \|x\| escaped",
        "+---+---+",
        "| a | b |",
        "+---+---+",
    ]
    assert escape_bars(source) == [
        r"The cost \|x\| and ``a|b`` and :math:`|y|` and ``--dim",
        r"2|3`` wrapped, \|s\|<=Δ::",
        "",
        "    literal |x|",
        "",
        ".. math::",
        "",
        r"   \|x\|_1",
        "",
        ">>> 1 | 2",
        "3",
        "",
        r"already \|x\| escaped",
        "+---+---+",
        "| a | b |",
        "+---+---+",
    ]


def test_cli_reference_covers_every_subcommand():
    """docs/_ext/cli_reference.py renders ``optmech`` and every command that ``optmech --help``
    lists (read from the help text of the installed program, not from the extension)."""
    cli_reference = load_ext("cli_reference")
    from optmech.cli.main import build_parser

    with cli_reference.fixed_columns():
        rendered = {p.prog: p.format_help() for p, _ in cli_reference.walk(build_parser())}
    help_text = subprocess.run([sys.executable, "-m", "optmech", "--help"], capture_output=True, text=True,
                               check=True, env={**os.environ, "COLUMNS": "90"}).stdout
    block = help_text.split("positional arguments:\n", 1)[1].split("\n\n")[0]
    commands = {line.split()[0] for line in block.splitlines() if re.match(r"^ {4}\S", line)}
    assert {"solve", "recommend", "table", "reproduce"} <= commands
    assert set(rendered) == {"optmech"} | {f"optmech {c}" for c in commands}
    for prog, text in rendered.items():
        assert text.startswith(f"usage: {prog}")
        assert "Exit status:" in text, f"{prog} --help has no exit statuses"
    assert rendered["optmech"] == help_text  # the same text the terminal shows at 90 columns
    assert isinstance(build_parser(), argparse.ArgumentParser)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
def test_built_pages_render(tmp_path):
    """Screenshots of the built front page and one gallery page (headless chromium) are written and
    are not blank (more than one colour)."""
    import numpy as np
    from matplotlib.image import imread

    browser = chromium()
    if browser is None:
        pytest.skip("no chromium or chromium-browser on PATH")
    html = DOCS / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.skip("site not built: run python -m sphinx -W --keep-going -b html docs docs/_build/html")
    gallery = sorted((html / "auto_examples").glob("plot_*.html"))
    if not gallery:
        pytest.skip("the built site has no gallery page (docs/examples/plot_*.py)")
    for page in (html / "index.html", gallery[0]):
        png = tmp_path / f"{page.stem}.png"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={png}", "--window-size=1280,900", page.resolve().as_uri()],
                       capture_output=True, timeout=120, check=False)
        assert png.is_file() and png.stat().st_size > 0, f"no screenshot of {page}"
        img = imread(png)
        assert img.shape[:2] == (900, 1280)
        colours = np.unique(img.reshape(-1, img.shape[-1]), axis=0)
        assert len(colours) > 1, f"the screenshot of {page.name} is blank"


def test_the_pages_examples_run(tmp_path, monkeypatch):
    """Every ``>>>`` example in a fenced block of the docs pages runs and prints what the page shows
    (pages are read as a user reads them; the examples of one page share one namespace, in order; they
    run in a scratch folder, since some write a store)."""
    import doctest
    import re

    monkeypatch.chdir(tmp_path)

    pages = sorted((DOCS).rglob("*.md"))
    checked = 0
    for page in pages:
        blocks = re.findall(r"^```(?:pycon|python)\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        text = "\n\n".join(b for b in blocks if ">>>" in b)
        if not text:
            continue
        test = doctest.DocTestParser().get_doctest(text, {}, str(page.relative_to(DOCS)), str(page), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        report: list[str] = []
        runner.run(test, out=report.append)
        assert runner.failures == 0, "".join(report)
        checked += len(test.examples)
    assert checked >= 40     # getting-started and the interop guide at least
