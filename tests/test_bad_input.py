"""Bad input fails early and clearly (issue 8): one table of cases, each asserting the
exact error class and that the one-line message names the problem and where it is
(the dataset / file / sample / feature / config key / method).

Sections: files (readers via ``ssfs.io.prepare_dataset``), data (``run_method``,
splits, preprocessing), supervision (constraints), config (``validate_config`` with
the workflow's schema). The workflow itself is checked to stop before any job with a
one-line message for unsafe dataset names and unknown methods. Below the table: the
documented non-error behaviours the issue asks for (sparse input densified when small,
k clamped to n - 1, CLS falling back to the Laplacian score, constant features kept
with a warning, median imputation).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import io as sio
from scipy import sparse

from ssfs import Constraints, run_method
from ssfs._validation import dense
from ssfs.errors import ConfigError, InputError, MethodError, SSFSError, SupervisionError
from ssfs.experiment.splits import make_split
from ssfs.io import prepare_dataset
from ssfs.workflow.config import load_schema, validate_config

REPO = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(REPO / "workflow" / "schemas" / "config.schema.yaml")


# ------------------------------------------------------------------------- builders
def _write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def prep(entry: dict, files: dict | None = None):
    """Case: prepare dataset 'd' after writing ``files`` (name -> text or writer(path))."""

    def run(tmp: Path):
        for name, content in (files or {}).items():
            if callable(content):
                content(tmp / name)
            else:
                _write(tmp, name, content)
        return prepare_dataset("d", entry, tmp)

    return run


def _h5ad(obs_key="label", truncate=False):
    def write(path):
        import anndata

        a = anndata.AnnData(np.arange(12, dtype=float).reshape(4, 3),
                            obs=pd.DataFrame({obs_key: list("aabb")}, index=[f"s{i}" for i in range(4)]))
        a.write_h5ad(path)
        if truncate:
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2])

    return write


def _mat(**variables):
    return lambda path: sio.savemat(path, variables)


ARFF_CLASS_FIRST = """@relation r
@attribute class {a,b}
@attribute f1 numeric
@attribute f2 numeric
@data
a,1,2
b,3,4
"""
ARFF_NOMINAL_FEATURE = """@relation r
@attribute f1 {x,y}
@attribute f2 numeric
@attribute class {a,b}
@data
x,1,a
y,3,b
"""
GOOD = "id,g1,g2,label\ns1,1,2,a\ns2,3,4,a\ns3,5,6,b\ns4,7,9,b\n"


def method(name, X, y=None, constraints=None, **params):
    return lambda tmp: run_method(name, X, y, constraints, rng=0, **params)


def config(**over):
    base = {"datasets": {"wine": {"source": "builtin", "name": "wine"}}, "methods": {"fisher": {}}}
    base.update(over)
    return lambda tmp: validate_config(base, SCHEMA)


def call(fn, *args, **kw):
    return lambda tmp: fn(*args, **kw)


_rng = np.random.default_rng(0)
X6 = _rng.normal(size=(6, 3))
Y6 = np.array([0, 0, 0, 1, 1, 1])
X_NAN = X6.copy()
X_NAN[1, 2] = np.nan

# (id, case(tmp) -> raises, exact error class, fragments the message must contain)
CASES = [
    # ---------------------------------------------------------------- files
    ("missing file", prep({"path": "nope.csv"}), InputError, ["dataset 'd'", "file not found", "nope.csv"]),
    ("empty file", prep({"path": "e.csv", "label_column": "label"}, {"e.csv": ""}), InputError,
     ["dataset 'd'", "e.csv", "is empty"]),
    ("truncated h5ad", prep({"path": "t.h5ad"}, {"t.h5ad": _h5ad(truncate=True)}), InputError,
     ["dataset 'd'", "t.h5ad", "truncated or corrupt"]),
    ("wrong delimiter", prep({"path": "semi.csv", "label_column": "label"},
                             {"semi.csv": GOOD.replace(",", ";")}), InputError,
     ["dataset 'd'", "semi.csv", "single column", "semicolon", "wrong delimiter", "comma-separated (format: csv)",
      "tab-separated (format: tsv)"]),
    ("duplicated sample names", prep({"path": "d.csv", "label_column": "label"},
                                     {"d.csv": GOOD.replace("s2,", "s1,")}), InputError,
     ["dataset 'd'", "sample name 's1' occurs 2 times"]),
    ("duplicated feature names", prep({"path": "d.csv", "label_column": "label"},
                                      {"d.csv": GOOD.replace("g2", "g1")}), InputError,
     ["dataset 'd'", "column name 'g1' occurs 2 times"]),
    ("header-only table", prep({"path": "h.csv", "label_column": "label"}, {"h.csv": "id,g1,g2,label\n"}),
     InputError, ["dataset 'd'", "h.csv", "header but no data rows"]),
    ("labels file sample names do not match", prep(
        {"path": "m.tsv", "labels_file": "lab.tsv"},
        {"m.tsv": "id\tg1\tg2\ns1\t1\t2\ns2\t3\t4\ns3\t5\t6\n", "lab.tsv": "s1\ta\ns2\tb\nsX\tb\n"}),
     SupervisionError, ["dataset 'd'", "1 of 3 sample(s)", "not in labels file", "lab.tsv", "'s3'", "'sX'"]),
    ("mixed-type column", prep({"path": "x.csv", "label_column": "label"},
                               {"x.csv": GOOD.replace("s2,3,4", "s2,3,four")}), InputError,
     ["dataset 'd'", "x.csv", "column 'g2' mixes numbers and text", "row 's2'", "line 3", "'four'"]),
    ("non-numeric column", prep({"path": "x.csv", "label_column": "label"},
                                {"x.csv": "id,g1,g2,label\ns1,1,u,a\ns2,3,v,a\ns3,5,w,b\ns4,7,x,b\n"}),
     InputError, ["dataset 'd'", "column 'g2' is not numeric", "row 's1'"]),
    ("NaN without imputation", prep({"path": "n.csv", "label_column": "label"},
                                    {"n.csv": GOOD.replace("s3,5,6", "s3,NA,6")}), InputError,
     ["dataset 'd'", "1 missing value(s)", "'s3'", "'g1'", "missing: median"]),
    ("NaN with imputation, feature never observed", prep(
        {"path": "n.csv", "label_column": "label", "missing": "median"},
        {"n.csv": "id,g1,g2,label\ns1,1,NA,a\ns2,3,NA,a\ns3,5,NA,b\ns4,7,NA,b\n"}), InputError,
     ["dataset 'd'", "1 feature(s) have no observed value", "'g2'"]),
    ("inf without imputation", prep({"path": "i.csv", "label_column": "label"},
                                    {"i.csv": GOOD.replace("s2,3,4", "s2,inf,4")}), InputError,
     ["dataset 'd'", "1 infinite value(s)", "sample 's2'", "feature 'g1'"]),
    ("inf with imputation", prep({"path": "i.csv", "label_column": "label", "missing": "median"},
                                 {"i.csv": GOOD.replace("s2,3,4", "s2,3,-inf")}), InputError,
     ["dataset 'd'", "1 infinite value(s)", "sample 's2'", "feature 'g2'"]),
    ("MATLAB file without Y", prep({"path": "m.mat"}, {"m.mat": _mat(X=np.ones((3, 2)), labels=np.ones(3))}),
     InputError, ["dataset 'd'", "m.mat", "lacks variable(s) Y", "it has: X, labels"]),
    ("MATLAB file without X", prep({"path": "m.mat"}, {"m.mat": _mat(data=np.ones((3, 2)), Y=np.ones(3))}),
     InputError, ["dataset 'd'", "m.mat", "lacks variable(s) X"]),
    ("ARFF class attribute not last", prep({"path": "c.arff"}, {"c.arff": ARFF_CLASS_FIRST}), InputError,
     ["dataset 'd'", "c.arff", "class attribute must be the last one and nominal", "'f2'", "numeric"]),
    ("ARFF nominal attribute before the class", prep({"path": "c.arff"}, {"c.arff": ARFF_NOMINAL_FEATURE}),
     InputError, ["dataset 'd'", "c.arff", "1 feature attribute(s)", "not numeric", "'f1'"]),
    ("unknown file suffix", prep({"path": "data.xyz"}, {"data.xyz": GOOD}), ConfigError,
     ["dataset 'd'", "data.xyz", "cannot tell the format", "set format"]),
    ("label column absent", prep({"path": "g.csv", "label_column": "class"}, {"g.csv": GOOD}),
     SupervisionError, ["dataset 'd'", "label_column 'class' is not a column", "g.csv"]),
    ("h5ad label key absent", prep({"path": "a.h5ad", "label_key": "cell_type"}, {"a.h5ad": _h5ad("group")}),
     SupervisionError, ["dataset 'd'", "label_key 'cell_type'", "a.h5ad", "available obs columns: 'group'"]),
    ("only one labeled class left", prep({"path": "u.csv", "label_column": "label", "unlabeled_values": ["b"]},
                                         {"u.csv": GOOD}), SupervisionError,
     ["dataset 'd'", "has one class ('a')", "unlabeled_values"]),
    # ----------------------------------------------------------------- data
    ("one class only", prep({"path": "o.csv", "label_column": "label"}, {"o.csv": GOOD.replace(",b\n", ",a\n")}),
     SupervisionError, ["dataset 'd'", "has one class ('a')", "at least 2"]),
    ("class smaller than labeled_per_class",
     call(make_split, np.array([0] * 30 + [1] * 6), 0, np.random.default_rng(0), np.random.default_rng(1),
          labeled_per_class=5, dataset="d"), SupervisionError,
     ["d: class 1 has 4 training sample(s)", "fewer than labeled_per_class = 5", "small_classes: all"]),
    ("class smaller than labeled_per_class, named", call(
        make_split, np.array([0] * 30 + [1] * 6), 0, np.random.default_rng(0), np.random.default_rng(1),
        labeled_per_class=5, dataset="d", class_names=np.array(["ALL", "AML"])), SupervisionError,
     ["d: class 'AML' has 4 training sample(s)", "(supervision: small_classes: all)"]),
    ("kfold with a class smaller than n_folds",
     call(make_split, np.array([0] * 30 + [1] * 6), 0, np.random.default_rng(0), np.random.default_rng(1),
          protocol="kfold", n_folds=10, dataset="d"), SupervisionError,
     ["d: the smallest class has 6 samples", "fewer than n_folds = 10"]),
    ("negative values with log2", prep({"path": "l.csv", "label_column": "label", "normalize": "log2"},
                                       {"l.csv": GOOD.replace("s1,1,2", "s1,-4,2")}), InputError,
     ["dataset 'd'", "normalize: log2", "1 value(s) are <= 0 after adding log_offset 1", "minimum"]),
    ("sparse too large to densify", method("wckm", sparse.csr_matrix((200_000, 300_000)), n_clusters=2), InputError,
     ["wckm needs a dense matrix", "200000 x 300000", "447.0 GiB", "limit 4 GiB", "top_variable"]),
    ("NaN in the matrix given to a method", method("variance", X_NAN), InputError,
     ["X holds 1 missing or infinite value(s)", "sample 1, feature 2"]),
    ("a single sample", method("variance", X6[:1]), InputError, ["X has shape 1 x 3", "at least 2 samples"]),
    ("labels of the wrong length", method("fisher", X6, Y6[:4]), SupervisionError,
     ["labels have shape (4,)", "expected (6,)"]),
    ("one labeled class for a supervised method", method("fisher", X6, np.array([0, 0, 0, -1, -1, -1])),
     SupervisionError, ["method 'fisher'", "at least 2 classes, got 1"]),
    ("unknown method", method("fishr", X6, Y6), MethodError, ["unknown method 'fishr'", "known methods:", "fisher"]),
    ("unknown method parameter", method("laplacian", X6, kk=3), MethodError,
     ["method 'laplacian'", "unknown parameter(s) kk", "accepted: bandwidth"]),
    # ------------------------------------------------------------ supervision
    ("constraint out of range", method("cs2", X6, None, Constraints([[0, 9]], [[1, 2]])), SupervisionError,
     ["must-link constraint (0, 9)", "outside 0..5"]),
    ("contradictory constraints", method("cs2", X6, None, Constraints([[0, 1], [2, 3]], [[1, 0]])),
     SupervisionError, ["contradictory constraints", "pair (0, 1) is both must-link and cannot-link"]),
    ("no cannot-link for a method that needs them", method("cs1", X6, None, Constraints([[0, 1]], [])),
     SupervisionError, ["method 'cs1' needs cannot-link constraints"]),
    ("no constraints at all", method("cs2", X6, None, Constraints.empty()), SupervisionError,
     ["method 'cs2' needs pairwise constraints"]),
    ("more constraints than pairs", call(Constraints.sample, np.array([0, 0, 1, 1, -1]), 5, 1,
                                         np.random.default_rng(0)), SupervisionError,
     ["asked for 5 must-link constraints", "4 labeled samples only give 2"]),
    ("closure contradiction", call(Constraints([[0, 1], [1, 2]], [[0, 2]]).transitive_closure), SupervisionError,
     ["contradictory constraints", "cannot-link pair joins two samples", "must-link"]),
    ("constraint file without kind column", lambda tmp: Constraints.from_tsv(_write(tmp, "c.tsv", "i\tj\n0\t1\n")),
     InputError, ["constraint file", "c.tsv", "lacks column(s) ['kind']"]),
    # ----------------------------------------------------------------- config
    ("unknown top-level key", config(colour="red"), ConfigError, ["unknown key(s) under <top level>", "'colour'"]),
    ("unknown nested key", config(supervision={"reps": 3}), ConfigError,
     ["unknown key(s) under supervision", "'reps'"]),
    ("wrong type", config(supervision={"repetitions": "five"}), ConfigError,
     ["config key supervision.repetitions", "'five' is not of type 'integer'"]),
    ("negative seed", config(seed=-1), ConfigError, ["config key seed", "-1"]),
    ("unknown method in config", config(methods={"fishr": {}}), ConfigError,
     ["config key methods.fishr", "unknown method 'fishr'"]),
    ("unknown method parameter in config", config(methods={"cls": {"kk": 3}}), ConfigError,
     ["config key methods.cls", "unknown parameter(s) kk"]),
    ("unknown builtin dataset", config(datasets={"w": {"source": "builtin", "name": "wines"}}), ConfigError,
     ["config key datasets.w.name", "unknown builtin 'wines'", "wine"]),
    ("file dataset without path", config(datasets={"w": {"format": "csv"}}), ConfigError,
     ["datasets.w", "'path' is a required property"]),
    ("report control not configured", config(report={"control": "cls"}), ConfigError,
     ["config key report.control", "'cls' is not one of the configured methods"]),
    ("selection methods auto without propagate", config(selection={"methods": "auto"}), ConfigError,
     ["config key selection.methods", "auto chooses among propagate, laplacian, fisher, cls", "needs propagate"]),
    ("selection methods a word other than auto", config(selection={"methods": "all"}), ConfigError,
     ["config key selection.methods", "'all'"]),
    ("dataset name with ..", config(datasets={"../x": {"source": "builtin", "name": "wine"}}), ConfigError,
     ["name '../x' under datasets is not allowed", "no spaces, slashes or leading dots"]),
    ("dataset name with a slash", config(datasets={"a/b": {"source": "builtin", "name": "wine"}}), ConfigError,
     ["name 'a/b' under datasets is not allowed"]),
    ("dataset name with a space", config(datasets={"a b": {"source": "builtin", "name": "wine"}}), ConfigError,
     ["name 'a b' under datasets is not allowed"]),
    ("hidden dataset name", config(datasets={".x": {"source": "builtin", "name": "wine"}}), ConfigError,
     ["name '.x' under datasets is not allowed"]),
    ("method label with a slash", config(methods={"x/y": {"method": "fisher"}}), ConfigError,
     ["name 'x/y' under methods is not allowed"]),
]


# ----------------------------------------------- issue 19: typed parameters, range, one class
X_HUGE = X6 * 1e300
ONE_CLASS = np.zeros(6, dtype=int)


def cli_params(method_name, *items):
    """The command line's --param door: parse, then check against the method's signature."""
    from ssfs.cli import _parse_params
    from ssfs.registry import check_params, get_method

    return lambda tmp: check_params(get_method(method_name), _parse_params(list(items)))


def _p(method_name, param, shown, *more):
    return [f"method '{method_name}'", f"parameter {param}: expected", f"got {shown}", *more]


ISSUE19 = [
    # tracebacks of the issue, through the API
    ("api k='abc'", method("cls", X6, Y6, k="abc"), MethodError, _p("cls", "k", "'abc'", "an integer >= 1")),
    ("api bandwidth='wide'", method("cls", X6, Y6, bandwidth="wide"), MethodError,
     _p("cls", "bandwidth", "'wide'", "a number > 0", "'auto'")),
    ("api ssfi n_members='x'", method("ssfi", X6, Y6, n_members="x"), MethodError,
     _p("ssfi", "n_members", "'x'", "an integer >= 1 or null")),
    ("api k=2.5 never truncated", method("laplacian", X6, k=2.5), MethodError,
     _p("laplacian", "k", "2.5", "never truncated")),
    ("api efsis n_boot='abc'", method("efsis", X6, Y6, n_boot="abc"), MethodError, _p("efsis", "n_boot", "'abc'")),
    ("api bootstrap_rank list top_percent", method("bootstrap_rank", X6, Y6, top_percent=[1, 5]), MethodError,
     _p("bootstrap_rank", "top_percent", "[1, 5]", "a number in (0, 100]")),
    ("api efsis top_percent list with 0", method("efsis", X6, Y6, top_percent=[1, 0]), MethodError,
     _p("efsis", "top_percent", "[1, 0]", "a list of (a number in (0, 100])")),
    ("api k=0", method("cls", X6, Y6, k=0), MethodError, _p("cls", "k", "0")),
    ("api k=True is not an integer", method("cls", X6, Y6, k=True), MethodError, _p("cls", "k", "True")),
    ("api som=1 is not a bool", method("cls", X6, Y6, som=1), MethodError, _p("cls", "som", "1", "true or false")),
    ("api som='yes'", method("cls", X6, Y6, som="yes"), MethodError, _p("cls", "som", "'yes'")),
    ("api lam=nan", method("cs2", X6, Y6, lam=float("nan")), MethodError, _p("cs2", "lam", "nan")),
    ("api lam=inf", method("cs2", X6, Y6, lam=float("inf")), MethodError, _p("cs2", "lam", "inf")),
    ("api lam=1 outside open interval", method("cs2", X6, Y6, lam=1.0), MethodError,
     _p("cs2", "lam", "1.0", "in (0, 1)")),
    ("api eta=-0.1", method("sselect", X6, Y6, eta=-0.1), MethodError, _p("sselect", "eta", "-0.1", "in [0, 1]")),
    ("api relieff instances=0", method("relieff", X6, Y6, instances=0), MethodError,
     _p("relieff", "instances", "0", "one of 'all', 'sqrt', 'log'")),
    ("api relieff ramp not a list", method("relieff", X6, Y6, ramp=0.5), MethodError, _p("relieff", "ramp", "0.5")),
    ("api ssfi min_samples_split=1 is not the fraction 1.0", method("ssfi", X6, Y6, min_samples_split=1),
     MethodError, _p("ssfi", "min_samples_split", "1", "an integer >= 2")),
    ("api rf max_features=1.5", method("rf", X6, Y6, max_features=1.5), MethodError,
     _p("rf", "max_features", "1.5", "'sqrt'")),
    ("api efsis ranker_params not a mapping", method("efsis", X6, Y6, ranker_params=[1]), MethodError,
     _p("efsis", "ranker_params", "[1]", "a mapping")),
    ("api infogain n_bins=1", method("infogain", X6, Y6, n_bins=1), MethodError,
     _p("infogain", "n_bins", "1", "an integer >= 2")),
    ("api unknown and typed together", method("cls", X6, Y6, kk=1, k="x"), MethodError,
     ["method 'cls' got unknown parameter(s) kk"]),
    ("api efsis ranker_params nested type", method("efsis", X6, Y6, ranker_params={"relieff": {"k": "abc"}}),
     MethodError, ["method 'efsis' parameter ranker_params: method 'relieff' parameter k: expected", "'abc'"]),
    ("api efsis ranker_params unknown ranker", method("efsis", X6, Y6, ranker_params={"relief": {}}),
     MethodError, ["method 'efsis' parameter ranker_params: unknown method 'relief'"]),
    ("api bootstrap_rank base_params nested", method("bootstrap_rank", X6, Y6, base="fisher", base_params={"k": 1}),
     MethodError, ["method 'bootstrap_rank' parameter base_params: method 'fisher' got unknown parameter(s) k"]),
    ("api efsis unknown ranker name", method("efsis", X6, Y6, rankers=["sam", "relief"]), MethodError,
     ["method 'efsis' parameter rankers: unknown method 'relief'"]),
    ("config bootstrap_rank unknown base", config(methods={"b": {"method": "bootstrap_rank", "base": "fishr"}}),
     ConfigError, ["config key methods.b", "method 'bootstrap_rank' parameter base: unknown method 'fishr'"]),
    ("config efsis ranker_params nested", config(methods={"efsis": {"ranker_params": {"sam": {"s0": -1}}}}),
     ConfigError, ["config key methods.efsis", "parameter ranker_params: method 'sam' parameter s0", "got -1"]),
    # the command line's --param (values typed as on a shell)
    ("cli k=abc", cli_params("cls", "k=abc"), MethodError, _p("cls", "k", "'abc'")),
    ("cli k=2.5", cli_params("laplacian", "k=2.5"), MethodError, _p("laplacian", "k", "2.5")),
    ("cli n_boot=abc", cli_params("efsis", "n_boot=abc"), MethodError, _p("efsis", "n_boot", "'abc'")),
    ("cli k=1e-3", cli_params("laplacian", "k=1e-3"), MethodError, _p("laplacian", "k", "0.001")),
    ("cli k=inf", cli_params("laplacian", "k=inf"), MethodError, _p("laplacian", "k", "inf")),
    ("cli bandwidth=wide", cli_params("laplacian", "bandwidth=wide"), MethodError,
     _p("laplacian", "bandwidth", "'wide'")),
    ("cli som=maybe", cli_params("cls", "som=maybe"), MethodError, _p("cls", "som", "'maybe'")),
    ("cli top_percent=[1, 2] for bootstrap_rank", cli_params("bootstrap_rank", "top_percent=[1, 2]"), MethodError,
     _p("bootstrap_rank", "top_percent", "[1, 2]")),
    ("cli NAME without value", cli_params("cls", "k"), SSFSError, ["--param expects NAME=VALUE, got 'k'"]),
    ("cli =VALUE without name", cli_params("cls", "=3"), SSFSError, ["--param expects NAME=VALUE, got '=3'"]),
    ("cli unknown parameter", cli_params("cls", "kk=3"), MethodError, ["method 'cls' got unknown parameter(s) kk"]),
    # the workflow config, refused before any job
    ("config cls k: abc", config(methods={"cls": {"k": "abc"}}), ConfigError,
     ["config key methods.cls", *_p("cls", "k", "'abc'")]),
    ("config k: 2.5", config(methods={"cls": {"k": 2.5}}), ConfigError,
     ["config key methods.cls", *_p("cls", "k", "2.5", "never truncated")]),
    ("config bootstrap_rank list top_percent", config(methods={"b": {"method": "bootstrap_rank",
                                                                     "top_percent": [1, 2]}}), ConfigError,
     ["config key methods.b", *_p("bootstrap_rank", "top_percent", "[1, 2]")]),
    ("config efsis weights heavy", config(methods={"efsis": {"weights": "heavy"}}), ConfigError,
     ["config key methods.efsis", *_p("efsis", "weights", "'heavy'", "'paper'")]),
    ("config ssfi n_members x", config(methods={"ssfi": {"n_members": "x"}}), ConfigError,
     ["config key methods.ssfi", *_p("ssfi", "n_members", "'x'")]),
    ("config bool as string", config(methods={"cls": {"som": "true"}}), ConfigError,
     ["config key methods.cls", *_p("cls", "som", "'true'")]),
    ("config unknown paper", config(report={"paper": "nope_table"}), ConfigError,
     ["config key report.paper", "no published table 'nope_table'", "available:", "efsis_table2"]),
    *[(f"config reserved dataset name {nm}", config(datasets={nm: {"source": "builtin", "name": "wine"}}),
       ConfigError, [f"dataset name {nm!r} is reserved", "rename the dataset"])
      for nm in ("tables", "logs", "figures", "report", "Tables")],
    # numerical range and one class
    # the papers' CLS (the balanced default has no cannot-link term here: it is the Laplacian score)
    ("one class, every sample labeled, cls", method("cls", X6, ONE_CLASS, weights="literal"), SupervisionError,
     ["method 'cls' gave no finite score", "at least 2 classes or unlabeled samples", "one class (code 0)"]),
    ("one class, every sample labeled, fisher", method("fisher", X6, ONE_CLASS), SupervisionError,
     ["method 'fisher' needs labeled samples of at least 2 classes, got 1"]),
    ("one class, every sample labeled, sselect", method("sselect", X6, ONE_CLASS), SupervisionError,
     ["method 'sselect' needs labeled samples of at least 2 classes"]),
    ("one class, every sample labeled, c3", method("c3", X6, ONE_CLASS), SupervisionError,
     ["method 'c3' needs cannot-link constraints"]),
    ("values beyond the float maximum", method("variance", np.where(np.arange(18).reshape(6, 3) == 4, np.inf, X6)),
     InputError,
     ["X holds 1 missing or infinite value(s)", "first at sample 1, feature 1"]),
    ("negative values for scanpy_hvg", method("scanpy_hvg", X6), InputError,
     ["scanpy_hvg needs non-negative expression", "negative value(s)", "minimum"]),
]


def _bad_value(alts):
    """A value each parameter's declared type refuses (None when everything is accepted)."""
    from ssfs.params import ParamValueError, coerce

    for v in ("not-a-value", 2.5, {"x": 1}, [{"x": 1}]):
        try:
            coerce(alts, v)
        except ParamValueError:
            return v
    return None


def _out_of_range(alts):
    """A number just outside the declared range of the first numeric alternative with one."""
    from ssfs.params import ParamValueError, coerce

    for a in alts:
        r = a.range
        if a.kind in ("int", "float") and r is not None:
            for v in ([r.low - 1] if r.low is not None else []) + ([r.high + 1] if r.high is not None else []):
                v = int(v) if a.kind == "int" else float(v)
                try:
                    coerce(alts, v)
                except ParamValueError:
                    return v
    return None


def _generated_param_cases():
    """Every parameter of every registered method, given a value of the wrong type and one
    out of its range: refused at the door in one line naming method, parameter, expected
    type and value (before the data or an optional package are even looked at)."""
    from ssfs.registry import get_method, list_methods

    out = []
    for name in list_methods():
        for param, alts in get_method(name).types.items():
            for kind, bad in (("type", _bad_value(alts)), ("range", _out_of_range(alts))):
                if bad is not None:
                    out.append((f"{name}.{param} wrong {kind} {bad!r}", method(name, X6, Y6, **{param: bad}),
                                MethodError, _p(name, param, repr(bad))))
    return out


CASES += ISSUE19 + _generated_param_cases()


def test_table_is_large_and_ids_unique():
    assert len(CASES) >= 150
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case,err,fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(case, err, fragments, tmp_path):
    with pytest.raises(Exception) as info:
        case(tmp_path)
    assert type(info.value) is err, f"{type(info.value).__name__}: {info.value}"
    msg = str(info.value)
    assert "\n" not in msg.strip(), f"not one line: {msg!r}"
    missing = [f for f in fragments if f not in msg]
    assert not missing, f"message {msg!r} lacks {missing}"


# ----------------------------------------------- the workflow stops before any job
BAD_WORKFLOW_CONFIGS = {
    "dotdot": ({"../x": {"source": "builtin", "name": "wine"}}, {"fisher": {}}, "name '../x' under datasets"),
    "space": ({"a b": {"source": "builtin", "name": "wine"}}, {"fisher": {}}, "name 'a b' under datasets"),
    "unknown method": ({"wine": {"source": "builtin", "name": "wine"}}, {"fishr": {}}, "unknown method 'fishr'"),
    "typed parameter": ({"wine": {"source": "builtin", "name": "wine"}}, {"cls": {"k": "abc"}},
                        "method 'cls' parameter k: expected an integer >= 1, got 'abc'"),
    "reserved dataset name": ({"tables": {"source": "builtin", "name": "wine"}}, {"fisher": {}},
                              "dataset name 'tables' is reserved"),
}


@pytest.mark.slow
@pytest.mark.parametrize("key", list(BAD_WORKFLOW_CONFIGS))
def test_workflow_refuses_before_any_job(key, tmp_path):
    datasets, methods, fragment = BAD_WORKFLOW_CONFIGS[key]
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump({"datasets": datasets, "methods": methods}))
    res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                          str(tmp_path), "--configfile", str(cfg), "--cores", "1"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode != 0
    err_lines = [ln for ln in res.stderr.splitlines() if fragment in ln]
    assert len(err_lines) == 1, res.stderr[-2000:]
    assert not (tmp_path / "results").exists(), "a job ran"
    assert "Traceback" not in res.stderr


# ------------------------------------------------ documented non-error behaviours
def test_small_sparse_input_is_densified_with_identical_result():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 6)) * (rng.random((20, 6)) < 0.5)
    y = np.where(np.arange(20) < 8, np.arange(20) % 2, -1)
    for name in ("wckm", "relieff", "fisher", "laplacian"):
        a = run_method(name, X, y, rng=0)
        b = run_method(name, sparse.csr_matrix(X), y, rng=0)
        # sparse and dense sums differ in order only: tests/tolerances.py class 2
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10, err_msg=name)
        np.testing.assert_array_equal(a.order, b.order, err_msg=name)
    np.testing.assert_array_equal(dense(sparse.csr_matrix(X)), X)


def test_more_neighbours_than_samples_is_clamped_to_n_minus_1():
    """Decision: k > n - 1 is clamped silently to the complete graph (documented in
    ssfs.methods._shared.graph; ensembles build many small graphs, a warning per graph would flood logs)."""
    X = np.random.default_rng(4).normal(size=(8, 5))
    a = run_method("laplacian", X, k=50).scores
    b = run_method("laplacian", X, k=7).scores
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, run_method("laplacian", X, k=3).scores)


def test_cls_without_constraints_falls_back_to_laplacian_score():
    """EnsCLS paper / thesis eq. 2.7: with no constraints CLS is the Laplacian score. With the
    degree-weighted mean CLS = sum S (f_i - f_j)^2 / sum d (f - mu)^2 = 2 LS exactly."""
    X = np.random.default_rng(5).normal(size=(25, 6))
    ls = run_method("laplacian", X, k=5).scores
    cls = run_method("cls", X, None, Constraints.empty(), k=5, mean="degree", weights="literal").scores
    np.testing.assert_allclose(cls, 2.0 * ls, rtol=1e-10)  # same sums, other order: tolerances.py class 2
    # the literal reading with the uniform mean still ranks without constraints, no error
    assert np.isfinite(run_method("cls", X, None, Constraints.empty(), k=5, weights="literal").scores).all()
    # the default (balanced) reading is the Laplacian score itself
    np.testing.assert_allclose(run_method("cls", X, None, Constraints.empty(), k=5).scores, ls, rtol=1e-10)


def test_constant_features_kept_with_a_warning_and_never_ranked_first(tmp_path):
    _write(tmp_path, "c.csv", "id,g1,g2,g3,label\ns1,1,5,0,a\ns2,3,5,0,a\ns3,5,5,0,b\ns4,7,5,0,b\n")
    with pytest.warns(UserWarning, match=r"dataset 'd': 2 constant feature\(s\) kept \(e.g. 'g2'\)"):
        ad = prepare_dataset("d", {"path": "c.csv", "label_column": "label"}, tmp_path)
    assert list(ad.var_names) == ["g1", "g2", "g3"]
    y = np.array([0, 0, 1, 1])
    for name, params in (("variance", {}), ("fisher", {}), ("laplacian", {"k": 2})):
        r = run_method(name, ad.X, y, **params)
        worst = -np.inf if r.higher_is_better else np.inf
        assert r.order[0] == 0 and (r.scores[1:] == worst).all(), name


def test_nan_with_median_imputation_is_accepted(tmp_path):
    _write(tmp_path, "n.csv", GOOD.replace("s3,5,6", "s3,NA,6"))
    ad = prepare_dataset("d", {"path": "n.csv", "label_column": "label", "missing": "median"}, tmp_path)
    assert ad.X[2, 0] == 3.0  # median of 1, 3, 7


def test_p1_and_n2_run():
    X = np.random.default_rng(6).normal(size=(10, 1))
    assert list(run_method("fisher", X, np.arange(10) % 2).order) == [0]
    r = run_method("laplacian", np.array([[0.0, 1.0], [1.0, 3.0]]))
    assert sorted(r.order) == [0, 1]


# ------------------------------------------------ the command line: one line, no traceback
CLI_CASES = {
    "param k=abc": (["--param", "k=abc"], 1,
                    "method 'propagate' parameter k: expected an integer >= 1 or 'auto', got 'abc'"),
    "param k=2.5": (["--method", "laplacian", "--param", "k=2.5"], 1, "got 2.5 (a float is never truncated"),
    "param n_boot=abc": (["--method", "efsis", "--param", "n_boot=abc"], 1, "method 'efsis' parameter n_boot"),
    "labeled-per-class abc": (["--labeled-per-class", "abc"], 2,
                              "argument --labeled-per-class: expected a positive integer or 'all', got 'abc'"),
    "labeled-per-class 0": (["--labeled-per-class", "0"], 2, "expected a positive integer or 'all', got '0'"),
    "output into a missing folder": (["-o", "nowhere/r.tsv"], 1, "output folder 'nowhere' of -o nowhere/r.tsv "
                                                                 "does not exist"),
    "class smaller than labeled-per-class": (["--labeled-per-class", "3"], 1,
                                             "class 'a' has 2 training sample(s)"),
}


@pytest.mark.parametrize("key", list(CLI_CASES))
def test_cli_refuses_in_one_line(key, tmp_path, monkeypatch, capsys):
    from ssfs.cli import main

    args, code, fragment = CLI_CASES[key]
    _write(tmp_path, "d.csv", GOOD)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) if code == 2 else contextlib.nullcontext():
        rc = main(["rank", "d.csv", "--label-column", "label", *args])
        assert rc == code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if fragment in ln]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert not (tmp_path / "nowhere").exists()


def test_cli_reads_float_spellings_of_integers(tmp_path, monkeypatch, capsys):
    """`--param k=1e3` is the integer 1000 (clamped to n - 1 like any k), not a traceback."""
    from ssfs.cli import main

    _write(tmp_path, "d.csv", GOOD)
    monkeypatch.chdir(tmp_path)
    assert main(["rank", "d.csv", "--label-column", "label", "--labeled-per-class", "all", "--method", "laplacian",
                 "--param", "k=1e3", "-o", "r.tsv"]) == 0
    table = pd.read_csv(tmp_path / "r.tsv", sep="\t")
    assert list(table.columns) == ["feature", "index", "score", "rank", "ties"]


def test_every_method_parameter_declares_its_type():
    """Issue 19: a parameter without an annotation would pass the door unchecked. Only
    precomputed matrices (a graph, an embedding; any sparse or dense array) and per-sample values
    (a batch, any values) are deliberately ``Any``."""
    import inspect

    from ssfs.registry import get_method, list_methods

    unchecked = []
    for name in list_methods():
        spec = get_method(name)
        for k, alts in spec.types.items():
            if any(a.kind == "any" for a in alts) and k not in ("graph", "embedding", "batch"):
                unchecked.append(f"{name}.{k}")
        params = [p for p in inspect.signature(spec.fn).parameters.values() if p.kind == p.KEYWORD_ONLY]
        assert all(p.annotation is not inspect.Parameter.empty for p in params), name
    assert not unchecked, unchecked
