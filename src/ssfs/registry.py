"""The one registry of feature-selection methods.

Every method is a function with the signature::

    fn(X, y, constraints, rng, **params) -> numpy.ndarray | SelectionResult

``X`` is samples x features (dense array or scipy.sparse), ``y`` holds integer
class codes with ``-1`` for unlabeled samples (scikit-learn's semi-supervised
convention), ``constraints`` is a :class:`ssfs.constraints.Constraints`, ``rng`` a
:class:`numpy.random.Generator`. A plain array return value is the per-feature
score vector; methods that select an ordered subset (CSFSR, wrappers) or extract
components (PCA, SSDR) return a :class:`SelectionResult`.

Methods register themselves with :func:`register`; any module placed in
``ssfs.methods`` is imported automatically, so adding a method never touches a
shared file.

Ensembles whose members are independent (EFSIS bootstraps, EnsCLS committees)
also register a :class:`Members` protocol: plan every random choice up front,
score any subset of the members, combine. A workflow can then spread one
ensemble over several jobs (``execution.member_chunks``) with the same result as
one call, because the method itself is defined as plan -> all members -> combine
(:func:`run_members`).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._docs import METHOD_ARGS, method_param_text, numpydoc_entry, numpydoc_params
from .errors import MethodError
from .params import MethodName, ParamValueError, coerce, describe, param_types

#: kinds of output a method can produce
KINDS = ("score", "subset", "extraction")
#: the invariances a method can promise (:func:`register`'s ``invariances``), each a
#: transformation of the input that leaves the method's result unchanged (docs/invariances.md):
INVARIANCES = {
    "samples": "permuting the samples (with their labels and constraints) leaves every score unchanged",
    "features": "permuting the features permutes the scores",
    "copies": "an exact copy of a feature gets exactly (bit for bit) the feature's score",
    "scale": "multiplying one feature by a positive number leaves every score unchanged",
    "shift": "adding a number to one feature leaves every score unchanged",
    "unit": "multiplying X by a positive number leaves the ranking unchanged",
}
#: import name -> (PyPI distribution, ssfs extra) of optional packages, for install hints
PIP_NAMES = {"mrmr": ("mrmr_selection", "mrmr"), "skrebate": ("skrebate", "peers"),
             "scikit_posthocs": ("scikit-posthocs", "stats")}


def install_hint(module: str) -> str:
    """``pip install <distribution>`` (and the ssfs extra that pulls it in) for an import name."""
    dist, extra = PIP_NAMES.get(module, (module, None))
    return f"pip install {dist}" + (f' (or pip install "ssfs[{extra}]")' if extra else "")


@dataclass
class SelectionResult:
    """Output of one method run.

    scores:     per-feature scores (length p); NaN where a method gives none.
    selected:   ordered feature indices, best first, when the method selects a
                subset (``kind="subset"``); ``None`` means "rank all by score".
    transform:  for ``kind="extraction"``: callable mapping a matrix (n' x p) to
                its components (n' x d), best component first.
    extra:      anything else worth keeping (e.g. clusterings, kept constraints).
    """

    scores: np.ndarray | None = None
    selected: np.ndarray | None = None
    transform: Callable[[Any], np.ndarray] | None = None
    extra: dict = field(default_factory=dict)

    def outlying(self, sample_names=None) -> list:
        """The samples the fit found much louder or quieter than the median one (``propagate``'s
        ``extra["outlying_samples"]``: noisy or failed arrays): their names (``sample_names``), or their
        row numbers without them; [] for none."""
        return named_rows(self.extra.get("outlying_samples", []) if isinstance(self.extra, dict) else [], sample_names)

    def fit_summary(self) -> dict:
        """The graph a semi-supervised fit kept and how far its labels were trusted (``extra["graph"]``
        of ``propagate``: the graph chosen, its held-out agreement and chance, the propagated samples'
        weight, whether the labels' own features led), scalars only (JSON and h5ad); {} for others."""
        graph = self.extra.get("graph") if isinstance(self.extra, dict) else None
        if not isinstance(graph, dict):
            return {}
        return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in graph.items()
                if isinstance(v, (bool, int, float, str, np.generic))}


def named_rows(rows, names=None) -> list:
    """The names of the samples at ``rows`` (text), or the row numbers themselves without ``names``."""
    rows = np.asarray(rows, dtype=np.int64)
    return rows.tolist() if names is None else [str(v) for v in np.asarray(names)[rows]]


@dataclass(frozen=True)
class Members:
    """How an ensemble method splits into independent members.

    plan:    ``(X, y, constraints, rng, **params) -> plan``; draws every random choice
             (deterministic given ``rng``, so each job can redraw it).
    size:    ``plan -> number of members``.
    run:     ``(X, y, constraints, plan, members, **params) -> {name: array}``, each array
             with one row per member of ``members`` (an index array, possibly empty).
    combine: ``(X, y, constraints, plan, parts, **params) -> scores | SelectionResult``;
             ``parts`` holds the arrays of all members, rows in member order.
    Each callable receives all of the method's parameters as keywords.
    """

    plan: Callable
    size: Callable
    run: Callable
    combine: Callable


def member_chunks(n_members: int, n_chunks: int) -> list[np.ndarray]:
    """Member indices of each of ``n_chunks`` contiguous chunks (sizes differ by at most 1)."""
    if int(n_chunks) < 1:
        raise MethodError(f"the number of member chunks must be >= 1, got {n_chunks}")
    return np.array_split(np.arange(int(n_members)), int(n_chunks))


def stack_parts(parts) -> dict:
    """Concatenate the outputs of :attr:`Members.run` (given in member order)."""
    parts = list(parts)
    if not parts:
        raise MethodError("no member chunks to combine")
    names = list(parts[0])
    if any(sorted(q) != sorted(names) for q in parts):
        raise MethodError("member chunks hold different arrays; were they computed with the same parameters?")
    return {nm: np.concatenate([np.asarray(q[nm]) for q in parts], axis=0) for nm in names}


def run_members(members: Members, X, y, constraints, rng, **params):
    """An ensemble method in one call: plan, all members, combine."""
    plan = members.plan(X, y, constraints, rng, **params)
    allm = np.arange(members.size(plan))
    parts = members.run(X, y, constraints, plan, allm, **params)
    return members.combine(X, y, constraints, plan, parts, **params)


@dataclass(frozen=True)
class MethodSpec:
    name: str
    fn: Callable
    higher_is_better: bool
    kind: str = "score"
    #: what the method needs: subset of {"labels", "constraints", "cannot_link"}
    needs: frozenset = frozenset()
    description: str = ""
    #: optional Python package the method needs (checked before it runs)
    requires: str | None = None
    defaults: dict = field(default_factory=dict)
    #: independent-member protocol of ensembles that can be split over jobs
    members: Members | None = None
    #: parameter name -> its type alternatives (:mod:`ssfs.params`, from the signature)
    types: dict = field(default_factory=dict)
    #: the invariances the method promises (names of :data:`INVARIANCES`), or a callable
    #: ``params -> names`` when they depend on the parameters (e.g. an ensemble's rankers)
    invariances: frozenset | Callable = frozenset()
    #: parameter name -> its description (:func:`ssfs._docs.method_param_text`): the docstring's
    #: Parameters section and ``ssfs methods -v`` show this text
    param_text: dict = field(default_factory=dict)

    @property
    def direction(self) -> str:
        return "higher" if self.higher_is_better else "lower"

    def promises(self, params: dict | None = None) -> frozenset:
        """The invariances the method promises with ``params`` (missing ones: the defaults)."""
        if not callable(self.invariances):
            return self.invariances
        return _checked_invariances(self.name, self.invariances({**self.defaults, **(params or {})}))

    def summary(self) -> dict:
        """One row of ``ssfs methods``: what the method needs and returns, its parameters."""
        return {
            "name": self.name,
            "kind": self.kind,
            "needs": sorted(self.needs),
            "direction": self.direction,
            "splittable": self.members is not None,
            "requires": self.requires,
            "invariances": [v for v in INVARIANCES if v in self.promises()],
            "parameters": dict(self.defaults),
            "parameter_text": dict(self.param_text),
            "description": self.description,
        }


_REGISTRY: dict[str, MethodSpec] = {}
_LOADED = False


def register(
    name: str,
    *,
    higher_is_better: bool,
    kind: str = "score",
    needs: tuple[str, ...] | frozenset = (),
    requires: str | None = None,
    description: str | None = None,
    members: Members | None = None,
    invariances: tuple[str, ...] | frozenset | Callable = (),
):
    """Decorator adding a method to the registry under ``name``.

    ``invariances``: the transformations of the input the method's result does not depend
    on (names of :data:`INVARIANCES`; a callable ``params -> names`` when they depend on the
    parameters). The runner relies on them to compute safely (:mod:`ssfs._numerics`) and
    ``tests/methods/test_contract.py`` checks every promise."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not callable(invariances):
        invariances = _checked_invariances(name, invariances)

    def deco(fn):
        if name in _REGISTRY and _REGISTRY[name].fn is not fn:
            raise ValueError(f"method {name!r} registered twice")
        sig = inspect.signature(fn)
        defaults = {
            k: p.default
            for k, p in sig.parameters.items()
            if p.default is not inspect.Parameter.empty and p.kind == p.KEYWORD_ONLY
        }
        doc = description or _first_sentence(inspect.getdoc(fn) or "")
        types = param_types(fn)
        own = numpydoc_params(fn.__doc__)  # a hand-written Parameters section describes its parameters
        texts = {k: method_param_text(name, k, own) for k in types}
        fn.__doc__ = with_numpydoc(fn, types, defaults, texts, kind=kind, higher_is_better=higher_is_better)
        for k, v in defaults.items():  # a default that breaks its own annotation is a bug
            if v is not None or any(a.kind == "none" for a in types[k]):
                try:
                    coerce(types[k], v)
                except ParamValueError as e:
                    raise TypeError(f"method {name!r}: default of {k} = {v!r} breaks its annotation: {e}") from None
        _REGISTRY[name] = MethodSpec(
            name=name,
            fn=fn,
            higher_is_better=higher_is_better,
            kind=kind,
            needs=frozenset(needs),
            description=doc,
            requires=requires,
            defaults=defaults,
            members=members,
            types=types,
            invariances=invariances,
            param_text=texts,
        )
        return fn

    return deco


def with_numpydoc(fn, types: dict, defaults: dict, texts: dict, *, kind: str, higher_is_better: bool) -> str:
    """``fn``'s docstring with numpydoc Parameters and Returns sections rendered from its signature:
    each keyword parameter's type, range and default from its annotation (:mod:`ssfs.params`, the
    one contract every door checks) and its description ``texts[param]`` (from
    :data:`ssfs._docs.METHOD_TEXT`); a docstring that already has a Parameters section is kept as
    written."""
    doc = inspect.cleandoc(fn.__doc__ or "")
    if "\nParameters\n---" in f"\n{doc}":
        return doc
    entries = [numpydoc_entry(arg, *METHOD_ARGS[arg]) for arg in METHOD_ARGS]
    for param in types:
        shown = describe(types[param]) + (f", default {defaults[param]!r}" if param in defaults else "")
        entries.append(numpydoc_entry(param, shown, texts[param]))
    direction = "higher" if higher_is_better else "lower"
    returns = ("numpy.ndarray of shape (n_features,) or SelectionResult\n    One score per feature "
               f"({direction} is better; NaN or infinite: undefined, ranked last), or a result holding them."
               if kind == "score" else
               "SelectionResult\n    " + ("The selected features, best first, and the scores." if kind == "subset"
                                          else "The fitted transform (``transform``) of the extraction."))
    return "\n".join([doc, "", "Parameters", "----------", *entries, "", "Returns", "-------", returns])


def _checked_invariances(name: str, names) -> frozenset:
    out = frozenset(names)
    unknown = sorted(out - set(INVARIANCES))
    if unknown:
        raise ValueError(f"method {name!r}: unknown invariance(s) {unknown}; known: {', '.join(INVARIANCES)}")
    return out


def _first_sentence(doc: str, width: int = 110) -> str:
    """The docstring's first paragraph on one line, shortened to ``width`` characters."""
    para = " ".join(doc.split("\n\n")[0].split())
    return para if len(para) <= width else para[: para.rfind(" ", 0, width - 1)] + " …"


#: the package whose modules register the methods, loaded by name (plugin discovery): the
#: methods import this module to register themselves, never the other way round
METHODS_PACKAGE = f"{__package__}.methods"


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    folder = Path(__file__).with_name("methods")
    for mod in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{METHODS_PACKAGE}.{mod.name}")
    _LOADED = True


def get_method(name: str) -> MethodSpec:
    """The registered method called ``name``; a clear error listing the known ones otherwise."""
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise MethodError(f"unknown method {name!r}; known methods: {known}") from None


def list_methods() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def check_params(spec: MethodSpec, params: dict) -> dict:
    """The parameters converted to their declared types (:mod:`ssfs.params`); refuses, in
    one line, parameters the method does not take (naming the accepted ones) and values
    that do not fit the parameter's declared type or range (naming both)."""
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        accepted = ", ".join(sorted(spec.defaults)) or "none"
        raise MethodError(
            f"method {spec.name!r} got unknown parameter(s) {', '.join(unknown)}; "
            f"accepted: {accepted}"
        )
    out = {}
    for k, v in params.items():
        try:
            out[k] = coerce(spec.types[k], v)
        except ParamValueError as e:
            raise MethodError(f"method {spec.name!r} parameter {k}: {e}") from None
    for k, v in list(out.items()):  # parameters of other methods (ensembles of rankers)
        nested = next((a.nested for a in spec.types[k] if a.nested is not None), None)
        if nested is None or v is None:
            continue
        if isinstance(nested, MethodName):
            for name in [v] if isinstance(v, str) else v:
                try:
                    get_method(name)
                except MethodError as e:
                    raise MethodError(f"method {spec.name!r} parameter {k}: {e}") from None
            continue
        by_name = v if nested.by is None else {out.get(nested.by, spec.defaults.get(nested.by)): v}
        checked = {}
        for name, p in by_name.items():
            try:
                if not isinstance(p, dict):
                    raise MethodError(f"expected a mapping of parameters of {name!r}, got {p!r}")
                checked[name] = check_params(get_method(name), p)
            except MethodError as e:
                raise MethodError(f"method {spec.name!r} parameter {k}: {e}") from None
        out[k] = checked if nested.by is None else next(iter(checked.values()))
    return out
