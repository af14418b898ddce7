"""``CorralHook``: the cluster's clients from the Airflow Connections (docs/pipeline.md).

The three Connections and their meaning are those of :mod:`corral_yarn.pipeline.connections`; the
hook only reads them through Airflow, on the worker, never at parse time.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseHook

from corral_yarn.cluster import Cluster
from corral_yarn.contracts import Plan
from corral_yarn.pipeline.connections import CONNECTIONS, RESOURCEMANAGER, connection_url, endpoints_from, grant_secret_from


class CorralHook(BaseHook):
    """Clients of the cluster the Connections ``corral_webhdfs``, ``corral_resourcemanager`` and ``corral_jobhistory`` name."""

    conn_name_attr = "corral_conn_id"
    default_conn_name = RESOURCEMANAGER
    conn_type = "http"
    hook_name = "Corral"

    def get_conn(self) -> Cluster:
        connections = {conn_id: self.get_connection(conn_id) for conn_id in CONNECTIONS}
        return Cluster(endpoints_from(connections), progress=False, grant_secret=grant_secret_from(connections))

    def rm_url(self) -> str:
        """The ResourceManager's web address (what the deferrable sensor's trigger polls)."""
        return connection_url(self.get_connection(RESOURCEMANAGER), RESOURCEMANAGER)

    def published_plan(self, params: dict[str, Any], version: str | None = None) -> Plan:
        """The plan published under ``params['plans_dir']`` (``version``, or the latest)."""
        from corral_yarn.pipeline.planning import load_published
        from corral_yarn.pipeline.settings import PipelineSettings

        return load_published(self.get_conn(), PipelineSettings.from_params(params), version).plan
