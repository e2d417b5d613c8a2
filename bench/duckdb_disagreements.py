"""An independent DuckDB script for sentence-level disagreements (issue 30).

What a user would write next to failcodes: it imports nothing from failcodes. It reads the
traces (JSONL or Parquet) and the sentence labels with DuckDB, flags each system's sentences
per mapping (any claim with an error verdict), keeps those whose flag differs from the
clinician's label (FN: an error the pipeline missed; FP: a false alarm), and writes one JSON
line per disagreement with its sentence, the label's rationale and every claim of the
sentence with its passages (``COPY ... (FORMAT json)``), as the tool's output carries them.
It prints the count per (system, mapping, kind), the figures the bench compares.

Assumes what bench data has: canonical verdicts, shared sentence labels (question given),
every system scored on every labelled sentence (a labelled sentence without claims is a
missed error when labelled with one).

    python bench/duckdb_disagreements.py TRACES LABELS OUT.jsonl -m refuted -m non_supported
"""

from __future__ import annotations

import argparse
import json
import os

import duckdb

MAPPINGS = {
    "refuted": ("refuted",),
    "refuted+no_evidence": ("refuted", "no_evidence"),
    "non_supported": ("refuted", "no_evidence", "ambiguous", "out_of_scope"),
}


def reader(path: str) -> str:
    """The DuckDB table function of a file."""
    if path.endswith(".parquet"):
        return f"read_parquet('{path}')"
    return f"read_json('{path}', format='newline_delimited')"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces")
    parser.add_argument("labels")
    parser.add_argument("out")
    parser.add_argument("-m", "--mapping", action="append", default=[])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    con.execute(f"CREATE TEMP VIEW traces AS SELECT * FROM {reader(args.traces)}")
    con.execute(f"CREATE TEMP VIEW labels AS SELECT * FROM {reader(args.labels)}")
    maps = ", ".join(
        f"('{name}', {list(MAPPINGS[name])!r})" for name in (args.mapping or ["refuted"])
    )
    con.execute("CREATE TEMP TABLE maps (mapping VARCHAR, errors VARCHAR[])")
    con.execute(f"INSERT INTO maps VALUES {maps}")
    con.execute(
        """
        CREATE TEMP TABLE disagreements AS
        WITH sentences AS (
            SELECT t.system, m.mapping, t.sentence_id,
                bool_or(list_contains(m.errors, t.verdict)) AS flagged
            FROM traces t CROSS JOIN maps m GROUP BY ALL),
        systems AS (SELECT DISTINCT system FROM traces)
        SELECT s.system, m.mapping, l.question_id, l.sentence_id, l.has_error,
            l.rationale, l.annotator,
            CASE WHEN l.has_error THEN 'FN' ELSE 'FP' END AS kind
        FROM systems s CROSS JOIN maps m CROSS JOIN labels l
        LEFT JOIN sentences t
            ON t.system = s.system AND t.mapping = m.mapping AND t.sentence_id = l.sentence_id
        WHERE l.has_error <> coalesce(t.flagged, false)
        """
    )
    con.execute(
        f"""
        COPY (
            SELECT d.kind, d.system, d.mapping, d.question_id, d.sentence_id,
                any_value(t.sentence) AS sentence, d.has_error AS label_has_error,
                d.rationale AS label_rationale, d.annotator AS label_annotator,
                list({{'claim_id': t.claim_id, 'claim': t.claim, 'verdict': t.verdict,
                    'passages': t.passages}} ORDER BY t.claim_id) AS claims
            FROM disagreements d
            LEFT JOIN traces t ON t.system = d.system AND t.sentence_id = d.sentence_id
            GROUP BY ALL ORDER BY d.system, d.mapping, d.sentence_id
        ) TO '{args.out}' (FORMAT json)
        """
    )
    counts = con.execute(
        "SELECT system, mapping, kind, count(*) FROM disagreements GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    print(json.dumps([{"system": s, "mapping": m, "kind": k, "n": n} for s, m, k, n in counts]))


if __name__ == "__main__":
    main()
