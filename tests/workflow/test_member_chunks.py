"""Ensembles split into member chunks (issues 4 and 7), and EFSIS lists per threshold.

Library: for every splittable method, combining the outputs of any number of member
chunks (including more chunks than members, i.e. empty chunks) gives exactly the
scores and ranking of one ``run_method`` call with the same seed; bad use gives clear
errors. Config: ``execution.member_chunks`` refuses unknown labels and methods that
cannot be split. Per-threshold EFSIS: ``top_percent`` as a list gives each
threshold's own final list (the lists of ``efsis_fold``), stored in the ranking file
and used by the evaluation and the stability tables at their own sizes.
Workflow: the tiny config with its bootstrap ensemble split into 3 jobs per
repetition gives byte-identical rankings and score tables.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from workflow_helpers import (
    REPO,
    SCORE_TARGETS,
    config,
    reference_run,
    snakemake,
    tables,
)

from ssfs._checked import read_checked_tsv
from ssfs.errors import ConfigError, MethodError
from ssfs.experiment.evaluation import evaluate_order
from ssfs.io.atomic import write_checked_tsv
from ssfs.methods import efsis
from ssfs.methods._shared.stability import n_top
from ssfs.ranking import RankingOrders, ranking_table, read_ranking
from ssfs.registry import member_chunks
from ssfs.report.stability import stability_table
from ssfs.runner import combine_member_chunks, run_member_chunk, run_method, splittable
from ssfs.workflow.config import load_schema, validate_config

SCHEMA = load_schema(REPO / "workflow" / "schemas" / "config.schema.yaml")


def _data(n=36, p=40, seed=1):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, p))
    X[:, :4] += y[:, None] * 1.5
    ypart = y.copy()
    ypart[rng.permutation(n)[: n // 3]] = -1  # a third unlabeled
    return X, ypart


CASES = {
    "efsis": {"n_boot": 5, "rankers": ["fisher", "relieff", "infogain"]},
    "bootstrap_rank": {"base": "relieff", "n_boot": 6},
    "enscls": {"n_members": 7},
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("n_chunks", [1, 3, 9])
def test_chunks_combine_to_the_one_call_ranking(name, n_chunks):
    X, y = _data()
    params = CASES[name]
    whole = run_method(name, X, y, rng=7, **params)
    parts = [run_member_chunk(name, X, y, rng=7, chunk=c, n_chunks=n_chunks, **params) for c in range(n_chunks)]
    sizes = [next(iter(q.values())).shape[0] for q in parts]
    total = {"efsis": 5, "bootstrap_rank": 6, "enscls": 7}[name]
    assert sum(sizes) == total and max(sizes) - min(sizes) <= 1  # 9 chunks: some are empty
    got = combine_member_chunks(name, X, y, rng=7, parts=parts, **params)
    np.testing.assert_array_equal(got.scores, whole.scores)
    np.testing.assert_array_equal(got.order, whole.order)
    # the ensemble is random: another seed gives other scores (the test can fail)
    assert not np.array_equal(run_method(name, X, y, rng=8, **params).scores, whole.scores)


def test_member_chunks_are_contiguous_and_cover_all():
    ch = member_chunks(10, 3)
    assert [c.tolist() for c in ch] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    with pytest.raises(MethodError, match=">= 1"):
        member_chunks(10, 0)


def test_bad_chunk_use_is_refused():
    X, y = _data()
    assert splittable("efsis") and splittable("enscls") and not splittable("cls")
    with pytest.raises(MethodError, match="cannot be split"):
        run_member_chunk("cls", X, y, chunk=0, n_chunks=2)
    with pytest.raises(MethodError, match="numbered 0..1"):
        run_member_chunk("enscls", X, y, chunk=2, n_chunks=2, n_members=4)
    part = run_member_chunk("enscls", X, y, rng=3, chunk=0, n_chunks=2, n_members=4)
    with pytest.raises(MethodError, match="hold \\[2\\] members, the plan has 4"):
        combine_member_chunks("enscls", X, y, rng=3, parts=[part], n_members=4)
    other = run_member_chunk("efsis", X, y, rng=3, chunk=1, n_chunks=2, n_boot=4, rankers=["fisher"])
    with pytest.raises(MethodError, match="different arrays"):
        combine_member_chunks("enscls", X, y, rng=3, parts=[part, other], n_members=4)


@pytest.mark.parametrize(
    "execution, message",
    [
        ({"member_chunks": {"nope": 2}}, "'nope' is not one of the configured methods"),
        ({"member_chunks": {"bcs": 2}}, "method 'bcs' cannot be split into member chunks; splittable methods: "
                                        "bootstrap_rank, efsis, enscls"),
        ({"member_chunks": {"boot": 0}}, "member_chunks.boot"),
    ],
)
def test_config_refuses_bad_member_chunks(execution, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        validate_config(config(execution=execution), SCHEMA)


def test_config_accepts_member_chunks():
    cfg = validate_config(config(execution={"member_chunks": {"boot": 3, "bcs": 1}}), SCHEMA)
    assert cfg["execution"]["member_chunks"] == {"boot": 3, "bcs": 1}  # 1 = no split, allowed for any method


# ------------------------------------------------------------------ EFSIS per threshold
def test_efsis_lists_per_threshold_match_efsis_fold():
    X, y = _data(n=45, p=200, seed=4)
    pct = [1, 5, 20]
    params = dict(n_boot=8, rankers=["fisher", "relieff", "infogain"])
    ranked = run_method("efsis", X, y, rng=11, top_percent=pct, **params)
    fold = efsis.efsis_fold(X, y, np.random.default_rng(11), top_percent=pct, **params)
    ts = [n_top(200, q) for q in pct]
    assert sorted(ranked.by_size) == ts == fold.top_k == [2, 10, 40]
    for t, o, agg in zip(fold.top_k, fold.orders, fold.log_scores, strict=True):
        # the same list; exact ties (a feature's aggregate equal to another's to the bit) may be
        # listed in either order: efsis_fold by index, the runner by its documented tie rule
        np.testing.assert_array_equal(agg[ranked.by_size[t]], agg[o])
        assert np.mean(ranked.by_size[t] == o) > 0.9
    np.testing.assert_array_equal(fold.log_scores[0][ranked.order], fold.log_scores[0][fold.orders[0]])  # main: t[0]
    # the weights differ per threshold, and so do the lists
    ex = ranked.result.extra["exponents_by_size"]
    assert len({round(ex["relieff"][t], 12) for t in ts}) > 1
    assert any(not np.array_equal(ranked.by_size[t], ranked.by_size[2]) for t in ts[1:])
    # single threshold: no per-size lists, same as before
    assert run_method("efsis", X, y, rng=11, top_percent=1, **params).by_size == {}


def test_ranking_file_round_trip_with_sizes(tmp_path):
    names = [f"g{i}" for i in range(6)]
    order = np.array([3, 1, 0, 5, 2, 4])
    by2 = np.array([0, 2, 1, 3, 4, 5])
    table = ranking_table(names, np.arange(6.0), order, by_size={2: by2})
    assert list(table.columns) == ["feature", "index", "score", "rank", "ties", "rank_top2"]
    # feature 3 is first in the main order and fourth in the list for t = 2
    assert table["rank_top2"].tolist() == [4, 3, 1, 6, 2, 5]
    path = tmp_path / "r.tsv"
    write_checked_tsv(table, path)  # as the workflow writes it
    got = read_ranking(path, max_rows=2)  # per-size columns: the whole file is read
    np.testing.assert_array_equal(got.order, order)
    np.testing.assert_array_equal(got.at(2), by2)
    np.testing.assert_array_equal(got.at(3), order)
    write_checked_tsv(ranking_table(names, None, order), path)
    assert read_ranking(path, max_rows=2).order.tolist() == [3, 1]


def test_evaluation_and_stability_use_the_list_of_each_size():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    X = rng.normal(size=(40, 6))
    X[:, 0] += 5 * y  # only feature 0 separates the classes
    split = {"train": np.arange(0, 40, 2), "labeled": np.arange(0, 40, 2), "test": np.arange(1, 40, 2)}
    main, for1 = np.array([5, 0, 1, 2, 3, 4]), np.array([0, 5, 1, 2, 3, 4])
    both = evaluate_order(X, y, split, RankingOrders(main, {1: for1}), [1, 2], classifier="knn1")
    only_main = evaluate_order(X, y, split, main, [1, 2], classifier="knn1")
    only_1 = evaluate_order(X, y, split, for1, [1], classifier="knn1")
    acc = dict(zip(both["n_features"], both["value"], strict=True))
    assert acc[1] == only_1["value"].iloc[0] > 0.9 > 0.7 > only_main["value"].iloc[0]
    assert acc[2] == only_main["value"].iloc[1]
    # stability at t = 1: the per-size lists agree (feature 0), the main orders do not
    reps = [RankingOrders(main, {1: for1}), RankingOrders(np.array([4, 0, 1, 2, 3, 5]), {1: for1})]
    st = stability_table({("d", "base", "m"): reps}, {"d": 6}, {"d": [1]})
    assert st["jaccard"].iloc[0] == 1.0
    st_main = stability_table({("d", "base", "m"): [r.order for r in reps]}, {"d": 6}, {"d": [1]})
    assert st_main["jaccard"].iloc[0] == 0.0


# ----------------------------------------------------------------------------- workflow
@pytest.mark.slow
def test_workflow_member_chunks_give_identical_tables(tmp_path, tmp_path_factory):
    ref = tables(reference_run(tmp_path_factory))
    res = snakemake(tmp_path, config(execution={"member_chunks": {"boot": 3}}), *SCORE_TARGETS, cores=2)
    got = tables(tmp_path)
    assert sorted(got) == sorted(ref)
    diff = [k for k in ref if got[k] != ref[k]]
    assert not diff, f"member chunks changed {diff}"
    # anywhere in a line: two jobs share the stream, and one's progress text can precede the other's end line
    done = re.findall(r"ssfs (\w+)[^\n]*?: done in ", res.stderr)
    assert done.count("select_members") == 2 * 3 and done.count("combine_members") == 2  # one line per job
    # the chunk arrays are temporary; the timing sums the chunks
    assert not list((tmp_path / "results" / "wine" / "base" / "members").rglob("*.npz"))
    timing = read_checked_tsv(tmp_path / "results/wine/base/timing/boot/0.tsv")
    assert timing["seconds"].iloc[0] > 0 and timing["peak_mb"].iloc[0] > 0


def test_cli_marks_splittable_methods(capsys):
    from ssfs.cli import main

    assert main(["methods", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows if r["splittable"]] == ["bootstrap_rank", "efsis", "enscls"]
