"""The ``pvnviz`` command and ``python -m pvnviz``: signal handlers first, then the CLI (``pvnviz.cli.main``).

The signal handlers come first (``pvnviz.cli.endings``, standard library only), before the CLI imports torch,
numpy, gymnasium, mujoco or ray: Ctrl-C and SIGTERM end in one line and 130 or 143 from the first moment.
"""

import signal
import sys

from pvnviz.cli import endings


def _main() -> int:
    where = " while starting; nothing was written."
    try:
        from pvnviz.cli.main import main  # the heavy imports

        where = "; --out holds a whole run, the old one or the new one."  # main() ends its own signals
        return main()
    except KeyboardInterrupt as err:
        endings.hold()
        signum = endings.received() or getattr(err, "signum", signal.SIGINT)
        print(f"error: {endings.NAMES[signum]}{where}", file=sys.stderr)
        return endings.STATUS[signum]
    except SystemExit as err:  # argparse: its one line is written (or --help's text, status 0)
        endings.hold()
        return 0 if err.code is None else err.code if isinstance(err.code, int) else 2


def main() -> None:
    """Run the CLI with ``sys.argv`` and end the process with its status (``endings.finish``); never returns."""
    endings.install()
    endings.finish(_main())
