"""The analyst's answer on Gaussian arrays of shapes no ``ssfs.simulate`` scenario uses (2 or 6
classes, weak effects, large modules): ``ssfs.tl.select_stable`` with its defaults against the
labels split between the halves (``labeled="split"``); planted / false among the selected features
and the consensus order's recall of the planted markers.

    python benchmarks/bench_select_shapes.py --seeds 5 6 --budgets 3/class 6/class

One line of JSON per run (docs/labels_that_count.md, "Selection mode", shapes outside the scenarios).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd

#: generator knobs of each shape (:func:`ssfs.simulate.simulate_microarray`)
SHAPES = {
    "2 classes": dict(n_samples=180, n_genes=3000, n_classes=2, n_markers=30, effect=(0.5, 2.0)),
    "6 classes": dict(n_samples=400, n_genes=2500, n_classes=6, n_markers=15),
    "3 classes, large modules": dict(n_samples=250, n_genes=4000, n_classes=3, n_markers=25, module_size=80,
                                     module_fraction=0.8),
}


def one_run(shape: str, seed: int, budget: str, labeled: str) -> dict:
    """select_stable on one draw of ``shape`` with ``budget`` labels and ``labeled``."""
    import anndata as ad

    import ssfs.tl as tl
    from ssfs.seeding import derive_rng
    from ssfs.simulate import make_labels, simulate_microarray

    sim = simulate_microarray(rng=seed, **SHAPES[shape])
    y = make_labels(sim.classes, budget, derive_rng(seed, "labels", budget))
    a = ad.AnnData(sim.X.copy())
    a.obs["label"] = pd.Categorical(np.where(y >= 0, y.astype(str), None))
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl.select_stable(a, groupby="label", labeled=labeled, random_state=seed)
    info = a.uns["ssfs_selection"]
    order = np.argsort(a.var["ssfs_selection_rank"].to_numpy(), kind="stable")
    chosen = np.flatnonzero(a.var["ssfs_selection_selected"].to_numpy())
    planted = np.isin(chosen, np.asarray(sim.markers))
    return {"shape": shape, "seed": seed, "budget": budget, "labeled": labeled, "methods": info["methods"],
            "resampled": info["labeled_resampling"], "recall": round(sim.recall(order), 3),
            "planted": int(planted.sum()), "false": int((~planted).sum()),
            "cpu_s": round(time.process_time() - start, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--seeds", nargs="+", type=int, default=[5, 6])
    ap.add_argument("--budgets", nargs="+", default=["3/class", "6/class"])
    ap.add_argument("--labeled", nargs="+", default=["auto", "split"], choices=["auto", "split", "shared"])
    args = ap.parse_args(argv)
    for shape in args.shapes:
        for seed in args.seeds:
            for budget in args.budgets:
                for labeled in args.labeled:
                    print(json.dumps(one_run(shape, seed, budget, labeled)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
