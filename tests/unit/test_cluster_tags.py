"""Rack-set tags: the encoding shared with java_patch's RackSetTags (docs/rack-tags.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.cluster.tags import MAX_TAG_CHARS, CorralTags, MalformedRackSetError, key_tag, parse_rack_set, period_id
from corral_yarn.errors import InputError

rack = st.from_regex(r"(/(dc[0-2]|row-[0-2])){0,2}/[a-z0-9][a-z0-9._\-]{0,30}", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(racks=st.lists(rack, min_size=0, max_size=16), plan=st.from_regex(r"[A-Za-z0-9_-]{1,40}", fullmatch=True))
def test_encode_then_decode_gives_back_the_rack_set(racks: list[str], plan: str) -> None:
    tags = CorralTags(plan, "job-1", tuple(racks)).encode()
    assert all(len(t) <= MAX_TAG_CHARS for t in tags)
    decoded = CorralTags.decode(tags)
    assert decoded is not None
    assert decoded.racks == tuple(sorted(set(racks)))
    assert decoded.plan_id == plan.lower()


def test_tags_are_numbered_from_zero_and_lower_case() -> None:
    racks = tuple(f"/Rack-{i:03d}-with-a-long-name" for i in range(10))
    tags = CorralTags("P1", "Job", racks).encode()
    assert tags[:2] == ["corral-plan:p1", "corral-job:job"]
    numbers = [int(t.split(":")[0].removeprefix("corral-racks-")) for t in tags[2:]]
    assert numbers == list(range(len(numbers))) and len(numbers) > 1
    assert all(t == t.lower() for t in tags)


def test_decode_reads_yarns_comma_joined_string_and_ignores_other_tags() -> None:
    decoded = CorralTags.decode("other,corral-job:wc,corral-racks-0:/rack-a;/rack-c,corral-plan:p")
    assert decoded == CorralTags("p", "wc", ("/rack-a", "/rack-c"))
    assert CorralTags.decode(["corral-racks-0:/rack-a"]) is None


@pytest.mark.parametrize(("plan", "job", "racks", "why"), [
    ("p,1", "j", ("/a",), "commas"),
    ("p", "my job", ("/a",), "spaces"),
    ("p", "j", ("rack-a",), "topology path"),
    ("p", "j", ("/rack a",), "topology path"),
    ("p", "j" * 95, ("/a",), "longer than"),
    ("p", "jöb", ("/a",), "ASCII"),
])
def test_values_that_cannot_be_tags_are_input_errors(plan: str, job: str, racks: tuple[str, ...], why: str) -> None:
    with pytest.raises(InputError, match=why):
        CorralTags(plan, job, racks).encode()


def test_fifty_racks_fit_in_yarns_tag_limits_and_too_many_do_not() -> None:
    assert len(CorralTags("p", "j", tuple(f"/rack-{i:02d}" for i in range(50))).encode()) == 7  # as docs/rack-tags.md
    assert len(CorralTags("p", "j", tuple(f"/dc1/rack-{i:02d}" for i in range(50))).encode()) == 7
    with pytest.raises(InputError, match="more than YARN's default 10"):
        CorralTags("p", "j", tuple(f"/datacenter-1/row-7/rack-{i:03d}" for i in range(60))).encode()


def test_a_rack_with_the_parent_of_the_one_before_is_written_by_its_name() -> None:
    tags = CorralTags("p", "j", ("/dc2/rack-01", "/dc1/rack-02", "/dc1/rack-01", "/top")).encode()
    assert tags[2:] == ["corral-racks-0:/dc1/rack-01;rack-02;/dc2/rack-01;/top"]
    decoded = CorralTags.decode(tags)
    assert decoded is not None and decoded.racks == ("/dc1/rack-01", "/dc1/rack-02", "/dc2/rack-01", "/top")


def test_matches_compares_plan_and_job_case_insensitively() -> None:
    assert CorralTags("P", "WordCount", ()).matches(CorralTags("p", "wordcount", ("/x",)))
    assert not CorralTags("p", "a", ()).matches(CorralTags("p", "b", ()))


VECTORS = json.loads((Path(__file__).parents[1] / "data" / "rack_tag_vectors.json").read_text())


@pytest.mark.parametrize("case", VECTORS["parse"], ids=lambda c: ",".join(c["tags"]) or "none")
def test_shared_vectors_parse_to_the_rack_set_the_scheduler_enforces(case: dict) -> None:
    assert parse_rack_set(case["tags"]) == tuple(case["racks"])
    decoded = CorralTags.decode(["corral-plan:p", "corral-job:j", *case["tags"]])
    assert decoded is not None and decoded.racks == tuple(case["racks"])


@pytest.mark.parametrize("case", VECTORS["malformed"], ids=lambda c: c["why"])
def test_shared_vectors_malformed_tags_are_rejected_and_confine_nothing(case: dict) -> None:
    with pytest.raises(MalformedRackSetError):
        parse_rack_set(case["tags"])
    decoded = CorralTags.decode(["corral-plan:p", "corral-job:j", *case["tags"]])
    assert decoded is not None and decoded.racks == ()  # as the scheduler: scheduled without a rack set


@pytest.mark.parametrize("case", VECTORS["encode"], ids=lambda c: str(len(c["racks"])))
def test_shared_vectors_encode_as_the_scheduler_does(case: dict) -> None:
    assert CorralTags("p", "j", tuple(case["racks"])).encode()[2:] == case["tags"]


def test_the_recurring_key_rides_in_its_own_tag_and_comes_back_lower_cased() -> None:
    tags = CorralTags("p", "j", ("/rack-a",), key="Daily-Clicks").encode()
    assert tags[2] == "corral-key:daily-clicks"
    assert CorralTags.decode(tags) == CorralTags("p", "j", ("/rack-a",), key="daily-clicks")
    assert key_tag(",".join(tags)) == "daily-clicks" and key_tag(["corral-job:j"]) is None
    with pytest.raises(InputError, match="recurring key 'a;b'"):
        CorralTags("p", "j", (), key="a;b").encode()


def test_the_period_rides_in_its_own_tag_after_the_key_and_names_the_plan_entry_with_plan_and_job() -> None:
    start = datetime(2026, 11, 25, tzinfo=UTC)
    assert period_id(start) == "20261125T000000Z" and period_id(datetime(2026, 11, 25, 1, tzinfo=timezone(timedelta(hours=1)))) == "20261125T000000Z"
    tags = CorralTags("p", "j", ("/rack-a",), key="k", period=period_id(start)).encode()
    assert tags[:4] == ["corral-plan:p", "corral-job:j", "corral-key:k", "corral-period:20261125t000000z"]
    assert CorralTags.decode(tags) == CorralTags("p", "j", ("/rack-a",), key="k", period="20261125t000000z")
    assert CorralTags.decode(["corral-plan:p", "corral-job:j"]).period is None
    with pytest.raises(InputError, match="period 'a,b'"):
        CorralTags("p", "j", (), period="a,b").encode()


def test_a_latency_sensitive_job_carries_its_function_in_its_own_tag() -> None:
    tags = CorralTags("p", "j", ("/rack-a",), key="k", period="20261125T000000Z", latency="Memcached").encode()
    assert tags[:5] == ["corral-plan:p", "corral-job:j", "corral-key:k", "corral-period:20261125t000000z", "corral-latency:memcached"]
    assert CorralTags.decode(tags).latency == "memcached" and CorralTags.decode(tags[:2]).latency is None
    assert not any(t.startswith("corral-latency:") for t in CorralTags("p", "j", ("/rack-a",)).encode())
    with pytest.raises(InputError, match="latency function 'a b'"):
        CorralTags("p", "j", (), latency="a b").encode()


def test_runs_of_one_plan_id_in_two_periods_are_different_applications() -> None:
    today, tomorrow = CorralTags("p", "j", (), period="20261125T000000Z"), CorralTags("p", "j", (), period="20261126t000000z")
    assert not today.matches(tomorrow) and today.matches(CorralTags("P", "J", (), period="20261125t000000z"))
    assert today.matches(CorralTags("p", "j", ()))  # an application submitted before periods were tagged
