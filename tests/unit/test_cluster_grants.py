"""Planner grants (docs/rack-tags.md, "Grants"): the signed bytes and tags agree with the shared vectors
java_patch's RackSetGrantTest reads, every field the grant covers changes its HMAC, and the secret is
read as the ResourceManager reads it."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.grants import Grant, grant_period, read_secret, secret_of
from corral_yarn.errors import InputError
from corral_yarn.pipeline.connections import RESOURCEMANAGER, connection_env, endpoints_from, grant_secret_from

VECTORS = json.loads((Path(__file__).parents[1] / "data" / "rack_tag_vectors.json").read_text())["grants"]
SECRET = VECTORS["secret"].encode()
GRANT = Grant("daily-join", "alice", "default", ("/rack-a", "/rack-c"), 7, 1764028800, 1764115200)


def _grant(case: dict) -> Grant:
    return Grant(case["name"], case["user"], case["queue"], tuple(case["racks"]), case["priority"], case["from"], case["until"])


@pytest.mark.parametrize("case", VECTORS["sign"], ids=lambda c: c["name"] or "empty")
def test_shared_vectors_sign_the_same_bytes_as_the_scheduler(case: dict) -> None:
    grant = _grant(case)
    assert grant.message().decode() == case["message"]
    assert grant.tag(SECRET) == case["tag"]
    assert len(grant.tag(SECRET)) <= 100, "YARN's default tag length"


def test_a_queue_path_and_its_leaf_and_rack_case_sign_alike() -> None:
    full = dataclasses.replace(GRANT, queue="root.default", racks=("/RACK-C", "/rack-a"))
    assert full.tag(SECRET) == GRANT.tag(SECRET)


@pytest.mark.parametrize("change", [
    {"name": "daily-join-2"}, {"user": "mallory"}, {"queue": "urgent"}, {"racks": ("/rack-a", "/rack-b")},
    {"racks": ("/rack-a",)}, {"priority": 8}, {"valid_from": 1764115200, "valid_until": 1764201600},
], ids=str)
def test_every_field_a_grant_covers_changes_its_hmac(change: dict) -> None:
    """A tag copied onto another application, user, rack set, priority or period no longer verifies."""
    forged = dataclasses.replace(GRANT, **change)
    assert forged.tag(SECRET).rpartition(":")[2] != GRANT.tag(SECRET).rpartition(":")[2]
    assert GRANT.tag(b"another secret") != GRANT.tag(SECRET)


def test_fields_cannot_be_shifted_into_each_other() -> None:
    """Netstrings: moving characters from the name into the user gives other bytes."""
    shifted = dataclasses.replace(GRANT, name="daily-join,5:alice", user="")
    assert shifted.message() != GRANT.message() and shifted.tag(SECRET) != GRANT.tag(SECRET)


def test_the_secret_is_read_as_the_resourcemanager_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "grant.secret"
    path.write_text("  corral-test-secret\n")
    assert read_secret(path) == SECRET == secret_of(" corral-test-secret ")
    assert secret_of("  ") is None and secret_of(None) is None
    path.write_text("\n")
    with pytest.raises(InputError, match="grant_secret_file .* is empty"):
        read_secret(path)
    with pytest.raises(InputError, match="grant_secret_file .*cannot read"):
        read_secret(tmp_path / "missing")


def test_a_grant_period_must_end_after_it_starts() -> None:
    start = datetime(2025, 11, 25, tzinfo=UTC)
    assert grant_period(start, start.replace(day=26)) == (GRANT.valid_from, GRANT.valid_until)
    with pytest.raises(InputError, match="must end after it starts"):
        grant_period(start, start)


def test_the_secret_reaches_the_rm_client_from_a_description_or_the_airflow_connections(tmp_path: Path) -> None:
    path = tmp_path / "grant.secret"
    path.write_text("corral-test-secret\n")
    description = {"webhdfs": "http://127.0.0.1:1", "resourcemanager": "http://127.0.0.1:2", "jobhistory": "http://127.0.0.1:3",
                   "grant_secret_file": str(path)}
    assert Cluster.from_description(description).rm.grant_secret == SECRET
    assert Cluster.from_description({**description, "grant_secret_file": None}).rm.grant_secret is None
    connections = {}
    for name, value in connection_env(description).items():
        doc = json.loads(value)
        connections[name.removeprefix("AIRFLOW_CONN_").lower()] = SimpleNamespace(
            host=doc["host"], port=doc["port"], password=None, extra_dejson=doc["extra"])
    assert Cluster(endpoints_from(connections)).rm.grant_secret == SECRET
    connections[RESOURCEMANAGER].password = " from-the-password "
    assert grant_secret_from(connections) == b"from-the-password"
