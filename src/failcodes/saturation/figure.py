"""The accumulation curve as a figure (matplotlib imported here only, Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from failcodes.fileio import atomic_path
from failcodes.saturation.models import AccumulationPoint

# Okabe & Ito (2008) colour-blind-safe palette.
BLUE = "#0072B2"
ORANGE = "#E69F00"


def accumulation_figure(
    points: Sequence[AccumulationPoint], path: Path, *, stop_k: int | None = None
) -> Path:
    """Draw new patterns per round (bars) and cumulative patterns (line) to ``path``.

    The format follows the suffix (``.png`` or ``.pdf``); the file is written atomically.
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    path = Path(path)
    fig = Figure(figsize=(5.0, 3.2), layout="constrained")
    ax = fig.add_subplot()
    rounds = [p.round for p in points]
    ax.bar(
        rounds,
        [p.new_patterns for p in points],
        color=ORANGE,
        label="new patterns",
        hatch="//",
        edgecolor="black",
        linewidth=0.5,
    )
    ax.plot(rounds, [p.cumulative for p in points], color=BLUE, marker="o", label="cumulative")
    ax.set_xlabel("round")
    ax.set_ylabel("patterns accepted")
    ax.set_xticks(rounds)
    title = "Codebook accumulation curve"
    if stop_k is not None:
        title += f"\nstop rule: {stop_k} rounds in a row with no new pattern"
    ax.set_title(title, fontsize=9)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(frameon=False, loc="center right")
    ax.grid(axis="y", alpha=0.3)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=150)
    return path
