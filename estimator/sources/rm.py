"""The YARN ResourceManager apps REST API (``/ws/v1/cluster/apps``) as a history source for
non-MapReduce applications (MapReduce jobs come with their counters from the JobHistory server).

The RM knows when an application was submitted, launched and finished and its final status, but
not its bytes: these runs are stored with times only, and ``corral estimate`` does not predict their
jobs (it lists them as recurring jobs without sized runs), since the planner needs sizes.
"""

from __future__ import annotations

from corral_yarn.cluster.rest import RestClient, items
from estimator.identity import RecurringKey, plan_entry, tagged_key
from estimator.records import IngestReport, JobRun
from estimator.sources.rest import from_ms

FINISHED_STATES = "FINISHED,FAILED,KILLED"


class ResourceManagerSource:
    """Reads finished non-MapReduce applications from a ResourceManager (e.g. ``http://host:8088``)."""

    def __init__(self, url: str, key: RecurringKey, rest: RestClient | None = None) -> None:
        self.rest = rest or RestClient("ResourceManager", url)
        self.key = key

    def read(self, report: IngestReport) -> list[JobRun]:
        runs = []
        for app in items(self.rest.get("/ws/v1/cluster/apps", params={"states": FINISHED_STATES}), "apps", "app", "ResourceManager"):
            report.read += 1
            if app.get("applicationType", "").upper() == "MAPREDUCE":
                report.skip("MapReduce app (ingest it from the JobHistory server)", app.get("id", "?"))
                continue
            if (submit := from_ms(app.get("startedTime"))) is None:
                report.skip("missing submit time", app.get("id", "?"))
                continue
            name = app.get("name") or app["id"]
            runs.append(
                JobRun(
                    run_id=f"rm:{app['id']}",
                    recurring_key=tagged_key(app.get("applicationTags"), self.key.key(name, None, str(app.get(self.key.column or "") or "") or None)),  # --key COLUMN: an app field
                    name=name,
                    source=f"rm:{self.rest.base_url}",
                    submit_time=submit,
                    start_time=from_ms(app.get("launchTime")),
                    finish_time=from_ms(app.get("finishedTime")),
                    outcome=app.get("finalStatus") or app.get("state", "UNKNOWN"),
                    application_type=app.get("applicationType", "UNKNOWN"),
                    **plan_entry(app.get("applicationTags")),
                )
            )
        return runs
