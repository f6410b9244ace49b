"""Issue 28: one table of counts, one reading, through every door (session 25).

    python benchmarks/bench_dense_counts.py                          # ~40 s: the tables of docs/labels_that_count.md
    python benchmarks/bench_dense_counts.py --library-sizes 4000 --seeds 0 --anchors hotspot label_spreading_f

``propagate`` reads X as counts when it is sparse, at least half zeros, long-tailed non-negative
integers (deep counts) or log1p-normalised counts (every cell's values on a lattice:
``ssfs.methods._shared.counts``). Each draw of ``ssfs.simulate.simulate_splatter`` (500 cells,
1,000 genes, 5 types of 20 markers, ``--library-sizes`` counts per cell) is ranked by
``propagate`` with 3 labels per type and without labels, as the same matrix four ways: raw
counts sparse and dense, log1p-normalised counts sparse and dense; the metric is the recall of
the 100 markers in the top 100. Dense and sparse give the same recall when they are read
alike (before session 25 a dense matrix with fewer than half zeros was read as expression values).
``--anchors`` (``benchmarks/anchors.py``, ``pip install -e ".[anchors]"``) adds what users pick
instead, on the input each expects, with the labels.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parent))


def doors(sim) -> dict:
    """The same draw as four matrices: raw counts and log1p-normalised counts, sparse and dense."""
    from ssfs.methods._shared.counts import normalize_log1p

    counts = sparse.csr_matrix(sim.X)
    logn = normalize_log1p(counts)
    return {"counts sparse": counts, "counts dense": counts.toarray(), "log sparse": logn, "log dense": logn.toarray()}


def one_draw(library_size: float, seed: int, anchors: list[str]) -> dict:
    """Recall of every door with and without labels, and of every anchor, on one draw."""
    from ssfs import run_method
    from ssfs.simulate import labels_per_class, simulate_splatter

    sim = simulate_splatter(500, 1000, 5, 20, library_size=library_size, rng=np.random.default_rng(seed))
    y = labels_per_class(sim.classes, 3, rng=seed)
    out = {"zeros": float(np.mean(sim.X.toarray() == 0))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for door, X in doors(sim).items():
            for what, labels in (("3/type", y), ("no labels", np.full_like(y, -1))):
                out[f"{door}, {what}"] = sim.recall(run_method("propagate", X, labels, rng=seed).order)
        if anchors:
            from anchors import anchor_input, anchor_order

            for name in anchors:
                order = anchor_order(name, anchor_input(name, sim), y, np.random.default_rng(seed))
                out[name] = np.nan if order is None else sim.recall(order)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library-sizes", type=float, nargs="+", default=[4000.0, 20000.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--anchors", nargs="*", default=[], help="anchors of benchmarks/anchors.py (with the labels)")
    args = ap.parse_args(argv)
    for size in args.library_sizes:
        rows = [one_draw(size, seed, args.anchors) for seed in args.seeds]
        print(f"\n# {size:g} counts per cell, seeds {args.seeds}: zeros {min(r['zeros'] for r in rows):.0%}-"
              f"{max(r['zeros'] for r in rows):.0%}; recall of the 100 markers in the top 100")
        print("| ranked | mean | per seed |\n|---|---|---|")
        for key in rows[0]:
            if key != "zeros":
                values = [r[key] for r in rows]
                print(f"| {key} | {np.nanmean(values):.3f} | {' '.join(f'{v:.2f}' for v in values)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
