"""Bounded YAML reading: every YAML file failcodes reads goes through here.

PyYAML's safe loader still expands aliases: a 351-byte "billion laughs" file (nine levels of
lists that repeat the previous anchor nine times) composes to a small node graph that any
walk over it (our codebook reader, ``json.dumps``) expands to 9**9 strings. failcodes files
never need anchors or aliases, so :class:`BoundedLoader` refuses any alias with a line number
before a single node is expanded, and :func:`read_yaml_text` refuses files over
:data:`MAX_YAML_BYTES` before reading them.

Errors are PyYAML's own :class:`yaml.MarkedYAMLError` (so each caller's existing "invalid
YAML at line N" handling reports them) or :class:`~failcodes.errors.InputError` for the size.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from failcodes.errors import InputError
from failcodes.fileio import check_regular_file

#: Largest YAML file read (the bundled codebook is 25 KB; a review file of 500 proposals ~1 MB).
MAX_YAML_BYTES = 8 * 1024 * 1024
#: Deepest nesting of mappings and lists (a codebook is 6 deep; the JSON readers allow 64).
#: PyYAML composes recursively: 100,000 '[' (200 KB) was a RecursionError traceback whose
#: printing took over a minute.
MAX_YAML_DEPTH = 64


class BoundedLoader(yaml.SafeLoader):
    """A :class:`yaml.SafeLoader` that refuses aliases (``*name``) and deep nesting."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        """Compose the next node, refusing an alias event before it is resolved."""
        if self._depth >= MAX_YAML_DEPTH:
            raise ComposerError(
                None,
                None,
                f"nested deeper than {MAX_YAML_DEPTH} levels",
                self.peek_event().start_mark,  # type: ignore[no-untyped-call]
            )
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise ComposerError(
                None,
                None,
                f"aliases (*{getattr(event, 'anchor', '')}) are not allowed in failcodes files; "
                "write the value out",
                event.start_mark,
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer, or a marked error for one over Python's 4300-digit limit (a traceback)."""
        try:
            return int(super().construct_yaml_int(node))
        except ValueError:
            raise ConstructorError(None, None, too_long(node.value), node.start_mark) from None


BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)


def too_long(number: str) -> str:
    """What an integer over Python's digit limit (a ValueError from ``int``) is called."""
    digits = sum(c.isdigit() for c in number)
    return f"an integer of {digits} digits (at most {sys.get_int_max_str_digits()} are read)"


def compose(text: str) -> yaml.Node | None:
    """Compose ``text`` into a node tree with :class:`BoundedLoader` (None for an empty file)."""
    return yaml.compose(text, Loader=BoundedLoader)


def safe_load(text: str) -> Any:
    """Load ``text`` into plain Python data with :class:`BoundedLoader`."""
    return yaml.load(text, Loader=BoundedLoader)


def read_yaml_text(path: str | Path) -> str:
    """Read a YAML file's text after checking it is not larger than :data:`MAX_YAML_BYTES`.

    Raises :class:`InputError` for an oversized file; reading errors (missing, not UTF-8)
    propagate as ``OSError`` / ``UnicodeDecodeError`` for the caller's own message.
    """
    file = Path(path)
    if file.exists() and not file.is_file() and not file.is_dir():  # a FIFO, /dev/zero
        check_regular_file(file)
    size = file.stat().st_size
    if size > MAX_YAML_BYTES:
        raise InputError(
            f"YAML file is {size} bytes, over the {MAX_YAML_BYTES} byte limit", path=file
        )
    return file.read_text(encoding="utf-8")
