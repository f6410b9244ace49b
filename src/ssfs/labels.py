"""Class labels at every door (files, AnnData, CLI, Python, scikit-learn): one encoding.

Inside the library ``y`` holds integer codes with ``-1`` for unlabeled samples
(scikit-learn's semi-supervised convention). :func:`encode_labels` turns whatever a
user gives into a :class:`Labels` record (those codes plus the class names), so names
survive into outputs and error messages; the readers of :mod:`ssfs.io`, the prepared
data of the workflow, ``ssfs.tl``, the selector and the CLI all go through it, so one
file gives one encoding whatever the door. A value is *unlabeled* when it is

* missing: ``None``, NaN, a missing category, blank text (after stripping), or text in
  :data:`MISSING_TEXT` (``NA``, ``nan``, ``NULL``, ``#N/A``, ARFF's ``?`` ...);
* ``-1`` in a numeric array (scikit-learn's convention);
* equal to one of ``unlabeled_values`` (compared as text, so ``-1``, ``"unknown"``
  given on the command line match the cells of a file).

Classes are the distinct labeled values (a category without a labeled sample is no
class), in natural order (:func:`natural_order`: ``'1', '2', '10'``; ``'type2'`` before
``'type10'``), or in the declared order of an *ordered* categorical.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import sys
from typing import NamedTuple

import numpy as np

from .errors import SupervisionError

#: text meaning a missing value in a matrix cell (:mod:`ssfs.io` readers) and in a label cell
NA_TOKENS = ("", "NA", "N/A", "NaN", "nan", "-nan", "NULL", "null", "#N/A", "na")
#: text meaning "no label": the missing-value spellings plus ARFF's ``?``
MISSING_TEXT = frozenset(NA_TOKENS) | {"?"}


class Labels(NamedTuple):
    """Class codes (int64, -1 = unlabeled) and the class names (``classes[c]`` names code
    ``c``; None when the codes are the names). What :func:`encode_labels` returns and what
    :func:`ssfs.run_method` takes as ``y`` to keep the names (unpacks as ``codes, classes``)."""

    codes: np.ndarray
    classes: np.ndarray | None


def _text(v) -> str:
    if isinstance(v, bytes):
        v = v.decode("utf-8", errors="replace")
    if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v) == int(v):
        return str(int(v))
    return str(v).strip()


def _pandas():
    """pandas if it is already imported, else None (then no value can be a pandas object):
    importing it here would add ~0.5 s to every job's start-up."""
    return sys.modules.get("pandas")


def _missing(v) -> bool:
    pd = _pandas()
    if v is None or (pd is not None and (v is pd.NA or v is pd.NaT)):
        return True
    if isinstance(v, (float, np.floating)) and np.isnan(v):
        return True
    return isinstance(v, (str, bytes)) and _text(v) in MISSING_TEXT


def _check_unlabeled_values(unlabeled_values) -> set[str]:
    if unlabeled_values is None:
        return set()
    if isinstance(unlabeled_values, (str, bytes, int, float)):
        unlabeled_values = [unlabeled_values]
    return {_text(u) for u in unlabeled_values}


def encode_labels(values, unlabeled_values=(), *, n: int | None = None) -> Labels:
    """:class:`Labels` ``(codes, classes)``: int64 codes with -1 for unlabeled samples, and the
    class names in natural order (see the module doc).

    ``values``: a sequence, array, pandas Series or Categorical (strings, numbers, bools), or
    :class:`Labels` (returned as they are). ``unlabeled_values``: extra values meaning "no label"
    (compared as text). ``n``: expected length (a SupervisionError otherwise).
    """
    if isinstance(values, Labels):
        return Labels(_checked_length(np.asarray(values.codes, dtype=np.int64), n), values.classes)
    extra = _check_unlabeled_values(unlabeled_values)
    pd = _pandas()
    if pd is not None and isinstance(values, pd.Series):
        values = values.array if isinstance(values.dtype, pd.CategoricalDtype) else values.to_numpy(dtype=object)
    if pd is not None and isinstance(values, pd.Categorical):
        return _encode_categorical(values, extra, n)
    arr = np.asarray(values)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise SupervisionError(f"labels must be 1-dimensional, got shape {arr.shape}")
    _checked_length(arr, n)
    if arr.dtype.kind == "c":
        raise SupervisionError("labels must be class names or codes, not complex numbers")
    if arr.dtype.kind in "iub":
        return Labels(*_encode_integers(arr, extra))
    if arr.dtype.kind == "f":
        return Labels(*_encode_floats(arr, extra))
    return Labels(*_encode_objects(arr, extra))


def natural_order(names) -> list[str]:
    """``names`` (text) sorted as a reader expects: by value when every name is a number
    (``'1', '2', '10'``), else by text with runs of digits compared as numbers
    (``'type2'`` before ``'type10'``)."""
    names = sorted(names)
    with contextlib.suppress(ValueError):
        return sorted(names, key=float)
    return sorted(names, key=lambda t: [(0, int(part), "") if part.isdigit() else (1, 0, part)
                                        for part in re.split(r"(\d+)", t)])


def _encode_categorical(values, extra: set, n: int | None) -> Labels:
    """A categorical's codes mapped to classes: its categories read as text (missing ones and
    ``extra`` unlabeled), those with a labeled sample in natural order, or in the declared
    order when the categorical is ordered. Vectorized over samples."""
    texts = np.array([_text(c) for c in values.categories], dtype=object)
    usable = np.array([not _missing(c) and t not in extra for c, t in zip(values.categories, texts, strict=True)],
                      dtype=bool)
    cat = np.asarray(values.codes, dtype=np.int64)
    lab = cat >= 0
    lab[lab] = usable[cat[lab]]
    present = dict.fromkeys(texts[np.unique(cat[lab])].tolist())
    names = [t for t in dict.fromkeys(texts.tolist()) if t in present] if values.ordered else natural_order(present)
    pos = {t: i for i, t in enumerate(names)}
    to_class = np.array([pos.get(t, -1) for t in texts.tolist()], dtype=np.int64)
    codes = np.full(cat.size, -1, dtype=np.int64)
    codes[lab] = to_class[cat[lab]]
    return Labels(_checked_length(codes, n), np.asarray(names, dtype=object))


def _encode_integers(arr: np.ndarray, extra: set) -> tuple[np.ndarray, np.ndarray]:
    vals = arr.astype(np.int64)
    if (vals < -1).any():
        raise SupervisionError(f"labels must be class codes >= 0, or -1 for unlabeled samples; got {int(vals.min())}")
    lab = vals >= 0
    if extra:
        lab &= ~np.isin(vals.astype(str), list(extra))
    classes, inv = np.unique(vals[lab], return_inverse=True)
    codes = np.full(vals.size, -1, dtype=np.int64)
    codes[lab] = inv
    return codes, classes


def _encode_floats(arr: np.ndarray, extra: set) -> tuple[np.ndarray, np.ndarray]:
    if np.isinf(arr).any():
        raise SupervisionError("labels hold an infinite value")
    lab = np.isfinite(arr) & (arr != -1)
    if extra:
        lab &= ~np.isin(np.array([_text(v) for v in arr], dtype=object), list(extra))
    labeled = arr[lab]
    if labeled.size and np.all(labeled == np.round(labeled)):
        if (labeled < 0).any():
            raise SupervisionError(
                f"labels must be class codes >= 0, or -1 / NaN for unlabeled samples; got {labeled.min():g}"
            )
        labeled = labeled.astype(np.int64)
    classes, inv = np.unique(labeled, return_inverse=True)
    codes = np.full(arr.size, -1, dtype=np.int64)
    codes[lab] = inv
    return codes, classes


def _encode_objects(arr: np.ndarray, extra: set) -> tuple[np.ndarray, np.ndarray]:
    """Text / mixed objects, compared as text; numbers keep numeric order."""
    texts = np.empty(arr.size, dtype=object)
    lab = np.zeros(arr.size, dtype=bool)
    for i, v in enumerate(arr.tolist()):
        if _missing(v) or (isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v == -1):
            continue
        t = _text(v)
        if t not in extra:
            texts[i], lab[i] = t, True
    present = natural_order(set(texts[lab].tolist()))
    pos = {c: i for i, c in enumerate(present)}
    codes = np.array([pos[t] if ok else -1 for t, ok in zip(texts, lab, strict=True)], dtype=np.int64)
    return codes, _names(np.asarray(present, dtype=object))


def _names(classes: np.ndarray) -> np.ndarray:
    """Class names as an array: numbers stay numbers, everything else becomes text."""
    if classes.size and all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in classes):
        return classes.astype(np.int64)
    return np.asarray([_text(c) for c in classes], dtype=object)


def _checked_length(arr: np.ndarray, n: int | None) -> np.ndarray:
    if n is not None and arr.shape != (n,):
        raise SupervisionError(f"labels have shape {arr.shape}, expected ({n},): one label per sample")
    return arr


def class_name(classes, code) -> str:
    """``'MLL'`` (quoted name) of class ``code``, or the code when no names are known."""
    if classes is None or not 0 <= int(code) < len(classes):
        return str(int(code))
    return repr(str(classes[int(code)]))


def class_counts(codes: np.ndarray, classes) -> dict:
    """Labeled samples per class name (classes without any labeled sample count 0)."""
    k = len(classes) if classes is not None else int(codes.max(initial=-1)) + 1
    counts = np.bincount(codes[codes >= 0], minlength=k)
    names = classes if classes is not None else np.arange(k)
    return {str(c): int(m) for c, m in zip(names, counts, strict=True)}


def decode(codes: np.ndarray, classes) -> np.ndarray:
    """Class names of ``codes`` (object array, None for unlabeled)."""
    codes = np.asarray(codes)
    out = np.full(codes.size, None, dtype=object)
    lab = codes >= 0
    out[lab] = np.asarray(classes, dtype=object)[codes[lab]]
    return out


# The class names of the current run_method call, so a method's own error can name a
# class ("class 'MLL'") although it only sees codes.
_CURRENT: contextvars.ContextVar = contextvars.ContextVar("ssfs_class_names", default=None)


@contextlib.contextmanager
def using_class_names(classes):
    token = _CURRENT.set(classes)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_classes():
    """The class names of the running :func:`ssfs.run_method` call (None outside one)."""
    return _CURRENT.get()


def current_class_name(code) -> str:
    """:func:`class_name` of ``code`` with the names of the running :func:`ssfs.run_method` call."""
    return class_name(_CURRENT.get(), code)
