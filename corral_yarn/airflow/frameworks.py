"""A planned job's hints as the settings of the framework that runs it (the user's own task).

The scheduler in java_patch reads R_j from the application's tags (:mod:`corral_yarn.cluster.tags`)
whatever framework submitted it; this module only says under which keys each framework passes tags,
priority p_j and queue to YARN (thesis §4.1). Guide: docs/pipeline.md ("Adding Corral to your DAGs").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from corral_yarn.cluster.tags import period_id, plan_hints
from corral_yarn.contracts import Plan
from corral_yarn.errors import InputError
_FORBIDDEN_QUEUE = set(", \t\n")


@dataclass(frozen=True)
class JobSettings:
    """What YARN must be told about one planned job: its application tags, priority and queue."""

    tags: tuple[str, ...]
    priority: int
    queue: str | None = None

    def spark_conf(self) -> dict[str, str]:
        """``conf`` for SparkSubmitOperator / ``--conf`` pairs for spark-submit (YARN cluster or client mode)."""
        return self._with_queue({"spark.yarn.tags": ",".join(self.tags), "spark.yarn.priority": str(self.priority)},
                                "spark.yarn.queue")

    def mapreduce_conf(self) -> dict[str, str]:
        """Job configuration of a MapReduce job (``mapreduce.job.priority`` takes an integer since Hadoop 3)."""
        return self._with_queue({"mapreduce.job.tags": ",".join(self.tags), "mapreduce.job.priority": str(self.priority)},
                                "mapreduce.job.queuename")

    def tez_conf(self) -> dict[str, str]:
        """Tez (Hive on Tez) session settings; Tez has no per-DAG YARN priority key, so p_j is not passed."""
        return self._with_queue({"tez.application.tags": ",".join(self.tags)}, "tez.queue.name")

    def hadoop_args(self) -> list[str]:
        """``-D key=value`` arguments for ``hadoop jar`` (a Tool using GenericOptionsParser), in order."""
        return [arg for key, value in self.mapreduce_conf().items() for arg in ("-D", f"{key}={value}")]

    def _with_queue(self, conf: dict[str, str], key: str) -> dict[str, str]:
        return {**conf, key: self.queue} if self.queue else conf


def job_settings(plan: Plan, job: str, queue: str | None = None, recurring_key: str | None = None,
                 period_start: datetime | None = None) -> JobSettings:
    """Job j's settings from a plan: R_j and identity as tags, the recurring key and the planning period
    (its start) as tags, p_j and the queue."""
    hints, priority = plan_hints(plan, job)
    period = period_id(period_start) if period_start is not None else None
    tags = replace(hints, key=recurring_key, period=period).encode()  # history reads the key and period, not the app name
    if queue is not None and (not queue or _FORBIDDEN_QUEUE & set(queue)):
        raise InputError(f"queue {queue!r} is not a YARN queue name")
    return JobSettings(tuple(tags), priority, queue)

