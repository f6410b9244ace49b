"""The analyst's answer on ``ssfs.simulate``'s scenarios: ``ssfs.tl.select_stable`` (what ``ssfs select``
gives) with each methods setting, its consensus order's recall of the planted markers (in the top m, m =
the number of markers) and the stable list (selected, planted among them, false).

    python benchmarks/bench_select_scenarios.py --quick --seeds 0 1 --budgets 1% 3/class \
        --scenarios counts rare splatter --methods auto propagate,laplacian,fisher,cls --labeled auto split \
        --anchors label_spreading_f rank_genes_groups

One line of JSON per run on stdout (``--out FILE`` appends there too), then the table of means.
Each run is 20 half-samples of every method: minutes per run at the quick size (2,000 cells).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ssfs.experiment.selection_defaults import LABELED
from ssfs.simulate import get_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))  # anchors.py beside this file


def draw(scenario: str, budget: str, seed: int, quick: bool, cells: int | None = None):
    """(simulation, labels) of one draw of ``scenario`` with ``budget`` labels; ``cells``: the
    scenario's generator with its knobs but this many cells (or samples, for the arrays)."""
    sc = get_scenario(scenario)
    size = "n_samples" if "n_samples" in sc.knobs else "n_cells"
    sim = (sc.simulate(seed, quick=quick) if cells is None
           else sc.generator(rng=seed, **{**sc.knobs_for(seed, quick), size: cells}))
    return sim, sc.labels(sim, budget, seed)


def anchor_run(scenario: str, budget: str, seed: int, name: str, quick: bool, cells: int | None = None) -> dict:
    """The recall of anchor ``name`` (benchmarks/anchors.py: what users pick instead) on the same draw
    as :func:`one_run`, given the input it expects (raw counts, or log1p-normalised ones for
    ``rank_genes_groups``, label spreading and seurat HVG: until session 24 they were given raw
    counts); an anchor gives one ranking, no list (selected: None)."""
    from anchors import anchor_input, anchor_order

    sim, y = draw(scenario, budget, seed, quick, cells)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        order = anchor_order(name, anchor_input(name, sim), y, np.random.default_rng(seed))  # counts or log values
    return {"scenario": scenario, "cells": sim.X.shape[0], "budget": budget, "seed": seed, "methods": f"anchor {name}",
            "labeled": "-", "resampled": "-", "used": name,
            "recall": None if order is None else round(sim.recall(order), 3), "selected": None, "planted": None,
            "false": None, "markers": int(np.size(sim.markers)), "cpu_s": round(time.process_time() - start, 1)}


def one_run(scenario: str, budget: str, seed: int, methods: str, quick: bool, cells: int | None = None,
            labeled: str = "auto") -> dict:
    """select_stable on one draw of ``scenario`` with ``budget`` labels (:func:`draw`); ``methods``:
    "auto" or comma-separated names; ``labeled``: how the labeled samples enter the resamples."""
    import ssfs.tl as tl

    sim, y = draw(scenario, budget, seed, quick, cells)
    adata = sim.to_anndata()
    adata.obs["label"] = pd.Categorical(np.where(y >= 0, y.astype(str), None))
    chosen = methods if methods == "auto" else tuple(methods.split(","))
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl.select_stable(adata, methods=chosen, groupby="label" if (y >= 0).any() else None, random_state=seed,
                         labeled=labeled)
    order = np.argsort(adata.var["ssfs_selection_rank"].to_numpy(), kind="stable")
    selected = adata.var["ssfs_selection_selected"].to_numpy()
    planted = np.zeros(adata.n_vars, dtype=bool)
    planted[sim.markers] = True
    info = adata.uns["ssfs_selection"]
    return {"scenario": scenario, "cells": adata.n_obs, "budget": budget, "seed": seed, "methods": methods,
            "labeled": labeled, "resampled": info["labeled_resampling"], "used": ",".join(info["methods"]),
            "recall": round(sim.recall(order), 3),
            "selected": int(selected.sum()), "planted": int((selected & planted).sum()),
            "false": int((selected & ~planted).sum()), "markers": int(planted.sum()),
            "cpu_s": round(time.process_time() - start, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", nargs="+", default=["counts", "rare", "splatter"])
    ap.add_argument("--budgets", nargs="+", default=["1%", "3/class"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--methods", nargs="*", default=["auto", "propagate,laplacian,fisher,cls"],
                    help="\"auto\" or comma-separated names, one select_stable run each (none: anchors only)")
    ap.add_argument("--quick", action="store_true", help="the scenarios' quick sizes (2,000 cells)")
    ap.add_argument("--cells", type=int, nargs="+", help="the scenarios at these numbers of cells (samples) instead")
    ap.add_argument("--labeled", nargs="+", default=["auto"], choices=LABELED,
                    help="how the labeled samples enter the resamples (select_stable's labeled)")
    ap.add_argument("--anchors", nargs="*", default=[],
                    help="also each of these anchors' recall on the same draws (benchmarks/anchors.py names, e.g. "
                         "label_spreading_f rank_genes_groups hotspot)")
    ap.add_argument("--out", help="append every run's JSON line to this file")
    args = ap.parse_args(argv)
    rows = []
    runs = [(sc, n, seed, b, m, lab) for sc in args.scenarios for n in (args.cells or [None]) for seed in args.seeds
            for b in args.budgets for m in args.methods for lab in args.labeled]
    runs += [(sc, n, seed, b, f"anchor {a}", "-") for sc in args.scenarios for n in (args.cells or [None])
             for seed in args.seeds for b in args.budgets for a in args.anchors]
    for scenario, cells, seed, budget, methods, labeled in runs:
        anchor = methods.removeprefix("anchor ") if methods.startswith("anchor ") else None
        row = (anchor_run(scenario, budget, seed, anchor, args.quick, cells) if anchor
               else one_run(scenario, budget, seed, methods, args.quick, cells, labeled))
        rows.append(row)
        line = json.dumps(row)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(line + "\n")
    table = pd.DataFrame(rows).groupby(["scenario", "cells", "budget", "methods", "labeled"], sort=False)[
        ["recall", "selected", "planted", "false", "cpu_s"]].mean().round(3)
    print(table.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
