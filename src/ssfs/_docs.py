"""Parameter text shared by the public API's docstrings and the command line's help (as
scanpy's ``_docs``): one wording per parameter, whatever the door.

:data:`TEXT` holds each parameter's description once; :data:`PARAMS` makes numpydoc entries
of them (name line, description wrapped and indented), and the command line's options take
the same sentences as their help. A docstring holds a line ``{name}`` (alone, indented as a
parameter entry) where an entry belongs; :func:`doc_params` replaces it, indented the same,
when the module is imported. An unknown name is a KeyError at import, so a typo cannot
reach the rendered docs.

>>> @doc_params
... def f(adata, groupby=None):
...     '''Parameters
...     ----------
...     {groupby}
...     '''
"""

from __future__ import annotations

import re
import textwrap

#: what makes a sample unlabeled, at every door
UNLABELED = ("A sample is unlabeled when its label is missing (None, NaN, a missing category, a blank "
             "or NA cell) or -1 in integer codes (scikit-learn's semi-supervised convention).")

#: each parameter's description, once (numpydoc entries below; the CLI's help reuses them)
TEXT: dict[str, str] = {
    "adata": "The annotated data matrix (cells or samples x genes or features).",
    "method": "A registered method's name (``ssfs methods`` lists them with what each needs and its "
              "parameters).",
    "method_params": "The method's parameters (``ssfs methods -v``; e.g. ``k=15`` for ``cls``), checked against "
                     "their declared types and ranges: a wrong name or value is a "
                     ":class:`~ssfs.errors.MethodError` naming the accepted ones.",
    "y": "Class labels of the samples: integer codes, or class names (strings, a pandas Categorical or "
         f"Series). {UNLABELED} Error messages and outputs name the classes.",
    "unlabeled_values": 'Label values meaning "no label" besides the missing ones (None, NaN; blank and NA '
                        "cells always mean unlabeled), compared as text (e.g. unknown, -1).",
    "constraints": "A :class:`ssfs.Constraints` (must-link / cannot-link pairs of sample indices); default: "
                   "the pairs of the labeled samples (same class: must-link, different classes: cannot-link).",
    "random_state": "The seed of every random choice (resamples, tie-breaking among equal scores): the same "
                    "seed gives the same result, whatever the number of threads.",
    "groupby": f"The ``adata.obs`` column of the class labels. {UNLABELED} None: no labels (label-free "
               "methods only).",
    "use_raw": "Rank ``adata.raw.X`` (genes ``adata.raw.var_names``) instead of ``adata.X``. Default (None): "
               "True when ``adata.raw`` exists and no ``layer`` is given, as scanpy's "
               ":func:`~scanpy.tl.rank_genes_groups` (which tests the log-normalised expression kept in "
               "``.raw``, not the scaled ``X``). True together with ``layer`` is an error.",
    "layer": "Rank ``adata.layers[layer]`` instead of ``adata.X`` (then ``use_raw`` defaults to False).",
    "graph": "The cell graph of the graph-based scores (the methods with a ``graph`` parameter: "
             '``laplacian``, ``cls``). ``"auto"``: ``adata.obsp["connectivities"]`` '
             '(:func:`scanpy.pp.neighbors`) when present, else a kNN graph (the method\'s ``k``) on '
             '``adata.obsm["X_pca"]`` when present, else the method\'s own kNN graph in gene space; an '
             "``obsp`` key: that graph; None: the method's own graph. The heat-kernel weights are computed "
             "in gene space on the graph's edges.",
    "key_added": "The key of the results in ``adata.uns`` and the prefix of the ``adata.var`` columns.",
    "copy": "Return a modified copy of ``adata`` instead of writing into it.",
    "show": "Show the figure (default: when ``save`` and ``ax`` are not given, as scanpy's plots).",
    "save": "Write the figure to this file (its suffix gives the format: .png, .pdf, .svg).",
    "ax": "A matplotlib Axes to draw into (then the figure is neither shown nor saved).",
}
#: the parameter name a numpydoc entry shows, where it differs from the TEXT key
_SHOWN = {"method_params": "**params"}


def _entry(name: str, shown: str | None = None) -> str:
    body = textwrap.fill(TEXT[name], width=88, initial_indent="    ", subsequent_indent="    ",
                         break_on_hyphens=False, break_long_words=False)
    return f"{shown or _SHOWN.get(name, name)}\n{body}"


#: numpydoc entries: ``name`` line, then the description wrapped and indented by 4 spaces
PARAMS: dict[str, str] = {name: _entry(name) for name in TEXT}


def cli_help(name: str) -> str:
    """:data:`TEXT` ``[name]`` for an option's help: without reST markup, first letter lower case."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", TEXT[name]).replace("``", "")
    return text[0].lower() + text[1:]


_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>\w+)(?:=(?P<shown>\w+))?\}[ \t]*$", re.MULTILINE)


def fill(doc: str, entries: dict[str, str] | None = None) -> str:
    """``doc`` with every ``{name}`` line replaced by ``entries[name]`` (default :data:`PARAMS`),
    indented as the placeholder; ``{name=other}`` shows the entry under the name ``other``
    (``{method=name}`` for a function whose parameter ``name`` is a method)."""
    entries = PARAMS if entries is None else entries

    def indented(m) -> str:
        text = entries[m["name"]] if not m["shown"] else _entry(m["name"], m["shown"])
        return "\n".join(m["indent"] + line if line else line for line in text.splitlines())

    return _PLACEHOLDER.sub(indented, doc)


def doc_params(obj):
    """Decorator: fill the ``{name}`` lines of ``obj``'s docstring (:func:`fill`)."""
    if obj.__doc__:
        obj.__doc__ = fill(obj.__doc__)
    return obj
