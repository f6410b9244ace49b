"""The analyst's answer on real sets of ../shared/data with a few labels per class: ``ssfs.tl.select_stable``
with its defaults against the labels split between the halves (``labeled="split"``) and against what users
pick instead (label spreading + F, ``rank_genes_groups`` on the labeled samples). No planted truth: 5-fold
linear SVM accuracy on every sample (true classes) with the top 10 / 20 features of each order, and the
length of the stable list; the variance order beside them (label-free).

    python benchmarks/bench_select_real.py --sets TOX-171 --per-class 3 --seeds 0 1 2

One line of JSON per run (docs/labels_that_count.md, "Selection mode"). Sets of fewer than 150 samples
get the labels split either way (``labeled: auto``), so only the larger ones tell the two apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # anchors.py and bench_labels_sweep.py beside this file


def accuracy(X, y, order, k: int) -> float:
    """5-fold linear SVM accuracy on all samples with the first ``k`` features of ``order``."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import LinearSVC

    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    return round(float(cross_val_score(LinearSVC(dual="auto"), X[:, order[:k]], y, cv=folds).mean()), 3)


def runs(name: str, X, y, per_class: int, seed: int, anchors) -> list[dict]:
    """Every row of one set and seed: the defaults, split labels, then each anchor."""
    import anndata as ad
    from anchors import anchor_order

    import ssfs.tl as tl
    from ssfs.simulate import labels_per_class

    keep = labels_per_class(y, per_class, np.random.default_rng(seed)) >= 0
    a = ad.AnnData(np.asarray(X, dtype=float))
    a.obs["label"] = pd.Categorical(np.where(keep, y.astype(str), None))
    base = {"set": name, "samples": int(y.size), "per_class": per_class, "seed": seed}
    out = []
    for labeled in ("auto", "split"):
        b = a.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tl.select_stable(b, groupby="label", labeled=labeled, random_state=seed)
        order = np.argsort(b.var["ssfs_selection_rank"].to_numpy(), kind="stable")
        info = b.uns["ssfs_selection"]
        out.append({**base, "answer": f"select_stable labeled={labeled}", "methods": info["methods"],
                    "resampled": info["labeled_resampling"], "labeled_weight": info.get("labeled_weight"),
                    "selected": int(b.var["ssfs_selection_selected"].sum()),
                    "acc10": accuracy(X, y, order, 10), "acc20": accuracy(X, y, order, 20)})
    var_order = np.argsort(-np.asarray(X).var(axis=0), kind="stable")  # label-free: the most variable first
    out.append({**base, "answer": "variance", "acc10": accuracy(X, y, var_order, 10),
                "acc20": accuracy(X, y, var_order, 20)})
    for name_a in anchors:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            order = anchor_order(name_a, np.asarray(X), np.where(keep, y, -1), np.random.default_rng(seed))
        out.append({**base, "answer": f"anchor {name_a}", "acc10": accuracy(X, y, order, 10),
                    "acc20": accuracy(X, y, order, 20)})
    return out


def main(argv=None) -> int:
    from bench_labels_sweep import load_real

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", default=["TOX-171"])
    ap.add_argument("--per-class", type=int, default=3)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--anchors", nargs="*", default=["label_spreading_f", "rank_genes_groups"])
    ap.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data"))
    args = ap.parse_args(argv)
    for name in args.sets:
        loaded = load_real(name, Path(args.data))
        if loaded is None:
            print(f"# {name}: not found under {args.data}", flush=True)
            continue
        X, _, y = loaded
        X = X.toarray() if hasattr(X, "toarray") else X
        for seed in args.seeds:
            for row in runs(name, X, np.asarray(y), args.per_class, seed, args.anchors):
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
