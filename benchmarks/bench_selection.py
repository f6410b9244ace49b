"""Selection mode on the analyst's CSV of issue #29 (tests/analyst_data.py: 300 samples x 2,000
genes, 4 classes, 40 planted markers at +1.5 sd, k labels per class, blank label cells): how many
planted markers the stable list holds, and how many noise genes, per label budget, aggregation
across methods and threshold, with ``top: auto`` (the largest q whose error bound is at most 1).

    python benchmarks/bench_selection.py                          # budgets 2 5 10 20 75, seed 0
    python benchmarks/bench_selection.py --budgets 5 --methods laplacian fisher cls variance

Every method ranks the 20 complementary-pair half-samples once per budget; the aggregations and
thresholds reuse those ranks (the numbers are those ``ssfs select`` would give for each setting).
The table behind the choice of ``stability_weighted`` with squared weights
(:func:`ssfs.experiment.selection.method_weights`) and of the default threshold 0.8 (docs/selection.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from analyst_data import analyst_frame  # noqa: E402

from ssfs.constraints import Constraints  # noqa: E402
from ssfs.experiment.error_bound import choose_top  # noqa: E402
from ssfs.experiment.selection import method_stability, positions_of  # noqa: E402
from ssfs.experiment.stable_selection import (  # noqa: E402
    method_settings,
    resample_ranks,
    selection_options,
    selection_resamples,
)
from ssfs.labels import encode_labels  # noqa: E402

N_MARKERS = 40


def resample_ranks_of(lpc: int, methods, seed: int) -> dict:
    """Each method's ranks on the 20 half-samples of the analyst's CSV with ``lpc`` labels per
    class (methods that cannot run on a half-sample are left out, as selection mode does)."""
    df, _ = analyst_frame(labeled_per_class=lpc, seed=seed)
    X = df.drop(columns="label").to_numpy()
    y, classes = encode_labels(df["label"].replace("", np.nan), (), n=len(df))
    sel = selection_options()
    subs = selection_resamples(y, sel, seed, "analyst", classes)
    out = {}
    for m, settings in method_settings(methods).items():
        ranks, failed = resample_ranks(X, y, Constraints.from_labels(y), settings, subs, range(len(subs)), seed=seed,
                                       dataset="analyst", label=m)
        if not any(failed):
            out[m] = ranks.astype(np.float64)
    return out


def weighted(R: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.tensordot(w / w.sum(), R, axes=1)


def rows_for(res: dict, lpc: int, thresholds) -> list[dict]:
    methods = list(res)
    R = np.stack([res[m] for m in methods])
    p = R.shape[2]
    rows = []
    for pi in thresholds:
        q = choose_top(p, pi, R.shape[1])
        st = np.array([max(method_stability({m: res[m]}, q)[m]["value"] or 0.0, 0.0) for m in methods])
        schemes = {"mean_rank": np.ones(len(methods)), "stability (w = s)": st,
                   "stability_weighted (w = s^2)": st**2}
        for name, w in schemes.items():
            if not w.sum():
                continue
            freq = (positions_of(weighted(R, w)) <= q).mean(axis=0)
            sel = np.flatnonzero(freq >= pi)
            rows.append({"labels/class": lpc, "methods": ",".join(methods), "threshold": pi, "q": q,
                         "aggregation": name, "markers": int((sel < N_MARKERS).sum()),
                         "noise": int((sel >= N_MARKERS).sum())})
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", type=int, nargs="+", default=[2, 5, 10, 20, 75])
    ap.add_argument("--methods", nargs="+", default=["laplacian", "fisher", "cls"])
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.7, 0.8, 0.9])
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    rows = []
    for lpc in a.budgets:
        rows += rows_for(resample_ranks_of(lpc, a.methods, a.seed), lpc, a.thresholds)
    t = pd.DataFrame(rows)
    wide = t.assign(cell=t["markers"].astype(str) + "+" + t["noise"].astype(str)).pivot_table(
        index=["labels/class", "methods", "aggregation"], columns="threshold", values="cell", aggfunc="first")
    print("planted markers + noise genes in the stable list (top: auto, q per threshold:",
          dict(zip(t["threshold"], t["q"], strict=True)), ")")
    print(wide.to_markdown())


if __name__ == "__main__":
    main()
