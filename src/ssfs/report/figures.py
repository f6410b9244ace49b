"""Report figures from the tidy evaluation tables.

Every function takes tidy DataFrames (``dataset, method, rep, n_features, metric,
value`` plus the extra columns it names), writes ``<path>.svg`` (scalable: what the HTML
report embeds and ``snakemake --report`` shows) and returns the
:class:`matplotlib.figure.Figure` so callers and tests can inspect the artists. Inside
``with figure_formats("pdf", "png"):`` it writes those formats instead (``.pdf`` for papers,
``.png`` at dpi 250, at least 900 px wide); each format is drawn only when a consumer asks
for it (the workflow's ``paper_figures`` rule). A ``.png``/``.pdf``/``.svg`` suffix on ``path`` is replaced.
Captions are the caller's job. Figures are built without ``pyplot`` (no global
state, safe in parallel jobs) and rendered by the Agg / PDF backends.

One style for all: :data:`STYLE` (rc parameters), :func:`method_colors` (a
method keeps its colour across figures when the same ``colors`` mapping is
passed), :func:`_grid` (panel layout) and :func:`_save`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..errors import InputError
from ..experiment.stats import nemenyi_groups, per_rep_values
from ..io.atomic import atomic_path

DPI = 250  # one 3.6-inch panel -> 900 px
STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.6,
    "lines.markersize": 4,
    "pdf.fonttype": 42,  # embed TrueType: text stays selectable in the PDF
    "savefig.bbox": "tight",
    "svg.fonttype": "none",  # text stays text in the SVG (small, searchable)
    "svg.hashsalt": "ssfs",  # stable ids: reruns write identical SVG files
}
PANEL = (3.6, 2.7)  # inches per panel
MAX_COLS = 3  # panels per row: a report page stays readable without horizontal scrolling
MARKERS = "osD^vP*Xh<>p"


# ------------------------------------------------------------------ helpers
def method_colors(methods: Sequence[str]) -> dict[str, tuple]:
    """A colour per method (tab10, tab20 beyond 10 methods), in sorted-name order."""
    names = sorted(dict.fromkeys(map(str, methods)))
    cmap = mpl.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {m: cmap(i % cmap.N) for i, m in enumerate(names)}


FORMATS = ("svg", "png", "pdf")
#: the formats :func:`_save` writes (:func:`figure_formats`); SVG alone by default
_FORMATS: ContextVar[tuple[str, ...]] = ContextVar("ssfs_figure_formats", default=("svg",))
#: per format: savefig options (reruns write identical files: no dates)
_SAVE_OPTIONS = {"svg": {"metadata": {"Date": None}}, "png": {"dpi": DPI},
                 "pdf": {"metadata": {"CreationDate": None}}}


@contextmanager
def figure_formats(*formats: str):
    """Within the block, the figure functions write each of ``formats`` (of :data:`FORMATS`)."""
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise InputError(f"figure formats must be some of {', '.join(FORMATS)}; got {', '.join(formats) or 'none'}")
    token = _FORMATS.set(tuple(dict.fromkeys(formats)))
    try:
        yield
    finally:
        _FORMATS.reset(token)


def _paths(path) -> dict[str, Path]:
    p = Path(path)
    if p.suffix.lower() in (".png", ".pdf", ".svg"):
        p = p.with_suffix("")
    return {ext: p.with_name(f"{p.name}.{ext}") for ext in _FORMATS.get()}


def _save(fig: Figure, path) -> Figure:
    with mpl.rc_context(STYLE):
        for ext, p in _paths(path).items():
            with atomic_path(p) as tmp:
                fig.savefig(tmp, format=ext, **_SAVE_OPTIONS[ext])
    return fig


def save_as(fig: Figure, path) -> Figure:
    """Write ``fig`` once, in the format of ``path``'s suffix (.svg, .png or .pdf), without a date
    (reruns write identical files)."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None}, "png": {"Software": None}}.get(fmt)
    if meta is None:
        raise InputError(f"figure {path}: the suffix must be .svg, .png or .pdf")
    with mpl.rc_context(STYLE), atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=DPI, metadata=meta)
    return fig


def _grid(n_panels: int, *, ncols: int = MAX_COLS, panel=PANEL, sharey: bool = False):
    """Figure with ``n_panels`` axes wrapped in at most ``ncols`` columns (unused hidden)."""
    ncols = max(1, min(ncols, n_panels))
    nrows = int(np.ceil(n_panels / ncols))
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(panel[0] * ncols, panel[1] * nrows + 0.5), layout="constrained")
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharey=sharey)).ravel()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, list(axes[:n_panels])


def _legend(fig: Figure, handles, labels, title=None):
    """One shared legend under the panels."""
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 5),
                   frameon=False, title=title)


def _require(df: pd.DataFrame, cols, what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputError(f"{what}: table lacks column(s) {', '.join(missing)}")
    if df.empty:
        raise InputError(f"{what}: nothing to plot (empty table)")


def _metric_rows(df: pd.DataFrame, metric: str, what: str) -> pd.DataFrame:
    _require(df, ("dataset", "method", "metric", "value"), what)
    sub = df[df["metric"] == metric]
    if sub.empty:
        raise InputError(f"{what}: no rows for metric {metric!r} "
                         f"(has: {', '.join(map(str, sorted(df['metric'].unique())))})")
    return sub


def _curves(df: pd.DataFrame, x: str, facet: Sequence[str], path, *, ylabel: str | None, xlabel: str,
            colors=None, band: tuple[str, str] | None = None, ncols: int = MAX_COLS) -> Figure:
    """Shared engine of the curve figures: one panel per value of ``facet``, one line per
    method with the mean over ``rep`` and a band of ±1 sd (or the columns ``band``).
    ``ylabel=None`` with a ``metric`` facet labels each panel's y axis by its metric."""
    keys = [*facet, "method", x]
    if band:
        agg = df.groupby(keys, sort=True).agg(mean=("value", "mean"), lo=(band[0], "mean"),
                                              hi=(band[1], "mean")).reset_index()
    else:
        agg = df.groupby(keys, sort=True)["value"].agg(["mean", "std"]).reset_index()
        agg["lo"] = agg["mean"] - agg["std"]
        agg["hi"] = agg["mean"] + agg["std"]
    colors = colors or method_colors(agg["method"].unique())
    methods = sorted(agg["method"].unique(), key=str)
    panels = list(agg.groupby(list(facet), sort=True))
    numeric_x = pd.api.types.is_numeric_dtype(agg[x])
    cats = None if numeric_x else list(dict.fromkeys(df[x]))
    fig, axes = _grid(len(panels), ncols=ncols)
    with mpl.rc_context(STYLE):
        for ax, (key, g) in zip(axes, panels, strict=True):
            key = key if isinstance(key, tuple) else (key,)
            for i, m in enumerate(methods):
                gm = g[g["method"] == m]
                if gm.empty:
                    continue
                xs = gm[x].to_numpy() if numeric_x else np.array([cats.index(v) for v in gm[x]])
                c = colors.get(str(m), "k")
                ax.plot(xs, gm["mean"], color=c, marker=MARKERS[i % len(MARKERS)], label=str(m),
                        markevery=max(1, len(xs) // 12))
                ok = np.isfinite(gm["lo"].to_numpy()) & np.isfinite(gm["hi"].to_numpy())
                if ok.any():
                    ax.fill_between(xs[ok], gm["lo"].to_numpy()[ok], gm["hi"].to_numpy()[ok],
                                    color=c, alpha=0.15, linewidth=0)
            named = dict(zip(facet, key, strict=True))
            ax.set_ylabel(str(named.pop("metric")) if "metric" in named and ylabel is None else ylabel)
            ax.set_title(" — ".join(map(str, named.values())))
            ax.set_xlabel(xlabel)
            if numeric_x and pd.api.types.is_integer_dtype(agg[x]):
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if cats is not None:
                ax.set_xticks(range(len(cats)), [str(v) for v in cats])
        handles = [Line2D([], [], color=colors.get(str(m), "k"), marker=MARKERS[i % len(MARKERS)])
                   for i, m in enumerate(methods)]
        _legend(fig, handles, [str(m) for m in methods], title="method")
    return _save(fig, path)


# ------------------------------------------------------------------ curves
def curve_vs_features(df: pd.DataFrame, metric: str, path, *, colors=None, ncols: int = MAX_COLS) -> Figure:
    """``metric`` vs the number of selected features: mean over repetitions with a
    ±1 sd band, one line per method, one panel per dataset."""
    sub = _metric_rows(df, metric, "curve_vs_features")
    _require(sub, ("rep", "n_features"), "curve_vs_features")
    return _curves(sub, "n_features", ["dataset"], path, ylabel=metric,
                   xlabel="number of selected features", colors=colors, ncols=ncols)


def curve_vs_parameter(df: pd.DataFrame, param: str, metric: str, path, *, n_features=None,
                       colors=None, ncols: int = MAX_COLS) -> Figure:
    """``metric`` vs a swept parameter (column ``param``, e.g. the number of
    constraints or the noise fraction): per repetition the mean over the numbers of
    features (``n_features``: as :func:`ssfs.experiment.stats.per_rep_values`), then mean ±1 sd
    over repetitions; one panel per dataset."""
    _require(df, (param,), "curve_vs_parameter")
    pr = per_rep_values(df, metric, n_features=n_features, by=[param])
    return _curves(pr, param, ["dataset"], path, ylabel=metric, xlabel=param, colors=colors, ncols=ncols)


def stability_vs_features(df: pd.DataFrame, path, *, metrics: Sequence[str] | None = None,
                          colors=None, ncols: int = MAX_COLS) -> Figure:
    """Stability of the selected subsets vs the number of features: one panel per
    (dataset, stability measure) (``metric`` column: efsis, kuncheva, jaccard,
    nogueira, ...). When the table has ``ci_low``/``ci_high`` columns (Nogueira's
    confidence interval) the band shows them, otherwise ±1 sd over ``rep``."""
    _require(df, ("dataset", "method", "n_features", "metric", "value"), "stability_vs_features")
    sub = df if metrics is None else df[df["metric"].isin(list(metrics))]
    if sub.empty:
        raise InputError(f"stability_vs_features: no rows for metrics {metrics!r}")
    band = None
    if {"ci_low", "ci_high"} <= set(sub.columns) and sub[["ci_low", "ci_high"]].notna().any().any():
        band = ("ci_low", "ci_high")
    return _curves(sub, "n_features", ["dataset", "metric"], path, ylabel=None,
                   xlabel="number of selected features", colors=colors, band=band, ncols=ncols)


# -------------------------------------------------------------- CD diagram
def cd_diagram(avg_ranks: Mapping[str, float] | pd.Series, cd: float, path, *,
               label: str = "CD") -> Figure:
    """Critical-difference diagram (Demšar 2006, Fig. 1a): an axis of average ranks
    with the best (lowest) rank on the right, each method's name joined to its rank,
    the CD interval above the axis and a thick bar under the axis for every maximal
    group of methods not significantly different (:func:`ssfs.experiment.stats.nemenyi_groups`).
    The group bars are ``Line2D`` artists with ``gid = "group:" + "|".join(methods)``
    and x data = (lowest, highest) average rank of the group."""
    r = pd.Series(avg_ranks, dtype=float)
    if r.size < 2:
        raise InputError(f"cd_diagram needs at least 2 methods, got {r.size}")
    r = r.iloc[np.lexsort((np.arange(r.size), r.to_numpy()))]
    k = r.size
    groups = nemenyi_groups(r, cd)
    lo, hi = 1.0, float(max(k, np.ceil(r.max())))
    w = hi - lo
    n_side = int(np.ceil(k / 2))
    y_group0, dy_group = -0.25, 0.18
    y_name0 = y_group0 - dy_group * max(len(groups), 1) - 0.15
    dy_name = 0.32
    height = 1.0 + 0.32 * n_side + 0.18 * len(groups)
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(7.0, height), layout="constrained")
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.set_xlim(hi + 0.55 * w + 0.3, lo - 0.55 * w - 0.3)  # reversed: best on the right
        ax.set_ylim(y_name0 - dy_name * (n_side - 1) - 0.25, 1.0)
        ax.plot([lo, hi], [0, 0], color="k", lw=1.0)
        for t in range(int(lo), int(hi) + 1):
            ax.plot([t, t], [0, 0.08], color="k", lw=1.0)
            ax.text(t, 0.12, str(t), ha="center", va="bottom")
        for h in np.arange(lo + 0.5, hi, 1.0):
            ax.plot([h, h], [0, 0.04], color="k", lw=0.7)
        # CD interval above the axis, starting at rank 1 (Demšar's layout)
        ax.plot([lo, lo + cd], [0.62, 0.62], color="k", lw=1.0, gid="cd")
        for e in (lo, lo + cd):
            ax.plot([e, e], [0.57, 0.67], color="k", lw=1.0)
        ax.text(lo + cd / 2, 0.7, f"{label} = {cd:.3g}", ha="center", va="bottom")
        # method names: best half to the right, the rest to the left
        for i, (m, v) in enumerate(r.items()):
            right = i < n_side
            row = i if right else k - 1 - i
            y = y_name0 - dy_name * row
            xend = lo - 0.1 * w - 0.15 if right else hi + 0.1 * w + 0.15
            ax.plot([v, v, xend], [0, y, y], color="0.35", lw=0.8)
            ax.text(xend + (-0.03 if right else 0.03) * max(w, 1), y, f"{m} ({v:.2f})",
                    ha="left" if right else "right", va="center")
        for j, g in enumerate(groups):
            ys = y_group0 - dy_group * j
            x0, x1 = float(r[list(g)].min()), float(r[list(g)].max())
            ax.plot([x0, x1], [ys, ys], color="k", lw=3.0, solid_capstyle="round",
                    gid="group:" + "|".join(g))
    return _save(fig, path)


# ----------------------------------------------------------- win/tie/loss
def win_tie_loss_heatmap(wtl_df: pd.DataFrame, path) -> Figure:
    """Heat map of :func:`ssfs.experiment.stats.win_tie_loss`: cell (row i, column j) coloured by
    wins - losses of method i against j, annotated ``w/t/l``; bold where the sign
    test says i is significantly better (EnsCLS paper, Table 3)."""
    _require(wtl_df, ("method", "opponent", "wins", "ties", "losses"), "win_tie_loss_heatmap")
    names = sorted(set(wtl_df["method"]) | set(wtl_df["opponent"]), key=str)
    idx = {m: i for i, m in enumerate(names)}
    k = len(names)
    diff = np.full((k, k), np.nan)
    n_max = int((wtl_df["wins"] + wtl_df["ties"] + wtl_df["losses"]).max())
    side = max(3.0, 0.75 * k + 1.5)
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(side + 1.0, side), layout="constrained")
        ax = fig.add_subplot()
        ax.grid(False)
        for row in wtl_df.itertuples(index=False):
            diff[idx[row.method], idx[row.opponent]] = row.wins - row.losses
        lim = max(n_max, 1)
        im = ax.imshow(diff, cmap="RdBu", vmin=-lim, vmax=lim, alpha=0.8)  # softer colours
        for row in wtl_df.itertuples(index=False):
            i, j = idx[row.method], idx[row.opponent]
            strong = abs(diff[i, j]) > 0.75 * max(n_max, 1)
            ax.text(j, i, f"{row.wins}/{row.ties}/{row.losses}", ha="center", va="center",
                    color="white" if strong else "black",
                    fontweight="bold" if bool(getattr(row, "significant", False)) else "normal")
        for i in range(k):
            ax.text(i, i, "–", ha="center", va="center", color="0.4")
        ax.set_xticks(range(k), names, rotation=35, ha="right")
        ax.set_yticks(range(k), names)
        ax.tick_params(length=0)
        ax.set_xlabel("opponent")
        ax.set_ylabel("method")
        for s in ax.spines.values():
            s.set_visible(False)
        fig.colorbar(im, ax=ax, shrink=0.8, label="wins − losses (datasets)")
    return _save(fig, path)


# ---------------------------------------------------------------- runtime
def runtime_bars(df: pd.DataFrame, path, *, time_metric: str = "runtime_s",
                 memory_metric: str = "max_rss_mb", log_time: bool | None = None) -> Figure:
    """Run time and peak memory per method (mean ±1 sd over ``rep``), horizontal bars
    grouped by dataset: two panels. Rows with ``metric == time_metric`` (seconds) and
    ``memory_metric`` (MiB), e.g. Snakemake benchmark columns ``s`` and ``max_rss``.
    ``log_time``: log-scale time axis (default: when times span more than 100x)."""
    _require(df, ("dataset", "method", "metric", "value"), "runtime_bars")
    panels = [(m, lab) for m, lab in ((time_metric, "run time (s)"), (memory_metric, "peak memory (MiB)"))
              if (df["metric"] == m).any()]
    if not panels:
        raise InputError(f"runtime_bars: no rows for metrics {time_metric!r} or {memory_metric!r}")
    methods = sorted(df["method"].unique(), key=str)
    datasets = sorted(df["dataset"].unique(), key=str)
    dcolors = method_colors(datasets)
    nd = len(datasets)
    bar_h = 0.8 / nd
    fig, axes = _grid(len(panels), ncols=2, panel=(4.2, max(2.2, 0.25 * len(methods) * max(nd, 2) ** 0.5 + 1.0)),
                      sharey=True)
    with mpl.rc_context(STYLE):
        for ax, (metric, xlabel) in zip(axes, panels, strict=True):
            agg = (df[df["metric"] == metric].groupby(["method", "dataset"])["value"]
                   .agg(["mean", "std"]).reset_index())
            for j, d in enumerate(datasets):
                g = agg[agg["dataset"] == d].set_index("method").reindex(methods)
                ys = np.arange(len(methods)) - 0.4 + bar_h * (j + 0.5)
                sd = g["std"].fillna(0.0).to_numpy()
                lower = np.minimum(sd, g["mean"].fillna(0.0).to_numpy())  # times and memory are >= 0
                ax.barh(ys, g["mean"], height=bar_h * 0.9, xerr=np.vstack([lower, sd]),
                        color=dcolors[str(d)], label=str(d), error_kw=dict(lw=0.8, capsize=1.5),
                        gid=f"{metric}:{d}")
            vals = agg["mean"].to_numpy()
            vals = vals[np.isfinite(vals) & (vals > 0)]
            use_log = (vals.size > 0 and vals.max() / vals.min() > 100) if log_time is None else log_time
            if metric == time_metric and use_log:
                ax.set_xscale("log")
            ax.set_xlabel(xlabel)
            ax.grid(axis="y", visible=False)
        axes[0].set_yticks(range(len(methods)), [str(m) for m in methods])
        axes[0].invert_yaxis()
        handles = [Patch(color=dcolors[str(d)]) for d in datasets]
        _legend(fig, handles, [str(d) for d in datasets], title="dataset")
    return _save(fig, path)


# ------------------------------------------------------ selection mode: the answer
def _ordered(values) -> list:
    """Distinct values in order of first appearance (categories in their own order)."""
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        present = set(values.dropna())
        return [c for c in values.cat.categories if c in present]
    return list(dict.fromkeys(values))


def _dot_values(stats: pd.DataFrame, feats: list, grps: list, standard_scale: bool):
    """(colour, size, all the same size) matrices, features x groups, of :func:`dotplot`."""
    sub = stats[stats["feature"].isin(feats) & stats["group"].isin(grps)]

    def wide(col):
        return sub.pivot_table(index="feature", columns="group", values=col, aggfunc="first",
                               observed=True).reindex(index=feats, columns=grps).to_numpy(dtype=float)

    colour = wide("mean")
    if standard_scale:
        lo, hi = np.nanmin(colour, axis=1, keepdims=True), np.nanmax(colour, axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            colour = np.where(hi > lo, (colour - lo) / (hi - lo), 0.5)
    if "fraction" not in sub.columns:
        return colour, np.ones_like(colour), True
    size = np.clip(wide("fraction"), 0, 1)
    return colour, size, bool(np.allclose(np.nan_to_num(size, nan=1.0), 1.0))


def dotplot(stats: pd.DataFrame, path=None, *, features: Sequence | None = None, groups: Sequence | None = None,
            standard_scale: bool = True, marks: Mapping | None = None, title: str | None = None,
            max_features: int = 60) -> Figure:
    """Dot plot of features by class (scanpy's ``dotplot`` layout, one row per feature).

    Parameters
    ----------
    stats : pandas.DataFrame
        Long table, one row per (feature, group): columns ``feature``, ``group``, ``mean``
        (the feature's mean in the group) and, optionally, ``fraction`` (share of the group's
        samples with a non-zero value, 0..1). Without ``fraction`` (or when it is 1
        everywhere, as for microarrays) every dot has the same size: a heat map.
    path : str or pathlib.Path, optional
        Also write ``path`` as .svg, .png and .pdf (a suffix is replaced).
    features, groups : sequence, optional
        Rows (top to bottom) and columns (left to right) to draw, in this order; default:
        as they first appear in ``stats`` (a categorical ``group`` keeps its categories' order).
    standard_scale : bool
        Colour = the mean scaled to 0..1 per feature across the groups (scanpy's
        ``standard_scale="var"``: which group a feature is highest in), else the mean itself.
    marks : mapping, optional
        feature -> the group it marks; that dot gets a black ring.
    title : str, optional
        Axes title.
    max_features : int
        At most this many rows (the first ones); the title says how many were left out.

    Returns
    -------
    matplotlib.figure.Figure
        One axes (the dots: a ``PathCollection`` with ``gid="dots"``, offsets (group
        position, feature position)) and a colour bar.
    """
    _require(stats, ("feature", "group", "mean"), "dotplot")
    feats = list(features) if features is not None else _ordered(stats["feature"])
    cut = max(len(feats) - int(max_features), 0)
    feats = feats[: int(max_features)]
    grps = list(groups) if groups is not None else _ordered(stats["group"])
    colour, size, same = _dot_values(stats, feats, grps, standard_scale)
    gx, fy = np.meshgrid(np.arange(len(grps)), np.arange(len(feats)))
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(1.6 + 0.42 * max(len(grps), 2) + 1.2, 0.9 + 0.2 * max(len(feats), 3)),
                     layout="constrained")
        ax = fig.add_subplot()
        ax.grid(False)
        area = 200.0 * (size if not same else np.full_like(size, 0.8))
        dots = ax.scatter(gx.ravel(), fy.ravel(), s=np.nan_to_num(area.ravel()), c=colour.ravel(), cmap="Reds",
                          vmin=0 if standard_scale else None, vmax=1 if standard_scale else None,
                          edgecolors="0.6", linewidths=0.3, marker="o" if not same else "s", gid="dots")
        if marks:
            ring = [(grps.index(marks[f]), i) for i, f in enumerate(feats) if marks.get(f) in grps]
            if ring:
                rx, ry = zip(*ring, strict=True)
                ax.scatter(rx, ry, s=230 if not same else 190, facecolors="none", edgecolors="black",
                           linewidths=1.0, marker="o" if not same else "s", gid="marks")
        ax.set_xticks(range(len(grps)), [str(g) for g in grps], rotation=45, ha="right")
        ax.set_yticks(range(len(feats)), [str(f) for f in feats])
        ax.set_xlim(-0.6, len(grps) - 0.4)
        ax.set_ylim(len(feats) - 0.5, -0.5)
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        fig.colorbar(dots, ax=ax, shrink=min(0.8, 4.0 / max(len(feats), 1) + 0.3), pad=0.02,
                     label="mean, scaled per feature" if standard_scale else "mean")
        if not same:
            handles = [Line2D([], [], ls="", marker="o", markersize=np.sqrt(200.0 * f), color="0.5") for f in
                       (0.25, 0.5, 1.0)]
            ax.legend(handles, ["25 %", "50 %", "100 %"], title="fraction\nexpressing", loc="upper left",
                      bbox_to_anchor=(1.0, -0.02), frameon=False, fontsize=7, title_fontsize=7)
        text = (title or "") + (f" (first {len(feats)}; {cut} more not shown)" if cut else "")
        if text:
            ax.set_title(text.strip())
    return fig if path is None else _save(fig, path)


def stability_path(path_table: pd.DataFrame, path=None, *, threshold: float | None = None, q: int | None = None,
                   selected: Sequence | None = None, title: str | None = None, max_lines: int = 200) -> Figure:
    """The stability path: each feature's selection frequency against q, the number of
    features each resample selects (Meinshausen & Bühlmann 2010, Fig. 1, with q in place of
    the regularisation).

    Parameters
    ----------
    path_table : pandas.DataFrame
        Long table, one row per (feature, q): columns ``feature``, ``q`` (an integer >= 1) and
        ``frequency`` (share of the resamples whose top ``q`` holds the feature, 0..1).
    path : str or pathlib.Path, optional
        Also write ``path`` as .svg, .png and .pdf (a suffix is replaced).
    threshold : float, optional
        The selection threshold: a horizontal line.
    q : int, optional
        The q that was used: a vertical line.
    selected : sequence, optional
        The selected features: drawn in colour (each a ``Line2D`` with ``gid = feature``),
        the others thin and grey (``gid = "other:" + feature``). Default: the features whose
        frequency at ``q`` reaches ``threshold`` (none without both).
    title : str, optional
        Axes title.
    max_lines : int
        Draw at most this many features (those with the highest largest frequency).

    Returns
    -------
    matplotlib.figure.Figure
        One axes; x = q, y = selection frequency.
    """
    _require(path_table, ("feature", "q", "frequency"), "stability_path")
    t = path_table.sort_values(["feature", "q"], kind="stable")
    top = t.groupby("feature", sort=False)["frequency"].max().sort_values(ascending=False, kind="stable")
    keep = list(top.index[: int(max_lines)])
    if selected is None:
        selected = []
        if threshold is not None and q is not None:
            at = t[t["q"] == q]
            selected = list(at.loc[at["frequency"] >= threshold, "feature"])
    chosen = [f for f in dict.fromkeys(selected) if f in set(t["feature"])]
    cmap = mpl.colormaps["tab10" if len(chosen) <= 10 else "tab20"]
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(5.6, 3.2), layout="constrained")
        ax = fig.add_subplot()
        groups = dict(tuple(t.groupby("feature", sort=False)))
        for f in keep:
            if f in chosen:
                continue
            g = groups[f]
            ax.plot(g["q"], g["frequency"], color="0.7", lw=0.6, alpha=0.7, gid=f"other:{f}")
        for i, f in enumerate(chosen):
            g = groups[f]
            ax.plot(g["q"], g["frequency"], color=cmap(i % cmap.N), lw=1.3, gid=str(f),
                    label=str(f) if i < 12 else None)
        if threshold is not None:
            ax.axhline(threshold, color="crimson", ls="--", lw=1, gid="threshold")
        if q is not None:
            ax.axvline(q, color="0.2", ls=":", lw=1, gid="q")
        ax.set_xlabel("q: features each resample selects")
        ax.set_ylabel("selection frequency")
        ax.set_ylim(-0.03, 1.03)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if chosen:
            more = f" (+{len(chosen) - 12})" if len(chosen) > 12 else ""
            ax.legend(loc="lower right", fontsize=6, ncols=2, frameon=False, title=f"selected{more}",
                      title_fontsize=7)
        if title:
            ax.set_title(title)
    return fig if path is None else _save(fig, path)


__all__ = [
    "STYLE",
    "cd_diagram",
    "curve_vs_features",
    "curve_vs_parameter",
    "dotplot",
    "method_colors",
    "runtime_bars",
    "stability_path",
    "stability_vs_features",
    "win_tie_loss_heatmap",
]
