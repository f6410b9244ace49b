"""Dense tables of normalised single-cell expression with dropouts (``methods/_shared/dropouts.py``, ``propagate``'s
``counts="auto"``): the reading by hand, which tables are read so, and planted full-length single cells published as
log2(TPM + 1) through every door."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from ssfs import run_method
from ssfs.methods._shared import dropouts as R


def _recall(order, markers) -> int:
    return int(np.isin(np.asarray(order)[:markers.size], markers).sum())


def test_the_reading_by_hand():
    """Rows of 10^6 (TPM) as they are and logged in base 2, e and 10: the base whose undone rows sum alike; genes
    dropped after the normalisation: none. The offset is the median expressed gene's mean; the values ln(x + m)."""
    T = np.array([[0.0, 400000.0, 600000.0, 0.0], [500000.0, 0.0, 500000.0, 0.0], [100000.0, 300000.0, 600000.0, 0.0]])
    for base in R.BASES:
        X = T if base == 1.0 else np.log1p(T) / math.log(base)
        assert R.normalised_base(X) == base
        np.testing.assert_allclose(R.undone(X, base), T, rtol=1e-12, atol=1e-6)
    assert R.normalised_base(np.log2(T[:, :2] + 1.0)) is None  # a gene filtered out: the rows no longer sum alike
    mean = T.mean(axis=0)
    offset = float(np.median(mean[mean > 0]))
    assert offset == pytest.approx(700000.0 / 3)
    np.testing.assert_allclose(R.Dropouts(2.0, offset).values(np.log2(T + 1.0)), np.log(T + offset), rtol=1e-12)


def test_a_table_filtered_after_its_normalisation_by_hand():
    """Rows of 10^6 with the fifth gene filtered out: they sum to 0.960-0.982 x 10^6, not alike (2.3 %), so
    :func:`normalised_base` finds none; :func:`filtered_base` takes the largest base whose undone rows' median sum is
    at most 10^6 (a log2 table undone in base e sums to 3 x 10^8): 2, e and 10 for log2, ln and log10 tables. Not
    logged, zeros far below the values (missing values) or sums varying by more than a quarter: none."""
    T = np.array([[0.0, 1e4, 3e5, 6.5e5, 4e4], [2e3, 0.0, 4e5, 5.8e5, 1.8e4],
                  [5e3, 2e4, 0.0, 9.5e5, 2.5e4], [0.5, 5e4, 3.5e5, 5.699995e5, 3e4]])
    np.testing.assert_allclose(T.sum(axis=1), 1e6)
    kept = T[:, :4]
    for base in (2.0, math.e, 10.0):
        X = np.log1p(kept) / math.log(base)
        assert R.normalised_base(X) is None and R.filtered_base(X) == base
    assert np.median(R.undone(np.log2(kept + 1.0), math.e).sum(axis=1)) == pytest.approx(3.26e8, rel=0.01)
    assert R.filtered_base(kept) is None  # not logged: every base's sums exceed 10^6
    missing = np.log2(np.where(kept > 0, kept + 1e3, 0.0) + 1.0)  # smallest non-zero 9.97 of a median 18.2
    assert R.filtered_base(missing) is None
    uneven = np.log2(kept * np.array([[1.0], [0.3], [1.0], [1.0]]) + 1.0)  # one row at 30 %: a CV of 0.36
    assert R.filtered_base(uneven) is None


def test_the_dropout_share_by_hand():
    """The upper half of the expressed genes by mean (genes 2 and 3 of 4; gene 4 never expressed), their shares of
    zeros 1/4 and 0: the median 1/8."""
    X = np.array([[1.0, 5.0, 0.0, 0.0], [1.0, 5.0, 9.0, 0.0], [0.0, 5.0, 9.0, 0.0], [1.0, 5.0, 9.0, 0.0]])
    X[:, 0] *= 0.5  # gene 1 the lowest
    assert R.dropout_share(X) == pytest.approx(0.125)
    assert R.dropout_share(np.zeros((3, 2))) == 0.0


def test_which_tables_are_read_with_dropouts(other_shapes):
    """Full-length single cells as log2(TPM + 1), ln(1 + TPM), TPM and log2(TPM + 1) to two decimals: read so, the
    offset the median gene's TPM (about 19). Counts (log1p-normalised), bulk log2(TPM + 1) without dropouts, arrays,
    min-max-scaled arrays and negative values: not."""
    X, _, _, _ = other_shapes.full_length(0, form="log2_tpm")
    T = 2.0 ** X - 1.0
    for table, base in ((X, 2.0), (np.log1p(T), math.e), (T, 1.0), (np.round(X, 2), 2.0)):
        values, reading = R.read_dropouts(table)
        assert reading is not None and reading.base == base and reading.offset == pytest.approx(19.37, abs=0.01)
        assert values.shape == X.shape and np.isfinite(values).all()
    share = R.dropout_share(X)
    assert share == pytest.approx(0.135, abs=0.001) and share > 0.05
    counted, C, _, _ = other_shapes.full_length(0)
    _, B, _, _ = other_shapes.SHAPES["bulk_counts"](0)
    bulk_tpm = np.log2(B / B.sum(axis=1, keepdims=True) * 1e6 + 1.0) + 0.0
    bulk_tpm[:, 0] += 1e-7  # not a lattice of counts: read as a table
    assert R.normalised_base(bulk_tpm) == 2.0 and R.dropout_share(bulk_tpm) == 0.0
    arrays = [counted, bulk_tpm, other_shapes.SHAPES["heteroscedastic"](0)[0],
              other_shapes.SHAPES["min_max_many_classes"](0)[0], X - 1.0]
    for table in arrays:
        assert R.read_dropouts(table)[1] is None


def test_a_table_whose_genes_were_filtered_is_read_with_dropouts(other_shapes):
    """Full-length single cells as log2(TPM + 1) without the 2 % most expressed genes (seed 0, 5,880 genes, 144 of
    the 150 type genes kept) or as their 2,000 most variable genes: read in base 2 (the offset is the median gene's
    TPM, 18.1), as their ln and log10 in base e and 10; ``propagate`` finds (session 48) 143 of the 144 type genes at
    3 labels per type and 131 without labels, against 23 and 31 on the table as given."""
    X, _, cls, markers = other_shapes.filtered_genes(0)
    assert X.shape == (400, 5880) and markers.size == 144 and R.normalised_base(X) is None
    for table, base in ((X, 2.0), (X * math.log(2.0), math.e), (X * math.log10(2.0), 10.0),
                        (other_shapes.filtered_genes(0, keep="variable")[0], 2.0)):
        assert R.dropout_base(table) == base
    assert R.read_dropouts(X)[1].offset == pytest.approx(18.13, abs=0.01)
    y = other_shapes.per_class_labels(cls, 3, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read = [run_method("propagate", X, labels, rng=0) for labels in (y, np.full_like(y, -1))]
        as_given = [run_method("propagate", X, labels, rng=0, counts="as_is") for labels in (y, np.full_like(y, -1))]
    assert read[0].result.extra["graph"]["dropouts"]
    assert _recall(read[0].order, markers) >= 140 and _recall(read[1].order, markers) >= 125
    assert _recall(as_given[0].order, markers) <= 40 and _recall(as_given[1].order, markers) <= 40


def test_the_labels_own_features_do_not_lead_on_a_table_with_dropouts(other_shapes):
    """A noisy filtered log2(TPM + 1) table (seed 1, 3 labels per type): the labels' own R^2 features predict 4
    held-out labels that the 50 features of the propagated groups (48 type genes) miss, and miss 1 they predict,
    because a discriminant of 2-3 labels per class follows each cell's dropouts (7 and 1 in session 48, while a gene
    constant over the labeled cells could get a rounding's R^2, session 58). Where the labels may lead (the reading
    given ``counts="as_is"``), their R^2 of 15 cells ranks and finds 9 of the 142 type genes; on the table with
    dropouts they do not lead (session 48) and ``propagate`` finds 113."""
    X, _, cls, markers = other_shapes.SHAPES["full_length_log_tpm_noisy_filtered"](1)
    y = other_shapes.budget_labels(cls, "3/class", 1)
    values, _ = R.read_dropouts(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = run_method("propagate", X, y, rng=1)
        led = run_method("propagate", values, y, rng=1, label_free="moran", counts="as_is")
    graph, led_graph = fit.result.extra["graph"], led.result.extra["graph"]
    assert markers.size == 142 and led_graph["labels_lead"] and not graph["labels_lead"]
    assert (graph["labels_alone_beyond"], graph["labels_alone_behind"]) == (4, 1)
    assert _recall(led.order, markers) <= 20 and _recall(fit.order, markers) >= 100


@pytest.fixture
def published(other_shapes):
    """Full-length single cells (seed 0) as the log2(TPM + 1) table such studies publish, 3 labels per type."""
    X, _, cls, markers = other_shapes.full_length(0, form="log2_tpm")
    return X, cls, markers, other_shapes.per_class_labels(cls, 3, 0)


def test_propagate_reads_the_table_with_dropouts(published):
    """``propagate`` ranks on the reading (the same bits as its values given with ``counts="as_is"``, which keeps the
    table as given, where the labels would not lead on those: the test above) and takes Moran's I for its label-free
    scores: 149 of the 150 type genes at 3 labels per type and 140 without labels, against 22 and 32 on the table as
    given; fold changes of the given log2 values, the type genes up in their type; the fit says how it read the
    table."""
    X, cls, markers, y = published
    values, reading = R.read_dropouts(X)
    none = np.full_like(y, -1)
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        fit = run_method("propagate", X, y, rng=0)
    assert any("genes drop out" in str(w.message) and "ln(value + 19.37)" in str(w.message) for w in told)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = run_method("propagate", values, y, rng=0, label_free="moran", counts="as_is")
        free = run_method("propagate", X, none, rng=0)
        as_given = [run_method("propagate", X, labels, rng=0, counts="as_is") for labels in (y, none)]
    graph = fit.result.extra["graph"]
    assert graph["dropouts"] and graph["dropout_offset"] == pytest.approx(reading.offset)
    assert not as_given[0].result.extra["graph"]["dropouts"]
    np.testing.assert_array_equal(fit.order, same.order)
    assert _recall(fit.order, markers) >= 148 and _recall(free.order, markers) >= 130
    assert _recall(as_given[0].order, markers) <= 40 and _recall(as_given[1].order, markers) <= 40
    assert "Moran" in free.result.extra["note"]
    stats = fit.result.extra["class_statistics"]
    for c in range(5):
        row = list(stats.classes).index(str(c))
        assert np.mean(stats.logfoldchanges[row, markers[c * 30:(c + 1) * 30]] > 0) >= 0.9


def test_the_anndata_scikit_learn_and_command_line_doors_read_it_alike(published, tmp_path):
    """The table in an AnnData's ``X`` (``ssfs.tl.rank_features``), ``SemiSupervisedSelector`` and ``ssfs rank`` on
    a CSV of it (blank label cells): the ranking ``run_method`` gives."""
    import anndata as ad
    import pandas as pd

    import ssfs
    from ssfs.cli import main
    from ssfs.selector import SemiSupervisedSelector

    X, cls, markers, y = published
    names = pd.Categorical([f"type{c}" if c >= 0 else np.nan for c in y])
    adata = ad.AnnData(X.copy(), obs=pd.DataFrame({"cell_type": names}, index=[f"c{i}" for i in range(X.shape[0])]))
    table = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    table.insert(0, "cell_type", [f"type{c}" if c >= 0 else "" for c in y])
    table.to_csv(tmp_path / "tpm.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = run_method("propagate", X, y, rng=0).order
        ssfs.tl.rank_features(adata, groupby="cell_type")
        selector = SemiSupervisedSelector(n_features=markers.size).fit(X, y)
        assert main(["rank", str(tmp_path / "tpm.csv"), "--label-column", "cell_type", "--index-column", "none",
                     "--method", "propagate", "--no-progress", "-o", str(tmp_path / "ranked.tsv")]) == 0
    ranked = np.argsort(adata.var["propagate_rank"].to_numpy(), kind="stable")
    np.testing.assert_array_equal(ranked[:markers.size], expected[:markers.size])
    assert set(np.flatnonzero(selector.get_support())) == set(expected[:markers.size])
    listed = pd.read_csv(tmp_path / "ranked.tsv", sep="\t")
    features = listed["feature"] if "feature" in listed else listed.iloc[:, 0]
    assert list(features[:markers.size]) == [f"g{j}" for j in expected[:markers.size]]


def test_selection_mode_takes_propagate_alone_on_a_table_with_dropouts(published, tmp_path, capsys):
    """``methods="auto"``: a table with dropouts of 300 cells or more is single cells, ranked by ``propagate``
    alone (the committee's graph members rank the dropouts: without labels it listed 1 feature and held 92 type
    genes in its first 150, propagate alone 10 and 125, session 47); fewer cells: the committee. ``ssfs select``
    without labels lists type genes only (4 here), 140 of them in its first 150."""
    import pandas as pd

    from ssfs.cli import main
    from ssfs.experiment.stable_selection import methods_for

    X, cls, markers, _ = published
    settings, rule = methods_for("auto", X)
    assert list(settings) == ["propagate"] and rule == "methods auto: propagate on a table with dropouts (single cells)"
    assert list(methods_for("auto", X[:299])[0]) == ["propagate", "laplacian", "fisher", "cls"]
    assert R.dropout_base(X) == 2.0 and R.dropout_base(X - 1.0) is None
    table = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    table.to_csv(tmp_path / "tpm.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["select", str(tmp_path / "tpm.csv"), "--index-column", "none", "--no-progress",
                     "-o", str(tmp_path / "out")]) == 0
    assert "propagate on a table with dropouts" in capsys.readouterr().out
    listed = pd.read_csv(tmp_path / "out" / "consensus.tsv", sep="\t")
    chosen = listed.loc[listed["selected"], "feature"]
    assert chosen.size >= 3 and set(chosen) <= {f"g{j}" for j in markers}
    assert _recall([int(f[1:]) for f in listed["feature"]], markers) >= 130


def test_held_out_labels_of_one_class_do_not_lead(other_shapes):
    """1 % of the cells (4 labels, 2 of one type: every held-out label of that type): the labels' own features
    predicted 2 held-out labels the propagated samples' missed and missed none, a lead that left the R^2 to the 4
    labeled cells (4 of the 150 type genes); held-out labels of one class judge nothing, the propagated samples keep
    their weight and the fit finds 89 (session 47)."""
    from ssfs.methods.propagate import held_out_counts, held_out_judges

    X, _, cls, markers = other_shapes.full_length(3, form="log2_tpm")
    y = other_shapes.budget_labels(cls, "1%", 3)
    assert np.bincount(y[y >= 0], minlength=5).tolist() == [0, 1, 1, 0, 2] and held_out_counts(y).size == 1
    assert not held_out_judges(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = run_method("propagate", X, y, rng=0)
    graph = fit.result.extra["graph"]
    assert not graph["labels_lead"] and (graph["labels_alone_beyond"], graph["labels_alone_behind"]) == (2, 0)
    assert graph["propagated_weight"] > 0.9 and _recall(fit.order, markers) >= 80
