"""Selection mode through Snakemake (issue #14): partially labelled planted CSV, selection only;
byte-identical consensus whatever --cores and chunking; benchmark + selection report order."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from html_check import check_page
from workflow_helpers import snakemake

from ssfs.report.selection import datasets_table

M, P = 4, 30


def planted_csv(path, n=60, labeled_per_class=6, seed=0):
    """n samples, P features, markers g0..g3 shifted by class; all but 6 labels per class blank."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], n // 2)
    X = rng.normal(size=(n, P))
    X[:, :M] += 3.0 * (y == "b")[:, None]
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(P)], index=[f"s{i}" for i in range(n)])
    lab = pd.Series("", index=df.index)
    for c in ("a", "b"):
        idx = np.flatnonzero(y == c)[:labeled_per_class or n]
        lab.iloc[idx] = c
    df.insert(0, "label", lab)
    df.index.name = "sample"
    df.to_csv(path)


def sel_config(data, **sel):
    return {"seed": 3, "data_dir": str(data.parent),
            "datasets": {"planted": {"path": data.name, "label_column": "label"}},
            "methods": {"cls": {}, "laplacian": {}},
            "selection": {"resamples": 10, "top": M, "threshold": 0.8, **sel}}


def _outputs(wd):
    d = wd / "results" / "planted" / "selection"
    return {f: (d / f).read_bytes() for f in ("consensus.tsv", "summary.json")}


@pytest.mark.slow
@pytest.mark.parametrize("labeled", [6, None], ids=["partially_labelled", "fully_labelled"])
def test_selection_only_on_planted_csv(tmp_path, labeled):
    data = tmp_path / "planted.csv"
    planted_csv(data, labeled_per_class=labeled)
    wd = tmp_path / "run1"
    snakemake(wd, sel_config(data), cores=2)
    sel = wd / "results" / "planted" / "selection"
    t = pd.read_csv(sel / "consensus.tsv", sep="\t")
    assert list(t.columns[:4]) == ["feature", "selected", "consensus_rank", "frequency"]
    assert t["selected"].tolist() == (t["frequency"] >= 0.8).tolist()  # the stable rows marked
    assert {"rank_cls", "rank_laplacian", "frequency_cls", "frequency_laplacian"} <= set(t.columns)
    assert sorted(t["feature"][:M]) == [f"g{j}" for j in range(M)]
    assert (t["frequency"][:M] >= 0.9).all() and t["frequency"][M:].max() <= 0.3
    s = json.loads((sel / "summary.json").read_text())
    assert sorted(s["features"]) == [f"g{j}" for j in range(M)]
    k = labeled or 30
    assert s["labeled_per_class"] == {"a": k, "b": k} and s["n_unlabeled"] == 60 - 2 * k
    # the bound by hand: q = 4, p = 30, pi = 0.8 -> 16 / (0.6 * 30)
    assert s["error_bound"]["meinshausen_buhlmann"] == pytest.approx(16 / 18)
    # per-class attribution of every feature: the markers are up in class b (labeled samples)
    assert (t["marks"][:M] == "b").all() and (t["direction"][:M] == "up").all()
    assert s["attribution"]["samples"] == "labeled" and s["attribution"]["classes"] == ["a", "b"]
    assert s["verdict"].startswith(f"{M} features selected; ")
    assert not (wd / "results" / "tables").exists()  # selection only: no benchmark ran
    html = (wd / "results" / "report.html").read_text()
    first = re.search(r"<(section|h2)[^>]*>", html)
    assert first.group(0).startswith("<section id='summary'")
    assert "<table id='top-features' class='sortable filterable'>" in html and "g0" in html
    assert html.count("<tr class='stable'>") == M  # the selected rows marked
    seen = check_page(wd / "results" / "report.html")
    assert seen["images"] == 2 and seen["links"] >= 6  # dot plot, stability path; the selection's files
    datasets_row = f"<td>planted</td><td>60</td><td>30</td><td>2</td><td>{60 - 2 * k}</td><td>1</td><td>{k}:{k}</td>"
    assert datasets_row in html
    # same seed, other cores and chunking: byte-identical list
    wd2 = tmp_path / "run2"
    cfg2 = sel_config(data)
    cfg2["execution"] = {"reps_per_job": 3}
    snakemake(wd2, cfg2, cores=1)
    assert _outputs(wd2) == _outputs(wd)
    # the same selection from the command line, no Snakemake: the same bytes
    from ssfs.cli import main

    out = tmp_path / "cli"
    assert main(["select", str(data), "--label-column", "label", "--methods", "cls,laplacian", "--seed", "3",
                 "--resamples", "10", "--top", str(M), "--threshold", "0.8", "--name", "planted",
                 "-o", str(out), "--no-progress"]) == 0
    assert {f: (out / f).read_bytes() for f in ("consensus.tsv", "summary.json")} == _outputs(wd)
    for f in ("stability_path.svg", "dotplot.svg"):
        assert (out / f).read_bytes() == (sel / f).read_bytes()  # the same figures, drawn once each


@pytest.mark.slow
def test_the_list_every_label_gives_shares_the_answers_job(tmp_path):
    """execution.fuse_steps (default): a dataset with selection.labeled_per_class computes the list
    every label gives in its answer's job (one start-up fewer); the other datasets keep their own
    rule; without fusing, each set has its rules as before."""
    data = tmp_path / "planted.csv"
    planted_csv(data, labeled_per_class=None)
    cfg = sel_config(data, labeled_per_class={"planted": 5})
    cfg["datasets"]["other"] = dict(cfg["datasets"]["planted"])
    jobs = {}
    for name, execution in (("fused", {}), ("apart", {"fuse_steps": False})):
        res = snakemake(tmp_path / name, {**cfg, "execution": execution}, "-n", "--quiet", "rules")
        jobs[name] = dict(re.findall(r"^(\w+)\s+(\d+)$", res.stdout, flags=re.M))
    assert jobs["fused"] == {"prepare": "2", "selection_and_all_labels_0": "1", "selection_0": "1", "report": "1",
                             "all": "1", "total": "6"}
    assert jobs["apart"] == {"selection_0": "2", "selection_all_labels_0": "1", "consensus": "2",
                             "consensus_all_labels": "1", "prepare": "2", "report": "1", "all": "1",
                             "total": "10"}


@pytest.mark.slow
def test_the_analysts_case_beside_every_label(tmp_path):
    """selection.labeled_per_class: the answer from 5 labels per class (the others hidden), the
    list every label gives in selection/all_labels/, both in the report with their overlap; the
    fused job (in memory) and the separate rules (chunks) write the same bytes."""
    data = tmp_path / "planted.csv"
    planted_csv(data, labeled_per_class=None)
    runs = {}
    for name, execution, cores in (("fused", {}, 2), ("chunked", {"reps_per_job": 3}, 1)):
        cfg = sel_config(data, labeled_per_class={"planted": 5})
        cfg["execution"] = execution
        snakemake(tmp_path / name, cfg, cores=cores)
        d = tmp_path / name / "results" / "planted" / "selection"
        runs[name] = {f: (d / f).read_bytes() for f in ("consensus.tsv", "summary.json", "all_labels/consensus.tsv",
                                                          "all_labels/summary.json")}
    assert runs["fused"] == runs["chunked"]
    logs = {name: sorted(p.relative_to(tmp_path / name / "results" / "logs" / "selection").as_posix()
                         for p in (tmp_path / name / "results" / "logs" / "selection").rglob("*.log"))
            for name in runs}
    assert logs["fused"] == ["planted/_batch/chunk0.log"]  # one job: the answer and every label's list
    assert "planted/all_labels/_batch/chunk0.log" in logs["chunked"]
    d = tmp_path / "fused" / "results" / "planted" / "selection"
    s, s_all = (json.loads((d / f).read_text()) for f in ("summary.json", "all_labels/summary.json"))
    assert s["labeled_per_class"] == {"a": 5, "b": 5} and s["n_unlabeled"] == 50
    assert s["labels_kept_per_class"] == 5 and s["labels_given"] == 60
    assert s_all["labeled_per_class"] == {"a": 30, "b": 30} and s_all["labels_kept_per_class"] is None
    assert sorted(s["features"]) == sorted(s_all["features"]) == [f"g{j}" for j in range(M)]
    html = __import__("html").unescape((tmp_path / "fused" / "results" / "report.html").read_text())
    assert "The analyst's case: 5 labels per class kept of the 60 the data hold" in html
    assert (f"Beside it, every label (60 labeled samples): {M} features selected, stability "
            in html) and f"Overlap: {M} of this list's {M} features are in that list (Jaccard 1.00)" in html
    assert "<th>all labels</th>" in html
    assert check_page(tmp_path / "fused" / "results" / "report.html")["links"] >= 7  # all_labels/consensus.tsv


def batch_csv(path, n=120, seed=0):
    """n samples in 2 plates crossing 2 classes: markers g0..g3 +1.5 in class b, g10..g19 +3 on
    plate p2 (a batch that would lead every ranking); 6 labels per class, the rest blank."""
    rng = np.random.default_rng(seed)
    y, plate = np.tile(["a", "b"], n // 2), np.repeat(["p1", "p2"], n // 2)
    X = rng.normal(size=(n, P))
    X[:, :M] += 1.5 * (y == "b")[:, None]
    X[:, 10:20] += 3.0 * (plate == "p2")[:, None]
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(P)], index=[f"s{i}" for i in range(n)])
    lab = pd.Series("", index=df.index)
    for c in ("a", "b"):
        lab.iloc[np.flatnonzero(y == c)[::10]] = c
    df.insert(0, "label", lab)
    df.insert(1, "plate", plate)
    df.index.name = "sample"
    df.to_csv(path)


@pytest.mark.slow
def test_a_datasets_batch_key_reaches_the_selection(tmp_path):
    """datasets.<name>.batch_key: the plate column is not a feature and ``propagate`` compares
    samples within plates on every resample: the class markers are selected, not the plate's
    genes (without the key the plate's genes lead: measured g11 first, nothing selected); the
    command line's --batch-key gives the same bytes. Labels split between the halves (3 of the 6 per
    class in each; ``labeled: auto`` rotates them on these 120 samples, as propagate weighs the
    propagated samples 0.5 or more, and lists 3 of the 4 markers, none false)."""
    data = tmp_path / "planted.csv"
    batch_csv(data)
    cfg = sel_config(data, labeled="split")
    cfg["datasets"]["planted"]["batch_key"] = "plate"
    cfg["methods"] = {"propagate": {}}
    snakemake(tmp_path / "run", cfg, cores=2)
    s = json.loads((tmp_path / "run" / "results" / "planted" / "selection" / "summary.json").read_text())
    assert sorted(s["features"]) == [f"g{j}" for j in range(M)]
    assert s["batches"] == {"n": 2, "methods": ["propagate"]}
    assert "propagate compared the samples within their 2 batches." in s["verdict"]
    assert datasets_table(tmp_path / "run" / "results", ["planted"])["n_batches"].tolist() == [2]  # the report's
    from ssfs.cli import main

    out = tmp_path / "cli"
    assert main(["select", str(data), "--label-column", "label", "--batch-key", "plate", "--methods", "propagate",
                 "--seed", "3", "--resamples", "10", "--top", str(M), "--threshold", "0.8", "--name", "planted",
                 "--labeled", "split", "-o", str(out), "--no-progress"]) == 0
    assert {f: (out / f).read_bytes() for f in ("consensus.tsv", "summary.json")} == _outputs(tmp_path / "run")


def test_the_committee_compares_within_batches(tmp_path, capsys):
    """``ssfs select`` with the committee (propagate, laplacian, fisher, cls; ``methods: auto``'s on
    fully labeled data): with --batch-key the 4 class markers are the list; without it the plate's
    genes (laplacian, label-free, finds the plate first)."""
    from ssfs.cli import main

    data = tmp_path / "planted.csv"
    batch_csv(data)
    lists = {}
    for name, extra in (("within", ["--batch-key", "plate"]), ("blind", [])):
        table = data
        if not extra:
            table = tmp_path / "blind.csv"
            pd.read_csv(data, index_col=0).drop(columns="plate").to_csv(table)
        assert main(["select", str(table), "--label-column", "label", *extra, "--seed", "3", "--name", "planted",
                     "--methods", "propagate,laplacian,fisher,cls", "-o", str(tmp_path / name), "--no-progress"]) == 0
        capsys.readouterr()
        s = json.loads((tmp_path / name / "summary.json").read_text())
        lists[name] = (sorted(s["features"]), s.get("batches"))
    assert lists["within"] == ([f"g{j}" for j in range(M)], {"n": 2, "methods": ["propagate", "laplacian", "fisher",
                                                                                     "cls"]})
    assert lists["blind"][1] is None and set(lists["blind"][0]) <= {f"g{j}" for j in range(10, 20)}


def hidden_type_csv(path, n=300, seed=0):
    """3 types of 100 samples, markers g0..g3 (a), g4..g7 (b), g8..g11 (c) +3 sd; 10 labels of a
    and of b, none of c (a type nobody labeled)."""
    rng = np.random.default_rng(seed)
    t = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, P))
    for k in range(3):
        X[t == k, 4 * k:4 * k + 4] += 3.0
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(P)], index=[f"s{i}" for i in range(n)])
    lab = pd.Series("", index=df.index)
    lab.iloc[:10], lab.iloc[n // 3:n // 3 + 10] = "a", "b"
    df.insert(0, "label", lab)
    df.index.name = "sample"
    df.to_csv(path)


@pytest.mark.slow
def test_a_type_nobody_labeled_is_a_group_of_the_attribution(tmp_path):
    """``propagate`` gathers the unlabeled type's samples into "unlabeled 1"; the attribution
    credits that type's markers to it (they were credited to a labeled class, "a" or "b", with a
    small fold change) and lists its mean and fraction, through the workflow (the group names
    travel between jobs with the memberships), the command line (same bytes) and ``ssfs.tl``."""
    data = tmp_path / "hidden.csv"
    hidden_type_csv(data)
    cfg = sel_config(data, top=12)
    cfg["methods"] = {"propagate": {}}
    snakemake(tmp_path / "run", cfg, cores=2)
    d = tmp_path / "run" / "results" / "planted" / "selection"
    t = pd.read_csv(d / "consensus.tsv", sep="\t").set_index("feature")
    expected = {f"g{j}": "abc"[j // 4].replace("c", "unlabeled 1") for j in range(12)}
    assert t.loc[list(expected), "marks"].to_dict() == expected
    assert (t.loc[list(expected), "direction"] == "up").all()
    assert (t.loc[["g8", "g9", "g10", "g11"], "mean_unlabeled 1"] > 2.0).all()
    s = json.loads((d / "summary.json").read_text())
    assert s["attribution"]["classes"] == ["a", "b", "unlabeled 1"] and s["attribution"]["samples"] == "propagated"
    html = " ".join((tmp_path / "run" / "results" / "report.html").read_text().split())
    assert "with 1 group the labels did not reach (unlabeled 1: samples like none of the labeled classes" in html
    from ssfs.cli import main

    out = tmp_path / "cli"
    assert main(["select", str(data), "--label-column", "label", "--methods", "propagate", "--seed", "3",
                 "--resamples", "10", "--top", "12", "--threshold", "0.8", "--name", "planted", "-o", str(out),
                 "--no-progress"]) == 0
    assert {f: (out / f).read_bytes() for f in ("consensus.tsv", "summary.json")} == _outputs(tmp_path / "run")
    import anndata as ad

    import ssfs

    df = pd.read_csv(data, index_col=0)
    adata = ad.AnnData(df.drop(columns="label").to_numpy(), obs=pd.DataFrame({"label": df["label"].replace("", None)},
                                                                             index=df.index))
    adata.var_names = df.columns[1:]
    ssfs.tl.select_stable(adata, groupby="label", methods=["propagate"], random_state=3, resamples=10, top=12)
    assert adata.var.loc[list(expected), "ssfs_selection_marks"].to_dict() == expected
    assert list(adata.uns["ssfs_selection"]["class_means"].columns) == ["a", "b", "unlabeled 1"]


def counts_csv(path, n=300, seed=0):
    """n cells x P genes of Poisson counts (mostly zeros: count-like), markers g0..g3 at 8 times
    the others' mean in type b; 6 labels per type, the rest blank."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], n // 2)
    rate = np.full((n, P), 0.3)
    rate[:, :M] *= np.where(y == "b", 8.0, 1.0)[:, None]
    df = pd.DataFrame(rng.poisson(rate), columns=[f"g{j}" for j in range(P)], index=[f"c{i}" for i in range(n)])
    lab = pd.Series("", index=df.index)
    for c in ("a", "b"):
        lab.iloc[np.flatnonzero(y == c)[:6]] = c
    df.insert(0, "label", lab)
    df.index.name = "cell"
    df.to_csv(path)


@pytest.mark.slow
def test_selection_methods_auto_follow_each_dataset(tmp_path):
    """``selection.methods: auto`` (the default config's): the committee on the dense table of 40
    samples (fewer than 50), ``propagate`` alone on the counts (the others not run there), each
    summary saying which; the counts' list is ssfs select's with its defaults, byte for byte."""
    from ssfs.cli import main

    planted_csv(tmp_path / "planted.csv", n=40, labeled_per_class=None)
    counts_csv(tmp_path / "counts.csv")
    cfg = sel_config(tmp_path / "planted.csv", methods="auto")
    cfg["datasets"]["counts"] = {"path": "counts.csv", "label_column": "label"}
    cfg["methods"] = {"propagate": {}, "laplacian": {}, "fisher": {}, "cls": {}, "variance": {}}
    wd = tmp_path / "run"
    snakemake(wd, cfg, cores=2)
    s = {ds: json.loads((wd / "results" / ds / "selection" / "summary.json").read_text())
         for ds in ("planted", "counts")}
    assert s["planted"]["methods"] == ["propagate", "laplacian", "fisher", "cls"]
    assert s["planted"]["methods_rule"] == ("methods auto: propagate, laplacian, fisher, cls on dense data of fewer "
                                            "than 50 samples")
    assert s["counts"]["methods"] == ["propagate"] and s["counts"]["left_out"] == {}
    assert s["counts"]["methods_rule"] == "methods auto: propagate on count-like data (single cells)"
    assert sorted(s["counts"]["features"]) == [f"g{j}" for j in range(M)]
    out = tmp_path / "cli"
    assert main(["select", str(tmp_path / "counts.csv"), "--label-column", "label", "--seed", "3", "--resamples", "10",
                 "--top", str(M), "--threshold", "0.8", "--name", "counts", "-o", str(out), "--no-progress"]) == 0
    runs = wd / "results" / "counts" / "selection"
    assert (out / "summary.json").read_bytes() == (runs / "summary.json").read_bytes()
    assert (out / "consensus.tsv").read_bytes() == (runs / "consensus.tsv").read_bytes()


def _propagate_through_workflow_and_cli(tmp_path, capsys, name: str, X, y, reps_per_job: int,
                                        params: dict | None = None) -> dict:
    """``X`` (dense) with labels ``y`` (-1 blank) as ``name``.csv, selected by ``propagate`` (with
    ``params``) through the workflow in chunks of ``reps_per_job`` resamples (10 in all) and by
    ``ssfs select`` with the same settings: the two give the same bytes; returns the workflow's summary."""
    from ssfs.cli import main

    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])], index=[f"s{i}" for i in range(X.shape[0])])
    df.insert(0, "label", np.where(y >= 0, np.char.add("c", y.astype(str)), ""))
    df.index.name = "sample"
    df.to_csv(tmp_path / f"{name}.csv")
    cfg = sel_config(tmp_path / f"{name}.csv", top=40)
    cfg["datasets"] = {name: {"path": f"{name}.csv", "label_column": "label"}}
    cfg["methods"] = {"propagate": dict(params or {})}
    cfg["execution"] = {"reps_per_job": reps_per_job}
    snakemake(tmp_path / "run", cfg, cores=2)
    runs = tmp_path / "run" / "results" / name / "selection"
    out = tmp_path / "cli"
    assert main(["select", str(tmp_path / f"{name}.csv"), "--label-column", "label", "--methods", "propagate",
                 "--seed", "3", "--resamples", "10", "--top", "40", "--threshold", "0.8", "--name", name,
                 *[a for k, v in (params or {}).items() for a in ("--param", f"propagate.{k}={v}")],
                 "-o", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    for f in ("summary.json", "consensus.tsv"):
        assert (out / f).read_bytes() == (runs / f).read_bytes(), f
    return json.loads((runs / "summary.json").read_text())


@pytest.mark.slow
def test_resamples_ranked_without_labels_select_nothing_through_the_workflow(tmp_path, capsys):
    """An array with gene modules, 100 samples, 3 labels per class, graphs on standardised genes (the
    fit before session 29's ``gene_scale="auto"``, whose graph in the genes' units carries these classes):
    ``propagate`` ranks the halves without their labels, so they select nothing (no list). The flags travel
    per resample through the chunk files (``reps_per_job: 3``: 4 chunks) and the command line gives the
    same bytes."""
    from ssfs.simulate import get_scenario

    sc = get_scenario("microarray")
    sim = sc.generator(rng=0, **{**sc.knobs_for(0, False), "n_samples": 100})
    s = _propagate_through_workflow_and_cli(tmp_path, capsys, "modules", sim.X, sc.labels(sim, "3/class", 0), 3,
                                            {"gene_scale": "standardized", "sample_scale": "as_is"})
    assert s["resamples_without_labels"] >= 8 and s["n_selected"] == 0, s["verdict"]


@pytest.mark.slow
def test_labeled_auto_decides_on_the_data_through_the_workflow(tmp_path, capsys):
    """Splatter-like counts, 200 cells, 3 labels per type: ``labeled: auto`` needs the weight
    ``propagate`` gives the propagated cells on all samples (below 0.5: the labels are rotated). Each of
    the 2 chunks (``reps_per_job: 5``) decides it from the seed, the rank files carry the decision to
    the consensus, and ``ssfs select`` gives the same bytes."""
    from ssfs.simulate import get_scenario

    sc = get_scenario("splatter")
    sim = sc.generator(rng=1, **{**sc.knobs_for(1, False), "n_cells": 200})
    s = _propagate_through_workflow_and_cli(tmp_path, capsys, "cells", sim.X.toarray().astype(int),
                                            sc.labels(sim, "3/class", 1), 5)
    assert s["labeled_resampling"] == "rotated" and 0 <= s["labeled_weight"] < 0.5, s["verdict"]
    assert "left out in turn" in s["verdict"]
    assert s["graph_free"] and "Pearson residual variance, which needs no graph" in s["verdict"]  # via the rank files


@pytest.mark.slow
def test_an_unrecorded_batch_is_removed_in_every_chunk(tmp_path, capsys, other_shapes):
    """``bench_other_shapes.py``'s hidden_batch draw (half the samples shifted by N(0, 1) per gene, not recorded), 3
    labels per class: every job's full-data fit removes the batch's component the held-out labels reject, and its
    resamples are ranked without it (``reps_per_job: 3``: 4 chunks); ``ssfs select`` gives the same bytes, and the
    list is the 40 markers."""
    X, _, cls, markers = other_shapes.SHAPES["hidden_batch"](0)
    y = other_shapes.budget_labels(cls, "3/class", 0)
    s = _propagate_through_workflow_and_cli(tmp_path, capsys, "batch", X, y, 3)
    assert s["fit"]["propagate"]["unwanted_components"] == 1 and s["fit"]["propagate"]["unwanted_inherited"]
    assert "every resample was ranked without it too" in s["verdict"]
    listed = pd.read_csv(tmp_path / "run" / "results" / "batch" / "selection" / "consensus.tsv", sep="\t")
    listed = listed.loc[listed["selected"], "feature"].str[1:].astype(int)
    assert listed.size == 40 and np.isin(listed, markers).all(), s["verdict"]


@pytest.mark.slow
def test_the_kept_sample_scale_reaches_every_chunk(tmp_path, capsys, other_shapes):
    """``bench_other_shapes.py``'s outlying_samples draw (noisy arrays), 3 labels per class: every job's fit on all
    samples keeps the graph on samples scaled alike and its resamples build theirs on that scale alone
    (``reps_per_job: 3``: 4 chunks, each job deciding alike); ``ssfs select`` gives the same bytes: 39 of the 40
    markers listed, nothing else."""
    X, _, cls, markers = other_shapes.SHAPES["outlying_samples"](0)
    s = _propagate_through_workflow_and_cli(tmp_path, capsys, "noisy", X, other_shapes.budget_labels(cls, "3/class", 0),
                                            3)
    assert s["fit"]["propagate"]["sample_scale_inherited"] and s["fit"]["propagate"]["sample_scale"] == "equal"
    listed = pd.read_csv(tmp_path / "run" / "results" / "noisy" / "selection" / "consensus.tsv", sep="\t")
    listed = listed.loc[listed["selected"], "feature"].str[1:].astype(int)
    assert listed.size == 39 and np.isin(listed, markers).all(), s["verdict"]
