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


def test_gantt_grows_with_the_bands_of_jobs_sharing_a_rack() -> None:
    alone = [charts.Bar((k,), 0.0, 100.0, ("job",), k) for k in range(6)]
    sharing = [charts.Bar((0,), 10.0 * k, 100.0, ("job",), k) for k in range(3)] + alone[1:]  # three jobs on rack 0 at once
    heights = [imread(stdio.BytesIO(charts.gantt_png([f"/r{k}" for k in range(6)], bars, "t"))).shape[0] for bars in (alone, sharing)]
    assert heights == [pytest.approx(charts.DPI * (1.3 + 0.34 * 6 * depth), abs=2) for depth in (1, 3)]  # a lane 3 bands high


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
        charts._label_bar(ax, canvas.get_renderer(), bar, lane - charts._HALF_BAR, lane + charts._HALF_BAR, "black")
    assert [t.get_text() for t in ax.texts] == ["a-long-enough-bar"]  # the 1-second bar gets no label


H = charts._HALF_BAR


def _bar(lanes: tuple[int, ...], start: float, finish: float) -> charts.Bar:
    return charts.Bar(lanes, start, finish, ("job",), 0)


def _disjoint(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return min(a[1], b[1]) - max(a[0], b[0]) < 1e-9  # touching bands, up to rounding


def test_bars_apart_in_time_keep_their_whole_lanes() -> None:
    bars = [_bar((0, 1, 2, 5), 0.0, 10.0), _bar((0,), 10.0, 20.0), _bar((1,), 10.0, 15.0), _bar((1,), 15.0, 30.0)]  # ends touch
    assert charts._bands(bars) == [[(-H, 2 + H), (5 - H, 5 + H)], [(-H, H)], [(1 - H, 1 + H)], [(1 - H, 1 + H)]]


def test_a_whole_rack_plan_draws_one_block_per_run_of_racks(batch: tuple) -> None:
    plan, cluster, _ = batch
    bars = _bars(plan, cluster.rack_names)
    assert charts._bands(bars) == [[(first - H, last + H) for first, last in charts._spans(bar.lanes)] for bar in bars]


def test_bars_at_once_on_a_lane_get_disjoint_bands_inside_it() -> None:
    (a,), (b,) = charts._bands([_bar((0,), 0.0, 10.0), _bar((0,), 5.0, 20.0)])
    assert _disjoint(a, b) and a[0] == pytest.approx(-H) and b[1] == pytest.approx(H)  # together they fill the lane
    assert a[1] - a[0] == pytest.approx(H)


def test_a_bar_on_three_lanes_keeps_one_level_across_them() -> None:
    one_rack = [_bar((lane,), 0.0, 10.0 + lane) for lane in range(3)]
    wide, *rest = charts._bands([_bar((0, 1, 2), 2.0, 8.0), *one_rack])
    assert len(wide) == 3  # one block per lane: a block over three lanes would cover the others' bands
    assert len({round(y0 - lane, 9) for lane, (y0, _) in enumerate(wide)}) == 1  # the same band in every lane
    assert all(_disjoint(w, r) for w, (r,) in zip(wide, rest))


def test_each_group_of_bars_at_once_splits_its_lanes_by_its_own_levels() -> None:
    pair = [_bar((0,), 0.0, 10.0), _bar((0,), 0.0, 10.0)]
    triple = [_bar((1,), 0.0, 10.0), _bar((1,), 0.0, 10.0), _bar((1,), 5.0, 10.0)]
    heights = [y1 - y0 for (y0, y1), in charts._bands([*pair, *triple])]
    assert heights == pytest.approx([H, H, 2 * H / 3, 2 * H / 3, 2 * H / 3])


def test_the_overlay_gives_runs_at_once_on_a_rack_their_own_bands() -> None:
    fig, _ = charts._new_figure(3.0)
    ax = fig.add_subplot()
    charts._draw_overlay(ax, [_bar((0,), 0.0, 10.0), _bar((0,), 5.0, 20.0), _bar((1,), 0.0, 20.0)], "actual")
    spans = [(path.vertices[:, 1].min(), path.vertices[:, 1].max()) for path in ax.collections[0].get_paths()]
    assert _disjoint(spans[0], spans[1])
    assert spans[2] == pytest.approx((1 - H / 2, 1 + H / 2))  # a run alone keeps the middle half of its lane


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
