"""``python -m pvnviz.bench ...``: see :mod:`pvnviz.bench`."""

import sys

from pvnviz.bench import main

sys.exit(main())
