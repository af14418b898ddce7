"""A user-supplied AM container spec with a local resource, submitted with the Corral hints."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import ApplicationFailedError, Cluster, CorralTags
from corral_yarn.cluster.apps import FileResource, YarnApp

pytestmark = pytest.mark.integration


def test_am_spec_with_a_localized_script_runs_on_its_rack(minicluster: dict[str, Any], tmp_path: Path) -> None:
    """The AM is a shell script from HDFS that exits 7: YARN's diagnostics then show that exit code,
    which only happens if the NodeManager localized the script (size and timestamp matched) and ran it."""
    cluster = Cluster.from_description(minicluster, progress=False)
    topo = cluster.topology()
    rack = topo.racks[0]
    run = random.Random().randrange(10**6)
    script = tmp_path / "am.sh"
    script.write_text("#!/bin/bash\necho corral-am-ran\nexit 7\n")
    cluster.hdfs.upload(f"/it/apps-{run}/am.sh", str(script))
    app = YarnApp(name="scripted-am", command="bash am.sh 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr", memory_mb=1024,
                  local_resources=[FileResource(key="am.sh", path=f"/it/apps-{run}/am.sh")], environment={"CORRAL_RUN": str(run)})
    submitted = cluster.rm.submit(app.submission(cluster.hdfs, minicluster["namenode_rpc"], CorralTags(f"apps-{run}", "scripted", (rack,)), priority=4))
    with pytest.raises(ApplicationFailedError, match="exitCode: 7") as failed:
        cluster.rm.wait(submitted.app_id, timeout_s=180)
    assert failed.value.state.startswith("FAILED")
    report = cluster.rm.application(submitted.app_id)
    assert report.priority == 4 and report.corral == CorralTags(f"apps-{run}", "scripted", (rack,))
    assert all(topo.rack_of_node(a.am.node_id) == rack for a in cluster.rm.attempts(submitted.app_id))
