"""Error paths of the REST clients that a real cluster cannot be made to produce: 5xx, malformed
bodies, a connection dropped after a submit. A local HTTP server stands in for the RM here only."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from corral_yarn.cluster.errors import MalformedResponseError, RemoteError, UnreachableError
from corral_yarn.cluster.grants import Grant
from corral_yarn.cluster.rest import RestClient, Retry
from corral_yarn.cluster.rm import AmContainerSpec, ResourceManager, Submission
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.errors import InputError

NO_WAIT = Retry(attempts=3, backoff_s=0.0)
Reply = tuple[int, str] | None  # None: drop the connection without answering


class FakeService:
    """Answers each (method, path) with a scripted (status, body); records what it was sent."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Reply]] = {}
        self.requests: list[tuple[str, str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                path = self.path.split("?")[0]
                outer.requests.append((self.command, path, body))
                replies = outer.routes.get((self.command, path)) or [(404, "{}")]
                reply = replies.pop(0) if len(replies) > 1 else replies[0]
                if reply is None:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(reply[0])
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(reply[1].encode())

            do_GET = do_POST = do_PUT = _serve

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def on(self, method: str, path: str, *replies: Reply) -> None:
        self.routes[(method, path)] = list(replies)


@pytest.fixture
def service() -> Iterator[FakeService]:
    fake = FakeService()
    thread = threading.Thread(target=fake.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def ok(doc: Any) -> tuple[int, str]:
    return 200, json.dumps(doc)


def test_remote_exception_becomes_one_remote_error_with_the_rm_message(service: FakeService) -> None:
    remote = {"RemoteException": {"exception": "WebApplicationException", "message": "java.io.IOException: disk on fire",
                                  "javaClassName": "javax.ws.rs.WebApplicationException"}}
    service.on("GET", "/ws/v1/cluster/info", (500, json.dumps(remote)))
    with pytest.raises(RemoteError, match=r"ResourceManager refused the request \(HTTP 500 WebApplicationException\): java.io.IOException: disk on fire") as err:
        ResourceManager(service.url, retry=NO_WAIT).cluster_info()
    assert err.value.status == 500 and err.value.exception == "WebApplicationException"
    assert len(service.requests) == 1  # an HTTP error is an answer: never retried


def test_error_body_that_is_not_json_is_quoted(service: FakeService) -> None:
    service.on("GET", "/ws/v1/cluster/info", (503, "<html><body>Service   Unavailable</body></html>"))
    with pytest.raises(RemoteError, match="HTTP 503.*Service Unavailable"):
        ResourceManager(service.url, retry=NO_WAIT).cluster_info()


@pytest.mark.parametrize(("body", "why"), [
    ("not json at all", "not JSON"),
    ("", "empty body"),
    ('{"somethingElse": 1}', "no 'nodes'"),
    ('{"nodes": {"node": [{"id": "n:1"}]}}', "node entry lacks"),
    ('{"nodes": {"node": ["n:1"]}}', "not objects"),
])
def test_malformed_responses_are_typed_errors(service: FakeService, body: str, why: str) -> None:
    service.on("GET", "/ws/v1/cluster/nodes", (200, body))
    with pytest.raises(MalformedResponseError, match=why):
        ResourceManager(service.url, retry=NO_WAIT).nodes()


def test_unreachable_rm_is_retried_then_reported() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connection refused
        with pytest.raises(UnreachableError, match=rf"cannot reach ResourceManager at http://127.0.0.1:{port} after 3 attempts"):
            ResourceManager(f"http://127.0.0.1:{port}", retry=NO_WAIT).cluster_info()


def test_connection_errors_are_retried_until_an_answer(service: FakeService) -> None:
    service.on("GET", "/x", None, None, ok({"a": 1}))
    assert RestClient("S", service.url, retry=NO_WAIT).get("/x") == {"a": 1}
    assert len(service.requests) == 3


SCHEDULER = {"scheduler": {"schedulerInfo": {"queueName": "root", "queues": {"queue": [{"queueName": "default", "queuePath": "root.default"}]}}}}
TAGS = CorralTags("plan-1", "wc", ("/rack-a",))


def app(app_id: str, state: str) -> dict[str, Any]:
    return {"app": {"id": app_id, "state": state, "finalStatus": "UNDEFINED", "applicationTags": ",".join(TAGS.encode())}}


def submission() -> Submission:
    return Submission(name="wc", tags=TAGS, am=AmContainerSpec(command="sleep 1"), priority=3)


def test_submit_whose_answer_is_lost_does_not_submit_twice(service: FakeService) -> None:
    """The POST reaches the RM but the connection drops; the retried POST is refused as a duplicate."""
    service.on("GET", "/ws/v1/cluster/scheduler", ok(SCHEDULER))
    service.on("GET", "/ws/v1/cluster/apps", ok({"apps": None}))
    service.on("POST", "/ws/v1/cluster/apps/new-application", ok({"application-id": "application_1_0001"}))
    service.on("POST", "/ws/v1/cluster/apps", None, (400, json.dumps(
        {"RemoteException": {"exception": "BadRequestException", "message": "Application with id application_1_0001 is already present"}})))
    service.on("GET", "/ws/v1/cluster/apps/application_1_0001", ok(app("application_1_0001", "ACCEPTED")))
    report = ResourceManager(service.url, retry=NO_WAIT).submit(submission())
    assert report.app_id == "application_1_0001"
    posts = [r for r in service.requests if r[:2] == ("POST", "/ws/v1/cluster/apps")]
    assert len(posts) == 2 and {p[2]["application-id"] for p in posts} == {"application_1_0001"}
    assert posts[0][2]["priority"] == 3 and "corral-racks-0:/rack-a" in posts[0][2]["application-tags"]["tag"]


def test_submit_refused_for_an_app_the_rm_does_not_have_raises(service: FakeService) -> None:
    service.on("GET", "/ws/v1/cluster/scheduler", ok(SCHEDULER))
    service.on("GET", "/ws/v1/cluster/apps", ok({"apps": None}))
    service.on("POST", "/ws/v1/cluster/apps/new-application", ok({"application-id": "application_1_0002"}))
    service.on("POST", "/ws/v1/cluster/apps", (500, json.dumps({"RemoteException": {"exception": "YarnException", "message": "boom"}})))
    with pytest.raises(RemoteError, match="boom"):
        ResourceManager(service.url, retry=NO_WAIT).submit(submission())


@pytest.mark.parametrize(("state", "final", "reused"), [
    ("RUNNING", "UNDEFINED", True), ("ACCEPTED", "UNDEFINED", True), ("FINISHED", "SUCCEEDED", True),
    ("FINISHED", "FAILED", False), ("FINISHED", "KILLED", False), ("FAILED", "FAILED", False), ("KILLED", "KILLED", False),
])
def test_only_a_running_or_succeeded_application_counts_as_submitted(service: FakeService, state: str, final: str,
                                                                     reused: bool) -> None:
    """A MapReduce job that failed ends FINISHED with final status FAILED: it must be submitted again."""
    earlier = {**app("application_1_0001", state)["app"], "finalStatus": final}
    service.on("GET", "/ws/v1/cluster/apps", ok({"apps": {"app": [earlier]}}))
    found = ResourceManager(service.url, retry=NO_WAIT).existing(TAGS)
    assert (found is not None and found.app_id == "application_1_0001") if reused else found is None


def test_a_service_that_never_answers_is_retried_then_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)  # connections are accepted by the kernel, but nothing ever answers: a read timeout
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
        with pytest.raises(UnreachableError, match=r"cannot reach S at .* after 3 attempts: .*timed out"):
            RestClient("S", url, timeout_s=0.2, retry=NO_WAIT).get("/x")


def test_with_a_grant_secret_the_submission_carries_the_planner_grant_of_the_rm_user(service: FakeService) -> None:
    """The grant covers the user the RM takes us for (/userinfo), the submission's name, queue, racks,
    priority and period; too many tags with it is refused before anything is submitted."""
    service.on("GET", "/ws/v1/cluster/scheduler", ok(SCHEDULER))
    service.on("GET", "/ws/v1/cluster/apps", ok({"apps": None}))
    service.on("GET", "/ws/v1/cluster/userinfo", ok({"requestedUser": "alice"}))
    service.on("POST", "/ws/v1/cluster/apps/new-application", ok({"application-id": "application_1_0003"}))
    service.on("POST", "/ws/v1/cluster/apps", (202, ""))
    service.on("GET", "/ws/v1/cluster/apps/application_1_0003", ok(app("application_1_0003", "ACCEPTED")))
    rm = ResourceManager(service.url, retry=NO_WAIT, grant_secret=b"s3cret")
    rm.submit(dataclasses.replace(submission(), grant_period=(100, 200)))
    post = next(r[2] for r in service.requests if r[:2] == ("POST", "/ws/v1/cluster/apps"))
    grant = Grant("wc", "alice", "default", ("/rack-a",), 3, 100, 200)
    assert post["application-tags"]["tag"] == [*TAGS.encode(), grant.tag(b"s3cret")]
    many = CorralTags("plan-1", "wc", tuple(f"/dc{i}/rack-{i:02d}" for i in range(45)))
    with pytest.raises(InputError, match="need 11 tags, more than YARN's default 10"):
        rm.submit(dataclasses.replace(submission(), tags=many))


# --- a restarting ResourceManager (work-preserving recovery, docs/reliability.md) -------------------

INITIALIZING = ok({"clusterInfo": {"haState": "INITIALIZING"}})
ACTIVE = ok({"clusterInfo": {"haState": "ACTIVE"}})


def test_no_application_found_on_an_rm_not_active_yet_is_no_licence_to_resubmit(service: FakeService) -> None:
    """A restarted RM lists no application until it has recovered them: submitting then would duplicate one."""
    service.on("GET", "/ws/v1/cluster/apps", ok({"apps": None}))
    service.on("GET", "/ws/v1/cluster/info", INITIALIZING)
    service.on("GET", "/ws/v1/cluster/scheduler", ok(SCHEDULER))
    rm = ResourceManager(service.url, retry=NO_WAIT)
    with pytest.raises(UnreachableError, match="INITIALIZING, not ACTIVE"):
        rm.existing(TAGS)
    with pytest.raises(UnreachableError, match="not ACTIVE"):
        rm.submit(submission())
    assert not any(path.endswith("new-application") for _, path, _ in service.requests)
    service.on("GET", "/ws/v1/cluster/info", ACTIVE)
    assert rm.existing(TAGS) is None


def test_wait_polls_through_an_rm_restart(service: FakeService) -> None:
    gone = (404, json.dumps({"RemoteException": {"exception": "NotFoundException", "message": "app not found"}}))
    service.on("GET", "/ws/v1/cluster/apps/application_1_0001", ok(app("application_1_0001", "RUNNING")), None, gone,
               ok({"app": {**app("application_1_0001", "FINISHED")["app"], "finalStatus": "SUCCEEDED"}}))
    service.on("GET", "/ws/v1/cluster/info", INITIALIZING)
    report = ResourceManager(service.url, retry=Retry(attempts=1)).wait("application_1_0001", poll_s=0.01)
    assert report.state == "FINISHED"


def test_wait_gives_up_after_an_outage_longer_than_its_bound(service: FakeService) -> None:
    service.on("GET", "/ws/v1/cluster/apps/application_1_0001", None)
    with pytest.raises(UnreachableError, match=r"could not report application_1_0001 for \d+ s"):
        ResourceManager(service.url, retry=Retry(attempts=1)).wait("application_1_0001", poll_s=0.01, outage_s=0.5)


def test_an_active_rm_that_does_not_know_the_application_is_a_remote_error(service: FakeService) -> None:
    service.on("GET", "/ws/v1/cluster/info", ACTIVE)
    with pytest.raises(RemoteError, match="HTTP 404"):
        ResourceManager(service.url, retry=NO_WAIT).application("application_1_0009")


def test_call_starts_an_operation_over_while_it_is_unreachable_then_gives_up() -> None:
    tries: list[int] = []

    def flaky() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise UnreachableError("NameNode did not answer")
        return "done"

    assert NO_WAIT.call("upload", flaky) == "done" and len(tries) == 3
    tries.clear()
    with pytest.raises(UnreachableError):
        Retry(attempts=2, backoff_s=0.0).call("upload", flaky)
    assert len(tries) == 2


def test_call_does_not_retry_other_errors() -> None:
    tries: list[int] = []

    def refused() -> None:
        tries.append(1)
        raise RemoteError("NameNode", 403, "permission denied")

    with pytest.raises(RemoteError):
        NO_WAIT.call("upload", refused)
    assert len(tries) == 1
