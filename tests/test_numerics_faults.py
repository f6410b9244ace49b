"""Numerical faults a new user meets, as one table (issue 30, items 1-2; docs/invariances.md):
a feature or the whole matrix at 1e300 or 1e-300, exact subnormals, int64 values near 2^62,
columns or samples in another order, an exact copy of a feature, integer data full of ties,
labels of one class; through every registered method, the command line and the selector.

Each row is one input through one door and what must come out: one line naming the problem
(an ``ssfs.errors`` exception, or ``ssfs: error: ...`` with exit status 1), or a result that is
checked against what the method promises (its invariances: the same ranking, scores, or a
copy's score to the last bit), with the note the user must see and no note that would be
false. Any other exception is a traceback and fails the row. The row format is that of
tests/test_faults_table.py (``Case(name, door, expectation)``).
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from method_settings import fast_settings

from ssfs import SSFSError, get_method, list_methods, run_method
from ssfs.errors import InputError


# --------------------------------------------------------------------------- outcomes
@dataclass
class Outcome:
    """What a door gave: the one-line ``error`` (None on success), the ``value``, the notes."""

    error: str | None = None
    error_type: type | None = None
    value: object = None
    notes: list[str] = field(default_factory=list)
    tmp: Path | None = None


def _catching(fn) -> Outcome:
    out = Outcome()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out.value = fn()
        except SSFSError as e:
            out.error, out.error_type = str(e), type(e)
    out.notes = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return out


def api(method: str, X, y):
    """``ssfs.run_method`` with the method's fast settings."""
    def door(tmp: Path) -> Outcome:
        return _catching(lambda: run_method(method, X, y, rng=0, **fast_settings(method, np.shape(X)[1])))

    return door


def sk(method: str, X, y):
    """The scikit-learn selector (``fit``)."""
    def door(tmp: Path) -> Outcome:
        from ssfs import SemiSupervisedSelector

        return _catching(lambda: SemiSupervisedSelector(method, n_features=2).fit(X, y))

    return door


def cli(frame: pd.DataFrame, *argv):
    """``ssfs rank d.csv --label-column label -o r.tsv <argv>`` in ``tmp``; the value is r.tsv."""
    def door(tmp: Path) -> Outcome:
        from ssfs.cli import main

        frame.to_csv(tmp / "d.csv")
        err = io.StringIO()
        cwd, saved = os.getcwd(), warnings.showwarning
        os.chdir(tmp)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = main(["rank", "d.csv", "--label-column", "label", "-o", "r.tsv", *argv])
        finally:
            os.chdir(cwd)
            warnings.showwarning = saved
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        assert "Traceback" not in err.getvalue(), err.getvalue()
        out = Outcome(notes=lines, tmp=tmp)
        if rc:
            out.error, out.error_type = [ln for ln in lines if ln.startswith("ssfs: error:")][-1], SSFSError
        else:
            out.value = pd.read_csv(tmp / "r.tsv", sep="\t")
        return out

    return door


# ------------------------------------------------------------------------ expectations
def Err(*fragments, kind: type = SSFSError):
    """One line holding every fragment, from an error of type ``kind``."""
    def expect(o: Outcome) -> None:
        assert o.error is not None, f"no error: notes {o.notes}"
        assert "\n" not in o.error.strip(), f"not one line: {o.error!r}"
        assert issubclass(o.error_type, kind), f"{o.error_type.__name__} is not {kind.__name__}: {o.error}"
        missing = [f for f in fragments if f not in o.error]
        assert not missing, f"message {o.error!r} lacks {missing}"

    return expect


def Ok(check: Callable | None = None, *, note: str | None = None, quiet: bool = False):
    """No error; ``check(value)`` holds; a note holds ``note``; ``quiet``: no note about the scale."""
    def expect(o: Outcome) -> None:
        assert o.error is None, f"unexpected error: {o.error}"
        if note is not None:
            assert any(note in n for n in o.notes), f"no note {note!r} in {o.notes}"
        if quiet:
            assert not [n for n in o.notes if "multiplied by" in n], o.notes
        if check is not None:
            assert check(o.value) is not False

    return expect


@dataclass
class Case:
    name: str
    door: Callable
    expect: Callable


# ------------------------------------------------------------------------------- data
RNG = np.random.default_rng(30)
N, P = 24, 6
Y = np.where(np.arange(N) < 16, np.arange(N) % 2, -1)
X = np.log1p(RNG.gamma(2.0, 2.0, size=(N, P)))  # positive, continuous (scanpy's flavours accept it)
X[:, 0] += 1.5 * (np.arange(N) % 2)  # feature 0 is planted
TIES = RNG.integers(0, 4, size=(N, P)).astype(float)
INTS = np.round(X * 1000).astype(np.int64)


@cache
def base(method: str, data: str = "X"):
    """The method's result on the reference data (None: a refusal)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M = {"X": X, "INTS": INTS}[data]
            return run_method(method, M, Y, rng=0, **fast_settings(method, P))
    except SSFSError:
        return None


def _key(r):
    """What a run publishes: its subset, else its order."""
    return np.asarray(r.result.selected if r.result.selected is not None else r.order)


def same_ranking(method: str, data: str = "X"):
    return lambda r: np.array_equal(_key(r), _key(base(method, data)))


def same_scores(method: str, features=None, data: str = "X"):
    def check(r):
        ref = base(method, data)
        if ref.result.selected is not None:
            sel = np.asarray(ref.result.selected)
            return np.array_equal(np.asarray(r.result.selected), sel if features is None else features[sel])
        got = r.scores if features is None else r.scores[features]
        np.testing.assert_allclose(got, ref.scores, rtol=1e-9, atol=1e-12 * np.nanmax(np.abs(ref.scores)))
        return True

    return check


def valid(r) -> bool:
    """No NaN, the order a permutation of the features (an extraction: its transform runs)."""
    if r.kind == "extraction":
        return r.result.transform is not None
    if r.result.selected is not None:
        return len(set(np.asarray(r.result.selected).tolist())) == len(r.result.selected)
    return not np.isnan(r.scores).any() and np.array_equal(np.sort(r.order), np.arange(r.scores.size))


def copy_ties(r) -> bool:
    return r.scores[1] == r.scores[-1]


def _with(M, j, values):
    out = np.array(M, dtype=np.result_type(M, np.asarray(values)))
    out[:, j] = values
    return out


def method_rows(m: str) -> list[Case]:
    """The rows of one registered method, expectations from its promises."""
    P_ = get_method(m).promises(fast_settings(m, P))
    scale, unit, shift = "scale" in P_, "unit" in P_, "shift" in P_
    out_of_reach, outside = Err("varies on a scale of", kind=InputError), Err("outside [2^-128, 2^128]",
                                                                              kind=InputError)
    rescaled = Ok(same_ranking(m), note=f"{m}: X was multiplied by 2^")
    rows = [
        Case(f"{m}: one feature x 1e300", api(m, _with(X, 2, X[:, 2] * 1e300), Y),
             Ok(same_ranking(m), quiet=True) if scale else out_of_reach if unit else outside),
        Case(f"{m}: one feature x 1e-300", api(m, _with(X, 2, X[:, 2] * 1e-300), Y),
             Ok(same_ranking(m), quiet=True) if scale else out_of_reach),
        Case(f"{m}: X x 1e300", api(m, X * 1e300, Y),
             Ok(same_ranking(m), quiet=True) if scale else rescaled if unit else outside),
        Case(f"{m}: X x 1e-300", api(m, X * 1e-300, Y),
             Ok(same_ranking(m), quiet=True) if scale else rescaled if unit else outside),
        Case(f"{m}: a feature of exact subnormals (1..24 x 5e-324)",
             api(m, _with(X, 2, np.arange(1, N + 1) * 5e-324), Y),
             Ok(lambda r: r.scores[2] == run_method(m, _with(X, 2, np.arange(1.0, N + 1)), Y, rng=0,
                                                       **fast_settings(m, P)).scores[2]) if scale else out_of_reach),
        Case(f"{m}: an int64 feature near 2^62", api(m, _with(INTS, 3, INTS[:, 3] + 2**62), Y),
             Ok(same_scores(m, data="INTS")) if shift else Err("integers beyond 2^53", kind=InputError)),
        Case(f"{m}: features in reverse order", api(m, X[:, ::-1], Y),
             Ok(same_scores(m, np.arange(P)[::-1])) if "features" in P_ else Ok(valid)),
        Case(f"{m}: samples in reverse order", api(m, X[::-1], Y[::-1]),
             Ok(same_scores(m)) if "samples" in P_ else Ok(valid)),
        Case(f"{m}: an exact copy of a feature, last", api(m, np.column_stack([X, X[:, 1]]), Y),
             Ok(copy_ties) if "copies" in P_ else Ok(valid)),
        Case(f"{m}: integer data full of ties", api(m, TIES, Y), Ok(valid)),
    ]
    if get_method(m).kind == "score":
        rows.append(Case(f"{m}: the selector, one feature x 1e300", sk(m, _with(X, 2, X[:, 2] * 1e300), Y),
                         Ok(quiet=True) if scale else out_of_reach if unit else outside))
    return rows


def _available(m: str) -> bool:
    req = get_method(m).requires
    if not req:
        return True
    try:
        __import__(req)
    except ImportError:
        return False
    return True


FRAME = pd.DataFrame(X, columns=[f"g{i + 1}" for i in range(P)], index=pd.Index([f"s{i}" for i in range(N)], name="id"))
FRAME["label"] = np.where(Y >= 0, np.where(Y == 1, "b", "a"), "")


def _frame(**cols) -> pd.DataFrame:
    f = FRAME.copy()
    for k, v in cols.items():
        f[k] = v
    return f


def _first(table) -> str:
    return table["feature"].iloc[0]


ONE_CLASS = np.where(np.arange(N) < 8, 0, -1)
CASES = [c for m in list_methods() if _available(m) for c in method_rows(m)] + [
    Case("cli: fisher, one feature x 1e300 (issue 30)", cli(_frame(g3=FRAME["g3"] * 1e300), "--method", "fisher"),
         Ok(lambda t: _first(t) == "g1" and t["score"].notna().all())),
    Case("cli: fisher, one feature x 1e-300", cli(_frame(g3=FRAME["g3"] * 1e-300), "--method", "fisher"),
         Ok(lambda t: t.set_index("feature").loc["g3", "rank"] < P)),
    Case("cli: variance, one feature x 1e300", cli(_frame(g3=FRAME["g3"] * 1e300), "--method", "variance"),
         Err("varies on a scale of", "'variance'")),
    Case("cli: an int64 column near 2^62", cli(_frame(g4=INTS[:, 3] + 2**62), "--method", "fisher"),
         Err("feature 'g4' holds integers beyond 2^53")),
    Case("cli: exact subnormals", cli(_frame(g3=np.arange(1, N + 1) * 5e-324), "--method", "fisher"),
         Ok(lambda t: np.isfinite(t.set_index("feature").loc["g3", "score"]))),
    Case("cls: every labeled sample in one class", api("cls", X, ONE_CLASS),
         Ok(valid, note="every labeled sample is in class 0, so no cannot-link pair")),
    Case("csfs: every labeled sample in one class", api("csfs", X, ONE_CLASS),
         Ok(valid, note="the label terms are not used")),
    Case("fisher: every labeled sample in one class", api("fisher", X, ONE_CLASS),
         Err("needs labeled samples of at least 2 classes")),
    Case("efsis_basic: columns reversed, same scores (the long-standing xfail)", api("efsis_basic", X[:, ::-1], Y),
         Ok(same_scores("efsis_basic", np.arange(P)[::-1]))),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_numerical_fault(case, tmp_path):
    case.expect(case.door(tmp_path))


def test_the_table_is_large():
    assert len(CASES) >= 300
