"""Sphinx configuration of optmech's documentation site.

Build (from the repository root)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The build reads nothing from the network: there is deliberately no ``sphinx.ext.intersphinx``
(it would download the numpy/scipy/python inventories), so references to numpy or scipy types in
docstrings stay plain text, and ``nitpicky`` is off so that such unresolved references are not
warnings.  Everything else that is wrong (a broken reference between our own pages, a docstring
numpydoc cannot parse, a gallery example that raises) fails the ``-W`` build.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # gallery examples and plot code run headless

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))  # the local extension cli_reference
sys.path.insert(0, str(HERE.parent))  # optmech itself, when it is not installed

import optmech

# -- Project -----------------------------------------------------------------------------------

project = "optmech"
author = "the optmech authors"
copyright = "the optmech authors"
release = optmech.__version__
version = ".".join(release.split(".")[:2])

# -- Extensions --------------------------------------------------------------------------------

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
    "cli_reference",  # docs/_ext: the ```{cli-reference}``` directive of cli.md
    "plain_bars",  # docs/_ext: docstrings' plain-text |x| rendered as written
    # No "sphinx.ext.intersphinx": the build must not download anything.
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "examples/README.txt",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "sg_execution_times.rst",
]
templates_path = ["api/_templates"]  # autosummary templates

# Unresolved references to numpy / scipy / stdlib types are expected without intersphinx.
nitpicky = False

# -- MyST --------------------------------------------------------------------------------------

myst_heading_anchors = 3  # "page.md#some-heading" links, as in the README these pages came from
# The pages use pipe tables (MyST core) and no dollar math; "colon_fence" for ::: directives,
# "deflist" for definition lists, "attrs_inline" is not needed.
myst_enable_extensions = ["colon_fence", "deflist"]

# -- autodoc / autosummary / numpydoc ----------------------------------------------------------

autosummary_generate = True  # stubs under api/generated/ (git-ignored), written at build time
autosummary_generate_overwrite = True
autosummary_imported_members = False
autodoc_default_options = {"members": False}
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autoclass_content = "class"  # "both" would append inherited stdlib __init__ docstrings (Google style)

numpydoc_show_class_members = False  # members are listed by the autosummary class template
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False  # types stay text: no intersphinx to resolve numpy's names
numpydoc_validation_checks: set[str] = set()  # style is reviewed in code review, not by the build

# -- sphinx-gallery ----------------------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "image_scrapers": ("matplotlib",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
}

# -- HTML --------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"optmech {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "use_edit_page_button": False,
    "header_links_before_dropdown": 6,
}
html_show_sourcelink = False

# -- copybutton --------------------------------------------------------------------------------

# Copy commands and Python without their prompts ($, >>>, ...), and without the output lines.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
