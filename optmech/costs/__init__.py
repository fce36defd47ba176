"""The cost L(x) of added noise x ∈ ℝ: ``abs``, ``square``, ``pow:P`` or a safe expression in x.

Named costs are |x|, x² and |x|^P (0 < P <= 64).  Any other text is an expression in ``x`` with
numexpr's syntax: numbers, ``x``, ``pi``, ``e``, ``+ - * / **``, unary ``-``/``+``, comparisons
``< <= > >= == !=`` (chains allowed), ``&``, ``|`` and ``~`` on comparison results, and the
functions ``abs sqrt exp log`` (one argument), ``min max`` (two) and ``where(cond, a, b)``.

The text is checked node by node against a whitelist of :mod:`ast` nodes and compiled into a
tuple tree; it is never handed to ``eval``/``exec``.  Two evaluators walk that tree: a float64
one (``Cost.__call__``) and an outward-rounded interval one (``Cost.enclose``) whose bounds hold
for the exact real value (and so for its nearest float; the float64 evaluation can leave them by its
own rounding where a piece proven monotone is enclosed at its ends).  Booleans are the floats 0 and 1, so
``&``, ``|``, ``~`` are min, max, 1 − a, and a boolean interval is [0,0], [1,1] or [0,1].
Subexpressions free of ``x`` are folded at parse time into a value and an enclosure.

The same compiler serves d-dimensional costs (:mod:`optmech.costs_nd`): compiled for a dimension
d it accepts the variables ``x1``..``xd`` (node ``("var", i)``, i 0-based; bare ``x`` only when
d = 1) and the evaluators then take a tuple of d arrays, one per coordinate, for ``x`` (or for
the interval ends).  The 1-D :class:`Cost` also accepts ``x1`` as a synonym of ``x``.

Modules: :mod:`~optmech.costs.expr` (the compiler), :mod:`~optmech.costs.interval` (outward-rounded
interval arithmetic and enclosures), :mod:`~optmech.costs.proofs` (evenness and monotonicity on the
whole domain), :mod:`~optmech.costs.rewrite` (expressions proven to be c·|x|^p or sums of powers of
|x|: ``abs(x)**3`` is the named cost ``pow:3``) and :mod:`~optmech.costs.cost1d` (the :class:`Cost`
class); this package re-exports their public names.
"""

from __future__ import annotations

from optmech.costs.cost1d import Cost, CostLike, as_cost, parse_cost, tree_growth
from optmech.costs.expr import CONSTANTS, FUNCTIONS, MAX_DEPTH, MAX_EXPONENT, MAX_LENGTH, VARIABLE_NAME, parse_expr
from optmech.costs.interval import CAP, add_rounded, evaluate_tree, interval_square, mig_mag, tree_enclosure
from optmech.costs.proofs import parity, proves_symmetric_nondecreasing
from optmech.costs.rewrite import canonical_name, canonical_text, recognise, recognise_power

__all__ = ["Cost", "CostLike", "as_cost", "parse_cost", "tree_growth", "CONSTANTS", "FUNCTIONS", "MAX_DEPTH",
           "MAX_EXPONENT", "MAX_LENGTH", "VARIABLE_NAME", "parse_expr", "CAP", "add_rounded", "evaluate_tree",
           "interval_square", "mig_mag", "tree_enclosure", "parity", "proves_symmetric_nondecreasing",
           "canonical_name", "canonical_text", "recognise", "recognise_power"]
