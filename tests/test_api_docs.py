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


@pytest.mark.parametrize("name", ssfs.list_methods())
def test_every_registered_method_documents_each_parameter_from_its_annotation(name):
    """The registry renders a method's Parameters section from its signature (ssfs.registry.with_numpydoc):
    every keyword parameter with its type and default as the annotation says (ssfs.params.describe)."""
    from ssfs.params import describe

    spec = ssfs.get_method(name)
    secs = sections(spec.fn.__doc__)
    assert "Parameters" in secs and "Returns" in secs, name
    lines = secs["Parameters"]
    if not any(x.startswith("X : ") for x in lines):  # written by hand (kept as written): every parameter named
        assert set(spec.types) <= documented(lines), sorted(set(spec.types) - documented(lines))
        return
    assert documented(lines) == {"X", "y", "constraints", "rng", *spec.types}
    for param, alts in spec.types.items():
        line = next(x for x in lines if x.startswith(f"{param} : "))
        assert line == f"{param} : {describe(alts)}, default {spec.defaults[param]!r}", line


#: what a parameter's description is not: a placeholder, a bare fragment
NOT_A_DESCRIPTION = re.compile(r"(?i)^(as described above|see above|todo|tbd|none)\.?$")


@pytest.mark.parametrize("name", ssfs.list_methods())
def test_every_method_parameter_has_a_real_description_and_the_docstring_shows_it(name):
    """Each parameter of a registered method is described by a sentence of its own (ssfs._docs.METHOD_TEXT,
    or the method's hand-written Parameters section), and the docstring's entry holds that very text: what
    help(), the IDE, the site's method reference and `ssfs methods -v` show is one wording."""
    from ssfs._docs import numpydoc_params

    spec = ssfs.get_method(name)
    assert set(spec.param_text) == set(spec.types)
    # its own: a hand-written entry "a, b" describes both with one text (propagate's k read "Not used
    # (deterministic); kNN graphs' neighbours; most components; ..." until session 61)
    shared = sorted(p for p in spec.param_text if list(spec.param_text.values()).count(spec.param_text[p]) > 1)
    assert shared == [], f"{name}: one text for several parameters {shared}"
    shown = numpydoc_params(spec.fn.__doc__)
    for param, text in spec.param_text.items():
        assert not NOT_A_DESCRIPTION.match(text.strip()), (param, text)
        assert len(text.split()) >= 4 and text.rstrip().endswith((".", ")")), (param, text)
        assert " ".join(shown[param].split()) == " ".join(text.split()), param


def test_a_method_parameter_without_a_description_is_refused_at_registration():
    """No placeholder can reach the docs: registering a method whose parameter has no text is an error
    naming the method, the parameter and where the text goes; a hand-written Parameters section counts."""
    from ssfs._docs import UndocumentedParameter
    from ssfs.registry import _REGISTRY, register

    def undocumented(X, y, constraints, rng, *, zeta_unheard_of: float = 1.0):
        """A test method."""

    with pytest.raises(UndocumentedParameter, match=r"'_t_undoc' parameter 'zeta_unheard_of'.*METHOD_TEXT"):
        register("_t_undoc", higher_is_better=True)(undocumented)
    assert "_t_undoc" not in _REGISTRY

    def described(X, y, constraints, rng, *, zeta_unheard_of: float = 1.0):
        """A test method.

        Parameters
        ----------
        zeta_unheard_of
            A weight described by the method
            itself, over two lines.
        """

    try:
        register("_t_described", higher_is_better=True)(described)
        text = _REGISTRY["_t_described"].param_text["zeta_unheard_of"]
        assert text == "A weight described by the method itself, over two lines."
    finally:
        _REGISTRY.pop("_t_described", None)
