"""Dataset input: reading files / builtins into AnnData and preparing them for the methods.

Every reader returns an :class:`anndata.AnnData` with ``X`` = samples x features
(float64 ndarray, or CSR when the input is sparse), ``obs['label']`` the class
label as a categorical of the class names, encoded by :func:`ssfs.labels.encode_labels`
(missing cells NaN; categories in natural order: ``'1', '2', '10'``), ``obs_names``
the sample ids and ``var_names`` the feature names.
Names absent from the input are generated (``s1..sn``, ``f1..fp``); duplicated
names in the input are an InputError naming an example.

:func:`prepare_dataset` (used by the workflow) reads, checks labels,
preprocesses (:mod:`ssfs.preprocess`) and records the options used in
``uns['ssfs_prepare']``; :func:`read_dataset` only reads; :func:`write_prepared`
writes h5ad atomically and :func:`read_prepared` reads it back for the steps after prepare.

Config keys of a dataset entry (all optional except where marked)
------------------------------------------------------------------
``source``
    ``file`` (default) or ``builtin``.

source: builtin
    ``name`` (required): ``waveform``, ``iris``, ``wine``, ``breast_cancer`` or
    ``pbmc68k_reduced`` (see :mod:`ssfs.io.builtin`). ``params``: generator options
    (waveform: ``n_samples`` 1000, ``n_noise`` 19). ``seed``: generator seed (0).

source: file
    ``path`` (required): relative to the data directory unless absolute.
    ``format``: ``auto`` (default: ``*_series_matrix.txt[.gz]`` -> geo, else by
    suffix: .h5ad, .csv, .tsv/.tab/.txt, .arff, .mat; a trailing .gz is ignored),
    ``h5ad``, ``csv``, ``tsv``, ``arff``, ``mat``, ``geo``.

    csv / tsv (gzip allowed; first line = header):
      ``orientation``: ``samples_as_rows`` (default) or ``features_as_rows``.
      ``index_col``: column number holding the row ids (null = none, ids generated;
      default: column 0, refused when it looks like data rather than ids).
      ``label_column``: name of the column holding the labels (samples_as_rows only).
      ``labels_file``: table ``sample_id -> label`` (header line optional;
      csv if it ends in .csv, else tab/comma/semicolon/whitespace by the first
      line), path relative to the data directory; every sample of the matrix
      must be in it (an error gives how many are not and examples).
      ``labels_file_column``: take the label from this header column of the labels file.
      ``batch_key``: the column naming every sample's batch (not a feature; samples_as_rows).
      Cells ``NA``, ``NaN``, ``null``, empty ... are missing values; any other
      non-numeric cell is an InputError naming its row and column.
    h5ad:
      ``label_key``: obs column of the labels (default ``label`` when present, else
      none; a given key that is absent is an error listing the obs columns).
      ``use_raw``: read ``.raw.X`` (default false).
      ``batch_key``: the obs column naming every cell's batch (``obs['ssfs_batch']`` of the
      prepared data; methods with a ``batch`` parameter compare cells within batches).
      Sparse X stays sparse.
    arff:
      all attributes but the last are numeric features; the last is the class
      and must be nominal.
    mat:
      variables ``X`` (samples x features, cast to float64) and ``Y`` (class codes).
    geo (GEO series matrix, gzip allowed):
      ``geo_characteristic``: the ``!Sample_characteristics_ch1`` key holding
      the class (e.g. ``disease state`` for cells ``disease state: AML``); an
      error lists the available keys when absent.

Preprocessing (applied in this order; see :mod:`ssfs.preprocess`)
    ``missing``: ``refuse`` (default) | ``median``.
    ``normalize``: ``none`` (default) | ``microarray`` | ``log2`` | ``quantile`` |
    ``minmax`` | ``zscore``; microarray: ``floor`` (100), ``ceiling`` (16000),
    ``min_fold`` (5), ``min_range`` (500), ``log_base`` (10), ``strict_filter``
    (false); log2: ``log_offset`` (1.0).
    ``top_variable``: keep the N most variable features.

Labels (:mod:`ssfs.labels`): a sample is unlabeled when its label cell is blank or
``NA`` (label column or labels file), NaN in the h5ad obs column, or equal to one of
``unlabeled_values`` (a list, compared as text, e.g. ``[unknown, "-1"]``). The
prepared ``obs['label']`` is a categorical of class names with NaN for unlabeled
samples; the methods receive them as unlabeled (-1). A dataset without any label
source (csv/tsv without ``label_column``/``labels_file``, h5ad without ``label``
obs column and without ``label_key``) is label-free: only label-free methods run.
The labeled samples must hold at least 2 classes (SupervisionError otherwise).
``constraints_file``: must-link / cannot-link pairs by sample id (columns
``sample_a``, ``sample_b``, ``kind`` = ML | CL), checked at prepare (unknown ids,
contradictions) and stored in ``uns['ssfs_constraints']``. Constant features are
kept with a warning.
"""

from .h5ad import prepared_batch, read_prepared, write_prepared
from .prepare import (
    ENTRY_KEYS,
    FORMATS,
    check_labels,
    guess_format,
    prepare_dataset,
    read_dataset,
)

__all__ = [
    "ENTRY_KEYS",
    "FORMATS",
    "check_labels",
    "guess_format",
    "prepare_dataset",
    "prepared_batch",
    "read_dataset",
    "read_prepared",
    "write_prepared",
]
