"""Weka ARFF files (dense), read with ``scipy.io.arff``.

Every attribute but the last is a numeric feature (its name is the feature
name); the last attribute is the class and must be nominal. Samples get the ids
``s1..sn``; ``?`` is a missing value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from anndata import AnnData
from numpy.lib import recfunctions
from scipy.io import arff

from ..errors import InputError
from .common import examples, make_adata


def _check_text(path: Path, where: str) -> None:
    """An ARFF header (``@relation``, ``@attribute`` lines, ``@data``) and data rows with one
    value per attribute (scipy's reader silently drops extra values), else an InputError."""
    import csv

    try:
        with open(path, encoding="utf-8", errors="strict") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise InputError(f"{where}: {path} is not an ARFF file: it is not UTF-8 text (a binary file?)") from None
    lines = [ln.strip() for ln in text.splitlines()]
    content = [ln for ln in lines if ln and not ln.startswith("%")]
    if not content:
        raise InputError(f"{where}: ARFF file {path} is empty")
    heads = [ln.split(None, 1)[0].lower() for ln in content]
    if heads[0] != "@relation" or "@data" not in heads:
        first = content[0][:40]
        raise InputError(
            f"{where}: {path} is not an ARFF file (it starts with {first!r}; an ARFF file starts with "
            "@relation, then @attribute lines and @data); for a comma-separated table set format: csv")
    n_attr = heads.count("@attribute")
    rows = content[heads.index("@data") + 1:]
    for i, row in enumerate(csv.reader(rows, quotechar="'", skipinitialspace=True)):
        if row and not rows[i].startswith("{") and len(row) != n_attr:
            raise InputError(f"{where}: ARFF file {path}: data row {i + 1} ({rows[i][:40]!r}) has {len(row)} "
                             f"value(s) for {n_attr} attribute(s)")


def read_arff_file(path: Path, *, where: str) -> AnnData:
    _check_text(path, where)
    try:
        data, meta = arff.loadarff(path)
    except (arff.ArffError, NotImplementedError, ValueError, UnicodeDecodeError, StopIteration) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{where}: cannot read ARFF file {path}: {msg}") from None
    names, types = meta.names(), meta.types()
    if len(names) < 2:
        raise InputError(f"{where}: {path} has {len(names)} attribute(s); need features and a class attribute")
    if types[-1] != "nominal":
        raise InputError(
            f"{where}: the class attribute must be the last one and nominal; "
            f"the last attribute of {path}, {names[-1]!r}, is {types[-1]}"
        )
    bad = [n for n, t in zip(names[:-1], types[:-1], strict=True) if t != "numeric"]
    if bad:
        raise InputError(
            f"{where}: {len(bad)} feature attribute(s) of {path} are not numeric (e.g. {examples(bad)}); "
            "only the last attribute may be nominal (the class)"
        )
    if data.shape[0] == 0:
        raise InputError(f"{where}: {path} has no data rows")
    X = recfunctions.structured_to_unstructured(data[names[:-1]], dtype=np.float64)
    return make_adata(X, where=where, labels=data[names[-1]], var_names=names[:-1])
