"""``python -m steadyhand``: the same entry point as the ``steadyhand`` script."""

from steadyhand.cli import main

raise SystemExit(main())
