"""Reading and preparing one dataset entry of the config (keys: see :mod:`ssfs.io`)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd
from anndata import AnnData

from .. import preprocess as pp
from ..constraints import read_sample_constraints
from ..errors import ConfigError, InputError, SupervisionError
from .arff import read_arff_file
from .builtin import load_builtin
from .common import labels_categorical
from .delimited import read_delimited
from .geo import read_geo_file
from .h5ad import BATCH, read_h5ad_file
from .mat import read_mat_file
from .tenx import is_10x_dir, read_10x

SOURCES = ("file", "builtin")
#: class names that probably mean "no label" (a warning suggests unlabeled_values)
SUSPECT_UNLABELED = frozenset({"unknown", "unlabeled", "unlabelled", "none", "-1", "?", "missing", "n/a", "na"})
FORMATS = ("auto", "h5ad", "csv", "tsv", "arff", "mat", "geo", "10x")
_DELIMITED = {"orientation": "samples_as_rows", "index_col": "auto", "label_column": None, "labels_file": None,
              "labels_file_column": None, "batch_key": None}
#: format-specific keys and their defaults
FORMAT_KEYS: dict[str, dict] = {
    "csv": _DELIMITED,
    "tsv": _DELIMITED,
    "h5ad": {"label_key": None, "use_raw": False, "layer": None, "batch_key": None},
    "10x": {"labels_file": None, "labels_file_column": None},
    "geo": {"geo_characteristic": None},
    "arff": {},
    "mat": {},
}
SOURCE_KEYS = {"builtin": ("name", "params", "seed"), "file": ("path", "format")}
#: keys of every entry about supervision: label values meaning "unlabeled", user constraints by sample id
LABEL_KEYS = {"unlabeled_values": (), "constraints_file": None}
#: every key a dataset entry may hold
ENTRY_KEYS = frozenset(
    ["source", *pp.DEFAULTS, *LABEL_KEYS, *SOURCE_KEYS["builtin"], *SOURCE_KEYS["file"],
     *(k for keys in FORMAT_KEYS.values() for k in keys)]
)
_SUFFIX_FORMAT = {".h5ad": "h5ad", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv",
                  ".arff": "arff", ".mat": "mat", ".h5": "10x"}
_GEO_NAME = re.compile(r"_series_matrix\.txt(\.gz)?$", re.IGNORECASE)


def guess_format(path: Path) -> str | None:
    """Format from the file name: a folder holding ``matrix.mtx[.gz]`` or a ``.h5`` file -> 10x,
    ``*_series_matrix.txt[.gz]`` -> geo, else by suffix (``.gz`` ignored)."""
    if is_10x_dir(path):
        return "10x"
    name = path.name
    if _GEO_NAME.search(name):
        return "geo"
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".xz", ".zst"):
        suffixes = suffixes[:-1]
    return _SUFFIX_FORMAT.get(suffixes[-1]) if suffixes else None


def _check_keys(entry: dict, source: str, fmt: str | None, where: str) -> None:
    unknown = sorted(set(entry) - ENTRY_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; dataset keys: {', '.join(sorted(ENTRY_KEYS))}"
        )
    other = "file" if source == "builtin" else "builtin"
    stray = [k for k in SOURCE_KEYS[other] if k in entry]
    if stray:
        raise ConfigError(f"{where}: key {stray[0]!r} applies to source: {other}, not {source}")
    allowed = set(FORMAT_KEYS.get(fmt, {})) if source == "file" else set()
    stray = [k for k in entry if k not in allowed and any(k in keys for keys in FORMAT_KEYS.values())]
    if stray:
        formats = [f for f, keys in FORMAT_KEYS.items() if stray[0] in keys]
        raise ConfigError(
            f"{where}: key {stray[0]!r} applies to format{'s' if len(formats) > 1 else ''} {', '.join(formats)}, "
            f"not to {'source: builtin' if source == 'builtin' else 'format ' + str(fmt)}"
        )


def _resolve(entry: dict, name: str, data_dir) -> tuple[str, dict]:
    """Checked reading options with defaults filled in: ``(source, options)``."""
    where = f"dataset {name!r}"
    if entry is None:
        entry = {}
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: the entry must be a mapping, got {type(entry).__name__}")
    source = entry.get("source", "file")
    if source not in SOURCES:
        raise ConfigError(f"{where}: source must be one of {', '.join(SOURCES)}, got {source!r}")
    if source == "builtin":
        _check_keys(entry, source, None, where)
        if "name" not in entry:
            raise ConfigError(f"{where}: source: builtin needs name (the builtin dataset)")
        params = entry.get("params") or {}
        if not isinstance(params, dict):
            raise ConfigError(f"{where}: params must be a mapping of generator options, got {params!r}")
        return source, {"name": entry["name"], "params": dict(params), "seed": entry.get("seed", 0)}
    if "path" not in entry:
        raise ConfigError(f"{where}: source: file needs path")
    path = Path(str(entry["path"])).expanduser()
    if not path.is_absolute():
        path = Path(data_dir) / path
    fmt = entry.get("format", "auto")
    if fmt not in FORMATS:
        raise ConfigError(f"{where}: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if path.is_dir() and fmt not in ("auto", "10x"):
        raise InputError(f"{where}: {path} is a directory, not a {fmt} file; give the file inside it (a 10x "
                         "matrix folder: format 10x or auto)")
    if fmt == "auto":
        fmt = "10x" if path.is_dir() else guess_format(path)  # a folder: 10x (its reader says what is missing)
        if fmt is None:
            raise ConfigError(
                f"{where}: cannot tell the format of {path.name} from its name; "
                f"set format to one of {', '.join(FORMATS[1:])}"
            )
    _check_keys(entry, source, fmt, where)
    opts = {"path": path, "format": fmt}
    opts.update({k: entry.get(k, d) for k, d in FORMAT_KEYS[fmt].items()})
    if opts.get("labels_file") is not None:
        lf = Path(str(opts["labels_file"])).expanduser()
        opts["labels_file"] = lf if lf.is_absolute() else Path(data_dir) / lf
    return source, opts


def _read(name: str, source: str, opts: dict) -> AnnData:
    where = f"dataset {name!r}"
    if source == "builtin":
        return load_builtin(opts["name"], opts["params"], opts["seed"], where=where)
    path, fmt = opts["path"], opts["format"]
    if fmt == "10x" and path.exists():
        return read_10x(path, where=where, labels_file=opts["labels_file"],
                        labels_file_column=opts["labels_file_column"])
    if not path.is_file():
        raise InputError(f"{where}: file not found: {path}")
    if fmt in ("csv", "tsv"):
        kw = {k: opts[k] for k in _DELIMITED}
        return read_delimited(path, sep="," if fmt == "csv" else "\t", where=where, **kw)
    if fmt == "h5ad":
        if not isinstance(opts["use_raw"], bool):
            raise ConfigError(f"{where}: use_raw must be true or false, got {opts['use_raw']!r}")
        return read_h5ad_file(path, where=where, label_key=opts["label_key"], use_raw=opts["use_raw"],
                              layer=opts["layer"], batch_key=opts["batch_key"])
    if fmt == "arff":
        return read_arff_file(path, where=where)
    if fmt == "mat":
        return read_mat_file(path, where=where)
    return read_geo_file(path, where=where, geo_characteristic=opts["geo_characteristic"])


def read_dataset(name: str, entry: dict, data_dir: str | Path = ".") -> AnnData:
    """Read dataset ``name`` as described by its config ``entry`` (no checks of labels, no preprocessing)."""
    source, opts = _resolve(entry, name, data_dir)
    return _read(name, source, opts)


def has_label_source(entry: dict) -> bool:
    """Whether a dataset entry names where its labels are (builtins and arff/mat/h5ad always
    have a label column; csv/tsv need label_column or labels_file, geo geo_characteristic)."""
    entry = entry or {}
    if entry.get("source", "file") == "builtin":
        return True
    fmt = entry.get("format", "auto")
    if fmt == "auto":
        fmt = guess_format(Path(str(entry.get("path", ""))))
    if fmt in ("csv", "tsv"):
        return entry.get("label_column") is not None or entry.get("labels_file") is not None
    if fmt in ("10x", None):  # None: a name without suffix, a 10x folder
        return entry.get("labels_file") is not None
    if fmt == "geo":
        return entry.get("geo_characteristic") is not None
    return True


def apply_unlabeled_values(adata: AnnData, unlabeled_values, name: str) -> AnnData:
    """``obs['label']`` with the values of ``unlabeled_values`` (compared as text) made
    missing (NaN = unlabeled), as a categorical of the class names
    (:func:`ssfs.io.common.labels_categorical`); no label column -> all NaN."""
    where = f"dataset {name!r}"
    if unlabeled_values is None:
        unlabeled_values = ()
    if isinstance(unlabeled_values, (str, int, float)):
        unlabeled_values = [unlabeled_values]
    if not isinstance(unlabeled_values, (list, tuple)):
        raise ConfigError(f"{where}: unlabeled_values must be a list of label values, got {unlabeled_values!r}")
    if "label" not in adata.obs.columns:
        adata.obs["label"] = pd.Categorical([None] * adata.n_obs, categories=[])
        return adata
    adata.obs["label"] = labels_categorical(adata.obs["label"], unlabeled_values)
    return adata


def check_labels(adata: AnnData, name: str) -> None:
    """At least 2 classes among the labeled samples when any sample is labeled (unlabeled
    samples, NaN in ``obs['label']``, are allowed: they are given to the methods as
    unlabeled); otherwise a SupervisionError."""
    where = f"dataset {name!r}"
    if "label" not in adata.obs.columns:
        raise SupervisionError(
            f"{where}: no class labels found; give label_column or labels_file (csv/tsv), "
            "label_key (h5ad) or geo_characteristic (geo)"
        )
    lab = adata.obs["label"]
    known = lab.dropna().astype(str)
    if known.size == 0:
        return  # label-free dataset: only label-free methods can run (checked at selection)
    classes = pd.unique(known)
    numeric = pd.to_numeric(pd.Series(classes), errors="coerce").notna().all()
    suspect = [c for c in classes if c.strip().lower() in SUSPECT_UNLABELED and not (numeric and c.strip() == "-1")]
    if suspect:
        warnings.warn(
            f"{where}: class(es) {', '.join(f'{c!r} ({int((known == c).sum())} samples)' for c in suspect)} "
            f"look like a 'no label' marker; if so, list them in unlabeled_values "
            f"(ssfs rank: --unlabeled-value {suspect[0]})",
            stacklevel=2,
        )
    if classes.size < 2:
        raise SupervisionError(
            f"{where} has one class ({classes[0]!r}) among its {known.size} labeled samples; feature selection "
            "needs at least 2 (list label values that mean 'no label' in unlabeled_values)"
        )


def batch_column(values: pd.Series, where: str) -> pd.Categorical:
    """The ``batch_key`` column as text categories; a one-line error for a missing value."""
    missing = values.isna()
    if missing.any():
        raise InputError(f"{where}: batch_key {values.name!r} has no value for {int(missing.sum())} samples "
                         f"(e.g. {values.index[missing][0]!r}); every sample needs its batch")
    return pd.Categorical(values.astype(str))


def _record(value):
    """Option value as something h5ad can store (paths as text, None dropped by the caller)."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _record(v) for k, v in value.items() if v is not None}
    return value


def prepare_dataset(name: str, entry: dict, data_dir: str | Path = ".") -> AnnData:
    """Read, check and preprocess dataset ``name``; ``obs['label']`` set, options in ``uns['ssfs_prepare']``."""
    where = f"dataset {name!r}"
    source, opts = _resolve(entry, name, data_dir)
    pre = pp.preprocess_options(entry or {}, where=where)
    adata = _read(name, source, opts)
    if opts.get("batch_key") is not None:
        adata.obs[BATCH] = batch_column(adata.obs[str(opts["batch_key"])], where)
    adata = apply_unlabeled_values(adata, (entry or {}).get("unlabeled_values"), name)
    check_labels(adata, name)
    n_read, p_read = adata.shape
    user_cons = None
    if (entry or {}).get("constraints_file") is not None:
        cf = Path(str(entry["constraints_file"])).expanduser()
        cf = cf if cf.is_absolute() else Path(data_dir) / cf
        user_cons = read_sample_constraints(cf, adata.obs_names, where=where)
    adata = pp.preprocess(adata, pre, where=where)
    record = {"source": source, **opts, **pre, "n_samples": n_read, "n_features_read": p_read,
              "n_features": adata.n_vars}
    if adata.obs["label"].isna().any():
        record["n_unlabeled"] = int(adata.obs["label"].isna().sum())
    if (entry or {}).get("unlabeled_values"):
        record["unlabeled_values"] = [str(v) for v in entry["unlabeled_values"]]
    if user_cons is not None:
        record["constraints_file"] = str(entry["constraints_file"])
        adata.uns["ssfs_constraints"] = {"ml": user_cons.ml, "cl": user_cons.cl}
    if "path" in record:  # as given (relative to the data directory), so the record is machine-independent
        record["path"] = str((entry or {}).get("path"))
        if record.get("labels_file") is not None:
            record["labels_file"] = str((entry or {}).get("labels_file"))
    adata.uns["ssfs_prepare"] = {k: _record(v) for k, v in record.items() if v is not None}
    return adata
