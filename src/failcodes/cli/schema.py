"""``failcodes schema NAME``: print the JSON Schema of a core model."""

from __future__ import annotations

import importlib
import json
from typing import Annotated, Any

import typer

from failcodes.cli.main import app
from failcodes.errors import ConfigError

#: Models whose schema ``failcodes schema`` prints (also committed under docs/schema/), as
#: (module, class): imported when printed (``schema trace --help`` loaded numpy and every
#: model through the disagreements module).
MODELS: dict[str, tuple[str, str]] = {
    "trace": ("failcodes.traces", "Trace"),
    "label": ("failcodes.labels", "Label"),
    "sentence": ("failcodes.sentences", "Sentence"),
    "annotation": ("failcodes.annotations", "Annotation"),
    "unit": ("failcodes.units", "Unit"),
    "disagreement": ("failcodes.disagreements", "Disagreement"),
}


def schema_of(name: str) -> dict[str, Any]:
    """Return the JSON Schema of the model called ``name`` (see :data:`MODELS`)."""
    try:
        module, model = MODELS[name]
    except KeyError:
        raise ConfigError(f"unknown model {name!r} (known: {', '.join(MODELS)})") from None
    schema: dict[str, Any] = getattr(importlib.import_module(module), model).model_json_schema()
    return schema


def render(name: str) -> str:
    """Return the schema as the exact text committed under docs/schema/NAME.schema.json."""
    return json.dumps(schema_of(name), indent=2, ensure_ascii=False) + "\n"


@app.command("schema")
def schema(name: Annotated[str, typer.Argument(help="Model: " + ", ".join(MODELS) + ".")]) -> None:
    """Print the JSON Schema of a failcodes model (see the NAME argument for the list)."""
    typer.echo(render(name), nl=False)
