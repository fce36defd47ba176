"""Figures: the optimal pmf or density on a log scale beside the best closed form; in d = 2 heatmaps,
in d >= 3 the radial profile over ℓ1 shells."""

from __future__ import annotations

import math

import numpy as np

from optmech.result import Result


def _closed_form(result: Result):
    """The closed-form mechanism of the best reference, when it has a pmf/pdf (else None)."""
    from optmech.mechanisms import DiscreteLaplace, DiscreteStaircase, Laplace, Staircase

    pr = result.problem
    eps, delta = pr["epsilon"], pr["sensitivity"]
    refs = sorted((r for r in result.references if math.isfinite(r.value)), key=lambda r: r.value)
    for r in refs:
        p = r.parameters
        if r.name == "staircase" and "gamma" in p:
            return r, Staircase(epsilon=eps, sensitivity=delta, gamma=p["gamma"])
        if r.name == "discrete_staircase" and "r" in p:
            return r, DiscreteStaircase(epsilon=eps, sensitivity=int(delta), r=int(p["r"]))
        if r.name in ("discrete_laplace", "geometric"):
            return r, DiscreteLaplace(epsilon=eps, sensitivity=int(delta))
        if r.name == "laplace":
            return r, Laplace(epsilon=eps, sensitivity=delta)
    return None, None


def plot_result(result: Result, path: str) -> None:
    """Write a PNG of the certified mechanism (log scale) and the best closed form to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if result.mechanism is None:
        from optmech.errors import SpecError

        raise SpecError("this result carries no mechanism to plot")
    if getattr(result.mechanism, "law", None) is None:  # d-D and Lipschitz solver outputs
        plot_nd(result, path)
        return
    mech = result.mechanism.law
    grid = mech.grid
    k = np.arange(mech.k_lo, mech.k_hi + 1)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ref, closed = _closed_form(result)
    if grid.kind == "integer":
        ax.plot(k, mech.density(k), "o", ms=3, label=f"optmech (upper-bound mechanism), cost {result.upper_bound:.6g}")
        if closed is not None:
            ax.plot(k, closed.pmf(k), "-", lw=1, label=f"{ref.name} {ref.parameters}, cost {ref.value:.6g}")
        ax.set_ylabel("probability mass")
    else:
        x = np.concatenate([grid.left(k), grid.right(k[-1:])])
        ax.stairs(mech.density(k), x, label=f"optmech (upper-bound density), cost {result.upper_bound:.6g}")
        if closed is not None:
            xs = np.linspace(x[0], x[-1], 4001)
            ax.plot(xs, closed.pdf(xs), "--", lw=1, label=f"{ref.name}, cost {ref.value:.6g}")
        ax.set_ylabel("density")
    ax.set_yscale("log")
    ax.set_xlabel("noise x")
    pr = result.problem
    tag = "certified" if result.certified else "UNCERTIFIED"
    ax.set_title(
        f"ε={pr['epsilon']:g}, Δ={pr['sensitivity']:g}, cost {pr['cost']}: "
        f"[{result.lower_bound:.8g}, {result.upper_bound:.8g}] ({tag})",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def nd_masses(mech: dict, pts: np.ndarray) -> np.ndarray:
    """P at integer points ``pts`` (…, d) from a ``lattice_pmf_nd`` dict (0 where not listed)."""
    reps = np.asarray(mech["representatives"], dtype=np.int64)
    mass = np.asarray(mech["mass"], dtype=float)
    q = np.asarray(pts, dtype=np.int64)
    sym = mech["symmetry"]
    keyed = np.sort(np.abs(q), axis=-1) if sym == "signed permutations" else np.abs(q) if sym == "coordinate signs" else q
    lookup = {tuple(r): m for r, m in zip(reps.tolist(), mass.tolist())}
    flat = keyed.reshape(-1, keyed.shape[-1])
    return np.array([lookup.get(tuple(r), 0.0) for r in flat.tolist()]).reshape(q.shape[:-1])


def _staircase_nd(result: Result):
    """The reference staircase of a d-D result: (reference, mechanism) or (None, None)."""
    from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND
    from optmech.mechanisms.multidim import StaircaseND

    pr = result.problem
    for r in result.references:
        if r.name == "discrete_staircase" and "r" in r.parameters:
            return r, DiscreteStaircaseND(epsilon=pr["epsilon"], sensitivity=int(pr["sensitivity"]),
                                          r=int(r.parameters["r"]), dim=int(pr["dim"]))
        if r.name == "staircase" and "gamma" in r.parameters:
            return r, StaircaseND(epsilon=pr["epsilon"], sensitivity=pr["sensitivity"], gamma=float(r.parameters["gamma"]),
                                  dim=int(pr["dim"]))
    return None, None


def _ref_label(ref) -> str:
    p = ref.parameters
    par = f"r={p['r']}" if "r" in p else f"γ={p['gamma']:.4g}"
    return f"{'ℓ1 lattice staircase' if 'r' in p else 'd-D staircase'} {par}, cost {ref.value:.6g}"


def _shell_values(mech: dict, r: np.ndarray) -> np.ndarray:
    """Density (or mass per point) of an ``l1_shell_density_nd`` mechanism at ℓ1 radii r (0 beyond the list)."""
    dens = np.asarray(mech["density"], dtype=float)
    k = np.floor(np.asarray(r, dtype=float) / mech["shell_width"]).astype(np.int64)
    return np.where(k < len(dens), dens[np.minimum(k, len(dens) - 1)], 0.0)


def plot_nd(result: Result, path: str) -> None:
    """d = 2: heatmaps (log colour scale) of the certified mechanism and the staircase reference;
    d >= 3: the radial profile over ℓ1 shells beside the staircase.

    Lattice mechanisms are plotted as mass per point, cell mechanisms (continuous domain) as mass
    per cell, shell mechanisms as density (continuous) or mass per point (lattice).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    mech, pr = result.mechanism_dict(), result.problem
    d = int(mech["dim"])
    kind = mech["kind"]
    ref, stair = _staircase_nd(result)
    tag = "certified" if result.certified else "UNCERTIFIED"
    title = (f"d={d}, ε={pr['epsilon']:g}, Δ={pr['sensitivity']:g} ({mech['norm']}), cost {pr['cost']}: "
             f"[{result.lower_bound:.8g}, {result.upper_bound:.8g}] ({tag})")
    continuous = kind == "cell_pmf_nd" or bool(mech.get("continuous"))
    unit = "density" if kind == "l1_shell_density_nd" and continuous else "mass per cell" if kind == "cell_pmf_nd" \
        else "probability mass per point"
    if kind == "l1_shell_density_nd":
        dens = np.asarray(mech["density"], dtype=float)
        w = float(mech["shell_width"])
        keep = np.flatnonzero(dens > 1e-12 * dens.max())
        rmax = (int(keep.max()) + 1) * w if keep.size else w
    else:
        reps = np.asarray(mech["representatives"], dtype=np.int64)
        mass = np.asarray(mech["mass"], dtype=float)
        h = float(mech.get("cell_width", 1.0))
        keep = mass > 1e-12 * mass.max()
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
        panels = [("optmech (upper-bound mechanism)", mine)]
        if stair is not None:
            panels.append((_ref_label(ref), ref_values(pts, cell_h)))
        fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
        vmax = max(float(p.max()) for _, p in panels)
        for ax, (name, p) in zip(axes[0], panels):
            im = ax.imshow(np.where(p > 0, p, np.nan).T, origin="lower", extent=ext,
                           norm=LogNorm(vmin=vmax * 1e-12, vmax=vmax), cmap="viridis")
            ax.set_title(name, fontsize=9)
            ax.set_xlabel("x1")
            ax.set_ylabel("x2")
        fig.colorbar(im, ax=axes[0].tolist(), label=unit)
        fig.suptitle(title, fontsize=9)
    else:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        if kind == "l1_shell_density_nd":
            r = np.arange(len(dens)) * w
            sel = r <= rmax
            ax.step(r[sel], dens[sel], where="post", label=f"optmech: shell {unit}, cost {result.upper_bound:.6g}")
            rr = np.linspace(0, rmax, 400)
        else:
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
            ax.fill_between(k * h, lo, hi, alpha=0.3, label=f"optmech: min–max {unit} on the shell")
            ax.plot(k * h, mean, "o", ms=3, label=f"optmech: shell mean, cost {result.upper_bound:.6g}")
            rr = k * h
        if stair is not None:
            pts = np.zeros((len(rr), d))
            pts[:, 0] = rr
            cell_h = h if kind == "cell_pmf_nd" else None
            ax.plot(rr, ref_values(pts.astype(np.int64) if not continuous else pts, cell_h), "-", lw=1, label=_ref_label(ref))
        ax.set_yscale("log")
        ax.set_xlabel("‖x‖₁")
        ax.set_ylabel(unit)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def orbit_sizes(reps: np.ndarray) -> np.ndarray:
    """Number of points in the signed-permutation orbit of each sorted |x| representative."""
    from math import factorial

    d = reps.shape[1]
    out = np.empty(len(reps))
    for i, r in enumerate(reps.tolist()):
        mult = 1
        for v in set(r):
            mult *= factorial(r.count(v))
        out[i] = 2 ** sum(1 for v in r if v) * factorial(d) / mult
    return out
