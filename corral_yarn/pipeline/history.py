"""The estimator's JobHistory source on the pipeline's cluster clients.

Hadoop's JSON provider renders a list of one element as the element itself, and a job's counter
groups often hold one counter (``FileInputFormatCounter`` has only ``BYTES_READ``). Until
``estimator.sources.jobhistory`` reads such groups itself, :class:`SingleItemLists` turns them back
into lists on the way in, so every finished job can be ingested.
"""

from __future__ import annotations

from typing import Any

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.rest import RestClient
from estimator.identity import RecurringKey
from estimator.sources.jobhistory import JobHistorySource

LIST_KEYS = frozenset({"counterGroup", "counter", "taskCounterGroup"})


def as_lists(doc: Any) -> Any:
    """``doc`` with every object under a key of LIST_KEYS wrapped in a one-element list."""
    if isinstance(doc, list):
        return [as_lists(d) for d in doc]
    if not isinstance(doc, dict):
        return doc
    return {k: [as_lists(v)] if k in LIST_KEYS and isinstance(v, dict) else as_lists(v) for k, v in doc.items()}


class SingleItemLists:
    """A RestClient whose GET answers have their one-element counter lists restored."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest
        self.base_url = rest.base_url

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        return as_lists(self.rest.get(path, params=params))


def history_source(cluster: Cluster) -> JobHistorySource:
    """The JobHistory source of ``cluster``, recurring keys from job names (dates and ids stripped)."""
    rest = cluster.history.rest
    return JobHistorySource(rest.base_url, RecurringKey(), rest=SingleItemLists(rest))  # type: ignore[arg-type]
