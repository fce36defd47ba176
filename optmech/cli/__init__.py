"""Command-line interface: ``optmech solve|table|compare|sample|mechanism|audit|solvers|run|store|reproduce``.

One module per command group, all sharing :mod:`optmech.cli.args` (exit statuses, number and
list parsing, the help layout, the flags several commands take):

* :mod:`optmech.cli.main`: the parser, the dispatch and the exit-status mapping (``main``);
* :mod:`optmech.cli.solve`: ``solve``, ``table``, ``compare`` (and the text report of a Result);
* :mod:`optmech.cli.mechanisms`: ``sample``, ``mechanism``, ``audit``, ``solvers``;
* :mod:`optmech.cli.sweeps`: ``run``, ``store``, ``reproduce``.

The layering is one-way: ``main`` imports the command modules, they import ``args``; none of them
imports ``main``, and no library module imports the CLI.
"""

from optmech.cli.args import (
    DEFAULTS,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_SOLVER,
    EXIT_UNCERTIFIED,
    list_items,
    parse_number,
    parse_number_list,
    parse_time_limit,
    parse_workers,
)
from optmech.cli.mechanisms import (
    MAX_SAMPLES,
    SAMPLE_BLOCK,
    cmd_audit,
    cmd_mechanism,
    cmd_sample,
    describe,
    load_mechanism_file,
    write_samples,
)
from optmech.cli.solve import format_result
from optmech.cli.main import build_parser, main  # last: binds ``main`` to the function, not the module

__all__ = [
    "DEFAULTS", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_OK", "EXIT_SOLVER", "EXIT_UNCERTIFIED", "MAX_SAMPLES",
    "SAMPLE_BLOCK", "build_parser", "cmd_audit", "cmd_mechanism", "cmd_sample", "describe", "format_result",
    "list_items", "load_mechanism_file", "main", "parse_number", "parse_number_list", "parse_time_limit",
    "parse_workers", "write_samples",
]
