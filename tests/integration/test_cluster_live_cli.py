"""The cluster commands end to end on the embedded cluster: topology, upload, submit --wait, status."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cli import main
from corral_yarn.io import load_cluster

pytestmark = pytest.mark.integration


def corral(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_topology_upload_submit_status(minicluster: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    desc = tmp_path / "cluster.json"
    desc.write_text(json.dumps(minicluster))
    where = ["--cluster", str(desc), "--no-progress"]
    topo = corral(capsys, "topology", *where, "--out", str(tmp_path / "spec.json"), "--oversubscription", "2")
    racks = sorted(topo["racks"])
    assert racks == [r["name"] for r in minicluster["racks"]] and topo["disagreements"] == []
    assert load_cluster(tmp_path / "spec.json").rack_names == racks

    run = random.Random().randrange(10**6)
    (tmp_path / "words.txt").write_text("a rose is a rose is a rose\n" * 3000)
    report = corral(capsys, "upload", *where, "--racks", racks[2], "--job", "cli-wc", "--block-size", "65536",
                    "--replication", "1", str(tmp_path / "words.txt"), f"/it/cli-{run}/in/words.txt")
    assert report["share_in_rack_set"] == 1.0 and report["racks_spanned"] == [racks[2]]

    job = {"name": "cli-wc", "jar": minicluster["examples_jar"], "program": "wordcount",
           "inputs": [f"/it/cli-{run}/in"], "output": f"/it/cli-{run}/out", "reduces": 1}
    (tmp_path / "wc.json").write_text(json.dumps(job))
    app = corral(capsys, "submit", *where, "--racks", racks[2], "--job", "cli-wc", "--plan-id", f"cli-{run}",
                 "--priority", "7", "--latency", "memcached", "--mapreduce", str(tmp_path / "wc.json"), "--wait", "--timeout", "600")
    assert app["state"] == "FINISHED" and app["final_status"] == "SUCCEEDED" and app["priority"] == 7
    status = corral(capsys, "status", *where, app["app_id"])
    assert status["app_id"] == app["app_id"] and f"corral-racks-0:{racks[2]}" in status["tags"]
    assert "corral-latency:memcached" in status["tags"]  # what the scheduler's LatencyOrder reads
