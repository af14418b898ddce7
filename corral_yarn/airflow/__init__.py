"""Corral as an Airflow provider: a Hook over the Connections, thin operators, a deferrable sensor,
and the settings that hand a planned job's R_j and p_j to the user's own Spark, MapReduce or Tez task.

Registered through the ``apache_airflow_provider`` entry point (pyproject.toml) with
:func:`get_provider_info`. Kept free of imports so that DAG files parse fast. Guide: docs/pipeline.md
("Adding Corral to your DAGs").
"""

from __future__ import annotations

from typing import Any


def get_provider_info() -> dict[str, Any]:
    """What Airflow's ProvidersManager reads about this provider."""
    return {
        "package-name": "corral-yarn",
        "name": "Corral",
        "description": "Network-aware planning of recurring Hadoop jobs (Corral) on YARN and HDFS.",
        "integrations": [{"integration-name": "Corral", "tags": ["apache"], "external-doc-url": "https://github.com/"}],
        "hooks": [{"integration-name": "Corral", "python-modules": ["corral_yarn.airflow.hooks"]}],
        "operators": [{"integration-name": "Corral", "python-modules": ["corral_yarn.airflow.operators"]}],
        "sensors": [{"integration-name": "Corral", "python-modules": ["corral_yarn.airflow.operators"]}],
        "triggers": [{"integration-name": "Corral", "python-modules": ["corral_yarn.airflow.triggers"]}],
    }
