"""The report's first section, ``<section id="summary">`` (issue #14): the answer for each dataset
(selection mode: consensus list, frequencies, stability, error bound; benchmark: the best
method), the stability-path figure, and, in benchmark-only runs, the features selected most
often across repetitions."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pandas as pd

from .._checked import incomplete, read_checked_json, read_checked_tsv
from ..io.atomic import atomic_path, atomic_write_text
from .render import CSS, fmt, html_table

#: rows of the top-features table beyond the selected ones (at least ``top`` rows are shown)
MAX_ROWS = 30


def stability_path_figure(table: pd.DataFrame, threshold: float, top: int, out) -> None:
    """Selection frequency against consensus rank (per method: thin lines), threshold marked."""
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: its import and global state are not needed

    from .figures import STYLE  # lazy: matplotlib (about 0.5 s) only when the figure is drawn

    n = int(min(len(table), max(3 * top, 30)))
    ranks = table["consensus_rank"].to_numpy()[:n]
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(5.2, 2.9))
        ax = fig.subplots()
        for c in [c for c in table.columns if c.startswith("frequency_")]:
            ax.plot(ranks, table[c].to_numpy()[:n], lw=0.8, alpha=0.6, label=c.removeprefix("frequency_"))
        ax.step(ranks, table["frequency"].to_numpy()[:n], where="mid", color="black", lw=2, label="consensus")
        ax.axhline(threshold, color="crimson", ls="--", lw=1, label=f"threshold {threshold:g}")
        ax.set_xlabel("consensus rank")
        ax.set_ylabel("selection frequency")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(loc="upper right", fontsize=7, ncols=2, frameon=False)
        with atomic_path(out) as tmp, open(tmp, "wb") as fh:
            fig.savefig(fh, format="png", dpi=110, metadata={"Software": None})


def draw_stability_path(*, consensus, sel: dict, figure) -> None:
    """The stability-path figure of one dataset (:func:`stability_path_figure`) from its
    consensus table (the consensus step's TSV)."""
    stability_path_figure(pd.read_csv(consensus, sep="\t"), sel["threshold"], sel["top"], figure)


def _img(path: Path, alt: str) -> str:
    if not path.exists():
        return ""
    data = base64.b64encode(path.read_bytes()).decode()
    return f"<figure><img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'></figure>"


def _table(df: pd.DataFrame, table_id: str | None = None) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(fmt(v))}</td>" for v in r) + "</tr>"
                   for r in df.itertuples(index=False))
    tid = f" id='{table_id}'" if table_id else ""
    return f"<div class='tw'><table{tid}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def _data_sentence(s: dict, cfg: dict) -> str:
    lab = ", ".join(f"{k}: {v}" for k, v in s["labeled_per_class"].items())
    csup = cfg["supervision"]["constraints"]
    cons = ("all must-link/cannot-link pairs of the labeled samples" if csup["mode"] == "all_pairs" else
            f"{csup['n_ml']} must-link + {csup['n_cl']} cannot-link pairs drawn among the labeled samples")
    return (f"{s['n_samples']} samples × {s['n_features']} features; labeled per class: {lab}; "
            f"{s['n_unlabeled']} unlabeled; constraints: {cons}.")


def read_consensus(path, n_features: int) -> pd.DataFrame:
    """A ``consensus.tsv`` (a plain table: users read it as it is), checked whole against its
    summary: every one of the ``n_features`` features once (else one-line
    :class:`~ssfs.errors.IncompleteResultError`)."""
    table = pd.read_csv(path, sep="\t")
    idx = table["index"] if "index" in table.columns else pd.Series(dtype=float)
    if len(table) != n_features or idx.isna().any() or set(idx) != set(range(n_features)):
        raise incomplete(path, f"it lists {len(table)} rows, its summary.json {n_features} features (cut short "
                               "or changed after it was written?)")
    return table


def _dataset_block(ds: str, sel_dir: Path, cfg: dict, best: pd.DataFrame | None) -> str:
    s = read_checked_json(sel_dir / "summary.json")
    table = read_consensus(sel_dir / "consensus.tsv", s["n_features"])
    st, eb = s["stability"], s["error_bound"]
    n_rows = int(min(len(table), max(s["top"], min(s["n_selected"], MAX_ROWS))))
    show = table.head(n_rows).drop(columns=["index", "aggregated_rank"])
    show = show[[c for c in show.columns if not c.startswith("frequency_")]]
    words = [f"<h3>{html.escape(ds)}</h3>",
             f"<p><b>Data.</b> {html.escape(_data_sentence(s, cfg))}</p>",
             f"<p><b>What ran.</b> Methods {html.escape(', '.join(s['methods']))}, each on all samples with the "
             f"labels and constraints as given, and on {s['resamples']} "
             + ("complementary half-sample pairs' halves (CPSS)" if s["scheme"] == "cpss" else "bootstrap samples")
             + f" drawn within each labeled class and the unlabeled samples; ranks aggregated by "
             f"{html.escape(s['aggregation'].replace('_', ' '))}; a feature is counted in a resample when it is in "
             f"the top {s['top']} of the aggregated ranking.</p>"]
    if best is not None and len(best):
        b = best[best["dataset"] == ds]
        if len(b):
            words.append("<p><b>Best method on this data.</b> "
                         + " ".join(html.escape(t) for t in b["sentence"]) + "</p>")
    stab = (f"Nogueira stability of the top-{s['top']} lists: {fmt(st['value'])} "
            f"({1 - st['alpha']:.0%} CI {fmt(st['ci_low'])} to {fmt(st['ci_high'])})" if st["value"] is not None
            else "stability undefined")
    words.append(f"<p><b>Answer.</b> {s['n_selected']} feature(s) have selection frequency ≥ {s['threshold']:g}"
                 + (f": {html.escape(', '.join(s['features'][:15]))}{' …' if s['n_selected'] > 15 else ''}"
                    if s["n_selected"] else "")
                 + f". {stab}. Error bound: {html.escape(eb['statement'])}.</p>")
    if s.get("note"):
        words.append(f"<p><b>Nothing selected.</b> {html.escape(s['note'][0].upper() + s['note'][1:])}.</p>")
    tid = "top-features" if _dataset_block.first else f"top-features-{html.escape(ds)}"
    _dataset_block.first = False
    links = " · ".join(f"<a href='{html.escape(ds)}/selection/{f}'>{f}</a>"
                       for f in ("consensus.tsv", "summary.json", "stability_path.png"))
    return ("\n".join(words) + _table(show, tid) + _img(sel_dir / "stability_path.png", f"stability path {ds}")
            + f"<p>Files: {links}; per-method full-data rankings in <code>{html.escape(ds)}/selection/full/</code>."
            "</p>")


_dataset_block.first = True


def frequent_features(ranking_paths, top: int = 10, n_show: int = 10) -> pd.DataFrame:
    """Benchmark-only runs: per dataset, variant and method, the features most often in the top
    ``top`` of the repetitions' rankings (path .../{dataset}/{variant}/rankings/{method}/{rep}.tsv)."""
    rows = []
    for path in sorted(map(Path, ranking_paths)):
        t = read_checked_tsv(path)
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
                    ranking_paths=()) -> str:
    """``<section id="summary">``: the answer first."""
    _dataset_block.first = True
    results_dir = Path(results_dir)
    parts = ["<section id='summary'><h2>Summary: the answer</h2>"]
    if selection:
        sel = cfg["selection"]
        parts.append(
            "<p>How to read this: <i>frequency</i> is the fraction of resamples in which the feature is in the top "
            f"{sel['top']} of the methods' aggregated ranking (its estimated selection probability); the features "
            f"at or above the threshold {sel['threshold']:g} form the stable list; the <i>error bound</i> bounds "
            "the expected number of falsely selected features in that list under the stated assumptions; "
            "<code>rank_&lt;method&gt;</code> is each method's rank on all samples.</p>")
        for ds in datasets:
            parts.append(_dataset_block(ds, results_dir / ds / "selection", cfg, best))
    else:
        if best is not None and len(best):
            parts.append("<p>" + "<br>".join(html.escape(t) for t in best["sentence"]) + "</p>")
        ff = frequent_features(ranking_paths)
        parts.append("<p>No <code>selection:</code> section was configured, so no consensus list was computed "
                     "(add one to get a stable, error-controlled list). Features selected most often across the "
                     "repetitions (in the top 10 of each repetition's ranking on its training part; count / "
                     "repetitions):</p>" + _table(ff, "top-features"))
    parts.append("</section>")
    return "\n".join(parts)


def datasets_table(results_dir, datasets) -> pd.DataFrame:
    """The benchmark report's Datasets table (same columns as ``tables/datasets.tsv``) from the
    selection summaries (``{dataset}/selection/summary.json``): no data file is read again."""
    rows = []
    for ds in datasets:
        s = read_checked_json(Path(results_dir) / ds / "selection" / "summary.json")
        counts = s["labeled_per_class"]
        rows.append({"dataset": ds, "n_samples": s["n_samples"], "n_features": s["n_features"],
                     "n_classes": len(counts), "n_unlabeled": s["n_unlabeled"],
                     "class_counts": ":".join(str(v) for v in counts.values())})
    return pd.DataFrame(rows, columns=["dataset", "n_samples", "n_features", "n_classes", "n_unlabeled",
                                       "class_counts"])


def run_selection_report(out, cfg: dict) -> None:
    """The report of a selection-only run (no benchmark): title, summary, datasets, configuration."""
    import yaml

    title = html.escape(cfg["report"]["title"])
    datasets = sorted(cfg["datasets"])
    nav = [("summary", "Summary"), ("datasets", "Datasets"), ("config", "Configuration")]
    body = [f"<h1>{title}</h1>", "<nav>" + "".join(f"<a href='#{a}'>{t}</a>" for a, t in nav) + "</nav>",
            summary_section(cfg, Path(out).parent, datasets, selection=True),
            "<h2 id='datasets'>Datasets</h2><p>Samples and features after preparation; <i>class_counts</i>: "
            "labeled samples per class (class order), all of them used by the selection.</p>"
            + html_table(datasets_table(Path(out).parent, datasets)),
            "<h2 id='config'>Configuration</h2><pre>" + html.escape(yaml.safe_dump(cfg, sort_keys=False)) + "</pre>"]
    atomic_write_text(out, "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" + title
                      + f"</title><style>{CSS}</style></head><body>" + "\n".join(body) + "</body></html>\n")
