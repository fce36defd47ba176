"""The five source papers and the tags by which optmech cites them.

Docstrings, comments, JSON ``claims`` and notes, the README and the ``optmech reproduce`` report
cite a paper by its tag in square brackets, with the paper's own section, equation or theorem
number after a comma: ``[Geng13, Thm 2.5]``, ``[GV13] (62)``.  The catalogue specs
(``problems/*.toml``, ``[reproduce] seed = "000"``) and :mod:`optmech.errata` key the papers by
the short codes of :data:`TAGS`; :func:`cite` turns a code into its tag for anything printed.
"""

from __future__ import annotations

import re

__all__ = ["TAGS", "REFERENCES", "WORKS", "cite", "references_markdown", "tags_in", "section_tags", "citation"]

#: catalogue key -> tag
TAGS: dict[str, str] = {
    "000": "Geng13",
    "001": "GKOV15",
    "002": "GV13",
    "003": "QHFL22",
    "004": "KHP15",
}

#: tag -> full citation (markdown)
REFERENCES: dict[str, str] = {
    "Geng13": 'Q. Geng, "The Optimal Mechanism in Differential Privacy", PhD dissertation, Electrical and '
              "Computer Engineering, University of Illinois at Urbana-Champaign, 2013.",
    "GKOV15": 'Q. Geng, P. Kairouz, S. Oh, P. Viswanath, "The Staircase Mechanism in Differential Privacy", '
              "*IEEE Journal of Selected Topics in Signal Processing*, 2015. doi:10.1109/JSTSP.2015.2425831.",
    "GV13": 'Q. Geng, P. Viswanath, "Optimal Noise Adding Mechanisms for Approximate Differential Privacy", '
            "arXiv:1305.1330, 2013.",
    "QHFL22": 'S. Qin, J. He, C. Fang, J. Lam, "Differential Private Discrete Noise Adding Mechanism: '
              'Conditions, Properties and Optimization", arXiv:2203.10323, 2022 (extended version of an '
              "American Control Conference 2022 paper).",
    "KHP15": 'F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace Mechanism in Differential '
             'Privacy", arXiv:1504.00065, 2015.',
}

#: tag -> full citation of the other works optmech cites (reference mechanisms, calibrations)
WORKS: dict[str, str] = {
    "DR14": 'C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", *Foundations and Trends in '
            "Theoretical Computer Science* 9(3–4), 2014.",
    "BW18": 'B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical '
            'Calibration and Optimal Denoising", ICML 2018, arXiv:1805.06530.',
    "GDGK20": 'Q. Geng, W. Ding, R. Guo, S. Kumar, "Tight Analysis of Privacy and Utility Tradeoff in Approximate '
              'Differential Privacy", AISTATS 2020, arXiv:1810.00877.',
    "CKS20": 'C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, '
             "arXiv:2004.00010.",
    "SLW25": 'A. Selvi, H. Liu, W. Wiesemann, "Differential Privacy via Distributionally Robust Optimization", '
             "*Operations Research*, 2025. doi:10.1287/opre.2023.0218, arXiv:2304.12681.",
    "KSW25": 'Kulesza, Suresh, Wang, "General Staircase Mechanisms", AISTATS 2025.',
    "MDA26": "Melbourne, Diaz, Asoodeh, arXiv:2601.14597, 2026 (staircases in every norm).",
    "AS18": 'J. Awan, A. Slavković, "Differentially Private Uniformly Most Powerful Tests for Binomial Data", NeurIPS '
            "2018, arXiv:1805.09236 (the Tulap distribution).",
    "AV23": 'J. Awan, S. Vadhan, "Canonical Noise Distributions and Private Hypothesis Tests", *Annals of Statistics* '
            "51(2), 2023, arXiv:2108.04303.",
    "AR23": 'J. Awan, A. Ramasethu, "Optimizing Noise for f-Differential Privacy via Anti-Concentration and Stochastic '
            'Dominance", arXiv:2308.08343, 2023.',
    "ZDW22": 'Y. Zhu, J. Dong, Y.-X. Wang, "Optimal Accounting of Differential Privacy via Characteristic Function", '
             'AISTATS 2022, arXiv:2106.08567.',
    "DGKKM22": 'V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, "Connect the Dots: Tighter Discrete '
               'Approximations of Privacy Loss Distributions", PETS 2022, arXiv:2207.04380.',
    "Meh92": 'S. Mehrotra, "On the Implementation of a Primal-Dual Interior Point Method", SIAM J. Optim. 2(4), '
             '575-601, 1992.',
    "Gon96": 'J. Gondzio, "Multiple centrality corrections in a primal-dual method for linear programming", '
             'Comput. Optim. Appl. 6, 137-156, 1996.',
}


def cite(key: str) -> str:
    """``"000"`` -> ``"[Geng13]"``; a key that is not a paper (``"conjecture"``) is returned unchanged."""
    tag = TAGS.get(str(key))
    return f"[{tag}]" if tag else str(key)


def references_markdown() -> list[str]:
    """A markdown bullet list of the full citations, one line per paper, in catalogue order."""
    return [f"- **[{tag}]** {REFERENCES[tag]}" for tag in TAGS.values()]


_TAG_RE = re.compile(r"\[(" + "|".join(sorted([*REFERENCES, *WORKS], key=len, reverse=True)) + r")[\],;]")


def tags_in(text: str) -> list[str]:
    """The tags cited in ``text`` (``[GKOV15] Thm 2`` -> ``["GKOV15"]``), in order of first appearance."""
    out: list[str] = []
    for m in _TAG_RE.finditer(text or ""):
        if m.group(1) not in out:
            out.append(m.group(1))
    return out


def section_tags(key: str, item: str = "") -> list[str]:
    """The tags a report section cites: its paper first (by catalogue key, or else the first tag named
    in ``item``, as for the conjecture checks), then every other tag ``item`` names."""
    tags = tags_in(item)
    primary = TAGS.get(str(key))
    if primary:
        tags = [primary] + [t for t in tags if t != primary]
    return tags


def citation(tag: str) -> str:
    """``"Geng13"`` -> ``"[Geng13] Q. Geng, \"The Optimal Mechanism ...\", ..., 2013."`` (markdown)."""
    return f"[{tag}] {REFERENCES.get(tag) or WORKS[tag]}"
