"""Splits (stratification, k per class, no overlap) and constraints (counts, closure, noise, I/O)."""

import numpy as np
import pytest

from ssfs import Constraints, SupervisionError
from ssfs.errors import InputError
from ssfs.experiment.splits import make_split, partial_labels
from ssfs.seeding import derive_rng

Y = np.repeat([0, 1, 2], [30, 20, 10])


def split(rep=0, **kw):
    return make_split(Y, rep, derive_rng(0, "d", "split", rep), derive_rng(0, "d", "lab", rep), **kw)


def test_holdout_split_is_stratified_disjoint_and_labels_k_per_class():
    s = split(labeled_per_class=3)
    train, test, lab = map(np.asarray, (s["train"], s["test"], s["labeled"]))
    assert np.intersect1d(train, test).size == 0
    assert np.union1d(train, test).size == Y.size
    assert test.size == 20  # 1/3 of 60
    # stratified: each class's share of the test part is within one sample of a third of it
    assert np.all(np.abs(np.bincount(Y[test]) - np.array([30, 20, 10]) / 3) <= 1)
    assert set(lab) <= set(train)
    np.testing.assert_array_equal(np.bincount(Y[lab]), [3, 3, 3])


@pytest.mark.parametrize("counts", [[30, 20, 10], [50, 50], [7, 7, 7, 7, 3], [2, 2, 2], [400, 33, 9, 5, 2], [11, 13]])
def test_stratified_holdout_is_scikit_learns_split(counts):
    """The holdout split is StratifiedShuffleSplit's, index for index (its RandomState draws,
    without importing scikit-learn), for class layouts with ties in the remainders, any label
    order and test sizes that round either way."""
    from sklearn.model_selection import StratifiedShuffleSplit

    from ssfs.experiment.splits import stratified_holdout

    y = np.random.default_rng(len(counts)).permutation(np.repeat(np.arange(len(counts)) * 3 + 1, counts))
    for seed in (0, 1, 12345, 2**31 - 2):
        for test_size in (1 / 3, 0.25, 0.5, 0.1 if len(y) > 60 else 0.4, len(counts)):
            try:
                ref = next(StratifiedShuffleSplit(n_splits=1, test_size=test_size, random_state=seed).split(y, y))
            except ValueError:  # a part too small for every class: refused in one line
                with pytest.raises(SupervisionError, match="each part needs a sample of every class"):
                    stratified_holdout(y, test_size, seed)
                continue
            train, test = stratified_holdout(y, test_size, seed)
            assert np.array_equal(train, ref[0]) and np.array_equal(test, ref[1]), (seed, test_size)
    with pytest.raises(SupervisionError, match="each part needs a sample of every class"):
        stratified_holdout(y, 0.5 / len(y), 0)
    with pytest.raises(SupervisionError, match=r"2 samples of every class; \[99\] have 1"):
        stratified_holdout(np.r_[y, 99], 1 / 3, 0)


def test_partial_labels_marks_unlabeled():
    s = split(labeled_per_class=2)
    yl = partial_labels(Y, s)
    assert yl.size == len(s["train"])
    assert (yl >= 0).sum() == 6
    train = np.asarray(s["train"])
    np.testing.assert_array_equal(yl[yl >= 0], Y[train[yl >= 0]])


def test_splits_reproducible_and_rep_dependent():
    assert split(0) == split(0)
    assert split(0)["test"] != split(1)["test"]


def test_kfold_folds_partition_the_samples():
    tests = [make_split(Y, r, derive_rng(0, "d", "folds"), derive_rng(0, "d", "lab", r), protocol="kfold",
                        n_folds=5)["test"] for r in range(5)]
    allt = np.concatenate(tests)
    assert np.unique(allt).size == Y.size == allt.size


def test_too_many_labeled_per_class_is_refused():
    with pytest.raises(SupervisionError, match="class 2 has .* fewer than labeled_per_class = 9"):
        split(labeled_per_class=9)


def test_one_class_dataset_is_refused():
    with pytest.raises(SupervisionError, match="1 class"):
        make_split(np.zeros(10, int), 0, derive_rng(0), derive_rng(1))


def test_constraints_from_labels_all_pairs():
    y = np.array([0, 0, 1, -1, 1, 2])
    c = Constraints.from_labels(y)
    assert {tuple(p) for p in c.ml} == {(0, 1), (2, 4)}
    assert len(c.cl) == 10 - 2  # C(5,2) pairs of labeled minus the 2 must-links
    assert 3 not in c.samples()


def test_random_constraints_counts_and_validity(rng):
    y = np.repeat([0, 1], 10)
    c = Constraints.sample(y, 5, 7, rng)
    assert c.n_ml == 5 and c.n_cl == 7
    assert all(y[i] == y[j] for i, j in c.ml) and all(y[i] != y[j] for i, j in c.cl)
    with pytest.raises(SupervisionError, match="only give"):
        Constraints.sample(np.array([0, 0, 1, -1]), 2, 1, rng)


def test_transitive_closure():
    c = Constraints(ml=[[0, 1], [1, 2]], cl=[[2, 3]]).transitive_closure()
    assert {tuple(p) for p in c.ml} == {(0, 1), (0, 2), (1, 2)}
    assert {tuple(p) for p in c.cl} == {(0, 3), (1, 3), (2, 3)}


def test_contradictions_are_refused():
    with pytest.raises(SupervisionError, match="both must-link and cannot-link"):
        Constraints(ml=[[0, 1]], cl=[[1, 0]]).validate(5)
    with pytest.raises(SupervisionError, match="contradictory"):
        Constraints(ml=[[0, 1], [1, 2]], cl=[[0, 2]]).transitive_closure()
    with pytest.raises(SupervisionError, match="outside 0..4"):
        Constraints(ml=[[0, 7]], cl=[]).validate(5)


def test_noise_flips_exact_fraction(rng):
    c = Constraints.from_labels(np.repeat([0, 1], 10))
    noisy = c.with_noise(0.2, rng)
    before = {(tuple(p), "ML") for p in c.ml} | {(tuple(p), "CL") for p in c.cl}
    after = {(tuple(p), "ML") for p in noisy.ml} | {(tuple(p), "CL") for p in noisy.cl}
    assert len(noisy) == len(c)
    assert len(before - after) == round(0.2 * len(c))


def test_constraints_from_labels_are_written_as_one_row_per_labeled_sample(tmp_path):
    """All pairs of labeled samples are stored as the labels (kind ``class``), never as the
    n_labeled^2 / 2 pairs, and read back as lazy label constraints with the same pairs."""
    y = np.full(12, -1)
    y[[1, 4, 6, 7, 10]] = [0, 1, 0, 2, 1]
    c = Constraints.from_labels(y)
    c.to_tsv(tmp_path / "c.tsv")
    rows = (tmp_path / "c.tsv").read_text().splitlines()
    assert rows == ["i\tj\tkind", "1\t0\tclass", "4\t1\tclass", "6\t0\tclass", "7\t2\tclass", "10\t1\tclass"]
    back = Constraints.from_tsv(tmp_path / "c.tsv")
    assert back.labels is not None and back.n_ml == 2 and back.n_cl == 8
    np.testing.assert_array_equal(back.ml, c.ml)
    np.testing.assert_array_equal(back.cl, c.cl)
    sub = back.subset(np.array([1, 6, 11]))  # a sample past the last labeled one is unlabeled
    assert sub.labels.tolist() == [0, 0, -1] and sub.n_ml == 1 and sub.n_cl == 0
    (tmp_path / "dup.tsv").write_text("i\tj\tkind\n1\t0\tclass\n1\t1\tclass\n")
    with pytest.raises(InputError, match="distinct samples"):
        Constraints.from_tsv(tmp_path / "dup.tsv")


def test_subset_and_tsv_roundtrip(tmp_path):
    c = Constraints(ml=[[2, 5], [5, 9]], cl=[[2, 9], [0, 5]])
    sub = c.subset(np.array([2, 5, 9]))
    assert {tuple(p) for p in sub.ml} == {(0, 1), (1, 2)} and {tuple(p) for p in sub.cl} == {(0, 2)}
    c.to_tsv(tmp_path / "c.tsv")
    back = Constraints.from_tsv(tmp_path / "c.tsv")
    np.testing.assert_array_equal(back.ml, c.ml)
    np.testing.assert_array_equal(back.cl, c.cl)
    (tmp_path / "bad.tsv").write_text("i\tj\tkind\n0\t1\tXX\n")
    with pytest.raises(InputError, match="ML or CL"):
        Constraints.from_tsv(tmp_path / "bad.tsv")
