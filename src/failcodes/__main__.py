"""``python -m failcodes`` runs the CLI."""

from failcodes.cli.start import main

main()
