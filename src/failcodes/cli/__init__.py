"""The command-line face of failcodes: a thin root and one module per subcommand."""
