"""``failcodes schema NAME``: print the JSON Schema of a core model."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from failcodes.annotations import Annotation
from failcodes.cli.main import app
from failcodes.disagreements import Disagreement
from failcodes.errors import ConfigError
from failcodes.labels import Label
from failcodes.sentences import Sentence
from failcodes.traces import Trace
from failcodes.units import Unit

#: Models whose schema ``failcodes schema`` prints (also committed under docs/schema/).
MODELS: dict[str, type[BaseModel]] = {
    "trace": Trace,
    "label": Label,
    "sentence": Sentence,
    "annotation": Annotation,
    "unit": Unit,
    "disagreement": Disagreement,
}


def schema_of(name: str) -> dict[str, Any]:
    """Return the JSON Schema of the model called ``name`` (see :data:`MODELS`)."""
    try:
        model = MODELS[name]
    except KeyError:
        raise ConfigError(f"unknown model {name!r} (known: {', '.join(MODELS)})") from None
    return model.model_json_schema()


def render(name: str) -> str:
    """Return the schema as the exact text committed under docs/schema/NAME.schema.json."""
    return json.dumps(schema_of(name), indent=2, ensure_ascii=False) + "\n"


@app.command("schema")
def schema(
    name: Annotated[str, typer.Argument(help="Model: " + ", ".join(MODELS) + ".")],
) -> None:
    """Print the JSON Schema of a failcodes model (see the NAME argument for the list)."""
    typer.echo(render(name), nl=False)
