"""Reports as self-contained HTML pages plus PNGs: pure rendering of contracts, written all at once."""

from corral_yarn.report.plan import render_plan_report, write_plan_report

__all__ = ["render_plan_report", "write_plan_report"]
