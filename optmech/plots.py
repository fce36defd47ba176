"""Figures of solve results, for notebooks and for ``optmech solve --plot``.

* :func:`plot_result`: a 1-D certified mechanism (pmf or density, log scale) over the range that
  holds all but :data:`MASS_TOL` of its mass, window and geometric tails alike, beside the best
  closed form of ``result.references`` (shifted where a shift makes it cheaper: asymmetric costs);
  d-D results go to :func:`plot_nd`.
* :func:`plot_nd`: d = 2 heatmaps (log colour scale) of the certified mechanism and the staircase
  reference; d >= 3 the radial profile: mass or density on each shell of the problem's norm against
  the shell's radius (a library law: on the shells of the norm it is radial in, with the law of ‖X‖).
* :func:`mass_region`: the drawn range of a 1-D law, from its exact tail formulas.

Every function returns the :class:`matplotlib.figure.Figure` it drew on.  It draws into ``ax``
when one is given, else into a new ``Figure`` made without pyplot (no global state, no backend
switch: in Jupyter the returned figure displays inline) with constrained layout; ``path`` also
writes a PNG.  Titles are short and wrapped to their Axes, legends sit inside their Axes
(``loc="best"``, small type), so a panel drawn into a grid of Axes keeps to its own cell.  Values below
:data:`FLOOR` times the largest drawn value are not drawn, so that rounding-level masses do not
stretch the log axis.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any

import numpy as np

from optmech.errors import SpecError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from optmech.result import Result

__all__ = ["plot_result", "plot_nd", "plot_compare", "mass_region", "nd_masses", "orbit_sizes", "MASS_TOL", "FLOOR"]

#: The drawn range of a 1-D law holds all but this much of its mass (at most half of it on each side).
MASS_TOL = 1e-6
#: Values below FLOOR × the largest drawn value are left out (NaN): they carry no visible mass.
FLOOR = 1e-12
#: Most lattice indices :func:`mass_region` enumerates explicitly (tails beyond are summed in closed form).
MAX_POINTS = 2_000_000

_NAMES = {"staircase": "staircase", "discrete_staircase": "discrete staircase", "laplace": "Laplace",
          "discrete_laplace": "discrete Laplace", "geometric": "geometric"}
_SYMBOLS = (("gamma", "γ"), ("r", "r"), ("lambda", "λ"), ("scale", "scale"))


# ------------------------------------------------------------------------------------------------
# formatting and figure plumbing
# ------------------------------------------------------------------------------------------------
def _num(v: Any, digits: int = 4) -> str:
    """A parameter value: integers as integers, floats to ``digits`` significant digits."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    return f"{float(v):.{digits}g}"


def _params_text(p: dict) -> str:
    """``γ = 0.3775`` / ``r = 2`` / ``λ = 0.9753``: the closed form's own parameters, no raw dicts."""
    return ", ".join(f"{sym} = {_num(p[key])}" for key, sym in _SYMBOLS
                     if isinstance(p.get(key), (int, float, np.number)) and not isinstance(p.get(key), bool))


#: Cost names as a reader writes them (expressions are shown as typed).
_COST_TEXT = {"abs": "|x|", "square": "x²", "l1": "‖x‖₁", "l2": "‖x‖₂", "l2sq": "‖x‖₂²", "linf": "‖x‖∞",
              "l1sq": "‖x‖₁²", "linfsq": "‖x‖∞²"}
_NORM_TEXT = {"l1": "ℓ1", "l2": "ℓ2", "linf": "ℓ∞"}
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def cost_text(cost: Any) -> str:
    """A cost as a reader writes it: ``abs`` → ``|x|``, ``square`` → ``x²``, ``pow:3`` → ``|x|^3``,
    ``l2sq`` → ``‖x‖₂²``; an expression as typed.

    >>> cost_text("abs"), cost_text("pow:1.5"), cost_text("l2sq"), cost_text("abs(x - 5)")
    ('|x|', '|x|^1.5', '‖x‖₂²', 'abs(x - 5)')
    """
    text = str(cost).strip()
    key = text.lower()
    if key in _COST_TEXT:
        return _COST_TEXT[key]
    if key.startswith("pow:"):
        return f"|x|^{text[4:].strip()}"
    return text


def _space(pr: dict) -> str:
    """ℤ, ℝ, ℤ², ℝ³, ...: the noise's domain in the problem's dimension."""
    dim = int(pr.get("dim", 1) or 1)
    base = "ℤ" if pr.get("domain") == "integer" or pr.get("kind") == "wasserstein" else "ℝ"
    return base + (str(dim).translate(_SUPERSCRIPT) if dim > 1 else "")


def _problem_line(pr: dict) -> str:
    """ε = 0.5, Δ = 20, cost |x| on ℤ (the problem's parameters, readable and short)."""
    parts = []
    privacy = pr.get("privacy")
    if "epsilon" in pr:
        parts.append(f"ε = {_num(pr['epsilon'], 6)}" + (" per unit distance" if privacy == "lipschitz" else ""))
    if privacy == "approx" and pr.get("delta") is not None:
        parts.append(f"δ = {_num(pr['delta'], 6)}")
    dim = int(pr.get("dim", 1) or 1)
    if pr.get("sensitivity") is not None:
        norm = _NORM_TEXT.get(str(pr.get("norm", "l1")), str(pr.get("norm")))
        parts.append(f"Δ = {_num(pr['sensitivity'], 6)}" + (f" ({norm})" if dim > 1 else ""))
    where = f" on {_space(pr)}" if pr.get("domain") or pr.get("kind") == "wasserstein" else ""
    if pr.get("cost") is not None:
        parts.append(f"cost {cost_text(pr['cost'])}{where}")
    elif pr.get("utility") is not None:
        inp = pr.get("input")
        label = inp.get("label") if isinstance(inp, dict) else None
        parts.append(f"{'W1' if pr['utility'] == 'wasserstein' else pr['utility']} utility"
                     + (f", input {label}" if label else "") + where)
    return ", ".join(parts)


def _value_word(pr: dict) -> str:
    """What the bracket bounds: the expected cost, or (Wasserstein) the objective."""
    return "cost" if pr.get("cost") is not None else "objective"


def _bracket_line(result: "Result") -> str:
    """The certified bracket with its label (``certified`` or ``UNCERTIFIED``), short."""
    lo, up = result.lower_bound, result.upper_bound
    if result.certified:
        return f"certified [{lo:.7g}, {up:.7g}], gap {result.relative_gap:.2g}"
    status = getattr(result.status, "value", result.status)
    return f"UNCERTIFIED ({status}): [{lo:.7g}, {up:.7g}], not an optimum"


#: Font sizes of titles and legends (small: a panel of a grid must hold them).
TITLE_SIZE, LEGEND_SIZE = 9, 7


def _chars(ax, fontsize: float, share: float = 1.0) -> int:
    """About how many characters of ``fontsize`` fit across ``share`` of the Axes' width."""
    inches = ax.get_position().width * ax.figure.get_figwidth() * share
    return max(20, int(inches * 72.0 / (0.6 * fontsize)))


def _fill(text: str, width: int) -> str:
    """``text`` wrapped line by line at word boundaries to ``width`` characters."""
    return "\n".join(textwrap.fill(line, width, break_long_words=False) for line in text.split("\n"))


def _title(result: "Result", prefix: str = "") -> str:
    return f"{prefix}{_problem_line(result.problem)}\n{_bracket_line(result)}"


def _set_title(ax, text: str) -> None:
    """A title wrapped to the Axes' width (a panel of a grid keeps to its own column)."""
    ax.set_title(_fill(text, _chars(ax, TITLE_SIZE)), fontsize=TITLE_SIZE)


def _new_figure(figsize: tuple[float, float]) -> "Figure":
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _target_axes(ax, fig, figsize: tuple[float, float]) -> "Axes":
    """The Axes to draw into: ``ax``, a new subplot of ``fig``, or a new pyplot-free figure's."""
    if ax is not None:
        if fig is not None and ax.figure is not fig:
            raise SpecError("ax belongs to another figure than fig")
        return ax
    return (fig if fig is not None else _new_figure(figsize)).add_subplot()


def _finish(fig: "Figure", path) -> "Figure":
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _legend_inside(ax, title: str | None = None) -> None:
    """A small legend inside the Axes (``loc="best"``), its labels (and ``title``) wrapped to fit the
    Axes' width, so that a panel of any grid keeps its legend whatever the figure's layout."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        width = _chars(ax, LEGEND_SIZE, 0.8)
        ax.legend(handles, [_fill(t, width) for t in labels], loc="best", fontsize=LEGEND_SIZE, framealpha=0.8,
                  title=_fill(title, width) if title else None, title_fontsize=LEGEND_SIZE)


def _floored(y: np.ndarray, top: float) -> np.ndarray:
    """``y`` with values below FLOOR·top (and non-positive ones) replaced by NaN (not drawn)."""
    y = np.asarray(y, dtype=float)
    return np.where(np.isfinite(y) & (y > 0) & (y >= FLOOR * top), y, np.nan)


def _log_limits(ax, *series: np.ndarray) -> None:
    """Log y-axis limits from the drawn (finite) values only."""
    vals = np.concatenate([np.ravel(s)[np.isfinite(np.ravel(s))] for s in series] or [np.array([])])
    vals = vals[vals > 0]
    ax.set_yscale("log")
    if vals.size:
        ax.set_ylim(vals.min() / 3.0, vals.max() * 3.0)


def _integer_ticks(*axis) -> None:
    from matplotlib.ticker import MaxNLocator

    for a in axis:
        a.set_major_locator(MaxNLocator(nbins="auto", integer=True))  # as many ticks as the axis' length holds


# ------------------------------------------------------------------------------------------------
# the drawn range of a 1-D law
# ------------------------------------------------------------------------------------------------
def _tabulated_region(law, t: float) -> tuple[int, int]:
    """Indices [a, b] of a solver law (window + periodic geometric tails) with at most ``t`` of its
    mass below a and at most ``t`` above b (a largest, b smallest such index).

    The tails' period masses are β^m·S (m >= 1, S = Σ generator·width / total), so the mass beyond
    period M is β^{M+1} S/(1 − β) in closed form; the periods up to M are enumerated with
    ``law.mass`` and trimmed from each end while the excluded mass stays <= t.
    """
    W, beta, g = int(law.grid.W), float(law.beta), law.grid
    wl = g.width(np.arange(law.k_lo, law.k_lo + W))
    wr = g.width(np.arange(law.k_hi - W + 1, law.k_hi + 1))
    SL = float(np.sum(np.asarray(law.left_gen) * wl)) / law.total
    SR = float(np.sum(np.asarray(law.right_gen) * wr)) / law.total

    def remainder(S: float, M: int) -> float:
        return 0.0 if beta <= 0.0 or S <= 0.0 else beta ** (M + 1) * S / (1.0 - beta)

    def periods(S: float) -> int:
        if remainder(S, 0) <= t:
            return 0
        M = max(0, math.ceil(math.log(t * (1.0 - beta) / S) / math.log(beta)) - 1)
        while remainder(S, M) > t:
            M += 1
        return M

    ML, MR = periods(SL), periods(SR)
    n = len(law.weights) + (ML + MR) * W
    if n > MAX_POINTS:  # extremely slow tails: draw what can be enumerated (the region then holds less)
        f = max(0.0, (MAX_POINTS - len(law.weights)) / ((ML + MR) * W))
        ML, MR = int(ML * f), int(MR * f)
    k = np.arange(law.k_lo - ML * W, law.k_hi + MR * W + 1)
    m = np.asarray(law.mass(k), dtype=float)
    left = remainder(SL, ML) + np.cumsum(m)
    right = remainder(SR, MR) + np.cumsum(m[::-1])
    i = int(np.searchsorted(left, t, side="right"))  # the first i points carry <= t together: drop them
    j = int(np.searchsorted(right, t, side="right"))
    i, j = min(i, len(k) - 1), min(j, len(k) - 1)
    a, b = int(k[i]), int(k[len(k) - 1 - j])
    return (a, b) if a <= b else (int(k[0]), int(k[-1]))


def _first_at_most(D, t: float, integer: bool) -> float:
    """inf{x : D(x) <= t} for a nonincreasing D with D(+∞) = 0 (exponential search, then bisection;
    on integers the least integer)."""
    def f(x):
        return float(D(x))

    if f(0.0) <= t:
        hi, lo, step = 0.0, -1.0, 1.0
        while f(lo) <= t and step < 2.0**62:
            hi, step = lo, 2.0 * step
            lo = -step
    else:
        lo, hi, step = 0.0, 1.0, 1.0
        while f(hi) > t and step < 2.0**62:
            lo, step = hi, 2.0 * step
            hi = step
    for _ in range(200):
        if hi - lo <= (1.0 if integer else 1e-9 * max(1.0, abs(hi))):
            break
        mid = math.floor(0.5 * (lo + hi)) if integer else 0.5 * (lo + hi)
        if f(mid) <= t:
            hi = mid
        else:
            lo = mid
    return hi


def mass_region(mechanism, tol: float = MASS_TOL) -> tuple[float, float]:
    """The range holding all but ``tol`` of a 1-D law's mass: at most ``tol``/2 below it and at
    most ``tol``/2 above it (the [tol/2, 1 − tol/2] quantile range).

    Solver laws (``result.mechanism`` of a 1-D solve) are cut from their window and periodic
    geometric tails in closed form; other 1-D mechanisms (closed forms, the 1-D Lipschitz laws)
    from their ``cdf``/``sf`` tail formulas by bisection.

    Returns
    -------
    (lo, hi)
        Lattice laws: integers, lo the largest with P(X < lo) <= tol/2, hi the smallest with
        P(X > hi) <= tol/2.  Continuous laws: reals (solver laws: the edges of the cells that
        contain the quantiles, so the range may hold slightly more).

    Examples
    --------
    >>> from optmech.mechanisms import DiscreteLaplace
    >>> mass_region(DiscreteLaplace(epsilon=1, sensitivity=1))   # P(|X| > 14) < 1e-6
    (-14, 14)
    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1.0), cost="abs", sensitivity=3,
    ...                                   domain=optmech.IntegerLattice()))
    >>> lo, hi = mass_region(r.mechanism)
    >>> bool(r.mechanism.pmf(np.arange(lo, hi + 1)).sum() >= 1 - 1e-6)
    True
    """
    if not (0.0 < float(tol) < 1.0):
        raise SpecError(f"tol must be in (0, 1), got {tol!r}")
    t = 0.5 * float(tol)
    law = getattr(mechanism, "law", None)
    if law is not None:
        a, b = _tabulated_region(law, t)
        if law.grid.kind == "integer":
            return a, b
        return float(law.grid.left(np.array([a]))[0]), float(law.grid.right(np.array([b]))[0])
    if getattr(mechanism, "dim", 1) != 1 or not hasattr(mechanism, "cdf"):
        raise SpecError(f"mass_region takes a 1-D mechanism, got {type(mechanism).__name__}")
    integer = bool(getattr(mechanism, "lattice", False))
    hi = _first_at_most(lambda x: mechanism.sf(x), t, integer)
    lo = -_first_at_most(lambda y: mechanism.cdf(-y), t, integer)  # sup{x : cdf(x) <= t}
    if integer:
        return int(lo) + 1, int(hi)
    return float(lo), float(hi)


# ------------------------------------------------------------------------------------------------
# the closed forms of result.references
# ------------------------------------------------------------------------------------------------
def _reference_law(ref, pr: dict):
    """The closed-form mechanism of a reference (None for bounds and laws it cannot rebuild)."""
    from optmech.mechanisms import DiscreteLaplace, DiscreteStaircase, Laplace, Staircase

    if ref.kind == "lower" or not math.isfinite(ref.value):
        return None
    p = ref.parameters
    eps = float(pr["epsilon"])
    delta = pr.get("sensitivity")
    delta = 1.0 if delta is None else float(delta)  # Lipschitz: per unit distance
    try:
        if ref.name == "staircase" and "gamma" in p:
            return Staircase(epsilon=eps, sensitivity=delta, gamma=float(p["gamma"]))
        if ref.name == "discrete_staircase" and "r" in p:
            return DiscreteStaircase(epsilon=eps, sensitivity=int(delta), r=int(p["r"]))
        if ref.name in ("discrete_laplace", "geometric"):
            return DiscreteLaplace(epsilon=eps, sensitivity=int(delta))
        if ref.name == "laplace":
            return Laplace(epsilon=eps, sensitivity=delta)
    except (SpecError, ValueError, TypeError, OverflowError):
        return None
    return None


def _best_reference(result: "Result", lattice: bool, shift: bool):
    """(label, law, shift c) of the cheapest closed form among ``result.references``, each placed at
    the shift it is listed with (``parameters["shift"]``, chosen by
    :func:`optmech.mechanisms.shifts.shift_references`, whose value is the listed one);
    (None, None, 0) when none can be drawn.  With ``shift`` False only laws listed centred are
    drawn."""
    pr = result.problem
    best = None
    for ref in result.references:
        law = _reference_law(ref, pr)
        if law is None or bool(getattr(law, "lattice", False)) != lattice:
            continue
        c = ref.parameters.get("shift", 0) or 0
        c = float(c) if isinstance(c, (int, float, np.number)) and math.isfinite(float(c)) else 0.0
        if c != 0.0 and not shift:
            continue
        if best is None or ref.value < best[0]:
            best = (ref.value, ref, law, c)
    if best is None:
        return None, None, 0.0
    value, ref, law, c = best
    par = _params_text(ref.parameters)
    name = _NAMES.get(ref.name, ref.name.replace("_", " "))
    head = f"{name}, {par}" if par else name
    if c != 0.0:
        return f"{head}, shifted by {_num(c) if lattice else f'{c:+.4g}'}: {_value_word(pr)} {value:.6g}", law, c
    return f"{head}, {_value_word(pr)} {value:.6g}", law, 0.0


# ------------------------------------------------------------------------------------------------
# 1-D
# ------------------------------------------------------------------------------------------------
def _shade_window(ax, a: float, b: float, lo: float, hi: float, law, where: str) -> None:
    """Shade the LP window [a, b] when the drawn range [lo, hi] reaches beyond it."""
    if a <= lo and hi <= b:
        return
    beyond = "geometric tails beyond it" if law.beta > 0 else "no mass beyond it"
    ax.axvspan(a, b, color="0.9", zorder=0, label=f"LP window{where} ({beyond})")


def plot_result(result: "Result", path=None, *, ax: "Axes | None" = None, fig: "Figure | None" = None,
                tol: float = MASS_TOL, shift_reference: bool = True) -> "Figure":
    """Draw the certified mechanism of a solve (log scale) beside the best closed form.

    1-D: the pmf (integer domain) or density (continuous) over the range holding all but ``tol``
    of its mass (:func:`mass_region`: the LP window, shaded, and the certified geometric tails
    beyond it), and the cheapest closed form of ``result.references``, drawn at the shift it is
    listed with (``parameters["shift"]``: its best shift for an asymmetric cost) and labelled with
    its listed cost.  Values below :data:`FLOOR` × the largest are not drawn.  d-D results are drawn by
    :func:`plot_nd` (``ax`` and ``fig`` as documented there).

    Parameters
    ----------
    result : Result
        A solve with a mechanism (``result.mechanism``).
    path : str or path-like, optional
        Also write the figure as a PNG there.
    ax : matplotlib Axes, optional
        Draw into this Axes (its figure is returned); by default a new pyplot-free Figure.
    fig : matplotlib Figure, optional
        Draw into a new subplot of this figure.
    tol : float
        The mass left out of the drawn range (half on each side at most).
    shift_reference : bool
        Draw the closed forms listed at a nonzero shift (False: only those listed centred).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1.0), cost="abs", sensitivity=3,
    ...                                   domain=optmech.IntegerLattice()))
    >>> fig = plot_result(r)
    >>> fig.axes[0].get_xlabel(), fig.axes[0].get_yscale(), fig.axes[0].get_title().splitlines()[0]
    ('noise x', 'log', 'ε = 1, Δ = 3, cost |x| on ℤ')
    """
    mech = result.mechanism
    if mech is None:
        raise SpecError("this result carries no mechanism to plot")
    from optmech.mechanisms.solved import LipschitzCells, LipschitzPoints

    law = getattr(mech, "law", None)
    if law is None and not isinstance(mech, (LipschitzPoints, LipschitzCells)):
        return plot_nd(result, path, ax=ax, fig=fig)
    if not 0.0 < float(tol) < 1.0:
        raise SpecError(f"tol must be in (0, 1), got {tol!r}")
    ax = _target_axes(ax, fig, (8.5, 5.2))
    if law is not None:
        lattice = law.grid.kind == "integer"
        ka, kb = _tabulated_region(law, 0.5 * float(tol))
        lo, hi = (ka, kb) if lattice else (float(law.grid.left(np.array([ka]))[0]),
                                           float(law.grid.right(np.array([kb]))[0]))
    else:
        lattice = bool(mech.lattice)
        lo, hi = mass_region(mech, tol)
    label, ref_law, c = _best_reference(result, lattice, shift_reference)
    word = _value_word(result.problem)
    mine = f"optmech (certified upper end), {word} {result.upper_bound:.6g}"
    drawn = []
    if lattice:
        k = np.arange(int(lo), int(hi) + 1)
        y = np.asarray(law.density(k) if law is not None else mech.pmf(k), dtype=float)
        yr = np.asarray(ref_law.pmf(k - c), dtype=float) if ref_law is not None else None
        top = max(np.nanmax(y), np.nanmax(yr) if yr is not None else 0.0)
        y, yr = _floored(y, top), (_floored(yr, top) if yr is not None else None)
        ax.plot(k, y, "-", marker="o" if len(k) <= 150 else None, ms=3, lw=1, color="tab:blue", label=mine)
        drawn.append(y)
        if yr is not None:
            ax.plot(k, yr, "--", lw=1.2, color="tab:orange", label=label)
            drawn.append(yr)
        ax.set_ylabel("probability mass")
        _integer_ticks(ax.xaxis)
        if law is not None:
            _shade_window(ax, law.k_lo - 0.5, law.k_hi + 0.5, lo, hi, law, f" [{law.k_lo}, {law.k_hi}]")
    else:
        xs = np.linspace(lo, hi, 4001)
        if law is not None:
            k = np.arange(ka, kb + 1)
            edges = np.concatenate([law.grid.left(k), law.grid.right(k[-1:])])
            y = np.asarray(law.density(k), dtype=float)
        else:
            y = np.asarray(mech.pdf(xs), dtype=float)
        yr = np.asarray(ref_law.pdf(xs - c), dtype=float) if ref_law is not None else None
        top = max(np.nanmax(y), np.nanmax(yr) if yr is not None else 0.0)
        y, yr = _floored(y, top), (_floored(yr, top) if yr is not None else None)
        if law is not None:  # one step per run of equal densities: a Line2D, fast for 10^5 cells
            run = np.concatenate([[True], ~((y[1:] == y[:-1]) | (np.isnan(y[1:]) & np.isnan(y[:-1])))])
            xe, ye = np.append(edges[:-1][run], edges[-1]), np.append(y[run], y[run][-1])
            ax.plot(xe, ye, "-", drawstyle="steps-post", lw=1.2, color="tab:blue", label=mine)
        else:
            ax.plot(xs, y, "-", lw=1.2, color="tab:blue", label=mine)
        drawn.append(y)
        if yr is not None:
            ax.plot(xs, yr, "--", lw=1.2, color="tab:orange", label=label)
            drawn.append(yr)
        ax.set_ylabel("density")
        if law is not None:
            wa, wb = float(law.grid.left(np.array([law.k_lo]))[0]), float(law.grid.right(np.array([law.k_hi]))[0])
            _shade_window(ax, wa, wb, lo, hi, law, f" [{wa:.6g}, {wb:.6g}]")
    _log_limits(ax, *drawn)
    ax.set_xlim(lo - 0.5 if lattice else lo, hi + 0.5 if lattice else hi)
    ax.set_xlabel("noise x")
    _set_title(ax, _title(result))
    _legend_inside(ax, f"drawn: all but {tol:g} of the mass")
    return _finish(ax.figure, path)


# ------------------------------------------------------------------------------------------------
# d-D
# ------------------------------------------------------------------------------------------------
def nd_masses(mech: dict, pts: np.ndarray) -> np.ndarray:
    """P at integer points ``pts`` (…, d) from a ``lattice_pmf_nd`` dict (0 where not listed).

    Examples
    --------
    >>> mech = {"representatives": [[0, 0], [0, 1]], "mass": [0.5, 0.125], "symmetry": "signed permutations"}
    >>> nd_masses(mech, np.array([[0, 0], [-1, 0], [2, 0]])).tolist()
    [0.5, 0.125, 0.0]
    """
    reps = np.asarray(mech["representatives"], dtype=np.int64)
    mass = np.asarray(mech["mass"], dtype=float)
    q = np.asarray(pts, dtype=np.int64)
    sym = mech["symmetry"]
    keyed = (np.sort(np.abs(q), axis=-1) if sym == "signed permutations"
             else np.abs(q) if sym == "coordinate signs" else q)
    lookup = {tuple(r): m for r, m in zip(reps.tolist(), mass.tolist())}
    flat = keyed.reshape(-1, keyed.shape[-1])
    return np.array([lookup.get(tuple(r), 0.0) for r in flat.tolist()]).reshape(q.shape[:-1])


def _staircase_nd(result: "Result"):
    """The reference staircase of a d-D result: (reference, mechanism) or (None, None)."""
    from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND
    from optmech.mechanisms.staircase_nd import StaircaseND

    pr = result.problem
    for r in result.references:
        if r.name == "discrete_staircase" and "r" in r.parameters:
            return r, DiscreteStaircaseND(epsilon=pr["epsilon"], sensitivity=int(pr["sensitivity"]),
                                          r=int(r.parameters["r"]), dim=int(pr["dim"]))
        if r.name == "staircase" and "gamma" in r.parameters:
            return r, StaircaseND(epsilon=pr["epsilon"], sensitivity=pr["sensitivity"],
                                  gamma=float(r.parameters["gamma"]), dim=int(pr["dim"]),
                                  norm=str(r.parameters.get("norm", "l1")))
    return None, None


def _ref_label(ref) -> str:
    p = ref.parameters
    what = "ℓ1 lattice staircase" if "r" in p else f"{_NORM_TEXT.get(str(p.get('norm', 'l1')), '')} staircase".strip()
    return f"{what}, {_params_text(p)}, cost {ref.value:.6g}"


def _norm_of(x: np.ndarray, norm: str) -> np.ndarray:
    """‖x‖ along the last axis in ``norm`` (l1, l2, linf)."""
    a = np.abs(np.asarray(x, dtype=float))
    return a.max(axis=-1) if norm == "linf" else np.sqrt((a * a).sum(axis=-1)) if norm == "l2" else a.sum(axis=-1)


def _sphere_measure(r: np.ndarray, d: int, norm: str) -> np.ndarray:
    """The (d−1)-dimensional measure of the sphere of radius r of ``norm`` in ℝ^d, dV/dr of the ball's
    volume: 2^d r^{d−1}/(d−1)! (ℓ1), d π^{d/2} r^{d−1}/Γ(d/2 + 1) (ℓ2), d 2^d r^{d−1} (ℓ∞)."""
    r = np.asarray(r, dtype=float)
    if norm == "l2":
        c = d * math.pi ** (d / 2) / math.gamma(d / 2 + 1)
    elif norm == "linf":
        c = d * 2.0**d
    else:
        c = 2.0**d / math.factorial(d - 1)
    return c * r ** (d - 1)


def _law_norm(m) -> str:
    """The norm in which a d-D library law's density is a function of the radius alone."""
    name = type(m).__name__
    if getattr(m, "norm", None) in ("l1", "l2", "linf"):
        return str(m.norm)
    return {"L2Laplace": "l2", "UniformContinuous": "linf"}.get(name, "l1")


def _nd_title(ax, result: "Result", panel: str, own: bool) -> None:
    """A d-D panel's title: the panel's name when the figure is plots.py's (the problem is the
    figure's suptitle), else the problem, the bracket and the panel, wrapped to the panel."""
    _set_title(ax, panel if own else f"{_title(result)}\n{panel}")


def _shell_values(mech: dict, r: np.ndarray) -> np.ndarray:
    """Density (or mass per point) of an ``l1_shell_density_nd`` mechanism at ℓ1 radii r (0 beyond the list)."""
    dens = np.asarray(mech["density"], dtype=float)
    k = np.floor(np.asarray(r, dtype=float) / mech["shell_width"]).astype(np.int64)
    return np.where(k < len(dens), dens[np.minimum(k, len(dens) - 1)], 0.0)


def _log_heatmap(a, values: np.ndarray, extent, vmax: float, name: str, integer: bool):
    """A d = 2 panel: ``values`` on (x1, x2) on a log colour scale down to ``FLOOR`` × ``vmax``."""
    from matplotlib.colors import LogNorm

    im = a.imshow(np.where(values >= FLOOR * vmax, values, np.nan).T, origin="lower", extent=extent,
                  norm=LogNorm(vmin=vmax * FLOOR, vmax=vmax), cmap="viridis")
    a.set_title(textwrap.fill(name, 45), fontsize=9)
    a.set_xlabel("x1")
    a.set_ylabel("x2")
    if integer:
        _integer_ticks(a.xaxis, a.yaxis)
    return im


def _plot_library_nd(result: "Result", path, ax, fig) -> "Figure":
    """A d-D library law at the bracket's upper end (the staircase in some norm, a lattice staircase,
    i.i.d. Laplace, ...): d = 2, its pmf (lattice) or pdf as a heatmap on a log scale; d >= 3, along
    the first axis.  The window ends where the law falls below ``FLOOR`` × its value at 0."""
    m = result.mechanism
    d, lattice = int(m.dim), bool(getattr(m, "lattice", False))
    f = m.pmf if lattice else m.pdf
    unit = "probability mass per point" if lattice else "density"
    top = float(f(np.zeros(d)))
    W = float(m.sensitivity)
    while float(f(np.eye(d)[0] * W)) > FLOOR * top and W < 1e6 * float(m.sensitivity):
        W *= 2
    name = f"optmech: {type(m).__name__} at the upper end, cost {result.upper_bound:.6g}"
    own = ax is None
    if d == 2:
        axis = np.arange(-int(W), int(W) + 1) if lattice else np.linspace(-W, W, 301)
        pts = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1)
        v = f(pts)
        if isinstance(ax, (list, tuple, np.ndarray)):
            raise SpecError("plot_nd of a library law draws one panel: pass one Axes")
        a = _target_axes(ax, fig, (6.0, 5.2))
        half = 0.5 if lattice else 0.0
        im = _log_heatmap(a, v, (axis[0] - half, axis[-1] + half, axis[0] - half, axis[-1] + half), top, name,
                          lattice)
        a.figure.colorbar(im, ax=a, label=unit)
        if own:
            a.figure.suptitle(_title(result), fontsize=TITLE_SIZE)
        _nd_title(a, result, name, own)
        return _finish(a.figure, path)
    # d >= 3: the radial profile in the norm the law is radial in (its density is a function of ‖x‖
    # there, so its value at r·e1 is its value on the whole shell), and the law of the radius ‖X‖
    a = _target_axes(ax, fig, (8.5, 5.2))
    norm = _law_norm(m)
    r = np.arange(0, int(W) + 1) if lattice else np.linspace(0, W, 400)
    on_shell = np.asarray(f(r[:, None] * np.eye(d)[0]), dtype=float)
    if lattice and norm == "l1":
        from optmech.mechanisms.discrete_staircase_nd import sphere_sizes

        radius, what = on_shell * sphere_sizes(r, d), "P(‖X‖₁ = r), the mass of the shell"
    else:
        radius, what = on_shell * _sphere_measure(r, d, norm), f"density of {_norm_label(norm, 'X')} (mass per unit radius)"
    shell_top = float(np.nanmax(radius))
    a.semilogy(r, _floored(on_shell, top), "-", marker="o" if lattice and len(r) <= 60 else None, ms=3,
               label=f"{type(m).__name__} at the upper end ({unit} on the shell), cost {result.upper_bound:.6g}")
    a.semilogy(r, _floored(radius, shell_top), "--", label=what)
    _log_limits(a, _floored(on_shell, top), _floored(radius, shell_top))
    if lattice:
        _integer_ticks(a.xaxis)
    a.set_xlabel(f"shell radius r = {_norm_label(norm)}")
    a.set_ylabel(f"{unit} / probability")
    _set_title(a, _title(result))
    _legend_inside(a)
    return _finish(a.figure, path)


def _norm_label(norm: str, x: str = "x") -> str:
    """‖x‖₁, ‖x‖₂, ‖x‖∞."""
    return f"‖{x}‖" + {"l1": "₁", "l2": "₂", "linf": "∞"}.get(norm, norm)


def plot_nd(result: "Result", path=None, *, ax=None, fig: "Figure | None" = None) -> "Figure":
    """Draw a d-D certified mechanism: d = 2 heatmaps (log colour scale) of the mechanism and of the
    staircase reference; d >= 3 the radial profile (min–max and mean mass or density on each shell of
    the problem's norm, against the shell radius) beside the staircase.

    Lattice mechanisms are drawn as mass per point, cell mechanisms (continuous domain) as mass per
    cell, shell mechanisms as density (continuous) or mass per point (lattice).  Values below
    :data:`FLOOR` × the largest are not drawn.  The drawn box holds the listed points whose mass
    is above that floor (the β-majorant extension beyond the solver's domain is not drawn).

    Parameters
    ----------
    result : Result
        A d-D solve (``lattice_pmf_nd``, ``cell_pmf_nd`` or ``l1_shell_density_nd`` mechanism).
    path : str or path-like, optional
        Also write the figure as a PNG there.
    ax : Axes or sequence of Axes, optional
        d = 2: one Axes draws the mechanism's heatmap only, two Axes the mechanism and the
        reference; d >= 3: the Axes of the radial profile.  The returned figure is ``ax``'s.
    fig : Figure, optional
        Lay the panel(s) out in this figure (default: a new pyplot-free Figure).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(2.0), cost="l1", sensitivity=1,
    ...                                   domain=optmech.IntegerLattice(), dim=2, symmetry="orbits"))
    >>> fig = plot_nd(r)
    >>> [a.get_xlabel() for a in fig.axes[:2]]
    ['x1', 'x1']
    """
    if result.mechanism is None:
        raise SpecError("this result carries no mechanism to plot")
    mech = result.mechanism_dict()
    kind = mech.get("kind")
    if kind is None and getattr(result.mechanism, "dim", 1) > 1:  # a library law (staircase, Laplace, ...)
        return _plot_library_nd(result, path, ax, fig)
    if kind not in ("lattice_pmf_nd", "cell_pmf_nd", "l1_shell_density_nd"):
        raise SpecError(f"no figure for a mechanism of kind {kind!r} (plots take 1-D laws and the d-D kinds "
                        "lattice_pmf_nd, cell_pmf_nd, l1_shell_density_nd)")
    d = int(mech["dim"])
    # d >= 3 draws shells of the problem's norm (the ℓ1-shell mechanism: of its own ℓ1 shells)
    norm = "l1" if kind == "l1_shell_density_nd" else str(result.problem.get("norm") or "l1")
    ref, stair = _staircase_nd(result)
    title = _title(result)
    continuous = kind == "cell_pmf_nd" or bool(mech.get("continuous"))
    lattice_axes = kind == "lattice_pmf_nd" or (kind == "l1_shell_density_nd" and not continuous)
    unit = "density" if kind == "l1_shell_density_nd" and continuous else "mass per cell" if kind == "cell_pmf_nd" \
        else "probability mass per point"
    if kind == "l1_shell_density_nd":
        dens = np.asarray(mech["density"], dtype=float)
        w = float(mech["shell_width"])
        keep = np.flatnonzero(dens > FLOOR * dens.max())
        rmax = (int(keep.max()) + 1) * w if keep.size else w
    else:
        reps = np.asarray(mech["representatives"], dtype=np.int64)
        mass = np.asarray(mech["mass"], dtype=float)
        h = float(mech.get("cell_width", 1.0))
        keep = mass > FLOOR * mass.max()
        W = int(np.abs(reps[keep]).max()) if keep.any() else 1

    def ref_values(pts: np.ndarray, cell_h: float | None) -> np.ndarray:
        """The reference at real points, in the panel's unit."""
        if not continuous:
            return stair.pmf(pts)
        v = stair.pdf(pts)
        return v * cell_h**d if cell_h else v

    if d == 2:
        if kind == "l1_shell_density_nd":
            ax_ = np.linspace(-rmax, rmax, 301)
            pts = np.stack(np.meshgrid(ax_, ax_, indexing="ij"), axis=-1)
            mine, ext, cell_h = _shell_values(mech, np.abs(pts).sum(axis=-1)), (-rmax, rmax, -rmax, rmax), None
        else:
            ax_ = np.arange(-W, W + 1)
            pts = np.stack(np.meshgrid(ax_, ax_, indexing="ij"), axis=-1)
            mine, cell_h = nd_masses(mech, pts), (h if kind == "cell_pmf_nd" else None)
            ext = tuple(float(v) * h for v in (-W - 0.5, W + 0.5, -W - 0.5, W + 0.5))
            pts = pts * h
        panels = [(f"optmech: certified upper-bound mechanism, cost {result.upper_bound:.6g}", mine)]
        if stair is not None:
            panels.append((_ref_label(ref), ref_values(pts, cell_h)))
        own = ax is None
        if ax is not None:
            axes = [ax] if not isinstance(ax, (list, tuple, np.ndarray)) else list(np.ravel(ax))
            if not 1 <= len(axes) <= 2:
                raise SpecError("plot_nd in d = 2 takes one Axes (the mechanism) or two (mechanism, reference)")
            panels = panels[: len(axes)]
            fig = axes[0].figure
        else:
            fig = fig if fig is not None else _new_figure((5.4 * len(panels), 5.2))
            axes = list(np.ravel(fig.subplots(1, len(panels), squeeze=False)))
        vmax = max(float(np.nanmax(p)) for _, p in panels)
        for a, (name, p) in zip(axes, panels):
            im = _log_heatmap(a, p, ext, vmax, name, lattice_axes)
            _nd_title(a, result, name, own or a is not axes[0])  # handed Axes: the problem on the first one
        fig.colorbar(im, ax=axes, label=unit)
        if own:
            fig.suptitle(title, fontsize=TITLE_SIZE)
        return _finish(fig, path)
    if isinstance(ax, (list, tuple, np.ndarray)):
        raise SpecError(f"plot_nd in d = {d} draws one panel: pass one Axes")
    ax = _target_axes(ax, fig, (8.5, 5.2))
    drawn = []
    if kind == "l1_shell_density_nd":
        r = np.arange(len(dens)) * w
        sel = r <= rmax
        y = _floored(dens[sel], dens.max())
        ax.step(r[sel], y, where="post", label=f"optmech: shell {unit}, cost {result.upper_bound:.6g}")
        drawn.append(y)
        rr = np.linspace(0, rmax, 400) if continuous else np.arange(0, int(rmax) + 1)
        top = dens.max()
    elif norm == "l1":
        from optmech.mechanisms.discrete_staircase_nd import sphere_sizes

        n1 = np.abs(reps).sum(axis=1)
        sym = mech["symmetry"]
        size = orbit_sizes(reps) if sym == "signed permutations" else 2.0 ** (reps != 0).sum(axis=1) \
            if sym == "coordinate signs" else np.ones(len(reps))
        K = int(n1[keep].max()) if keep.any() else 1
        k = np.arange(K + 1)
        total = np.bincount(n1, weights=size * mass, minlength=K + 1)[: K + 1]
        mean = total / sphere_sizes(k, d)
        lo = np.full(K + 1, np.inf)
        hi = np.zeros(K + 1)
        np.minimum.at(lo, np.minimum(n1, K), np.where(n1 <= K, mass, np.inf))
        np.maximum.at(hi, np.minimum(n1, K), np.where(n1 <= K, mass, 0.0))
        top = float(mass.max())
        lo, hi, mean = _floored(lo, top), _floored(hi, top), _floored(mean, top)
        ax.fill_between(k * h, np.where(np.isfinite(lo), lo, hi), hi, alpha=0.3,
                        label=f"optmech: min–max {unit} on the shell")
        ax.plot(k * h, mean, "o", ms=3, label=f"optmech: shell mean, cost {result.upper_bound:.6g}")
        drawn += [lo, hi, mean]
        rr = k * h
    else:  # shells of the problem's norm (ℓ2, ℓ∞): the listed points grouped by their radius
        sym = mech["symmetry"]
        size = orbit_sizes(reps) if sym == "signed permutations" else 2.0 ** (reps != 0).sum(axis=1) \
            if sym == "coordinate signs" else np.ones(len(reps))
        rad = np.round(_norm_of(reps, norm), 9)
        shells, which = np.unique(rad[keep], return_inverse=True)
        m_k, s_k = mass[keep], size[keep]
        lo = np.full(len(shells), np.inf)
        hi = np.zeros(len(shells))
        np.minimum.at(lo, which, m_k)
        np.maximum.at(hi, which, m_k)
        mean = np.bincount(which, weights=s_k * m_k) / np.bincount(which, weights=s_k)
        top = float(mass.max())
        lo, hi, mean = _floored(lo, top), _floored(hi, top), _floored(mean, top)
        ax.fill_between(shells * h, np.where(np.isfinite(lo), lo, hi), hi, alpha=0.3, step="mid",
                        label=f"optmech: min–max {unit} on the shell")
        ax.plot(shells * h, mean, "o", ms=3,
                label=f"optmech: mean over the shell's listed points, cost {result.upper_bound:.6g}")
        drawn += [lo, hi, mean]
        rr = np.linspace(0.0, float(shells.max()) * h, 400) if continuous else shells
    if stair is not None and getattr(stair, "norm", "l1") == norm:  # radial in the drawn norm: r·e1 is on the shell
        pts = np.zeros((len(rr), d))
        pts[:, 0] = rr
        cell_h = h if kind == "cell_pmf_nd" else None
        yr = _floored(ref_values(pts.astype(np.int64) if not continuous else pts, cell_h), top)
        ax.plot(rr, yr, "-", lw=1, label=_ref_label(ref))
        drawn.append(yr)
    _log_limits(ax, *drawn)
    if lattice_axes and norm != "l2":
        _integer_ticks(ax.xaxis)
    ax.set_xlabel(_norm_label(norm))
    ax.set_ylabel(unit)
    _set_title(ax, title)
    _legend_inside(ax)
    return _finish(ax.figure, path)


def orbit_sizes(reps: np.ndarray) -> np.ndarray:
    """Number of points in the signed-permutation orbit of each sorted |x| representative.

    Examples
    --------
    >>> orbit_sizes(np.array([[0, 0], [0, 1], [1, 1], [1, 2]])).tolist()
    [1.0, 4.0, 4.0, 8.0]
    """
    from math import factorial

    d = reps.shape[1]
    out = np.empty(len(reps))
    for i, r in enumerate(reps.tolist()):
        mult = 1
        for v in set(r):
            mult *= factorial(r.count(v))
        out[i] = 2 ** sum(1 for v in r if v) * factorial(d) / mult
    return out


# -- optmech compare ------------------------------------------------------------------------------
_ROW_NAMES = {"dp_optimum": "ε-DP optimum\n(LP, Δ = 1)", "lipschitz_optimum": "ε-Lipschitz optimum\n(LP)",
              "laplace": "Laplace\n(closed form)"}


def plot_compare(c: dict, path=None, *, ax=None, fig=None):
    """Draw :func:`optmech.compare.compare`'s costs as certified brackets (error bars spanning [lower, upper]; a
    closed form, lower = upper, is a diamond) and, in 1-D, the staircase and Laplace densities
    over the range holding all but 1e-6 of either's mass.

    Parameters
    ----------
    c : dict
        The output of :func:`optmech.compare.compare` (its ``rows``, ``epsilon``, ``cost``, ``dim``, ``norm``).
    path : str or path-like, optional
        Also write the figure as a PNG there.
    ax : Axes or sequence of Axes, optional
        One Axes: the brackets panel only; two (1-D): the brackets and the densities.  The
        returned figure is the first Axes' figure.
    fig : Figure, optional
        Lay the panels out in this figure (default: a new pyplot-free Figure).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from optmech.compare import compare
    >>> c = compare(1.0, "abs")
    >>> fig = plot_compare(c)
    >>> len(fig.axes), fig.axes[1].get_yscale()
    (2, 'log')
    """
    import numpy as np

    one_d = c["dim"] == 1
    if ax is not None:
        axes = list(np.ravel(ax)) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if not 1 <= len(axes) <= (2 if one_d else 1):
            raise SpecError(f"plot_compare takes {'one or two Axes' if one_d else 'one Axes'} in d = {c['dim']}")
        fig = axes[0].figure
    else:
        fig = fig if fig is not None else _new_figure((12.5, 5.4) if one_d else (7.5, 5.4))
        axes = list(np.ravel(fig.subplots(1, 2 if one_d else 1, squeeze=False)))
    a = axes[0]
    for i, r in enumerate(c["rows"]):
        lo, up = float(r["lower_bound"]), float(r["upper_bound"])
        mid = 0.5 * (lo + up)
        ok = bool(r["certified"])
        color = "tab:red" if not ok else ("tab:blue", "tab:green", "tab:gray")[i % 3]
        exact = lo == up
        a.errorbar([i], [mid], yerr=[[mid - lo], [up - mid]], fmt="D" if exact else "none", ms=6, color=color,
                   ecolor=color, elinewidth=3, capsize=10, capthick=2,
                   label=f"{_ROW_NAMES.get(r['name'], r['name']).replace(chr(10), ' ')}: "
                         + (f"{lo:.8g} (exact)" if exact else f"[{lo:.8g}, {up:.8g}]")
                         + ("" if ok else " UNCERTIFIED"))
        a.annotate(f"{lo:.6g}" if exact else f"[{lo:.6g},\n {up:.6g}]", (i, mid), textcoords="offset points",
                   xytext=(12, 0), fontsize=8, va="center", color="k" if ok else "tab:red")
    a.set_xticks(range(len(c["rows"])), [_ROW_NAMES.get(r["name"], r["name"]) for r in c["rows"]], fontsize=8)
    a.set_xlim(-0.5, len(c["rows"]) - 0.2)
    a.margins(y=0.15)
    a.set_ylabel(f"expected cost ({c['cost']})")
    gain = c.get("dp_gain_over_laplace")
    extra = f"; Laplace / DP optimum = {gain:.4g}×" if gain is not None and gain == gain else ""
    a.set_title(f"ε = {_num(c['epsilon'], 6)}, cost {c['cost']}, d = {c['dim']}"
                + (f" ({c['norm']})" if c["dim"] > 1 else "") + f", sensitivity 1{extra}\n"
                "certified brackets [lower, upper]", fontsize=9)
    _legend_inside(a)
    if one_d and len(axes) > 1:
        from optmech.mechanisms.laplace import Laplace
        from optmech.mechanisms.staircase import Staircase

        eps = float(c["epsilon"])
        st = Staircase.optimal(c["cost"], epsilon=eps, sensitivity=1.0)
        lap = Laplace(epsilon=eps, sensitivity=1.0)
        ends = [mass_region(m) for m in (st, lap)]
        x = np.linspace(min(e[0] for e in ends), max(e[1] for e in ends), 4001)
        ys = [st.pdf(x), lap.pdf(x)]
        top = max(float(np.max(y)) for y in ys)
        ys = [_floored(y, top) for y in ys]
        a2 = axes[1]
        a2.plot(x, ys[0], label=f"staircase, γ = {st.gamma:.4g} (ε-DP optimum [Geng13, Thm 2.4])")
        a2.plot(x, ys[1], "--", label=f"Laplace, scale = {_num(1 / eps)} (ε-Lipschitz optimum [KHP15])")
        _log_limits(a2, *ys)
        a2.set_xlim(x[0], x[-1])
        a2.set_xlabel("noise x")
        a2.set_ylabel("density")
        a2.set_title("densities, drawn over all but 1e-6 of the mass", fontsize=9)
        _legend_inside(a2)
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
