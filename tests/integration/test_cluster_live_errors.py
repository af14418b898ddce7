"""Typed errors from the real ResourceManager: unreachable, unknown queue, bad tags, and a retried
submit that never creates a second application."""

from __future__ import annotations

import random
import time
import socket
from typing import Any

import pytest
import requests

from corral_yarn.cluster import Cluster, CorralTags, RemoteError, UnreachableError
from corral_yarn.cluster.apps import YarnApp
from corral_yarn.cluster.rest import Retry
from corral_yarn.cluster.rm import ResourceManager
from corral_yarn.errors import InputError

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(minicluster: Any) -> Cluster:
    return Cluster.from_description(minicluster, progress=False)


def sleeper(name: str, seconds: int = 1) -> YarnApp:
    return YarnApp(name=name, command=f"sleep {seconds}", memory_mb=256)


def test_unreachable_rm_is_an_unreachable_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(UnreachableError, match="cannot reach ResourceManager"):
            ResourceManager(f"http://127.0.0.1:{port}", retry=Retry(attempts=2, backoff_s=0.01)).nodes()


def test_unknown_queue_is_an_input_error_naming_the_queues(cluster: Cluster) -> None:
    tags = CorralTags("errors", "q", (cluster.topology().racks[0],))
    with pytest.raises(InputError, match=r"unknown queue 'no-such-queue'; the ResourceManager has queues \[.*default"):
        cluster.rm.submit(sleeper("q").submission(cluster.hdfs, "", tags, queue="no-such-queue"))


def test_bad_tags_are_refused_before_submission(cluster: Cluster) -> None:
    with pytest.raises(InputError, match="topology path"):
        cluster.rm.submit(sleeper("t").submission(cluster.hdfs, "", CorralTags("errors", "t", ("rack a",))))


def test_the_rms_own_refusal_carries_its_message(cluster: Cluster) -> None:
    """A tag longer than YARN's limit, sent raw (bypassing CorralTags), is refused by the RM itself."""
    app_id = cluster.rm.new_application()
    body = sleeper("raw").submission(cluster.hdfs, "", CorralTags("errors", "raw", ())).to_json(app_id)
    body["application-tags"] = {"tag": ["x" * 150]}
    with pytest.raises(RemoteError) as err:
        cluster.rm.rest.request("POST", "/ws/v1/cluster/apps", body=body, accept_empty=True)
    assert err.value.status is not None and err.value.status >= 400
    assert "100" in err.value.remote_message or "tag" in err.value.remote_message.lower(), err.value


def test_unknown_application_is_a_remote_error_with_the_rms_message(cluster: Cluster) -> None:
    with pytest.raises(RemoteError, match="HTTP 404") as err:
        cluster.rm.application("application_1_9999")
    assert err.value.remote_message


def test_a_retried_submit_never_creates_a_second_application(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    tags = CorralTags(f"retry-{random.Random().randrange(10**6)}", "once", (cluster.topology().racks[0],))
    submission = sleeper("once", 5).submission(cluster.hdfs, "", tags)
    # First try: the POST reaches the RM, then the connection "drops" before the answer is read.
    real = cluster.rm.rest.session.request

    def drop_after_posting(method: str, url: str, **kw: Any) -> requests.Response:
        response = real(method, url, **kw)
        if method == "POST" and url.endswith("/ws/v1/cluster/apps"):
            raise requests.ConnectionError("connection reset after the request was sent")
        return response

    monkeypatch.setattr(cluster.rm.rest.session, "request", drop_after_posting)
    first = cluster.rm.submit(submission)
    monkeypatch.undo()
    second = cluster.rm.submit(submission)  # the caller retries the whole submit
    assert second.app_id == first.app_id
    assert [a.app_id for a in cluster.rm.find(tags)] == [first.app_id]
    assert cluster.rm.kill(first.app_id).state in ("KILLED", "FINISHED", "FAILED")


def test_containers_of_a_running_attempt_are_on_its_rack(cluster: Cluster) -> None:
    topo = cluster.topology()
    rack = topo.racks[-1]
    tags = CorralTags(f"containers-{random.Random().randrange(10**6)}", "sleeper", (rack,))
    app = cluster.rm.submit(sleeper("sleeper", 30).submission(cluster.hdfs, "", tags))
    deadline = time.monotonic() + 60
    while not (containers := [c for a in cluster.rm.attempts(app.app_id) for c in cluster.rm.attempt_containers(app.app_id, a.attempt_id)]):
        assert time.monotonic() < deadline, "the AM container never started"
        time.sleep(0.5)
    cluster.rm.kill(app.app_id)
    assert all(topo.rack_of_node(c.node_id) == rack for c in containers), containers
