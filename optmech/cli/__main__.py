"""``python -m optmech.cli``: the command line."""

from optmech.cli.main import main

raise SystemExit(main())
