"""The catalogue of bad inputs: (command line, exit status, a fragment of the one-line message).

``tests/test_bad_inputs.py`` runs every entry; the README's "Errors" section lists them all
(``python tests/bad_inputs.py`` prints that table).  Placeholders: ``{tmp}`` is a scratch folder
holding ``notsqlite.sqlite`` (text), ``bad.csv`` (a pmf that sums to 0.9), ``bad.toml`` (a spec
with an unknown key), ``big.toml`` (a 600-problem sweep), ``latin1.csv`` (not UTF-8) and
``file`` (a plain file).
"""

from __future__ import annotations

#: (argv, exit status, message fragment)
BAD_INPUTS: list[tuple[str, int, str]] = [
    # solve: privacy, sensitivity, domain
    ("solve --epsilon nan", 2, "epsilon"),
    ("solve --epsilon -1", 2, "epsilon"),
    ("solve --epsilon 0", 2, "epsilon"),
    ("solve --epsilon 1e9", 2, "epsilon"),
    ("solve --epsilon 1 --sensitivity 0", 2, "sensitivity"),
    ("solve --epsilon 1 --sensitivity 1.5 --domain integer", 2, "positive integer"),
    ("solve --epsilon 1 --resolution 2.5", 2, "resolution"),
    ("solve --epsilon 1 --target-gap 2", 2, "target_gap"),
    ("solve --epsilon 1 --delta 0.1", 2, "--privacy approx"),
    ("solve --privacy approx --epsilon 1 --delta 1 --domain integer", 2, "delta"),
    ("solve --privacy approx --epsilon 1 --delta -0.1 --domain integer", 2, "delta"),
    ("solve --privacy approx --epsilon 0 --delta 0 --domain integer", 2, "delta"),
    ("solve --privacy approx --epsilon 1 --delta 1e-11 --domain integer", 2, "below the supported"),
    ("solve --privacy approx --epsilon 0 --delta 1e-7 --domain integer", 2, "at epsilon = 0"),
    ("solve --privacy pure --epsilon 1 --domain nonnegative", 2, "cannot live on N"),
    ("solve --privacy approx --epsilon 1 --delta 0.1 --dim 2 --domain nonnegative", 2, "in 1-D"),
    ("table --privacy approx --domain nonnegative --epsilon 1 --delta 0.1", 2, "for noise on N use optmech solve"),
    ("solve --privacy approx --epsilon 1 --delta 0.1 --domain continuous --dim 2 --cost linf", 2, "l2sq and expressions"),
    ("solve --privacy approx --epsilon 1 --delta 0.001 --domain continuous --dim 3 --norm l2 --cost l2 --resolution 16", 2,
     "GiB"),
    ("solve --privacy approx --epsilon 1 --delta 0 --domain continuous", 2, "pure DP"),
    # solve: costs
    ("solve --epsilon 1 --cost=-abs(x)", 2, "negative"),
    ("solve --epsilon 1 --cost log(abs(x))", 2, "cost"),
    ("solve --epsilon 1 --cost x.real", 2, "cost"),
    ("solve --epsilon 1 --cost __import__('os')", 2, "cost"),
    ("solve --epsilon 1 --cost '[x for x in range(3)]'", 2, "cost"),
    ("solve --epsilon 1 --cost 'lambda: 1'", 2, "cost"),
    ("solve --epsilon 1 --cost x**1000", 2, "exponent"),
    ("solve --epsilon 1 --cost exp(x**2)", 2, "grows too fast"),
    ("solve --epsilon 1 --cost 1/(1+x**2)", 2, "rewards large noise"),
    ("solve --epsilon 1 --domain integer --cost x**2+x-1", 2, "negative"),
    ("solve --epsilon 1 --cost x**2+x", 2, "negative"),
    ("solve --epsilon 1 --domain integer --cost abs(x)*(1+sqrt(abs(x))-sqrt(abs(x)))", 2, "bounded below"),
    ("solve --epsilon 1 --cost pow:0", 2, "pow"),
    # solve: sizes (resource guards: the message gives the size and what to change)
    ("solve --epsilon 1 --resolution 100000000", 2, "GiB"),
    ("solve --epsilon 1 --dim 3 --resolution 60 --symmetry orbits", 2, "GiB"),
    ("solve --epsilon 1 --dim 3 --resolution 100000000", 2, "GiB"),
    ("solve --privacy approx --epsilon 0.01 --delta 0.0001 --domain integer --dim 3 --cost l1 --sensitivity 5", 2, "GiB"),
    ("solve --epsilon 1 --dim 8 --sensitivity 6 --domain integer --cost l1", 2, "GiB"),
    ("solve --privacy lipschitz --epsilon 0.000001 --cost square --resolution 10000000", 2, "lower the resolution"),
    # solve: dimensions, norms, candidates
    ("solve --epsilon 1 --dim 9 --cost l1", 2, "dim"),
    ("solve --epsilon 1 --dim 2 --norm l3 --cost l1", 2, "norm"),
    ("solve --epsilon 1 --dim 2 --cost x3", 2, "x3"),
    ("solve --epsilon 1 --dim 2 --cost abs(x)", 2, "x1"),
    ("solve --epsilon 1 --dim 2 --domain integer --resolution 4 --cost l1", 2, "resolution"),
    ("solve --epsilon 1 --candidate nowhere.json", 2, "no such file"),
    # solve: Lipschitz and Wasserstein
    ("solve --privacy lipschitz --epsilon 1 --delta 0.1", 2, "delta"),
    ("solve --privacy lipschitz --epsilon 1 --dim 2 --cost linf", 2, "separable"),
    ("solve --utility wasserstein --epsilon 1 --domain integer", 2, "--input"),
    ("solve --utility wasserstein --input poisson:5:0 --epsilon 1 --domain integer", 2, "input spec"),
    ("solve --utility wasserstein --input gaussian:0:-1:-5:5 --epsilon 1 --domain integer", 2, "sigma"),
    ("solve --utility wasserstein --input poisson:5:0:30 --epsilon 1 --domain continuous", 2, "integer"),
    ("solve --utility wasserstein --input-pmf {tmp}/bad.csv --epsilon 1 --domain integer", 2, "sum"),
    ("solve --utility wasserstein --input-pmf {tmp}/latin1.csv --epsilon 1 --domain integer", 2, "UTF-8"),
    # solve: solver profiles
    ("solve --epsilon 1 --solver nosuchprofile", 2, "profile"),
    # table and compare
    ("table --privacy approx --cost abs --sensitivity 1 --epsilon 0.5 --delta", 2, "delta"),
    ("table --privacy approx --cost abs --sensitivity 1.5 --epsilon 0.5 --delta 0.1", 2, "integer"),
    ("table --privacy approx --cost abs --sensitivity 1,2 --epsilon 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1 "
     "--delta 0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,0.1,0.11,0.12,0.13,0.14,0.15,0.16,0.17,0.18,0.19,0.2,"
     "0.21,0.22,0.23,0.24,0.25,0.26", 2, "--force"),
    ("compare --epsilon 1 --cost abs --norm linf", 2, "norm"),
    ("compare --epsilon 1 --cost abs --plot out.jpg", 2, ".png"),
    # sweeps, stores, reproduce
    ("run {tmp}/missing.toml", 2, "no such spec file"),
    ("run {tmp}/bad.toml", 2, "unknown key"),
    ("run {tmp}/big.toml", 2, "--force"),
    ("run {tmp}/bad.toml --workers 0", 2, "unknown key"),
    ("store ls {tmp}/notsqlite.sqlite", 2, "not"),
    ("store ls {tmp}/missing.sqlite", 2, "no such store"),
    ("store show {tmp}/notsqlite.sqlite", 2, "KEY"),
    ("reproduce --quick --out {tmp}/file", 2, "not a folder"),
    ("reproduce --quick --out {tmp}/r --only nothing-like-this", 2, "matches no catalogue spec"),
    # sample, mechanism, audit
    ("sample --mechanism staircase --epsilon 1 --gamma 2 -n 5 --out {tmp}/s.npy", 2, "gamma"),
    ("sample --mechanism discrete_staircase --epsilon 1 --sensitivity 3 --r 4 -n 5 --out {tmp}/s.npy", 2, "r"),
    ("sample --mechanism laplace --epsilon 1 -n -1 --out {tmp}/s.npy", 2, "n"),
    ("sample --mechanism laplace --epsilon 1 -n 5 --out {tmp}/s.txt", 2, ".npy"),
    ('sample --mechanism staircase --dim 2 --epsilon 1 --norm lq:3 -n 5 --out {tmp}/s.npy', 2, 'unknown norm'),
    ('sample --mechanism staircase --dim 2 --epsilon 1 --norm lp:0.5 -n 5 --out {tmp}/s.npy', 2, 'P >= 1'),
    ('sample --mechanism staircase --dim 2 --epsilon 1 --norm lp:3 --weights 1,-2 -n 5 --out {tmp}/s.npy', 2, '> 0'),
    ('solve --epsilon 1 --dim 2 --domain continuous --norm l2 --cost l1sq', 2, 'l1 sensitivity'),
    ("sample --mechanism laplace --epsilon 1 -n 5 --seed 1 --secure --out {tmp}/s.npy", 2, "secure"),
    ("sample --mechanism uniform --delta 1.5 -n 5 --out {tmp}/s.npy", 2, "delta"),
    ("sample --mechanism laplace --epsilon 1 -n 5 --exact --out {tmp}/s.npy", 2, "--lattice-bits"),
    ("sample --mechanism laplace --epsilon 1 -n 5 --lattice-bits 4 --out {tmp}/s.npy", 2, "--exact"),
    ("sample --mechanism laplace --epsilon 1 -n 5 --exact --lattice-bits 40 --out {tmp}/s.npy", 2, "lattice bits"),
    ("sample --mechanism discrete_laplace --epsilon 1 -n 5 --exact --lattice-bits 4 --out {tmp}/s.npy", 2,
     "already on the lattice"),
    ("mechanism --mechanism laplace --epsilon 1 --gamma 0.3", 2, "gamma"),
    ("mechanism --mechanism geometric --epsilon 1 --sensitivity 2", 2, "geometric"),
    ("audit {tmp}/bad.csv --epsilon 1 --sensitivity 1", 2, "sum"),
    ("audit {tmp}/missing.csv --epsilon 1 --sensitivity 1", 2, "missing.csv"),
    ("audit {tmp}/latin1.csv --epsilon 1 --sensitivity 1", 2, "UTF-8"),
    # (epsilon, delta) tables on the real line
    ("table --privacy approx --domain continuous --epsilon 1 --delta 0.1 --dim 2 --cost abs", 2, "1-D"),
    ("table --privacy lipschitz --epsilon 1", 2, "invalid choice: 'lipschitz'"),
    # every file a command writes is checked before any work (issue 36)
    ("solve --epsilon 1 --save {tmp}/nodir/x.json", 2, "does not exist"),
    ("solve --epsilon 1 --plot {tmp}/out.jpg", 2, ".png, .pdf or .svg"),
    ("solve --epsilon 1 --save {tmp}", 2, "is a folder"),
    ("table --epsilon 1 --out {tmp}/nodir/t.csv", 2, "does not exist"),
    ("sample --mechanism laplace --epsilon 1 -n 5 --out {tmp}/nodir/s.npy", 2, "does not exist"),
    ("reproduce --quick --out {tmp}/file/sub", 2, "is a file, not a folder"),
    ("reproduce --quick", 2, "--out"),
    # misspelt options and cost messages that lead somewhere (issue 36)
    ("solve --epsilom 1", 2, "did you mean --epsilon?"),
    ("solve --epsilon 1 --cots abs", 2, "did you mean --cost?"),
    ("solve --epsilon 1 --cost x^2", 2, "'^' is not a power here; write x**2"),
    ("solve --epsilon 1 --cost 'x**2 - 1'", 2, "its minimum near 0 is about -1 at x = 0"),
    ("solve --epsilon 1 --domain integer --cost 'x**2 - 1'", 2, "its infimum over ℤ is proven in [-1, -1]"),
    ("solve --epsilon 1 --cost 'x - 1'", 2, "not proven bounded below"),
    # Lipschitz LPs clip the cost at 0: a cost that may be negative would give a lower bound above V*
    ("solve --privacy lipschitz --epsilon 1 --cost 'x**2 - 1'", 2, "needs a cost proven nonnegative"),
    # recommend (issue 39): checked before any solve
    ("recommend --epsilon 1 --prefer-standard abc", 2, "--prefer-standard must be a tolerance"),
    ("recommend --epsilon 1 --prefer-standard=-1%", 2, "--prefer-standard must be a tolerance in [0"),
    ("recommend --epsilon 1 --compositions 0", 2, "compositions"),
    ("recommend --epsilon 1 --compositions 2.5", 2, "compositions"),
    ("recommend --epsilon 1 --delta 1e-6 --json --format csv", 2, "two outputs"),
    ("recommend --epsilon 1 --delta 1e-6 --dim 2 --compositions 3", 2, "1-D"),
    ("recommend --epsilon 1 --delta 1.5", 2, "delta"),
    ("recommend --epsilon 1 --domain nonnegative", 2, "nonnegative"),
]


def readme_table() -> str:
    """The README's list of bad inputs (markdown)."""
    rows = ["| command | exit | message contains |", "|---|---|---|"]
    for argv, code, frag in BAD_INPUTS:
        shown = argv if len(argv) <= 110 else argv[:107] + "…"
        rows.append(f"| `optmech {shown.replace('|', '¦')}` | {code} | {frag} |")
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover
    print(readme_table())
