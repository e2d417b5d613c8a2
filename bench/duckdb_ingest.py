"""An independent DuckDB script that turns trace JSONL into Parquet (issue 30).

What a user would write instead of ``failcodes ingest generic X.jsonl -o X.parquet``: it
imports nothing from failcodes. DuckDB reads the JSONL with the trace format's columns
declared (docs/trace-format.md: passages a list of structs) and writes them as Parquet (COPY,
snappy, as pyarrow's default). It checks nothing the tool checks: a key given twice, NaN,
an unknown field, a verdict that is no verdict, a claim twice, ids blank or padded all pass
(or fail with DuckDB's own message, naming no line). It prints the rows written.

    python bench/duckdb_ingest.py TRACES.jsonl OUT.parquet
"""

from __future__ import annotations

import argparse

import duckdb

PASSAGE = (
    "STRUCT(passage_id VARCHAR, rank BIGINT, text VARCHAR, source VARCHAR, title VARCHAR, "
    "score DOUBLE, gold BOOLEAN, gold_verdict VARCHAR)[]"
)
TEXTS = (
    "system",
    "question_id",
    "sentence_id",
    "claim_id",
    "claim",
    "sentence",
    "verdict",
    "raw_verdict",
    "reasoning",
    "verifier",
    "retriever",
)
COLUMNS = {**dict.fromkeys(TEXTS, "VARCHAR"), "passages": PASSAGE, "evidence_source": "VARCHAR"}


def main() -> None:
    """Convert TRACES.jsonl to OUT.parquet; print the row count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces")
    parser.add_argument("out")
    args = parser.parse_args()
    con = duckdb.connect()
    columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in COLUMNS.items()) + "}"
    con.execute(
        f"COPY (SELECT * FROM read_json(?, format = 'newline_delimited', columns = {columns}, "
        "maximum_object_size = 1073741824)) TO '"
        + args.out.replace("'", "''")
        + "' (FORMAT parquet, COMPRESSION snappy)",
        [args.traces],
    )
    print(con.execute("SELECT count(*) FROM read_parquet(?)", [args.out]).fetchone()[0])  # type: ignore[index]


if __name__ == "__main__":
    main()
