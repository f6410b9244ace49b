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


def read_arff_file(path: Path, *, where: str) -> AnnData:
    try:
        data, meta = arff.loadarff(path)
    except (arff.ArffError, NotImplementedError, ValueError, UnicodeDecodeError) as e:
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
