"""Issue 16 item 1, workflow side: the supervision step writes constraints from labels as one
row per labeled sample, and the select step reads them back as lazy label constraints that
no method of the default config turns into pairs; the rankings equal those from the explicit
pairs."""

import tracemalloc

import numpy as np
import pytest

from ssfs._checked import read_checked_tsv
from ssfs.constraints import Constraints, LabelConstraints
from ssfs.experiment.splits import write_split
from ssfs.io.atomic import write_checked_tsv
from ssfs.io.h5ad import Prepared
from ssfs.labels import Labels
from ssfs.runner import MethodConfig
from ssfs.workflow import pipeline

ALL_PAIRS = {"mode": "all_pairs", "closure": False, "noise": 0.0}
DEFAULT_METHODS = ("variance", "laplacian", "fisher", "cs1", "cs2", "cls")


def _planted(n, p, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, p))
    X[:, 0] += 3.0 * y  # feature 0 separates the classes
    return X, y


def _step_files(tmp_path, y, train, labeled):
    """The split and constraints files the supervision step writes for one repetition."""
    split = {"train": [int(i) for i in train], "test": [int(i) for i in np.setdiff1d(np.arange(y.size), train)],
             "labeled": [int(i) for i in labeled]}
    write_split(split, tmp_path / "split.json")
    cons = pipeline.make_constraints(y, split, ALL_PAIRS, seed=0, dataset="d", rep=0)
    write_checked_tsv(cons.tsv_frame(), tmp_path / "cons.tsv")  # as the supervision step writes it
    return tmp_path / "split.json", tmp_path / "cons.tsv", cons


def _select(data, split, cons_path, out, method):
    pipeline.run_select(data, split=split, constraints=cons_path, ranking=out, settings=MethodConfig(method, method),
                        seed=0, dataset="d", rep=0)
    return read_checked_tsv(out)


def test_select_step_never_builds_pairs_and_ranks_as_with_the_pairs(tmp_path, monkeypatch):
    X, y = _planted(150, 8)
    train = np.arange(100)
    labeled = train[:24]  # 8 per class: 84 must-link and 192 cannot-link pairs
    split, cons_path, cons = _step_files(tmp_path, y, train, labeled)
    assert isinstance(cons, LabelConstraints)
    rows = cons_path.read_text().splitlines()[:-1]  # the last line: the end of the table
    assert len(rows) == 1 + labeled.size and set(r.split("\t")[2] for r in rows[1:]) == {"class"}
    pairs = Constraints.pairs_from_labels(np.where(np.isin(np.arange(y.size), labeled), y, -1))
    assert len(pairs) == 24 * 23 // 2
    write_checked_tsv(Constraints(pairs.ml, pairs.cl).tsv_frame(), tmp_path / "pairs.tsv")
    data = Prepared(X, Labels(y, np.array(["a", "b", "c"])), np.array([f"f{j}" for j in range(X.shape[1])]), None)
    # explicit pairs first (reading them is allowed), then the label rows with pair building refused
    explicit = {m: _select(data, split, tmp_path / "pairs.tsv", tmp_path / f"{m}_pairs.tsv", m)
                for m in DEFAULT_METHODS}

    def refuse(*a, **k):
        raise AssertionError("the select step built the pairs of the labeled samples")

    monkeypatch.setattr(Constraints, "pairs_from_labels", classmethod(refuse))
    for m in DEFAULT_METHODS:
        lazy = _select(data, split, cons_path, tmp_path / f"{m}.tsv", m)
        assert lazy["index"].tolist() == explicit[m]["index"].tolist(), m
        np.testing.assert_allclose(lazy["score"], explicit[m]["score"], rtol=1e-9, atol=1e-12, err_msg=m)
        if m not in ("variance", "laplacian"):  # label-free scores need not find the planted feature
            assert lazy["index"].iloc[0] == 0, m


@pytest.mark.parametrize("method", ["fisher", "cs1", "cs2"])
def test_select_step_memory_is_linear_in_the_labeled_samples(tmp_path, method):
    """20,000 labeled samples: 2 x 10^8 pairs (3.2 GB as int64 pairs); the step's constraints file
    has 20,000 rows and the selection stays under 60 MB of traced allocations."""
    X, y = _planted(20_000, 5)
    train = np.arange(y.size)
    split, cons_path, _ = _step_files(tmp_path, y, train, train)
    assert len(cons_path.read_text().splitlines()) == 1 + y.size + 1  # header, one row per sample, end line
    data = Prepared(X, Labels(y, np.array(["a", "b", "c"])), np.array([f"f{j}" for j in range(X.shape[1])]), None)
    tracemalloc.start()
    try:
        table = _select(data, split, cons_path, tmp_path / "r.tsv", method)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert table["index"].iloc[0] == 0
    assert peak < 60e6, f"{method}: {peak / 1e6:.0f} MB traced"


def test_select_step_and_member_chunks_compare_within_the_datasets_batches(tmp_path):
    """A prepared dataset with batches (obs ``ssfs_batch``, from ``batch_key``): the select step
    ranks as ``run_method`` on the training rows centred within their batches (``enscls``, no
    batch parameter, offsets ignored), and its member chunks combine into the same ranking."""
    import anndata as ad

    from ssfs import run_method
    from ssfs.methods._shared.batches import batch_codes, centred_in_batches

    X, y = _planted(150, 8)
    batch = np.repeat(["p1", "p2", "p3"], 50)
    X[batch == "p2"] += 5.0
    train = np.arange(0, 150, 2)
    split, cons_path, _ = _step_files(tmp_path, y, train, train[:24])
    adata = ad.AnnData(X)
    adata.obs["ssfs_batch"] = batch
    data = Prepared(X, Labels(y, np.array(["a", "b", "c"])), np.array([f"f{j}" for j in range(X.shape[1])]), adata)
    settings = MethodConfig("enscls", "enscls", {"n_members": 6})
    whole = _select(data, split, cons_path, tmp_path / "whole.tsv", "enscls")
    expected = run_method("enscls", centred_in_batches(X[train], batch_codes(batch[train], train.size)),
                          Labels(np.where(np.isin(np.arange(150), train[:24]), y, -1)[train], data.classes),
                          rng=pipeline._select_rng(0, "d", MethodConfig("enscls", "enscls"), 0))
    assert whole["index"].tolist() == expected.order.tolist()
    h5 = tmp_path / "prepared.h5ad"
    adata.obs["label"] = np.array(["a", "b", "c"])[y]
    adata.write_h5ad(h5)
    chunks = []
    for c in range(2):
        chunks.append(tmp_path / f"chunk{c}.npz")
        pipeline.run_member_chunk(prepared=h5, split=split, constraints=cons_path, members=chunks[-1],
                                  settings=settings, seed=0, dataset="d", rep=0, chunk=c, n_chunks=2)
    pipeline.run_combine(prepared=h5, split=split, constraints=cons_path, chunks=chunks, ranking=tmp_path / "c.tsv",
                         timing=tmp_path / "t.tsv", settings=settings, seed=0, dataset="d", rep=0)
    single = read_checked_tsv(tmp_path / "c.tsv")
    pipeline.run_select(data, split=split, constraints=cons_path, ranking=tmp_path / "s.tsv", settings=settings,
                        seed=0, dataset="d", rep=0)
    assert single["index"].tolist() == read_checked_tsv(tmp_path / "s.tsv")["index"].tolist()
