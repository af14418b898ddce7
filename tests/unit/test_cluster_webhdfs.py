"""The WebHDFS adapter is sealed: HdfsCLI's and requests' failures leave it as the project's
ClusterErrors, and its NameNode calls run under the one retry policy. A local HTTP server stands in
for the NameNode (a real one cannot be made to drop an answer or vanish on cue)."""

from __future__ import annotations

import json
import socket

import pytest

from corral_yarn.cluster.errors import RemoteError, UnreachableError
from corral_yarn.cluster.webhdfs import WebHdfs
from test_cluster_rest import NO_WAIT, FakeService, ok, service  # noqa: F401  (the fixture)

MISSING = (404, json.dumps({"RemoteException": {"exception": "FileNotFoundException", "message": "File does not exist: /x"}}))


def test_a_namenode_refusal_is_a_remote_error_naming_hadoops_exception(service: FakeService) -> None:
    service.on("GET", "/webhdfs/v1/x", MISSING)
    hdfs = WebHdfs(service.url, user="corral", retry=NO_WAIT)
    with pytest.raises(RemoteError, match="FileNotFoundException") as err:
        hdfs.status("/x")
    assert err.value.service == "NameNode" and "File does not exist: /x" in str(err.value)
    with pytest.raises(RemoteError, match="FileNotFoundException"):
        with hdfs.read("/x") as f:
            f.read()
    assert hdfs.status("/x", strict=False) is None


def test_an_unreachable_namenode_is_an_unreachable_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # bound but not listening: connection refused
        hdfs = WebHdfs(f"http://127.0.0.1:{s.getsockname()[1]}", user="corral", retry=NO_WAIT)
        with pytest.raises(UnreachableError, match="cannot reach HDFS to status of /x"):
            hdfs.status("/x")
        with pytest.raises(UnreachableError, match="cannot reach NameNode .* after 3 attempts"):
            hdfs.block_size()


def test_a_lost_namenode_answer_is_asked_again_under_the_retry_policy(service: FakeService) -> None:
    service.on("GET", "/webhdfs/v1/", None, ok({"FsServerDefaults": {"blockSize": 1048576}}))
    assert WebHdfs(service.url, user="corral", retry=NO_WAIT).block_size() == 1048576
    assert [r[:2] for r in service.requests] == [("GET", "/webhdfs/v1/")] * 2

