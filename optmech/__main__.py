"""``python -m optmech``: the command line."""

from optmech.cli import main

raise SystemExit(main())
