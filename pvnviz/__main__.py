"""``python -m pvnviz``: the headless CLI, as the ``pvnviz`` command (``pvnviz.cli.entry``, then
``pvnviz.cli.main``)."""

from pvnviz.cli.entry import main

main()
