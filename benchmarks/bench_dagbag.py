"""How long Airflow takes to parse the project's DAG files, next to a minimal DAG file; prints one JSON line.

Each file is parsed by a fresh ``DagBag`` in a fresh interpreter (as the DAG processor does after
start-up, with Airflow itself already imported), best of a few runs. The reference is a one-task
TaskFlow DAG in a temporary folder, so the figures say what our files add to Airflow's own cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DAGS = Path(__file__).resolve().parents[1] / "corral_yarn" / "airflow" / "dags"
REPEAT = 3
MINIMAL = '''
import pendulum
from airflow.sdk import dag, task

@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False)
def minimal():
    @task
    def one() -> int:
        return 1
    one()

minimal()
'''
PARSE = """
import json, sys, time
from airflow.dag_processing.dagbag import DagBag
start = time.perf_counter()
bag = DagBag(sys.argv[1])
print(json.dumps({"s": time.perf_counter() - start, "dags": len(bag.dag_ids), "errors": len(bag.import_errors)}))
"""


def parse_s(folder: str, env: dict[str, str]) -> dict[str, float]:
    runs = [json.loads(subprocess.run([sys.executable, "-c", PARSE, folder], capture_output=True, text=True, env=env,
                                      check=True).stdout.splitlines()[-1])  # Airflow may log to stdout first
            for _ in range(REPEAT)]
    best = min(runs, key=lambda r: r["s"])
    return {"s": round(best["s"], 3), "dags": best["dags"], "errors": best["errors"]}


def main() -> None:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as minimal:
        Path(minimal, "minimal.py").write_text(MINIMAL)
        env = {**os.environ, "AIRFLOW_HOME": home, "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
        ours = {f.name: parse_s(str(f), env) for f in sorted(DAGS.glob("*.py"))}
        reference = parse_s(minimal, env)
    figures = {f"parse_s_{name}": r["s"] for name, r in ours.items()}
    print(json.dumps({"bench": "dagbag", **figures, "parse_s_minimal_dag": reference["s"],
                      "dags": sum(r["dags"] for r in ours.values()), "import_errors": sum(r["errors"] for r in ours.values()),
                      "load_avg_1min": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
