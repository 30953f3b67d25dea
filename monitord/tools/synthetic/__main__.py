"""Lets ``python -m monitord.tools.synthetic`` run the generator's command line."""

import sys

from monitord.tools.synthetic.cli import main

sys.exit(main())
