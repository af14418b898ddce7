"""The Airflow pipeline demo end to end (issue 7): wall-clock time of each step and the locality figures.

    .venv/bin/python benchmarks/bench_pipeline.py                  # starts and stops its own embedded cluster
    CORRAL_CLUSTER_JSON=... .venv/bin/python benchmarks/bench_pipeline.py   # reuses a running cluster

Prints one JSON line: ``step_ends_s`` (seconds since the start at the end of each step), ``total_s``,
jobs planned / succeeded, the container, block and replica shares inside the rack sets, and per job
its racks, priority and counts. State goes to a temporary directory.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from corral_yarn.pipeline.demo import run_demo


def main() -> int:
    existing = os.environ.get("CORRAL_CLUSTER_JSON")
    with tempfile.TemporaryDirectory(prefix="corral-bench-pipeline-") as home:
        result = run_demo(Path(home), Path(existing) if existing else None)
    s = result.summary
    print(json.dumps({
        "cluster": "reused" if existing else "started and stopped",
        "step_ends_s": result.step_ends,
        "total_s": max(result.step_ends.values()),
        "planned": s["planned"], "succeeded": s["succeeded"],
        "container_share": s["container_share"], "block_share": s["block_share"], "replica_share": s["replica_share"],
        "jobs": [{"job": j["job"], "racks": j["racks"], "priority": j["priority"], "elapsed_s": j["elapsed_s"],
                  "containers": f"{j['locality']['containers_in_racks']}/{j['locality']['containers']}",
                  "blocks": f"{j['locality']['blocks_with_replica_in_racks']}/{j['locality']['blocks']}"} for j in s["jobs"]],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
