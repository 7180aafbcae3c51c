"""``python -m piko``: the same as the ``pi`` command."""

from piko.cli import main

main()
