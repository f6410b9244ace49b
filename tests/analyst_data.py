"""The analyst's CSV of issue #29: 300 samples x 2,000 genes, 4 classes, 40 planted markers
(10 per class, +1.5 sd in their class), 5 labels per class, the other label cells blank.

The planted markers come first (columns ``g0000`` .. ``g0039``; marker j marks class
``CLASSES[j // 10]``), the other 1,960 genes are standard normal noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CLASSES = np.array(["B", "T", "NK", "Mono"], dtype=object)
N_MARKERS_PER_CLASS = 10


def analyst_frame(n: int = 300, p: int = 2000, labeled_per_class: int = 5, shift: float = 1.5,
                  seed: int = 0, markers_per_class: int = N_MARKERS_PER_CLASS) -> tuple[pd.DataFrame, np.ndarray]:
    """``(frame, truth)``: the CSV's content (a ``label`` column first, blank = unlabeled,
    then the genes; rows named ``s000``...) and every sample's true class."""
    rng = np.random.default_rng(seed)
    k = CLASSES.size
    codes = rng.permutation(np.arange(n) % k)
    X = rng.normal(size=(n, p))
    for c in range(k):
        X[np.ix_(codes == c, np.arange(c * markers_per_class, (c + 1) * markers_per_class))] += shift
    labels = np.full(n, "", dtype=object)
    for c in range(k):
        pick = rng.choice(np.flatnonzero(codes == c), size=labeled_per_class, replace=False)
        labels[pick] = CLASSES[c]
    width = len(str(p - 1))
    df = pd.DataFrame(X, columns=[f"g{j:0{max(width, 4)}d}" for j in range(p)],
                      index=pd.Index([f"s{i:03d}" for i in range(n)], name="sample"))
    df.insert(0, "label", labels)
    return df, CLASSES[codes]


def marker_class(feature: str, markers_per_class: int = N_MARKERS_PER_CLASS) -> str | None:
    """The class a planted marker marks (None for a noise gene)."""
    j = int(feature[1:])
    return CLASSES[j // markers_per_class] if j < CLASSES.size * markers_per_class else None


def write_analyst_csv(path, **kw) -> np.ndarray:
    """Write the analyst's CSV to ``path``; returns the true classes."""
    df, truth = analyst_frame(**kw)
    df.to_csv(path)
    return truth


def rank_fits(tmp_path, capsys, X: np.ndarray, labels: np.ndarray, params: list[list[str]]) -> list[dict]:
    """The ``fit`` of ``ssfs rank``'s JSON line for X written as a CSV (a ``label`` column first, ``labels`` as
    given, "" = unlabeled; genes ``g0``...) under ``tmp_path`` / ``study.csv``, once per list of extra arguments
    in ``params`` (e.g. ``["--param", "k=9"]``)."""
    import json

    from ssfs.cli import main

    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "label", labels)
    frame.to_csv(tmp_path / "study.csv", index_label="sample")
    fits = []
    for extra in params:
        assert main(["rank", str(tmp_path / "study.csv"), "--label-column", "label", *extra,
                     "-o", str(tmp_path / "ranking.tsv")]) == 0
        fits.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["fit"])
    return fits


def select_answer(tmp_path, capsys, X: np.ndarray, y: np.ndarray) -> tuple[str, dict, pd.DataFrame]:
    """(printed answer, summary.json, consensus.tsv in consensus order) of ``ssfs select`` with its defaults on X
    written as a CSV under ``tmp_path`` / ``study.csv`` (a ``label`` column first: ``y``, blank where -1; genes
    ``g0``...); the printed text's whitespace collapsed."""
    import json

    from ssfs.cli import main

    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])], index=[f"s{i}" for i in range(X.shape[0])])
    frame.insert(0, "label", [str(c) if c >= 0 else "" for c in y])
    frame.to_csv(tmp_path / "study.csv")
    out = tmp_path / "answer"
    assert main(["select", str(tmp_path / "study.csv"), "--label-column", "label", "-o", str(out),
                 "--no-progress"]) == 0
    printed = " ".join(capsys.readouterr().out.split("\n\n")[0].split())
    consensus = pd.read_csv(out / "consensus.tsv", sep="\t").sort_values("consensus_rank")
    return printed, json.loads((out / "summary.json").read_text()), consensus


def anndata_fit(X: np.ndarray, labels: np.ndarray, **params) -> dict:
    """``uns["propagate"]["fit"]`` of ``ssfs.tl.rank_features`` on X as float32 AnnData, ``labels`` in ``obs["label"]``
    ("" = unlabeled)."""
    import warnings

    import anndata as ad

    from ssfs.tl import rank_features

    adata = ad.AnnData(np.asarray(X, dtype=np.float32))
    adata.obs["label"] = pd.Categorical(np.where(labels != "", labels, None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rank_features(adata, "propagate", groupby="label", **params)
    return adata.uns["propagate"]["fit"]
