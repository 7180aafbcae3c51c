"""``python -m piko``: the same as the ``pi`` command."""

from piko.app.cli import main

main()
