"""``python -m assay``: the command line."""

from .cli import main

main()
