"""``failcodes demo``: run the offline demo on bundled data and print where outputs are."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from failcodes.cli.main import app
from failcodes.cli.options import make_console

if TYPE_CHECKING:
    import pandas as pd

#: failcodes.demo.DEFAULT_OUT, for --out's default: the demo package imports every step
#: (pandas, the judge, the report), which `demo --help` has no use for (equal: tests/
#: test_s26_t26start.py)
DEFAULT_OUT = Path("reports") / "demo"


def frame_table(title: str, frame: pd.DataFrame) -> Table:
    """Render a DataFrame as a rich table (missing values as '–')."""
    import pandas as pd

    table = Table(title=title, title_justify="left", min_width=min(len(title) + 4, 160))
    for col in frame.columns:
        numeric = pd.api.types.is_numeric_dtype(frame[col])
        table.add_column(str(col), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*("–" if pd.isna(v) else str(v) for v in row))
    return table


@app.command("demo")
def demo(
    out: Annotated[
        Path, typer.Option("-o", "--out", help="Output folder for the demo's files.")
    ] = DEFAULT_OUT,
) -> None:
    """Run every demo step offline on the bundled data (no API key, no network)."""
    from failcodes.demo import STEPS, run_demo

    console = make_console()
    files: list[Path] = []
    for i, (step, output) in enumerate(run_demo(out), start=1):
        console.rule(
            Text.assemble((f"{i}/{len(STEPS)} {step.name}", "bold"), f": {step.description}")
        )
        for line in output.lines:
            console.print(line, highlight=False)
        for title, frame in output.tables:
            console.print(frame_table(title, frame))
        files += output.files
    console.rule(Text("outputs", style="bold"))
    for path in files:
        console.print(str(path), highlight=False)
    console.print(f"demo finished; everything is under {out}/", highlight=False)
    report = out / "report" / "index.html"
    if report.exists():
        console.print(f"report: {report}", highlight=False)
