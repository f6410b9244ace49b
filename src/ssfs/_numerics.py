"""The input a method computes on, chosen by the invariances it promises
(:data:`ssfs.registry.INVARIANCES`, docs/invariances.md).

A method's formulas square and sum the values: near 1e300 they overflow, near 1e-300 they
underflow, and a feature whose offset dwarfs its spread loses its digits to cancellation
(one-pass variances). Rather than ask every method to guard against that, the runner hands
each method X in the unit the method does not depend on:

* ``scale`` promised: every feature multiplied by its own power of two, so that its largest
  |value| lies in [0.5, 1) (:func:`feature_exponents`). A power of two keeps every mantissa
  (exact, subnormals included), so on ordinary data a per-feature formula gives the same
  bits as before; a feature at 1e300 beside one at 1e-300 costs nothing.
* ``unit`` promised (and not ``scale``): X multiplied by one power of two when its largest
  |value| lies outside [2^-128, 2^128] (exact; a warning says so). A feature that would still
  sit below 2^-480 (its squares near underflow) cannot be compared with the others in one
  unit: the run stops with a one-line error naming it, rather than scoring it as constant.
* neither: X as given, refused (one line) outside [2^-128, 2^128] or with such a feature.
* ``shift`` promised: a dense feature is moved so that its minimum is 0 wherever that is
  exact for every value (:func:`_centred`), after the scaling above (so nothing overflows):
  a feature whose offset dwarfs its spread always is (one-pass variances, sum of squares
  minus squared sum, would lose its digits), and a feature shifted by an exact amount becomes
  the same column as before, so the method's result is the same to the last bit.
* integers beyond 2^53 (:func:`exact_float`): float64 would round them (an int64 feature
  near 2^62 becomes constant). With ``shift`` promised, such a feature is centred in
  integer arithmetic first (exact); otherwise the run stops with a one-line error.

The constant features are those of the input (min == max, exactly), never of a rounded copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ._tiles import column_tiles
from ._validation import column_extremes, column_variance
from .errors import InputError

#: X whose largest |value| lies outside [2^-WINDOW, 2^WINDOW] is rescaled (methods promising "unit")
WINDOW = 128
#: a non-constant feature below 2^-FLOOR in the unit of X cannot be compared with the others
FLOOR = 480
#: the largest integer float64 holds together with all smaller ones
EXACT_INT = 2**53
#: :func:`_centred` first checks the exact shift on this many rows, then on every row only the
#: features that passed (ALLAML, standardised, no feature shifts exactly: 0.8 ms instead of 5)
SHIFT_PROBE_ROWS = 8


@dataclass
class Prepared:
    """X as the method sees it and how it relates to the input: feature j of ``X`` is
    (input_j - shift_j) * 2^-exponents_j * scale."""

    X: object  # float64 ndarray or CSR
    constant: np.ndarray  # features constant in the input (min == max)
    scale: float = 1.0  # one power of two applied to every feature ("unit" rescale), else 1
    exponents: np.ndarray | None = None  # per-feature powers of two ("scale"), else None


def _feature(j: int, names) -> str:
    return f"feature {names[j]!r}" if names is not None else f"feature {j}"


def exact_float(X, *, method: str, shift_ok: bool, names=None):
    """Integer input as float64 without rounding (other input unchanged).

    Integers up to 2^53 convert exactly. A dense feature holding larger ones is centred on
    its midpoint in integer arithmetic when ``shift_ok`` (the method does not depend on a
    feature's offset), then converted; otherwise an :class:`InputError` names it."""
    is_sparse = sparse.issparse(X)
    if is_sparse:
        X = sparse.csr_matrix(X)
    vals = X.data if is_sparse else np.asarray(X)
    if vals.dtype.kind not in "iu" or not vals.size:
        return X
    big = (vals > EXACT_INT) | ((vals < -EXACT_INT) if vals.dtype.kind == "i" else False)
    if not big.any():
        return X
    F = vals.astype(np.float64)
    inexact = _inexact(vals, F)
    if not inexact.any():
        return sparse.csr_matrix((F, X.indices, X.indptr), shape=X.shape) if is_sparse else F
    cols = np.unique(X.indices[inexact] if is_sparse else np.nonzero(inexact)[-1])
    j = int(cols[0])
    example = int(vals[inexact][0])
    if not shift_ok or is_sparse:
        raise InputError(
            f"{_feature(j, names)} holds integers beyond 2^53 that float64 cannot hold exactly (e.g. {example}; "
            f"{cols.size} such feature(s)); method {method!r} depends on each feature's offset, so it would score "
            "rounded values: subtract a baseline from the feature (an identifier? drop it), or use a method "
            "invariant to a per-feature shift (the 'invariant to' column of `ssfs methods`)")
    A = np.asarray(X)
    out = A.astype(np.float64)
    for c in cols:  # loop over the (few) features beyond 2^53: Python integers never overflow
        lo, hi = int(A[:, c].min()), int(A[:, c].max())
        mid = lo + (hi - lo) // 2
        if hi - lo >= 2**62:  # a spread this wide: float64's rounding is relative to it already
            continue
        out[:, c] = (A[:, c].astype(object) - mid).astype(np.float64)
    return out


def refuse_inexact_integers(values, *, feature: str, where: str) -> None:
    """One line when the integers ``values`` (one feature read from a file) go beyond 2^53 and
    float64 would round them (an int64 column near 2^62 becomes constant): the file's matrix is
    stored as float64, so the reader stops rather than hand on rounded values."""
    vals = np.asarray(values)
    if vals.dtype.kind not in "iu" or not vals.size:
        return
    big = (vals > EXACT_INT) | ((vals < -EXACT_INT) if vals.dtype.kind == "i" else False)
    if big.any() and _inexact(vals[big], vals[big].astype(np.float64)).any():
        raise InputError(
            f"{where}: feature {feature!r} holds integers beyond 2^53 that float64 cannot hold exactly "
            f"(e.g. {int(vals[big][0])}): subtract a baseline from the column (an identifier? drop it), "
            "or pass the integer matrix to ssfs.run_method, which keeps it exact for methods invariant to a shift")


def _inexact(vals: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Where the float64 ``F`` of the integers ``vals`` is not their exact value."""
    limit = 2.0**64 if vals.dtype.kind == "u" else 2.0**63
    fits = np.abs(F) < limit
    back = np.zeros_like(vals)
    back[fits] = F[fits].astype(vals.dtype)
    return ~fits | (back != vals)


def feature_exponents(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per feature the exponent e with max |x| in [2^(e-1), 2^e) (0 for an all-zero feature)."""
    m = np.maximum(np.abs(lo), np.abs(hi))
    return np.where(m > 0, np.frexp(m)[1], 0).astype(np.int64)


def _times_powers_of_two(X, e: np.ndarray):
    """X with feature j multiplied by 2^-e_j (exact; no intermediate overflow)."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, copy=True)
        X.data = np.ldexp(X.data, -e[X.indices])
        return X
    return np.ldexp(X, -e[None, :].astype(np.int32))


def prepare_input(X, extremes, *, method: str, promises: frozenset, names=None, alternatives: str = "") -> Prepared:
    """The matrix method ``method`` computes on (module doc), from the checked float64 X and
    its column ``extremes`` (None: computed here)."""
    lo, hi = extremes if extremes is not None else column_extremes(X)
    constant = lo == hi
    if "scale" in promises:
        e = feature_exponents(lo, hi)
        if e.any():
            X = _times_powers_of_two(X, e)
            lo, hi = np.ldexp(lo, -e), np.ldexp(hi, -e)
        prep = Prepared(X, constant, 1.0, e)
    else:
        prep = _common_unit(X, lo, hi, constant, method, promises, names, alternatives)
        lo, hi = lo * prep.scale, hi * prep.scale
    if "shift" in promises and not sparse.issparse(prep.X):
        prep.X = _centred(prep.X, lo)
    return prep


def _common_unit(X, lo, hi, constant, method, promises, names, alternatives) -> Prepared:
    """X in one unit: rescaled by a power of two when "unit" is promised and its largest |value|
    is outside the window; refused when a non-constant feature is out of reach of the others."""
    m = float(max(np.abs(lo).max(), np.abs(hi).max())) if lo.size else 0.0
    scale = 1.0
    if m > 0:
        e = int(np.frexp(m)[1])
        if not -WINDOW <= e <= WINDOW:
            if "unit" not in promises:
                raise InputError(
                    f"X's largest |value| is {m:.3g}, outside [2^-{WINDOW}, 2^{WINDOW}] where method {method!r} "
                    "overflows or underflows, and its result depends on the unit of X: rescale X")
            scale = float(np.ldexp(1.0, -e))
            X = X * scale
    # a feature's extent in the method's unit: its half-range once centred, else its largest |value|
    reach = np.maximum(np.abs(lo), np.abs(hi)) * scale
    if "shift" in promises:
        reach = np.minimum(reach, (hi / 2 - lo / 2) * scale)
    low = np.flatnonzero(~constant & (reach < 2.0**-FLOOR))
    if low.size:
        j, top = int(low[0]), int(np.argmax(np.maximum(np.abs(lo), np.abs(hi))))
        raise InputError(
            f"{_feature(j, names)} varies on a scale of {reach[j] / scale:.3g} while {_feature(top, names)} reaches "
            f"{max(abs(lo[top]), abs(hi[top])):.3g}: beyond float64's range for method {method!r}, which compares "
            "features in one unit; rescale the features (e.g. standardise them)"
            + (f" or use a method invariant to each feature's scale ({alternatives})" if alternatives else ""))
    return Prepared(X, constant, scale, None)


def _centred(X: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """X with every feature moved so that its minimum is 0, where that subtraction is exact
    for every value (features where it is not, or whose minimum is 0, unchanged bit for bit).

    Exact: the method sees the input's information, only nearer 0, and a feature shifted
    exactly (integers, values on a grid) becomes the very same column. A feature whose offset
    dwarfs its spread (values within a factor 2 of its minimum) is always centred exactly
    (Sterbenz' lemma), which is where one-pass variances would lose their digits.

    Returned in C order (the rows are gathered and multiplied by sparse graphs downstream: a
    kNN graph's product with ALLAML's 72 x 7,129 took 13.8 ms Fortran-ordered, 5.9 ms C-ordered)."""
    out = np.ascontiguousarray(X)
    cand = np.flatnonzero(lo != 0)
    probe = min(X.shape[0], SHIFT_PROBE_ROWS)  # most inexact features show it in their first rows
    cand = cand[_shift_is_exact(X[:probe, cand], lo[cand])[0]]
    if not cand.size:
        return out
    if out is X:
        out = X.copy()
    every = cand.size == X.shape[1]  # every feature (integers, counts): tiles are views, not gathers
    for part in column_tiles(X.shape[0], cand.size):  # in cache (ssfs._tiles): the same bits
        idx = part if every else cand[part]
        exact, d = _shift_is_exact(X[:, idx], lo[idx])
        if every and exact.all():
            out[:, idx] = d
        else:
            out[:, np.arange(X.shape[1])[idx][exact]] = d[:, exact]
    return out


def _shift_is_exact(x: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(exact, d): d = x - s, and per column whether it is exact for every value (TwoSum: exact
    iff err = (x - (d - back)) - (s + back) is 0, back = d - x; in two buffers)."""
    d = x - s
    back = d - x
    err = d - back
    np.subtract(x, err, out=err)
    back += s
    err -= back
    return ~(err != 0).any(axis=0), d


def tie_variance_key(X, exponents: np.ndarray | None, tied: np.ndarray) -> np.ndarray | None:
    """The key that breaks ties in a published ranking (higher first), for the ``tied``
    features, from X as the method saw it: the variance; for a method invariant to each
    feature's scale (``exponents`` given), the variance over the squared range, a number
    without unit, so that a feature's unit cannot win its ties either."""
    if not tied.any():
        return None
    idx = np.flatnonzero(tied)
    var = column_variance(X[:, idx])
    if exponents is not None:
        lo, hi = column_extremes(X[:, idx])
        span = hi - lo
        var = np.divide(var, span * span, out=np.zeros_like(var), where=span > 0)
    key = np.zeros(tied.size)
    key[idx] = var
    return key
