"""CLI options built from a request model's fields (``failcodes.commands``).

A request field is a flag (``--max-attempts`` for ``max_attempts``, or the flags the field
names), with the field's description as help, its default and its bounds; a field the
command's words fix (the judge kind) is no flag. Adding a field to a request adds the flag:
nothing here names one.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Union

import annotated_types
import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from failcodes.commands.base import Request, build, field_flags, is_argument, on_cli

_PLAIN = (str, int, float, bool, Path)


def _cli_type(annotation: Any) -> Any:
    """The type typer parses for a field (a model-typed value is given as its string)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _cli_type(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _cli_type(inner[0]) | None if len(inner) == 1 else str | None
    if origin is list:
        return list[_cli_type(typing.get_args(annotation)[0])]  # type: ignore[misc]
    if isinstance(annotation, type) and (issubclass(annotation, Enum) or annotation in _PLAIN):
        return annotation
    return str


def _cli_default(value: Any) -> Any:
    if isinstance(value, list):
        return [_cli_default(v) for v in value]
    if isinstance(value, BaseModel):
        return str(value)
    return value


def _bounds(info: FieldInfo) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for meta in info.metadata:
        if isinstance(meta, annotated_types.Ge):
            out["min"] = meta.ge
        elif isinstance(meta, annotated_types.Le):
            out["max"] = meta.le
    return out


def _parameter(model: type[BaseModel], name: str, info: FieldInfo) -> inspect.Parameter:
    kind = _cli_type(info.annotation)
    required = info.is_required()
    # help is text: a "[judge]" in it is no rich markup
    help_ = (info.description or "").replace("[", "\\[") or None
    if is_argument(model, name):
        marker: Any = typer.Argument(help=help_, show_default=False)
    else:
        marker = typer.Option(
            *field_flags(model, name), help=help_, show_default=not required, **_bounds(info)
        )
    default = (
        inspect.Parameter.empty
        if required
        else _cli_default(info.get_default(call_default_factory=True))
    )
    if kind is bool and not required:
        marker = typer.Option(*field_flags(model, name), help=help_)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, marker]
    )


def request_command(
    model: type[BaseModel],
    handle: Callable[..., None],
    *,
    fixed: dict[str, Any] | None = None,
    extra: list[inspect.Parameter] | None = None,
    doc: str | None = None,
) -> Callable[..., None]:
    """A typer command whose options are ``model``'s fields (``fixed`` ones excepted).

    ``handle(request, **extra)`` gets the validated request and the CLI-only options
    (``extra``: the output format, ...). A bad value is one line naming its flag.
    """
    fixed = fixed or {}
    extra = extra or []
    params = [
        _parameter(model, name, info)
        for name, info in model.model_fields.items()
        if name not in fixed and on_cli(model, name)
    ]
    # positional arguments first, in field order; then the options
    params.sort(key=lambda p: not is_argument(model, p.name))
    params += extra
    names = {p.name for p in extra}

    def command(**kwargs: Any) -> None:
        own = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
        handle(build(model, {**fixed, **kwargs}), **own)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = doc or model.__doc__
    return command


def add_command(
    group: typer.Typer, model: type[Request], handle: Callable[..., None], **options: Any
) -> None:
    """Add :func:`request_command` of ``model`` to ``group``, named by its last command word."""
    command: Any = request_command(model, handle, **options)
    group.command(model.command[-1])(command)
