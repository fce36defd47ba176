"""The import layering: no cycles among optmech's modules and no private names shared (``tools/check_imports.py``, also run by
``.ci/run``), and the checker itself finds a cycle when there is one."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_imports", ROOT / "tools" / "check_imports.py")
check_imports = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_imports)


def test_optmech_has_no_import_cycles():
    found = check_imports.cycles(check_imports.module_graph(str(ROOT / "optmech")))
    assert found == [], found


def test_no_private_name_is_imported_across_modules():
    assert check_imports.private_imports(str(ROOT / "optmech")) == []


def test_the_checker_finds_private_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("_x = 1\ny = 2\n")
    (pkg / "b.py").write_text("from pkg.a import _x, y\nfrom pkg._c import z\nfrom __future__ import annotations\n")
    found = check_imports.private_imports(str(pkg))
    assert len(found) == 2 and "import _x" in found[0] + found[1] and "pkg._c" in found[0] + found[1]


def test_the_checker_finds_cycles_through_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg import a\n")  # imports into the cycle, not part of it
    assert check_imports.cycles(check_imports.module_graph(str(pkg))) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "check_imports.py"), str(pkg)], capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout.strip() == "import cycle: pkg.a <-> pkg.c <-> pkg.sub.b"


def test_layers_point_one_way():
    layers, exempt = check_imports.load_layers(str(ROOT / "pyproject.toml"))
    graph = check_imports.module_graph(str(ROOT / "optmech"))
    assert check_imports.layer_violations(graph, layers, exempt) == []
    # the engine's order as the README draws it: builders below solvers below certificates below families
    order = [check_imports.layer_of(m, layers) for m in
             ("optmech.spec", "optmech.problems.pure", "optmech.solvers.highs", "optmech.certify",
              "optmech.families.pure1d", "optmech.drive", "optmech.sweep", "optmech.cli.main")]
    assert order == sorted(order) and len(set(order)) == len(order)


def test_the_checker_finds_upward_imports_and_unassigned_modules():
    graph = {"p.low": {"p.high"}, "p.high": {"p.low"}, "p.stray": set()}
    found = check_imports.layer_violations(graph, [["p.low"], ["p.high"]], [])
    assert len(found) == 2 and "p.low" in found[0] and "imports p.high" in found[0] and "p.stray" in found[1]
