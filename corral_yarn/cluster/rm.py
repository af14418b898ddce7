"""ResourceManager REST client: cluster, nodes, queues, and the life of an application (thesis §4.1).

Submission carries Corral's hints the way java_patch's scheduler reads them: the rack set R_j and the
plan/job identity as application tags (:mod:`corral_yarn.cluster.tags`), p_j as the YARN priority.
Submission is idempotent: an application already tagged with this plan and job is returned instead
of submitting a second one, and the application id fixed by ``new-application`` makes a re-sent POST
a duplicate the RM refuses rather than a second application.

A restarting ResourceManager (work-preserving recovery, docs/reliability.md) first refuses connections,
then answers before it has recovered its applications: an unknown application or an empty search is
trusted only from an RM whose ``haState`` is ACTIVE, otherwise it is an :class:`UnreachableError` (never
a resubmission), and :meth:`ResourceManager.wait` polls through such an outage for up to ``outage_s``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from corral_yarn.cluster.errors import ApplicationFailedError, ClusterError, MalformedResponseError, RemoteError, UnreachableError
from corral_yarn.cluster.rest import RestClient, Retry, expect
from corral_yarn.cluster.grants import Grant, period_from_now
from corral_yarn.cluster.tags import MAX_TAGS, CorralTags
from corral_yarn.errors import InputError

log = logging.getLogger(__name__)

SERVICE = "ResourceManager"
FINAL_STATES = ("FINISHED", "FAILED", "KILLED")
API = "/ws/v1/cluster"
FALLBACK_BEAN = "Hadoop:service=ResourceManager,name=CorralRackSetFallbacks"  # java_patch RackSetFallbackLog
OUTAGE_S = 120.0  # how long a wait polls through a ResourceManager that cannot answer


@dataclass(frozen=True)
class NodeReport:
    """One NodeManager as the RM sees it."""

    node_id: str
    host: str
    rack: str
    state: str
    http_address: str
    memory_mb: int
    vcores: int
    available_memory_mb: int


@dataclass(frozen=True)
class LocalResource:
    """A file the NodeManager localizes into the container's working directory under ``key``."""

    key: str
    resource: str  # a fully qualified URL, e.g. hdfs://nn:8020/path
    size: int
    timestamp: int  # the file's modification time in ms, as HDFS reports it
    type: str = "FILE"  # FILE, ARCHIVE or PATTERN
    visibility: str = "APPLICATION"
    pattern: str | None = None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"resource": self.resource, "type": self.type, "visibility": self.visibility,
                                 "size": self.size, "timestamp": self.timestamp}
        if self.pattern is not None:
            value["pattern"] = self.pattern
        return {"key": self.key, "value": value}


@dataclass(frozen=True)
class AmContainerSpec:
    """The ApplicationMaster's ContainerLaunchContext: command, environment, local resources and, on a
    secure cluster, the delegation tokens the application authenticates with (alias -> Token.encodeToUrlString)."""

    command: str
    environment: dict[str, str] = field(default_factory=dict)
    local_resources: tuple[LocalResource, ...] = ()
    tokens: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "commands": {"command": self.command},
            "environment": {"entry": [{"key": k, "value": v} for k, v in sorted(self.environment.items())]},
            "local-resources": {"entry": [r.to_json() for r in self.local_resources]},
        }
        if self.tokens:
            spec["credentials"] = {"tokens": {"entry": [{"key": k, "value": v} for k, v in sorted(self.tokens.items())]},
                                   "secrets": {"entry": []}}
        return spec


@dataclass(frozen=True)
class Submission:
    """An ApplicationSubmissionContext with Corral's hints: rack set and identity in ``tags``, p_j in ``priority``."""

    name: str
    tags: CorralTags
    am: AmContainerSpec | None = None  # None until staged (see ResourceManager.submit)
    priority: int = 0
    queue: str = "default"
    memory_mb: int = 1024
    vcores: int = 1
    application_type: str = "YARN"
    max_attempts: int = 1
    reservation_id: str | None = None  # run inside this YARN reservation of ``queue`` (cluster.reservations)
    grant_period: tuple[int, int] | None = None  # [from, until) Unix s of the planner grant; None: the next GRANT_HOURS

    def to_json(self, app_id: str) -> dict[str, Any]:
        if self.am is None:
            raise InputError(f"application {self.name!r} has no AM container spec")
        return {
            "application-id": app_id,
            "application-name": self.name,
            "queue": self.queue,
            "priority": self.priority,
            "am-container-spec": self.am.to_json(),
            "unmanaged-AM": False,
            "max-app-attempts": self.max_attempts,
            "resource": {"memory": self.memory_mb, "vCores": self.vcores},
            "application-type": self.application_type,
            "keep-containers-across-application-attempts": False,
            "application-tags": {"tag": self.tags.encode()},
            **({"reservation-id": self.reservation_id} if self.reservation_id else {}),
        }


@dataclass(frozen=True)
class AppReport:
    """The state of one application."""

    app_id: str
    name: str
    user: str
    queue: str
    state: str
    final_status: str
    priority: int
    tags: tuple[str, ...]
    diagnostics: str
    started_ms: int
    finished_ms: int

    @property
    def done(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def succeeded(self) -> bool:
        return self.state == "FINISHED" and self.final_status == "SUCCEEDED"

    @property
    def corral(self) -> CorralTags | None:
        return CorralTags.decode(list(self.tags))


@dataclass(frozen=True)
class ContainerReport:
    """A container of an application attempt (the AM's own, or a task's)."""

    container_id: str
    node_id: str
    node_http_address: str
    started_ms: int


@dataclass(frozen=True)
class AttemptReport:
    """One attempt of an application and its AM container."""

    attempt_id: str
    am: ContainerReport


Stage = Callable[[str, "Submission"], "Submission"]
GRANT_HOURS = 24.0  # a grant's period when the submission names none (docs/rack-tags.md, "Grants")


class ResourceManager:
    """REST client of one ResourceManager, e.g. ``ResourceManager("http://localhost:8088")``."""

    def __init__(self, url: str, user: str | None = None, timeout_s: float = 30.0, retry: Retry = Retry(),
                 grant_secret: bytes | None = None) -> None:
        self.rest = RestClient(SERVICE, url, timeout_s=timeout_s, retry=retry, user=user)
        self.grant_secret = grant_secret  # None: unsigned mode, no grant tag (docs/rack-tags.md, "Grants")

    def cluster_info(self) -> dict[str, Any]:
        return expect(self.rest.get(API + "/info"), "clusterInfo", service=SERVICE)

    def configuration(self) -> dict[str, tuple[str, str]]:
        """The RM's effective configuration from its ``/conf`` servlet: key -> (value, source resource)."""
        props = expect(self.rest.get("/conf", params={"format": "json"}), "properties", service=SERVICE)
        return {p["key"]: (str(p["value"]), str(p.get("resource", ""))) for p in props}

    def max_priority(self) -> int:
        """``yarn.cluster.max-application-priority``: YARN caps application priorities at it (0: priorities off)."""
        return int(self.configuration().get("yarn.cluster.max-application-priority", ("0", ""))[0])

    def rack_set_fallbacks(self, app_id: str) -> list[str]:
        """Why the Corral scheduler lifted (and restored) the application's rack-set restriction (thesis §4.6),
        oldest first, e.g. ``lifted: 0 of 2 NodeManagers of racks [/rack-c] are live (threshold 0.5)``; empty
        when it never did, or the RM runs another scheduler or has forgotten (it keeps the latest 1000 events)."""
        beans = expect(self.rest.get("/jmx", params={"qry": FALLBACK_BEAN}), "beans", service=SERVICE)
        events = beans[0].get("Events") if beans and isinstance(beans[0], dict) else None
        return [str(e).split(" ", 1)[1] for e in events or [] if str(e).startswith(f"{app_id} ")]

    def nodes(self) -> list[NodeReport]:
        nodes = expect(self.rest.get(API + "/nodes"), "nodes", service=SERVICE)
        return [_node(n) for n in _items(nodes, "node")]

    def queues(self) -> list[str]:
        """Leaf queue names of the CapacityScheduler (full paths and short names)."""
        info = expect(self.rest.get(API + "/scheduler"), "scheduler", "schedulerInfo", service=SERVICE)
        return sorted(_leaf_queues(info))

    def new_application(self) -> str:
        return str(expect(self.rest.request("POST", API + "/apps/new-application"), "application-id", service=SERVICE))

    def application(self, app_id: str) -> AppReport:
        """The application's report; an RM that does not know it yet because it is still starting (recovering
        its applications) is an UnreachableError, one that is ACTIVE and does not know it a RemoteError (404)."""
        try:
            return _app(expect(self.rest.get(f"{API}/apps/{app_id}"), "app", service=SERVICE))
        except RemoteError as exc:
            if exc.status == 404:
                self.require_active(f"it does not know {app_id} yet")
            raise

    def find(self, tags: CorralTags) -> list[AppReport]:
        """Applications tagged with this plan and job, oldest first (none: only from an ACTIVE RM)."""
        apps = self.rest.get(API + "/apps", params={"applicationTags": tags.encode()[0]})
        found = [_app(a) for a in _items(expect(apps, "apps", service=SERVICE), "app")]
        if not found:
            self.require_active(f"no application tagged {tags.plan_id}/{tags.job} may mean one not recovered yet")
        return sorted((a for a in found if (c := a.corral) and c.matches(tags)), key=lambda a: a.app_id)

    def require_active(self, why: str) -> None:
        """Raise an UnreachableError unless the RM is ACTIVE (a restarted RM answers before it has recovered)."""
        try:
            state = str(self.cluster_info().get("haState", "ACTIVE"))
        except (RemoteError, MalformedResponseError):  # no state to go by: the answer stands
            return
        if state != "ACTIVE":
            raise UnreachableError(f"{SERVICE} at {self.rest.base_url} is {state}, not ACTIVE (restarting?): {why}")

    def user(self) -> str:
        """The user the RM takes our requests to come from (``/userinfo``: ``user.name`` or its static web user)."""
        doc = self.rest.get(API + "/userinfo")
        info = doc.get("clusterUserInfo", doc) if isinstance(doc, dict) else None  # Hadoop 3.5 sends it unwrapped
        if not isinstance(info, dict) or "requestedUser" not in info:
            raise MalformedResponseError(f"{SERVICE} /userinfo has no requestedUser")
        return str(info["requestedUser"] or "")

    def submit(self, submission: Submission, stage: Stage | None = None) -> AppReport:
        """Submit unless an application for this plan and job already runs or ran; returns its report.

        ``stage(app_id, submission)``, if given, runs once the application id is known and returns the
        submission to send (MapReduce stages its job files under a directory named after the id).
        """
        # A reservation runs in a leaf queue named after it, inside the reservable (parent) queue.
        if (leaf := submission.reservation_id or submission.queue) not in (queues := self.queues()):
            what = "no active reservation" if submission.reservation_id else "unknown queue"
            raise InputError(f"{what} {leaf!r}; the ResourceManager has queues {queues}")
        if existing := self.existing(submission.tags):
            return existing
        app_id = self.new_application()
        final = stage(app_id, submission) if stage else submission
        body = final.to_json(app_id)
        if self.grant_secret:
            body["application-tags"]["tag"].append(self.grant(final).tag(self.grant_secret))
            if len(body["application-tags"]["tag"]) > MAX_TAGS:
                raise InputError(f"{final.name}: its tags and the planner grant need {len(body['application-tags']['tag'])} tags, more "
                                 f"than YARN's default {MAX_TAGS} (raise yarn.resourcemanager.application.max-tags, see docs/rack-tags.md)")
        try:
            self.rest.request("POST", API + "/apps", body=body, accept_empty=True)
        except (UnreachableError, RemoteError) as exc:
            if not self._exists(app_id):
                raise
            log.info("submit of %s reported %s, but the RM has it; continuing", app_id, exc)
        log.info("submitted %s as %s (queue %s, priority %d)", final.name, app_id, final.queue, final.priority)
        return self.application(app_id)

    def grant(self, submission: Submission) -> Grant:
        """The planner grant of this submission's rack set and priority, to the user the RM takes us for."""
        start, end = submission.grant_period or period_from_now(datetime.now(UTC), GRANT_HOURS)
        return Grant(submission.name, self.user(), submission.queue, submission.tags.racks, submission.priority, start, end)

    def existing(self, tags: CorralTags) -> AppReport | None:
        """The application already submitted for this plan and job that is still running or succeeded.

        One that ended otherwise (state FAILED or KILLED, or FINISHED with final status FAILED or KILLED,
        as a MapReduce job that failed ends) does not count: the job is submitted again."""
        alive = [a for a in self.find(tags) if not a.done or a.succeeded]
        if alive:
            log.info("%s/%s already submitted as %s; not submitting again", tags.plan_id, tags.job, alive[0].app_id)
        return alive[0] if alive else None

    def _exists(self, app_id: str) -> bool:
        try:
            self.application(app_id)
        except RemoteError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def wait(self, app_id: str, timeout_s: float = 600.0, poll_s: float = 1.0, outage_s: float = OUTAGE_S) -> AppReport:
        """Poll until the application ends; raises ApplicationFailedError unless it FINISHED/SUCCEEDED.

        An RM that cannot answer (down, restarting) is polled again for up to ``outage_s`` in a row; then
        the UnreachableError says for how long it could not."""
        report = self._ended(app_id, timeout_s, poll_s, outage_s)
        if not report.succeeded:
            raise ApplicationFailedError(app_id, f"{report.state}/{report.final_status}", report.diagnostics)
        return report

    def kill(self, app_id: str, timeout_s: float = 60.0, poll_s: float = 0.5) -> AppReport:
        """Kill the application and return its report once it has ended (the RM answers 202 while the kill is under way)."""
        self.rest.request("PUT", f"{API}/apps/{app_id}/state", body={"state": "KILLED"}, accept_empty=True)
        return self._ended(app_id, timeout_s, poll_s)

    def _ended(self, app_id: str, timeout_s: float, poll_s: float, outage_s: float = OUTAGE_S) -> AppReport:
        deadline = time.monotonic() + timeout_s
        while not (report := self._through_outage(app_id, outage_s)).done:
            if time.monotonic() > deadline:
                raise ClusterError(f"application {app_id} is still {report.state} after {timeout_s:.0f} s")
            time.sleep(poll_s)
        return report

    def _through_outage(self, app_id: str, outage_s: float) -> AppReport:
        """The application's report, polling through an RM outage of up to ``outage_s``."""
        since = time.monotonic()
        while True:
            try:
                return self.application(app_id)
            except UnreachableError as exc:
                if (down := time.monotonic() - since) >= outage_s:
                    raise UnreachableError(f"{SERVICE} could not report {app_id} for {down:.0f} s: {exc}") from None
                log.warning("%s unavailable while waiting for %s (%s); polling again", SERVICE, app_id, exc)
                time.sleep(1.0)

    def attempts(self, app_id: str) -> list[AttemptReport]:
        """Every attempt of the application with its AM container (start = when the attempt began)."""
        doc = expect(self.rest.get(f"{API}/apps/{app_id}/appattempts"), "appAttempts", service=SERVICE)
        return [AttemptReport(str(a.get("appAttemptId", "")),
                              ContainerReport(str(a.get("containerId", "")), str(a.get("nodeId", "")),
                                              str(a.get("nodeHttpAddress", "")), int(a.get("startTime", 0))))
                for a in _items(doc, "appAttempt")]

    def attempt_containers(self, app_id: str, attempt_id: str) -> list[ContainerReport]:
        """Live containers of one attempt (the RM forgets them once the attempt ends)."""
        doc = self.rest.get(f"{API}/apps/{app_id}/appattempts/{attempt_id}/containers")
        items = _items(doc.get("containers", doc) if isinstance(doc, dict) else doc, "container")
        return [ContainerReport(str(c.get("containerId", "")), str(c.get("nodeId", c.get("assignedNodeId", ""))),
                                str(c.get("nodeHttpAddress", "")), int(c.get("startedTime", 0) or 0)) for c in items]


def _items(wrapper: Any, key: str) -> list[dict[str, Any]]:
    """The list under ``key`` in the RM's ``{"nodes": {"node": [...]}}`` shape; None means empty."""
    if wrapper is None:
        return []
    if not isinstance(wrapper, dict):
        raise MalformedResponseError(f"{SERVICE} sent {type(wrapper).__name__} where an object holding {key!r} was expected")
    items = wrapper.get(key) or []
    items = items if isinstance(items, list) else [items]
    if not all(isinstance(i, dict) for i in items):
        raise MalformedResponseError(f"{SERVICE} sent a {key!r} list whose entries are not objects")
    return items


def _node(n: dict[str, Any]) -> NodeReport:
    try:
        total = n.get("totalResource") or {}
        used = int(n.get("usedMemoryMB", 0))
        memory = int(total.get("memory", used + int(n.get("availMemoryMB", 0))))
        return NodeReport(node_id=str(n["id"]), host=str(n["nodeHostName"]), rack=str(n["rack"]), state=str(n["state"]),
                          http_address=str(n.get("nodeHTTPAddress", "")), memory_mb=memory,
                          vcores=int(total.get("vCores", n.get("availableVirtualCores", 0))),
                          available_memory_mb=int(n.get("availMemoryMB", memory - used)))
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedResponseError(f"{SERVICE} node entry lacks a valid {exc}: {n}") from None


def _app(a: dict[str, Any]) -> AppReport:
    try:
        tags = a.get("applicationTags") or ""
        return AppReport(app_id=str(a["id"]), name=str(a.get("name", "")), user=str(a.get("user", "")),
                         queue=str(a.get("queue", "")), state=str(a["state"]), final_status=str(a.get("finalStatus", "")),
                         priority=int(a.get("priority", 0)), tags=tuple(t for t in str(tags).split(",") if t),
                         diagnostics=" ".join(str(a.get("diagnostics", "")).split()),
                         started_ms=int(a.get("startedTime", 0)), finished_ms=int(a.get("finishedTime", 0)))
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedResponseError(f"{SERVICE} application entry lacks a valid {exc}") from None


def _leaf_queues(queue: dict[str, Any]) -> set[str]:
    children = (queue.get("queues") or {}).get("queue") or []
    if not children:
        name = str(queue.get("queueName", ""))
        return {name, str(queue.get("queuePath", name))} - {""}
    return set().union(*(_leaf_queues(c) for c in (children if isinstance(children, list) else [children])))
