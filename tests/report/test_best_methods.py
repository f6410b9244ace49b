"""The report's per-dataset statistics (best_methods, per_dataset_comparisons: corrected
resampled t-test over the repetitions) and the run-time summary without first calls."""

import numpy as np
import pandas as pd
import pytest

from ssfs._checked import read_checked_tsv
from ssfs.experiment import stats as S
from ssfs.experiment.splits import make_split
from ssfs.report.build import runtime_summary, warm_runs
from ssfs.report.statistics import BEST_COLS, best_methods, per_dataset_comparisons, split_sizes

# per-repetition values (top-K averages) of three methods on one dataset
VALS = {"cls": [0.90, 0.80, 0.85, 0.95, 0.90], "fisher": [0.80, 0.82, 0.80, 0.85, 0.84],
        "variance": [0.50, 0.55, 0.52, 0.50, 0.51]}


def _scores(vals=VALS, metric="accuracy", dataset="wine", sizes=(1, 2)):
    rows = []
    for m, v in vals.items():
        for r, x in enumerate(v):
            for i in sizes:  # +-0.01 around x: the top-K average over the sizes is x
                rows.append((dataset, "base", m, r, i, metric, x + (0.01 if i == sizes[0] else -0.01)))
    return pd.DataFrame(rows, columns=["dataset", "variant", "method", "rep", "n_features", "metric", "value"])


def _cfg(protocol="holdout", **sup):
    return {"supervision": {"protocol": protocol, "test_size": 1 / 3, "n_folds": 10, **sup}, "report": {"alpha": 0.05}}


def test_split_sizes_match_the_splits():
    y = np.repeat([0, 1, 2], [59, 71, 48])  # wine's classes
    rng = np.random.default_rng(0)
    sp = make_split(y, 0, rng, rng, protocol="holdout", labeled_per_class=3)
    assert split_sizes(_cfg(), y.size) == (len(sp["train"]), len(sp["test"])) == (118, 60)
    assert split_sizes(_cfg()) == pytest.approx((2 / 3, 1 / 3))
    assert split_sizes(_cfg("kfold"), 60) == (54.0, 6.0) and split_sizes(_cfg("kfold")) == (9.0, 1.0)


def test_best_methods_values_and_sentence():
    best = best_methods(_scores(), _cfg(), n_samples={"wine": 178})
    assert list(best.columns) == BEST_COLS and len(best) == 1
    r = best.iloc[0]
    assert (r.best, r.runner_up, r.metric, r.test) == ("cls", "fisher", "accuracy", "corrected resampled t-test")
    a, b = VALS["cls"], VALS["fisher"]
    t, p = S.corrected_resampled_ttest(a, b, n_train=118, n_test=60)
    m, lo, hi = S.corrected_interval(a, b, n_train=118, n_test=60)
    assert r.difference == pytest.approx(0.058) and (r.ci_low, r.ci_high) == pytest.approx((lo, hi))
    assert r.p_value == pytest.approx(p) and r.decidable
    # by hand: t = .058 / sqrt((1/5 + 60/118) * .00242) = 1.4426; p(t_4) = 0.2226 > 0.05
    assert t == pytest.approx(0.058 / np.sqrt((0.2 + 60 / 118) * 0.00242))
    assert "not a significant difference" in r.sentence and "On wine, cls has the best mean accuracy" in r.sentence
    # a clear winner: cls against variance alone
    r2 = best_methods(_scores({k: VALS[k] for k in ("cls", "variance")}), _cfg(), n_samples={"wine": 178}).iloc[0]
    assert r2.p_value < 0.01 and r2.sentence.startswith("On wine, cls beats variance by 0.364 accuracy (95 % CI")
    assert "corrected resampled t-test p = " in r2.sentence


def test_best_methods_lower_is_better_and_one_repetition():
    vals = {"a": [0.2, 0.3, 0.25], "b": [0.5, 0.6, 0.55]}
    r = best_methods(_scores(vals, metric="red"), _cfg()).iloc[0]
    assert r.best == "a" and r.difference == pytest.approx(0.3) and r.ci_low > 0  # 0.3 lower RED
    assert "lower redundancy" in r.sentence
    one = best_methods(_scores({"a": [0.9], "b": [0.8]}), _cfg()).iloc[0]
    assert not one.decidable and one.test == "none" and np.isnan(one.p_value) and "no test can decide" in one.sentence


def test_per_dataset_comparisons_wilcoxon_floor_and_holm():
    pdc = per_dataset_comparisons(_scores(), _cfg(), n_samples={"wine": 178}).set_index("method")
    assert list(pdc.index) == ["fisher", "variance"] and (pdc["best"] == "cls").all()
    # 5 repetitions: the exact Wilcoxon test cannot go below 0.0625
    assert (pdc["wilcoxon_min_p"] == 0.0625).all() and not pdc["decidable_wilcoxon"].any()
    assert pdc.loc["variance", "wilcoxon_p"] == pytest.approx(0.0625)
    assert pdc["p_holm"].tolist() == pytest.approx(S.holm(pdc["p_value"].to_numpy()).tolist())
    d = np.subtract(VALS["cls"], VALS["variance"])
    assert pdc.loc["variance", "d_z"] == pytest.approx(d.mean() / d.std(ddof=1))


def test_runtime_summary_leaves_first_calls_apart():
    rt = pd.DataFrame({"dataset": "wine", "variant": "base", "method": ["m"] * 5 + ["e"] * 2,
                       "rep": [0, 1, 2, 3, 4, 0, 1],
                       "seconds": [3.0, 0.10, 0.12, 0.11, 0.50, 2.0, 2.2], "peak_mb": [90, 5, 6, 5, 5, 10, 12],
                       "first_call": [True, False, False, False, False, True, True]})
    s = runtime_summary(rt).set_index("method")
    assert s.loc["m", "median_s"] == pytest.approx(0.115) and s.loc["m", "n_warm"] == 4
    assert s.loc["m", "first_call_extra_s"] == pytest.approx(3.0 - 0.115) and s.loc["m", "peak_mb"] == 6
    # every run a first call (member chunks, one repetition per job): the median of all, flagged
    assert not s.loc["e", "warm"] and s.loc["e", "median_s"] == pytest.approx(2.1)
    assert len(warm_runs(rt)) == 4 + 2


def test_select_reps_marks_the_first_call_of_the_process(tmp_path):
    from pathlib import Path

    import yaml

    from ssfs.workflow.config import load_schema, validate_config
    from ssfs.workflow.pipeline import run_constraints, run_prepare, run_select_batch, run_split

    repo = Path(__file__).resolve().parents[2]
    cfg = validate_config(yaml.safe_load((repo / "config/config.yaml").read_text()),
                          load_schema(repo / "workflow/schemas/config.schema.yaml"))
    prepared = tmp_path / "wine.h5ad"
    run_prepare(dataset="wine", entry=cfg["datasets"]["wine"], data_dir=tmp_path, prepared=prepared)
    reps = [0, 1, 2]
    f = {k: [tmp_path / f"{k}{r}.{ext}" for r in reps]
         for k, ext in [("split", "json"), ("cons", "tsv"), ("rank", "tsv"), ("comp", "npy"), ("time", "tsv")]}
    run_split(prepared=prepared, splits=f["split"], sup=cfg["supervision"], seed=0, dataset="wine", reps=reps)
    run_constraints(prepared=prepared, splits=f["split"], constraints=f["cons"], sup=cfg["supervision"], seed=0,
                    dataset="wine", reps=reps)
    run_select_batch(prepared=prepared, splits=f["split"], constraints=f["cons"], rankings=f["rank"],
                     timing=f["time"], methods={"fisher": cfg["methods"]["fisher"]}, seed=0, dataset="wine",
                     variant="base", reps=reps)
    t = pd.concat([read_checked_tsv(p) for p in f["time"]])
    assert t["first_call"].tolist() == [True, False, False] and (t["seconds"] > 0).all()


def test_select_reps_record_each_fit(tmp_path):
    """Benchmark mode: a method that propagates labels records every repetition's graph diagnostics in
    its timing row (``fit``, JSON; read into runtime.tsv by ``read_timings``), those of its fit on that
    repetition's training part; a method that propagates none records ''."""
    import json
    from pathlib import Path

    import yaml

    from ssfs.io.h5ad import read_prepared
    from ssfs.report.build import read_timings
    from ssfs.runner import MethodConfig, run_method
    from ssfs.workflow.config import load_schema, validate_config
    from ssfs.workflow.pipeline import _select_rng, _training, run_constraints, run_prepare, run_select_batch, run_split

    repo = Path(__file__).resolve().parents[2]
    cfg = validate_config(yaml.safe_load((repo / "config/config.yaml").read_text()),
                          load_schema(repo / "workflow/schemas/config.schema.yaml"))
    prepared = tmp_path / "wine.h5ad"
    run_prepare(dataset="wine", entry=cfg["datasets"]["wine"], data_dir=tmp_path, prepared=prepared)
    reps = [0, 1]
    f = {k: [tmp_path / f"{k}{r}.{ext}" for r in reps] for k, ext in [("split", "json"), ("cons", "tsv")]}
    run_split(prepared=prepared, splits=f["split"], sup=cfg["supervision"], seed=0, dataset="wine", reps=reps)
    run_constraints(prepared=prepared, splits=f["split"], constraints=f["cons"], sup=cfg["supervision"], seed=0,
                    dataset="wine", reps=reps)
    methods = {"fisher": cfg["methods"]["fisher"], "propagate": {"method": "propagate", "params": {}}}
    timing = [tmp_path / f"{m}{r}.time.tsv" for m in methods for r in reps]
    run_select_batch(prepared=prepared, splits=f["split"], constraints=f["cons"], timing=timing,
                     rankings=[tmp_path / f"{m}{r}.tsv" for m in methods for r in reps], methods=methods, seed=0,
                     dataset="wine", variant="base", reps=reps)
    t = read_timings(timing).set_index(["method", "rep"])
    assert (t.loc["fisher", "fit"] == "").all()
    settings = MethodConfig("propagate", "propagate", {})
    for r in reps:
        Xtr, ytr, cons, params = _training(read_prepared(prepared), f["split"][r], f["cons"][r], settings)
        direct = run_method("propagate", Xtr, ytr, cons, rng=_select_rng(0, "wine", settings, r), **params)
        fit = json.loads(t.loc[("propagate", r), "fit"])
        assert fit == direct.result.fit_summary() and {"gene_scale", "sample_scale", "agreement"} <= set(fit)


def test_default_run_repetitions_let_the_wilcoxon_test_decide():
    from pathlib import Path

    import yaml

    cfg = yaml.safe_load((Path(__file__).resolve().parents[2] / "config/config.yaml").read_text())
    assert S.wilcoxon_min_pvalue(cfg["supervision"]["repetitions"]) < 0.05
