"""Rendering of report tables and figures: HTML, Markdown and LaTeX. Computes nothing."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import numpy as np
import pandas as pd

NBSP = "\u00a0"
PM = f"{NBSP}±{NBSP}"  # "0.91 ± 0.03" never wraps inside a table cell


def to_markdown(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(fmt(v).replace(NBSP, " ") for v in r.tolist()) + " |")
    return "\n".join(lines) + "\n"


def to_latex(df: pd.DataFrame) -> str:
    def esc(v):
        s = fmt(v).replace(NBSP, " ").replace("±", r"$\pm$")
        if s.startswith("**") and s.endswith("**"):
            s = r"\textbf{" + s[2:-2] + "}"
        return s.replace("_", r"\_").replace("%", r"\%")

    cols = [esc(c) for c in df.columns]
    out = [r"\begin{tabular}{" + "l" * len(cols) + "}", r"\hline", " & ".join(cols) + r" \\", r"\hline"]
    out += [" & ".join(esc(v) for v in r.tolist()) + r" \\" for _, r in df.iterrows()]
    out += [r"\hline", r"\end{tabular}"]
    return "\n".join(out) + "\n"


def fmt(v) -> str:
    if isinstance(v, float):
        return "" if np.isnan(v) else f"{v:.4g}"
    return str(v)


def html_table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for _, r in df.iterrows():
        cells = []
        for v in r.tolist():
            s = html.escape(fmt(v))
            if s.startswith("**") and s.endswith("**"):
                s = f"<b>{s[2:-2]}</b>"
            cells.append(f"<td>{s}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1060px;margin:1.5em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.8em}
h3{font-size:1.05em;margin-top:1.4em}
.tw{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;font-size:.82em;margin:.6em 0}
th,td{border:1px solid #ddd;padding:.2em .45em;text-align:left;vertical-align:top}th{background:#f3f3f3}
img{max-width:100%;height:auto;border:1px solid #eee}figure{margin:1em 0}
figcaption{font-size:.85em;color:#555}
pre{background:#f7f7f7;padding:.8em;font-size:.8em;white-space:pre-wrap}
.meta td:first-child{font-weight:600;white-space:nowrap}
nav{font-size:.9em}nav a{margin-right:.8em}
p.note{font-size:.85em;color:#555}
"""


def alt_text(caption: str, stem: str) -> str:
    """Alt text of a figure: its caption's first sentence (what it shows), else its name."""
    first = re.split(r"\.\s+(?=[A-Z])", caption.strip())[0].rstrip(".")  # not at "eq. 1"
    return first or stem.replace("__", " ")


#: on-screen magnification of a figure: its 9 pt text shows at about 14 pt (a 3.6-inch panel: 550 px)
ZOOM = 1.6


def display_width(svg: bytes) -> int | None:
    """CSS pixels at which to show an SVG written by matplotlib (``width="...pt"``) at :data:`ZOOM`."""
    m = re.search(rb'<svg[^>]*\swidth="([\d.]+)pt"', svg[:2000])
    return round(float(m.group(1)) * 96 / 72 * ZOOM) if m else None


def figure_html(figdir: Path, stem: str, caption: str) -> str:
    """A figure embedded in the page (the scalable SVG, else the PNG) at :data:`ZOOM` times its
    natural size, never wider than the text, with alt text (the caption's first sentence),
    the caption, and a link to the SVG file (PDF and PNG: the workflow's ``paper_figures`` rule)."""
    found = [(figdir / f"{stem}.{ext}", ext, mime) for ext, mime in (("svg", "image/svg+xml"), ("png", "image/png"))]
    found = [x for x in found if x[0].exists()]
    if not found:
        return ""
    f, ext, mime = found[0]
    raw = f.read_bytes()
    width = display_width(raw) if ext == "svg" else None
    style = f" style='width:{width}px'" if width else ""
    data = base64.b64encode(raw).decode()
    name = html.escape(stem, quote=True)
    return (f"<figure id='fig-{name}'><img alt='{html.escape(alt_text(caption, stem), quote=True)}'{style} "
            f"src='data:{mime};base64,{data}'>"
            f"<figcaption>{html.escape(caption)} <a href='figures/{name}.svg'>SVG</a></figcaption></figure>")
