"""The cost-expression compiler: text checked node by node against an :mod:`ast` whitelist and
compiled into a tuple tree (never ``eval``/``exec``); constants folded at parse time.
"""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction
from functools import reduce

import numpy as np

from optmech.costs.interval import INF, evaluate_tree, round_down, round_up, tree_enclosure
from optmech.errors import CostError


#: Limits on expression text: characters, AST nesting depth, |constant exponent| and pow:P.
MAX_LENGTH = 2000
MAX_DEPTH = 50
MAX_EXPONENT = 64.0

FUNCTIONS = {"abs": 1, "sqrt": 1, "exp": 1, "log": 1, "min": 2, "max": 2, "where": 3}
CONSTANTS = {"pi": math.pi, "e": math.e}
BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
           ast.BitAnd: "and", ast.BitOr: "or"}
CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
ALLOWED = "allowed: numbers, x, pi, e, + - * / **, comparisons, & | ~, abs sqrt exp log min max where"
VARIABLE_NAME = re.compile(r"x([1-9][0-9]*)\Z")  # x1, x2, ... (x0 and x01 are not variables)


# -- parsing -------------------------------------------------------------------------------------
_NODE_NAMES = {
    ast.Subscript: "subscripts ('[...]')", ast.Lambda: "lambda", ast.JoinedStr: "f-strings",
    ast.ListComp: "comprehensions", ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions", ast.BoolOp: "'and'/'or' (use & and |)",
    ast.IfExp: "'a if c else b' (use where(c, a, b))", ast.NamedExpr: "assignment expressions",
    ast.Starred: "starred arguments", ast.List: "lists", ast.Tuple: "tuples", ast.Set: "sets", ast.Dict: "dicts",
}


def _describe(n: ast.AST) -> str:
    if isinstance(n, ast.Attribute):
        return f"attribute access ('.{n.attr}')"
    if isinstance(n, ast.Constant):
        kind = {str: "string", bytes: "bytes", complex: "complex"}.get(type(n.value), type(n.value).__name__)
        return f"{kind} constants ({n.value!r:.30})"
    return _NODE_NAMES.get(type(n), f"{type(n).__name__} nodes")


class _Compiler:
    """Checks an :mod:`ast` tree against the whitelist and compiles it into tuples.

    ``dim`` None is the 1-D cost (``x`` and ``x1`` give the node ``("x",)``); an integer d >= 1
    gives ``("var", i)`` for x(i+1), i < d, and bare ``x`` only when d = 1; there ``a**2`` becomes
    ``("sq", a)``, evaluated as a·a and enclosed exactly where the float square is exact (so sums of
    squares at lattice points are exact, whatever the order of their terms).
    """

    def __init__(self, text: str, dim: int | None = None):
        self.text, self.dim = text, dim
        self.names = "x" if dim is None else "x1 (or x)" if dim == 1 else f"x1..x{dim}"
        self.allowed = ALLOWED if dim is None else ALLOWED.replace(" x,", f" {self.names},")

    def err(self, why: str) -> CostError:
        return CostError(f"invalid cost expression {' '.join(self.text.split())[:80]!r}: {why}")

    def compile(self, n: ast.AST, depth: int) -> tuple[tuple, bool, bool]:
        """Return (tree, is_boolean, mentions_x)."""
        if depth > MAX_DEPTH:
            raise self.err(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(n, ast.Constant) and isinstance(n.value, (bool, int, float)):
            return self.number(n), isinstance(n.value, bool), False
        if isinstance(n, ast.Name):
            return self.name(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd, ast.Invert)):
            a, boolean, has_x = self.compile(n.operand, depth + 1)
            if isinstance(n.op, ast.UAdd):
                return a, boolean, has_x
            if isinstance(n.op, ast.Invert) and not boolean:
                raise self.err("'~' needs a comparison result")
            return self.fold(("not" if isinstance(n.op, ast.Invert) else "neg", a)), boolean, has_x
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            raise self.err("'not' is not allowed (use ~)")
        if isinstance(n, ast.BinOp):
            op = BINOPS.get(type(n.op))
            if isinstance(n.op, ast.BitXor):
                fixed = " ".join(self.text.split()).replace("^", "**")
                raise self.err("'^' is not a power here; write " + (fixed if len(fixed) <= 60 else "a**b (e.g. x**2)"))
            if op is None:
                raise self.err(f"operator {type(n.op).__name__}: not allowed; {self.allowed}")
            (a, ba, xa), (b, bb, xb) = self.compile(n.left, depth + 1), self.compile(n.right, depth + 1)
            if op in ("and", "or") and not (ba and bb):
                raise self.err(f"'{'&' if op == 'and' else '|'}' needs comparison results on both sides")
            if op == "pow" and not xb and not abs(b[1]) <= MAX_EXPONENT:
                raise self.err(f"constant exponent {b[1]:g} exceeds {MAX_EXPONENT:g} in absolute value")
            if op == "pow" and b == ("const", 2.0, 2.0, 2.0):
                return self.fold(("sq", a)), False, xa  # a*a, exact where it is (see interval_square)
            if op == "mul" and a == b and not ba:
                return self.fold(("sq", a)), False, xa  # a*a of one subexpression: the same node as a**2
            if op == "mul" and ba != bb:  # an indicator product a*(cond) is where(cond, a, 0)
                cond, val = (a, b) if ba else (b, a)
                return self.fold(("where", cond, val, ("const", 0.0, 0.0, 0.0))), False, xa or xb
            return self.fold((op, a, b)), op in ("and", "or"), xa or xb
        if isinstance(n, ast.Compare):
            ops = [CMPOPS.get(type(o)) for o in n.ops]
            if None in ops:
                raise self.err("only the comparisons < <= > >= == != are allowed")
            terms = [self.compile(c, depth + 1) for c in [n.left, *n.comparators]]
            parts = [self.fold((op, terms[i][0], terms[i + 1][0])) for i, op in enumerate(ops)]
            return reduce(lambda p, q: self.fold(("and", p, q)), parts), True, any(t[2] for t in terms)
        if isinstance(n, ast.Call):
            return self.call(n, depth)
        raise self.err(f"{_describe(n)}: not allowed; {self.allowed}")

    def name(self, name: str) -> tuple[tuple, bool, bool]:
        if name.startswith("_"):
            raise self.err(f"names starting with '_' are not allowed ({name!r})")
        m = VARIABLE_NAME.match(name)
        if name == "x" or m:
            return self.variable(int(m.group(1)) if m else 0), False, True
        if name in CONSTANTS:
            v = CONSTANTS[name]
            return ("const", v, float(round_down(v)), float(round_up(v))), False, False
        if name in FUNCTIONS:
            raise self.err(f"function {name!r} must be called")
        raise self.err(f"unknown name {name!r} (allowed names: {self.names}, pi, e)")

    def variable(self, k: int) -> tuple:
        """Node of x (k = 0) or of xk."""
        d = 1 if self.dim is None else self.dim
        if k == 0 and d > 1:
            raise CostError(f"cost expression uses bare x but the problem has dim {d} (write x1..x{d})")
        if k > d:
            have = "variable x or x1" if d == 1 else f"variables x1..x{d}"
            raise CostError(f"cost expression uses x{k} but the problem has dim {d} ({have})")
        return ("x",) if self.dim is None else ("var", max(k, 1) - 1)

    def call(self, n: ast.Call, depth: int) -> tuple[tuple, bool, bool]:
        if not isinstance(n.func, ast.Name):
            raise self.err(f"{_describe(n.func)}: not allowed; {self.allowed}")
        name = n.func.id
        if name.startswith("_"):
            raise self.err(f"names starting with '_' are not allowed ({name!r})")
        if name not in FUNCTIONS:
            raise self.err(f"unknown function {name!r} (allowed: {', '.join(FUNCTIONS)})")
        if n.keywords:
            raise self.err(f"keyword arguments to {name}() are not allowed")
        if any(isinstance(a, ast.Starred) for a in n.args):
            raise self.err("starred arguments are not allowed")
        if len(n.args) != FUNCTIONS[name]:
            raise self.err(f"{name}() takes {FUNCTIONS[name]} argument(s), got {len(n.args)}")
        args = [self.compile(a, depth + 1) for a in n.args]
        if name == "where" and not args[0][1]:
            raise self.err("where(cond, a, b) needs a comparison as cond")
        return self.fold((name, *(a[0] for a in args))), False, any(a[2] for a in args)

    def number(self, n: ast.Constant) -> tuple:
        """A literal as ("const", value, lo, hi); lo < hi unless the literal is exactly a float."""
        v, text = n.value, ast.get_source_segment(self.text, n) or ""
        try:
            f = float(v)
        except OverflowError:
            raise self.err(f"number {text[:20]}... is too large") from None
        if not math.isfinite(f):
            raise self.err(f"number {text} is not finite")
        try:
            exact = int(f) == v if isinstance(v, int) else Fraction(text.replace("_", "")) == Fraction(f)
        except (ValueError, ZeroDivisionError):
            exact = False
        return ("const", f, f, f) if exact else ("const", f, float(round_down(f)), float(round_up(f)))

    @staticmethod
    def fold(t: tuple) -> tuple:
        """Replace an operation on constants by a constant with value and enclosure."""
        if any(c[0] != "const" for c in t[1:]):
            return t
        with np.errstate(all="ignore"):
            lo, hi = tree_enclosure(t, 0.0, 0.0)
            return ("const", float(evaluate_tree(t, 0.0)), float(lo), float(hi))


def parse_expr(text: str, dim: int | None = None) -> tuple:
    """Compile an expression in x (``dim`` None: the 1-D cost) or in x1..x``dim`` into a tree.

    >>> parse_expr("x*x + 1")            # a product of one subexpression with itself is its square
    ('add', ('sq', ('x',)), ('const', 1.0, 1.0, 1.0))
    >>> parse_expr("x*(x + 1)")[0]
    'mul'
    >>> parse_expr("x1 + 2*x2", dim=2)[0]
    'add'
    """
    comp = _Compiler(text, dim)
    if len(text) > MAX_LENGTH:
        raise comp.err(f"longer than {MAX_LENGTH} characters")
    if not text.strip():
        if dim is not None:
            raise CostError(f"cost is empty (use l1, l2, l2sq, linf or an expression in {comp.names})")
        raise CostError("cost is empty (use abs, square, pow:P or an expression in x)")
    try:
        root = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise comp.err(f"not a valid expression ({getattr(exc, 'msg', None) or type(exc).__name__})") from None
    tree, _, has_x = comp.compile(root.body, 1)
    if not has_x and not (0.0 <= tree[1] < INF):
        raise comp.err(f"a constant cost must be finite and nonnegative, got {tree[1]:g}")
    return tree


