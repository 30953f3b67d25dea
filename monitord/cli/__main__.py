"""``python -m monitord.cli``: the ``monitord`` command (tests run the CLI this way)."""

from monitord.cli import main

raise SystemExit(main())
