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


def html_table(df: pd.DataFrame, *, table_id: str | None = None, sortable: bool = True,
               row_classes=None, scroll: bool = False) -> str:
    """A table (cells by :func:`fmt`; ``**x**`` bold). ``sortable``: class ``sortable filterable``,
    which :data:`SCRIPT` makes sortable by a click on a header and filterable by a search box
    (the page reads the same without it); ``row_classes``: one class name per row ('' for none),
    e.g. ``stable`` for the selected features; ``scroll``: at most about 18 rows high, the rest
    scrolled (the page stays short; the header stays in view)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    classes = list(row_classes) if row_classes is not None else [""] * len(df)
    for (_, r), rc in zip(df.iterrows(), classes, strict=True):
        cells = []
        for v in r.tolist():
            s = html.escape(fmt(v))
            if s.startswith("**") and s.endswith("**"):
                s = f"<b>{s[2:-2]}</b>"
            cells.append(f"<td>{s}</td>")
        body.append(f"<tr class='{rc}'>" if rc else "<tr>")
        body[-1] += "".join(cells) + "</tr>"
    attrs = (f" id='{html.escape(table_id, quote=True)}'" if table_id else "") + (
        " class='sortable filterable'" if sortable else "")
    wrap = "tw scroll" if scroll else "tw"
    rows = "".join(body)
    return f"<div class='{wrap}'><table{attrs}><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"


#: the page's only script: sortable headers and a filter box on tables of class ``sortable``
#: (numbers sort as numbers, a second click reverses); without it the tables read the same
SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (t) {
  var head = t.tHead, body = t.tBodies[0];
  if (!head || !body) { return; }
  var num = function (s) { var v = parseFloat(s.replace('\u2212', '-')); return isNaN(v) ? null : v; };
  Array.prototype.forEach.call(head.rows[0].cells, function (th, i) {
    th.tabIndex = 0; th.title = 'sort by this column';
    var sort = function () {
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(head.rows[0].cells, function (c) { c.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[i].textContent.trim(), y = b.cells[i].textContent.trim(), nx = num(x), ny = num(y);
        var r = (nx !== null && ny !== null) ? nx - ny : x.localeCompare(y);
        return asc ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter') { sort(); } });
  });
  if (t.classList.contains('filterable') && body.rows.length > 5) {
    var f = document.createElement('input');
    f.type = 'search'; f.placeholder = 'filter rows'; f.className = 'filter';
    f.setAttribute('aria-label', 'filter the rows of the table below');
    f.addEventListener('input', function () {
      var q = f.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (r) {
        r.hidden = q !== '' && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
    t.parentNode.insertBefore(f, t);
  }
});
"""


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
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.stable td{background:#eef7ee}tr.stable td:first-child{font-weight:600}
input.filter{margin:.3em 0;font-size:.85em}
.tw.scroll{max-height:30em;overflow-y:auto}.tw.scroll thead th{position:sticky;top:0}
.figrow{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}.figrow figure{flex:1 1 22em;margin:.5em 0}
details{margin:.5em 0}summary{cursor:pointer;color:#333}
p.verdict{font-size:1.02em;background:#f6f8fa;padding:.5em .7em;border-left:3px solid #4a7}
"""


TEMPLATES = Path(__file__).parent / "templates"


def render_template(name: str, **context) -> str:
    """``templates/<name>`` (Jinja2, HTML-escaped unless marked ``safe``) filled with ``context``."""
    import jinja2  # lazy: only the report jobs render pages

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=False,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.get_template(name).render(**context)


def render_page(title: str, nav, parts) -> str:
    """The self-contained HTML page (``templates/page.html.j2``): title, navigation ``(anchor,
    text)`` pairs, the HTML parts in order, :data:`CSS` and :data:`SCRIPT`."""
    return render_template("page.html.j2", title=title, nav=list(nav), parts=[p for p in parts if p], css=CSS,
                           script=SCRIPT)


def svg_figure(path: Path, alt: str, caption: str = "") -> str:
    """An SVG file embedded as a data URI (the page stays one file), with alt text and a caption."""
    if not Path(path).exists():
        return ""
    data = base64.b64encode(Path(path).read_bytes()).decode()
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (f"<figure><img alt='{html.escape(alt, quote=True)}' src='data:image/svg+xml;base64,{data}'>{cap}"
            "</figure>")


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
