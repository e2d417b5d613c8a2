"""``failcodes review plan|status``: draw the units humans review, and follow the review.

``plan`` draws a seeded (optionally stratified) uniform sample from a judged run's coded table
and writes ``RUN_DIR/review/plans/NAME.json``; ``failcodes labelstudio push --plan`` sends
exactly those units to Label Studio, and the pulled reviews (``RUN_DIR/review/*.jsonl``) are
matched back to the plan by ``status`` and by the report's corrected tables.

Thin: the options are :mod:`failcodes.commands.reviewplan`'s requests' fields.
"""

from __future__ import annotations

from failcodes.cli.main import command_group
from failcodes.cli.output_format import print_lines
from failcodes.cli.requests import add_command
from failcodes.commands.reviewplan import ReviewPlanRequest, ReviewStatusRequest

review_app = command_group("review")


add_command(review_app, ReviewPlanRequest, print_lines)
add_command(review_app, ReviewStatusRequest, print_lines)
