"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks``).

The configuration reference lives beside the configs (``config/README.md``, where a user editing a
config finds it); the site shows it as the page ``config.md``, and links to it from the pages
(``../config/README.md``) point there. The docstrings cross-reference in reST roles
(``:func:`~ssfs.run_method```, read by ``help()`` and IDEs); the API pages show the name as code.
"""

import re
from pathlib import Path

from mkdocs.structure.files import File

REPO = Path(__file__).resolve().parent.parent
#: repository files outside docs/ that the site shows as pages: page name -> file
PAGES = {"config.md": REPO / "config" / "README.md"}
#: how the pages link to those files (relative to docs/) -> the page's name
LINKS = {"../config/README.md": "config.md"}


#: the page of every registered method's reference, generated from the registry (ssfs methods)
METHODS_PAGE = "method_reference.md"


def method_reference() -> str:
    """Markdown of every registered method: its summary line and its docstring, whose Parameters
    section the registry renders from the signature's annotations (ssfs.registry.with_numpydoc)."""
    from ssfs.registry import get_method, list_methods

    out = ["# Method reference", "",
           "Every registered method (`ssfs methods`), as `ssfs.run_method(name, X, y, constraints, **params)`",
           "calls it: the parameters' types, ranges and defaults come from the signature's annotations, the",
           "contract every door checks. The table of all methods: [Methods](methods.md).", ""]
    for name in list_methods():
        spec = get_method(name)
        out += [f"## `{name}`", "", f"::: {spec.fn.__module__}.{spec.fn.__name__}",
                "    options:", "      show_root_heading: false", "      heading_level: 3", ""]
    return "\n".join(out)


def on_files(files, config):
    files.append(File.generated(config, METHODS_PAGE, content=method_reference()))
    for name, path in PAGES.items():
        text = path.read_text(encoding="utf-8").replace("](../docs/", "](")  # its links to the pages
        files.append(File.generated(config, name, content=text))
    return files


#: a link from a page to a file of the repository outside docs/ (source, benchmarks ...)
REPO_LINK = re.compile(r"\[([^\]]+)\]\(\.\./([^)#\s]+)\)")


def _repo_file(m) -> str:
    """A link to a repository file, which the site does not hold: its path as code (the text
    beside it when it says more than the path)."""
    text, path = m.group(1), m.group(2)
    if not (REPO / path).exists():
        return m.group(0)  # left to mkdocs --strict: a broken link fails the build
    return f"`{path}`" if text.strip("`") == path else f"{text} (`{path}`)"


def on_page_markdown(markdown, page, config, files):
    for link, name in LINKS.items():
        markdown = markdown.replace(f"]({link})", f"]({name})").replace(f"]({link}#", f"]({name}#")
    return REPO_LINK.sub(_repo_file, markdown)


#: a reST role as the Markdown renderer leaves it: ``:func:<code>~pkg.name</code>``
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):<code>(~?)([^<]*)</code>")


def on_page_content(html, page, config, files):
    return ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>", html)
