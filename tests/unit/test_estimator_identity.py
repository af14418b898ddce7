"""Recurring-job identity: instances of the same script share a key, different scripts do not."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.errors import InputError
from estimator.identity import RecurringKey, strip_volatile, tagged_key


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


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/logs/clicks/ds=2026-11-21/hr=05", "/logs/clicks/ds=*/hr=*"),
        ("hdfs://nn.example.com:8020/logs/clicks/2010-10-02", "/logs/clicks"),
        ("/warehouse/t/country=US/dt=20261121", "/warehouse/t/country=US/dt=*"),  # a partition without a digit is kept
        ("/data/events/2026-11-21T05/", "/data/events"),
        ("/b/x,/a/2026/11/21", "/a+/b/x"),
    ],
)
def test_input_paths_fold_dates_and_partitions(path, key):
    assert RecurringKey(mode="input_path").key("name", path) == key


def test_key_option_names_a_mode_or_a_column():
    assert RecurringKey.from_option("input_path").mode == "input_path"
    column = RecurringKey.from_option("pipeline")
    assert (column.mode, column.column) == ("column", "pipeline")
    assert column.key("q-1", None, "etl-2026-01-05") == "etl" and column.key("daily-2026-01-05") == "daily"


def test_a_corral_key_tag_names_the_recurring_job_whatever_the_name_says() -> None:
    assert tagged_key("corral-plan:p,corral-key:daily-clicks,corral-job:j", "report-7") == "daily-clicks"
    assert tagged_key(["corral-key:daily-clicks"], "Daily-Clicks") == "Daily-Clicks"  # YARN lower-cased the tag
    assert tagged_key("", "report") == "report" and tagged_key(None, "report") == "report"
    assert tagged_key("other,tags", "report") == "report"
