#!/usr/bin/env python3
"""Check optmech's imports: layers point one way, no cycles among its modules, and no private name
imported across modules.

The layers are a contract in ``pyproject.toml`` (``[tool.optmech.layers]``, lowest first): a module
may import modules of its own layer or of lower layers only, and every module must belong to a
layer (the package's ``__init__``, a lazy facade, is exempt).

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


def load_layers(pyproject: str) -> tuple[list[list[str]], list[str]]:
    """(layers lowest first, exempt modules) from ``[tool.optmech.layers]`` of a pyproject.toml."""
    import tomllib

    with open(pyproject, "rb") as fh:
        conf = tomllib.load(fh)["tool"]["optmech"]["layers"]
    return [list(layer) for layer in conf["order"]], list(conf.get("exempt", []))


def layer_of(module: str, layers: list[list[str]]) -> int | None:
    """The index of the layer whose prefix matches ``module`` most specifically (None: unassigned)."""
    best, length = None, -1
    for i, layer in enumerate(layers):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = i, len(prefix)
    return best


def layer_violations(graph: dict[str, set[str]], layers: list[list[str]], exempt: list[str]) -> list[str]:
    """One line per import from a lower layer into a higher one, and per module in no layer."""
    out = []
    for m in sorted(graph):
        if m in exempt:
            continue
        lm = layer_of(m, layers)
        if lm is None:
            out.append(f"{m} belongs to no layer (add it to [tool.optmech.layers] in pyproject.toml)")
            continue
        for t in sorted(graph[m]):
            if t in exempt:
                continue
            lt = layer_of(t, layers)
            if lt is not None and lt > lm:
                out.append(f"{m} (layer {lm}: {layers[lm][0]}...) imports {t} (higher layer {lt}: {layers[lt][0]}...)")
    return out


def main(argv: list[str]) -> int:
    root = argv[1] if len(argv) > 1 else "optmech"
    graph = module_graph(root)
    found = cycles(graph)
    for comp in found:
        print("import cycle: " + " <-> ".join(comp))
    private = private_imports(root)
    for line in private:
        print("private name imported across modules: " + line)
    pyproject = os.path.join(os.path.dirname(os.path.abspath(root)), "pyproject.toml")
    layers, exempt = load_layers(pyproject)
    bad_layers = layer_violations(graph, layers, exempt)
    for line in bad_layers:
        print("layer violation: " + line)
    if not (found or private or bad_layers):
        print(f"{root}: layers point one way, no import cycles, no private imports across modules")
    return 1 if found or private or bad_layers else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
