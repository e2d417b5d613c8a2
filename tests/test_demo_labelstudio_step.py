"""The demo's Label Studio step: configs and task files for the judged units, no server."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from failcodes import codebook
from failcodes.demo import STEPS, DemoContext
from failcodes.units import UnitKind


def test_demo_writes_label_studio_configs_and_tasks(tmp_path: Path) -> None:
    ctx = DemoContext(out_dir=tmp_path)
    outputs = {step.name: step.run(ctx) for step in STEPS}
    out = outputs["labelstudio"]
    cb = codebook.bundled()
    folder = tmp_path / "labelstudio"
    for kind in UnitKind:
        root = ET.parse(folder / f"{kind.value}.config.xml").getroot()
        names = [c.get("name") for c in root.iter("Choices")]
        assert names == [d.id for d in cb.part(kind).dimensions]
    task_files = sorted(folder.rglob("*.tasks.json"))
    assert task_files
    assert set(out.files) >= set(task_files)
    judged = ctx.results["judge"]
    for path in task_files:
        name, kind = path.parent.name, UnitKind(path.name.split(".")[0])
        units, anns = judged[name][kind]
        tasks = json.loads(path.read_text())
        # one task per distinct judged unit, carrying its failcodes unit id
        assert [t["data"]["failcodes_unit_id"] for t in tasks] == list(
            dict.fromkeys(u.id for u in units)
        )
        scored = {a.unit_id: a for a in anns if a.status.value == "scored"}
        for t in tasks:
            uid = t["data"]["failcodes_unit_id"]
            if uid not in scored:
                assert "predictions" not in t
                continue
            (pred,) = t["predictions"]
            assert "heuristic baseline" in pred["model_version"]
            got = {r["from_name"]: r["value"]["choices"][0] for r in pred["result"]}
            part = cb.part(kind)
            assert got == {
                d.id: scored[uid].codes[d.id]
                for d in part.dimensions
                if scored[uid].codes.get(d.id) in d.code_ids()
            }
