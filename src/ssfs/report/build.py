"""Aggregation of the tidy score tables and the self-contained HTML report.

Tables (``results/tables``): ``summary`` (mean ± sd per dataset x variant x method x
number of features x metric), ``top_k`` (the papers' "averaged over the top K
features": per repetition the mean over the evaluated sizes, then mean ± sd over
repetitions), ``stability`` (:mod:`ssfs.report.stability`), ``stats_*``
(:mod:`ssfs.report.statistics`), ``runtime`` (seconds and peak memory of every
selection run), ``datasets`` and ``paper_comparison`` (:mod:`ssfs.report.papers`).
summary, top_k and stability are also written as .md and .tex.

Figures (``results/figures``, .svg, listed with their captions in ``figures/index.tsv``;
the same as .pdf and .png from the tables by :func:`run_paper_figures`, on demand): metric vs
number of features per dataset x metric
(``curve__*``), metric vs swept value (``sweep__*``), stability vs number of
features (``stability__*``), CD diagrams and win/tie/loss heat maps (``cd__*``,
``wtl__*``), run-time / memory bars (``runtime``).

The report (:func:`run_report`) is one HTML page with every figure embedded as a
data URI; the tables' "best" cell is bold (lowest for ``red`` and rank sums).
"""

from __future__ import annotations

import csv
import datetime as _dt
import html
import importlib.metadata
import io
import os
import platform
import re
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from .._checked import check_manifest, checked_body, incomplete, read_checked_tsv
from ..errors import IncompleteResultError, InputError
from ..experiment.grid import metric_higher_is_better, n_features_grid
from ..experiment.variants import variants
from ..io.atomic import atomic_write_text, write_manifest, write_tsv
from ..io.h5ad import dataset_summary
from ..registry import get_method
from .captions import caption
from .papers import OUT_COLUMNS, available_papers, compare_with_paper, load_paper
from .render import NBSP, PM, figure_html, html_table, render_page, to_latex, to_markdown
from .selection import summary_section
from .stability import read_orders, stability_at_one_size, stability_long, stability_table
from .statistics import best_methods, statistics

KEYS = ["dataset", "variant", "method"]
STAT_TABLES = ("best", "per_dataset", "per_size", "friedman", "ranks", "wilcoxon", "win_tie_loss")
SECTIONS = ("curves", "sweeps", "stability", "statistics", "runtime")


# ------------------------------------------------------------------------ tables
def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    g = scores.groupby(KEYS + ["metric", "n_features"], sort=True)["value"]
    out = g.agg(mean="mean", sd="std", n="count").reset_index()
    out["sd"] = out["sd"].fillna(0.0)
    return out


def top_k(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean over the evaluated numbers of features per repetition, then mean ± sd over repetitions."""
    per_rep = scores.groupby(KEYS + ["metric", "rep"], sort=True)["value"].mean().reset_index()
    out = per_rep.groupby(KEYS + ["metric"], sort=True)["value"].agg(mean="mean", sd="std", n="count").reset_index()
    out["sd"] = out["sd"].fillna(0.0)
    k = scores.groupby(KEYS + ["metric"], sort=True)["n_features"].max().reset_index(name="max_features")
    return out.merge(k, on=KEYS + ["metric"])


def read_timings(paths) -> pd.DataFrame:
    """In-process seconds and peak memory (MiB) of every selection run, from the timing files
    (``{dataset}/{variant}/timing/{method}/{rep}.tsv``), each carrying its own ``dataset``,
    ``variant`` and ``method`` columns; ``first_call``: the run was the first selection of its
    process (files without the column: the first repetition of each dataset, variant and
    method); ``fit``: the run's graph diagnostics as JSON ('' when it has none or the file predates
    them). Files of an older ssfs without the key columns are refused with their path."""
    # one table parsed at once (pandas costs 3 ms a file: 180 files took 0.3 s)
    by_header: dict[str, list[str]] = {}
    for p in paths:
        rows = list(csv.reader(io.StringIO(checked_body(p).decode()), delimiter="\t"))
        missing = [k for k in KEYS if not rows or k not in rows[0]]
        if missing:
            raise InputError(f"timing file {p} lacks column(s) {', '.join(missing)} (written by an older ssfs): "
                             "delete the results' timing folders and rerun")
        by_header.setdefault("\t".join(rows[0]), []).extend("\t".join(r) for r in rows[1:])
    cols = KEYS + ["rep", "seconds", "peak_mb", "first_call", "fit"]
    if not by_header:
        return pd.DataFrame(columns=cols)
    out = pd.concat([pd.read_csv(io.StringIO("\n".join([h, *body])), sep="\t", dtype={k: str for k in KEYS})
                     for h, body in by_header.items()], ignore_index=True)
    first = out["rep"] == out.groupby(KEYS)["rep"].transform("min")
    out["first_call"] = out["first_call"].fillna(first) if "first_call" in out else first
    out["first_call"] = out["first_call"].astype(bool)
    out["fit"] = out["fit"].fillna("").astype(str) if "fit" in out else ""
    return out[cols]


def warm_runs(rt: pd.DataFrame) -> pd.DataFrame:
    """The runs of each dataset x method that were not the first selection of their process
    (all of its runs when every one was)."""
    first = rt["first_call"].astype(bool)
    has_warm = (~first).groupby([rt["dataset"], rt["method"]]).transform("any")
    return rt[~first | ~has_warm]


def runtime_summary(rt: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x method: ``median_s`` = median seconds of the selection runs that were
    not the first of their process (``n_warm`` of them; when there are none, e.g. one
    repetition per job, the median of all runs, ``warm`` False), ``first_call_s`` =
    median of the first calls, ``first_call_extra_s`` = their excess over ``median_s``
    (imports, JIT, BLAS start-up), ``peak_mb`` = largest peak memory of the warm runs
    (of all runs when none is warm)."""
    rows = []
    for (ds, m), g in rt.groupby(["dataset", "method"], sort=True):
        first = g["first_call"].astype(bool) if "first_call" in g else pd.Series(False, index=g.index)
        warm = g[~first]
        base = warm if len(warm) else g
        med = float(base["seconds"].median())
        fc = float(g.loc[first, "seconds"].median()) if first.any() else float("nan")
        rows.append(dict(dataset=ds, method=m, median_s=med, n_runs=len(g), n_warm=len(warm), warm=bool(len(warm)),
                         first_call_s=fc, first_call_extra_s=fc - med if len(warm) else float("nan"),
                         peak_mb=float(base["peak_mb"].max())))
    return pd.DataFrame(rows, columns=["dataset", "method", "median_s", "n_runs", "n_warm", "warm", "first_call_s",
                                       "first_call_extra_s", "peak_mb"])


def mean_sd_table(df: pd.DataFrame, index, columns="method", digits=3, best="auto") -> pd.DataFrame:
    """Wide table of "mean ± sd" strings; the best cell of each row is marked with **.

    ``best``: ``"max"``, ``"min"`` or ``"auto"`` (by the row's ``metric``: lowest for
    ``red`` and rank sums, highest otherwise)."""
    index = index if isinstance(index, list) else [index]
    rows = []
    for key, sub in df.groupby(index, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(index, key, strict=True))
        direction = best
        if best == "auto":
            direction = "max" if metric_higher_is_better(row.get("metric", "")) else "min"
        finite = sub["mean"].dropna()
        top = (finite.max() if direction == "max" else finite.min()) if len(finite) else np.nan
        for _, r in sub.iterrows():
            cell = f"{r['mean']:.{digits}f}{PM}{r['sd']:.{digits}f}"
            row[r[columns]] = f"**{cell}**" if np.isclose(r["mean"], top) else cell
        rows.append(row)
    return pd.DataFrame(rows)


def _write_all(df: pd.DataFrame, wide: pd.DataFrame, stem: Path) -> None:
    write_tsv(df, stem.with_suffix(".tsv"))
    atomic_write_text(stem.with_suffix(".md"), to_markdown(wide))
    atomic_write_text(stem.with_suffix(".tex"), to_latex(wide))


def _drop_base(df: pd.DataFrame) -> pd.DataFrame:
    """Leave out the ``variant`` column when the experiment has no sweeps."""
    if "variant" in df.columns and set(df["variant"].unique()) <= {"base"}:
        return df.drop(columns="variant")
    return df


# ------------------------------------------------------------- sweep variants
def sweep_columns(scores: pd.DataFrame, cfg: dict) -> tuple[pd.DataFrame, list[str]]:
    """``scores`` with one column per swept key (values of each row's variant) and
    the list of those keys. Values come from :func:`ssfs.experiment.variants.variants`; variant
    names not in the config are parsed (``key-value`` joined by ``__``)."""
    over = variants(cfg)
    keys = sorted(cfg.get("sweeps") or {})
    if not keys:
        return scores, []
    vals = {}
    for v in scores["variant"].unique():
        o = over.get(v)
        if o is None:
            o = {}
            for part in str(v).split("__"):
                k, _, val = part.partition("-")
                try:
                    o[k] = float(val) if "." in val else int(val)
                except ValueError:
                    o[k] = val
        vals[v] = o
    out = scores.copy()
    for k in keys:
        out[k] = out["variant"].map(lambda v, k=k: vals[v].get(k))
    return out, keys


# ----------------------------------------------------------------------- figures
def _protocol(cfg: dict, n_reps: int) -> str:
    sup = cfg["supervision"]
    if sup["protocol"] == "kfold":
        how = f"{n_reps} fold(s) of a stratified {sup['n_folds']}-fold cross-validation"
    else:
        how = f"{n_reps} repetition(s) of a stratified holdout split ({1 - sup['test_size']:.0%} training)"
    return f"{how}, {sup['labeled_per_class']} labeled sample(s) per class"


def _classifier(ev: dict) -> str:
    return {"svm": "linear SVM", "knn1": "1-NN", "tree": "decision tree",
            "e1071_svm": "RBF SVM (e1071 defaults)"}[ev["classifier"]]


def _metric_words(metric: str, ev: dict) -> tuple[str, str]:
    """(long text, short axis label) of a metric: one table for the captions and the header."""
    clf = _classifier(ev)
    train = "all training samples" if ev.get("train_on", "labeled") == "all" else "the labeled training samples"
    k = ev.get("kmeans_init", 20)
    return {
        "accuracy": (f"test accuracy of a {clf} trained on {train}", f"test accuracy ({clf})"),
        "auc": (f"test AUC of a {clf} trained on {train}", f"test AUC ({clf})"),
        "semisupervised_accuracy": ("test accuracy of 1-NN on the COP-KMeans clusters of the training samples "
                                    "(constraints only; clusters named by Hungarian matching)",
                                    "semi-supervised test accuracy (COP-KMeans + 1-NN)"),
        "rand": (f"Rand index of k-means ({k} restarts) on all samples vs the classes", "Rand index (k-means)"),
        "ari": (f"adjusted Rand index of k-means ({k} restarts) on all samples vs the classes",
                "adjusted Rand index (k-means)"),
        "red": ("redundancy rate RED of the selected features on the training part (lower is better)",
                "redundancy rate RED"),
    }.get(metric, (metric, metric))


def _metric_text(metric: str, ev: dict) -> str:
    return _metric_words(metric, ev)[0]


def _short_metric(metric: str, ev: dict) -> str:
    return _metric_words(metric, ev)[1]


def identical_methods(d: pd.DataFrame) -> list[list[str]]:
    """Groups (2 or more, names sorted) of methods whose values are identical in every repetition,
    variant and number of features of ``d`` (tidy scores of one figure): their curves coincide."""
    keys = [k for k in ("variant", "rep", "n_features") if k in d.columns]
    wide = d.pivot_table(index=keys, columns="method", values="value", aggfunc="first")
    groups: dict = {}
    for m in sorted(wide.columns, key=str):
        col = wide[m]
        groups.setdefault(tuple(np.round(col.to_numpy(dtype=float), 12)), []).append(str(m))
    return [g for g in groups.values() if len(g) > 1]


def _and(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def make_figures(scores: pd.DataFrame, stab: pd.DataFrame, timings: pd.DataFrame, cfg: dict, figdir: Path,
                 colors) -> list[dict]:
    """Curves, sweep curves, stability and run-time figures; returns index entries."""
    from .figures import (  # lazy: matplotlib (about 0.5 s); the report job imports this module and draws nothing
        curve_vs_features,
        curve_vs_parameter,
        runtime_bars,
        stability_vs_features,
    )

    ev = cfg["evaluation"]
    n_reps = scores["rep"].nunique()
    figs = []
    multi = scores["variant"].nunique() > 1
    for ds in sorted(scores["dataset"].unique()):
        for metric in sorted(scores["metric"].unique()):
            d = scores[(scores["dataset"] == ds) & (scores["metric"] == metric)].copy()
            if d.empty:
                continue
            if multi:  # one panel per variant
                d["dataset"] = d["variant"]
            stem = f"curve__{ds}__{metric}"
            curve_vs_features(d, metric, figdir / stem, colors=colors)
            unit = "folds" if cfg["supervision"]["protocol"] == "kfold" else "repetitions"
            facts = (f"Over {n_reps} {unit}{'; one panel per variant' if multi else ''}."
                     + "".join(f" {_and(g)} give identical values in every repetition: their lines coincide (one "
                               "hides the others)." for g in identical_methods(d)))
            figs.append(dict(stem=stem, section="curves", caption=caption(
                "curve", facts, metric=_short_metric(metric, ev), dataset=ds)))
    sw, keys = sweep_columns(scores, cfg)
    for param in keys:
        others = [k for k in keys if k != param]
        groups = sw.groupby(others, sort=True) if others else [((), sw)]
        for okey, g in groups:
            okey = okey if isinstance(okey, tuple) else (okey,)
            suffix = "".join(f"__{k}-{v}" for k, v in zip(others, okey, strict=True))
            fixed = ", ".join(f"{k} = {v}" for k, v in zip(others, okey, strict=True))
            for metric in sorted(g["metric"].unique()):
                stem = f"sweep__{param}__{metric}{suffix}"
                curve_vs_parameter(g, param, metric, figdir / stem, colors=colors)
                figs.append(dict(stem=stem, section="sweeps", caption=caption(
                    "sweep", f"Over {n_reps} repetition(s).", metric=_metric_text(metric, ev), parameter=param,
                    settings=f" ({fixed})" if fixed else "")))
    if len(stab):
        long = stability_long(stab)
        for var in sorted(long["variant"].unique()):
            stem = f"stability__{var}"
            stability_vs_features(long[long["variant"] == var], figdir / stem, colors=colors, ncols=4)
            figs.append(dict(stem=stem, section="stability", caption=caption(
                "stability", f"{int(stab['n_runs'].max())} repetitions; the band is the "
                f"{1 - cfg['report'].get('alpha', 0.05):.0%} confidence interval.", variant=var)))
    if len(timings):
        timings = warm_runs(timings)
        long = timings.melt(id_vars=KEYS + ["rep"], value_vars=["seconds", "peak_mb"], var_name="metric")
        runtime_bars(long, figdir / "runtime", time_metric="seconds", memory_metric="peak_mb")
        n_runs = len(timings) // max(1, timings.groupby(["dataset", "method"]).ngroups)
        figs.append(dict(stem="runtime", section="runtime", caption=caption(
            "runtime", f"{n_runs} run(s) of each dataset and method.")))
    return figs


# ------------------------------------------------------------------ entry points
@contextmanager
def _recomputed_with_scores():
    """Ranking and timing files are read by path: the DAG holds their scores table, so deleting a
    ranking alone would not make Snakemake recompute it. One that is cut short or missing names
    its scores table (``{dataset}/{variant}/scores/{method}.tsv``) in the rm command too."""
    try:
        yield
    except IncompleteResultError as e:
        parts = Path(getattr(e, "path", "")).parts
        if len(parts) < 5 or parts[-3] not in ("rankings", "timing"):
            raise
        raise incomplete(e.path, e.why, also=[Path(*parts[:-3]) / "scores" / f"{parts[-2]}.tsv"]) from None


def run_aggregate(score_paths, bench_paths, prepared_paths, ranking_paths, tables_dir, figures_dir, cfg: dict,
                  papers_dir=None) -> None:
    """Every table of ``tables_dir`` and every figure of ``figures_dir`` (see the module doc)."""
    tables_dir, figdir = Path(tables_dir), Path(figures_dir)
    figdir.mkdir(parents=True, exist_ok=True)
    scores = pd.concat([read_checked_tsv(p) for p in score_paths], ignore_index=True)
    write_tsv(scores, tables_dir / "scores.tsv")
    summ = summarize(scores)
    _write_all(summ, _drop_base(mean_sd_table(summ, ["dataset", "variant", "metric", "n_features"])),
               tables_dir / "summary")
    tk = top_k(scores)
    _write_all(tk, _drop_base(mean_sd_table(tk, ["dataset", "variant", "metric"])), tables_dir / "top_k")
    with _recomputed_with_scores():
        timings = read_timings(bench_paths)
    write_tsv(timings, tables_dir / "runtime.tsv")
    ds = pd.DataFrame([{"dataset": Path(p).parent.name, **dataset_summary(p)} for p in prepared_paths])
    ds["class_counts"] = ds["class_counts"].map(lambda d: ":".join(str(v) for v in d.values()))
    write_tsv(ds, tables_dir / "datasets.tsv")
    p_of = dict(zip(ds["dataset"], ds["n_features"].astype(int), strict=True))

    # stability across repetitions
    ev = cfg["evaluation"]
    grid = {d: n_features_grid(p, ev["max_features"], ev["n_features"], ev["percent"]) for d, p in p_of.items()}
    extraction = {lab for lab, m in cfg["methods"].items() if get_method(m["method"]).kind == "extraction"}
    with _recomputed_with_scores():
        orders = read_orders(ranking_paths, max_rows=max(max(g) for g in grid.values()))
    stab = stability_table(orders, p_of, grid, alpha=cfg["report"].get("alpha", 0.05), skip_methods=extraction)
    _write_all(stab, _drop_base(stability_at_one_size(stab)), tables_dir / "stability")

    stat_tables, fragment = _figures(scores, stab, timings, ds, cfg, figdir)
    for name in STAT_TABLES:
        write_tsv(stat_tables[name], tables_dir / f"stats_{name}.tsv")
    atomic_write_text(tables_dir / "stats.html", fragment)

    # published numbers beside ours
    comp = pd.DataFrame(columns=OUT_COLUMNS)
    name = cfg["report"].get("paper")
    if name and papers_dir is not None and (Path(papers_dir) / f"{name}.tsv").exists():
        comp = compare_with_paper(load_paper(Path(papers_dir) / f"{name}.tsv"), scores, p_of, cfg)
    write_tsv(comp, tables_dir / "paper_comparison.tsv")
    base, names = _report_reads(tables_dir, figdir)
    write_manifest(base, [base / name for name in names])


def _report_reads(tables_dir: Path, figdir: Path) -> tuple[Path, list[str]]:
    """(their common folder, ``results/``; the aggregate outputs the report reads, relative to
    it): plain tables for users, checked by the manifest the aggregate step writes last."""
    base = Path(os.path.commonpath([tables_dir.resolve(), figdir.resolve()]))
    return base, [(d.resolve() / f).relative_to(base).as_posix() for d, f in
            [(tables_dir, "top_k.tsv"), (tables_dir, "datasets.tsv"), (tables_dir, "runtime.tsv"),
             (tables_dir, "scores.tsv"), (tables_dir, "stability.tsv"), (tables_dir, "paper_comparison.tsv"),
             (tables_dir, "stats.html"), (figdir, "index.tsv")]]


def _figures(scores, stab, timings, ds, cfg: dict, figdir: Path):
    """Every figure into ``figdir`` with its ``index.tsv``; returns the statistics' tables and
    HTML fragment (:func:`ssfs.report.statistics.statistics`)."""
    from .figures import method_colors  # lazy: matplotlib, as in make_figures

    colors = method_colors(sorted(scores["method"].unique()))
    figs = make_figures(scores, stab, timings, cfg, figdir, colors)
    stat_tables, fragment, stat_figs = statistics(scores, cfg, figdir,
                                                  n_samples=dict(zip(ds["dataset"], ds["n_samples"], strict=True)))
    write_tsv(pd.DataFrame(figs + stat_figs, columns=["stem", "section", "caption"]), figdir / "index.tsv")
    return stat_tables, fragment


def run_paper_figures(tables_dir, figures_dir, cfg: dict, formats=("pdf", "png")) -> None:
    """The figures of :func:`run_aggregate` again, drawn from its tables in ``formats`` (PDF for a
    paper, PNG at dpi 250), with their ``index.tsv``: the workflow's ``paper_figures`` rule, so the
    default run draws each figure once, as the SVG its report embeds."""
    from .figures import figure_formats  # lazy: matplotlib, as in make_figures

    tables_dir, figdir = Path(tables_dir), Path(figures_dir)
    figdir.mkdir(parents=True, exist_ok=True)

    def read(name):
        return pd.read_csv(tables_dir / name, sep="\t")

    with figure_formats(*formats):
        _figures(read("scores.tsv"), read("stability.tsv"), read("runtime.tsv"), read("datasets.tsv"), cfg, figdir)


def _versions() -> dict:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in ("ssfs", "numpy", "scipy", "pandas", "scikit-learn", "anndata", "scanpy", "snakemake", "matplotlib"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _runtime_table(rt: pd.DataFrame) -> pd.DataFrame:
    agg = runtime_summary(rt)

    def cell(r) -> str:
        first = (f" (1st call{NBSP}{_signed(r.first_call_extra_s)}{NBSP}s)"
                 if r.warm and np.isfinite(r.first_call_extra_s) else "" if r.warm else "*")
        return f"{r.median_s:.3g}{NBSP}s{first}, {r.peak_mb:.3g}{NBSP}MiB"

    agg["cell"] = [cell(r) for r in agg.itertuples()]
    return agg.pivot(index="dataset", columns="method", values="cell").reset_index().rename_axis(columns=None)


def _signed(v: float) -> str:
    """``+0.41`` / ``−0.0026`` (a minus sign, never ``+-``)."""
    return ("+" if v >= 0 else "\u2212") + f"{abs(v):.2g}"


def _paper_section(cfg: dict, tables_dir: Path, papers_dir) -> str:
    name = cfg["report"].get("paper")
    if not name:
        return ""
    out = [f"<h2 id='paper'>Published numbers: {html.escape(name)}</h2>"]
    path = Path(papers_dir) / f"{name}.tsv" if papers_dir is not None else None
    if path is None or not path.exists():
        have = ", ".join(available_papers(papers_dir)) if papers_dir is not None else ""
        return out[0] + (f"<p>No published table <code>ssfs/report/published/{html.escape(name)}.tsv</code>"
                         f"{'; available: ' + html.escape(have) if have else ''}.</p>")
    header = [ln[1:].strip() for ln in path.read_text().splitlines() if ln.startswith("#")]
    src = " ".join(h for h in header if not h.startswith(("columns:", "features =", "setting =", "ssfs_",
                                                           "metric =", "value,", "the rank-sum")))
    comp = pd.read_csv(tables_dir / "paper_comparison.tsv", sep="\t", dtype=str, keep_default_na=False)
    out.append(f"<p class='note'>{html.escape(src)}</p>")
    if comp.empty:
        out.append("<p>None of the published rows matches a dataset, method and setting of this run (datasets "
                   "are matched by name or the table's <code>ssfs_dataset</code> aliases).</p>")
        return "\n".join(out)
    out.append("<p>Our value is computed as the paper's: the same metric and numbers of features, mean ± sd over "
               "our repetitions (<i>runs</i>); rank sums T are over our runs and the methods of the table present "
               "in this run. Full table: <code>tables/paper_comparison.tsv</code>.</p>")
    show = pd.DataFrame({
        "dataset": [a if a == b else f"{a} → {b}" for a, b in zip(comp["paper_dataset"], comp["dataset"], strict=True)],
        "method": [f"{a} → {b}" for a, b in zip(comp["paper_method"], comp["method"], strict=True)],
        "metric": comp["metric"], "features": comp["features"],
        "setting": comp["setting"].where(comp["variant"] == "base", comp["setting"] + " (" + comp["variant"] + ")"),
        "published": comp["published"], "ours": comp["ours"], "runs": comp["n_runs"], "note": comp["note"]})
    shared = [c for c in ("metric", "features", "setting", "note") if show[c].nunique() == 1]
    if shared:
        out.append("<p>" + "; ".join(f"{c}: <code>{html.escape(str(show[c].iloc[0]))}</code>" for c in shared
                                     if str(show[c].iloc[0])) + "</p>")
    out.append(html_table(show.drop(columns=shared)))
    return "\n".join(out)


def run_report(tables_dir, figures_dir, out, cfg: dict, papers_dir=None, selection: bool = False,
               ranking_paths=()) -> None:
    """Write the self-contained HTML report ``out`` from the aggregate outputs; its first section
    is the summary (:mod:`ssfs.report.selection`: the consensus lists when ``selection`` ran)."""
    tables_dir, figdir = Path(tables_dir), Path(figures_dir)
    check_manifest(*_report_reads(tables_dir, figdir))
    tk = pd.read_csv(tables_dir / "top_k.tsv", sep="\t")
    ds = pd.read_csv(tables_dir / "datasets.tsv", sep="\t")
    rt = pd.read_csv(tables_dir / "runtime.tsv", sep="\t")
    scores = pd.read_csv(tables_dir / "scores.tsv", sep="\t")
    stab = pd.read_csv(tables_dir / "stability.tsv", sep="\t")
    index = pd.read_csv(figdir / "index.tsv", sep="\t")
    captions = dict(zip(index["stem"], index["caption"], strict=True))
    n_reps = scores["rep"].nunique()

    def section_figs(section):
        return "\n".join(figure_html(figdir, r.stem, r.caption) for r in index.itertuples() if r.section == section)

    nav = [("summary", "Summary"),
           ("datasets", "Datasets"), ("topk", "Top-K table"), ("paper", "Published"), ("curves", "Curves"),
           ("sweeps", "Sweeps"), ("stability", "Stability"), ("statistics", "Statistics"), ("runtime", "Run time"),
           ("config", "Configuration")]
    has = {"paper": bool(cfg["report"].get("paper")), "sweeps": bool((index["section"] == "sweeps").any()),
           "stability": len(stab) > 0, "runtime": len(rt) > 0}
    nav = [(a, t) for a, t in nav if has.get(a, True)]
    sel_methods = (cfg.get("selection") or {}).get("methods") or []
    parts = [summary_section(cfg, Path(out).parent, sorted(cfg.get("datasets") or scores["dataset"].unique()),
                             selection=selection, best=best_methods(scores, cfg), ranking_paths=ranking_paths,
                             best_selection=best_methods(scores[scores["method"].isin(sel_methods)], cfg)
                             if selection and scores["method"].isin(sel_methods).any() else None)]
    parts.append(f"<p class='note'><b>Benchmark (the sections below).</b> Labels used: in each of the {n_reps} "
                 f"repetitions, {html.escape(_protocol(cfg, n_reps))}; the other labels of the training part are "
                 "hidden" + (", unlike the answer above, which used every label given." if selection else ".")
                 + "</p>")
    meta = _run_metadata(cfg, n_reps)
    parts.append("<div class='tw'><table class='meta'>" + "".join(
        f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(str(v))}</td></tr>" for k, v in meta.items())
        + "</table></div>")
    parts.append("<h2 id='datasets'>Datasets</h2><p><i>n_batches</i>: the batches the dataset's "
                 "<code>batch_key</code> gives, within which the methods compared samples (1: none given).</p>"
                 + html_table(ds))
    parts.append("<h2 id='topk'>Averaged over the top features</h2><p>Mean ± sd over the repetitions of each "
                 "metric averaged over all evaluated numbers of selected features (the papers' \"top-K\" "
                 "average); the best method of each row is in bold (lowest for <code>red</code>). Also in "
                 "<code>tables/top_k.{tsv,md,tex}</code>; per number of features in <code>tables/summary.*</code>."
                 "</p>")
    parts.append(html_table(_drop_base(mean_sd_table(tk, ["dataset", "variant", "metric"]))))
    parts.append(_paper_section(cfg, tables_dir, papers_dir))
    parts.append(_constrained_section(tables_dir))
    parts.append("<h2 id='curves'>Metric vs number of selected features</h2>"
                 f"<p>For each repetition ({_protocol(cfg, n_reps)}), each method ranks the features on the "
                 "training part; the metric is computed on the top-i features for every evaluated i. Lines: mean "
                 "over the repetitions; bands: ±1 sd.</p>"
                 # every figure at the full text width (scalable SVG): readable without zooming
                 + section_figs("curves"))
    if has["sweeps"]:
        parts.append("<h2 id='sweeps'>Metric vs swept setting</h2>" + section_figs("sweeps"))
    if has["stability"]:
        parts.append(_stability_section(stab, cfg) + section_figs("stability"))
    stats_html = (tables_dir / "stats.html").read_text() if (tables_dir / "stats.html").exists() else ""
    stats_body = re.sub(r"<!--figure:([^>]+?)-->",
                        lambda m: figure_html(figdir, m.group(1), captions.get(m.group(1), "")), stats_html)
    cut = stats_body.find("</ul>") + len("</ul>") if "</ul>" in stats_body else stats_body.find("</h2>") + 5
    parts.append("<div class='statistics'>" + stats_body[:cut] + "<details><summary>every test, table and figure of "
                 "the statistics</summary>" + stats_body[cut:] + "</details></div>")
    if has["runtime"]:
        parts.append(_runtime_section(rt) + section_figs("runtime"))
    parts.append("<h2 id='config'>Configuration</h2><details><summary>the run's configuration (YAML)</summary><pre>"
                 + html.escape(yaml.safe_dump(cfg, sort_keys=False)) + "</pre></details>")
    atomic_write_text(out, render_page(cfg["report"]["title"], nav, parts))


def _constrained_section(tables_dir: Path) -> str:
    """Thesis Table 4.3 (config section ``constrained_clustering``), when it ran."""
    path = tables_dir / "constrained_clustering.tsv"
    if not path.exists():
        return ""
    t = pd.read_csv(path, sep="\t")
    t["ours (%)"] = [f"{m:.2f}" + ("" if pd.isna(s) else f" ± {s:.2f}")
                     for m, s in zip(t["mean"], t["sd"], strict=True)]
    t["published (%)"] = t["published"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return ("<h2 id='constrained'>Constrained clustering (thesis Table 4.3)</h2><p>COP-KMeans, MPC-KMeans and wCKM "
            "on all samples without feature selection, unconstrained and with every pair of each repetition's "
            "labeled samples as constraints; Rand index on the samples in no constraint, mean ± sd over the "
            "repetitions (<code>tables/constrained_clustering.tsv</code>).</p>"
            + html_table(t[["dataset", "algorithm", "setting", "ours (%)", "published (%)", "n"]]))


def _run_metadata(cfg: dict, n_reps: int) -> dict:
    """The report's header table: when, seed, protocol, evaluation, sizes, sweeps, versions."""
    ev, sup = cfg["evaluation"], cfg["supervision"]
    return {
        "generated": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "seed": cfg["seed"],
        "protocol": f"{_protocol(cfg, n_reps)}; constraints: {sup['constraints']['mode']}"
                    + (f" ({sup['constraints']['n_ml']} must-link + {sup['constraints']['n_cl']} cannot-link)"
                       if sup["constraints"]["mode"] == "random" else " (all pairs of labeled samples)")
                    + (f", {sup['constraints']['noise']:.0%} flipped" if sup["constraints"]["noise"] else ""),
        "evaluation": "; ".join(_metric_text(m, ev) for m in ev["metrics"])
                      + f"; features scaled: {ev['scale']}",
        "numbers of features": _grid_text(ev),
        "sweeps": ", ".join(f"{k} = {v}" for k, v in (cfg.get("sweeps") or {}).items()) or "none",
        "versions": ", ".join(f"{k} {v}" for k, v in _versions().items()),
    }


def _stability_section(stab: pd.DataFrame, cfg: dict) -> str:
    text = ("<h2 id='stability'>Stability across repetitions</h2><p>Agreement of the top-t feature sets "
            f"of the {int(stab['n_runs'].max())} repetitions (each selects on its own training part), "
            "at the largest evaluated t below the number of features (column <i>n_features</i>); every "
            "t in <code>tables/stability.tsv</code> and the figure. EFSIS: mean relative selection "
            "frequency of the features selected at least once; Jaccard: mean pairwise |A∩B|/|A∪B|; "
            "Kuncheva and Nogueira are corrected for chance (0 = random, 1 = identical sets); Nogueira "
            f"± half-width of its {1 - cfg['report'].get('alpha', 0.05):.0%} confidence interval. Most "
            "stable method in bold.</p>")
    return text + html_table(_drop_base(stability_at_one_size(stab)))


def _runtime_section(rt: pd.DataFrame) -> str:
    text = ("<h2 id='runtime'>Run time of the selection methods</h2><p>Median in-process wall-clock "
            "seconds of one selection run (one repetition, data already loaded) over the repetitions that were "
            "not the first selection of their process, and the peak memory it added (resident memory above what "
            "the process held before the run, MiB, maximum over those runs). The first call of a method in a "
            "process also pays one-off costs (lazy imports, JIT compilation, BLAS thread start-up), often 10-60× "
            "a later run: it is left out of the median and shown apart as <i>1st +x s</i>, its excess over the "
            "median. * = every run was the first of its process (one repetition per job, or an ensemble run as "
            "member chunks): the median includes that cost. All runs in <code>tables/runtime.tsv</code> "
            "(column <code>first_call</code>); Snakemake's per-job benchmark files (with process start-up) are "
            "under <code>results/*/*/benchmarks/</code>.</p>")
    return text + html_table(_runtime_table(rt))


def _grid_text(ev: dict) -> str:
    if ev.get("n_features"):
        return ", ".join(map(str, ev["n_features"]))
    if ev.get("percent"):
        return ", ".join(f"{q:g}%" for q in ev["percent"]) + " of the features"
    return f"1..{ev['max_features']}"
