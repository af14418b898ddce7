"""Charts for reports, drawn with matplotlib's object API on the Agg canvas (no pyplot, no display).

Each function takes plain numbers and labels (not contracts) and returns PNG bytes, so any report
(plan, simulation, estimation) can use them.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.ticker import FuncFormatter, MaxNLocator
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

DPI = 110
WIDTH_IN = 12.0
_PALETTE = colormaps["tab20"].colors
_MAX_LANE_LABELS = 40
_LABEL_FONT = FontProperties(size=7)
_HALF_BAR = 0.43  # a bar fills 86 % of its lane; the gap separates racks


@dataclass(frozen=True)
class Bar:
    """One job on a Gantt chart: the lanes (racks) it occupies from ``start`` to ``finish``.

    ``labels`` are candidates, most informative first; the first that fits inside the bar is drawn.
    """

    lanes: tuple[int, ...]
    start: float
    finish: float
    labels: tuple[str, ...]
    color: int


@dataclass(frozen=True)
class Marker:
    """A vertical reference line on a time axis (e.g. the makespan or a lower bound)."""

    x: float
    label: str
    color: str = "black"
    linestyle: str = "--"


@dataclass(frozen=True)
class Panel:
    """One horizontal bar comparison: a few labelled values and how to print them."""

    title: str
    labels: Sequence[str]
    values: Sequence[float]
    fmt: Callable[[float], str]


def _new_figure(height_in: float) -> tuple[Figure, FigureCanvasAgg]:
    fig = Figure(figsize=(WIDTH_IN, height_in), dpi=DPI, layout="constrained")
    return fig, FigureCanvasAgg(fig)


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def _spans(lanes: Sequence[int]) -> list[tuple[int, int]]:
    """Runs of consecutive lanes as (first, last): a job on racks 0,1,2,5 draws two blocks."""
    runs: list[tuple[int, int]] = []
    for lane in sorted(lanes):
        if runs and lane == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], lane)
        else:
            runs.append((lane, lane))
    return runs


def _text_color(color: tuple[float, float, float]) -> str:
    r, g, b = to_rgb(color)
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def _thin_lane_ticks(ax, lanes: Sequence[str]) -> None:
    step = max(1, int(np.ceil(len(lanes) / _MAX_LANE_LABELS)))
    ticks = list(range(0, len(lanes), step))
    ax.set_yticks(ticks, [lanes[k] for k in ticks], fontsize=8 if step == 1 else 7)


def gantt_png(lanes: Sequence[str], bars: Sequence[Bar], title: str, markers: Sequence[Marker] = (),
              xlabel: str = "time (s)", lane_label: str = "rack", overlay: Sequence[Bar] = (), overlay_label: str = "actual") -> bytes:
    """A lanes x time Gantt chart (lane 0 on top), each bar labelled when a label fits inside it; ``overlay``
    bars (e.g. what actually ran) are drawn over them as hatched outlines in the middle of their lanes. Bars on a lane
    at the same time share it in bands (``_bands``), the overlay's with levels of their own."""
    fig, canvas = _new_figure(_gantt_height(len(lanes), bars))
    ax = fig.add_subplot()
    placed = _draw_bars(ax, bars)
    if overlay:
        _draw_overlay(ax, overlay, overlay_label)
    for m in markers:
        ax.axvline(m.x, color=m.color, linestyle=m.linestyle, linewidth=1.2, label=m.label)
    ax.set_ylim(max(len(lanes), 1) - 0.5, -0.5)
    _thin_lane_ticks(ax, lanes)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(lane_label)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="x", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    if markers or overlay:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    fig.draw_without_rendering()  # settle the layout before measuring label sizes
    renderer = canvas.get_renderer()
    for bar, y0, y1, text_color in placed:
        _label_bar(ax, renderer, bar, y0, y1, text_color)
    return _png(fig)


def _gantt_height(lanes: int, bars: Sequence[Bar]) -> float:
    """Inches: 0.34 a lane for each band its busiest bars split it into (``_levels``' depth), so that jobs sharing a
    rack keep a readable band; 3.2 to 18."""
    depth = max((d for _, d in _levels(bars)), default=1)
    return min(18.0, max(3.2, 1.3 + 0.34 * lanes * depth))


def _overlaps(a: Bar, b: Bar) -> bool:
    """Whether two bars hold a lane at the same time; touching ends do not (one job follows the other)."""
    return a.start < b.finish and b.start < a.finish and not set(a.lanes).isdisjoint(b.lanes)


def _levels(bars: Sequence[Bar]) -> list[tuple[int, int]]:
    """Each bar's (level, depth). Greedy interval colouring by start time gives a bar the lowest level no earlier bar
    overlapping it (``_overlaps``) has; its depth is the number of levels in use among the bars linked to it by
    overlaps (its connected component), so a bar that overlaps none is (0, 1) and keeps its whole lanes, and a pair
    sharing a rack splits its lanes in two even where three other jobs share one elsewhere."""
    order = sorted(range(len(bars)), key=lambda i: (bars[i].start, bars[i].finish))
    level, rows, cols = np.zeros(len(bars), dtype=np.int64), [], []
    for n, i in enumerate(order):
        clashes = [j for j in order[:n] if _overlaps(bars[i], bars[j])]
        taken = {level[j] for j in clashes}
        level[i] = next(k for k in range(len(clashes) + 1) if k not in taken)
        rows += [i] * len(clashes)
        cols += clashes
    _, group = connected_components(coo_array((np.ones(len(rows)), (rows, cols)), shape=(len(bars), len(bars))), directed=False)
    depth = np.zeros(len(bars), dtype=np.int64)
    np.maximum.at(depth, group, level + 1)
    return list(zip(level.tolist(), depth[group].tolist()))


def _bands(bars: Sequence[Bar], fill: float = 1.0) -> list[list[tuple[float, float]]]:
    """Each bar's blocks as (y0, y1): one per run of consecutive lanes (``_spans``) for a bar of depth 1, else one per
    lane in the band of its level, the lane's height split evenly among its depth (``_levels``); ``fill`` is the
    share of its band a block fills, about the band's middle."""
    placed = []
    for bar, (level, depth) in zip(bars, _levels(bars)):
        half, middle = fill * _HALF_BAR / depth, (2 * level + 1 - depth) * _HALF_BAR / depth
        blocks = _spans(bar.lanes) if depth == 1 else [(lane, lane) for lane in sorted(bar.lanes)]
        placed.append([(first + middle - half, last + middle + half) for first, last in blocks])
    return placed


def _box(bar: Bar, y0: float, y1: float) -> list[tuple[float, float]]:
    return [(bar.start, y0), (bar.finish, y0), (bar.finish, y1), (bar.start, y1)]


def _draw_bars(ax, bars: Sequence[Bar]) -> list[tuple[Bar, float, float, str]]:
    """One rectangle per block of each bar (``_bands``); returns the blocks to label."""
    placed, boxes, colors = [], [], []
    for bar, blocks in zip(bars, _bands(bars)):
        color = _PALETTE[bar.color % len(_PALETTE)]
        for y0, y1 in blocks:
            boxes.append(_box(bar, y0, y1))
            colors.append(color)
            placed.append((bar, y0, y1, _text_color(color)))
    ax.add_collection(PolyCollection(boxes, facecolors=colors, edgecolors="white", linewidths=0.6))
    ax.set_xlim(0, 1.02 * max((b.finish for b in bars), default=1.0))
    return placed


def _draw_overlay(ax, bars: Sequence[Bar], label: str) -> None:
    """Hatched outlines half as high as the blocks of ``_bands`` (with the overlay's own levels), in each bar's colour
    edged black; the x range grows to hold them."""
    boxes, colors = [], []
    for bar, blocks in zip(bars, _bands(bars, fill=0.5)):
        boxes.extend(_box(bar, y0, y1) for y0, y1 in blocks)
        colors.extend([_PALETTE[bar.color % len(_PALETTE)]] * len(blocks))
    ax.add_collection(PolyCollection(boxes, facecolors=colors, edgecolors="black", linewidths=1.0, hatch="///", alpha=0.9, label=label))
    ax.set_xlim(0, 1.02 * max(ax.get_xlim()[1] / 1.02, max((b.finish for b in bars), default=1.0)))


def _label_bar(ax, renderer, bar: Bar, y0: float, y1: float, text_color: str) -> None:
    """Put the first candidate label that fits the block from y0 to y1 (horizontal, then rotated); else none."""
    (px0, py0), (px1, py1) = ax.transData.transform([(bar.start, y0), (bar.finish, y1)])
    room = (abs(px1 - px0) - 6.0, abs(py1 - py0) - 1.0)
    for rotation in (0, 90):
        for label in bar.labels:
            w, h, _ = renderer.get_text_width_height_descent(label, _LABEL_FONT, ismath=False)
            w, h = (w, h) if rotation == 0 else (h, w)
            if w <= room[0] and h <= room[1]:
                ax.text((bar.start + bar.finish) / 2, (y0 + y1) / 2, label, ha="center", va="center", fontproperties=_LABEL_FONT,
                        color=text_color, rotation=rotation, clip_on=True, in_layout=False)
                return


def lane_bars_png(lanes: Sequence[str], values: Sequence[float], title: str, ylabel: str, fmt: Callable[[float], str]) -> bytes:
    """One bar per lane (e.g. bytes per rack) with the mean drawn across."""
    fig, _ = _new_figure(3.6)
    ax = fig.add_subplot()
    x = np.arange(len(lanes))
    ax.bar(x, values, color=_PALETTE[0], edgecolor="white", linewidth=0.5)
    mean = float(np.mean(values)) if len(values) else 0.0
    ax.axhline(mean, color="#d62728", linestyle="--", linewidth=1.2, label=f"mean {fmt(mean)}")
    ax.set_ylim(0, 1.2 * max(max(values, default=0.0), 1e-12))  # headroom for the legend
    step = max(1, int(np.ceil(len(lanes) / _MAX_LANE_LABELS)))
    ax.set_xticks(x[::step], [lanes[k] for k in x[::step]], rotation=90 if len(lanes) > 10 else 0, fontsize=8)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
    ax.yaxis.set_major_locator(MaxNLocator(6))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="upper right", fontsize=8)
    return _png(fig)


def comparison_png(panels: Sequence[Panel]) -> bytes:
    """Side-by-side horizontal bar comparisons, each bar annotated with its value."""
    fig, _ = _new_figure(2.4)
    for k, panel in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1)
        y = np.arange(len(panel.labels))
        ax.barh(y, panel.values, color=[_PALETTE[2 * i % len(_PALETTE)] for i in y], height=0.6)
        ax.set_yticks(y, list(panel.labels), fontsize=9)
        ax.invert_yaxis()
        top = max(panel.values, default=0.0) or 1.0
        ax.set_xlim(0, top * 1.35)
        for yi, v in zip(y, panel.values):
            ax.text(v + top * 0.02, yi, panel.fmt(v), va="center", fontsize=9)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _, f=panel.fmt: f(v)))
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.set_title(panel.title, fontsize=11)
    return _png(fig)


def cdf_png(samples: dict[str, Sequence[float]], title: str, xlabel: str) -> bytes:
    """One empirical CDF per label (e.g. job completion times per scheduler)."""
    fig, _ = _new_figure(3.6)
    ax = fig.add_subplot()
    for k, (label, values) in enumerate(samples.items()):
        ordered = sorted(values)
        if ordered:
            ax.step(ordered, np.arange(1, len(ordered) + 1) / len(ordered), where="post", label=label, color=_PALETTE[2 * k % len(_PALETTE)])
    ax.set(xlabel=xlabel, ylabel="fraction", ylim=(0, 1.02))
    ax.set_title(title, fontsize=11)
    ax.grid(color="#ddd", linewidth=0.6)
    ax.legend(loc="lower right", fontsize=8)
    return _png(fig)


def series_png(times: Sequence[float], series: dict[str, Sequence[float]], title: str, ylabel: str) -> bytes:
    """Lines over time (e.g. each rack link's utilisation); labels ending in 'down' are dashed."""
    fig, _ = _new_figure(3.6)
    ax = fig.add_subplot()
    for k, (label, values) in enumerate(series.items()):
        ax.plot(times, values, label=label, linewidth=1.0, color=_PALETTE[2 * (k // 2) % len(_PALETTE)],
                linestyle="--" if label.endswith("down") else "-")
    ax.set(xlabel="time (s)", ylabel=ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(color="#ddd", linewidth=0.6)
    ax.legend(fontsize=7, ncol=3, loc="upper right")
    return _png(fig)


@dataclass(frozen=True)
class Line:
    """One line of a line chart; ``style`` is a matplotlib line style ('-', '--', ':')."""

    label: str
    y: Sequence[float]
    style: str = "-"
    marker: str | None = None


def lines_png(x: Sequence[float], lines: Sequence[Line], title: str, xlabel: str, ylabel: str,
              fmt_x: Callable[[float], str] = str, fmt_y: Callable[[float], str] = str) -> bytes:
    """Lines over a shared x (e.g. latency reduction against budget), each in its own colour unless dashed."""
    fig, _ = _new_figure(3.6)
    ax = fig.add_subplot()
    for k, line in enumerate(lines):
        ax.plot(x, line.y, label=line.label, linestyle=line.style, marker=line.marker, linewidth=1.3,
                color=_PALETTE[2 * k % len(_PALETTE)])
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_x(v)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_y(v)))
    ax.set_title(title, fontsize=11)
    ax.grid(color="#ddd", linewidth=0.6)
    ax.legend(fontsize=8, loc="best")
    return _png(fig)


def scatter_png(panels: Sequence[tuple[str, Sequence[float], Sequence[float]]], xlabel: str, ylabel: str,
                fmt: Callable[[float], str] = str) -> bytes:
    """Side-by-side scatter plots of (x, y) pairs against the diagonal y = x (e.g. training against test)."""
    fig, _ = _new_figure(3.6)
    for k, (title, xs, ys) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1)
        ax.scatter(xs, ys, s=14, color=_PALETTE[0])
        low, high = min([*xs, *ys, 0.0]), max([*xs, *ys, 1e-12])
        ax.plot([low, high], [low, high], color="#999", linewidth=0.8, linestyle="--")
        ax.set(xlabel=xlabel, ylabel=ylabel)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
        ax.set_title(title, fontsize=11)
        ax.grid(color="#ddd", linewidth=0.6)
    return _png(fig)
