"""``python -m failcodes`` runs the CLI."""

from failcodes.cli.main import main

main()
