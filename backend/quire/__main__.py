"""Run the Quire CLI with `python -m quire`."""

from quire.cli import main

main()
