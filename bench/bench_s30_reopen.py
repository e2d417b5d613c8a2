"""Session 30: the report's list of stale reviews to re-open read the disagreements file once
per review file, unit kind and data set, the whole file validated each time
(``disagreement_traces(read_disagreements(path))``); now each data set once, by the fast reader
(``read_disagreement_traces``). Paired in one run on the same study and review files.

    PYTHONPATH=src python bench/bench_s30_reopen.py WORKDIR [--files 2] [--repeats 3]

Builds the study of tests/test_review_versions.py (SciFact dev, the offline judge, a codebook
bump to v2 with reviews made under v1, ``--files`` review files each with retrieval and
verification reviews; the bump leaves the retrieval ones with scope different_context stale),
then times the old rule (inlined here) and ``report.rundir._reopen`` on it and checks both
give the same units. Prints the figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def old_reopen(layout, versions):  # type: ignore[no-untyped-def]
    """The rule before session 30 (report/rundir.py at cfac736), units only."""
    from failcodes.disagreementio import read_disagreements
    from failcodes.units import UnitKind, build_units, disagreement_traces

    out = []
    for name in versions.files:
        for kind in UnitKind:
            wanted = versions.stale_units(name, kind)
            if not wanted:
                continue
            found = {}
            for ds in layout.datasets():
                path = layout.disagreements(ds)
                if not path.is_file():
                    continue
                traces = disagreement_traces(read_disagreements(path))
                found.update({u.id: u for u in build_units(traces, kind) if u.id in wanted})
            out.append((name, kind, [found[u].id for u in wanted if u in found]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--files", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from tests.cli_helpers import exit_code
    from tests.test_review_versions import STUDY, V1, V2

    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import UnitKind, dump
    from failcodes.report.rundir import _reopen, _review_versions, study_codebook
    from failcodes.study import StudyLayout

    root = args.workdir / "study"
    layout = StudyLayout.of(root)
    if not (root / "report").exists():
        root.mkdir(parents=True, exist_ok=True)
        (root / f"{V1.name}.v1.yaml").write_text(dump(V1), encoding="utf-8")
        study = STUDY.format(codebook=f"{V1.name}.v1.yaml", base_url="http://127.0.0.1:9/v1")
        study = study.replace('judge = "openai:fake-model"\nbase_url = "http://127.0.0.1:9/v1"', "")
        layout.study_file.write_text(study, encoding="utf-8")
        assert exit_code("run", str(root)) == 0
        (root / f"{V2.name}.v2.yaml").write_text(dump(V2), encoding="utf-8")
        text = layout.study_file.read_text(encoding="utf-8").replace(".v1.yaml", ".v2.yaml")
        layout.study_file.write_text(text, encoding="utf-8")
        assert exit_code("run", str(root)) == 0  # the judge re-codes under v2
    layout.review_dir.mkdir(exist_ok=True)
    for f in range(args.files):
        rows = []
        for kind, part in ((UnitKind.RETRIEVAL, "retrieval"), (UnitKind.VERIFICATION, "reasoning")):
            judged = layout.judge_run("scifact-dev", part) / "annotations.jsonl"  # v2 now
            if not judged.is_file():
                continue
            for line in judged.read_text().splitlines()[:20]:
                a = Annotation.model_validate_json(line)
                if kind is UnitKind.RETRIEVAL and "scope" in a.codes:  # v2 split it: stale
                    a = a.model_copy(update={"codes": {**a.codes, "scope": "different_context"}})
                rows.append(
                    a.model_copy(
                        update={
                            "coder": f"r{f}",
                            "coder_kind": CoderKind.HUMAN,
                            "codebook": V1.ref(),
                        }
                    )
                )
        (layout.review_dir / f"r{f}.jsonl").write_text(
            "".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8"
        )
    cb = study_codebook(root)
    versions = _review_versions(layout, sorted(layout.review_dir.glob("*.jsonl")), cb)
    assert versions is not None
    size = sum(
        layout.disagreements(d).stat().st_size
        for d in layout.datasets()
        if layout.disagreements(d).is_file()
    )
    print(f"stale reviews: {versions.stale} in {args.files} file(s); disagreements {size:,} bytes")
    old_t, new_t = [], []
    for _ in range(args.repeats):
        t = time.process_time()
        old = old_reopen(layout, versions)
        old_t.append(time.process_time() - t)
        t = time.process_time()
        new = _reopen(layout, versions)
        new_t.append(time.process_time() - t)
    assert old == [(r.review, r.kind, [u.id for u in r.units]) for r in new], "units differ"
    print(
        f"old rule: {min(old_t):.3f} CPU-s (min of {args.repeats}); new: {min(new_t):.3f}; "
        f"ratio old/new {min(old_t) / min(new_t):.2f}x; same units: yes"
    )


if __name__ == "__main__":
    main()
