"""``python -m pvnviz``: the headless CLI (see ``pvnviz.cli``)."""

import sys

from pvnviz.cli import main

sys.exit(main())
