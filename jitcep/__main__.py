"""``python -m jitcep``: the command line (:mod:`jitcep.cli`)."""

import sys

from .cli import main

sys.exit(main())
