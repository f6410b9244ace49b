"""ssfs.report.figures: files are written (.svg by default; asked for, .png at dpi 250 = at least
900 px wide for one panel, and .pdf) and the drawn data are
the numbers of the input tables (inspected on the returned figure's artists)."""

import contextvars

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from PIL import Image

from ssfs.experiment import stats as S
from ssfs.report import figures as F

DATASETS = ["colon", "wine"]
METHODS = ["cls", "cs1", "enscls"]


@pytest.fixture(autouse=True)
def every_format():
    """These tests check all three formats (the default writes the SVG only: tested below)."""
    with F.figure_formats(*F.FORMATS):
        yield


def test_default_writes_svg_only_and_formats_are_checked(tmp_path, tidy):
    contextvars.Context().run(F.curve_vs_features, tidy, "accuracy", tmp_path / "acc")  # outside the fixture
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.svg"]
    with F.figure_formats("pdf"):
        F.curve_vs_features(tidy, "accuracy", tmp_path / "paper.svg")
    assert (tmp_path / "paper.pdf").read_bytes()[:5] == b"%PDF-" and not (tmp_path / "paper.svg").exists()
    for bad in (("eps",), ()):
        with pytest.raises(Exception, match="figure formats must be some of svg, png, pdf"), F.figure_formats(*bad):
            pass


@pytest.fixture
def tidy():
    rows = []
    for di, d in enumerate(DATASETS):
        for mi, m in enumerate(METHODS):
            for rep in range(3):
                for nf in range(1, 6):
                    rows.append(dict(dataset=d, method=m, rep=rep, n_features=nf, metric="accuracy",
                                     value=0.5 + 0.1 * mi + 0.01 * nf + 0.02 * rep + 0.05 * di,
                                     n_constraints=(4, 10, 40)[rep]))
    return pd.DataFrame(rows)


def _check_files(base):
    png, pdf = base.with_name(base.name + ".png"), base.with_name(base.name + ".pdf")
    svg = base.with_name(base.name + ".svg")
    assert png.stat().st_size > 1000 and pdf.stat().st_size > 1000
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert b"<svg" in svg.read_bytes()[:1000] and b"<text" in svg.read_bytes()  # scalable, text kept as text
    with Image.open(png) as im:
        assert im.format == "PNG"
        assert im.info["dpi"] == pytest.approx((250, 250), abs=0.1)
        w, h = im.size
    assert w >= 900  # readable in snakemake --report
    return w, h


def _method_lines(ax):
    return {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}


def test_curve_vs_features(tmp_path, tidy):
    fig = F.curve_vs_features(tidy, "accuracy", tmp_path / "acc")
    w, h = _check_files(tmp_path / "acc")
    assert w / F.DPI <= 11.7  # inches: 3 panels per row at most, fits a report page
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == DATASETS
    lines = _method_lines(axes[1])  # wine
    assert sorted(lines) == METHODS
    x, y = lines["cs1"].get_data()
    assert list(x) == [1, 2, 3, 4, 5]
    # mean over reps 0, 1, 2: 0.5 + 0.1 + 0.01 nf + 0.02 + 0.05
    np.testing.assert_allclose(y, 0.67 + 0.01 * np.arange(1, 6))
    bands = [c for c in axes[1].collections if isinstance(c, PolyCollection)]
    assert len(bands) == 3
    # band of ±1 sd (sd over reps of 0, 0.02, 0.04 = 0.02)
    ys = bands[1].get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(0.68 - 0.02) and ys.max() == pytest.approx(0.72 + 0.02)


def test_curve_vs_parameter(tmp_path, tidy):
    fig = F.curve_vs_parameter(tidy, "n_constraints", "accuracy", tmp_path / "sweep.png")
    _check_files(tmp_path / "sweep")
    ax = fig.axes[0]
    x, y = _method_lines(ax)["enscls"].get_data()
    assert list(x) == [4, 10, 40]
    # colon, enscls, rep r (n_constraints (4, 10, 40)[r]): mean over nf 1..5 of 0.7 + 0.01 nf + 0.02 r
    np.testing.assert_allclose(y, 0.73 + 0.02 * np.arange(3))
    fig3 = F.curve_vs_parameter(tidy, "n_constraints", "accuracy", tmp_path / "sweep3", n_features=3)
    np.testing.assert_allclose(_method_lines(fig3.axes[0])["enscls"].get_data()[1], 0.73 + 0.02 * np.arange(3))


def test_stability_vs_features_with_confidence_band(tmp_path):
    rows = []
    for d in DATASETS:
        for m in METHODS:
            for meas in ("jaccard", "nogueira"):
                for nf in (2, 4, 8):
                    v = 0.1 * nf / 8 + (0.2 if m == "enscls" else 0.0)
                    rows.append(dict(dataset=d, method=m, rep=0, n_features=nf, metric=meas, value=v,
                                     ci_low=v - 0.05, ci_high=v + 0.05))
    df = pd.DataFrame(rows)
    fig = F.stability_vs_features(df, tmp_path / "stab")
    _check_files(tmp_path / "stab")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 4
    assert [(ax.get_title(), ax.get_ylabel()) for ax in axes] == [
        ("colon", "jaccard"), ("colon", "nogueira"), ("wine", "jaccard"), ("wine", "nogueira")]
    band = [c for c in axes[0].collections if isinstance(c, PolyCollection)][2]  # enscls
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(0.2 + 0.025 - 0.05) and ys.max() == pytest.approx(0.3 + 0.05)


DEMSAR_RANKS = {"C4.5": 3.143, "C4.5+m": 2.000, "C4.5+cf": 2.893, "C4.5+m+cf": 1.964}


def _groups(fig):
    return {ln.get_gid(): tuple(ln.get_xdata()) for ln in fig.axes[0].get_lines()
            if (ln.get_gid() or "").startswith("group:")}


def test_cd_diagram_draws_demsar_groups(tmp_path):
    cd = S.nemenyi_cd(4, 14, 0.10)  # 1.12
    fig = F.cd_diagram(DEMSAR_RANKS, cd, tmp_path / "cd")
    _check_files(tmp_path / "cd")
    groups = _groups(fig)
    # Demšar Fig. 1a: {C4.5+m+cf, C4.5+m, C4.5+cf} and {C4.5+cf, C4.5} are joined
    assert groups == {"group:C4.5+m+cf|C4.5+m|C4.5+cf": (1.964, 2.893), "group:C4.5+cf|C4.5": (2.893, 3.143)}
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "C4.5 (3.14)" in texts and "CD = 1.12" in texts
    # best rank on the right: x axis reversed
    lo, hi = fig.axes[0].get_xlim()
    assert lo > hi
    cd_line = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "cd"][0]
    assert np.ptp(cd_line.get_xdata()) == pytest.approx(cd)
    # nothing joined when the CD is tiny; everything joined when it is huge
    assert _groups(F.cd_diagram(DEMSAR_RANKS, 0.01, tmp_path / "cd2")) == {}
    assert list(_groups(F.cd_diagram(DEMSAR_RANKS, 5.0, tmp_path / "cd3"))) == [
        "group:C4.5+m+cf|C4.5+m|C4.5+cf|C4.5"]


def test_win_tie_loss_heatmap(tmp_path, tidy):
    wtl = S.win_tie_loss(tidy, "accuracy")
    fig = F.win_tie_loss_heatmap(wtl, tmp_path / "wtl")
    _check_files(tmp_path / "wtl")
    ax = fig.axes[0]
    img = ax.get_images()[0].get_array()
    # methods ordered cls, cs1, enscls; each beats the ones before it on both datasets
    # (constant differences across reps -> significant)
    expected = np.array([[np.nan, -2, -2], [2, np.nan, -2], [2, 2, np.nan]])
    np.testing.assert_array_equal(np.ma.filled(img.astype(float), np.nan), expected)
    cells = {t.get_text(): t.get_fontweight() for t in ax.texts}
    # 2 wins of 2 datasets is not significant by the sign test (P = 1/4 > 0.1): not bold
    assert not wtl["significant"].any()
    assert cells["2/0/0"] in ("normal", 400)
    # EnsCLS Table 3 cell: EnsCLS vs SSFI 5/4/0 is significant -> bold
    hand = pd.DataFrame([dict(method="EnsCLS", opponent="SSFI", wins=5, ties=4, losses=0,
                              significant=S.sign_test(5, 4, 0, alpha=0.1)),
                         dict(method="SSFI", opponent="EnsCLS", wins=0, ties=4, losses=5,
                              significant=S.sign_test(0, 4, 5, alpha=0.1))])
    fig2 = F.win_tie_loss_heatmap(hand, tmp_path / "wtl2")
    cells2 = {t.get_text(): t.get_fontweight() for t in fig2.axes[0].texts}
    assert cells2["5/4/0"] in ("bold", 700) and cells2["0/4/5"] in ("normal", 400)
    assert fig2.axes[0].get_images()[0].get_array()[0, 1] == 5  # EnsCLS row, SSFI column


def test_runtime_bars(tmp_path):
    rows = []
    for d in DATASETS:
        for mi, m in enumerate(METHODS):
            for rep in range(2):
                rows.append(dict(dataset=d, method=m, rep=rep, n_features=0, metric="runtime_s",
                                 value=100.0 ** mi * (1 + rep)))
                rows.append(dict(dataset=d, method=m, rep=rep, n_features=0, metric="max_rss_mb",
                                 value=100.0 + 10 * mi))
    fig = F.runtime_bars(pd.DataFrame(rows), tmp_path / "rt")
    _check_files(tmp_path / "rt")
    t_ax, m_ax = fig.axes[:2]
    assert t_ax.get_xscale() == "log"  # 1.5 s .. 15000 s spans > 100x -> log
    assert m_ax.get_xscale() == "linear"
    bars = [p for p in t_ax.patches if p.get_gid() == "runtime_s:colon"]
    np.testing.assert_allclose(sorted(b.get_width() for b in bars), [1.5, 150.0, 15000.0])
    assert [t.get_text() for t in t_ax.get_yticklabels()] == METHODS
    with pytest.raises(Exception, match="no rows"):
        F.runtime_bars(pd.DataFrame(rows).assign(metric="x"), tmp_path / "none")


def test_method_colors_consistent():
    a = F.method_colors(["b", "a", "c"])
    b = F.method_colors(["c", "b", "a", "a"])
    assert a == b and len(set(a.values())) == 3


def test_missing_metric_is_a_clear_error(tmp_path, tidy):
    with pytest.raises(Exception, match="no rows for metric 'auc'"):
        F.curve_vs_features(tidy, "auc", tmp_path / "x")


def test_reruns_write_identical_figure_files(tmp_path, tidy):
    for k in range(2):
        F.curve_vs_features(tidy, "accuracy", tmp_path / f"run{k}")
    for ext in (".svg", ".png", ".pdf"):
        assert (tmp_path / f"run0{ext}").read_bytes() == (tmp_path / f"run1{ext}").read_bytes(), ext


# ------------------------------------------------------------- selection mode: dot plot, stability path
def _dot_stats():
    rows = []
    for f, means, fracs in (("CD3E", (0.1, 2.0, 0.4), (0.1, 0.9, 0.3)), ("MS4A1", (3.0, 0.0, 1.0), (1.0, 0.0, 0.5))):
        for g, m, fr in zip(("B", "T", "NK"), means, fracs, strict=True):
            rows.append(dict(feature=f, group=g, mean=m, fraction=fr))
    return pd.DataFrame(rows)


def test_dotplot_draws_scaled_means_and_fractions(tmp_path):
    fig = F.dotplot(_dot_stats(), tmp_path / "dots", marks={"CD3E": "T", "MS4A1": "B"}, title="markers")
    _check_files_small(tmp_path / "dots")
    ax = fig.axes[0]
    dots = next(c for c in ax.collections if c.get_gid() == "dots")
    # rows = features top to bottom, columns = groups: (group position, feature position)
    np.testing.assert_array_equal(dots.get_offsets(), [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]])
    # colour: mean scaled to 0..1 per feature (CD3E: (0.1, 2.0, 0.4) -> (0, 1, 0.3/1.9))
    np.testing.assert_allclose(dots.get_array(), [0, 1, 0.3 / 1.9, 1, 0, 1 / 3])
    np.testing.assert_allclose(dots.get_sizes(), 200 * np.array([0.1, 0.9, 0.3, 1.0, 0.0, 0.5]))
    ring = next(c for c in ax.collections if c.get_gid() == "marks")
    np.testing.assert_array_equal(ring.get_offsets(), [[1, 0], [0, 1]])  # CD3E marks T, MS4A1 marks B
    assert [t.get_text() for t in ax.get_yticklabels()] == ["CD3E", "MS4A1"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["B", "T", "NK"]
    # no fraction column (a microarray): equal squares, a heat map; the order given is kept
    heat = F.dotplot(_dot_stats().drop(columns="fraction"), features=["MS4A1", "CD3E"], groups=["NK", "B"])
    d = next(c for c in heat.axes[0].collections if c.get_gid() == "dots")
    assert len(set(d.get_sizes())) == 1
    np.testing.assert_allclose(d.get_array(), [0, 1, 1, 0])  # scaled over the groups drawn: MS4A1 (1, 3), CD3E (.4, .1)
    with pytest.raises(F.InputError, match="dotplot: table lacks column"):
        F.dotplot(pd.DataFrame({"feature": ["a"], "group": ["b"]}))


def _check_files_small(base):
    for ext in (".png", ".pdf", ".svg"):
        assert base.with_name(base.name + ext).stat().st_size > 1000


def test_stability_path_lines_threshold_and_q(tmp_path):
    qs = np.arange(1, 6)
    t = pd.concat([pd.DataFrame({"feature": f, "q": qs, "frequency": fr}) for f, fr in (
        ("g1", [0.6, 0.9, 1.0, 1.0, 1.0]), ("g2", [0.0, 0.2, 0.5, 0.8, 0.9]), ("g3", [0, 0, 0.1, 0.1, 0.3]))])
    fig = F.stability_path(t, tmp_path / "path", threshold=0.8, q=4)
    _check_files_small(tmp_path / "path")
    lines = {ln.get_gid(): ln for ln in fig.axes[0].get_lines()}
    assert {"g1", "g2", "other:g3", "threshold", "q"} <= set(lines)  # g1, g2 reach 0.8 at q = 4
    np.testing.assert_allclose(lines["g2"].get_ydata(), [0.0, 0.2, 0.5, 0.8, 0.9])
    np.testing.assert_array_equal(lines["g2"].get_xdata(), qs)
    assert lines["q"].get_xdata()[0] == 4 and lines["threshold"].get_ydata()[0] == 0.8
    only = F.stability_path(t, selected=["g3"], max_lines=2)  # g3 kept because it is selected
    assert {ln.get_gid() for ln in only.axes[0].get_lines()} == {"g3", "other:g1", "other:g2"}
