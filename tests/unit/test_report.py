"""The plan report: what the page says, the PNGs, and that a report directory appears whole or not at all."""

from __future__ import annotations

import base64
import io as stdio
import re
from pathlib import Path

import pytest
from matplotlib.image import imread

from corral_yarn.contracts import Plan
from corral_yarn.errors import InputError
from corral_yarn.planner.build import build_plan
from corral_yarn.report import charts, html, render_plan_report, write_plan_report
from corral_yarn.report.plan import RACK_INPUT_PNG, SCHEDULE_PNG, SUMMARY_PNG, _bars
from corral_yarn.workloads import example_cluster, w1_like

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def batch() -> tuple[Plan, object, object]:
    cluster, workload = example_cluster(4, 5), w1_like(10, seed=5)
    return build_plan(workload, cluster, "batch"), cluster, workload


@pytest.fixture(scope="module")
def files(batch: tuple) -> dict[str, bytes]:
    return render_plan_report(*batch)


def page_text(files: dict[str, bytes]) -> str:
    return files[html.INDEX].decode("utf-8")


def test_report_files_are_a_page_and_three_pngs(files: dict[str, bytes]) -> None:
    assert sorted(files) == sorted([html.INDEX, SCHEDULE_PNG, RACK_INPUT_PNG, SUMMARY_PNG])
    for name in (SCHEDULE_PNG, RACK_INPUT_PNG, SUMMARY_PNG):
        assert files[name].startswith(PNG_MAGIC)


def test_page_is_self_contained_and_embeds_each_png(files: dict[str, bytes]) -> None:
    text = page_text(files)
    embedded = [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', text)]
    assert embedded == [files[SUMMARY_PNG], files[SCHEDULE_PNG], files[RACK_INPUT_PNG]]
    assert "http://" not in text and "https://" not in text  # nothing fetched from elsewhere


def test_page_carries_the_figures(batch: tuple, files: dict[str, bytes]) -> None:
    plan, _, _ = batch
    text = page_text(files)
    assert html.fmt_seconds(plan.objective_s) in text
    assert html.fmt_seconds(plan.lower_bound_s) in text
    assert html.fmt_percent(plan.gap) in text
    assert f"{plan.rack_input_cov:.3f}" in text
    assert html.fmt_bytes(plan.cross_rack_shuffle_bytes) in text
    assert html.fmt_bytes(plan.all_racks_cross_rack_shuffle_bytes) in text
    for job in plan.jobs:
        row = re.search(rf"<tr><td class=\"num\">{job.order}</td><td>{job.name}</td><td class=\"num\">{job.priority}</td>.*?</tr>", text)
        assert row, job.name
        assert html.fmt_seconds(job.planned_start_s) in row.group(0) and html.fmt_seconds(job.planned_finish_s) in row.group(0)
        assert ", ".join(job.racks) in row.group(0)
    assert "Cluster" in text and "5.00:1" in text  # the cluster section, from --cluster


def test_report_without_cluster_or_jobs(batch: tuple) -> None:
    plan, _, _ = batch
    text = page_text(render_plan_report(plan))
    assert "<h2>Cluster</h2>" not in text and "<th class=\"num\">tasks</th>" not in text


def test_report_without_a_bound(batch: tuple) -> None:
    _, cluster, workload = batch
    plan = build_plan(workload, cluster, "batch", with_bound=False)
    text = page_text(render_plan_report(plan))
    assert "not computed" in text and "n/a" in text


def test_names_are_escaped(batch: tuple) -> None:
    plan, _, _ = batch
    job = plan.jobs[0].model_copy(update={"name": "<script>x</script>"})
    text = page_text(render_plan_report(plan.model_copy(update={"jobs": [job, *plan.jobs[1:]]})))
    assert "<script>" not in text and "&lt;script&gt;x&lt;/script&gt;" in text


def test_report_checks_the_plan_against_its_inputs(batch: tuple) -> None:
    plan, _, workload = batch
    with pytest.raises(InputError, match="the plan uses racks the cluster does not have"):
        render_plan_report(plan, example_cluster(2, 5))
    with pytest.raises(InputError, match="the plan has jobs the jobs file does not"):
        render_plan_report(plan, workload=w1_like(3, seed=5))


def test_gantt_is_sized_for_many_jobs_and_racks() -> None:
    cluster, workload = example_cluster(40, 4), w1_like(60, seed=2, arrival_span_s=300.0)
    plan = build_plan(workload, cluster, "online", with_bound=False)
    image = imread(stdio.BytesIO(charts.gantt_png(cluster.rack_names, _bars(plan, cluster.rack_names), "title")))
    height, width = image.shape[:2]
    assert width == int(charts.WIDTH_IN * charts.DPI)
    assert height / 40 >= 20  # at least 20 pixels per rack lane


def test_spans_group_consecutive_lanes() -> None:
    assert charts._spans([5, 0, 1, 2]) == [(0, 2), (5, 5)]
    assert charts._spans([3]) == [(3, 3)]


def test_labels_go_where_they_fit() -> None:
    bars = [charts.Bar((0,), 0.0, 1000.0, ("a-long-enough-bar", "#0"), 0), charts.Bar((1,), 0.0, 1.0, ("a-bar-far-too-short", "#1"), 1)]
    fig, canvas = charts._new_figure(3.0)
    ax = fig.add_subplot()
    ax.set_xlim(0, 1000)
    ax.set_ylim(1.5, -0.5)
    fig.draw_without_rendering()
    for bar, lane in zip(bars, (0, 1)):
        charts._label_bar(ax, canvas.get_renderer(), bar, lane, lane, "black")
    assert [t.get_text() for t in ax.texts] == ["a-long-enough-bar"]  # the 1-second bar gets no label


@pytest.mark.parametrize(("n", "text"), [(0, "0 B"), (999, "999 B"), (1234, "1.23 kB"), (320e9, "320 GB"), (999.7e9, "1000 GB"), (1.86e12, "1.86 TB")])
def test_fmt_bytes(n: float, text: str) -> None:
    assert html.fmt_bytes(n) == text


def test_publish_renames_a_new_directory_into_place(tmp_path: Path) -> None:
    index = html.publish(tmp_path / "a" / "report", {html.INDEX: b"<html>", "x.png": b"png"})
    assert index == tmp_path / "a" / "report" / html.INDEX and index.read_bytes() == b"<html>"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["report"]  # no temporary directory left


def test_publish_into_an_existing_directory_keeps_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / html.INDEX).write_text("old")
    html.publish(tmp_path, {html.INDEX: b"new"})
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / html.INDEX).read_text() == "new"


def test_publish_failure_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(self: Path, target: Path) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(Path, "rename", fail)
    with pytest.raises(OSError):
        html.publish(tmp_path / "report", {html.INDEX: b"x"})
    assert list(tmp_path.iterdir()) == []


def test_write_plan_report_returns_the_index(batch: tuple, tmp_path: Path) -> None:
    plan, cluster, workload = batch
    index = write_plan_report(plan, tmp_path / "r", cluster, workload)
    assert index.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (tmp_path / "r" / SCHEDULE_PNG).read_bytes().startswith(PNG_MAGIC)


def test_odd_but_valid_plans_render(batch: tuple) -> None:
    plan, _, _ = batch
    empty = plan.model_copy(update={"jobs": [], "rack_input_bytes": {}, "cross_rack_shuffle_bytes": 0.0, "all_racks_cross_rack_shuffle_bytes": 0.0})
    assert render_plan_report(empty)[SCHEDULE_PNG].startswith(PNG_MAGIC)
    stray = plan.jobs[0].model_copy(update={"racks": ["/elsewhere"]})
    text = page_text(render_plan_report(plan.model_copy(update={"jobs": [stray, *plan.jobs[1:]]})))
    assert "/elsewhere" in text
