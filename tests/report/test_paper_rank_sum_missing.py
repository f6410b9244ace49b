"""report.paper rank sums when a run lacks a value (COP-KMeans infeasible -> NaN)."""

import numpy as np
import pandas as pd

from ssfs.report.papers import compare_with_paper


def _cfg():
    return {"seed": 0, "methods": {m: {"method": m, "params": {}} for m in ("cs1", "cs2", "c4")},
            "supervision": {"protocol": "holdout", "repetitions": 4, "test_size": 0.5, "n_folds": 10,
                            "labeled_per_class": "all",
                            "constraints": {"mode": "random", "n_ml": 5, "n_cl": 5, "closure": False, "noise": 0.0}},
            "sweeps": {}}


def _paper():
    return pd.DataFrame([dict(dataset="Wine", method=m.upper(), metric="rank_sum:semisupervised_accuracy", value="1",
                              sd="", features="at:2", setting="n_constraints=5", ssfs_dataset="wine", ssfs_method=m,
                              note="") for m in ("cs1", "cs2", "c4")])


def test_rank_sum_skips_runs_with_a_missing_value():
    # per run (rep 0..3) the accuracies of cs1, cs2, c4 at 2 features; rep 2 has NaN for cs2
    acc = {0: (0.9, 0.8, 0.8), 1: (0.5, 0.7, 0.6), 2: (0.9, np.nan, 0.1), 3: (0.6, 0.6, 0.6)}
    rows = [("wine", "base", m, r, 2, "semisupervised_accuracy", v[k])
            for r, v in acc.items() for k, m in enumerate(("cs1", "cs2", "c4"))]
    rows += [("wine", "base", m, r, 1, "semisupervised_accuracy", 0.0) for r in acc for m in ("cs1", "cs2", "c4")]
    scores = pd.DataFrame(rows, columns=["dataset", "variant", "method", "rep", "n_features", "metric", "value"])
    out = compare_with_paper(_paper(), scores, {"wine": 13}, _cfg()).set_index("method")
    # by hand over reps 0, 1, 3 (ties = min): cs1 1+3+1 = 5, cs2 2+1+1 = 4, c4 2+2+1 = 5
    assert out.loc["cs1", "ours"] == "5" and out.loc["cs2", "ours"] == "4" and out.loc["c4", "ours"] == "5"
    assert (out["n_runs"] == 3).all()


def test_rank_sum_all_runs_missing_gives_empty():
    rows = [("wine", "base", m, r, 2, "semisupervised_accuracy", np.nan if m == "c4" else 0.5)
            for r in range(3) for m in ("cs1", "cs2", "c4")]
    scores = pd.DataFrame(rows, columns=["dataset", "variant", "method", "rep", "n_features", "metric", "value"])
    out = compare_with_paper(_paper(), scores, {"wine": 13}, _cfg())
    assert (out["ours"] == "").all() and (out["n_runs"] == 0).all()
