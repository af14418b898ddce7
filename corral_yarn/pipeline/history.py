"""The estimator's JobHistory source on the pipeline's cluster clients."""

from __future__ import annotations

from corral_yarn.cluster import Cluster
from estimator.identity import RecurringKey
from estimator.sources.jobhistory import JobHistorySource


def history_source(cluster: Cluster) -> JobHistorySource:
    """The JobHistory source of ``cluster``, recurring keys from job names (dates and ids stripped)."""
    return JobHistorySource(cluster.history.rest.base_url, RecurringKey(), history=cluster.history)
