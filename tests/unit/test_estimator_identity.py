"""Recurring-job identity: instances of the same script share a key, different scripts do not."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.errors import InputError
from estimator.identity import RecurringKey, strip_volatile


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("daily-clicks-2026-11-21", "daily-clicks"),
        ("daily-clicks-2026-11-22T14:00:00Z", "daily-clicks"),
        ("report.20261121", "report"),
        ("hourly-agg-1731000000", "hourly-agg"),
        ("job_1700000000000_0003 sort", "sort"),
        ("etl 3f2c9a1b-1d2e-4f50-8a9b-0c1d2e3f4a5b", "etl"),
        ("stage1-foo", "stage1-foo"),
    ],
)
def test_dates_times_and_ids_are_stripped(name, key):
    assert strip_volatile(name) == key


def test_input_path_mode_strips_date_directories():
    key = RecurringKey(mode="input_path")
    assert key.key("anything", "/logs/clicks/2026/11/21") == key.key("other", "/logs/clicks/2026/11/22") == "/logs/clicks"


def test_pattern_mode_uses_the_first_group_and_falls_back_to_the_stripped_name():
    key = RecurringKey(mode="pattern", pattern=r"^(\w+)__")
    assert key.key("pipeline__run 7") == "pipeline"
    assert key.key("adhoc-2026-01-01") == "adhoc"


def test_bad_pattern_is_an_input_error():
    with pytest.raises(InputError, match="key_pattern"):
        RecurringKey(mode="pattern", pattern="(")


@settings(max_examples=200, deadline=None)
@given(base=st.from_regex(r"[a-z]{1,8}(-[a-z]{1,8}){0,2}", fullmatch=True), date=st.dates(date(1970, 1, 1), date(2100, 1, 1)), seq=st.integers(100000, 10**12))
def test_instances_share_a_key_and_it_is_safe_in_a_job_name(base, date, seq):
    a = strip_volatile(f"{base}-{date.isoformat()}")
    b = strip_volatile(f"{base}_{date.strftime('%Y%m%d')}_{seq}")
    assert a == b == base
    assert not any(c in a for c in " ,;")
