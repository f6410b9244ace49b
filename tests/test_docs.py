"""The documentation (issue #31 item 6): README short, every page on the site's nav, every relative
link and anchor of README and the pages pointing somewhere, and the site building with warnings as
errors (`mkdocs build --strict`, as .ci/run does)."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest
import yaml
from conftest import REPO

DOCS = REPO / "docs"
#: pages the site makes (docs/hooks.py): from a file outside docs/, or from the registry (None)
GENERATED = {"config.md": REPO / "config" / "README.md", "method_reference.md": None}
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and MkDocs' toc make it (lower case, punctuation dropped)."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _anchors(path) -> set[str]:
    text, fence, out = path.read_text(encoding="utf-8"), False, set()
    for line in text.splitlines():
        fence ^= line.startswith("```")
        if not fence and line.startswith("#"):
            out.add(_slug(line.lstrip("#")))
    return out


def _markdown_files():
    return [REPO / "README.md", REPO / "config" / "README.md", *sorted(DOCS.glob("*.md"))]


def _without_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def test_readme_is_what_a_newcomer_needs_first():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 300, f"README.md has {len(lines)} lines: move long-form text to a page under docs/"
    assert lines[2] == "```bash" and "snakemake --cores 2" in lines[3] and "pytest" in lines[4]


def test_every_page_is_on_the_site_nav():
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    pages = {p.name for p in DOCS.glob("*.md")} | set(GENERATED)
    assert sorted(set(nav)) == sorted(nav), "a page is twice on the nav"
    assert set(nav) == pages, f"off the nav: {sorted(pages - set(nav))}; not a page: {sorted(set(nav) - pages)}"


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_to_files_and_headings_that_exist(path):
    broken = []
    for target in LINK.findall(_without_code(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not file and path.parent == DOCS and path.name in GENERATED:
            dest = GENERATED[path.name]
        if path.parent == DOCS and file in GENERATED:
            dest = GENERATED[file] or DOCS / "hooks.py"  # a page of the registry: no headings to check
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, f"{path.relative_to(REPO)}: " + "; ".join(broken)


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="the docs extra is not installed")
def test_site_builds_with_warnings_as_errors(tmp_path):
    """`mkdocs build --strict`: a broken link or anchor, a page missing from the nav, a docstring
    mkdocstrings cannot parse fails it."""
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=REPO, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    warnings = [line for line in res.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert res.returncode == 0, "\n".join(warnings) or res.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").is_file()
    # the method reference shows each method's parameters in the docstring's words (ssfs._docs.METHOD_TEXT)
    reference = " ".join((tmp_path / "site" / "method_reference" / "index.html").read_text(encoding="utf-8").split())
    for text in ("The number of nearest hits and misses (per class) of each sample.",
                 "The number of bootstrap bags of the must-link and of the cannot-link set (Algorithm 5)."):
        assert text in reference, text
