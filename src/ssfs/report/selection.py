"""The report's first section, ``<section id="summary">`` (issue #14): the answer for each dataset
(selection mode: consensus list, frequencies, stability, error bound; benchmark: the best
method), the stability-path figure, and, in benchmark-only runs, the features selected most
often across repetitions."""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pandas as pd

from .._checked import incomplete, read_checked_json
from ..experiment.attribution import long_stats
from ..io.atomic import atomic_write_text
from .render import html_table, render_page, render_template, svg_figure

#: rows of the top-features table beyond the selected ones (at least ``top`` rows are shown)
MAX_ROWS = 30


def draw_selection_figures(*, summary, consensus, path=None, figure=None, dotplot=None) -> None:
    """The stability path (``figure``) and the dot plot of the selected features by class
    (``dotplot``; the first :data:`DOT_ROWS` consensus features when none is selected) of one
    dataset, from its summary.json, stability_path.tsv and consensus.tsv; each file is written
    once, in its suffix's format (:func:`ssfs.report.figures.save_as`); None: not drawn (the
    list of every label beside the analyst's case has no figures)."""
    if figure is None and dotplot is None:
        return
    from . import figures  # lazy: matplotlib (about 0.5 s) only when figures are drawn

    draw_dots, save_as, draw_path = figures.dotplot, figures.save_as, figures.stability_path

    s = read_checked_json(summary)
    if figure is not None:
        save_as(draw_path(pd.read_csv(path, sep="\t"), threshold=s["threshold"], q=s["top"], selected=s["features"],
                          title=f"{s['dataset']}: selection frequency against q"), figure)
    if dotplot is None:
        return
    att = s.get("attribution")
    table = read_consensus(consensus, s["n_features"])
    feats = list(s["features"][:DOT_ROWS]) or list(table["feature"].head(DOT_ROWS))
    if att is None:
        fig = _note_figure("no labels: no per-class statistics")
    else:
        fig = draw_dots(long_stats(table, feats, att["classes"]),
                        marks=dict(zip(table["feature"], table["marks"], strict=True)),
                        title="selected features by class" if s["features"] else "first features (none selected)")
    save_as(fig, dotplot)


#: rows of the dot plot at most
DOT_ROWS = 60


def _note_figure(text: str):
    from matplotlib.figure import Figure  # lazy: as in draw_selection_figures

    fig = Figure(figsize=(4, 0.6))
    fig.text(0.5, 0.5, text, ha="center", va="center")
    return fig


def _labels_sentence(s: dict, cfg: dict) -> str:
    """Which labels the answer used (all the given ones, or ``labeled_per_class`` of each class:
    the analyst's case; named per class), and the constraints."""
    lab = ", ".join(f"{k} {v}" for k, v in s["labeled_per_class"].items())
    n_lab = sum(s["labeled_per_class"].values())
    csup = (cfg.get("supervision") or {}).get("constraints") or {"mode": "all_pairs"}
    cons = ("must-link / cannot-link constraints: every pair of labeled samples" if csup["mode"] == "all_pairs" else
            f"{csup['n_ml']} must-link + {csup['n_cl']} cannot-link pairs drawn among the labeled samples")
    if not n_lab:
        return (f"No labels: {s['n_samples']} unlabeled samples × {s['n_features']} features, label-free "
                "methods only.")
    kept = s.get("labels_kept_per_class")
    if kept:
        return (f"The analyst's case: {kept} labels per class kept of the {s['labels_given']} the data hold "
                f"(selection: labeled_per_class), {n_lab} labeled samples ({lab}), the other {s['n_unlabeled']} "
                f"of {s['n_samples']} samples × {s['n_features']} features unlabeled; {cons}.")
    return (f"Every label given: {n_lab} labeled samples ({lab}) and {s['n_unlabeled']} unlabeled of "
            f"{s['n_samples']} samples × {s['n_features']} features; {cons}.")


def compared_sentence(s: dict, s_all: dict | None) -> str:
    """The analyst's list beside the one every label gives (``s_all``: its summary.json): its
    length and stability, the overlap, and the features only one of them holds; '' without it."""
    if s_all is None:
        return ""
    mine, full = s["features"], s_all["features"]
    both = [f for f in mine if f in set(full)]
    union = len(set(mine) | set(full))

    def few(fs):
        return ", ".join(fs[:12]) + (f" and {len(fs) - 12} more" if len(fs) > 12 else "") if fs else "none"

    stab = s_all.get("list_stability") or s_all["stability"]
    stab_text = "undefined" if stab.get("value") is None else f"{stab['value']:.2f}"
    return (f"Beside it, every label ({s_all['labels_given']} labeled samples): {len(full)} features selected, "
            f"stability {stab_text}. Overlap: {len(both)} of this list's {len(mine)} features are in that list "
            f"(Jaccard {len(both) / union if union else 1:.2f}); only here: {few([f for f in mine if f not in both])}; "
            f"only with every label: {few([f for f in full if f not in set(mine)])}.")


def _best_sentence(ds: str, methods, best_all: pd.DataFrame | None, best_sel: pd.DataFrame | None) -> str:
    """The benchmark's best method among the methods behind the answer, and the overall best when
    it is another one (e.g. ``variance`` on waveform). One method behind the answer (``selection.methods:
    auto`` on counts): nothing to compare among, only the overall best."""
    if best_sel is None or not len(best_sel) or not (best_sel["dataset"] == ds).any():
        return ""
    text = ""
    if len(methods) > 1:
        text = ("Benchmark, among the methods behind this answer: "
                + " ".join(best_sel.loc[best_sel["dataset"] == ds, "sentence"]))
    if best_all is not None and (best_all["dataset"] == ds).any():
        overall = best_all.loc[best_all["dataset"] == ds, "best"].iloc[0]
        if overall not in methods:
            text += (f" Over every benchmarked method, {overall} had the best mean; it is not among the methods "
                     "of the selection.")
    return text.strip()


def _shown_table(table: pd.DataFrame, s: dict, s_all: dict | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of the report's table (the selected ones and 10 more, at least 20, at most
    :data:`MAX_ROWS` + the selected) and their classes (``stable`` for the selected); with the
    list every label gives (``s_all``), an ``all labels`` column marks its features."""
    n_rows = int(min(len(table), max(s["n_selected"] + 10, 20), s["n_selected"] + MAX_ROWS))
    show = table.head(n_rows)
    cols = [c for c in ("feature", "symbol", "selected", "frequency", "marks", "direction", "log_fold_change",
                        "consensus_rank") if c in show.columns]
    cols += [c for c in show.columns if c.startswith("rank_")]
    out = show[cols].copy()
    out["selected"] = np.where(out["selected"], "✓", "")
    if s_all is not None:
        out.insert(list(out.columns).index("selected") + 1, "all labels",
                   np.where(out["feature"].isin(s_all["features"]), "✓", ""))
    out = out.rename(columns={"log_fold_change": "log fold change", "consensus_rank": "rank",
                              **{c: c.replace("rank_", "rank ") for c in cols if c.startswith("rank_")}})
    return out, ["stable" if v else "" for v in show["selected"]]


def read_consensus(path, n_features: int) -> pd.DataFrame:
    """A ``consensus.tsv`` (a plain table: users read it as it is), checked whole against its
    summary: every one of the ``n_features`` features once (else one-line
    :class:`~ssfs.errors.IncompleteResultError`)."""
    table = pd.read_csv(path, sep="\t", dtype={"feature": str})  # names as written ("504" is a gene's name, not 504)
    idx = table["index"] if "index" in table.columns else pd.Series(dtype=float)
    if len(table) != n_features or idx.isna().any() or set(idx) != set(range(n_features)):
        raise incomplete(path, f"it lists {len(table)} rows, its summary.json {n_features} features (cut short "
                               "or changed after it was written?)")
    return table


def _dataset_block(ds: str, sel_dir: Path, cfg: dict, best_all=None, best_sel=None) -> str:
    s = read_checked_json(sel_dir / "summary.json")
    all_path = sel_dir / "all_labels" / "summary.json"
    s_all = read_checked_json(all_path) if s.get("labels_kept_per_class") and all_path.exists() else None
    table = read_consensus(sel_dir / "consensus.tsv", s["n_features"])
    show, rows = _shown_table(table, s, s_all)
    tid = "top-features" if _dataset_block.first else f"top-features-{ds}"
    _dataset_block.first = False
    return render_template(
        "selection_block.html.j2", ds=ds, s=s, att=s.get("attribution"), labels=_labels_sentence(s, cfg),
        compared=compared_sentence(s, s_all), n_rows=len(show),
        table=html_table(show, table_id=tid, row_classes=rows, scroll=True),
        dotplot=svg_figure(sel_dir / "dotplot.svg", f"{ds}: dot plot of the selected features by class",
                           "Selected features (rows) by class: colour = mean scaled per feature, size = fraction of "
                           "the class's samples with a non-zero value (all equal for continuous data); the class "
                           "each feature marks is ringed."),
        path=svg_figure(sel_dir / "stability_path.svg", f"{ds}: stability path",
                        f"Selection frequency of each feature against q (features per resample): the selected "
                        f"ones in colour; dotted: the q used ({s['top']}); dashed: the threshold "
                        f"{s['threshold']:g}."),
        best=_best_sentence(ds, s["methods"], best_all, best_sel), files=SELECTION_FILES)


#: a dataset's files of selection mode, linked from the report
SELECTION_FILES = ("consensus.tsv", "summary.json", "stability_path.tsv", "stability_path.svg", "dotplot.svg")

_dataset_block.first = True


def frequent_features(ranking_paths, top: int = 10, n_show: int = 10) -> pd.DataFrame:
    """Benchmark-only runs: per dataset, variant and method, the features most often in the top
    ``top`` of the repetitions' rankings (path .../{dataset}/{variant}/rankings/{method}/{rep}.tsv)."""
    rows = []
    for path in sorted(map(Path, ranking_paths)):
        t = pd.read_csv(path, sep="\t")
        method, variant, ds = path.parent.name, path.parents[2].name, path.parents[3].name
        for f in t.sort_values("rank")["feature"].head(top):
            rows.append((ds, variant, method, path.stem, f))
    if not rows:
        return pd.DataFrame(columns=["dataset", "variant", "method", "features"])
    df = pd.DataFrame(rows, columns=["dataset", "variant", "method", "rep", "feature"])
    out = []
    for (ds, var, m), sub in df.groupby(["dataset", "variant", "method"], sort=True):
        n = sub["rep"].nunique()
        c = sub["feature"].value_counts()
        c = c.sort_values(ascending=False, kind="stable").head(n_show)
        out.append({"dataset": ds, "variant": var, "method": m,
                    "features": ", ".join(f"{f} ({k}/{n})" for f, k in c.items())})
    return pd.DataFrame(out)


def summary_section(cfg: dict, results_dir, datasets, *, selection: bool, best: pd.DataFrame | None = None,
                    ranking_paths=(), best_selection: pd.DataFrame | None = None) -> str:
    """``<section id="summary">``: the answer first. ``best``: the benchmark's best method of each
    dataset over every method; ``best_selection``: over the selection's methods only."""
    _dataset_block.first = True
    results_dir = Path(results_dir)
    parts = ["<section id='summary'><h2>Summary: the answer</h2>"]
    if selection:
        parts.append(
            "<p>How to read this: <i>frequency</i> is the share of resamples in which a feature is among the top q "
            "of the methods' aggregated ranking (its estimated selection probability); the features at or above the "
            f"threshold {cfg['selection']['threshold']:g} form the stable list (✓); the error bound says how many "
            "of them may be false selections; <i>marks</i> is the class whose mean differs most from the other "
            "samples' (<i>direction</i> up or down); <i>rank m</i> is method m's rank on all samples.</p>")
        for ds in datasets:
            parts.append(_dataset_block(ds, results_dir / ds / "selection", cfg, best, best_selection))
    else:
        if best is not None and len(best):
            parts.append("<p>" + "<br>".join(html.escape(t) for t in best["sentence"]) + "</p>")
        ff = frequent_features(ranking_paths)
        parts.append("<p>No <code>selection:</code> section was configured, so no consensus list was computed "
                     "(add one to get a stable, error-controlled list). Features selected most often across the "
                     "repetitions (in the top 10 of each repetition's ranking on its training part; count / "
                     "repetitions):</p>" + html_table(ff, table_id="top-features"))
    parts.append("</section>")
    return "\n".join(parts)


def datasets_table(results_dir, datasets) -> pd.DataFrame:
    """The benchmark report's Datasets table (same columns as ``tables/datasets.tsv``) from the
    selection summaries (``{dataset}/selection/summary.json``): no data file is read again."""
    rows = []
    for ds in datasets:
        s = json.loads((Path(results_dir) / ds / "selection" / "summary.json").read_text())
        counts = s["labeled_per_class"]
        rows.append({"dataset": ds, "n_samples": s["n_samples"], "n_features": s["n_features"],
                     "n_classes": len(counts), "n_unlabeled": s["n_unlabeled"],
                     "n_batches": (s.get("batches") or {}).get("n", 1),
                     "class_counts": ":".join(str(v) for v in counts.values())})
    return pd.DataFrame(rows, columns=["dataset", "n_samples", "n_features", "n_classes", "n_unlabeled",
                                       "n_batches", "class_counts"])


def run_selection_report(out, cfg: dict) -> None:
    """The report of a selection-only run (no benchmark): title, summary, datasets, configuration."""
    import yaml

    datasets = sorted(cfg["datasets"])
    nav = [("summary", "Summary"), ("datasets", "Datasets"), ("config", "Configuration")]
    parts = [summary_section(cfg, Path(out).parent, datasets, selection=True),
             "<h2 id='datasets'>Datasets</h2><p>Samples and features after preparation; <i>n_batches</i>: the batches "
             "the dataset's <code>batch_key</code> gives (1: none given); <i>class_counts</i>: "
             "labeled samples per class (class order) the selection used (each answer above says which).</p>"
             + html_table(datasets_table(Path(out).parent, datasets)),
             "<h2 id='config'>Configuration</h2><details><summary>the run's configuration (YAML)</summary><pre>"
             + html.escape(yaml.safe_dump(cfg, sort_keys=False)) + "</pre></details>"]
    atomic_write_text(out, render_page(cfg["report"]["title"], nav, parts))
