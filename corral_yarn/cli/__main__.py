"""``python -m corral_yarn.cli``: the ``corral`` command without the console script."""

import sys

from corral_yarn.cli import main

sys.exit(main())
