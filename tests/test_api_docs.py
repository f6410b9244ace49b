"""The public API's docstrings are numpydoc (issue #29 item 6): a Parameters section naming every
parameter of the signature, a Returns section for functions, no placeholder of the shared
parameter text (ssfs._docs) left unfilled; the command line's help says the same words."""

from __future__ import annotations

import inspect
import re

import pytest

import ssfs
from ssfs._docs import PARAMS, TEXT, cli_help, fill
from ssfs.cli import build_parser
from ssfs.selector import LabeledOnly, SemiSupervisedSelector, labeled_scorer

PUBLIC = {
    "ssfs.tl.rank_features": ssfs.tl.rank_features,
    "ssfs.tl.select_stable": ssfs.tl.select_stable,
    "ssfs.tl.markers_df": ssfs.tl.markers_df,
    "propagate": ssfs.get_method("propagate").fn,
    "ssfs.run_method": ssfs.run_method,
    "ssfs.SemiSupervisedSelector": SemiSupervisedSelector,
    "ssfs.SemiSupervisedSelector.fit": SemiSupervisedSelector.fit,
    "ssfs.SemiSupervisedSelector.set_params": SemiSupervisedSelector.set_params,
    "ssfs.labeled_scorer": labeled_scorer,
    "ssfs.LabeledOnly": LabeledOnly,
}


def sections(doc: str) -> dict[str, list[str]]:
    """numpydoc sections of ``doc``: title -> its lines (dedented)."""
    lines = inspect.cleandoc(doc).splitlines()
    out, title = {}, "summary"
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and line.strip():
            title = line.strip()
            out[title] = []
        elif not re.fullmatch(r"-{3,}", line.strip()):
            out.setdefault(title, []).append(line)
    return out


def documented(section: list[str]) -> set[str]:
    """Parameter names of a Parameters section (entry lines: not indented; ``a, b : type``)."""
    names = set()
    for line in section:
        if line and not line[0].isspace():
            for name in line.split(" : ")[0].split(","):
                names.add(name.strip())
    return names


def test_section_parser_finds_a_planted_gap():
    def f(a, b, *, c=1, **params):
        """Do.

        Parameters
        ----------
        a, b : int
            Numbers.
        **params
            More.
        """

    doc = sections(f.__doc__)
    assert documented(doc["Parameters"]) == {"a", "b", "**params"}
    assert "c" not in documented(doc["Parameters"])


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_docstrings_are_numpydoc(name):
    obj = PUBLIC[name]
    doc = obj.__doc__
    assert doc and not re.search(r"^\s*\{\w+(=\w+)?\}\s*$", doc, re.M), "unfilled shared parameter text"
    sec = sections(doc)
    assert "Parameters" in sec, sec.keys()
    sig = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    want = {("**" + p.name if p.kind is p.VAR_KEYWORD else p.name) for p in sig.parameters.values()
            if p.name != "self"}
    shown = documented(sec["Parameters"])
    assert want <= shown, f"not documented: {sorted(want - shown)}"
    if not inspect.isclass(obj):
        assert "Returns" in sec


def test_shared_text_is_the_same_at_every_door():
    # one wording: the docstrings carry the entries of ssfs._docs, the CLI's options the same sentences
    assert PARAMS["use_raw"].split("\n", 1)[1].split() == TEXT["use_raw"].split()
    for obj, key in ((ssfs.tl.rank_features, "use_raw"), (ssfs.tl.select_stable, "layer"),
                     (ssfs.run_method, "y"), (SemiSupervisedSelector, "unlabeled_values")):
        assert " ".join(TEXT[key].split()) in " ".join(obj.__doc__.split()), (obj, key)
    helps = {a.dest: a.help for sub in build_parser()._subparsers._group_actions[0].choices.values()
             for a in sub._actions}
    assert helps["seed"] == cli_help("random_state") and "``" not in helps["seed"]
    assert helps["unlabeled_value"].startswith(cli_help("unlabeled_values"))
    assert helps["method"] == cli_help("method")


def test_fill_indents_and_renames():
    doc = "X.\n\n    Parameters\n    ----------\n    {method=name}\n    {copy}\n"
    out = fill(doc)
    assert "\n    name\n        A registered method's name" in out
    assert "\n    copy\n        Return a modified copy" in out
    with pytest.raises(KeyError):
        fill("    {nope}\n")
