"""A report page checked as a browser reads it (issue #29 item 3): parsed by an HTML5 parser
(html5lib) without a parse error, every in-page anchor names an element id, every relative link
names a file beside the page, every image is a data URI that decodes to a PNG or an SVG, and ids
are unique."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import unquote, urlparse

import html5lib

NS = "{http://www.w3.org/1999/xhtml}"


def check_page(path) -> dict:
    """Parse ``path`` strictly; return ``{"ids", "links", "images", "tables"}`` counts after the checks."""
    path = Path(path)
    doc = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True).parse(path.read_bytes())
    ids = [e.get("id") for e in doc.iter() if e.get("id")]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    links = [e.get("href") for e in doc.iter(f"{NS}a") if e.get("href")]
    for href in links:
        url = urlparse(href)
        if href.startswith("#"):
            assert href[1:] in ids, f"anchor {href} names no element"
        elif not url.scheme:
            assert (path.parent / unquote(url.path)).exists(), f"link {href} names no file beside {path.name}"
    images = [e.get("src") for e in doc.iter(f"{NS}img")]
    for src in images:
        head, _, data = src.partition(",")
        assert head in ("data:image/png;base64", "data:image/svg+xml;base64"), head[:40]
        raw = base64.b64decode(data, validate=True)
        assert raw.startswith(b"\x89PNG") if "png" in head else b"<svg" in raw[:2000], head
    for img in doc.iter(f"{NS}img"):
        assert img.get("alt"), "an image without alt text"
    return {"ids": len(ids), "links": len(links), "images": len(images),
            "tables": sum(1 for _ in doc.iter(f"{NS}table"))}
