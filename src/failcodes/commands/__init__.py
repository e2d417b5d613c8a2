"""The use cases of failcodes: one typed request per command, below the CLI and the study.

Each module holds one command's request (a frozen pydantic model: the CLI's flags, a study
file's settings and the Python API's arguments, defaults defined once) and its ``run()``,
which returns a typed result; printing stays in the CLI (``failcodes.cli``), ordering and
skipping in the study runner (``failcodes.study``). See docs/architecture.md.
"""
