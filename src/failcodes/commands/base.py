"""What every use case shares: a typed request whose fields are a command's options.

A :class:`Request` is a frozen pydantic model: its fields are at once the CLI's flags (the
CLI builds its options from them, ``failcodes.cli.requests``), a study file's settings (a
study step holds a request) and the Python API's arguments; each default is defined once, on
the field. :meth:`Request.run` does the work and returns a typed result; printing stays in
the CLI. A field's flag is ``--`` and its name with dashes (``max_attempts`` ->
``--max-attempts``) unless :func:`option` names others.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar, get_args, get_origin

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError

_R = TypeVar("_R", bound=BaseModel)

#: Where a use case says something beside its result (the CLI prints it on stderr as it
#: comes, ``failcodes run`` writes it to the step's log).
Note = Callable[[str], None]


def option(
    default: Any = ...,
    *,
    help: str = "",
    flags: tuple[str, ...] | None = None,
    argument: bool = False,
    metavar: str | None = None,
    cli: bool = True,
    **constraints: Any,
) -> Any:
    """A request field with its CLI spelling (``flags``, or a positional ``argument``).

    ``cli=False``: a field the CLI sets from an option of its own (``--format``).
    """
    extra: dict[str, Any] = {}
    if not cli:
        extra["cli"] = False
    if flags is not None:
        extra["flags"] = list(flags)
    if argument:
        extra["argument"] = True
    if metavar is not None:
        extra["metavar"] = metavar
    return Field(default, description=help, json_schema_extra=extra or None, **constraints)


def top_k_option(**constraints: Any) -> Any:
    """``--top-k``: the passage cut of units built from traces or disagreements."""
    text = "Only passages ranked <= K (units built from traces or disagreements)."
    return option(None, help=text, ge=1, **constraints)


def field_flags(model: type[BaseModel], name: str) -> tuple[str, ...]:
    """The CLI flags of field ``name`` (``--max-attempts`` for ``max_attempts``)."""
    extra = model.model_fields[name].json_schema_extra
    flags = extra.get("flags") if isinstance(extra, dict) else None
    if isinstance(flags, list):
        return tuple(str(f) for f in flags)
    return ("--" + name.replace("_", "-"),)


def is_argument(model: type[BaseModel], name: str) -> bool:
    """True if field ``name`` is a positional argument on the command line."""
    extra = model.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("argument"))


def on_cli(model: type[BaseModel], name: str) -> bool:
    """False for a field the CLI sets from an option of its own."""
    extra = model.model_fields[name].json_schema_extra
    return not (isinstance(extra, dict) and extra.get("cli") is False)


def ignore_note(_: str) -> None:
    """A :data:`Note` that drops what it is told."""


def _word(value: Any) -> str:
    typed = getattr(value, "argv_word", None)  # a value whose str() is not what parses back
    if callable(typed):
        return str(typed())
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value)


#: The error type of a refusal that names its keyword argument itself (``traces: ...``):
#: a value only Python can give (a DataFrame, an open file), said without the CLI's flag.
PYTHON_VALUE = "python_value"


def _path_field(annotation: Any) -> tuple[bool, bool]:
    """Whether a field's type takes a path, and whether it takes a list (of paths or words)."""
    types = set(get_args(annotation)) if get_origin(annotation) is not list else {annotation}
    types = types or {annotation}
    lists = [get_args(t) for t in types if get_origin(t) is list]
    return Path in types or (Path,) in lists, bool({(Path,), (str,)} & set(lists))


def _home(value: Any) -> Any:
    """A path written from the home folder (``~/data/t.jsonl``) as the path it names.

    No shell expands ``~`` in Python or a study file: ``AgreeRequest(file='~/r.csv')`` said
    "~/r.csv: file not found".
    """
    text = os.fspath(value) if isinstance(value, str | os.PathLike) else None
    if isinstance(text, str) and (text == "~" or text.startswith("~/")):
        return Path(text).expanduser()
    return value


def _not_a_path(name: str, value: Any, listed: bool) -> str:
    """A Python value given for a path field, refused naming the keyword (``traces``)."""
    if hasattr(value, "to_parquet"):
        return (
            f"{name}: a DataFrame, not a path: write it to a file (.jsonl, .csv, ...), give "
            "its path"
        )
    kind = type(value).__name__
    path = getattr(value, "name", None)
    if isinstance(path, str | os.PathLike) and str(path):  # an open file: its path is known
        given = f"[{str(path)!r}]" if listed else repr(str(path))
        return f"{name}: an open file ({kind} of {str(path)!r}), not a path: give {name}={given}"
    return f"{name}: a file object ({kind}), not a path: write it to a file, give its path"


class Options(FrozenModel):
    """A command's options (a request, or the part of one a study file's table holds)."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        """``bootstrap=True`` from Python is refused, as a study file; a DataFrame, a masked token.

        pydantic read it as 1 (1 resample, every interval "only 1 bootstrap resamples";
        ``seed=True`` seed 1, ``budget=True`` $1).
        """
        items = value if isinstance(value, list | tuple) else [value]
        if any(hasattr(v, "to_parquet") for v in items):  # a DataFrame (a path field: above)
            raise ValueError(
                "a DataFrame, not a path: write it to a file (.jsonl, .csv, ...), give its path"
            )
        if value == "**********":  # a SecretStr's model_dump_json: "**********" sent as the key
            raise ValueError(
                "masked ('**********', as model_dump_json writes it): give the token itself, "
                "or leave it out and set $LABEL_STUDIO_API_KEY"
            )
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            types = set(get_args(annotation)) or {annotation}
            if bool not in types and types & {int, float}:
                raise ValueError(
                    f"expected a {'whole ' if int in types else ''}number, not {value}"
                )
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _paths_as_given(cls, value: Any, info: ValidationInfo) -> Any:
        """A path field given an open file, a BytesIO or a DataFrame is refused by its keyword.

        ``AgreeRequest(file=open(...))`` said pydantic's "FILE: Input is not a valid path for
        <class 'pathlib.Path'>"; ``MetricsRequest(traces=open(...))`` read each line of the
        file as a path. A list of paths or words given one (``traces='t.jsonl'``,
        ``stat='fleiss'``) is that one alone: it said "--traces: Input should be a valid list".
        A path from the home folder (``~/t.jsonl``) is expanded (:func:`_home`).
        """
        if info.field_name is None:
            return value
        takes_path, listed = _path_field(cls.model_fields[info.field_name].annotation)
        if not takes_path and not listed:
            return value
        items = value if isinstance(value, list | tuple) else [value]
        odd = next((v for v in items if hasattr(v, "read") or hasattr(v, "to_parquet")), None)
        if odd is not None and takes_path:
            said = _not_a_path(info.field_name, odd, listed)
            raise PydanticCustomError(PYTHON_VALUE, "{said}", {"said": said})
        if listed and isinstance(value, str | os.PathLike):
            value = [value]
        if isinstance(value, list | tuple):
            return type(value)(map(_home, value)) if takes_path else value
        return _home(value) if takes_path else value


class Request(Options):
    """One use case's inputs; ``run()`` (in the subclass) does the work."""

    #: The command's words on the command line (``("metrics",)``, ``("judge", ...)``).
    command: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **data: Any) -> None:
        """A bad value is the CLI's one line (a ConfigError naming the flag), in Python too.

        ``failcodes.MetricsRequest(bootstrap=-1)`` raised pydantic's ValidationError over four
        lines, not the FailcodesError a notebook catches for every other bad input; so did a
        request's own check (``--traces`` given twice, ``cache prune`` with no filter), which
        a wrap validator of this class did not wrap.
        """
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(validation_message(type(self), exc)) from None

    @model_validator(mode="after")
    def _no_file_twice(self) -> Self:
        """A list of files (``--traces``, ``ingest PATH...``) names each file once.

        Each file is read before the repeat shows as a duplicate claim: ``--traces t.jsonl``
        given 3,000 times read for minutes before its one-line error.
        """
        for name in type(self).model_fields:
            value = getattr(self, name)
            if not isinstance(value, list) or not all(isinstance(v, Path) for v in value):
                continue
            seen: set[str] = set()
            for path in value:
                key = os.path.realpath(path)
                if key in seen:
                    cls = type(self)
                    flag = name.upper() if is_argument(cls, name) else field_flags(cls, name)[0]
                    raise ValueError(f"{flag}: {path} is given twice; name each file once")
                seen.add(key)
        return self

    def words(self) -> tuple[str, ...]:
        """The command's words (a subclass may derive them from a field, e.g. the judge kind)."""
        return self.command

    def fixed_fields(self) -> frozenset[str]:
        """Fields the command's words already say (not flags)."""
        return frozenset()

    def argv(self) -> list[str]:
        """The request as ``failcodes`` arguments: options that differ from their default.

        For display (``failcodes run --plan``, a step's log): typing the line runs the same
        request.
        """
        cls = type(self)
        args: list[str] = []
        options: list[str] = []
        for name, info in cls.model_fields.items():
            if name in self.fixed_fields() or not on_cli(cls, name):
                continue
            value = getattr(self, name)
            if not info.is_required() and value == info.get_default(call_default_factory=True):
                continue
            if is_argument(cls, name):
                args += [_word(v) for v in value] if isinstance(value, list) else [_word(value)]
                continue
            flag = field_flags(cls, name)[0]
            if isinstance(value, bool):  # "--leaves/--no-leaves": the one that says the value
                on, _, off = flag.partition("/")
                options += [on] if value else [off] if off else []
            elif isinstance(value, list):
                for item in value:
                    options += [flag, _word(item)]
            elif value is not None:
                options += [flag, _word(value)]
        return [*self.words(), *args, *options]

    def command_line(self) -> str:
        """The shell command (``failcodes ...``), quoted for a POSIX shell."""
        return shlex.join(["failcodes", *self.argv()])

    def fingerprint_text(self) -> str:
        """What identifies the request (its class and every field): a study's fingerprint."""
        return f"{type(self).__name__}:{self.model_dump_json()}"


def build(model: type[_R], values: dict[str, Any]) -> _R:
    """``model`` from ``values``; a bad value is one :class:`ConfigError` naming its flag."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(validation_message(model, exc)) from None


def validation_message(model: type[BaseModel], exc: ValidationError) -> str:
    """The first problem of ``exc`` as ``--flag: what is wrong``.

    An unknown field comes first, named with the fields there are: ``MetricsRequest(trace=...)``
    (``traces`` misspelt, a required field) said ``--traces: Field required`` alone, which
    named neither the field given nor why the one asked for was missing.
    """
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = err["loc"]
    name = str(loc[0]) if loc else ""
    where = ""
    if name in model.model_fields:
        where = name.upper() if is_argument(model, name) else max(field_flags(model, name), key=len)
    message = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == PYTHON_VALUE:  # names its keyword itself (a value only Python gives)
        return message
    if err["type"] == "extra_forbidden":  # a misspelt argument (Python): name it
        return unknown_field(model, name)
    if not where or message.startswith(where):  # the message names its flag already
        return message
    return f"{where}: {message}"


def unknown_field(model: type[BaseModel], name: str) -> str:
    """One line: ``name`` is no field of ``model``; the closest field, and every field."""
    import difflib

    fields = list(model.model_fields)
    close = difflib.get_close_matches(name, fields, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{name}: unknown field of {model.__name__}{hint}; its fields: {', '.join(fields)}"


def int_list(text: str, option: str, *, high: int, most: int) -> tuple[int, ...]:
    """A comma-separated option value of whole numbers in [1, ``high``], at most ``most`` of them.

    Each value is work (``rtv --sensitivity-k`` runs retrieval and the judge once per value):
    20,000 values ran past two minutes before anything was said. A value given twice is kept
    once.
    """
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts:
        raise ConfigError(f"{option} {text!r}: give comma-separated whole numbers, e.g. 1,3,5")
    if len(parts) > most:
        raise ConfigError(f"{option}: {len(parts)} values; at most {most} (e.g. 1,3,5)")
    values: list[int] = []
    for part in parts:
        try:
            value = int(part)
        except ValueError:
            raise ConfigError(
                f"{option}: {part!r} is not a whole number (comma-separated, e.g. 1,3,5)"
            ) from None
        if not 1 <= value <= high:
            raise ConfigError(f"{option}: {value} is out of range; each value is 1 to {high}")
        values.append(value)
    return tuple(dict.fromkeys(values))


def _toml_value(text: str) -> str:
    try:
        float(text)
    except ValueError:
        return json.dumps(text)
    return text


def args_as_fields(model: type[BaseModel], request: type[BaseModel], args: list[str]) -> str:
    """An old study file's ``args`` list written as the fields to put in its table instead.

    ``["--concurrency", "4", "--batch"]`` -> ``concurrency = 4, batch = true``. ``model`` is
    the table's options; an option only ``request`` has (an output path, a dry run) is one the
    study sets itself, any other is no setting at all.
    """
    by_flag = {flag: name for name in model.model_fields for flag in field_flags(model, name)}
    own = {flag for name in request.model_fields for flag in field_flags(request, name)}
    values: dict[str, list[str]] = {}
    refused: list[str] = []
    tokens = iter(args)
    for token in tokens:
        if not token.startswith("-"):
            continue  # the value of an option refused just before
        flag, eq, value = token.partition("=")
        name = by_flag.get(flag)
        if name is None:
            why = "the study sets it itself (paths, dry run)" if flag in own else "no such setting"
            refused.append(f"{flag!r}: {why}")
            continue
        if model.model_fields[name].annotation is bool:
            values.setdefault(name, []).append("true")
            continue
        values.setdefault(name, []).append(value if eq else next(tokens, ""))
    parts = []
    for name, vals in values.items():
        listed = "list" in str(model.model_fields[name].annotation)
        shown = [v if v == "true" else _toml_value(v) for v in vals]
        parts.append(f"{name} = [{', '.join(shown)}]" if listed else f"{name} = {shown[-1]}")
    said = ", ".join(parts) if parts else "nothing"
    return said + (f" ({'; '.join(refused)})" if refused else "")
