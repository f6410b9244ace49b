"""Aggregation, stability, statistics, published numbers and the HTML report (ssfs.report.build*)."""

import html
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from html_check import check_page

from ssfs.io.atomic import write_checked_tsv
from ssfs.report.build import (
    mean_sd_table,
    run_aggregate,
    run_report,
    summarize,
    sweep_columns,
    top_k,
)
from ssfs.report.papers import compare_with_paper, feature_sizes, load_paper, parse_setting
from ssfs.report.stability import read_orders, stability_at_one_size, stability_table
from ssfs.report.statistics import statistics

REPO = Path(__file__).resolve().parents[2]
PAPERS = REPO / "src" / "ssfs" / "report" / "published"


def _scores(methods=("a", "b", "c"), datasets=("d1", "d2", "d3"), reps=3, sizes=(1, 2), metric="accuracy",
            variant="base"):
    """Tidy table where method a > b > c on every dataset (with a small rep effect)."""
    rows = []
    for di, ds in enumerate(datasets):
        for mi, m in enumerate(methods):
            for r in range(reps):
                for i in sizes:
                    rows.append((ds, variant, m, r, i, metric, 0.9 - 0.1 * mi + 0.01 * r + 0.001 * i + 0.0001 * di))
    return pd.DataFrame(rows, columns=["dataset", "variant", "method", "rep", "n_features", "metric", "value"])


def _cfg(**report):
    return {"seed": 0, "methods": {m: {"method": "variance", "params": {}} for m in ("a", "b", "c")},
            "supervision": {"protocol": "holdout", "repetitions": 3, "test_size": 1 / 3, "n_folds": 10,
                            "labeled_per_class": 3,
                            "constraints": {"mode": "random", "n_ml": 5, "n_cl": 5, "closure": False, "noise": 0.0}},
            "evaluation": {"classifier": "svm", "scale": "minmax", "max_features": 2, "n_features": None,
                           "percent": None, "metrics": ["accuracy"], "train_on": "all"},
            "sweeps": {},
            "report": {"title": "t", "control": "a", "alpha": 0.05, "paper": None, "wtl_alpha": 0.1,
                       "wilcoxon_min_datasets": 5, **report}}


# ------------------------------------------------------------------ tables
def test_summary_and_top_k_by_hand():
    df = pd.DataFrame({"dataset": "d", "variant": "base", "method": "m", "metric": "accuracy",
                       "rep": [0, 0, 1, 1], "n_features": [1, 2, 1, 2], "value": [0.5, 0.7, 0.6, 1.0]})
    s = summarize(df)
    assert s["mean"].tolist() == pytest.approx([0.55, 0.85])
    assert s["sd"].tolist() == pytest.approx([np.std([0.5, 0.6], ddof=1), np.std([0.7, 1.0], ddof=1)])
    t = top_k(df)  # per rep: 0.6 and 0.8 -> 0.7 ± sd(0.6, 0.8)
    assert t["mean"].iloc[0] == pytest.approx(0.7)
    assert t["sd"].iloc[0] == pytest.approx(np.sqrt(0.02))
    assert t["max_features"].iloc[0] == 2


def test_pm_table_bold_best_follows_metric_direction():
    df = pd.DataFrame({"dataset": "d", "metric": ["accuracy", "accuracy", "red", "red"], "method": ["x", "y"] * 2,
                       "mean": [0.8, 0.9, 0.3, 0.1], "sd": 0.0})
    w = mean_sd_table(df, ["dataset", "metric"]).set_index("metric")
    assert w.loc["accuracy", "y"].startswith("**") and not w.loc["accuracy", "x"].startswith("**")
    assert w.loc["red", "y"].startswith("**") and not w.loc["red", "x"].startswith("**")


def test_sweep_columns_from_variant_names():
    cfg = _cfg()
    cfg["sweeps"] = {"n_constraints": [2, 5], "noise": [0.0, 0.1]}
    df = _scores(variant="n_constraints-5__noise-0.1")
    out, keys = sweep_columns(df, cfg)
    assert keys == ["n_constraints", "noise"]
    assert set(out["n_constraints"]) == {5} and set(out["noise"]) == {0.1}


# --------------------------------------------------------------- stability
def test_stability_numbers_by_hand(tmp_path):
    orders = {0: [0, 1, 2, 3, 4, 5], 1: [0, 2, 1, 5, 4, 3], 2: [1, 0, 3, 2, 5, 4]}
    paths = []
    for rep, o in orders.items():
        p = tmp_path / "d" / "base" / "rankings" / "m" / f"{rep}.tsv"
        p.parent.mkdir(parents=True, exist_ok=True)
        write_checked_tsv(pd.DataFrame({"feature": [f"g{i}" for i in o], "index": o, "score": 0.0,
                                        "rank": range(1, 7)}), p)
        paths.append(p)
    got = read_orders(paths)
    assert list(got) == [("d", "base", "m")]
    tab = stability_table(got, {"d": 10}, {"d": [1, 2]})
    t2 = tab[tab.n_features == 2].iloc[0]
    # top-2 sets {0,1}, {0,2}, {1,0}: pairwise Jaccard 1/3, 1, 1/3
    assert t2["jaccard"] == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)
    # EFSIS eq. 1: features 0 (3 runs), 1 (2), 2 (1) -> mean frequency 2/3 / ... = (3+2+1)/3/3
    assert t2["efsis"] == pytest.approx((3 + 2 + 1) / 3 / 3)
    # Kuncheva: pairs share r = 1, 2, 1 of k = 2 among p = 10 -> (r p - k^2) / (k (p - k))
    assert t2["kuncheva"] == pytest.approx(np.mean([(r * 10 - 4) / (2 * 8) for r in (1, 2, 1)]))
    assert t2["nogueira_lower"] < t2["nogueira"] < t2["nogueira_upper"]
    assert tab["n_runs"].tolist() == [3, 3]
    view = stability_at_one_size(tab)
    assert set(view["measure"]) == {"efsis", "kuncheva", "jaccard", "nogueira"}
    assert view["n_features"].unique().tolist() == [2]
    # a single repetition -> no stability rows
    assert stability_table({("d", "base", "m"): [np.arange(3)]}, {"d": 3}, {"d": [1]}).empty


# -------------------------------------------------------------- statistics
def test_statistics_section(tmp_path):
    scores = _scores()
    tables, fragment, figs = statistics(scores, _cfg(), tmp_path)
    f = tables["friedman"].iloc[0]
    assert (f["n_methods"], f["n_datasets"]) == (3, 3)
    # every dataset ranks a < b < c: chi2_F = 12N/(k(k+1)) [sum R^2 - k(k+1)^2/4] = 6
    assert f["chi2"] == pytest.approx(12 * 3 / 12 * (1 + 4 + 9 - 3 * 16 / 4))
    assert dict(zip(tables["ranks"].method, tables["ranks"].avg_rank, strict=True)) == {"a": 1.0, "b": 2.0, "c": 3.0}
    # fewer than 5 datasets: Wilcoxon over the repetitions of each dataset
    w = tables["wilcoxon"]
    assert set(w.scope) == {"d1: over repetitions", "d2: over repetitions", "d3: over repetitions"}
    assert (w.losses == 3).all()  # b and c lose every repetition against the control a
    wtl = tables["win_tie_loss"].set_index(["method", "opponent"])
    assert tuple(wtl.loc[("a", "c"), ["wins", "ties", "losses"]]) == (3, 0, 0)
    # sign test with 3 datasets at p = 0.1: P(3 wins) = 1/8 > 0.1, so no count is significant (n + 1)
    assert wtl.loc[("a", "c"), "critical_wins"] == 4 and not wtl["significant"].any()
    assert "unreachable" in fragment
    assert "Friedman" in fragment and "<!--figure:cd__base__accuracy-->" in fragment
    assert {x["stem"] for x in figs} == {"cd__base__accuracy", "wtl__base__accuracy"}
    assert (tmp_path / "cd__base__accuracy.svg").exists() and (tmp_path / "wtl__base__accuracy.svg").exists()
    # one method: no comparison
    t1, frag1, _ = statistics(_scores(methods=("a",)), _cfg(), tmp_path)
    assert t1["friedman"].empty and "no comparison" in frag1


# -------------------------------------------------------- published tables
@pytest.mark.parametrize("name,n_rows", [("enscls_table2", 45), ("ssfi_table2", 40),
                                         ("constraint_scores_table1", 56), ("efsis_table2", 324),
                                         ("thesis_ch3", 90), ("thesis_ch4", 96)])
def test_published_tables_parse(name, n_rows):
    df = load_paper(PAPERS / f"{name}.tsv")
    assert len(df) == n_rows
    assert pd.to_numeric(df["value"]).notna().all()
    for spec in df["features"].unique():
        assert feature_sizes(spec, 1000)
    assert (PAPERS / f"{name}.tsv").read_text().startswith("#")


def test_published_numbers_spot_checks():
    ens = load_paper(PAPERS / "enscls_table2.tsv").set_index(["dataset", "method"])
    assert (ens.loc[("BaseHock", "EnsCLS"), "value"], ens.loc[("BaseHock", "EnsCLS"), "sd"]) == ("0.695", "0.01")
    assert ens.loc[("Relathe", "SSFI"), "value"] == "0.553"
    cs = load_paper(PAPERS / "constraint_scores_table1.tsv")
    row = cs[(cs.dataset == "Leukemia") & (cs.method == "C4") & (cs.setting == "n_constraints=30")
             & (cs.features == "percent:50")]
    assert row["value"].tolist() == ["115"]
    ef = load_paper(PAPERS / "efsis_table2.tsv")
    row = ef[(ef.dataset == "CNS") & (ef.method == "GeoDE") & (ef.features == "percent:5")].iloc[0]
    assert (row["value"], row["sd"]) == ("0.90", "0.14")
    th = load_paper(PAPERS / "thesis_ch3.tsv").set_index(["dataset", "method", "metric"])
    assert tuple(th.loc[("CLL-SUB-111", "CSFSR", "accuracy"), ["value", "sd", "features"]]) == ("0.7522", "0.0893",
                                                                                               "best:200")
    assert tuple(th.loc[("PIE10P", "CSFSR", "red"), ["value", "features", "ssfs_dataset"]]) == ("0.06", "upto:88",
                                                                                               "warpPIE10P")
    t4 = load_paper(PAPERS / "thesis_ch4.tsv")
    assert t4[(t4.dataset == "TOX-171") & (t4.method == "L2GFS") & (t4.metric == "accuracy")]["value"].tolist() == [
        "0.8238"]
    assert t4[(t4.dataset == "PIX10P") & (t4.method == "cFLD")]["value"].tolist() == ["0.842"]


def test_compare_with_published_rows():
    scores = _scores(datasets=("wine",), sizes=(1, 2, 3))
    paper = pd.DataFrame([
        dict(dataset="Wine", method="A", metric="accuracy", value="0.5", sd="0.1", features="top:2", setting="",
             ssfs_dataset="", ssfs_method="a", note=""),
        dict(dataset="wine", method="B", metric="accuracy", value="0.4", sd="", features="at:3",
             setting="n_constraints=5", ssfs_dataset="", ssfs_method="b", note=""),
        dict(dataset="wine", method="B", metric="accuracy", value="0.4", sd="", features="at:3",
             setting="n_constraints=7", ssfs_dataset="", ssfs_method="b", note=""),  # other setting: no match
        dict(dataset="Vehicle", method="A", metric="accuracy", value="0.4", sd="", features="at:1", setting="",
             ssfs_dataset="", ssfs_method="a", note=""),  # dataset not in the run
        dict(dataset="Wine", method="A", metric="rank_sum:accuracy", value="150", sd="", features="at:1",
             setting="", ssfs_dataset="", ssfs_method="a", note=""),
        dict(dataset="Wine", method="B", metric="rank_sum:accuracy", value="250", sd="", features="at:1",
             setting="", ssfs_dataset="", ssfs_method="b", note=""),
    ])
    out = compare_with_paper(paper, scores, {"wine": 13}, _cfg())
    assert len(out) == 4
    # a, top:2: per rep mean over i = 1, 2 of 0.9 + 0.01 r + 0.001 i -> 0.9015 + 0.01 r; mean 0.9115, sd 0.01
    def num(s):
        return [float(x) for x in s.split("±")]

    assert num(out.iloc[0]["ours"]) == pytest.approx([0.9115, 0.01], abs=6e-4)
    assert out.iloc[0]["published"] == "0.5 ± 0.1"
    assert num(out.iloc[1]["ours"]) == pytest.approx([0.8 + 0.01 + 0.003, 0.01], abs=6e-4)
    # rank sums among a, b (c is not in the table): a is first in all 3 runs
    assert out.iloc[2]["ours"] == "3" and out.iloc[3]["ours"] == "6" and out.iloc[2]["n_runs"] == 3
    assert parse_setting("n_constraints=5; labeled_per_class=all") == {"n_constraints": 5.0, "labeled_per_class": "all"}
    assert feature_sizes("percent:50", 13) == [6]


# ----------------------------------------------------------- whole report
def _workdir(tmp_path):
    import anndata as ad

    res = tmp_path / "results"
    scores = _scores(datasets=("d1", "d2"))
    rng = np.random.default_rng(0)
    score_paths, bench, rank_paths, prepared = [], [], [], []
    for ds in ("d1", "d2"):
        p = res / ds / "prepared.h5ad"
        p.parent.mkdir(parents=True, exist_ok=True)
        a = ad.AnnData(rng.normal(size=(8, 6)), obs=pd.DataFrame({"label": list("xxxxyyyy")},
                                                                  index=[f"s{i}" for i in range(8)]))
        a.var_names = [f"g{i}" for i in range(6)]
        a.write_h5ad(p)
        prepared.append(p)
        for m in ("a", "b", "c"):
            sp = res / ds / "base" / "scores" / f"{m}.tsv"
            sp.parent.mkdir(parents=True, exist_ok=True)
            write_checked_tsv(scores[(scores.dataset == ds) & (scores.method == m)], sp)
            score_paths.append(sp)
            for r in range(3):
                o = rng.permutation(6)
                rp = res / ds / "base" / "rankings" / m / f"{r}.tsv"
                rp.parent.mkdir(parents=True, exist_ok=True)
                write_checked_tsv(pd.DataFrame({"feature": [f"g{i}" for i in o], "index": o, "score": 0.0,
                                                "rank": range(1, 7)}), rp)
                rank_paths.append(rp)
                tp = res / ds / "base" / "timing" / m / f"{r}.tsv"
                tp.parent.mkdir(parents=True, exist_ok=True)
                timing = {"dataset": [ds], "variant": ["base"], "method": [m], "rep": [r], "seconds": [0.1 + r],
                          "peak_mb": [2.0]}  # the file carries its keys
                write_checked_tsv(pd.DataFrame(timing), tp)
                bench.append(tp)
    return res, score_paths, bench, prepared, rank_paths


def test_aggregate_and_report_html(tmp_path):
    res, score_paths, bench, prepared, rank_paths = _workdir(tmp_path)
    cfg = _cfg(paper="nonexistent_table")
    tables, figs = res / "tables", res / "figures"
    run_aggregate(score_paths, bench, prepared, rank_paths, tables, figs, cfg, papers_dir=PAPERS)
    for name in ("summary.tsv", "top_k.md", "top_k.tex", "stability.tsv", "stability.md", "stats.html",
                 "stats_friedman.tsv", "stats_ranks.tsv", "stats_wilcoxon.tsv", "stats_win_tie_loss.tsv",
                 "runtime.tsv", "datasets.tsv", "paper_comparison.tsv"):
        assert (tables / name).exists(), name
    index = pd.read_csv(figs / "index.tsv", sep="\t")
    assert set(index.stem) == {"curve__d1__accuracy", "curve__d2__accuracy", "stability__base", "runtime",
                               "cd__base__accuracy", "wtl__base__accuracy"}
    assert index.caption.str.len().min() > 20
    stab = pd.read_csv(tables / "stability.tsv", sep="\t")
    assert sorted(stab.n_features.unique()) == [1, 2] and (stab.n_runs == 3).all()
    tk = (tables / "top_k.md").read_text()
    assert "**0.912" in tk  # a is best on accuracy: 0.9 + mean(0.001 i) + 0.01 mean(r) (+ 0.0001 d)
    out = res / "report.html"
    run_report(tables, figs, out, cfg, papers_dir=PAPERS)
    doc = out.read_text()
    imgs = re.findall(r"<img alt='([^']+)' style='width:(\d+)px' src='data:image/svg\+xml;base64,", doc)
    assert len(imgs) == len(index)  # every figure embedded once, as SVG
    # alt text = what the figure shows (its caption's first sentence); shown at >= 1.6 x its natural size
    first = {html.escape(re.split(r"\.\s+(?=[A-Z])", c)[0].rstrip("."), quote=True) for c in index.caption}
    assert {a for a, _ in imgs} == first and any("(eq. 1)" in a for a in first)
    assert min(int(w) for _, w in imgs) >= 500
    assert "<b>0.912" in doc  # best top-K accuracy in bold
    row = re.search(r"<tr><td>d1</td><td>accuracy</td>(.*?)</tr>", doc).group(1)
    assert [c.startswith("<b>") for c in re.findall(r"<td>(.*?)</td>", row)] == [True, False, False]
    for section in ("id='statistics'", "id='stability'", "id='runtime'", "Friedman", "Configuration",
                    "No published table"):
        assert section in doc
    assert "<!--figure:" not in doc
    (res / "figures").mkdir(exist_ok=True)
    seen = check_page(out)  # an HTML5 parser reads it; every anchor, link and image resolves
    assert seen["images"] == len(index) and seen["tables"] >= 5
    assert sorted(p.suffix for p in figs.iterdir()) == [".svg"] * len(index) + [".tsv"]  # each drawn once
    # on demand (the paper_figures rule): the same figures as PDF and PNG, drawn from the tables
    from ssfs.report.build import run_paper_figures

    run_paper_figures(tables, res / "paper_figures", cfg)
    paper = res / "paper_figures"
    assert pd.read_csv(paper / "index.tsv", sep="\t").stem.tolist() == index.stem.tolist()
    for stem in index.stem:
        assert (paper / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-" and (paper / f"{stem}.png").stat().st_size > 1000
    assert not list(paper.glob("*.svg"))


def test_per_size_table_marks_best_and_significantly_worse():
    from ssfs.report.statistics import per_size_table

    rows = []
    for rep in range(6):
        rows += [("d", "base", "A", rep, 5, "auc", 0.9 + 0.01 * rep),
                 ("d", "base", "B", rep, 5, "auc", 0.7 + 0.01 * rep),
                 ("d", "base", "C", rep, 5, "auc", 0.9 + 0.01 * rep - (0.001 if rep % 2 else -0.001))]
    scores = pd.DataFrame(rows, columns=["dataset", "variant", "method", "rep", "n_features", "metric", "value"])
    df, html_ = per_size_table(scores, alpha=0.05)
    r = df.set_index("method")
    assert r.loc["A", "best"] and not r.loc["B", "best"]
    # B loses on all 6 folds: exact two-sided Wilcoxon p = 2 / 2**6 = 0.03125
    assert r.loc["B", "p_value"] == pytest.approx(0.03125) and r.loc["B", "worse"]
    assert not r.loc["C", "worse"]  # alternately above and below A: not significant
    assert r.loc["A", "mean"] == pytest.approx(0.925)
    assert "<td>A</td><td>0.93±0.02+</td>" in html_ or "<td>A</td><td>0.92±0.02+</td>" in html_
    assert "<td>B</td><td>0.72±0.02*</td>" in html_


def test_compare_best_and_upto_specs():
    """best:K = per-rep best over evaluated sizes <= K (min for red); upto:K = the value at the
    largest evaluated size <= K (a subset method's whole subset when it is shorter)."""
    scores = _scores(datasets=("wine",), sizes=(1, 2, 3), methods=("a",))
    # method a, rep r, size i: 0.9 + 0.01 r + 0.001 i; drop size 3 of rep 0 (a subset of 2 features)
    scores = scores[~((scores.rep == 0) & (scores.n_features == 3))]
    red = scores.assign(metric="red")
    both = pd.concat([scores, red])
    row = dict(dataset="wine", method="A", sd="", setting="", ssfs_dataset="", ssfs_method="a", note="", value="1")
    paper = pd.DataFrame([dict(row, metric="accuracy", features="best:3"),
                          dict(row, metric="accuracy", features="upto:3"),
                          dict(row, metric="red", features="best:3"),
                          dict(row, metric="accuracy", features="best:200")])
    out = compare_with_paper(paper, both, {"wine": 13}, _cfg())

    def num(s):
        return [float(x) for x in s.split("±")]

    # best: rep0 0.902, rep1 0.913, rep2 0.923 -> mean 0.9127; upto: the same values here
    assert num(out.iloc[0]["ours"])[0] == pytest.approx((0.902 + 0.913 + 0.923) / 3, abs=6e-4)
    assert num(out.iloc[1]["ours"])[0] == pytest.approx((0.902 + 0.913 + 0.923) / 3, abs=6e-4)
    # red best = min: size 1 of every rep
    assert num(out.iloc[2]["ours"])[0] == pytest.approx((0.901 + 0.911 + 0.921) / 3, abs=6e-4)
    assert out.iloc[3]["ours"] == out.iloc[0]["ours"] and out.iloc[0]["n_runs"] == 3


def test_identical_curves_are_named_and_first_call_signs_read_well():
    from ssfs.report.build import _signed, identical_methods

    d = pd.DataFrame({"method": ["cs1", "cs2", "fisher", "cls"] * 4, "rep": [0] * 8 + [1] * 8,
                      "n_features": ([1] * 4 + [2] * 4) * 2,
                      "value": [.5, .5, .5, .4, .6, .6, .6, .6, .7, .7, .7, .1, .8, .8, .8, .8]})
    assert identical_methods(d) == [["cs1", "cs2", "fisher"]]  # cls differs in one repetition
    assert identical_methods(d[d["method"] != "cs2"].assign(value=lambda t: t["value"] + (t["method"] == "cs1"))) == []
    assert [_signed(v) for v in (0.41, -0.0026, 0.0)] == ["+0.41", "\u22120.0026", "+0"]  # never "+-"


def test_tests_against_the_control_over_repetitions_are_decided_by_the_corrected_test(tmp_path):
    """Within one dataset the repetitions share training samples: the Wilcoxon-Holm p over them can
    fall below alpha where the corrected resampled t-test does not; the corrected test decides."""
    from ssfs.experiment import stats as st
    from ssfs.report.statistics import statistics

    rng = np.random.default_rng(5)
    rows = []
    for rep in range(10):
        base = 0.8 + 0.01 * rng.normal()
        for m, shift in (("ctrl", 0.0), ("other", 0.01 + 0.008 * rng.normal())):
            rows.append(dict(dataset="d", variant="base", method=m, rep=rep, n_features=1, metric="accuracy",
                             value=base + shift))
    scores = pd.DataFrame(rows)
    cfg = _cfg()
    cfg["report"]["control"] = "ctrl"
    tables, _, _ = statistics(scores, cfg, tmp_path, n_samples={"d": 60})
    w = tables["wilcoxon"].iloc[0]
    assert w["p_holm"] < 0.05 and w["decided_by"] == "corrected resampled t-test"  # plain test: "significant"
    a = scores[scores.method == "other"]["value"].to_numpy()
    b = scores[scores.method == "ctrl"]["value"].to_numpy()
    n_train, n_test = 40.0, 20.0  # holdout 2/3 : 1/3 of 60
    assert w["p_corrected"] == pytest.approx(st.corrected_resampled_ttest(a, b, n_train=n_train, n_test=n_test)[1])
    assert w["p_corrected_holm"] > 0.3 and not w["reject"]  # the corrected test: no difference shown
