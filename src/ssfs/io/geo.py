"""GEO series-matrix files (``GSExxxx_series_matrix.txt[.gz]``).

Header lines start with ``!``; the sample accessions come from
``!Sample_geo_accession`` and the labels from the ``!Sample_characteristics_ch1``
lines, whose cells read ``key: value`` (a series may have several such lines,
and GEO does not keep one key per line, so every line is searched per sample).
``geo_characteristic`` names the key (case-insensitive), e.g. ``disease state``
turns ``disease state: AML`` into the label ``AML``. The expression table lies
between ``!series_matrix_table_begin`` and ``!series_matrix_table_end``: first
column ``ID_REF`` (feature ids), one column per sample, genes as rows;
``null`` / empty cells are missing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from anndata import AnnData

from ..errors import InputError, SupervisionError
from ..labels import NA_TOKENS
from .common import examples, make_adata, parse_numeric_frame
from .delimited import is_gzip, open_text

BEGIN, END = "!series_matrix_table_begin", "!series_matrix_table_end"


def _cells(line: str) -> list[str]:
    return [c.strip().strip('"').strip() for c in line.rstrip("\r\n").split("\t")[1:]]


def _scan(path: Path, where: str):
    """Accessions, characteristics lines and the line numbers of the table markers."""
    accessions, characteristics = None, []
    begin = end = None
    with open_text(path) as fh:
        for i, line in enumerate(fh):
            if line.startswith("!Sample_geo_accession"):
                accessions = _cells(line)
            elif line.startswith("!Sample_characteristics_ch1"):
                characteristics.append(_cells(line))
            elif line.startswith(BEGIN):
                begin = i
            elif line.startswith(END):
                end = i
                break
    if begin is None or end is None:
        raise InputError(
            f"{where}: {path} is not a GEO series matrix: no {BEGIN} ... {END} block"
            + (" (truncated file?)" if begin is not None else "")
        )
    if accessions is None:
        raise InputError(f"{where}: {path} has no !Sample_geo_accession line")
    return accessions, characteristics, begin, end


def characteristic_table(accessions: list[str], characteristics: list[list[str]]) -> dict[str, dict[str, str]]:
    """``{key: {accession: value}}`` from the ``key: value`` cells (keys lower-cased)."""
    out: dict[str, dict[str, str]] = {}
    for cells in characteristics:
        for acc, cell in zip(accessions, cells, strict=True):
            if ":" in cell:
                key, value = cell.split(":", 1)
                out.setdefault(key.strip().lower(), {})[acc] = value.strip()
    return out


def read_geo_file(path: Path, *, where: str, geo_characteristic: str | None = None) -> AnnData:
    accessions, characteristics, begin, end = _scan(path, where)
    table = characteristic_table(accessions, characteristics)
    keys = sorted(table)
    if geo_characteristic is None:
        raise SupervisionError(
            f"{where}: set geo_characteristic to the sample characteristic holding the class; "
            f"{path.name} has: {examples(keys, 20) if keys else 'no characteristics'}"
        )
    key = str(geo_characteristic).strip().lower()
    if key not in table:
        raise SupervisionError(
            f"{where}: characteristic {geo_characteristic!r} not found in {path.name}; "
            f"available characteristic keys: {examples(keys, 20) if keys else 'none'}"
        )
    n_rows = end - begin - 2  # header line of the table excluded
    if n_rows < 1:
        raise InputError(f"{where}: the expression table of {path} is empty")
    df = pd.read_csv(
        path, sep="\t", skiprows=begin + 1, nrows=n_rows, header=0, index_col=0, quotechar='"',
        na_values=list(NA_TOKENS), keep_default_na=False, low_memory=False,
        compression="gzip" if is_gzip(path) else "infer",
    )
    df.columns = df.columns.astype(str)
    unknown = [c for c in df.columns if c not in set(accessions)]
    if unknown:
        raise InputError(
            f"{where}: {len(unknown)} table column(s) of {path.name} are not sample accessions "
            f"(e.g. {examples(unknown)})"
        )
    X = parse_numeric_frame(df, where=f"{where} ({path.name})", skip_lines=begin + 2).T
    values = table[key]
    labels = np.array([values.get(acc) for acc in df.columns], dtype=object)
    return make_adata(X, where=where, labels=labels, obs_names=df.columns, var_names=df.index.astype(str))
