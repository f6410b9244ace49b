"""Typed method parameters, declared once: in each method's signature.

A parameter's annotation is its contract, read by :func:`param_types` and enforced by
:func:`coerce` at every door (``registry.check_params``: the runner, the command line's
``--param``, the workflow config before any job starts)::

    def laplacian_score(X, y, constraints, rng, *, k: PosInt = 10,
                        bandwidth: PosFloat | Literal["auto", "mean", "median"] = "auto"): ...

Supported: ``int``, ``float``, ``bool``, ``str``, ``None``, ``Literal[...]`` (allowed values),
``list[T]`` / ``Sequence[T]`` (a list or tuple of T), ``dict`` / ``Mapping`` (free-form
mapping), ``Any`` (not checked: e.g. a precomputed graph), unions of these, and ranges
through ``Annotated[int | float, Range(...)]`` (aliases below). Rules:

* an ``int`` parameter accepts an integer or a float with an integral value (``1000.0``,
  ``1e3`` on the command line) and refuses any other float: a float is never truncated;
* a ``float`` parameter accepts any finite number (never NaN or inf);
* ``bool`` accepts only true/false (not 0/1, not strings);
* a value outside its range, or a string not among the ``Literal`` values, is refused.

The refusal is one line naming the method, the parameter, the expected type and range,
and the value (a :class:`ssfs.errors.MethodError`).
"""

from __future__ import annotations

import math
import numbers
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import numpy as np

__all__ = ["Range", "MethodParams", "MethodName", "PosInt", "NonNegInt", "PosFloat", "NonNegFloat", "Fraction",
           "OpenFraction", "Percent", "Bandwidth", "ParamType", "param_types", "coerce", "ParamValueError",
           "json_schema", "Literal"]


@dataclass(frozen=True)
class Range:
    """Closed or open interval of allowed numbers; ``None`` = unbounded."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, v) -> bool:
        below = self.low is not None and (v <= self.low if self.low_open else v < self.low)
        above = self.high is not None and (v >= self.high if self.high_open else v > self.high)
        return not (below or above)

    def text(self) -> str:
        if self.high is None:
            return f"{'>' if self.low_open else '>='} {_num(self.low)}"
        if self.low is None:
            return f"{'<' if self.high_open else '<='} {_num(self.high)}"
        return (f"in {'(' if self.low_open else '['}{_num(self.low)}, {_num(self.high)}"
                f"{')' if self.high_open else ']'}")


def _num(v) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


@dataclass(frozen=True)
class MethodParams:
    """Marks a mapping of another registered method's parameters, checked against that
    method's signature too: of the method named by parameter ``by`` (``base_params`` of
    ``base``), or, with ``by=None``, method name -> its parameters (``ranker_params``)."""

    by: str | None = None


@dataclass(frozen=True)
class MethodName:
    """Marks a string (or the strings of a list) naming registered methods, checked against
    the registry at the door (``bootstrap_rank``'s ``base``, ``efsis``'s ``rankers``)."""


#: common ranges, for signatures
PosInt = Annotated[int, Range(1)]
NonNegInt = Annotated[int, Range(0)]
PosFloat = Annotated[float, Range(0, low_open=True)]
NonNegFloat = Annotated[float, Range(0)]
Fraction = Annotated[float, Range(0, 1)]
OpenFraction = Annotated[float, Range(0, 1, low_open=True, high_open=True)]
Percent = Annotated[float, Range(0, 100, low_open=True)]
#: heat-kernel bandwidth (eq. 8's 2 t^2): a positive number, or chosen from the data
Bandwidth = PosFloat | Literal["auto", "mean", "median"]


@dataclass(frozen=True)
class ParamType:
    """One alternative of a parameter's type: ``kind`` in int, float, bool, str, none,
    list, mapping, any; ``choices`` for Literal strings; ``item`` the alternatives of a
    list's elements."""

    kind: str
    range: Range | None = None
    choices: tuple = ()
    item: tuple = ()
    nested: MethodParams | MethodName | None = None

    def text(self) -> str:
        if self.kind == "int":
            return "an integer" + (f" {self.range.text()}" if self.range else "")
        if self.kind == "float":
            return "a number" + (f" {self.range.text()}" if self.range else "")
        if self.kind == "bool":
            return "true or false"
        if self.kind == "none":
            return "null"
        if self.kind == "str":
            if not self.choices:
                return "a string"
            return repr(self.choices[0]) if len(self.choices) == 1 else \
                "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "list":
            return f"a list of ({describe(self.item)})"
        if self.kind == "mapping":
            return "a mapping"
        return "anything"


def describe(alts) -> str:
    return " or ".join(a.text() for a in alts)


class ParamValueError(ValueError):
    """A value that does not fit a parameter's type (message: what was expected)."""


def _alternatives(hint) -> tuple[ParamType, ...]:
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return (ParamType("any"),)
    if hint is type(None) or hint is None:
        return (ParamType("none"),)
    if origin is Annotated:
        base, *meta = args
        rng = next((m for m in meta if isinstance(m, Range)), None)
        nested = next((m for m in meta if isinstance(m, (MethodParams, MethodName))), None)
        return tuple(ParamType(a.kind, rng if a.kind in ("int", "float") else a.range, a.choices, a.item,
                               nested if a.kind in ("mapping", "str", "list") else a.nested)
                     for a in _alternatives(base))
    if origin in (Union, types.UnionType):
        out = []
        for a in args:
            out.extend(_alternatives(a))
        strs = [a for a in out if a.kind == "str" and a.choices]
        if len(strs) > 1:  # Literal["a"] | Literal["b"] -> one choice list
            merged = ParamType("str", choices=tuple(c for s in strs for c in s.choices))
            out = [a for a in out if a not in strs]
            out.insert(0, merged)
        return tuple(out)
    if origin is Literal:
        if not all(isinstance(a, str) for a in args):
            raise TypeError(f"only string Literals are supported, got {hint}")
        return (ParamType("str", choices=tuple(args)),)
    if hint is int:
        return (ParamType("int"),)
    if hint is float:
        return (ParamType("float"),)
    if hint is bool:
        return (ParamType("bool"),)
    if hint is str:
        return (ParamType("str"),)
    if hint in (dict, Mapping) or origin in (dict, Mapping):
        return (ParamType("mapping"),)
    if hint in (list, tuple, Sequence) or origin in (list, tuple, Sequence):
        item = [a for a in args if a is not Ellipsis]
        return (ParamType("list", item=_alternatives(item[0]) if item else (ParamType("any"),)),)
    raise TypeError(f"unsupported parameter annotation {hint!r}")


def param_types(fn) -> dict[str, tuple[ParamType, ...]]:
    """Keyword-only parameter name -> its type alternatives, from ``fn``'s annotations.
    An unannotated parameter is ``Any`` (a test requires every method to annotate all)."""
    import inspect

    hints = typing.get_type_hints(fn, include_extras=True)
    out = {}
    for name, p in inspect.signature(fn).parameters.items():
        if p.kind != p.KEYWORD_ONLY:
            continue
        out[name] = _alternatives(hints[name]) if name in hints else (ParamType("any"),)
    return out


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


NO = (False, None)


def _in_range(alt: ParamType, out):
    return (True, out) if alt.range is None or out in alt.range else NO


def _try_int(alt: ParamType, v):
    if _is_int(v):
        return _in_range(alt, int(v))
    if _is_number(v) and math.isfinite(float(v)) and float(v).is_integer():
        return _in_range(alt, int(float(v)))
    return NO


def _try_float(alt: ParamType, v):
    if not _is_number(v) or not math.isfinite(float(v)):
        return NO
    return _in_range(alt, float(v))


def _try_str(alt: ParamType, v):
    if not isinstance(v, str):
        return NO
    return (True, v) if not alt.choices or v in alt.choices else NO


def _try_list(alt: ParamType, v):
    if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, (Sequence, np.ndarray)):
        return NO
    out = []
    for item in v:
        conv = next((c for ok, c in (_try(a, item) for a in alt.item) if ok), NO)
        if conv is NO:
            return NO
        out.append(conv)
    return True, out


_TRY = {
    "any": lambda alt, v: (True, v),
    "none": lambda alt, v: (v is None, None),
    "bool": lambda alt, v: (True, bool(v)) if isinstance(v, (bool, np.bool_)) else NO,
    "int": _try_int,
    "float": _try_float,
    "str": _try_str,
    "mapping": lambda alt, v: (True, dict(v)) if isinstance(v, Mapping) else NO,
    "list": _try_list,
}


def _try(alt: ParamType, v):
    """(True, converted value) when ``v`` fits ``alt``, else (False, None)."""
    return _TRY[alt.kind](alt, v)


def coerce(alts: tuple[ParamType, ...], value):
    """``value`` converted to the first alternative it fits; :class:`ParamValueError` otherwise.
    An integer value never falls back on a float alternative when the parameter also
    takes integers (``min_samples_split=1`` is not the fraction 1.0)."""
    tried = alts
    if _is_int(value) and any(a.kind == "int" for a in alts):
        tried = tuple(a for a in alts if a.kind != "float")
    for alt in tried:
        ok, out = _try(alt, value)
        if ok:
            return out
    got = repr(value)
    if _is_number(value) and not _is_int(value) and any(a.kind == "int" for a in alts) \
            and not any(a.kind == "float" for a in alts):
        got += " (a float is never truncated to an integer)"
    raise ParamValueError(f"expected {describe(alts)}, got {got}")


def parse_text(text: str):
    """A command-line value: YAML (``3``, ``0.5``, ``true``, ``[1, 2]``, ``null``), with
    numbers in any Python float spelling (``1e3``, ``inf``) read as numbers."""
    import yaml

    try:
        v = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return v
    return v


def json_schema(alts: tuple[ParamType, ...]) -> dict:
    """JSON-schema fragment of a parameter (for ``ssfs methods --json`` and the config docs)."""
    def one(a: ParamType) -> dict:
        if a.kind == "any":
            return {}
        if a.kind == "none":
            return {"type": "null"}
        if a.kind == "bool":
            return {"type": "boolean"}
        if a.kind == "str":
            return {"enum": list(a.choices)} if a.choices else {"type": "string"}
        if a.kind == "mapping":
            return {"type": "object"}
        if a.kind == "list":
            return {"type": "array", "items": json_schema(a.item)}
        s = {"type": "integer" if a.kind == "int" else "number"}
        r = a.range
        if r is not None:
            if r.low is not None:
                s["exclusiveMinimum" if r.low_open else "minimum"] = r.low
            if r.high is not None:
                s["exclusiveMaximum" if r.high_open else "maximum"] = r.high
        return s

    parts = [one(a) for a in alts]
    if any(a.kind == "int" for a in alts):  # an integer never falls back on a float alternative
        parts = [dict(p, **{"not": {"type": "integer"}}) if a.kind == "float" else p
                 for a, p in zip(alts, parts, strict=True)]
    if any(p == {} for p in parts):
        return {}
    return parts[0] if len(parts) == 1 else {"anyOf": parts}
