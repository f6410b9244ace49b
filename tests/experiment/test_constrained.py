"""Table 4.3's protocol: constrained clustering scored on held-out samples."""

import numpy as np
import pandas as pd
import pytest

from ssfs.experiment.constrained import compare_constrained
from ssfs.io.atomic import write_checked_tsv


def test_compare_constrained_on_separated_blobs():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 30)
    X = np.array([[0, 0], [8, 0], [0, 8]])[y] + rng.normal(0, 0.5, (90, 2))
    out = compare_constrained(X, y, np.random.default_rng(1), labeled_per_class=3)
    assert len(out) == 6 and set(out.setting) == {"unconstrained", "constrained"}
    assert (out.n_heldout == 81).all() and (out.n_constraints == 36).all()  # 9 labeled: 9 * 8 / 2 pairs
    assert out.rand.to_numpy() == pytest.approx(1.0)  # every algorithm finds well-separated blobs


def test_given_labeled_samples_and_the_workflow_table(tmp_path):
    """The workflow passes each repetition's labeled samples: all their pairs are the constraints,
    every other labeled sample is scored; the table puts ours beside the published value."""
    from ssfs.workflow.training_steps import run_constrained_table

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 4)) + 6.0 * y[:, None]
    y[[5, 25]] = -1  # samples without a class are never scored
    lab = np.array([0, 1, 20, 21, 40, 41])
    t = compare_constrained(X, y, np.random.default_rng(1), labeled=lab, algorithms=("cop_kmeans", "mpc_kmeans"),
                            n_init=1)
    assert (t["n_constraints"] == 15).all() and (t["n_heldout"] == 60 - 6 - 2).all()
    assert (t["rand"] == 1.0).all()  # well separated blobs
    paths = []
    for rep in (0, 1):
        p = tmp_path / f"r{rep}.tsv"
        write_checked_tsv(t.assign(dataset="blobs", variant="base", rep=rep, rand=t["rand"] - 0.1 * rep), p)
        paths.append(str(p))
    pub = tmp_path / "pub.tsv"
    pub.write_text("# test\ndataset\talgorithm\tsetting\tvalue\nblobs\tcop_kmeans\tconstrained\t90.5\n")
    run_constrained_table(tables=paths, out=tmp_path / "t.tsv", markdown=tmp_path / "t.md", paper=[str(pub)])
    res = pd.read_csv(tmp_path / "t.tsv", sep="\t").set_index(["algorithm", "setting"])
    assert res.loc[("cop_kmeans", "constrained"), "mean"] == pytest.approx(95.0)  # (100 + 90) / 2
    assert res.loc[("cop_kmeans", "constrained"), "published"] == 90.5
    assert res.loc[("cop_kmeans", "constrained"), "difference"] == pytest.approx(4.5)
    assert np.isnan(res.loc[("mpc_kmeans", "unconstrained"), "published"])
    assert "| blobs | cop_kmeans | constrained | 95.00 ± 7.07 | 90.50 |" in (tmp_path / "t.md").read_text()


def test_scaled_wckm_penalty_by_hand(monkeypatch):
    """Issue #20: eq. 4.4's weight 1 is negligible on raw data; ``wckm_penalty="scaled"`` is the
    median squared distance to the mean times p^0.1 (wCKM's uniform starting weights, beta = -0.1)."""
    from ssfs.experiment import constrained

    X = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 6.0]])  # mean (2, 2): squared distances 8, 4, 20
    assert constrained.scaled_penalty(X) == pytest.approx(8.0 * 2**0.1)
    seen = []
    real = constrained.wckm
    monkeypatch.setattr(constrained, "wckm", lambda *a, **kw: seen.append(kw["penalty"]) or real(*a, **kw))
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 15)
    Xb = rng.normal(size=(30, 3)) + 5.0 * y[:, None]
    compare_constrained(Xb, y, np.random.default_rng(1), algorithms=("wckm",), n_init=1, wckm_penalty="scaled")
    assert seen == [pytest.approx(constrained.scaled_penalty(Xb))] * 2
    compare_constrained(Xb, y, np.random.default_rng(1), algorithms=("wckm",), n_init=1)
    assert seen[2:] == [1.0, 1.0]
