"""The statistics section of the report: per dataset, the best method against every other
with the corrected resampled t-test (Nadeau & Bengio 2003), its confidence interval and the
exact Wilcoxon signed-rank test over the repetitions (:func:`best_methods`,
:func:`per_dataset_comparisons`); over datasets, Friedman + Nemenyi CD diagram,
Holm-Wilcoxon against a control method, and the paired t-test win/tie/loss matrix with
the sign test (Demšar 2006; EnsCLS paper Section 5.2, Table 3), per variant and metric.

The value of a method on a dataset is its "top-K average": per repetition the mean
of the metric over the evaluated numbers of features, then the mean over
repetitions (:func:`ssfs.experiment.stats.summary_matrix`, EnsCLS Table 2).

Choices (documented in the report):
- Per dataset: the repetitions of repeated holdout / cross-validation share training
  samples, so their values are correlated and the plain paired t-test is
  anti-conservative; the corrected resampled t-test adds n_test/n_train to 1/J in the
  variance (:func:`split_sizes`: n_train, n_test from the protocol and the dataset's
  number of samples; the selection sees the whole training part, so n_train is its
  size even with ``train_on: labeled``). The "best" method has the best mean over the
  repetitions; it is compared with every other method (Holm over those k-1 tests); the
  effect size is the mean paired difference with the interval that inverts the test,
  and d_z = mean / sd of the paired differences. The exact two-sided Wilcoxon
  signed-rank test cannot go below 2/2^J with J repetitions (5: 0.0625): the report
  says so instead of reporting "no difference".
- Friedman/Nemenyi need >= 2 methods and >= 2 datasets; datasets where a method has
  no value (a subset method that selected too few features) are left out.
- Holm-Wilcoxon vs ``report.control``: over the datasets when there are at least
  ``report.wilcoxon_min_datasets`` (default 6: with n datasets the exact two-sided
  test cannot go below 2/2^n, 0.0625 for 5), otherwise within each dataset over the repetitions (paired by
  repetition: same split and supervision); the latter speaks about that dataset only.
- Win/tie/loss: paired t-test over the repetitions at ``report.wtl_alpha`` (EnsCLS:
  0.1); the sign test at the same level gives the critical number of wins.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..experiment import stats as st
from ..experiment.grid import metric_higher_is_better
from .captions import caption
from .render import html_table

FRIEDMAN_COLS = ["variant", "metric", "n_methods", "n_datasets", "chi2", "p_value", "iman_davenport",
                 "iman_davenport_p", "cd", "alpha"]
RANK_COLS = ["variant", "metric", "method", "avg_rank"]
WILCOXON_COLS = ["variant", "metric", "scope", "control", "method", "n_datasets", "wins", "ties", "losses",
                 "mean_diff", "statistic", "p_value", "p_holm", "p_corrected", "p_corrected_holm", "reject",
                 "decided_by"]
PER_SIZE_COLS = ["variant", "metric", "dataset", "n_features", "method", "mean", "sd", "best", "p_value",
                 "worse"]
BEST_COLS = ["dataset", "variant", "metric", "best", "runner_up", "difference", "ci_low", "ci_high", "test",
             "p_value", "decidable", "sentence"]
PER_DATASET_COLS = ["variant", "metric", "dataset", "best", "method", "n_reps", "n_train", "n_test", "difference",
                    "ci_low", "ci_high", "d_z", "t", "p_value", "p_holm", "wilcoxon_p", "wilcoxon_min_p",
                    "decidable_wilcoxon"]
CORRECTED_T = "corrected resampled t-test"
WTL_COLS = ["variant", "metric", "method", "opponent", "wins", "ties", "losses", "n_datasets", "significant",
            "critical_wins", "alpha"]


def _html_df(df: pd.DataFrame, digits: int = 4) -> str:
    return html_table(df.round(digits) if len(df) else df)


def _figure_slot(stem: str) -> str:
    """Placeholder the report replaces with the embedded figure and its caption."""
    return f"<!--figure:{stem}-->"


@dataclass
class _Collected:
    """Rows of every statistics table, HTML parts and figure index entries, filled section by section."""

    friedman: list = field(default_factory=list)
    ranks: list = field(default_factory=list)
    wilcoxon: list = field(default_factory=list)
    win_tie_loss: list = field(default_factory=list)
    html: list = field(default_factory=list)
    figures: list = field(default_factory=list)


@dataclass(frozen=True)
class _Settings:
    alpha: float
    wtl_alpha: float
    min_datasets: int
    control: str | None
    figdir: Path
    cfg: dict = field(default_factory=dict)
    n_samples: dict | None = None

    @classmethod
    def from_config(cls, cfg: dict, figdir, n_samples=None) -> _Settings:
        rep = cfg["report"]
        return cls(float(rep.get("alpha", 0.05)), float(rep.get("wtl_alpha", 0.1)),
                   int(rep.get("wilcoxon_min_datasets", 6)), rep.get("control"), Path(figdir), cfg, n_samples)


def _p(v: float) -> str:
    return "" if not np.isfinite(v) else f"{v:.2g}"


def _per_dataset_html(best: pd.DataFrame, per_ds: pd.DataFrame, scores: pd.DataFrame, cfg: dict,
                      alpha: float) -> str:
    """Best method per dataset in words, then every method against it (corrected t-test, Wilcoxon)."""
    if best.empty:
        return ""
    n_reps = int(per_ds["n_reps"].max()) if len(per_ds) else 0
    unit = _unit(cfg)
    floor = st.wilcoxon_min_pvalue(n_reps)
    need = st.wilcoxon_pairs_needed(alpha)
    parts = ["<h3 id='best-per-dataset'>Best method per dataset</h3>",
             f"<p>Per dataset, the method with the best mean over the {n_reps} {unit} (each {unit[:-1]}'s value: "
             "the metric averaged over the evaluated numbers of features) against the others, paired by "
             f"{unit[:-1]}. The {unit} share training samples, so their values are correlated and a plain paired "
             f"test over them is too optimistic: the {CORRECTED_T} (Nadeau &amp; Bengio 2003) uses "
             "t = mean(d) / sqrt((1/J + n<sub>test</sub>/n<sub>train</sub>) var(d)) with J - 1 degrees of freedom; "
             f"the difference d is shown with the {1 - alpha:.0%} confidence interval that inverts it, and "
             "d<sub>z</sub> = mean(d)/sd(d). </p>"]
    if floor > alpha:
        parts.append(
            f"<p><b>What the {unit} can decide:</b> with {n_reps} {unit} the exact Wilcoxon signed-rank test cannot "
            f"give p below {floor:.3g} (2/2<sup>{n_reps}</sup>), so it can never reach α = {alpha:g} here "
            f"(it needs at least {need} {unit} without ties); its p-values are shown for completeness only. The "
            f"corrected t-test can decide with {n_reps} {unit}.</p>")
    items = []
    for r in best.itertuples():
        g = per_ds[(per_ds["dataset"] == r.dataset) & (per_ds["variant"] == r.variant) & (per_ds["metric"] == r.metric)]
        worse = g[(g["p_holm"] < alpha) & (g["difference"] > 0)]
        extra = (f" {r.best} is significantly better than {', '.join(map(str, worse['method']))} ({CORRECTED_T}, "
                 f"Holm-adjusted p ≤ {worse['p_holm'].max():.2g})." if len(worse) else "")
        items.append(f"<li>{html.escape(r.sentence + extra)}</li>")
    parts.append("<ul>" + "".join(items) + "</ul>")
    show = per_ds.assign(**{
        "vs best": per_ds["best"],
        f"difference [{1 - alpha:.0%} CI]": [f"{d:.3g} [{lo:.3g}, {hi:.3g}]" for d, lo, hi in
                                             zip(per_ds["difference"], per_ds["ci_low"], per_ds["ci_high"],
                                                 strict=True)],
        "p (corrected t)": per_ds["p_value"].map(_p), "p Holm": per_ds["p_holm"].map(_p),
        "p Wilcoxon": per_ds["wilcoxon_p"].map(_p), "d_z": per_ds["d_z"].map(lambda v: f"{v:.2f}")})
    cols = ["dataset", "metric", "vs best", "method", "n_reps", f"difference [{1 - alpha:.0%} CI]", "d_z",
            "p (corrected t)", "p Holm", "p Wilcoxon"]
    if scores["variant"].nunique() > 1:
        cols.insert(1, "variant")
    if show["metric"].nunique() == 1:
        cols.remove("metric")
    parts.append("<p>Every method against the dataset's best (difference: best minus method, positive = the best "
                 "is better; Holm over the methods of a dataset; full table <code>tables/stats_per_dataset.tsv"
                 "</code>).</p>")
    parts.append(_html_df(show[cols], digits=3))
    return "\n".join(parts)


def _introduction(s: _Settings) -> str:
    return (
        "<h3>Over the datasets</h3>"
        "<p>Value of a method on a dataset: its test metric averaged over the evaluated numbers of selected "
        "features, then over the repetitions (the top-K average of the table above). "
        f"Friedman test over the datasets with the Nemenyi post-hoc test at &alpha; = {s.alpha:g} "
        "(Demšar 2006); Holm-corrected Wilcoxon signed-rank tests against the control method "
        f"<code>{html.escape(str(s.control))}</code> over the datasets when there are at least {s.min_datasets}, "
        "otherwise within each dataset over the repetitions; paired t-test win/tie/loss counts over the "
        f"repetitions at p = {s.wtl_alpha:g} with the sign-test critical number of wins (EnsCLS paper, "
        "Table 3).</p>")


def statistics(scores: pd.DataFrame, cfg: dict, figdir, *, n_samples=None) -> tuple[dict, str, list[dict]]:
    """Tables ``{"best", "per_dataset", "per_size", "friedman", "ranks", "wilcoxon",
    "win_tie_loss"}``, the HTML fragment and the figure index entries (stem, section,
    caption) of the statistics section. ``n_samples``: dataset -> number of samples (for
    the corrected t-test's n_train, n_test; :func:`split_sizes`)."""
    s = _Settings.from_config(cfg, figdir, n_samples)
    out = _Collected(html=["<h2 id='statistics'>Statistics</h2>"])
    n_methods = scores["method"].nunique()
    best = best_methods(scores, cfg, n_samples=n_samples, alpha=s.alpha)
    per_ds = per_dataset_comparisons(scores, cfg, n_samples=n_samples, alpha=s.alpha)
    if n_methods < 2:
        out.html.append("<p>Only one method: no comparison.</p>")
    else:
        out.html.append(_per_dataset_html(best, per_ds, scores, cfg, s.alpha))
        out.html.append(_introduction(s))
    variants = sorted(scores["variant"].unique())
    for var in variants if n_methods >= 2 else []:
        dv = scores[scores["variant"] == var]
        for metric in sorted(dv["metric"].unique()):
            d = dv[dv["metric"] == metric]
            if d["method"].nunique() < 2:
                continue
            tag = f"{metric}" if len(variants) == 1 else f"{metric}, {var}"
            out.html.append(f"<h4>{html.escape(tag)}</h4>")
            mat = st.summary_matrix(d, metric).dropna(axis=1)
            _friedman_nemenyi(out, s, mat, var, metric)
            _wilcoxon_against_control(out, s, d, mat, var, metric)
            _win_tie_loss(out, s, d, mat.shape[1], var, metric)
    per_size = []
    if cfg["report"].get("per_size_table") and n_methods >= 2:
        frame, fragment = per_size_table(scores, s.alpha)
        per_size = frame.to_dict("records")
        out.html.append(fragment)
    tables = {
        "best": best,
        "per_dataset": per_ds,
        "per_size": pd.DataFrame(per_size, columns=PER_SIZE_COLS),
        "friedman": pd.DataFrame(out.friedman, columns=FRIEDMAN_COLS),
        "ranks": pd.DataFrame(out.ranks, columns=RANK_COLS),
        "wilcoxon": pd.DataFrame(out.wilcoxon, columns=WILCOXON_COLS),
        "win_tie_loss": pd.DataFrame(out.win_tie_loss, columns=WTL_COLS),
    }
    return tables, "\n".join(out.html) + "\n", out.figures


def _friedman_nemenyi(out: _Collected, s: _Settings, mat: pd.DataFrame, var, metric) -> None:
    """Friedman over the datasets (columns of ``mat``), Nemenyi CD diagram (Demšar 2006)."""
    from .figures import cd_diagram  # lazy: matplotlib (about 0.5 s); the report job reads tables only

    n_ds = mat.shape[1]
    if n_ds < 2:
        out.html.append("<p>One dataset: no Friedman test (it ranks the methods over datasets).</p>")
        return
    f = st.friedman(mat, higher_is_better=metric_higher_is_better(metric))
    cd = st.nemenyi_cd(f.n_methods, n_ds, s.alpha)
    out.friedman.append(dict(variant=var, metric=metric, n_methods=f.n_methods, n_datasets=n_ds, chi2=f.statistic,
                             p_value=f.p_value, iman_davenport=f.iman_davenport,
                             iman_davenport_p=f.iman_davenport_p, cd=cd, alpha=s.alpha))
    out.ranks += [dict(variant=var, metric=metric, method=m, avg_rank=r) for m, r in f.avg_ranks.items()]
    stem = f"cd__{var}__{metric}"
    cd_diagram(f.avg_ranks, cd, s.figdir / stem)
    out.figures.append(dict(stem=stem, section="statistics", caption=caption(
        "cd", f"{n_ds} datasets; Nemenyi α = {s.alpha:g}, CD = {cd:.3f}.", metric=metric, variant=var)))
    verdict = "rejects" if f.p_value < s.alpha else "does not reject"
    out.html.append(
        f"<p>Friedman: χ²<sub>F</sub> = {f.statistic:.3f}, p = {f.p_value:.3g} (Iman-Davenport "
        f"F<sub>F</sub> = {f.iman_davenport:.3f}, p = {f.iman_davenport_p:.3g}) over {n_ds} datasets "
        f"and {f.n_methods} methods: {verdict} equal performance at α = {s.alpha:g}. "
        f"Nemenyi critical difference CD = {cd:.3f}.</p>")
    out.html.append(_html_df(pd.DataFrame({"method": f.avg_ranks.index, "average rank": f.avg_ranks.to_numpy()})))
    out.html.append(_figure_slot(stem))


def _wilcoxon_against_control(out: _Collected, s: _Settings, d: pd.DataFrame, mat: pd.DataFrame, var,
                              metric) -> None:
    """Holm-corrected Wilcoxon signed-rank tests against ``report.control``: over the datasets
    when there are enough, otherwise within each dataset over the repetitions."""
    control = s.control
    if control is None or control not in set(d["method"]):
        return
    n_ds = mat.shape[1]
    if n_ds >= s.min_datasets:
        tables = [("over datasets", mat)]
    else:
        pr = st.per_rep_values(d, metric)
        tables = [(f"{ds}: over repetitions", g.pivot(index="method", columns="rep", values="value").dropna(axis=1))
                  for ds, g in pr.groupby("dataset", sort=True)]
    rows = []
    for scope, tab in tables:
        if tab.shape[1] < 2 or control not in tab.index or tab.shape[0] < 2:
            continue
        w = st.wilcoxon_holm(tab, control, higher_is_better=metric_higher_is_better(metric), alpha=s.alpha)
        w.insert(0, "control", control)
        w.insert(0, "scope", scope)
        w["p_corrected"], w["p_corrected_holm"], w["decided_by"] = np.nan, np.nan, "Wilcoxon over datasets"
        if n_ds < s.min_datasets:  # repetitions share training samples: the corrected t-test decides
            _corrected_against_control(w, tab, control, metric, scope.split(":")[0], s)
        rows.append(w)
    if not rows:
        return
    w = pd.concat(rows, ignore_index=True)
    out.wilcoxon += [dict(variant=var, metric=metric, **r) for r in w.to_dict("records")]
    unit = "datasets" if n_ds >= s.min_datasets else "repetitions"
    n = int(w["n_datasets"].max())
    floor = st.wilcoxon_min_pvalue(n)
    cannot = (f" With {n} {unit} the exact test cannot give p below {floor:.3g} (2/2<sup>{n}</sup>): these tests "
              f"cannot reject at α = {s.alpha:g} whatever the data (at least {st.wilcoxon_pairs_needed(s.alpha)} "
              f"{unit} without ties are needed)." if floor > s.alpha else "")
    decide = ("" if unit == "datasets" else
              f" The repetitions share training samples, so the plain test over them is too optimistic: the "
              f"<i>different</i> column is decided by the {CORRECTED_T} (Nadeau &amp; Bengio 2003), Holm-corrected; "
              "the Wilcoxon p-values are shown for completeness.")
    out.html.append(f"<p>Tests against <b>{html.escape(control)}</b> over the "
                    f"{unit} (Holm-corrected, α = {s.alpha:g}); wins/ties/losses of the method against "
                    f"the control.{cannot}{decide}</p>")
    show = w.rename(columns={"n_datasets": "n", "p_value": "p Wilcoxon", "p_holm": "p Wilcoxon Holm",
                             "p_corrected": "p corrected t", "p_corrected_holm": "p corrected t Holm",
                             "reject": "different"})[
        ["scope", "method", "n", "wins", "ties", "losses", "mean_diff", "p Wilcoxon", "p Wilcoxon Holm",
         "p corrected t", "p corrected t Holm", "different"]]
    if unit == "datasets":
        show = show.drop(columns=["p corrected t", "p corrected t Holm"])
    out.html.append(_html_df(show))


def _corrected_against_control(w: pd.DataFrame, tab: pd.DataFrame, control, metric, dataset, s: _Settings) -> None:
    """Fill ``p_corrected`` / ``p_corrected_holm`` of one dataset's tests against the control over
    its repetitions (the corrected resampled t-test, Holm over the methods) and decide ``reject``
    by it."""
    n_train, n_test = _sizes_of(s.cfg, dataset, s.n_samples, None)
    sign = 1.0 if metric_higher_is_better(metric) else -1.0
    ps = []
    for m in w["method"]:
        pair = tab.loc[[m, control]].T.dropna()
        if len(pair) < 2 or np.allclose(pair[m], pair[control]):
            ps.append(1.0)
            continue
        ps.append(st.corrected_resampled_ttest(sign * pair[m].to_numpy(), sign * pair[control].to_numpy(),
                                               n_train=n_train, n_test=n_test)[1])
    w["p_corrected"] = ps
    w["p_corrected_holm"] = st.holm(np.asarray(ps, dtype=float))
    w["reject"] = w["p_corrected_holm"] <= s.alpha
    w["decided_by"] = CORRECTED_T


def _win_tie_loss(out: _Collected, s: _Settings, d: pd.DataFrame, n_ds: int, var, metric) -> None:
    """Paired t-test win/tie/loss over the repetitions, sign-test critical wins (EnsCLS Table 3)."""
    from .figures import win_tie_loss_heatmap  # lazy: matplotlib, as in _friedman_nemenyi

    n_reps = d.groupby(["dataset", "method"])["rep"].nunique().min()
    if n_reps < 2:
        return
    try:
        w = st.win_tie_loss(d, metric, alpha=s.wtl_alpha, higher_is_better=metric_higher_is_better(metric))
    except InputError as e:
        out.html.append(f"<p>No win/tie/loss matrix: {html.escape(str(e))}</p>")
        return
    crit = st.sign_test_critical(n_ds if n_ds else 1, s.wtl_alpha)
    out.win_tie_loss += [dict(variant=var, metric=metric, critical_wins=crit, alpha=s.wtl_alpha, **r)
                         for r in w.to_dict("records")]
    stem = f"wtl__{var}__{metric}"
    win_tie_loss_heatmap(w, s.figdir / stem)
    out.figures.append(dict(stem=stem, section="statistics", caption=caption(
        "wtl", f"Paired t-test at p = {s.wtl_alpha:g}.", metric=metric, variant=var)))
    wide = st.win_tie_loss_table(w)
    for a, b in {(r.method, r.opponent) for r in w.itertuples() if r.significant}:
        wide.loc[a, b] = f"**{wide.loc[a, b]}**"
    out.html.append(
        f"<p>Paired t-test win/tie/loss (row vs column) over {int(n_reps)}+ repetitions per dataset, "
        f"p = {s.wtl_alpha:g}; in bold where the row method wins significantly by the sign test "
        f"(critical number of wins for {n_ds} dataset(s): {crit}"
        f"{', unreachable' if crit > n_ds else ''}).</p>")
    out.html.append(_html_df(wide.reset_index(names="method")))
    out.html.append(_figure_slot(stem))


def per_size_table(scores: pd.DataFrame, alpha: float = 0.05) -> tuple[pd.DataFrame, str]:
    """EFSIS paper Table 2 layout: mean ± sd of the metric per dataset x method x number of
    features; per (dataset, size) the best method is marked "+" and every method whose
    values over the repetitions/folds are significantly worse than the best one's by a
    two-sided Wilcoxon signed-rank test (paired by repetition, p < alpha) is marked "*"."""
    rows = []
    for (var, metric, ds, k), g in scores.groupby(["variant", "metric", "dataset", "n_features"], sort=True):
        hib = metric_higher_is_better(metric)
        wide = g.pivot_table(index="rep", columns="method", values="value")
        means = wide.mean()
        best = means.idxmax() if hib else means.idxmin()
        for m in wide.columns:
            p = float("nan")
            if m != best:
                a, b = wide[best], wide[m]
                ok = a.notna() & b.notna()
                diff = (a[ok] - b[ok]).to_numpy()
                if ok.sum() >= 2 and (diff != 0).any():
                    p = st.signed_rank_test(diff, "zsplit")[1]
            worse = bool(p < alpha and ((means[m] < means[best]) if hib else (means[m] > means[best])))
            rows.append(dict(variant=var, metric=metric, dataset=ds, n_features=int(k), method=m,
                             mean=float(means[m]), sd=float(wide[m].std()), best=m == best, p_value=p, worse=worse))
    df = pd.DataFrame(rows, columns=PER_SIZE_COLS)
    parts = ["<h3>Per number of features (EFSIS Table 2 layout)</h3>",
             f"<p>Mean ± sd over the repetitions/folds; + = best method at that size, * = significantly worse "
             f"than the best (two-sided Wilcoxon signed-rank test over the repetitions, p &lt; {alpha:g}).</p>"]
    for (var, metric), g in df.groupby(["variant", "metric"], sort=True):
        cell = g.apply(lambda r: f"{r['mean']:.2f}±{r['sd']:.2f}" + ("+" if r["best"] else "")
                       + ("*" if r["worse"] else ""), axis=1)
        wide = g.assign(cell=cell).pivot(index=["dataset", "method"], columns="n_features", values="cell")
        parts.append(f"<p><b>{html.escape(metric)}</b>{'' if var == 'base' else ', ' + html.escape(var)}</p>")
        parts.append(_html_df(wide.reset_index()))
    return df, "\n".join(parts)


# ------------------------------------------------------ per dataset, over repetitions
def split_sizes(cfg: dict, n_samples: int | None = None) -> tuple[float, float]:
    """``(n_train, n_test)`` of one repetition of the configured protocol: holdout with
    ``test_size`` t (scikit-learn's StratifiedShuffleSplit: n_test = ceil(t n)), or one
    fold of ``n_folds``-fold cross-validation (n_test = n / k on average). Without
    ``n_samples`` the proportions (1 - t, t) or (k - 1, 1): the corrected t-test only
    uses their ratio."""
    sup = cfg["supervision"]
    if sup.get("protocol", "holdout") == "kfold":
        k = float(sup.get("n_folds", 10))
        return (k - 1.0, 1.0) if not n_samples else (n_samples - n_samples / k, n_samples / k)
    t = float(sup.get("test_size", 1 / 3))
    if not n_samples:
        return 1.0 - t, t
    n_test = float(np.ceil(t * n_samples - 1e-9))
    return float(n_samples) - n_test, n_test


def _sizes_of(cfg: dict, dataset, n_samples, sizes) -> tuple[float, float]:
    if sizes and dataset in sizes:
        return tuple(float(v) for v in sizes[dataset])
    return split_sizes(cfg, (n_samples or {}).get(dataset))


def _rep_tables(scores: pd.DataFrame):
    """(variant, metric, dataset, reps x methods table of the top-K averages) per group."""
    for (var, metric), d in scores.groupby(["variant", "metric"], sort=True):
        pr = st.per_rep_values(d, metric)
        for ds, g in pr.groupby("dataset", sort=True):
            yield var, metric, ds, g.pivot(index="rep", columns="method", values="value")


def _comparable_groups(scores: pd.DataFrame, cfg: dict, n_samples, sizes):
    """Per group of :func:`_rep_tables` with at least 2 methods: (variant, metric, dataset,
    table, higher_is_better, methods best first, n_train, n_test)."""
    for var, metric, ds, wide in _rep_tables(scores):
        hib = metric_higher_is_better(metric)
        ranked = _ranked_methods(wide, hib)
        if len(ranked) >= 2:
            yield (var, metric, ds, wide, hib, ranked, *_sizes_of(cfg, ds, n_samples, sizes))


def _ranked_methods(wide: pd.DataFrame, hib: bool) -> list:
    """Methods by mean over the repetitions, best first (ties: name order)."""
    means = wide.mean()
    means = means[means.notna()]
    key = -means if hib else means
    return sorted(means.index, key=lambda m: (float(key[m]), str(m)))


def _compare(wide: pd.DataFrame, best, other, hib: bool, n_train: float, n_test: float, alpha: float) -> dict:
    """``best`` against ``other`` over their shared repetitions; differences oriented so
    that positive = ``best`` is better."""
    pair = wide[[best, other]].dropna()
    J = len(pair)
    sign = 1.0 if hib else -1.0
    a, b = sign * pair[best].to_numpy(), sign * pair[other].to_numpy()
    diff = float(np.mean(a - b)) if J else float("nan")
    diff = 0.0 if abs(diff) <= 1e-12 else diff  # equal values up to rounding
    out = dict(n_reps=J, difference=diff, ci_low=float("nan"),
               ci_high=float("nan"), d_z=float("nan"), t=float("nan"), p_value=float("nan"),
               wilcoxon_p=float("nan"), wilcoxon_min_p=st.wilcoxon_min_pvalue(J), decidable=J >= 2)
    if J < 2:
        return out
    t, p = st.corrected_resampled_ttest(a, b, n_train=n_train, n_test=n_test)
    _, lo, hi = st.corrected_interval(a, b, n_train=n_train, n_test=n_test, alpha=alpha)
    d = a - b
    sd = float(d.std(ddof=1))
    nz = int((d != 0).sum())
    out.update(ci_low=lo, ci_high=hi, t=t, p_value=p, d_z=float(d.mean() / sd) if sd > 0 else float("nan"),
               wilcoxon_min_p=st.wilcoxon_min_pvalue(nz))
    if nz:
        out["wilcoxon_p"] = st.signed_rank_test(d, "wilcox")[1]
    return out


def _metric_words(metric: str) -> str:
    return {"auc": "AUC", "ari": "ARI", "red": "redundancy (RED)",
            "semisupervised_accuracy": "semi-supervised accuracy"}.get(metric, str(metric).replace("_", " "))


def _unit(cfg: dict) -> str:
    return "folds" if cfg.get("supervision", {}).get("protocol") == "kfold" else "repetitions"


def _sentence(ds, var, metric, best, runner, c: dict, alpha: float, unit: str = "repetitions") -> str:
    where = f"On {ds}" + ("" if var == "base" else f" ({var})")
    what = _metric_words(metric)
    lower = "lower " if not metric_higher_is_better(metric) else ""
    if c["n_reps"] < 2:
        return (f"{where}, {best} has the best mean {what} ({c['difference']:.3g} {'below' if lower else 'above'} "
                f"{runner}); "
                f"{c['n_reps']} shared {unit[:-1]}(s): no test can decide.")
    ci = f"{1 - alpha:.0%} CI {c['ci_low']:.3g} to {c['ci_high']:.3g}".replace("%", " %")
    test = f"{CORRECTED_T} p = {c['p_value']:.2g}"
    if abs(c["difference"]) <= 1e-12:
        return f"{where}, {best} and {runner} tie on {what} over {c['n_reps']} {unit} ({test})."
    if c["p_value"] < alpha:
        return f"{where}, {best} beats {runner} by {c['difference']:.3g} {lower}{what} ({ci}; {test})."
    return (f"{where}, {best} has the best mean {what}, {c['difference']:.3g} {'below' if lower else 'above'} "
            f"{runner} ({ci}; {test}): not a significant difference at α = {alpha:g} with {c['n_reps']} {unit}.")


def per_dataset_comparisons(scores: pd.DataFrame, cfg: dict, *, n_samples=None, sizes=None,
                            alpha: float | None = None) -> pd.DataFrame:
    """Per (variant, metric, dataset): the best method (best mean over the repetitions of its
    top-K average) against every other method over their shared repetitions: mean
    difference (positive = the best is better) with the corrected confidence interval,
    d_z, the corrected resampled t-test (Holm over the k-1 comparisons) and the exact
    Wilcoxon signed-rank test with the smallest p it could give (``wilcoxon_min_p``).
    ``n_samples``: dataset -> number of samples; ``sizes``: dataset -> (n_train, n_test)
    (overrides; default :func:`split_sizes`). Columns :data:`PER_DATASET_COLS`."""
    alpha = float(cfg.get("report", {}).get("alpha", 0.05) if alpha is None else alpha)
    rows = []
    for var, metric, ds, wide, hib, ranked, n_train, n_test in _comparable_groups(scores, cfg, n_samples,
                                                                                    sizes):
        group = []
        for m in ranked[1:]:
            c = _compare(wide, ranked[0], m, hib, n_train, n_test, alpha)
            c.pop("decidable")
            group.append(dict(variant=var, metric=metric, dataset=ds, best=ranked[0], method=m, n_train=n_train,
                              n_test=n_test, decidable_wilcoxon=bool(c["wilcoxon_min_p"] <= alpha), **c))
        ps = np.array([g["p_value"] for g in group], dtype=float)
        ok = np.isfinite(ps)
        adj = np.full(ps.size, np.nan)
        if ok.any():
            adj[ok] = st.holm(ps[ok])
        for g, a in zip(group, adj, strict=True):
            g["p_holm"] = float(a)
        rows += group
    return pd.DataFrame(rows, columns=PER_DATASET_COLS)


def best_methods(scores: pd.DataFrame, cfg: dict, *, n_samples=None, sizes=None,
                 alpha: float | None = None) -> pd.DataFrame:
    """The best method of every (dataset, variant, metric) against the runner-up.

    ``scores``: the tidy table (``dataset, variant, method, rep, n_features, metric,
    value``); a method's value per repetition is its mean over the evaluated numbers of
    features (the top-K average). ``best``/``runner_up``: best and second-best mean over
    the repetitions; ``difference``: their mean paired difference over the shared
    repetitions, positive = ``best`` is better (for lower-is-better metrics, how much
    lower); ``ci_low``/``ci_high``: its (1 - alpha) interval from the corrected
    resampled t-test (``test``, Nadeau & Bengio 2003; n_train, n_test from
    :func:`split_sizes` with ``n_samples`` or ``sizes``), ``p_value`` that test's
    two-sided p; ``decidable``: could the test reach alpha at all (at least 2 shared
    repetitions); ``sentence``: the result in plain English. ``alpha`` defaults to
    ``report.alpha`` (0.05). Columns :data:`BEST_COLS`.
    """
    alpha = float(cfg.get("report", {}).get("alpha", 0.05) if alpha is None else alpha)
    rows = []
    for var, metric, ds, wide, hib, ranked, n_train, n_test in _comparable_groups(scores, cfg, n_samples,
                                                                                    sizes):
        best, runner = ranked[0], ranked[1]
        c = _compare(wide, best, runner, hib, n_train, n_test, alpha)
        rows.append(dict(dataset=ds, variant=var, metric=metric, best=best, runner_up=runner,
                         difference=c["difference"], ci_low=c["ci_low"], ci_high=c["ci_high"],
                         test=CORRECTED_T if c["decidable"] else "none", p_value=c["p_value"],
                         decidable=bool(c["decidable"]), sentence=_sentence(ds, var, metric, best, runner, c, alpha,
                                                                          _unit(cfg))))
    return pd.DataFrame(rows, columns=BEST_COLS)
