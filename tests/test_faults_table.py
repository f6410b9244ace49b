"""Faults a new user meets, as one table (issue 30; docs/errors.md): each row is an input, the
door it goes through and what must come out, either one line naming the problem (an
``ssfs.errors`` exception, or the command line's ``ssfs: error: ...`` line with exit status 1)
or a correct result (checked, with the note the user must see). Any other exception is a
traceback and fails the row; so does a result without its check.

Doors: ``cli`` (``ssfs.cli.main`` in this process, in a temporary folder), ``prep`` (a
dataset entry of the config through :func:`ssfs.io.prepare_dataset`), ``api``
(:func:`ssfs.run_method`), ``tl`` (:mod:`ssfs.tl` on an AnnData), ``sk`` (the scikit-learn
selector), ``config`` (the workflow's config check), ``py`` (any library call: writers,
readers of intermediate results, workflow steps). Rows that need a process boundary (a
full device as standard output, a file-size limit) are in :data:`PROC_CASES`, started
together as subprocesses.

Adding a row: ``Case("what the user did", door(...), Err(fragments...) | Ok(check, note=...))``.
The rows of tests/test_bad_input.py are not repeated here.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import gzip
import importlib.util
import io
import json
import os
import stat
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from method_settings import fast_settings
from scipy import sparse

from ssfs.errors import (
    ConfigError,
    InputError,
    OutputError,
    SSFSError,
    SupervisionError,
)
from ssfs.registry import get_method, list_methods

REPO = Path(__file__).resolve().parents[1]
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# --------------------------------------------------------------------------- outcomes
@dataclass
class Outcome:
    """What a door gave: ``error`` (one message, None on success) of type ``error_type``,
    the returned ``value``, the ``notes`` the user saw (warnings, stderr lines), the folder."""

    tmp: Path
    error: str | None = None
    error_type: type | None = None
    value: object = None
    notes: list[str] = field(default_factory=list)
    stdout: str = ""


class Traceback(AssertionError):
    """A door let an exception out that is not a one-line ssfs error."""


def _run_catching(tmp: Path, fn, also: tuple = ()) -> Outcome:
    """``fn()`` with its warnings; ``also``: other exception types that are one-line errors at
    this door (scikit-learn's ValueError convention)."""
    out = Outcome(tmp)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out.value = fn()
        except (SSFSError, *also) as e:
            out.error, out.error_type = str(e), type(e)
        except Exception as e:  # noqa: BLE001 - any other exception is the defect this table hunts
            raise Traceback(f"traceback: {type(e).__name__}: {e}") from e
    out.notes = [str(w.message) for w in caught]
    return out


def _files(tmp: Path, files: dict | None) -> None:
    for name, content in (files or {}).items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        else:  # plain file writes: the fault rows patch pathlib's
            with open(path, "wb" if isinstance(content, bytes) else "w") as fh:
                fh.write(content)


# ------------------------------------------------------------------------------ doors
def cli(*argv, files: dict | None = None, stdout=None):
    """``ssfs <argv>`` in ``tmp`` (the folder of ``files``); ``stdout``: a callable giving the
    text stream standing for standard output (default: a buffer)."""

    def door(tmp: Path) -> Outcome:
        from ssfs.cli import main

        _files(tmp, files)
        err, out = io.StringIO(), (stdout(tmp) if stdout else io.StringIO())
        saved = warnings.showwarning
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                try:
                    rc = main([str(a) for a in argv])
                except SystemExit as e:  # argparse: a usage error
                    rc = e.code
                except Exception as e:  # noqa: BLE001
                    raise Traceback(f"traceback: {type(e).__name__}: {e}") from e
        finally:
            os.chdir(cwd)
            warnings.showwarning = saved
            import logging

            logging.getLogger().handlers.clear()
        text = err.getvalue()
        lines = [ln for ln in text.splitlines() if ln.strip()]
        res = Outcome(tmp, stdout=out.getvalue() if isinstance(out, io.StringIO) else "")
        res.notes = lines
        if "Traceback" in text:
            raise Traceback(text)
        if rc != 0:
            errs = [ln for ln in lines if ln.startswith("ssfs: error:") or "error:" in ln]
            assert errs, f"exit status {rc} without an error line: {text!r}"
            res.error, res.error_type = errs[-1], SSFSError if rc == 1 else SystemExit
            res.value = rc
        return res

    door.kind = "cli"
    return door


def prep(entry: dict, files: dict | None = None):
    """Dataset ``d`` of the config entry ``entry`` prepared (``ssfs.io.prepare_dataset``)."""

    def door(tmp: Path) -> Outcome:
        from ssfs.io import prepare_dataset

        _files(tmp, files)
        return _run_catching(tmp, lambda: prepare_dataset("d", dict(entry), tmp))

    return door


def api(method: str, X, y=None, constraints=None, **params):
    def door(tmp: Path) -> Outcome:
        from ssfs import run_method

        return _run_catching(tmp, lambda: run_method(method, X, y, constraints, rng=0, **params))

    return door


def tl(fn: str, adata, *args, **kw):
    """``ssfs.tl.<fn>(adata(), *args, **kw)``; the value is the AnnData."""

    def door(tmp: Path) -> Outcome:
        import ssfs.tl

        a = adata()
        return _run_catching(tmp, lambda: (getattr(ssfs.tl, fn)(a, *args, **kw), a)[1])

    return door


def sk(X, y, **kw):
    """``SemiSupervisedSelector(**kw).fit(X, y)``."""

    def door(tmp: Path) -> Outcome:
        from ssfs import SemiSupervisedSelector

        return _run_catching(tmp, lambda: SemiSupervisedSelector(**kw).fit(X, y), also=(ValueError,))

    return door


def config(**over):
    """The workflow's config check on a tiny config with ``over`` merged in."""

    def door(tmp: Path) -> Outcome:
        from ssfs.workflow.config import load_schema, validate_config

        base = {"datasets": {"wine": {"source": "builtin", "name": "wine"}}, "methods": {"fisher": {}}}
        base.update(over)
        schema = load_schema(REPO / "workflow" / "schemas" / "config.schema.yaml")
        return _run_catching(tmp, lambda: validate_config(base, schema))

    return door


def py(fn: Callable, files: dict | None = None):
    """Any library call ``fn(tmp)``."""

    def door(tmp: Path) -> Outcome:
        _files(tmp, files)
        return _run_catching(tmp, lambda: fn(tmp))

    return door


# ------------------------------------------------------------------------ expectations
def Err(*fragments, kind: type = SSFSError):
    """One line holding every fragment, from an error of type ``kind``."""

    def expect(o: Outcome) -> None:
        assert o.error is not None, f"no error: value {o.value!r}, notes {o.notes}"
        assert "\n" not in o.error.strip(), f"not one line: {o.error!r}"
        if o.error_type is not SystemExit:
            assert issubclass(o.error_type, kind), f"{o.error_type.__name__} is not {kind.__name__}: {o.error}"
        missing = [f for f in fragments if f not in o.error]
        assert not missing, f"message {o.error!r} lacks {missing}"

    return expect


def Ok(check: Callable | None = None, *, note: str | list | None = None, quiet: bool = False):
    """No error; ``check(outcome)`` holds; the notes hold ``note`` (``quiet``: no note at all)."""

    def expect(o: Outcome) -> None:
        assert o.error is None, f"unexpected error: {o.error}"
        for n in [note] if isinstance(note, str) else note or []:
            assert any(n in line for line in o.notes), f"no note {n!r} in {o.notes}"
        if quiet:
            assert not o.notes, o.notes
        if check is not None:
            assert check(o) is not False

    return expect


@dataclass
class Case:
    name: str
    door: Callable
    expect: Callable


# ------------------------------------------------------------------------------- data
RNG = np.random.default_rng(30)
N, P = 12, 6
LAB = np.array(["a"] * 6 + ["b"] * 6)
XP = RNG.normal(size=(N, P))
XP[:, 0] += np.where(LAB == "a", 4.0, -4.0)  # g1 is planted: it separates the classes
FEATS = [f"g{i + 1}" for i in range(P)]
SAMPLES = [f"s{i + 1}" for i in range(N)]
Y01 = (LAB == "b").astype(int)


def frame(X=XP, labels=LAB, feats=FEATS, samples=SAMPLES) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=feats, index=pd.Index(samples, name="id"))
    if labels is not None:
        df["label"] = labels
    return df


def csv_text(sep=",", **kw) -> str:
    return frame(**kw).to_csv(sep=sep)


CSV = csv_text()
TSV = csv_text("\t")


def first(o: Outcome) -> str:
    """The best feature of a ``ssfs rank -o r.tsv`` run."""
    return pd.read_csv(o.tmp / "r.tsv", sep="\t")["feature"].iloc[0]


def planted(o: Outcome) -> bool:
    """The planted feature g1 ranks first (CLI: r.tsv; API: the order; tl: the rank column)."""
    v = o.value
    if isinstance(v, int) or v is None:
        return first(o) == "g1"
    if hasattr(v, "order"):
        return int(v.order[0]) == 0
    if hasattr(v, "var"):
        col = [c for c in v.var.columns if c.endswith("_rank")][0]
        return v.var[col].iloc[0] == 1
    if hasattr(v, "ranking_"):
        return v.ranking_[0] == 1
    raise AssertionError(f"cannot read a ranking from {type(v).__name__}")


def prepared_shape(n, p, names=None, labels=None):
    def check(o: Outcome) -> bool:
        a = o.value
        assert a.shape == (n, p), a.shape
        if names is not None:
            assert list(a.var_names) == list(names), list(a.var_names)
        if labels is not None:
            got = [None if pd.isna(v) else str(v) for v in a.obs["label"]]
            assert got == list(labels), got
        return True

    return check


def _mat(**variables):
    from scipy import io as sio

    return lambda path: sio.savemat(path, variables)


def _h5ad(X=XP, obs=None, var=None, **extra):
    def write(path):
        import anndata

        a = anndata.AnnData(X, obs=obs if obs is not None else pd.DataFrame({"label": LAB}, index=SAMPLES),
                            var=var if var is not None else pd.DataFrame(index=FEATS))
        for k, v in extra.items():
            setattr(a, k, v)
        a.write_h5ad(path)

    return write


def _adata(X=XP, labels=LAB, **obs):
    def make():
        import anndata

        o = pd.DataFrame({"cell_type": pd.Categorical(labels) if labels is not None else None, **obs},
                         index=SAMPLES[: np.shape(X)[0]] if np.shape(X)[0] <= N else None)
        return anndata.AnnData(X, obs=o, var=pd.DataFrame(index=[f"g{i + 1}" for i in range(np.shape(X)[1])]))

    return make


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode(), mtime=0)


def _device(path: Path) -> None:
    """A character device standing for /dev/full: a node of its own when allowed (root), so a
    regression cannot replace the real one; else /dev/full itself (which a non-root user
    cannot replace)."""
    if ROOT:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    else:
        path.symlink_to("/dev/full")


def _is_device(path: Path) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


ARFF = ("@relation r\n" + "".join(f"@attribute {f} numeric\n" for f in FEATS) + "@attribute class {a,b}\n@data\n"
        + "".join(",".join(f"{v:.6f}" for v in row) + f",{lab}\n" for row, lab in zip(XP, LAB, strict=True)))
TENX = {"tenx/matrix.mtx": "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 3\n",
        "tenx/barcodes.tsv": "c1\nc2\n", "tenx/features.tsv": "g1\tg1\tGene Expression\ng2\tg2\tGene Expression\n"}
#: a Cell Ranger 2 matrix folder: 2 genes x 3 cells
TENX2 = {"t2/matrix.mtx": "%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 3\n2 3 5\n1 2 1\n",
         "t2/barcodes.tsv": "c1\nc2\nc3\n", "t2/genes.tsv": "e1\tg1\ne2\tg2\n"}
RANK = ("rank", "d.csv", "--label-column", "label")


def _without(files: dict, name: str) -> dict:
    return {k: v for k, v in files.items() if k != name}


def _arff_first_value(text: str) -> str:
    """:data:`ARFF` with the first value of the first data row replaced by ``text``."""
    head, rows = ARFF.split("@data\n")
    return head + "@data\n" + text + rows[rows.index(","):]


def _bom(path: Path) -> None:
    path.write_bytes(b"\xef\xbb\xbf" + CSV.encode())


def _utf16(path: Path) -> None:
    path.write_bytes(CSV.encode("utf-16"))


def _latin1(path: Path) -> None:
    path.write_bytes(csv_text(feats=["gène1", *FEATS[1:]]).encode("latin-1"))


def _v73(path: Path) -> None:
    """A MATLAB v7.3 file: HDF5 behind MATLAB's 128-byte header (version 0x0200)."""
    import h5py

    with h5py.File(path, "w", userblock_size=512) as f:
        f["X"] = XP
    head = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00 .".ljust(116) + b" " * 8 + b"\x00\x02IM"
    with open(path, "r+b") as fh:
        fh.write(head)


# ============================================================== files and formats (prep / cli)
FILE_CASES = [
    Case("csv named .arff", cli("rank", "d.arff", files={"d.arff": CSV}),
         Err("d.arff is not an ARFF file", "it starts with 'id,g1,g2", "set format: csv")),
    Case("csv named .arff, read as csv", cli("rank", "d.arff", "--format", "csv", "--label-column", "label",
                                             "-o", "r.tsv", files={"d.arff": CSV}), Ok(planted)),
    Case("empty .arff", prep({"path": "e.arff"}, {"e.arff": ""}), Err("e.arff is empty", kind=InputError)),
    Case("arff comments only", prep({"path": "c.arff"}, {"c.arff": "% nothing\n%\n"}),
         Err("c.arff is empty", kind=InputError)),
    Case("arff without @data", prep({"path": "n.arff"}, {"n.arff": ARFF.split("@data")[0]}),
         Err("is not an ARFF file", kind=InputError)),
    Case("arff row with an extra value", prep({"path": "x.arff"}, {"x.arff": ARFF.replace(",a\n", ",a,9\n", 1)}),
         Err("data row 1", "has 8 value(s) for 7 attribute(s)", kind=InputError)),
    Case("arff row with a missing value", prep({"path": "x.arff"},
                                                {"x.arff": ARFF.replace(",a\n", "\n", 1)}),
         Err("data row 1", "has 6 value(s) for 7 attribute(s)", kind=InputError)),
    Case("arff sparse rows", prep({"path": "s.arff"}, {"s.arff": ARFF.split("@data")[0] + "@data\n{0 1, 6 a}\n"}),
         Err("cannot read ARFF file", kind=InputError)),
    Case("arff string attribute", prep({"path": "s.arff"}, {"s.arff": "@relation r\n@attribute a string\n"
                                                                       "@attribute c {x,y}\n@data\nfoo,x\n"}),
         Err("cannot read ARFF file", "String attributes", kind=InputError)),
    Case("arff unknown class value", prep({"path": "u.arff"}, {"u.arff": ARFF.replace(",a\n", ",z\n", 1)}),
         Err("cannot read ARFF file", "z value not in", kind=InputError)),
    Case("arff '?' missing value refused", prep({"path": "q.arff"}, {"q.arff": _arff_first_value("?")}),
         Err("missing value(s)", kind=InputError)),
    Case("arff read whole", prep({"path": "ok.arff"}, {"ok.arff": ARFF}),
         Ok(prepared_shape(N, P, FEATS, list(LAB)))),
    Case("arff binary garbage", prep({"path": "b.arff"}, {"b.arff": b"\x00\xff\xfe\x01" * 20}),
         Err("is not an ARFF file", "not UTF-8 text", kind=InputError)),
    Case("directory as the data file", cli("rank", "dir.csv", files={"dir.csv/x": "1"}),
         Err("dir.csv holds no matrix.mtx(.gz), so it is not a 10x matrix folder (it holds: 'x')")),
    Case("directory without suffix", prep({"path": "adir"}, {"adir/x": "1"}),
         Err("adir holds no matrix.mtx(.gz)", kind=InputError)),
    Case("directory given a csv format", prep({"path": "adir", "format": "csv"}, {"adir/x": "1"}),
         Err("adir is a directory, not a csv file", kind=InputError)),
    Case("10x folder of Cell Ranger 3 files gunzipped", prep({"path": "tenx"}, TENX),
         Err("tenx holds Cell Ranger 3+ files uncompressed (matrix.mtx, barcodes.tsv, features.tsv): gzip them",
             kind=InputError)),
    Case("10x folder, Cell Ranger 2", prep({"path": "t2"}, TENX2), Ok(prepared_shape(3, 2, ["g1", "g2"]))),
    Case("10x folder, labels of some cells",
         prep({"path": "t2", "labels_file": "l.csv"}, {**TENX2, "l.csv": "c1,a\nc3,b\n"}),
         Ok(prepared_shape(3, 2, ["g1", "g2"], ["a", None, "b"]))),
    Case("10x folder without barcodes", prep({"path": "t2"}, _without(TENX2, "t2/barcodes.tsv")),
         Err("t2 has no barcodes.tsv (a Cell Ranger 2 matrix folder holds matrix.mtx, barcodes.tsv, genes.tsv",
             kind=InputError)),
    Case("10x folder without barcodes (ssfs select)", cli("select", "t2", files=_without(TENX2, "t2/barcodes.tsv")),
         Err("t2 has no barcodes.tsv")),
    Case("10x barcodes fewer than the matrix's cells", prep({"path": "t2"}, {**TENX2, "t2/barcodes.tsv": "c1\nc2\n"}),
         Err("matrix.mtx has 3 columns (cells) but barcodes.tsv lists 2", kind=InputError)),
    Case("10x genes more than the matrix's rows",
         prep({"path": "t2"}, {**TENX2, "t2/genes.tsv": "e1\tg1\ne2\tg2\ne3\tg3\n"}),
         Err("matrix.mtx has 2 rows (features) but genes.tsv lists 3", kind=InputError)),
    Case("10x labels matching no barcode",
         prep({"path": "t2", "labels_file": "l.csv"}, {**TENX2, "l.csv": "x1,a\nx2,b\n"}),
         Err("no barcode of the 10x matrix is in labels file", kind=SupervisionError)),
    Case("10x .h5 that is no HDF5 file", prep({"path": "m.h5"}, {"m.h5": b"not hdf5" * 4}),
         Err("cannot read", "as a 10x Genomics .h5", "not an HDF5 file", kind=InputError)),
    Case("a lone .mtx file", prep({"path": "tenx/matrix.mtx"}, TENX), Err("cannot tell the format of matrix.mtx")),
    Case("an Excel file", prep({"path": "d.xlsx"}, {"d.xlsx": b"PK\x03\x04"}), Err("cannot tell the format")),
    Case("csv with a byte-order mark", prep({"path": "b.csv", "label_column": "label"}, {"b.csv": _bom}),
         Ok(prepared_shape(N, P, FEATS, list(LAB)))),
    Case("csv in UTF-16", prep({"path": "u.csv", "label_column": "label"}, {"u.csv": _utf16}),
         Err("u.csv", kind=InputError)),
    Case("latin-1 feature names", prep({"path": "l.csv", "label_column": "label"}, {"l.csv": _latin1}),
         Err("l.csv is not UTF-8 text", kind=InputError)),
    Case("gzip csv", prep({"path": "d.csv.gz", "label_column": "label"}, {"d.csv.gz": _gz(CSV)}),
         Ok(prepared_shape(N, P, FEATS))),
    Case("gzip content named .csv", prep({"path": "z.csv", "label_column": "label"}, {"z.csv": _gz(CSV)}),
         Ok(prepared_shape(N, P, FEATS))),
    Case("truncated gzip", prep({"path": "t.csv.gz", "label_column": "label"}, {"t.csv.gz": _gz(CSV)[:60]}),
         Err("t.csv.gz", kind=InputError)),
    Case("CRLF line ends", prep({"path": "w.csv", "label_column": "label"}, {"w.csv": CSV.replace("\n", "\r\n")}),
         Ok(prepared_shape(N, P, FEATS, list(LAB)))),
    Case("blank lines at the end", prep({"path": "e.csv", "label_column": "label"}, {"e.csv": CSV + "\n\n\n"}),
         Ok(prepared_shape(N, P, FEATS))),
    Case("quoted numbers", prep({"path": "q.csv", "label_column": "label"},
                                {"q.csv": frame().to_csv(quoting=1)}), Ok(prepared_shape(N, P, FEATS))),
    Case("decimal commas in a tsv", prep({"path": "c.tsv", "label_column": "label"},
                                         {"c.tsv": TSV.replace(".", ",")}),
         Err("is not numeric", kind=InputError)),
    Case("thousands separators", prep({"path": "t.csv", "label_column": "label"},
                                      {"t.csv": CSV.replace("s1,", 's1,"1,000.5",', 1).replace(
                                          "id,g1", "id,g0,g1", 1).replace("\ns2,", "\ns2,1,")}),
         Err("t.csv", kind=InputError)),
    Case("numbers spelled 1e999", prep({"path": "o.csv", "label_column": "label"},
                                       {"o.csv": CSV.replace("s3,", "s3,1e999,", 1).replace("id,", "id,big,", 1)}),
         Err("'big' mixes numbers and text", "'1e999'", kind=InputError)),
    Case("TRUE/FALSE column", prep({"path": "b.csv", "label_column": "label"},
                                   {"b.csv": frame().assign(flag=[True, False] * 6).to_csv()}),
         Ok(lambda o: list(o.value[:, "flag"].X.ravel()) == [1.0, 0.0] * 6)),
    Case("a column of NA only", prep({"path": "n.csv", "label_column": "label"},
                                     {"n.csv": frame().assign(gNA=np.nan).to_csv()}),
         Err("missing value(s)", kind=InputError)),
    Case("one sample only", cli("rank", "one.csv", "--method", "variance",
                                files={"one.csv": frame(XP[:1], None, samples=SAMPLES[:1]).to_csv()}),
         Err("1 x 6")),
    Case("one feature only", cli("rank", "d.csv", "--label-column", "label", "--method", "fisher", "-o", "r.tsv",
                                 files={"d.csv": frame(XP[:, :1], feats=["g1"]).to_csv()}), Ok(planted)),
    Case("features as rows", prep({"path": "t.csv", "orientation": "features_as_rows"},
                                  {"t.csv": frame(labels=None).T.to_csv()}), Ok(prepared_shape(N, P, FEATS))),
    Case("no id column", prep({"path": "n.csv", "index_col": None, "label_column": "label"},
                              {"n.csv": frame().to_csv(index=False)}), Ok(prepared_shape(N, P, FEATS))),
    Case("no id column, auto", prep({"path": "n.csv", "label_column": "label"},
                                    {"n.csv": frame().to_csv(index=False)}), Err("index_col", kind=InputError)),
    Case("index column beyond the header", cli(*RANK, "--index-column", "99", files={"d.csv": CSV}),
         Err("index_col is 99", "8 field(s)")),
    Case("feature names differing in case", prep({"path": "c.csv", "label_column": "label"},
                                                 {"c.csv": csv_text(feats=["G1", "g1", *FEATS[2:]])}),
         Ok(prepared_shape(N, P, ["G1", "g1", *FEATS[2:]]))),
    Case("unicode file name and features", prep({"path": "données é.csv", "label_column": "label"},
                                                {"données é.csv": csv_text(feats=["ß1", *FEATS[1:]])}),
         Ok(prepared_shape(N, P, ["ß1", *FEATS[1:]]))),
    Case("every label blank: fisher needs labels", cli(*RANK, "--method", "fisher",
                                                       files={"d.csv": csv_text(labels=[""] * N)}),
         Err("fisher", "label")),
    Case("every label blank: variance runs label-free", cli(*RANK, "--method", "variance", "-o", "r.tsv",
                                                            files={"d.csv": csv_text(labels=[""] * N)}),
         Ok(lambda o: len(pd.read_csv(o.tmp / "r.tsv", sep="\t")) == P)),
    Case("numeric 0/1 labels", cli(*RANK, "--method", "fisher", "-o", "r.tsv", files={"d.csv": csv_text(labels=Y01)}),
         Ok(planted)),
    Case("labels with NA are unlabeled", prep({"path": "n.csv", "label_column": "label"},
                                              {"n.csv": csv_text(labels=["a", "NA"] * 3 + ["b", ""] * 3)}),
         Ok(prepared_shape(N, P, labels=["a", None] * 3 + ["b", None] * 3))),
    Case("labels file with a header", prep({"path": "m.csv", "labels_file": "l.tsv"},
                                           {"m.csv": csv_text(labels=None),
                                            "l.tsv": "id\tclass\n" + "".join(f"{s}\t{c}\n" for s, c in
                                                                             zip(SAMPLES, LAB, strict=True))}),
         Ok(prepared_shape(N, P, labels=list(LAB)))),
    Case("labels file is a directory", prep({"path": "m.csv", "labels_file": "ldir"},
                                            {"m.csv": csv_text(labels=None), "ldir/x": "1"}),
         Err("labels file", "ldir is a directory", kind=InputError)),
    Case("labels file missing", prep({"path": "m.csv", "labels_file": "nope.tsv"}, {"m.csv": csv_text(labels=None)}),
         Err("nope.tsv", kind=SSFSError)),
    Case("label column given twice as a feature name", cli(*RANK, "--label-column", "g1", "--method", "variance",
                                                           files={"d.csv": CSV}),
         Err("column 'label' is not numeric")),
    Case("MATLAB v7.3 file", prep({"path": "v.mat"}, {"v.mat": _v73}), Err("v7.3", kind=InputError)),
    Case("MATLAB X with 3 dimensions", prep({"path": "x.mat"}, {"x.mat": _mat(X=np.ones((3, 2, 2)), Y=np.ones(3))}),
         Err("x.mat", kind=InputError)),
    Case("MATLAB X stored transposed", prep({"path": "t.mat"}, {"t.mat": _mat(X=XP.T, Y=Y01)}),
         Err("X may be stored features x samples", kind=InputError)),
    Case("MATLAB sparse X", prep({"path": "s.mat"}, {"s.mat": _mat(X=sparse.csr_matrix(np.abs(XP)), Y=Y01)}),
         Ok(lambda o: sparse.issparse(o.value.X) and o.value.shape == (N, P))),
    Case("MATLAB int8 X", prep({"path": "i.mat"}, {"i.mat": _mat(X=(XP * 10).astype(np.int8), Y=Y01)}),
         Ok(lambda o: o.value.X.dtype == np.float64 and o.value.X.min() < 0)),
    Case("MATLAB file that is text", prep({"path": "t.mat"}, {"t.mat": CSV}), Err("t.mat", kind=InputError)),
    Case("h5ad that is a csv", prep({"path": "c.h5ad"}, {"c.h5ad": CSV}), Err("cannot read h5ad", kind=InputError)),
    Case("h5ad of zero bytes", prep({"path": "z.h5ad"}, {"z.h5ad": b""}), Err("z.h5ad", kind=InputError)),
    Case("h5ad use_raw without raw", prep({"path": "a.h5ad", "use_raw": True}, {"a.h5ad": _h5ad()}),
         Err("has no .raw", kind=InputError)),
    Case("h5ad duplicated gene names", prep({"path": "a.h5ad"}, {"a.h5ad": _h5ad(var=pd.DataFrame(
        index=["g1", "g1", *FEATS[2:]]))}), Err("'g1' occurs 2 times", kind=InputError)),
    Case("h5ad label column all NaN: label-free", prep({"path": "a.h5ad"}, {"a.h5ad": _h5ad(obs=pd.DataFrame(
        {"label": pd.Categorical([np.nan] * N, categories=["a"])}, index=SAMPLES))}),
         Ok(lambda o: o.value.obs["label"].isna().all())),
    Case("h5ad sparse CSC X", prep({"path": "a.h5ad"}, {"a.h5ad": _h5ad(X=sparse.csc_matrix(np.abs(XP)))}),
         Ok(lambda o: sparse.isspmatrix_csr(o.value.X) or sparse.issparse(o.value.X))),
    Case("h5ad label key on a csv", cli(*RANK, "--label-key", "cell_type", files={"d.csv": CSV}),
         Err("label_key", "applies to format h5ad")),
    Case("unknown --format", cli("rank", "d.csv", "--format", "xlsx", files={"d.csv": CSV}),
         Err("format must be one of")),
    Case("unknown --orientation", cli(*RANK, "--orientation", "sideways", files={"d.csv": CSV}),
         Err("orientation")),
    Case("unknown --normalize", cli(*RANK, "--normalize", "log10", files={"d.csv": CSV}), Err("normalize")),
    Case("txt file with commas", prep({"path": "d.txt", "label_column": "label"}, {"d.txt": CSV}),
         Err("single column", "set format: csv", kind=InputError)),
    Case("binary file named .tsv", prep({"path": "b.tsv"}, {"b.tsv": b"\x00\x01\xff\xfe" * 64}),
         Err("b.tsv", kind=InputError)),
]


# ============================================================================ output faults
def fault(code: int, door, target: str = "pandas.DataFrame.to_csv"):
    """``door`` with ``target`` failing with operating-system error ``code`` (a full disk ...)."""
    from unittest import mock

    def wrapped(tmp: Path) -> Outcome:
        with mock.patch(target, side_effect=OSError(code, os.strerror(code))):
            return door(tmp)

    return wrapped


def nothing_left(*names):
    """No temporary file anywhere under the folder, and none of ``names`` exists."""

    def check(o: Outcome) -> bool:
        left = [p.name for p in o.tmp.rglob(".*.tmp")]
        assert not left, left
        present = [n for n in names if (o.tmp / n).exists()]
        assert not present, present
        return True

    return check


def Errs(*fragments, left: tuple = ("r.tsv",), kind: type = SSFSError):
    """One line holding ``fragments`` and nothing partial left (``left``: names that must not exist)."""

    def expect(o: Outcome) -> None:
        Err(*fragments, kind=kind)(o)
        nothing_left(*left)(o)

    return expect


def _dev_intact(name: str):
    def check(o: Outcome) -> bool:
        assert _is_device(o.tmp / name), f"{name} is no longer a device"
        return True

    return check


def _link_kept(link: str, target: str):
    def check(o: Outcome) -> bool:
        assert (o.tmp / link).is_symlink(), "the link was replaced"
        return pd.read_csv(o.tmp / target, sep="\t")["feature"].iloc[0] == "g1"

    return check


def _full_stdout(tmp: Path):
    return open(tmp / "full", "w")  # noqa: SIM115 - closed with the door's folder


FULL = {"full": _device}
D = {"d.csv": CSV}
ENOSPC, EFBIG, EACCES, EROFS, EDQUOT, EIO = (errno.ENOSPC, errno.EFBIG, errno.EACCES, errno.EROFS, errno.EDQUOT,
                                             errno.EIO)
CAUSE = {ENOSPC: "no space left on the device", EFBIG: "file too large", EACCES: "permission denied",
         EROFS: "read-only file system", EDQUOT: "disk quota exceeded", EIO: "input/output error"}


def _write_prepared(path: str):
    def call(tmp: Path):
        from ssfs.io import write_prepared
        from ssfs.io.delimited import read_delimited

        (tmp / "d.csv").write_text(CSV)
        a = read_delimited(tmp / "d.csv", sep=",", where="d", label_column="label")
        return write_prepared(a, tmp / path)

    return call


def _write_tsv(path: str):
    def call(tmp: Path):
        from ssfs.io.atomic import write_tsv

        return write_tsv(frame(), tmp / path)

    return call


def _pipeline_writer(fn: str, path: str):
    def call(tmp: Path):
        from ssfs.workflow import pipeline

        obj = {"save_npy": np.zeros((2, 3)), "write_json": {"a": 1}}[fn]
        return getattr(pipeline, fn)(obj, tmp / path)

    return call


OUTPUT_CASES = [
    Case("-o an existing directory", cli(*RANK, "-o", "out", files={**D, "out/x": "1"}),
         Err("cannot write out (-o): it is a directory")),
    Case("-o a device", cli(*RANK, "-o", "full", files={**D, **FULL}),
         Err("cannot write full (-o): it is a character device", "-o - writes to standard output")),
    Case("-o a device stays a device", cli(*RANK, "-o", "full", files={**D, **FULL}),
         lambda o: (Err("character device")(o), _dev_intact("full")(o))),
    Case("-o a named pipe", cli(*RANK, "-o", "fifo", files={**D, "fifo": lambda p: os.mkfifo(p)}),
         Err("it is a named pipe")),
    Case("-o a link to a file is followed", cli(*RANK, "-o", "link.tsv",
                                                files={**D, "link.tsv": lambda p: p.symlink_to("target.tsv")}),
         Ok(_link_kept("link.tsv", "target.tsv"))),
    Case("-o a link to a directory", cli(*RANK, "-o", "link", files={**D, "dir/x": "1",
                                                                      "link": lambda p: p.symlink_to("dir")}),
         Err("it is a directory")),
    Case("-o a link to a device", cli(*RANK, "-o", "lk", files={**D, **FULL, "lk": lambda p: p.symlink_to("full")}),
         Err("character device", "points to")),
    Case("-o under /proc", cli(*RANK, "-o", "/proc/ssfs-ranking.tsv", files=D),
         Err("cannot write /proc/ssfs-ranking.tsv (-o): cannot create a file in folder /proc")),
    Case("-o under a regular file", cli(*RANK, "-o", "d.csv/r.tsv", files=D),
         Err("cannot write d.csv/r.tsv (-o): a part of the path is a file, not a folder")),
    Case("-o an empty name", cli(*RANK, "-o", "", files=D), Err("cannot write '' (-o): the file name is empty")),
    Case("-o a name too long", cli(*RANK, "-o", "x" * 300 + ".tsv", files=D),
         Err("(-o): file name too long")),
    Case("-o x.h5ad an existing directory", cli(*RANK, "-o", "x.h5ad", files={**D, "x.h5ad/y": "1"}),
         Err("it is a directory")),
    Case("-o x.h5ad under /proc", cli(*RANK, "-o", "/proc/x.h5ad", files=D), Err("/proc/x.h5ad")),
    *[Case(f"-o r.tsv: {CAUSE[c]}", fault(c, cli(*RANK, "-o", "r.tsv", files=D)),
           Errs(f"cannot write r.tsv (-o): {CAUSE[c]}")) for c in (ENOSPC, EFBIG, EACCES, EROFS, EDQUOT, EIO)],
    *[Case(f"-o x.h5ad: {CAUSE[c]}", fault(c, cli(*RANK, "-o", "x.h5ad", files=D), "pathlib.Path.write_bytes"),
           Errs(f"cannot write x.h5ad (-o): {CAUSE[c]}", left=("x.h5ad",))) for c in (ENOSPC, EFBIG)],
    Case("select -o an existing file", cli("select", "d.csv", "--label-column", "label", "-o", "d.csv", files=D),
         Err("-o d.csv: it exists and is not a folder")),
    Case("select -o under a file", cli("select", "d.csv", "--label-column", "label", "-o", "d.csv/sel", files=D),
         Err("is a file, not a folder")),
    Case("select -o under /proc", cli("select", "d.csv", "--label-column", "label", "--resamples", "2",
                                      "-o", "/proc/ssfs-sel", files=D), Err("/proc/ssfs-sel")),
    Case("select: disk full at summary.json", fault(ENOSPC, cli(
        "select", "d.csv", "--label-column", "label", "--resamples", "2", "-o", "sel", files=D),
        "ssfs.io.atomic.Path.write_text"),
         Errs("sel/summary.json", "no space left", left=("sel/consensus.tsv", "sel/summary.json"))),
    Case("select: disk full at consensus.tsv", fault(ENOSPC, cli(
        "select", "d.csv", "--label-column", "label", "--resamples", "2", "-o", "sel", files=D)),
         Errs("sel/consensus.tsv", "no space left", left=("sel/consensus.tsv",))),
    Case("rank: standard output on a full device", cli(*RANK, files={**D, **FULL}, stdout=_full_stdout),
         Err("cannot write to standard output: no space left")),
    Case("methods: standard output on a full device", cli("methods", files=FULL, stdout=_full_stdout),
         Err("cannot write to standard output: no space left")),
    Case("select: standard output on a full device", cli("select", "d.csv", "--label-column", "label",
                                                         "--resamples", "2", "-o", "sel", files={**D, **FULL},
                                                         stdout=_full_stdout),
         Err("cannot write to standard output")),
    Case("write_prepared into a directory", py(_write_prepared("p.h5ad"), {"p.h5ad/x": "1"}),
         Err("cannot write", "p.h5ad: it is a directory", kind=OutputError)),
    Case("write_prepared under /proc", py(lambda tmp: _write_prepared("/proc/p.h5ad")(tmp)),
         Err("/proc/p.h5ad", kind=OutputError)),
    Case("write_prepared on a full disk", fault(ENOSPC, py(_write_prepared("p.h5ad")), "pathlib.Path.write_bytes"),
         Errs("p.h5ad: no space left", left=("p.h5ad",), kind=OutputError)),
    Case("write_tsv to a device", py(_write_tsv("full"), FULL),
         lambda o: (Err("character device", kind=OutputError)(o), _dev_intact("full")(o))),
    Case("write_tsv under a file", py(_write_tsv("d.csv/t.tsv"), D),
         Err("a part of the path is a file, not a folder", kind=OutputError)),
    Case("write_tsv: file-size limit", fault(EFBIG, py(_write_tsv("t.tsv"))),
         Errs("t.tsv: file too large", left=("t.tsv",), kind=OutputError)),
    Case("save_npy under /proc", py(lambda tmp: _pipeline_writer("save_npy", "/proc/x.npy")(tmp)),
         Err("/proc/x.npy", kind=OutputError)),
    Case("write_json into a directory", py(_pipeline_writer("write_json", "s.json"), {"s.json/x": "1"}),
         Err("it is a directory", kind=OutputError)),
    Case("an h5py write error quoting its errno", py(lambda tmp: _h5py_error(tmp)),
         Errs("x.h5ad: no space left", left=("x.h5ad",), kind=OutputError)),
]


def _h5py_error(tmp: Path):
    from ssfs.io.atomic import atomic_path

    with atomic_path(tmp / "x.h5ad") as t:
        t.write_bytes(b"partial")
        raise RuntimeError("Can't write data (file write failed: time = now, filename = 'x', errno = 28, "
                           "error message = 'No space left on device')")


# ============================================================================ parameters
SEL = ("select", "d.csv", "--label-column", "label", "--resamples", "4", "-o", "sel")


def _same_as(method: str, **params):
    """The ranking equals the one of ``params`` (a clipped value gives the bound's result)."""

    def check(o: Outcome) -> bool:
        from ssfs import run_method

        ref = run_method(method, XP, Y01, rng=0, **params)
        got = o.value.order if hasattr(o.value, "order") else pd.read_csv(o.tmp / "r.tsv", sep="\t")["index"]
        np.testing.assert_array_equal(np.asarray(got), ref.order)
        return True

    return check


def _selected_all(o: Outcome) -> bool:
    s = json.loads((o.tmp / "sel" / "summary.json").read_text())
    return s["n_selected"] == P and "not below the 6 features" in s["note"]


PARAM_CASES = [
    Case("k=1e9 on the command line", cli(*RANK, "--method", "laplacian", "--param", "k=1e9", "-o", "r.tsv",
                                          files=D),
         Ok(_same_as("laplacian", k=N - 1), note="k=1000000000 exceeds n - 1 (the other samples) = 11")),
    Case("k=n-1 is not noted", cli(*RANK, "--method", "laplacian", "--param", "k=11", "-o", "r.tsv", files=D),
         Ok(_same_as("laplacian", k=11), quiet=True)),
    Case("k=1e9 through the API", api("laplacian", XP, k=10**9), Ok(_same_as("laplacian", k=11), note="exceeds n - 1")),
    Case("k=1e9 for relieff", api("relieff", XP, Y01, k=10**9), Ok(planted, note="k=1000000000 exceeds")),
    Case("k=1e9 for cls through tl", tl("rank_features", _adata(), "cls", groupby="cell_type", k=10**9),
         Ok(planted, note="exceeds n - 1")),
    Case("k=1e9 through scikit-learn", sk(XP, Y01, method="cls", params={"k": 10**9}),
         Ok(planted, note="exceeds n - 1")),
    Case("n_pcs above the data", api("cls", XP, Y01, space="pca", n_pcs=500), Ok(note="n_pcs=500 exceeds")),
    Case("n_clusters above the samples", api("wckm", XP, n_clusters=50), Err("n_clusters must be in 1..12, got 50")),
    Case("--top above the features", cli(*SEL, "--top", "100", files=D),
         Ok(_selected_all, note="top = 100 is not below the 6 features")),
    Case("--top equal to the features", cli(*SEL, "--top", "6", files=D), Ok(note="top = 6 is not below")),
    Case("top above the features through tl", tl("select_stable", _adata(), ("fisher", "variance"),
                                                  groupby="cell_type", resamples=4, top=50),
         Ok(lambda o: o.value.var["ssfs_selection_selected"].all(), note="top = 50 is not below")),
    Case("--top 0", cli(*SEL, "--top", "0", files=D), Err("top must be an integer >= 1, got 0")),
    Case("--resamples odd for cpss", cli("select", "d.csv", "--label-column", "label", "--resamples", "3", files=D),
         Err("even for cpss")),
    Case("--resamples 1 for bootstrap", cli("select", "d.csv", "--label-column", "label", "--resamples", "1",
                                            "--scheme", "bootstrap", files=D),
         Err("resamples must be an integer >= 2")),
    Case("--threshold 0", cli(*SEL, "--threshold", "0", files=D), Err("threshold must be in (0, 1]")),
    Case("--threshold 1.5", cli(*SEL, "--threshold", "1.5", files=D), Err("threshold must be in (0, 1]")),
    Case("--threshold nan", cli(*SEL, "--threshold", "nan", files=D), Err("threshold")),
    Case("--methods twice the same", cli(*SEL, "--methods", "fisher,fisher", files=D), Err("distinct")),
    Case("--methods empty", cli(*SEL, "--methods", ",", files=D), Err("methods")),
    Case("--methods unknown", cli(*SEL, "--methods", "fisher,fishr", files=D), Err("unknown method 'fishr'")),
    Case("select --methods an extraction", cli(*SEL, "--methods", "fisher,pca", files=D),
         Err("selection method 'pca' builds components, not a feature ranking")),
    Case("select_stable with an extraction", tl("select_stable", _adata(), ("ssdr",), groupby="cell_type"),
         Err("'ssdr' builds components")),
    Case("config: selection of an extraction", config(methods={"fisher": {}, "pca": {}},
                                                      selection={"methods": ["pca"]}),
         Err("selection.methods: 'pca' builds components", kind=ConfigError)),
    Case("select --param without the method", cli(*SEL, "--param", "k=3", files=D), Err("METHOD.NAME=VALUE")),
    Case("select --param of an absent method", cli(*SEL, "--param", "cls.k=3", "--methods", "fisher", files=D),
         Err("cls")),
    Case("select --param unknown name", cli(*SEL, "--param", "fisher.k=3", "--methods", "fisher", files=D),
         Err("unknown parameter(s) k")),
    Case("--seed negative", cli(*RANK, "--seed", "-1", files=D), Err("seed")),
    Case("--seed text", cli(*RANK, "--seed", "abc", files=D), Err("--seed")),
    Case("--seed beyond 64 bits", cli(*RANK, "--seed", str(2**70), "-o", "r.tsv", files=D), Ok(planted)),
    Case("--labeled-per-class above the class sizes", cli(*RANK, "--labeled-per-class", "50", files=D),
         Err("class 'a' has 6 training sample(s)")),
    Case("--labeled-per-class on label-free data", cli("rank", "d.csv", "--method", "variance",
                                                       "--labeled-per-class", "2",
                                                       files={"d.csv": csv_text(labels=None)}),
         Err("--labeled-per-class 2: d.csv has no labels to keep")),
    Case("--unlabeled-value hides every label", cli(*RANK, "--method", "fisher", "--unlabeled-value", "a",
                                                   "--unlabeled-value", "b", files=D), Err("fisher")),
    Case("--label-column absent", cli("rank", "d.csv", "--label-column", "class", files=D),
         Err("label_column 'class' is not a column")),
    Case("--method an extraction", cli(*RANK, "--method", "pca", files=D), Err("'pca' extracts components")),
    Case("--method unknown", cli(*RANK, "--method", "lasso", files=D), Err("unknown method 'lasso'")),
    Case("--param k=-1", cli(*RANK, "--param", "k=-1", files=D), Err("parameter k", "got -1")),
    Case("--param k= (empty)", cli(*RANK, "--param", "k=", files=D), Err("parameter k")),
    Case("--param k=[3]", cli(*RANK, "--param", "k=[3]", files=D), Err("parameter k")),
    Case("--param bandwidth=auto", cli(*RANK, "--method", "cls", "--param", "bandwidth=auto", "-o", "r.tsv", files=D),
         Ok(planted)),
    Case("--param twice: the last wins", cli(*RANK, "--method", "laplacian", "--param", "k=2", "--param", "k=11",
                                             "-o", "r.tsv", files=D), Ok(_same_as("laplacian", k=11))),
    Case("--constraints missing file", cli(*RANK, "--constraints", "c.tsv", files=D), Err("c.tsv")),
    Case("--constraints unknown sample", cli(*RANK, "--method", "cs2", "--constraints", "c.tsv",
                                             files={**D, "c.tsv": "sample_a\tsample_b\tkind\ns1\tsX\tML\n"}),
         Err("sX")),
    Case("--constraints unknown kind", cli(*RANK, "--method", "cs2", "--constraints", "c.tsv",
                                           files={**D, "c.tsv": "sample_a\tsample_b\tkind\ns1\ts2\tXX\n"}),
         Err("XX")),
    Case("--constraints against the labels", cli(*RANK, "--method", "cs2", "--constraints", "c.tsv",
                                                 files={**D, "c.tsv": "sample_a\tsample_b\tkind\ns1\ts12\tML\n"}),
         Err("contradictory constraints", "'s1'")),
    Case("--constraints empty file", cli(*RANK, "--method", "cs2", "--constraints", "c.tsv",
                                         files={**D, "c.tsv": ""}), Err("c.tsv")),
    Case("--constraints header only", cli(*RANK, "--method", "cs2", "--constraints", "c.tsv", "-o", "r.tsv",
                                          files={**D, "c.tsv": "sample_a\tsample_b\tkind\n"}), Ok(planted)),
    Case("--constraints a sample with itself", cli(*RANK, "--method", "cs2", "--constraints", "c.tsv",
                                                   files={**D, "c.tsv": "sample_a\tsample_b\tkind\ns1\ts1\tCL\n"}),
         Err("s1")),
    Case("--labels-file and --label-column together", cli(*RANK, "--labels-file", "l.tsv",
                                                          files={**D, "l.tsv": "s1\ta\n"}), Err("label")),
]


# ==================================================================== AnnData, arrays, scikit-learn
def _run(*args, **kw):
    from ssfs import run_method

    return run_method(*args, **kw)


def _cons(ml, cl):
    from ssfs import Constraints

    return Constraints(ml, cl)


def _validate(cfg):
    from ssfs.workflow.config import validate_config

    return validate_config(cfg, {})


def _with(make, **changes):
    def build():
        a = make()
        for k, v in changes.items():
            if k == "obs_cols":
                for c, vals in v.items():
                    a.obs[c] = vals
            else:
                setattr(a, k, v)
        return a

    return build


X_NAN = XP.copy()
X_NAN[3, 2] = np.nan
UNUSED_CAT = pd.Categorical(LAB, categories=["a", "b", "c"])

DATA_CASES = [
    Case("tl: groupby absent", tl("rank_features", _adata(), "fisher", groupby="louvain"),
         Err("groupby 'louvain' is not an obs column", "'cell_type'")),
    Case("tl: layer absent", tl("rank_features", _adata(), "variance", layer="counts"),
         Err("layer 'counts' is not in adata.layers")),
    Case("tl: obsp graph absent", tl("rank_features", _adata(), "laplacian", graph="distances"),
         Err("graph 'distances' is not in adata.obsp")),
    Case("tl: X is None", tl("rank_features", _with(_adata(), X=None), "variance"), Err("adata.X is None")),
    Case("tl: NaN in X", tl("rank_features", _adata(X=X_NAN), "variance"), Err("missing or infinite", "sample")),
    Case("tl: every label NaN for fisher", tl("rank_features", _adata(labels=[np.nan] * N), "fisher",
                                              groupby="cell_type"), Err("fisher", "label")),
    Case("tl: an unused category (no class)", tl("rank_features", _with(_adata(), obs_cols={"cell_type": UNUSED_CAT}),
                                      "fisher", groupby="cell_type"), Ok(planted)),
    Case("tl: integer counts", tl("rank_features", _adata(X=np.rint(np.abs(XP) * 10).astype(np.int32)), "variance"),
         Ok(lambda o: o.value.var["variance_rank"].min() == 1)),
    Case("tl: float32 X", tl("rank_features", _adata(X=XP.astype(np.float32)), "fisher", groupby="cell_type"),
         Ok(planted)),
    Case("tl: sparse CSC X", tl("rank_features", _adata(X=sparse.csc_matrix(np.abs(XP))), "variance"),
         Ok(lambda o: o.value.var["variance_rank"].notna().all())),
    Case("tl: a view of the AnnData", tl("rank_features", lambda: _adata()()[:, :4], "fisher", groupby="cell_type"),
         Ok(planted)),
    Case("tl: duplicated gene names", tl("rank_features", _with(_adata(), var_names=["g1", "g1", *FEATS[2:]]),
                                         "fisher", groupby="cell_type"), Ok(planted)),
    Case("tl: one cell", tl("rank_features", _adata(X=XP[:1], labels=LAB[:1]), "variance"), Err("1 x 6")),
    Case("tl: random_state text", tl("rank_features", _adata(), "fisher", groupby="cell_type", random_state="abc"),
         Err("random_state")),
    Case("tl: unlabeled_values hides every label", tl("rank_features", _adata(), "fisher", groupby="cell_type",
                                                      unlabeled_values=["a", "b"]), Err("fisher", "label")),
    Case("tl: select_stable with one method twice", tl("select_stable", _adata(), ("fisher", "fisher"),
                                                       groupby="cell_type"), Err("distinct")),
    Case("tl: select_stable threshold 0", tl("select_stable", _adata(), ("fisher",), groupby="cell_type",
                                             threshold=0.0), Err("threshold")),
    Case("tl: an extraction method", tl("rank_features", _adata(), "pca"), Err("'pca' extracts components")),
    Case("api: an AnnData given", py(lambda tmp: _run("variance", _adata()())),
         Err("not an AnnData", "ssfs.tl.rank_features")),
    Case("api: a 1-d X", api("variance", XP[0]), Err("X")),
    Case("api: a 3-d X", api("variance", np.ones((2, 3, 4))), Err("X")),
    Case("api: text X", api("variance", np.array([["a", "b"], ["c", "d"]])), Err("X")),
    Case("api: complex X", api("variance", XP.astype(complex)), Err("X")),
    Case("api: empty X", api("variance", np.zeros((0, 3))), Err("X")),
    Case("api: X without features", api("variance", np.zeros((5, 0))), Err("X")),
    Case("api: labels as a list of names", api("fisher", XP, list(LAB)), Ok(planted)),
    Case("api: labels longer than X", api("fisher", XP, np.r_[Y01, 0]), Err("labels")),
    Case("api: 2-d labels column", api("fisher", XP, Y01[:, None]), Err("labels have shape (12, 1)")),
    Case("api: labels with None", api("fisher", XP, [None, *LAB[1:]]), Ok(planted)),
    Case("api: boolean labels", api("fisher", XP, LAB == "b"), Ok(planted)),
    Case("api: a constraint index 0.5", py(lambda tmp: _run("cs2", XP, None, _cons([(0.5, 2)], [(0, 7)]))),
         Err("constraint indices must be whole sample positions, got 0.5")),
    Case("api: constraints of three indices", py(lambda tmp: _run("cs2", XP, None, _cons([(0, 1, 2)], []))),
         Err("constraints must be pairs of sample indices (n x 2), got shape (1, 3)")),
    Case("api: constraints as a pair of floats", py(lambda tmp: _run("cs2", XP, None, _cons([(0.0, 2.0)], [(0, 7)]))),
         Ok(lambda o: o.value.order.size == P)),
    Case("api: rng as text", py(lambda tmp: _run("fisher", XP, Y01, rng="seed")), Err("rng")),
    Case("api: pandas frame X keeps the order", api("fisher", frame(labels=None), Y01), Ok(planted)),
    Case("api: integer matrix", api("fisher", np.rint(XP * 100).astype(np.int64), Y01), Ok(planted)),
    Case("api: a constant feature only", api("variance", np.ones((5, 1))), Ok(lambda o: list(o.value.order) == [0])),
    Case("sk: n_features=0", sk(XP, Y01, method="fisher", n_features=0), Err("n_features")),
    Case("sk: n_features='half'", sk(XP, Y01, method="fisher", n_features="half"), Err("n_features")),
    Case("sk: n_features above p keeps all", sk(XP, Y01, method="fisher", n_features=100),
         Ok(lambda o: o.value.n_features_ == P)),
    Case("sk: unknown method", sk(XP, Y01, method="fishr"), Err("unknown method 'fishr'")),
    Case("sk: params not a mapping", sk(XP, Y01, method="cls", params=[("k", 3)]), Err("params")),
    Case("sk: labels as text with unknowns", sk(XP, np.where(np.arange(N) % 3 == 0, "unknown", LAB), method="fisher",
                                                unlabeled_values=["unknown"]), Ok(planted)),
]


# ============================================================================ config
def _ds(**entry):
    return {"d": {"path": "d.csv", **entry}}


CONFIG_CASES = [
    Case("config: datasets empty", config(datasets={}), Err("datasets", kind=ConfigError)),
    Case("config: methods empty", config(methods={}), Err("methods", kind=ConfigError)),
    Case("config: seed 1.5", config(seed=1.5), Err("seed", kind=ConfigError)),
    Case("config: seed as text", config(seed="1"), Err("seed", kind=ConfigError)),
    Case("config: dataset entry a list", config(datasets={"d": ["x.csv"]}), Err("datasets.d", kind=ConfigError)),
    Case("config: method entry a list", config(methods={"fisher": [1]}), Err("methods.fisher", kind=ConfigError)),
    Case("config: unknown format", config(datasets=_ds(format="xlsx")), Err("format", kind=ConfigError)),
    Case("config: unknown normalize", config(datasets=_ds(normalize="log10")), Err("normalize", kind=ConfigError)),
    Case("config: labeled_per_class 0", config(supervision={"labeled_per_class": 0}),
         Err("labeled_per_class", kind=ConfigError)),
    Case("config: repetitions 0", config(supervision={"repetitions": 0}), Err("repetitions", kind=ConfigError)),
    Case("config: selection top 0", config(selection={"methods": ["fisher"], "top": 0}), Err("top", kind=ConfigError)),
    Case("config: selection threshold 2", config(selection={"methods": ["fisher"], "threshold": 2}),
         Err("threshold", kind=ConfigError)),
    Case("config: selection resamples odd", config(selection={"methods": ["fisher"], "resamples": 5}),
         Err("resamples", kind=ConfigError)),
    Case("config: selection unknown key", config(selection={"methods": ["fisher"], "topp": 5}),
         Err("topp", kind=ConfigError)),
    Case("config: selection method unknown", config(selection={"methods": ["fishr"]}), Err("fishr", kind=ConfigError)),
    Case("config: selection labeled_per_class of an unknown dataset",
         config(selection={"methods": ["fisher"], "labeled_per_class": {"wien": 5}}),
         Err("labeled_per_class: 'wien' is not one of the configured datasets (wine)", kind=ConfigError)),
    Case("config: selection labeled_per_class 0", config(selection={"methods": ["fisher"], "labeled_per_class": 0}),
         Err("labeled_per_class", kind=ConfigError)),
    Case("config: evaluation max_features 0", config(evaluation={"max_features": 0}),
         Err("max_features", kind=ConfigError)),
    Case("config: reps_per_job -1", config(execution={"reps_per_job": -1}), Err("reps_per_job", kind=ConfigError)),
    Case("config: log_level LOUD", config(log_level="LOUD"), Err("log_level", kind=ConfigError)),
    Case("config: k 1e9 spelled as YAML text", config(methods={"cls": {"k": "1e9"}}),
         Ok(lambda o: o.value["methods"]["cls"]["params"]["k"] == 10**9)),
    Case("config: k as a float 10.0", config(methods={"cls": {"k": 10.0}}),
         Ok(lambda o: o.value["methods"]["cls"]["params"]["k"] == 10)),
    Case("config: the whole config a list", py(lambda tmp: _validate([1])), Err("mapping", kind=ConfigError)),
]


# ===================================================== intermediate results cut short or changed
def _ranking_file(path: Path) -> Path:
    """A ranking as the workflow's select step writes it (planted g1 first)."""
    from ssfs import run_method
    from ssfs.io.atomic import write_checked_tsv
    from ssfs.ranking import ranking_table

    r = run_method("fisher", XP, Y01, rng=0)
    write_checked_tsv(ranking_table(FEATS, r.scores, r.order), path)
    return path


def _damaged(kind: str):
    """A file writer: a ranking, then damaged as ``kind`` says."""

    def write(path: Path) -> None:
        data = _ranking_file(path).read_bytes()
        lines = data.splitlines(keepends=True)
        damaged = {
            "first rows": b"".join(lines[:3]),
            "mid-line": data[: len(b"".join(lines[:4])) + 5],
            "no end line": b"".join(lines[:-1]),
            "a value edited": data.replace(lines[1].split(b"\t")[2], b"0.5", 1),
            "a row deleted": b"".join(lines[:2] + lines[3:]),
            "a line appended": data + b"g9\t9\t0.1\t7\t1\n",
            "empty": b"",
            "CRLF line ends": data.replace(b"\n", b"\r\n"),
        }[kind]
        path.write_bytes(damaged)

    return write


def _read_ranking(name: str):
    def call(tmp: Path):
        from ssfs.ranking import read_ranking

        return read_ranking(tmp / name)

    return call


def _pipeline(tmp: Path, method: str = "fisher"):
    """prepared data, split and constraints of one repetition, as the workflow's steps write them."""
    from ssfs.io import write_prepared
    from ssfs.io.delimited import read_delimited
    from ssfs.workflow import pipeline

    (tmp / "d.csv").write_text(CSV)
    a = read_delimited(tmp / "d.csv", sep=",", where="d", label_column="label")
    write_prepared(a, tmp / "p.h5ad")
    sup = {"protocol": "holdout", "test_size": 0.25, "n_folds": 5, "labeled_per_class": 3, "small_classes": "error",
           "constraints": {"mode": "all_pairs", "n_ml": 0, "n_cl": 0, "closure": False, "noise": 0.0}}
    pipeline.run_split(prepared=tmp / "p.h5ad", splits=[tmp / "s.json"], sup=sup, seed=0, dataset="d", reps=[0])
    pipeline.run_constraints(prepared=tmp / "p.h5ad", splits=[tmp / "s.json"], constraints=[tmp / "c.tsv"], sup=sup,
                             seed=0, dataset="d", reps=[0])
    return tmp / "p.h5ad", tmp / "s.json", tmp / "c.tsv"


def _select_after(damage: Callable):
    """The select step of one repetition after ``damage(tmp)`` hit one of its inputs."""

    def call(tmp: Path):
        from ssfs.workflow import pipeline

        prepared, split, cons = _pipeline(tmp)
        damage(tmp)
        from ssfs.io.h5ad import read_prepared
        from ssfs.runner import MethodConfig

        pipeline.run_select(read_prepared(prepared), split=split, constraints=cons, ranking=tmp / "r.tsv",
                            settings=MethodConfig("fisher", "fisher"), seed=0, dataset="d", rep=0)
        return tmp / "r.tsv"

    return call


def _cut(name: str, keep: float = 0.5):
    def damage(tmp: Path) -> None:
        data = (tmp / name).read_bytes()
        (tmp / name).write_bytes(data[: int(len(data) * keep)])

    return damage


def _consensus_with(ranks_shape=None, cut_full: bool = False, cut_ranks: bool = False):
    """The consensus step of the selection mode on files written as its chunk jobs write them."""

    def call(tmp: Path):
        from ssfs.workflow import pipeline

        prepared, _, _ = _pipeline(tmp)
        sel = {"resamples": 4, "top": 2, "threshold": 0.6, "scheme": "cpss", "aggregation": "mean_rank",
               "methods": ["fisher"]}
        sup = {"constraints": {"mode": "all_pairs", "n_ml": 0, "n_cl": 0, "closure": False, "noise": 0.0}}
        from ssfs.io.h5ad import read_prepared
        from ssfs.runner import MethodConfig

        pipeline.run_selection_chunk(read_prepared(prepared), ranks=tmp / "k.npz",
                                     settings=MethodConfig("fisher", "fisher"), sup=sup, sel=sel, seed=0, dataset="d",
                                     chunk=[0, 1, 2, 3], full=tmp / "f.tsv")
        if ranks_shape is not None:
            np.savez(tmp / "k.npz", ranks=np.zeros(ranks_shape, dtype=np.int32), failed=np.full(ranks_shape[0], ""),
                     full_failed=np.asarray(""))
        if cut_full:
            _cut("f.tsv")(tmp)
        if cut_ranks:
            _cut("k.npz", 0.9)(tmp)
        pipeline.run_consensus(prepared=prepared, full=[tmp / "f.tsv"], ranks=[tmp / "k.npz"],
                               consensus=tmp / "consensus.tsv", summary=tmp / "summary.json", sel=sel,
                               methods={"fisher": {"method": "fisher", "params": {}}}, dataset="d", seed=0)
        return json.loads((tmp / "summary.json").read_text())

    return call


def _combine_after_cut(tmp: Path):
    from ssfs.workflow import pipeline

    prepared, split, cons = _pipeline(tmp)
    from ssfs.runner import MethodConfig

    settings = MethodConfig("boot", "bootstrap_rank", {"base": "fisher", "n_boot": 4})
    for c in (0, 1):
        pipeline.run_member_chunk(prepared=prepared, split=split, constraints=cons, members=tmp / f"m{c}.npz",
                                  settings=settings, seed=0, dataset="d", rep=0, chunk=c, n_chunks=2)
    _cut("m1.npz", 0.7)(tmp)
    pipeline.run_combine(prepared=prepared, split=split, constraints=cons, chunks=[tmp / "m0.npz", tmp / "m1.npz"],
                         ranking=tmp / "r.tsv", timing=tmp / "t.tsv", settings=settings, seed=0, dataset="d", rep=0)


def _aggregate_reader(fn: str, name: str, writer):
    """A reader of the aggregate step (``read_timings``; scores) on a file cut short."""

    def call(tmp: Path):
        from ssfs.io.atomic import write_checked_tsv
        from ssfs.report import build

        path = tmp / "d" / "base" / "timing" / "m" / name
        path.parent.mkdir(parents=True)
        write_checked_tsv(writer(), path)
        _cut(str(path.relative_to(tmp)), 0.8)(tmp)
        return build.read_timings([path]) if fn == "timings" else build.read_checked_tsv(path)

    return call


def _whole_round_trip(tmp: Path):
    from ssfs._checked import read_checked_tsv
    from ssfs.io.atomic import write_checked_tsv

    df = frame().reset_index()
    write_checked_tsv(df, tmp / "t.tsv")
    back = read_checked_tsv(tmp / "t.tsv")
    pd.testing.assert_frame_equal(back, df, check_exact=False, rtol=1e-9)
    return back


def _manifest_then(damage: Callable | None):
    """Tables and the manifest their step writes last (as the aggregate step does), then ``damage``."""

    def call(tmp: Path):
        from ssfs._checked import check_manifest
        from ssfs.io.atomic import write_manifest, write_tsv

        names = ["tables/scores.tsv", "figures/index.tsv"]
        for n in names:
            write_tsv(frame(), tmp / n)
        write_manifest(tmp, [tmp / n for n in names])
        if damage is not None:
            damage(tmp)
        check_manifest(tmp, names)
        return True

    return call


def _consensus_cut(tmp: Path):
    from ssfs.report.selection import read_consensus

    table = pd.DataFrame({"feature": FEATS, "index": range(P), "frequency": 0.5})
    text = table.to_csv(sep="\t", index=False)
    (tmp / "consensus.tsv").write_text(text[: len(text) // 2])
    return read_consensus(tmp / "consensus.tsv", P)


def _live_lock_message(tmp: Path) -> str:
    """The lock error a second run meets while the first (here: this process) still runs."""
    import socket

    import psutil
    import snakemake.exceptions as sx

    from ssfs.workflow.locks import OWNER_FILE, PARENT_ENV, clear_stale_locks

    sdir = tmp / ".snakemake"
    (sdir / "locks").mkdir(parents=True)
    (sdir / "locks" / "0.output.lock").write_text("x\n")
    me = psutil.Process()
    (sdir / OWNER_FILE).write_text(json.dumps({"host": socket.gethostname(), "pid": me.pid,
                                               "create_time": me.create_time()}))
    original, env = sx.LockException, os.environ.get(PARENT_ENV)
    try:
        assert clear_stale_locks(sdir) is None
        return str(sx.LockException())
    finally:
        sx.LockException = original
        if env is None:
            os.environ.pop(PARENT_ENV, None)
        else:
            os.environ[PARENT_ENV] = env


def _npy_bytes(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


INCOMPLETE = "is incomplete"
REGENERATE = "delete it and run the same snakemake command again to recompute it: rm '"
RESULT_CASES = [
    *[Case(f"ranking {kind}", py(_read_ranking("r.tsv"), {"r.tsv": _damaged(kind)}),
           Err(f"r.tsv {INCOMPLETE}: {why}", REGENERATE, kind=InputError))
      for kind, why in [("first rows", "its end-of-table line is missing"),
                        ("mid-line", "its end-of-table line is missing"),
                        ("no end line", "its end-of-table line is missing"),
                        ("a value edited", "its content does not match the checksum"),
                        ("a row deleted", "its content does not match the checksum written with it (5 rows, 6 "),
                        ("a line appended", "its end-of-table line is not its last line"),
                        ("empty", "the file is empty"),
                        ("CRLF line ends", "its line ends were changed to CRLF")]],
    Case("ranking whole", py(_read_ranking("r.tsv"), {"r.tsv": _ranking_file}),
         Ok(lambda o: list(o.value.order[:1]) == [0])),
    Case("checked table round trip", py(_whole_round_trip), Ok()),
    Case("tied cuts of a ranking cut short", py(lambda tmp: __import__("ssfs.ranking").ranking.tied_cuts(
        tmp / "r.tsv", [1, 2]), {"r.tsv": _damaged("first rows")}), Err(INCOMPLETE, kind=InputError)),
    Case("select step: split cut short", py(_select_after(_cut("s.json"))),
         Err("s.json is incomplete: it is not a complete JSON document", REGENERATE)),
    Case("select step: constraints cut short", py(_select_after(_cut("c.tsv"))),
         Err("c.tsv is incomplete", REGENERATE)),
    Case("select step: prepared data cut short", py(_select_after(_cut("p.h5ad"))),
         Err("p.h5ad is incomplete: the prepared data cannot be read", REGENERATE)),
    Case("select step: constraints of an older ssfs", py(_select_after(
        lambda tmp: (tmp / "c.tsv").write_text("i\tj\tkind\n0\t1\tML\n"))),
         Err("c.tsv is incomplete: its end-of-table line is missing")),
    Case("select step whole", py(_select_after(lambda tmp: None)),
         Ok(lambda o: __import__("ssfs._checked")._checked.read_checked_tsv(o.value)["feature"].iloc[0] == "g1")),
    Case("consensus: full ranking cut short", py(_consensus_with(cut_full=True)), Err("f.tsv is incomplete")),
    Case("consensus: resample ranks cut short", py(_consensus_with(cut_ranks=True)),
         Err("k.npz is incomplete: the archive is damaged")),
    Case("consensus: resample ranks of another dataset", py(_consensus_with(ranks_shape=(4, 5))),
         Err("k.npz is incomplete: its resample ranks hold an array of shape 4 x 5, expected any x 6")),
    Case("consensus: too few resamples", py(_consensus_with(ranks_shape=(3, 6))),
         Err("k.npz is incomplete: the resample ranks of fisher hold 3 rows in all, expected 4 resamples")),
    Case("consensus whole", py(_consensus_with()), Ok(lambda o: o.value["features"][0] == "g1")),
    Case("combine: a member chunk cut short", py(_combine_after_cut), Err("m1.npz is incomplete: the archive")),
    Case("aggregate: a timing cut short", py(_aggregate_reader("timings", "0.tsv", lambda: pd.DataFrame(
        {"rep": range(40), "seconds": 0.5, "peak_mb": 2.0}))), Err("0.tsv is incomplete")),
    Case("evaluation: components cut short", py(lambda tmp: __import__("ssfs._checked")._checked.load_checked_npy(
        tmp / "z.npy"), {"z.npy": lambda p: p.write_bytes(_npy_bytes(np.ones((5, 4)))[:-8])}),
         Err("z.npy is incomplete")),
    Case("report: a summary.json cut short", py(lambda tmp: __import__("ssfs._checked")._checked.read_checked_json(
        tmp / "summary.json"), {"summary.json": '{"features": ["g1", "g2"], "n_sel'}),
         Err("summary.json is incomplete: it is not a complete JSON document")),
    Case("report: the aggregate tables whole", py(_manifest_then(None)), Ok()),
    Case("report: a table cut after the aggregate", py(_manifest_then(_cut("tables/scores.tsv"))),
         Err("scores.tsv is incomplete: its content does not match the checksum its step recorded")),
    Case("report: a table edited after the aggregate", py(_manifest_then(
        lambda tmp: (tmp / "figures/index.tsv").write_text("stem\tsection\n"))), Err("index.tsv is incomplete")),
    Case("report: no manifest (an older aggregate)", py(_manifest_then(
        lambda tmp: (tmp / ".ssfs-manifest.json").unlink())), Err(".ssfs-manifest.json is incomplete: the file is")),
    Case("report: consensus.tsv cut short", py(_consensus_cut),
         Err("consensus.tsv is incomplete: it lists 2 rows, its summary.json 6 features")),
    Case("lock: a second run while the first is alive", py(_live_lock_message),
         Ok(lambda o: f"Snakemake process {os.getpid()}" in o.value and "do not use --unlock" in o.value
            and "can be removed with the --unlock" not in o.value)),
]


# ============================================================================ the table
# ======================================== numerics: scales, orders, copies, ties (issue 30 items 1-2)
#: every registered method through ``run_method`` (and the selector), expectations from the
#: invariances it promises (docs/invariances.md): the same ranking or scores, a copy's score to
#: the last bit, no false note; or one line naming what it cannot compute
NUM_N, NUM_P = 24, 6
NUM_Y = np.where(np.arange(NUM_N) < 16, np.arange(NUM_N) % 2, -1)
NUM_X = np.log1p(np.random.default_rng(31).gamma(2.0, 2.0, size=(NUM_N, NUM_P)))  # positive, continuous
NUM_X[:, 0] += 1.5 * (np.arange(NUM_N) % 2)  # feature 0 is planted
NUM_TIES = np.random.default_rng(32).integers(0, 4, size=(NUM_N, NUM_P)).astype(float)
NUM_INTS = np.round(NUM_X * 1000).astype(np.int64)
ONE_CLASS = np.where(np.arange(NUM_N) < 8, 0, -1)


@functools.cache
def _reference(method: str, data: str = "X"):
    """The method's result on the reference data (fast settings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        M = NUM_X if data == "X" else NUM_INTS
        return _run(method, M, NUM_Y, **fast_settings(method, NUM_P))


def _published(r):
    return np.asarray(r.result.selected if r.result.selected is not None else r.order)


def same_ranking(method: str, rescaled: bool | None = None):
    """The reference ranking; ``rescaled`` False: no note that X was rescaled (it was not)."""
    def check(o: Outcome) -> bool:
        assert rescaled is not False or not [n for n in o.notes if "multiplied by" in n], o.notes
        return np.array_equal(_published(o.value), _published(_reference(method)))

    return check


def same_scores(method: str, where=None, data: str = "X"):
    """The reference scores (``where``: position of each reference feature in the input)."""
    def check(o: Outcome) -> bool:
        ref, r = _reference(method, data), o.value
        if ref.result.selected is not None:
            sel = np.asarray(ref.result.selected)
            return np.array_equal(np.asarray(r.result.selected), sel if where is None else where[sel])
        got = r.scores if where is None else r.scores[where]
        np.testing.assert_allclose(got, ref.scores, rtol=1e-9, atol=1e-12 * np.nanmax(np.abs(ref.scores)))
        return True

    return check


def valid(o: Outcome) -> bool:
    """No NaN, the order a permutation (an extraction: a transform)."""
    r = o.value
    if r.kind == "extraction":
        return r.result.transform is not None
    if r.result.selected is not None:
        return len(set(np.asarray(r.result.selected).tolist())) == len(r.result.selected)
    return not np.isnan(r.scores).any() and np.array_equal(np.sort(r.order), np.arange(r.scores.size))


def _col(M, j, values):
    out = np.array(M, dtype=np.result_type(M, np.asarray(values)))
    out[:, j] = values
    return out


def _subnormal_equals_integers(method: str):
    def check(o: Outcome) -> bool:
        steps = _run(method, _col(NUM_X, 2, np.arange(1.0, NUM_N + 1)), NUM_Y, **fast_settings(method, NUM_P))
        return o.value.scores[2] == steps.scores[2]

    return check


def _numeric_rows(m: str) -> list[Case]:
    """The rows of one registered method."""
    fast = fast_settings(m, NUM_P)
    promised = get_method(m).promises(fast)
    scale, unit, shift = "scale" in promised, "unit" in promised, "shift" in promised

    def run(X, y=NUM_Y):
        return api(m, X, y, **fast_settings(m, np.shape(X)[1]))

    out_of_reach = Err("varies on a scale of", kind=InputError)
    outside = Err("outside [2^-128, 2^128]", kind=InputError)
    kept = Ok(same_ranking(m, rescaled=False))
    rescaled = Ok(same_ranking(m), note=f"{m}: X was multiplied by 2^")
    rows = [
        Case(f"{m}: one feature x 1e300", run(_col(NUM_X, 2, NUM_X[:, 2] * 1e300)),
             kept if scale else out_of_reach if unit else outside),
        Case(f"{m}: one feature x 1e-300", run(_col(NUM_X, 2, NUM_X[:, 2] * 1e-300)), kept if scale else out_of_reach),
        Case(f"{m}: X x 1e300", run(NUM_X * 1e300), kept if scale else rescaled if unit else outside),
        Case(f"{m}: X x 1e-300", run(NUM_X * 1e-300), kept if scale else rescaled if unit else outside),
        Case(f"{m}: a feature of exact subnormals (1..24 x 5e-324)",
             run(_col(NUM_X, 2, np.arange(1, NUM_N + 1) * 5e-324)),
             Ok(_subnormal_equals_integers(m)) if scale else out_of_reach),
        Case(f"{m}: an int64 feature near 2^62", run(_col(NUM_INTS, 3, NUM_INTS[:, 3] + 2**62)),
             Ok(same_scores(m, data="INTS")) if shift else Err("integers beyond 2^53", kind=InputError)),
        Case(f"{m}: features in reverse order", run(NUM_X[:, ::-1]),
             Ok(same_scores(m, np.arange(NUM_P)[::-1])) if "features" in promised else Ok(valid)),
        Case(f"{m}: samples in reverse order", run(NUM_X[::-1], NUM_Y[::-1]),
             Ok(same_scores(m)) if "samples" in promised else Ok(valid)),
        Case(f"{m}: an exact copy of a feature, last", run(np.column_stack([NUM_X, NUM_X[:, 1]])),
             Ok(lambda o: o.value.scores[1] == o.value.scores[-1]) if "copies" in promised else Ok(valid)),
        Case(f"{m}: integer data full of ties", run(NUM_TIES), Ok(valid)),
    ]
    if get_method(m).kind == "score":
        rows.append(Case(f"{m}: the selector, one feature x 1e300",
                         sk(_col(NUM_X, 2, NUM_X[:, 2] * 1e300), NUM_Y, method=m, n_features=2, params=fast),
                         Ok() if scale else out_of_reach if unit else outside))
    return rows


def _importable(m: str) -> bool:
    req = get_method(m).requires
    return req is None or importlib.util.find_spec(req) is not None


NUM_FRAME = frame(NUM_X, labels=np.where(NUM_Y >= 0, np.where(NUM_Y == 1, "b", "a"), ""),
                  samples=[f"s{i}" for i in range(NUM_N)])


def _frame_with(**cols) -> str:
    f = NUM_FRAME.copy()
    for k, v in cols.items():
        f[k] = v
    return f.to_csv()


def _num_rank(method: str, **cols):
    return cli("rank", "d.csv", "--label-column", "label", "--method", method, "-o", "r.tsv",
               files={"d.csv": _frame_with(**cols)})


NUMERIC_CASES = [c for m in list_methods() if _importable(m) for c in _numeric_rows(m)] + [
    Case("cli: fisher, one feature x 1e300 (the issue's row)", _num_rank("fisher", g3=NUM_FRAME["g3"] * 1e300),
         Ok(lambda o: first(o) == "g1", quiet=True)),
    Case("cli: fisher, one feature x 1e-300 (scored -inf before)", _num_rank("fisher", g3=NUM_FRAME["g3"] * 1e-300),
         Ok(lambda o: np.isfinite(pd.read_csv(o.tmp / "r.tsv", sep="\t").set_index("feature").loc["g3", "score"]))),
    Case("cli: variance, one feature x 1e300", _num_rank("variance", g3=NUM_FRAME["g3"] * 1e300),
         Err("varies on a scale of", "'variance'")),
    Case("cli: an int64 column near 2^62", _num_rank("fisher", g4=NUM_INTS[:, 3] + 2**62),
         Err("feature 'g4' holds integers beyond 2^53")),
    Case("cli: exact subnormals (scored constant before)", _num_rank("fisher", g3=np.arange(1, NUM_N + 1) * 5e-324),
         Ok(lambda o: np.isfinite(pd.read_csv(o.tmp / "r.tsv", sep="\t").set_index("feature").loc["g3", "score"]))),
    Case("cls: every labeled sample in one class", api("cls", NUM_X, ONE_CLASS),
         Ok(valid, note="every labeled sample is in class 0, so no cannot-link pair")),
    Case("csfs: every labeled sample in one class", api("csfs", NUM_X, ONE_CLASS),
         Ok(valid, note="the label terms are not used")),
    Case("fisher: every labeled sample in one class", api("fisher", NUM_X, ONE_CLASS),
         Err("needs labeled samples of at least 2 classes")),
    Case("efsis_basic: columns reversed, the same scores (the long-standing xfail)",
         api("efsis_basic", NUM_X[:, ::-1], NUM_Y), Ok(same_scores("efsis_basic", np.arange(NUM_P)[::-1]))),
]


CASES: list[Case] = FILE_CASES + OUTPUT_CASES + PARAM_CASES + DATA_CASES + CONFIG_CASES + RESULT_CASES + NUMERIC_CASES


def test_the_table_is_large_and_its_names_unique():
    names = [c.name for c in CASES] + [c[0] for c in PROC_CASES]
    assert len(names) >= 150, len(names)
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fault(case: Case, tmp_path):
    case.expect(case.door(tmp_path))


# ============================================================ across a process boundary
#: (name, shell-free argv after ``ssfs`` or a Python snippet, file-size limit in bytes or None,
#: standard output on a full device, expected exit status, fragment of the one stderr line)
PROC_CASES = [
    ("process: ssfs methods > full device", ["methods"], None, True, 1, "cannot write to standard output"),
    ("process: ssfs rank > full device", list(RANK), None, True, 1, "cannot write to standard output"),
    ("process: ssfs rank -o x.h5ad, file-size limit", [*RANK, "-o", "x.h5ad"], 2000, False, 1,
     "cannot write x.h5ad (-o): file too large"),
    ("process: ssfs select, file-size limit", ["select", "d.csv", "--label-column", "label", "--resamples", "2",
                                               "-o", "sel"], 300, False, 1, "file too large"),
    ("process: ssfs rank piped into a closed pipe", [*RANK, "--method", "variance"], None, "closed", 0, None),
    ("process: workflow step, file-size limit", "step", 100, False, 1, "ERROR: cannot write t.tsv: file too large"),
]

_STEP = """
import sys, pandas as pd
from types import SimpleNamespace as NS
from ssfs.io.atomic import write_tsv
from ssfs.workflow.scripting import run_step
sm = NS(threads=1, log=[], config={}, rule="demo", wildcards=NS(items=lambda: []), params=NS(items=lambda: []))
run_step(lambda sm: write_tsv(pd.DataFrame({"x": range(1000)}), "t.tsv"), sm)
"""


def _start(case, tmp: Path):
    import resource

    name, argv, limit, full, _, _ = case
    wd = tmp / name.replace(" ", "_").replace(">", "").replace(",", "").replace(":", "")
    wd.mkdir()
    (wd / "d.csv").write_text(CSV)
    if argv == "step":
        cmd = [sys.executable, "-c", _STEP]
    else:
        cmd = [sys.executable, "-c", "import sys; from ssfs.cli import main; sys.exit(main())", *argv]

    def limits():
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    if full == "closed":
        r, w = os.pipe()
        os.close(r)
        stdout = w
    elif full:
        stdout = open("/dev/full", "w")  # noqa: SIM115 - closed by _finish
    else:
        stdout = subprocess.PIPE
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(cmd, cwd=wd, stdout=stdout, stderr=subprocess.PIPE, preexec_fn=limits, env=env)
    if full == "closed":
        os.close(w)
    elif full:
        stdout.close()
    return proc, wd


def test_faults_across_processes(tmp_path):
    """Every process case started at once (their start-ups overlap), then checked: exit
    status, one stderr line with the fragment, no traceback, no temporary file left."""
    started = {c[0]: (c, *_start(c, tmp_path)) for c in PROC_CASES}
    failed = []
    for name, (case, proc, wd) in started.items():
        _, err = proc.communicate(timeout=300)
        err = err.decode(errors="replace")
        code, fragment = case[4], case[5]
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("ssfs demo")]
        hits = [ln for ln in lines if fragment in ln] if fragment else [ln for ln in lines if "error" in ln.lower()]
        left = [p.name for p in wd.rglob(".*.tmp")]
        if ("Traceback" in err or "Exception ignored" in err or proc.returncode != code
                or len(hits) != (1 if fragment else 0) or left):
            failed.append(f"{name}: exit {proc.returncode}, left {left}, stderr {err[-600:]!r}")
    assert not failed, "\n".join(failed)


_JIT = """
import sys
from ssfs._jit import numba_module
numba = numba_module()
sys.path.insert(0, sys.argv[1])
import tiny_kernel
assert tiny_kernel.twice(21) == 42
print(numba.config.CACHE_DIR)
"""


def test_numba_caches_go_to_the_user_cache_folder(tmp_path, monkeypatch):
    """ssfs's numba functions (cache=True) write their compiled caches under the user's cache
    folder (``$XDG_CACHE_HOME/ssfs/numba``; ``$NUMBA_CACHE_DIR`` when set), never next to the
    source files (the package's ``__pycache__``)."""
    pytest.importorskip("numba")
    from ssfs._jit import numba_cache_dir

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert numba_cache_dir() == tmp_path / "mine"
    src = tmp_path / "src"
    src.mkdir()
    (src / "tiny_kernel.py").write_text("import numba\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(REPO / "src"))
    res = subprocess.run([sys.executable, "-c", _JIT, str(src)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    folder = tmp_path / "xdg" / "ssfs" / "numba"
    assert res.stdout.strip() == str(folder)
    assert list(folder.rglob("*.nbi")), "no cache index in the cache folder"
    assert not list(src.rglob("*.nbi")) and not list(src.rglob("*.nbc")), "a cache file beside the source"
