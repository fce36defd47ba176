#!/usr/bin/env python3
"""Check optmech's imports: no cycles among its modules, and no private name imported across modules.

Every ``import``/``from ... import`` in every module (at module level and inside functions) is an
edge; a strongly connected component with more than one module is a cycle and fails the check.
A ``from pkg.mod import _name`` (or an import of a module whose name starts with ``_``) from another
module of the package fails too: what modules share is public.
Usage: ``python tools/check_imports.py [PACKAGE_DIR]`` (default ``optmech``); exit status 1 and one
line per finding.  Run by ``.ci/run`` and by ``tests/test_imports.py``.
"""

from __future__ import annotations

import ast
import os
import sys


def module_graph(root: str) -> dict[str, set[str]]:
    """{module: modules it imports}, for the package rooted at ``root`` (a directory)."""
    mods: dict[str, str] = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                name = os.path.relpath(path[:-3], os.path.dirname(os.path.abspath(root)) or ".").replace(os.sep, ".")
                mods[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = m.split(".")
                if node.level:
                    pkg = base if path.endswith("__init__.py") else base[:-1]
                    base = pkg[: len(pkg) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and not m.startswith(t + "."):
                    graph[m].add(t)
    return graph


def private_imports(root: str) -> list[str]:
    """``path: from module import _name`` for every private name one module imports from another."""
    pkg = os.path.basename(os.path.abspath(root))
    out = []
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            for node in ast.walk(tree):
                if not (isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == pkg):
                    continue
                private = lambda n: n.startswith("_") and not n.startswith("__")  # noqa: E731
                names = [a.name for a in node.names if private(a.name)]
                if names or any(private(part) for part in node.module.split(".")):
                    out.append(f"{path}: from {node.module} import {', '.join(names or [a.name for a in node.names])}")
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv: list[str]) -> int:
    root = argv[1] if len(argv) > 1 else "optmech"
    found = cycles(module_graph(root))
    for comp in found:
        print("import cycle: " + " <-> ".join(comp))
    private = private_imports(root)
    for line in private:
        print("private name imported across modules: " + line)
    if not (found or private):
        print(f"no import cycles and no private imports across modules in {root}")
    return 1 if found or private else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
