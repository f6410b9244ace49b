"""Counts whose batches nobody recorded (issue #28, session 41): ``propagate`` with its defaults (a residual component
every group shares read as batches, docs/labels_that_count.md "A component every group shares"), with
``unwanted="kept"``, and what users pick instead, on ``ssfs.simulate.simulate_counts`` (5 types x 20 markers, 2,000
cells x 1,000 genes, every gene x log-normal(0, ``--batch-sd``) per batch, batches not given).

    python benchmarks/bench_unrecorded_batches.py --batches 2       # found: 0.99-1.00 of the markers
    python benchmarks/bench_unrecorded_batches.py --batches 3       # 2 components read together: 1.00
    python benchmarks/bench_unrecorded_batches.py --batches 5       # not found (0.09-0.46): a loss to seurat_v3
    python benchmarks/bench_unrecorded_batches.py --batches 2 --cells 3000 --composition 0.6   # types' shares differ

``--composition s``: each batch keeps a random share (1 - s to 1, at least 5 %) of each type's cells, as donors hold
different mixes of types (docs "Batches whose types' shares differ").

One line per draw and label budget: whether a component was read as batches, then the recall of the planted markers
(``given``: ``propagate`` with the batches given, the oracle).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_labels_sweep import rank  # noqa: E402  (the sweep's anchor calls)

ANCHORS = ("hvg_seurat_v3", "hotspot", "label_spreading_f", "rank_genes_groups")


def main(argv=None) -> int:
    from ssfs.runner import run_method
    from ssfs.simulate import make_labels, simulate_counts

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--batch-sd", type=float, default=0.6)
    ap.add_argument("--cells", type=int, default=2000)
    ap.add_argument("--composition", type=float, default=0.0)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    ap.add_argument("--budgets", nargs="+", default=["2/class", "3/class", "1%"])
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    for seed in args.seeds:
        sim = simulate_counts(args.cells, 1000, 5, 20, rng=seed, fold_change=(2, 6), n_batches=args.batches,
                              batch_sd=args.batch_sd, mean_expression=0.5)
        rng = np.random.default_rng(seed)
        share_kept = np.clip(1 - args.composition * rng.random((args.batches, 5)), 0.05, 1)  # batch x type
        keep = rng.random(sim.classes.size) < share_kept[sim.batch, sim.classes] if args.composition else slice(None)
        X, cls, batch = sim.expression()[keep], sim.classes[keep], sim.batch[keep]
        data = {"expression": X, "counts": sim.X[keep]}
        for budget in args.budgets:
            y = make_labels(cls, budget, seed)
            fit = run_method("propagate", X, y)
            recall = {"propagate": sim.recall(fit.order),
                      "kept": sim.recall(run_method("propagate", X, y, unwanted="kept").order),
                      "given": sim.recall(run_method("propagate", X, y, batch=batch).order)}
            for anchor in ANCHORS:
                order = rank(anchor, data, y, seed, "counts")
                recall[anchor] = np.nan if order is None else sim.recall(order)
            print(f"batches {args.batches} seed {seed} {budget:>8s} shared_components "
                  f"{fit.result.extra['graph']['shared_components']} "
                  + " ".join(f"{k} {v:.3f}" for k, v in recall.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
