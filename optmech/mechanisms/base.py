"""Base objects of the mechanism library: :class:`Reference`, :class:`Privacy`, :class:`Mechanism`.

:class:`Mechanism` follows the scipy.stats model in miniature: scalar keyword-only
parameters validated in ``__init__`` (a one-line :class:`~optmech.errors.SpecError` naming the
bad value), public ``pdf``/``pmf``/``cdf``/``sf``/``sample``/``expected_cost``/``to_dict`` on the
base class, private ``_pdf``/``_pmf``/``_cdf``/``_sf``/``_sample``/``_expected_cost`` formulas in
each subclass.  Tails come from ``_sf`` formulas, never from ``1 - cdf``.

The scipy.stats names are there too: ``rvs(size, random_state)`` (= ``sample``), ``ppf`` (the
generalised inverse of the cdf, 1-D), ``logpdf``/``logpmf`` (from log-density formulas where the
law has them, so far tails do not underflow; −inf off the support), ``support()``, ``entropy()``
(nats), ``mean``/``var``/``std``/``median``.  ``randomise(values)`` and ``mech(values)`` add the
noise to query answers, the way DP libraries use a mechanism.

Every concrete subclass registers itself under its ``name``; :meth:`Mechanism.from_dict`
rebuilds any of them from :meth:`Mechanism.to_dict`.  Multi-dimensional mechanisms
(``dim > 1``) take points as arrays whose last axis has length ``dim`` and sample arrays of
shape ``(*size, dim)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from optmech.exact.sampler import check_size
from optmech.mechanisms import numerics as nx


@dataclass(frozen=True)
class Reference:
    """A reference value of the optimal (or a baseline) expected cost.

    Attributes
    ----------
    name : str
        Mechanism family: ``staircase``, ``discrete_staircase``, ``geometric``, ``laplace``,
        ``discrete_laplace``.
    value : float
        Expected cost of that mechanism (``inf`` when the cost series diverges).
    parameters : dict
        The mechanism's free parameters (e.g. ``{"gamma": ..., "gamma_heuristic": ...}``).
    exact : bool
        True for a closed form, False for a numeric route (quadrature / truncated series;
        ``note`` then states the method and its accuracy).
    note : str
        Provenance: the theorem used, whether the value is the optimum V* or an upper bound, and
        for numeric routes the method and estimated error.

    >>> from optmech.costs import parse_cost
    >>> from optmech.mechanisms import laplace_reference
    >>> ref = laplace_reference(parse_cost("square"), 1, 1)       # E X² = 2Δ²/ε²
    >>> ref.value, ref.exact, ref.to_dict()["name"]
    (2.0, True, 'laplace')
    """

    name: str
    value: float
    parameters: dict = field(default_factory=dict)
    exact: bool = True
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict (±inf and NaN encoded as strings)."""

        def enc(v):
            if isinstance(v, float) and not math.isfinite(v):
                return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
            if isinstance(v, (np.floating, np.integer)):
                return enc(v.item())
            return v

        return {
            "name": self.name,
            "value": enc(float(self.value)),
            "parameters": {k: enc(v) for k, v in self.parameters.items()},
            "exact": bool(self.exact),
            "note": self.note,
        }


@dataclass(frozen=True)
class Privacy:
    """What a mechanism guarantees for neighbouring query values at distance <= ``sensitivity``.

    Attributes
    ----------
    notion : {"pure", "approx", "lipschitz"}
        ε-DP, (ε, δ)-DP, or Lipschitz privacy (|ln P(u∈S) − ln P(u'∈S)| <= ε‖u − u'‖, [KHP15]).
    epsilon, delta : float
        The guarantee (δ = 0 for pure DP; for Lipschitz privacy ε is per unit distance).
    sensitivity : float
        Δ, measured in ``norm`` (None for Lipschitz privacy, which has no Δ).
    norm : str
        The distance between neighbouring query values: ``"abs"`` in 1-D, ``"l1"``, ``"l2"`` or
        ``"linf"`` in d-D.
    note : str
        Where the guarantee comes from (theorem) and its side conditions.

    >>> from optmech.mechanisms import Laplace, Uniform
    >>> p = Laplace(epsilon=1, sensitivity=2).privacy()
    >>> p.notion, p.epsilon, p.delta, p.sensitivity, p.norm
    ('pure', 1.0, 0.0, 2.0, 'abs')
    >>> Uniform(delta=0.25, sensitivity=1).privacy().notion
    'approx'
    """

    notion: str
    epsilon: float
    delta: float
    sensitivity: float | int | None
    norm: str = "abs"
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "sensitivity": self.sensitivity,
            "norm": self.norm,
            "note": self.note,
        }


#: name -> Mechanism subclass, filled by ``Mechanism.__init_subclass__``.
REGISTRY: dict[str, type["Mechanism"]] = {}


def json_value(v):
    """A JSON-safe scalar: numpy scalars as Python numbers, ±inf and NaN as the strings "inf", "-inf", "nan".

    >>> json_value(np.float64(2.5)), json_value(float("inf")), json_value(float("nan"))
    (2.5, 'inf', 'nan')
    """
    if isinstance(v, (np.floating, np.integer)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _scalar_out(x: np.ndarray, y: np.ndarray):
    return y[()] if np.ndim(x) == 0 else y


class Mechanism:
    """Additive noise mechanism for a 1-D query under pure ε-DP (base class).

    Subclasses set ``name``, ``lattice`` and ``_param_names`` and supply the private formulas.
    Parameters are scalars, validated on construction; instances are immutable by convention.

    Examples
    --------
    >>> from optmech.mechanisms import Laplace
    >>> mech = Laplace(epsilon=1, sensitivity=1)
    >>> mech
    Laplace(epsilon=1.0, sensitivity=1.0)
    >>> float(mech.cdf(0.0)), mech.support(), round(mech.entropy(), 6)   # 1 + ln 2
    (0.5, (-inf, inf), 1.693147)
    >>> mech(np.array([10.0, 20.0, 30.0]), rng=0).shape    # noisy answers, same shape
    (3,)
    """

    name: ClassVar[str] = ""
    lattice: ClassVar[bool] = False
    #: True when the law is symmetric about 0 (then ``mean()`` is 0).
    symmetric: ClassVar[bool] = True
    _param_names: ClassVar[tuple[str, ...]] = ()
    dim: int = 1

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):
            REGISTRY[cls.name] = cls

    def __init__(self, *, epsilon, sensitivity) -> None:
        self._epsilon = nx.check_epsilon(epsilon)
        self._sensitivity = nx.check_sensitivity(sensitivity, integer=self.lattice)

    # -- parameters -----------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def sensitivity(self):
        return self._sensitivity

    @property
    def parameters(self) -> dict[str, Any]:
        """Family-specific parameters (e.g. ``{"gamma": 0.3}``)."""
        return {p: getattr(self, p) for p in self._param_names}

    # -- distribution -----------------------------------------------------------------------
    def pdf(self, x):
        """Probability density at ``x`` (continuous mechanisms only)."""
        if self.lattice:
            raise TypeError(f"{type(self).__name__} is a lattice mechanism: use pmf(k)")
        x = np.asarray(x, dtype=float)
        return _scalar_out(x, self._pdf(x))

    def pmf(self, k):
        """Probability mass at integer ``k`` (lattice mechanisms only; 0 off the lattice)."""
        if not self.lattice:
            raise TypeError(f"{type(self).__name__} is a continuous mechanism: use pdf(x)")
        k = np.asarray(k, dtype=float)
        integral = np.floor(k) == k
        y = np.where(integral, self._pmf(np.where(integral, k, 0.0)), 0.0)
        return _scalar_out(k, y)

    def sf(self, x):
        """``P(X > x)``, computed from a tail formula (accurate far in the tail)."""
        x = np.asarray(x, dtype=float)
        if self.lattice:
            x = np.floor(x)
        return _scalar_out(x, self._sf(x))

    def cdf(self, x):
        """``P(X <= x)``; by symmetry ``P(X >= -x)``, accurate in the left tail."""
        x = np.asarray(x, dtype=float)
        if self.lattice:  # P(X <= n) = P(X >= -n) = P(X > -n - 1)
            y = self._sf(-np.floor(x) - 1.0)
        else:
            y = self._sf(-x)
        return _scalar_out(x, y)

    def sample(self, size=None, rng=None, *, exact: bool = False):
        """Draw samples, vectorised.

        Parameters
        ----------
        size : int or tuple, optional
            Output shape (``(*size, dim)`` for d-D mechanisms); None draws one sample.
        rng : seed, numpy.random.Generator or "secure", optional
            A seed or Generator makes the draw reproducible; ``"secure"`` draws from a
            ChaCha20 stream keyed by the OS CSPRNG (:mod:`optmech.mechanisms.rng`).
        exact : bool
            False (default): the floating-point sampler, fast but not exactly private (Mironov
            2012; :mod:`optmech.mechanisms.rng`).  True: :meth:`exact_sampler`, whose output
            law equals the pmf exactly (lattice mechanisms only; ``rng=None`` is then the
            OS-keyed ChaCha20 stream, an int seed keys ChaCha20 reproducibly).
        """
        if exact:
            return self.exact_sampler().sample(size, rng=rng)
        from optmech.mechanisms.rng import as_generator

        shape = check_size(size)
        rng = as_generator(rng)
        n = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
        out = self._sample(n, rng)
        if shape is None:
            return out[0]
        return out.reshape(shape + out.shape[1:])

    def exact_sampler(self):
        """The exact sampler of this law (:class:`optmech.exact.ExactSampler`): draws from integer
        and rational arithmetic on uniform words, whose law equals the pmf exactly; its
        ``privacy()`` states the guarantee of the law it draws and what is not covered.

        >>> from optmech.mechanisms import DiscreteLaplace
        >>> ex = DiscreteLaplace(epsilon=1, sensitivity=2).exact_sampler()
        >>> ex.sample(4, rng=7).tolist() == ex.sample(4, rng=7).tolist()      # an int seed reproduces
        True
        >>> ex.privacy().epsilon
        1.0
        """
        cached = self.__dict__.get("_exact_cache")
        if cached is None:
            cached = self._exact_sampler()
            self.__dict__["_exact_cache"] = cached
        return cached

    def __getstate__(self) -> dict:
        # the exact sampler's tables are a cache (closures, not picklable): rebuilt on demand
        state = self.__dict__.copy()
        state.pop("_exact_cache", None)
        return state

    def _exact_sampler(self):
        from optmech.errors import SpecError

        if not self.lattice:
            raise SpecError(f"{type(self).__name__} is continuous: no exact sampler draws a density; release on a "
                            "lattice instead (docs: guide/mechanisms.md, Exact samplers, continuous mechanisms)")
        raise SpecError(f"{type(self).__name__} has no exact sampler")

    def _exact_privacy(self, law: str):
        """This mechanism's guarantee, with a note saying what the exact sampler draws."""
        from optmech.exact import TIMING_NOTE

        p = self.privacy()
        return Privacy(p.notion, p.epsilon, p.delta, p.sensitivity, p.norm,
                       f"{p.note}; exact sampler: {law}; {TIMING_NOTE}")

    def rvs(self, size=None, random_state=None):
        """scipy.stats' name for :meth:`sample`: ``random_state`` is a seed, a Generator or None.

        ``size=None`` returns one draw (a scalar in 1-D, an array of length ``dim`` in d-D).

        >>> from optmech.mechanisms import Geometric
        >>> g = Geometric(epsilon=1)
        >>> bool(np.array_equal(g.rvs(size=5, random_state=7), g.sample(5, rng=7)))
        True
        >>> g.rvs(size=(2, 3), random_state=1).shape
        (2, 3)
        """
        return self.sample(size, rng=random_state)

    def randomise(self, value, *, rng=None, exact: bool = False):
        """``value`` plus independent noise from this law, elementwise: the mechanism applied to a
        query answer (or an array of them; the shape is kept).

        In d dimensions ``value`` has a last axis of length ``dim`` (one noise vector per row).
        Lattice mechanisms take integer answers only (their guarantee is for integer queries).
        The noise is drawn as :meth:`sample` draws it (floating point; ``rng="secure"`` for the
        OS-keyed stream; ``exact=True`` for the exact sampler, integer values only): a mechanism
        that cannot sample refuses here too, with the same error.

        >>> from optmech.mechanisms import DiscreteLaplace
        >>> mech = DiscreteLaplace(epsilon=1, sensitivity=1)
        >>> noisy = mech.randomise(np.array([[3, 4], [5, 6]]), rng=0)
        >>> noisy.shape, noisy.dtype.kind
        ((2, 2), 'i')
        """
        from optmech.errors import SpecError

        v = np.asarray(value)
        if v.dtype.kind not in "biuf":
            raise SpecError(f"values must be numbers, got an array of dtype {v.dtype}")
        if v.dtype.kind == "b":
            raise SpecError("values must be numbers, not booleans")
        if v.dtype.kind == "f" and not np.all(np.isfinite(v)):
            raise SpecError("values must be finite")
        if self.lattice and v.dtype.kind == "f" and not np.all(np.floor(v) == v):
            raise SpecError(f"{type(self).__name__} is a lattice mechanism: values must be integers")
        if self.dim == 1:
            shape = v.shape
        else:
            if v.ndim == 0 or v.shape[-1] != self.dim:
                raise SpecError(f"values must have a last axis of length dim = {self.dim}, got shape {v.shape}")
            shape = v.shape[:-1]
        noise = np.asarray(self.sample(shape, rng=rng, exact=exact)).reshape(v.shape)
        out = v + noise
        return out[()] if out.ndim == 0 else out

    def randomize(self, value, *, rng=None, exact: bool = False):
        """American spelling of :meth:`randomise`.

        >>> from optmech.mechanisms import Laplace
        >>> m = Laplace(epsilon=1, sensitivity=1)
        >>> bool(m.randomize(5.0, rng=3) == m.randomise(5.0, rng=3))
        True
        """
        return self.randomise(value, rng=rng, exact=exact)

    def __call__(self, values, *, rng=None, exact: bool = False):
        """``mech(values)`` is :meth:`randomise`: the noisy answers, shape preserved.

        >>> from optmech.mechanisms import Laplace
        >>> mech = Laplace(epsilon=1, sensitivity=1)
        >>> true_answers = np.array([100.0, 250.0])
        >>> bool(np.array_equal(mech(true_answers, rng=5), mech.randomise(true_answers, rng=5)))
        True
        """
        return self.randomise(values, rng=rng, exact=exact)

    def expected_cost(self, cost) -> float:
        """``E[L(X)]`` for a cost: a spec string (``"abs"``, ``"square"``, ``"pow:P"``, an
        expression in x) or a cost object (``kind``, ``power``, ``__call__``)."""
        if isinstance(cost, str):
            from optmech.costs import parse_cost

            cost = parse_cost(cost)
        return float(self._expected_cost(cost))

    def mean(self) -> float:
        """E[X] (0 for the symmetric laws)."""
        if self.symmetric:
            return 0.0
        return float(self._mean())

    def var(self) -> float:
        """Var[X] (= E X² for the symmetric laws; ``inf`` when it diverges)."""
        second = self.expected_cost("square")
        m = self.mean()
        return float(second - m * m)

    def std(self) -> float:
        """Standard deviation, ``sqrt(var())``.

        >>> from optmech.mechanisms import Laplace
        >>> Laplace(epsilon=1, sensitivity=1).std() == math.sqrt(2)
        True
        """
        return math.sqrt(self.var())

    def median(self):
        """The median: 0 for the symmetric laws, else ``ppf(0.5)`` (the smallest point with cdf >= 1/2).

        >>> from optmech.mechanisms import Uniform
        >>> Uniform(delta=0.5, sensitivity=1).median()    # uniform on {-1, 0}
        -1.0
        """
        if self.symmetric:
            return 0.0 if self.dim == 1 else np.zeros(self.dim)
        return float(self.ppf(0.5))

    # -- scipy.stats-style extras ---------------------------------------------------------------
    def support(self) -> tuple[float, float]:
        """``(lower, upper)`` ends of the support, as scipy's ``support()``; ±inf when unbounded.

        In d dimensions: the range of one coordinate.

        >>> from optmech.mechanisms import Laplace, Uniform
        >>> Laplace(epsilon=1, sensitivity=1).support(), Uniform(delta=0.25, sensitivity=1).support()
        ((-inf, inf), (-2.0, 1.0))
        """
        return (-math.inf, math.inf)

    def logpdf(self, x):
        """Log density at ``x`` (continuous mechanisms), −inf where the density is 0.

        Closed-form laws evaluate the log-density formula itself, so the far tail stays finite
        where ``pdf`` underflows to 0.

        >>> from optmech.mechanisms import Laplace
        >>> mech = Laplace(epsilon=1, sensitivity=1)
        >>> float(mech.logpdf(0.0)) == -math.log(2.0), float(mech.logpdf(1000.0))
        (True, -1000.6931471805599)
        """
        if self.lattice:
            raise TypeError(f"{type(self).__name__} is a lattice mechanism: use logpmf(k)")
        y = np.asarray(self._logpdf(np.asarray(x, dtype=float)), dtype=float)
        return y[()] if y.ndim == 0 else y

    def logpmf(self, k):
        """Log probability mass at ``k`` (lattice mechanisms), −inf off the lattice and the support.

        >>> from optmech.mechanisms import DiscreteLaplace
        >>> mech = DiscreteLaplace(epsilon=1, sensitivity=1)
        >>> float(mech.logpmf(0)) == math.log(mech.pmf(0)), float(mech.logpmf(0.5))
        (True, -inf)
        >>> float(mech.logpmf(2000)) < -1999     # pmf(2000) underflows to 0; the log does not
        True
        """
        if not self.lattice:
            raise TypeError(f"{type(self).__name__} is a continuous mechanism: use logpdf(x)")
        y = np.asarray(self._logpmf(np.asarray(k, dtype=float)), dtype=float)
        return y[()] if y.ndim == 0 else y

    def ppf(self, q):
        """Quantile function (1-D): the generalised inverse of the cdf, ``inf{x : cdf(x) >= q}``.

        Lattice laws return the smallest integer k with ``cdf(k) >= q`` (exactly, by integer
        bisection on :meth:`cdf`); continuous laws a closed form or a bisection to ~1e-15 relative.
        As in scipy, ``ppf(0)`` is ``support()[0] - 1`` on a lattice (``support()[0]`` on ℝ),
        ``ppf(1)`` is ``support()[1]`` and q outside [0, 1] gives nan.

        >>> from optmech.mechanisms import Geometric, Laplace
        >>> g = Geometric(epsilon=1)
        >>> float(g.ppf(0.5)), float(g.ppf(0.9)), float(g.ppf(1.0))   # P(X > 1) = b²/(1 + b) < 0.1
        (0.0, 1.0, inf)
        >>> bool(g.cdf(g.ppf(0.9)) >= 0.9 > g.cdf(g.ppf(0.9) - 1))
        True
        >>> float(Laplace(epsilon=1, sensitivity=1).ppf(0.75)) == math.log(2)
        True
        """
        if self.dim != 1:
            raise TypeError(f"ppf is defined for dim = 1 only ({type(self).__name__} has dim = {self.dim})")
        q = np.asarray(q, dtype=float)
        out = np.full(q.shape, np.nan)
        lo, hi = self.support()
        out[q == 0.0] = lo - 1.0 if self.lattice else lo
        out[q == 1.0] = hi
        inner = (q > 0.0) & (q < 1.0)
        if np.any(inner):
            out[inner] = self._ppf(q[inner])
        return out[()] if out.ndim == 0 else out

    def entropy(self) -> float:
        """Shannon entropy in nats: of the pmf on a lattice, differential entropy on ℝ (or ℝ^d).

        Closed forms for the named laws; solver laws sum their window and geometric tails.

        >>> from optmech.mechanisms import Laplace, Uniform
        >>> Laplace(epsilon=1, sensitivity=1).entropy() == 1 + math.log(2)
        True
        >>> Uniform(delta=0.25, sensitivity=1).entropy() == math.log(4)
        True
        """
        return float(self._entropy())

    # -- display ----------------------------------------------------------------------------------
    def _display_rows(self) -> list[tuple[str, Any]]:
        d = self.to_dict()
        return [(k, v) for k, v in d.items() if k not in ("name",) and not isinstance(v, (list, dict))] + \
            [(k, v) for k, v in self.parameters.items() if k not in d]

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the parameters and the privacy guarantee, in escaped HTML tables."""
        from optmech.mechanisms.display import fmt_number, html_card, html_table

        try:
            priv = self.privacy()
            guarantee = {"pure": "pure ε-DP", "approx": "(ε, δ)-DP", "lipschitz": "ε-Lipschitz privacy"}.get(
                priv.notion, priv.notion)
            prows = [("notion", guarantee), ("epsilon", priv.epsilon), ("delta", priv.delta),
                     ("sensitivity", priv.sensitivity if priv.sensitivity is not None else "none (per unit distance)"),
                     ("norm", priv.norm), ("note", priv.note)]
            line = f"{guarantee}: ε = {fmt_number(priv.epsilon)}" + (
                f", δ = {fmt_number(priv.delta)}" if priv.delta else "") + (
                f", Δ = {fmt_number(priv.sensitivity)} ({priv.norm})" if priv.sensitivity is not None else "")
        except Exception as exc:  # display must not fail: say why the guarantee is not shown
            prows = [("privacy", f"not available: {exc}")]
            line = "privacy guarantee not available"
        kind = "lattice" if self.lattice else "continuous"
        lines = [repr(self), f"{kind} noise in {self.dim} dimension{'s' if self.dim > 1 else ''}; {line}"]
        return html_card(type(self).__name__, lines,
                         [html_table(self._display_rows(), "parameters"), html_table(prows, "privacy guarantee")])

    def privacy(self) -> Privacy:
        """The guarantee: pure ε-DP for sensitivity Δ unless a subclass says otherwise."""
        return Privacy("pure", self.epsilon, 0.0, self.sensitivity, "abs" if self.dim == 1 else "l1",
                       f"{self.name}: density ratio <= e^epsilon for shifts up to the sensitivity")

    def privacy_loss_distribution(self, sensitivity=None, **kwargs):
        """A pessimistic dp_accounting ``PrivacyLossDistribution`` of this noise, to compose it with
        other mechanisms (:func:`optmech.interop.accounting.privacy_loss_distribution`; needs
        ``pip install optmech[interop]``).

        >>> from optmech.mechanisms import Laplace
        >>> pld = Laplace(epsilon=1, sensitivity=1).privacy_loss_distribution()
        >>> float(pld.self_compose(2).get_delta_for_epsilon(2.0)) < 1e-9
        True
        """
        from optmech.interop.accounting import privacy_loss_distribution

        return privacy_loss_distribution(self, sensitivity, **kwargs)

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe parameters; ``Mechanism.from_dict`` inverts it."""
        d = {"name": self.name, "epsilon": self.epsilon, "sensitivity": self.sensitivity, **self.parameters}
        return {k: json_value(v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Mechanism":
        """Rebuild a mechanism from :meth:`to_dict` (on the base class, dispatch on ``name``)."""
        from optmech.errors import SpecError

        if isinstance(d, dict) and "name" not in d and "kind" in d:  # the solver's --save field
            d = {"name": d["kind"], **d}
        if not isinstance(d, dict) or "name" not in d:
            raise SpecError("a mechanism dict needs a 'name' field")
        target = REGISTRY.get(d["name"]) if cls is Mechanism else cls
        if target is None:
            raise SpecError(f"unknown mechanism {d['name']!r} (known: {', '.join(sorted(REGISTRY))})")
        if target.name != d["name"]:
            raise SpecError(f"{target.__name__}.from_dict got a {d['name']!r} mechanism")
        if cls is Mechanism and target.from_dict.__func__ is not Mechanism.from_dict.__func__:
            return target.from_dict(d)
        kwargs = {k: v for k, v in d.items() if k != "name"}
        try:
            return target(**kwargs)
        except TypeError as exc:
            raise SpecError(f"bad fields for mechanism {d['name']!r}: {exc}") from None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "name")
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.to_dict().items())))

    # -- formulas supplied by subclasses ----------------------------------------------------
    def _pdf(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def _pmf(self, k):  # pragma: no cover - abstract
        raise NotImplementedError

    def _sf(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def _sample(self, n, rng):  # pragma: no cover - abstract
        raise NotImplementedError

    def _expected_cost(self, cost):  # pragma: no cover - abstract
        raise NotImplementedError

    def _mean(self):  # pragma: no cover - abstract (asymmetric laws only)
        raise NotImplementedError

    # -- defaults of the scipy-style extras (subclasses override with closed forms) -----------------
    def _logpdf(self, x):
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(self.pdf(x), dtype=float))

    def _logpmf(self, k):
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(self.pmf(k), dtype=float))

    def _entropy(self):
        raise NotImplementedError(f"entropy() is not available for {type(self).__name__}")

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        """Quantiles for 0 < q < 1 (generic: bracket, then bisection on :meth:`cdf`)."""
        return lattice_quantile(self.cdf, q) if self.lattice else continuous_quantile(self.cdf, q, self._quantile_scale())

    def _quantile_scale(self) -> float:
        s = self.sensitivity
        return float(s) if isinstance(s, (int, float)) and s and math.isfinite(s) else 1.0

    def _on_lattice(self, k, log_mass):
        """``log_mass(k)`` at integer k, −inf elsewhere."""
        integral = np.floor(k) == k
        return np.where(integral, log_mass(np.where(integral, k, 0.0)), -np.inf)


#: Largest |k| the integer quantile search visits (floats are exact integers below 2^53).
_QUANTILE_LIMIT = 2.0**52


def lattice_quantile(cdf, q: np.ndarray) -> np.ndarray:
    """Smallest integer k with ``cdf(k) >= q``, for each 0 < q < 1 (vectorised).

    Exponential bracketing, then bisection that keeps ``cdf(lo) < q <= cdf(hi)`` with
    ``hi = lo + 1`` at the end, so the answer meets both sides of the definition for the very
    ``cdf`` it was given.

    >>> lattice_quantile(lambda k: np.clip((np.floor(k) + 3) / 6, 0, 1), np.array([0.01, 0.5, 0.99]))
    array([-2.,  0.,  3.])
    """
    q = np.asarray(q, dtype=float)
    hi = np.zeros(q.shape)
    lo = np.full(q.shape, -1.0)
    step = np.ones(q.shape)
    need = np.asarray(cdf(hi)) < q
    while np.any(need):  # move hi up until cdf(hi) >= q (the old hi is then a valid lo)
        lo = np.where(need, hi, lo)
        hi = np.where(need, hi + step, hi)
        step = np.where(need, 2.0 * step, step)
        if np.any(hi > _QUANTILE_LIMIT):
            raise ArithmeticError("quantile beyond 2^52: the cdf does not reach q")
        need = np.asarray(cdf(hi)) < q
    step = np.ones(q.shape)
    need = np.asarray(cdf(lo)) >= q
    while np.any(need):  # move lo down until cdf(lo) < q (the old lo is then a valid hi)
        hi = np.where(need, lo, hi)
        lo = np.where(need, lo - step, lo)
        step = np.where(need, 2.0 * step, step)
        if np.any(lo < -_QUANTILE_LIMIT):
            raise ArithmeticError("quantile below -2^52: the cdf does not fall below q")
        need = np.asarray(cdf(lo)) >= q
    while True:
        gap = hi - lo > 1.0
        if not np.any(gap):
            return hi
        mid = np.floor((lo + hi) / 2.0)
        up = np.asarray(cdf(mid)) >= q
        hi = np.where(gap & up, mid, hi)
        lo = np.where(gap & ~up, mid, lo)


def continuous_quantile(cdf, q: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``inf{x : cdf(x) >= q}`` for each 0 < q < 1, by bracketing and bisection (to ~2 ulp, or
    ``scale``·2^-100 near 0); returns the upper end, where ``cdf >= q`` holds.

    >>> float(continuous_quantile(lambda x: np.clip(x, 0.0, 1.0), np.array([0.25]))[0])
    0.25
    """
    q = np.asarray(q, dtype=float)
    hi = np.zeros(q.shape)
    lo = np.zeros(q.shape)
    step = np.full(q.shape, float(scale))
    need = np.asarray(cdf(hi)) < q
    while np.any(need):
        lo = np.where(need, hi, lo)
        hi = np.where(need, hi + step, hi)
        step = np.where(need, 2.0 * step, step)
        if np.any(hi > 1e300):
            raise ArithmeticError("the cdf does not reach q")
        need = np.asarray(cdf(hi)) < q
    step = np.full(q.shape, float(scale))
    lo = np.where(np.asarray(cdf(lo)) >= q, lo - step, lo)
    need = np.asarray(cdf(lo)) >= q
    while np.any(need):
        hi = np.where(need, lo, hi)
        step = np.where(need, 2.0 * step, step)
        lo = np.where(need, lo - step, lo)
        if np.any(lo < -1e300):
            raise ArithmeticError("the cdf does not fall below q")
        need = np.asarray(cdf(lo)) >= q
    floor = float(scale) * 2.0**-100  # absolute resolution near 0 (else ~1e-16 relative)
    for _ in range(400):
        mid = lo + (hi - lo) / 2.0
        open_ = (mid > lo) & (mid < hi) & (hi - lo > np.maximum(2.0 * np.finfo(float).eps * np.abs(mid), floor))
        if not np.any(open_):
            break
        up = np.asarray(cdf(mid)) >= q
        hi = np.where(open_ & up, mid, hi)
        lo = np.where(open_ & ~up, mid, lo)
    return hi
