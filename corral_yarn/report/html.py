"""Building blocks of every corral-yarn report: a self-contained HTML page, tables, embedded PNGs,
number formats, and publishing a report directory all at once (nothing partial on failure).

Reports are pure functions from contracts to ``{file name: bytes}``; :func:`publish` writes them.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from corral_yarn.io import write_tree

INDEX = "index.html"

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.8em;
     border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.subtitle { color: #666; margin-top: 0; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f4f4f4; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.wrap { max-width: 28em; word-break: break-word; font-size: 0.9em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
.note { color: #555; font-size: 0.9em; }
"""


def escape(text: object) -> str:
    return html.escape(str(text), quote=True)


def page(title: str, subtitle: str, sections: Iterable[str]) -> str:
    """A whole HTML document with the shared style; ``sections`` are HTML fragments."""
    body = "\n".join(sections)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n<p class=\"subtitle\">{escape(subtitle)}</p>\n{body}\n</body>\n</html>\n"
    )


def section(title: str, *fragments: str) -> str:
    return f"<section>\n<h2>{escape(title)}</h2>\n" + "\n".join(fragments) + "\n</section>"


def paragraph(text: str) -> str:
    return f"<p class=\"note\">{escape(text)}</p>"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], numeric: Iterable[int] = (), wrap: Iterable[int] = ()) -> str:
    """An HTML table of escaped cells; columns in ``numeric`` are right-aligned, in ``wrap`` wrapped."""
    num, wrapped = set(numeric), set(wrap)

    def cls(k: int) -> str:
        return ' class="num"' if k in num else ' class="wrap"' if k in wrapped else ""

    head = "".join(f"<th{cls(k) if k in num else ''}>{escape(h)}</th>" for k, h in enumerate(headers))
    body = "\n".join("<tr>" + "".join(f"<td{cls(k)}>{escape(c)}</td>" for k, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def key_values(pairs: Iterable[tuple[str, object]]) -> str:
    """A two-column table of labelled figures."""
    rows = "\n".join(f"<tr><th>{escape(k)}</th><td class=\"num\">{escape(v)}</td></tr>" for k, v in pairs)
    return f"<table>\n<tbody>\n{rows}\n</tbody>\n</table>"


def figure(png: bytes, file_name: str, caption: str) -> str:
    """The PNG embedded in the page (so index.html stands alone), linked to its file beside the page."""
    data = base64.b64encode(png).decode("ascii")
    return (
        f"<figure><a href=\"{escape(file_name)}\"><img alt=\"{escape(caption)}\" "
        f"src=\"data:image/png;base64,{data}\"></a>\n<figcaption>{escape(caption)}</figcaption></figure>"
    )


def fmt_bytes(n: float) -> str:
    """Three significant digits in decimal units, as Hadoop's reports print them: 1.23 GB, 320 GB."""
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            value = n / scale
            return f"{value:.3g} {unit}" if abs(value) < 999.5 else f"{value:.0f} {unit}"
    return f"{n:.0f} B"


def fmt_seconds(s: float) -> str:
    return f"{s:,.1f} s"


def fmt_percent(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{100.0 * fraction:.1f} %"


def publish(out_dir: str | os.PathLike[str], files: dict[str, bytes]) -> Path:
    """Write a rendered report into ``out_dir`` and return the path of its index.html.

    A new directory is filled under a temporary name and renamed into place; into an existing
    directory each file is replaced atomically (other files there are left alone): ``io.write_tree``.
    """
    write_tree(out_dir, files)
    return Path(out_dir) / INDEX
