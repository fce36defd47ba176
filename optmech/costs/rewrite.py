"""Symbolic recognition of c·|x|^p in a cost expression: a sound rewrite on the parsed AST.

An expression such as ``abs(x)**3``, ``sqrt(abs(x))``, ``x*x``, ``abs(-x)``, ``where(x >= 0, x, -x)``
or ``2*abs(x)**3`` is the function c·|x|^p for one exact rational c > 0 and p > 0.
:func:`recognise_power` proves that **from the expression itself**, never from samples: it walks
the :mod:`ast` of the (already whitelisted) text with exact rational arithmetic and describes every
subexpression as one of

* a constant (an exact :class:`~fractions.Fraction`; decimal literals are their exact decimal
  value, as in the interval evaluator; ``pi``, ``e`` and irrational results are not exact, so
  they are not recognised),
* a *sum of powers on each half-line* (:class:`Mono`): Σ c·x^p for x > 0 and Σ c·|x|^p for
  x < 0, every p > 0, so its value at x = 0 is 0 (a side may be identically 0),
* a condition (a comparison) whose truth value is constant on x > 0 and on x < 0.

The rules are identities of real functions on x > 0 and on x < 0 separately, and every such sum
is 0 at x = 0 (p > 0): x is x^1 on x > 0 and −|x|^1 on x < 0; sums and products combine the terms
exactly (integer powers of a sum are repeated products); a constant positive power k of a single
term c·|x|^p is c^k·|x|^(p·k) (for non-integer k only where c >= 0, so the base is never
negative, and only where c^k is rational); ``sqrt`` is the power 1/2; ``abs`` keeps a side whose
coefficients are all >= 0 and negates one whose are all <= 0; ``min``/``max`` pick the side whose
difference with the other has one sign (|x|^p > 0 there); division only by a nonzero constant; ``where(cond, a, b)`` picks a side's branch when ``cond``
compares two recognised terms whose difference has a known sign on that side (a branch that is
a nonzero constant is refused: it could be taken at x = 0); an indicator product ``a*(cond)`` is
``where(cond, a, 0)``.  Anything else — a constant added to a monomial, x in an exponent or a
denominator, ``exp``, ``log``, a comparison with a nonzero constant — ends the recognition with
None (the expression is then solved as it is).  :func:`recognise_power` accepts the result when both
sides are the same single term c·|x|^p with c > 0; :func:`canonical_text` writes any result as one
expression (sums of c*abs(x)**p), the same text for every expression with the same sides.

>>> recognise_power("abs(x)**3"), recognise_power("2*sqrt(abs(x))")
((Fraction(1, 1), Fraction(3, 1)), (Fraction(2, 1), Fraction(1, 2)))
>>> recognise_power("abs(x - 1)**3") is None, recognise_power("where(x > 1e6, 0, abs(x)**3)") is None
(True, True)
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from fractions import Fraction

#: A side: the function Σ c·|x|^p over its terms (p, c), powers p > 0 increasing, coefficients c ≠ 0;
#: () is the zero function.
Side = tuple[tuple[Fraction, Fraction], ...]

#: The largest exact integer power taken of a constant (the parser limits exponents to 64 anyway).
MAX_INT_POWER = 64
#: Constants beyond this many bits (numerator or denominator) end the recognition.
MAX_BITS = 4096
#: Sides with more terms end the recognition.
MAX_TERMS = 16


@dataclass(frozen=True)
class Mono:
    """Σ c·x^p on x > 0 (``plus``) and Σ c·|x|^p on x < 0 (``minus``), every p > 0, so 0 at x = 0."""

    plus: Side
    minus: Side


@dataclass(frozen=True)
class Cond:
    """A condition whose truth value is ``plus`` on x > 0 and ``minus`` on x < 0."""

    plus: bool
    minus: bool


Term = Fraction | Mono | Cond


def recognise_power(text: str) -> tuple[Fraction, Fraction] | None:
    """(c, p) when the expression in x is proven to be c·|x|^p (exact c > 0, p > 0), else None.

    ``text`` should already be accepted by :func:`optmech.costs.parse_expr`; any construct the
    rules above do not cover gives None (never an error).

    >>> recognise_power("x*x"), recognise_power("abs(x)**1"), recognise_power("max(x, -x)")
    ((Fraction(1, 1), Fraction(2, 1)), (Fraction(1, 1), Fraction(1, 1)), (Fraction(1, 1), Fraction(1, 1)))
    >>> recognise_power("x**3") is None                       # odd: -|x|^3 for x < 0
    True
    """
    t = recognise(text)
    if t is None or len(t.plus) != 1 or t.plus != t.minus:
        return None
    p, c = t.plus[0]
    return (c, p) if c > 0 else None


def recognise(text: str) -> Mono | None:
    """The expression as sums of powers of |x| on each half-line (:class:`Mono`), proven by the
    rules of the module doc, or None (anything else, or the zero function).

    >>> m = recognise("where(x > 0, x*x + x, x*x - x)")
    >>> m.plus == m.minus == ((Fraction(1), Fraction(1)), (Fraction(2), Fraction(1)))
    True
    >>> canonical_text(m), canonical_text(recognise("max(x, -3*x)"))
    ('abs(x)**2 + abs(x)', 'where(x >= 0, abs(x), 3*abs(x))')
    """
    try:
        root = ast.parse(text.strip(), mode="eval")
        t = _Walker(text.strip()).term(root.body)
    except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError, MemoryError, OverflowError,
            ZeroDivisionError):
        return None
    if not isinstance(t, Mono) or not (t.plus or t.minus):
        return None
    return t


def _number(c: Fraction) -> str:
    """An exact rational as expression text: ``3``, ``0.25``, ``(1/3)``."""
    if c.denominator == 1:
        return str(c.numerator)
    f = repr(float(c))
    return f if Fraction(f) == c else f"({c.numerator}/{c.denominator})"


def _side_text(side: Side) -> str:
    """Σ c·abs(x)**p, highest power first (``0`` for the zero function)."""
    out = ""
    for p, c in reversed(side):
        base = "abs(x)" if p == 1 else f"abs(x)**{_number(p)}"
        a = abs(c)
        term = base if a == 1 else f"{_number(a)}*{base}"
        out = (f"-{term}" if c < 0 else term) if not out else f"{out} {'-' if c < 0 else '+'} {term}"
    return out or "0"


def canonical_text(m: Mono) -> str:
    """One expression text for every expression with the same :class:`Mono`: the sum of powers of
    abs(x), or ``where(x >= 0, PLUS, MINUS)`` when the half-lines differ (both are 0 at x = 0).

    >>> canonical_text(recognise("x*x + abs(x)*2")), canonical_text(recognise("max(x, 0)"))
    ('abs(x)**2 + 2*abs(x)', 'where(x >= 0, abs(x), 0)')
    """
    if m.plus == m.minus:
        return _side_text(m.plus)
    return f"where(x >= 0, {_side_text(m.plus)}, {_side_text(m.minus)})"


def canonical_name(p: Fraction) -> str | None:
    """The named cost of |x|^p: ``abs``, ``square`` or ``pow:P`` (P = p written as a float), or
    None when p is not exactly a float in (0, 64] (then no named cost is that function).

    >>> canonical_name(Fraction(3)), canonical_name(Fraction(1, 2)), canonical_name(Fraction(1, 3))
    ('pow:3', 'pow:0.5', None)
    """
    try:
        f = float(p)
    except OverflowError:
        return None
    if Fraction(f) != p or not 0.0 < f <= 64.0:
        return None
    return "abs" if f == 1.0 else "square" if f == 2.0 else f"pow:{int(f) if f.is_integer() else repr(f)}"


# -- exact helpers ---------------------------------------------------------------------------------
def _iroot(n: int, d: int) -> int | None:
    """The exact integer d-th root of n >= 0, or None."""
    if n < 2:
        return n
    lo, hi = 0, 1 << (n.bit_length() // d + 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid**d <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo if lo**d == n else None


def _const_pow(c: Fraction, k: Fraction) -> Fraction | None:
    """c**k exactly, or None when it is not rational (or c < 0 with a non-integer k, or too large)."""
    if abs(k) > MAX_INT_POWER or (c == 0 and k <= 0):
        return None
    if max(c.numerator.bit_length(), c.denominator.bit_length()) * abs(k) > MAX_BITS:
        return None
    if k.denominator == 1:
        return c ** int(k)
    if c < 0 or k.denominator > MAX_INT_POWER:
        return None
    b = c ** k.numerator
    num, den = _iroot(b.numerator, k.denominator), _iroot(b.denominator, k.denominator)
    return None if num is None or den is None else Fraction(num, den)


def _checked(c: Fraction) -> Fraction:
    if max(c.numerator.bit_length(), c.denominator.bit_length()) > MAX_BITS:
        raise _Unknown("a constant too large")
    return c


def _side(terms: dict) -> Side:
    """The side of {p: c}, zero coefficients dropped."""
    out = tuple(sorted((p, _checked(c)) for p, c in terms.items() if c != 0))
    if len(out) > MAX_TERMS:
        raise _Unknown("too many terms")
    return out


def _scale(s: Side, f: Fraction) -> Side:
    return _side({p: c * f for p, c in s})


def _side_add(a: Side, b: Side) -> Side:
    terms = dict(a)
    for p, c in b:
        terms[p] = terms.get(p, Fraction(0)) + c
    return _side(terms)


def _side_mul(a: Side, b: Side) -> Side:
    terms: dict = {}
    for p, c in a:
        for q, d in b:
            terms[p + q] = terms.get(p + q, Fraction(0)) + c * d
    return _side(terms)


def _side_pow(a: Side, k: Fraction) -> Side:
    """a**k for a constant k > 0: exact powers of one term (a non-integer k only with c >= 0, so the
    base is never negative), repeated products of a sum for an integer k."""
    if not a:
        return a
    if len(a) == 1:
        (p, c), = a
        v = _const_pow(c, k)
        if v is None:
            raise _Unknown("an irrational or undefined power")
        return _side({p * k: v})
    if k.denominator != 1:
        raise _Unknown("a non-integer power of a sum")
    out: Side = ((Fraction(0), Fraction(1)),)  # 1, as a term of power 0 (multiplied away below)
    for _ in range(int(k)):
        out = _side_mul(out, a)
    return out


def _sign(s: Side) -> int:
    """The sign of Σ c·|x|^p on its half-line (|x|^p > 0 there): every c of one sign, or 0 for ()."""
    if not s:
        return 0
    if all(c > 0 for _, c in s):
        return 1
    if all(c < 0 for _, c in s):
        return -1
    raise _Unknown("a sum of mixed signs")


def _side_abs(s: Side) -> Side:
    return s if _sign(s) >= 0 else _scale(s, Fraction(-1))


def _side_pick(a: Side, b: Side, smaller: bool) -> Side:
    """min (``smaller``) or max of two sides, where a − b has one sign on the half-line."""
    d = _sign(_side_add(a, _scale(b, Fraction(-1))))
    return (a if d <= 0 else b) if smaller else (a if d >= 0 else b)


_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne}


class _Unknown(ValueError):
    """The subexpression is outside the rules: the expression is not recognised."""


class _Walker:
    """Evaluates the AST of a whitelisted expression into :data:`Term` values (see the module doc)."""

    def __init__(self, text: str):
        self.text = text

    def term(self, n: ast.AST) -> Term:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            if isinstance(n.value, int):
                return Fraction(n.value)
            seg = (ast.get_source_segment(self.text, n) or "").replace("_", "")
            return Fraction(seg)  # the literal's exact decimal value (ValueError: not recognised)
        if isinstance(n, ast.Name):
            if n.id in ("x", "x1"):
                return Mono(((Fraction(1), Fraction(1)),), ((Fraction(1), Fraction(-1)),))
            raise _Unknown(n.id)  # pi, e: not exact
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            a = self.term(n.operand)
            return a if isinstance(n.op, ast.UAdd) else self.mul(Fraction(-1), a)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Invert):
            a = self.cond(n.operand)
            return Cond(not a.plus, not a.minus)
        if isinstance(n, ast.BinOp):
            if isinstance(n.op, (ast.BitAnd, ast.BitOr)):
                a, b = self.cond(n.left), self.cond(n.right)
                f = operator.and_ if isinstance(n.op, ast.BitAnd) else operator.or_
                return Cond(f(a.plus, b.plus), f(a.minus, b.minus))
            a, b = self.term(n.left), self.term(n.right)
            if isinstance(n.op, (ast.Add, ast.Sub)):
                return self.add(a, b if isinstance(n.op, ast.Add) else self.mul(Fraction(-1), b))
            if isinstance(n.op, ast.Mult):
                if isinstance(a, Cond) or isinstance(b, Cond):  # a*(cond) is where(cond, a, 0)
                    cond, val = (a, b) if isinstance(a, Cond) else (b, a)
                    return self.where(cond, val, Fraction(0))
                return self.mul(a, b)
            if isinstance(n.op, ast.Div):
                if not isinstance(b, Fraction) or b == 0:
                    raise _Unknown("division by a non-constant")
                return self.mul(a, 1 / b)
            if isinstance(n.op, ast.Pow):
                return self.power(a, b)
            raise _Unknown(type(n.op).__name__)
        if isinstance(n, ast.Compare):
            if len(n.ops) != 1 or type(n.ops[0]) not in _CMP:
                raise _Unknown("comparison chain")
            diff = self.add(self.term(n.left), self.mul(Fraction(-1), self.term(n.comparators[0])))
            op = _CMP[type(n.ops[0])]
            if isinstance(diff, Fraction):
                v = op(diff, 0)
                return Cond(v, v)
            if not isinstance(diff, Mono):
                raise _Unknown("comparison of conditions")
            return Cond(op(_sign(diff.plus), 0), op(_sign(diff.minus), 0))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            return self.call(n.func.id, n.args)
        raise _Unknown(type(n).__name__)

    def cond(self, n: ast.AST) -> Cond:
        c = self.term(n)
        if not isinstance(c, Cond):
            raise _Unknown("not a condition")
        return c

    def call(self, name: str, args: list[ast.AST]) -> Term:
        if name == "where" and len(args) == 3:
            return self.where(self.cond(args[0]), self.term(args[1]), self.term(args[2]))
        vals = [self.term(a) for a in args]
        if any(isinstance(v, Cond) for v in vals):
            raise _Unknown("a condition as a number")
        if name == "abs" and len(vals) == 1:
            a = vals[0]
            if isinstance(a, Fraction):
                return abs(a)
            return Mono(_side_abs(a.plus), _side_abs(a.minus))
        if name == "sqrt" and len(vals) == 1:
            return self.power(vals[0], Fraction(1, 2))
        if name in ("min", "max") and len(vals) == 2:
            a, b = vals
            if isinstance(a, Fraction) and isinstance(b, Fraction):
                return min(a, b) if name == "min" else max(a, b)
            a, b = (Mono((), ()) if isinstance(v, Fraction) and v == 0 else v for v in (a, b))
            if not (isinstance(a, Mono) and isinstance(b, Mono)):
                raise _Unknown("min/max of a monomial and a nonzero constant")
            small = name == "min"
            return Mono(_side_pick(a.plus, b.plus, small), _side_pick(a.minus, b.minus, small))
        raise _Unknown(name)

    def add(self, a: Term, b: Term) -> Term:
        if isinstance(a, Cond) or isinstance(b, Cond):
            raise _Unknown("a condition as a number")
        if isinstance(a, Fraction) and isinstance(b, Fraction):
            return a + b
        if isinstance(a, Fraction) or isinstance(b, Fraction):
            if (a if isinstance(a, Fraction) else b) != 0:
                raise _Unknown("a constant added to a monomial")
            return b if isinstance(a, Fraction) else a
        return Mono(_side_add(a.plus, b.plus), _side_add(a.minus, b.minus))

    def mul(self, a: Term, b: Term) -> Term:
        if isinstance(a, Cond) or isinstance(b, Cond):
            raise _Unknown("a condition as a number")
        if isinstance(a, Fraction) and isinstance(b, Fraction):
            return a * b
        if isinstance(a, Fraction) or isinstance(b, Fraction):
            f, m = (a, b) if isinstance(a, Fraction) else (b, a)
            return Mono(_scale(m.plus, f), _scale(m.minus, f))
        return Mono(_side_mul(a.plus, b.plus), _side_mul(a.minus, b.minus))

    def power(self, a: Term, k: Term) -> Term:
        if not isinstance(k, Fraction) or isinstance(a, Cond):
            raise _Unknown("a non-constant exponent")
        if isinstance(a, Fraction):
            v = _const_pow(a, k)
            if v is None:
                raise _Unknown("an irrational constant")
            return v
        if k <= 0:
            raise _Unknown("a power <= 0 of a monomial (undefined at 0)")
        return Mono(_side_pow(a.plus, k), _side_pow(a.minus, k))

    def where(self, cond: Cond, a: Term, b: Term) -> Mono:
        """The branch taken on each side; a branch must be a monomial or exactly 0 (at x = 0 either
        branch may be taken, and both are 0 there)."""
        a, b = (Mono((), ()) if isinstance(v, Fraction) and v == 0 else v for v in (a, b))
        if not (isinstance(a, Mono) and isinstance(b, Mono)):
            raise _Unknown("a where() branch that is not 0 at x = 0")
        return Mono(a.plus if cond.plus else b.plus, a.minus if cond.minus else b.minus)
