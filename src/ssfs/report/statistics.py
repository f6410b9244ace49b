"""The statistics section of the report: Friedman + Nemenyi CD diagram, Holm-Wilcoxon
against a control method, and the paired t-test win/tie/loss matrix with the sign test
(Demšar 2006; EnsCLS paper Section 5.2, Table 3), per variant and metric.

The value of a method on a dataset is its "top-K average": per repetition the mean
of the metric over the evaluated numbers of features, then the mean over
repetitions (:func:`ssfs.experiment.stats.summary_matrix`, EnsCLS Table 2).

Choices (documented in the report):
- Friedman/Nemenyi need >= 2 methods and >= 2 datasets; datasets where a method has
  no value (a subset method that selected too few features) are left out.
- Holm-Wilcoxon vs ``report.control``: over the datasets when there are at least
  ``report.wilcoxon_min_datasets`` (default 5: with fewer, no two-sided test can reach
  p < 0.05), otherwise within each dataset over the repetitions (paired by
  repetition: same split and supervision); the latter speaks about that dataset only.
- Win/tie/loss: paired t-test over the repetitions at ``report.wtl_alpha`` (EnsCLS:
  0.1); the sign test at the same level gives the critical number of wins.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import InputError
from ..experiment import stats as st
from ..experiment.evaluation import metric_higher_is_better
from .render import html_table

FRIEDMAN_COLS = ["variant", "metric", "n_methods", "n_datasets", "chi2", "p_value", "iman_davenport",
                 "iman_davenport_p", "cd", "alpha"]
RANK_COLS = ["variant", "metric", "method", "avg_rank"]
WILCOXON_COLS = ["variant", "metric", "scope", "control", "method", "n_datasets", "wins", "ties", "losses",
                 "mean_diff", "statistic", "p_value", "p_holm", "reject"]
PER_SIZE_COLS = ["variant", "metric", "dataset", "n_features", "method", "mean", "sd", "best", "p_value",
                 "worse"]
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

    @classmethod
    def from_config(cls, cfg: dict, figdir) -> _Settings:
        rep = cfg["report"]
        return cls(float(rep.get("alpha", 0.05)), float(rep.get("wtl_alpha", 0.1)),
                   int(rep.get("wilcoxon_min_datasets", 5)), rep.get("control"), Path(figdir))


def _introduction(s: _Settings) -> str:
    return (
        "<p>Value of a method on a dataset: its test metric averaged over the evaluated numbers of selected "
        "features, then over the repetitions (the top-K average of the table above). "
        f"Friedman test over the datasets with the Nemenyi post-hoc test at &alpha; = {s.alpha:g} "
        "(Demšar 2006); Holm-corrected Wilcoxon signed-rank tests against the control method "
        f"<code>{html.escape(str(s.control))}</code> over the datasets when there are at least {s.min_datasets}, "
        "otherwise within each dataset over the repetitions; paired t-test win/tie/loss counts over the "
        f"repetitions at p = {s.wtl_alpha:g} with the sign-test critical number of wins (EnsCLS paper, "
        "Table 3).</p>")


def statistics(scores: pd.DataFrame, cfg: dict, figdir) -> tuple[dict, str, list[dict]]:
    """Tables ``{"per_size", "friedman", "ranks", "wilcoxon", "win_tie_loss"}``, the HTML
    fragment and the figure index entries (stem, section, caption) of the statistics section."""
    s = _Settings.from_config(cfg, figdir)
    out = _Collected(html=["<h2 id='statistics'>Statistics</h2>"])
    n_methods = scores["method"].nunique()
    if n_methods < 2:
        out.html.append("<p>Only one method: no comparison.</p>")
    else:
        out.html.append(_introduction(s))
    variants = sorted(scores["variant"].unique())
    for var in variants if n_methods >= 2 else []:
        dv = scores[scores["variant"] == var]
        for metric in sorted(dv["metric"].unique()):
            d = dv[dv["metric"] == metric]
            if d["method"].nunique() < 2:
                continue
            tag = f"{metric}" if len(variants) == 1 else f"{metric}, {var}"
            out.html.append(f"<h3>{html.escape(tag)}</h3>")
            mat = st.summary_matrix(d, metric).dropna(axis=1)
            _friedman_nemenyi(out, s, mat, var, metric, tag)
            _wilcoxon_against_control(out, s, d, mat, var, metric)
            _win_tie_loss(out, s, d, mat.shape[1], var, metric, tag)
    per_size = []
    if cfg["report"].get("per_size_table") and n_methods >= 2:
        frame, fragment = per_size_table(scores, s.alpha)
        per_size = frame.to_dict("records")
        out.html.append(fragment)
    tables = {
        "per_size": pd.DataFrame(per_size, columns=PER_SIZE_COLS),
        "friedman": pd.DataFrame(out.friedman, columns=FRIEDMAN_COLS),
        "ranks": pd.DataFrame(out.ranks, columns=RANK_COLS),
        "wilcoxon": pd.DataFrame(out.wilcoxon, columns=WILCOXON_COLS),
        "win_tie_loss": pd.DataFrame(out.win_tie_loss, columns=WTL_COLS),
    }
    return tables, "\n".join(out.html) + "\n", out.figures


def _friedman_nemenyi(out: _Collected, s: _Settings, mat: pd.DataFrame, var, metric, tag) -> None:
    """Friedman over the datasets (columns of ``mat``), Nemenyi CD diagram (Demšar 2006)."""
    from .figures import cd_diagram

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
    out.figures.append(dict(stem=stem, section="statistics", caption=(
        f"Critical-difference diagram, {tag}: average rank of each method over {n_ds} datasets "
        f"(1 = best, on the right); methods joined by a bar are not significantly different "
        f"(Nemenyi, α = {s.alpha:g}, CD = {cd:.3f}).")))
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
        rows.append(w)
    if not rows:
        return
    w = pd.concat(rows, ignore_index=True)
    out.wilcoxon += [dict(variant=var, metric=metric, **r) for r in w.to_dict("records")]
    unit = "datasets" if n_ds >= s.min_datasets else "repetitions"
    out.html.append(f"<p>Wilcoxon signed-rank tests against <b>{html.escape(control)}</b> over the "
                    f"{unit} (Holm-corrected, α = {s.alpha:g}); wins/ties/losses of the method against "
                    "the control.</p>")
    show = w.rename(columns={"n_datasets": "n"})[
        ["scope", "method", "n", "wins", "ties", "losses", "mean_diff", "p_value", "p_holm", "reject"]]
    out.html.append(_html_df(show))


def _win_tie_loss(out: _Collected, s: _Settings, d: pd.DataFrame, n_ds: int, var, metric, tag) -> None:
    """Paired t-test win/tie/loss over the repetitions, sign-test critical wins (EnsCLS Table 3)."""
    from .figures import win_tie_loss_heatmap

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
    out.figures.append(dict(stem=stem, section="statistics", caption=(
        f"Win/tie/loss, {tag}: cell (row i, column j) = number of datasets where method i is "
        f"significantly better / not different / significantly worse than j (paired t-test over the "
        f"repetitions, p = {s.wtl_alpha:g}); bold = significant by the sign test.")))
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
    from scipy.stats import wilcoxon

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
                    p = float(wilcoxon(a[ok], b[ok], zero_method="zsplit").pvalue)
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


BEST_COLS = ["dataset", "variant", "metric", "best", "runner_up", "difference", "ci_low", "ci_high", "test",
             "p_value", "decidable", "sentence"]


def best_methods(scores: pd.DataFrame, cfg: dict) -> pd.DataFrame:
    """Per dataset, variant and metric: the method with the best top-K average, its difference to
    the runner-up (mean over repetitions of the paired per-repetition differences, t interval at
    ``report.alpha``) and a paired t-test over the repetitions; ``decidable`` = p < alpha.
    Minimal version for the report's summary (issue #14); columns as agreed with issue #16."""
    import numpy as np
    from scipy import stats as sps

    alpha = cfg.get("report", {}).get("alpha", 0.05)
    rows = []
    per_rep = scores.groupby(["dataset", "variant", "metric", "method", "rep"], sort=True)["value"].mean()
    for (ds, var, metric), sub in per_rep.groupby(level=[0, 1, 2], sort=True):
        wide = sub.droplevel([0, 1, 2]).unstack("method")
        means = wide.mean().dropna()
        if len(means) < 2:
            continue
        hib = metric_higher_is_better(metric)
        ranked = means.sort_values(ascending=not hib)
        best, second = ranked.index[0], ranked.index[1]
        d = (wide[best] - wide[second]).dropna().to_numpy()
        diff = float(d.mean()) if d.size else float("nan")
        if d.size >= 2 and np.std(d) > 0:
            p = float(sps.ttest_rel(wide[best], wide[second], nan_policy="omit").pvalue)
            half = float(sps.t.ppf(1 - alpha / 2, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))
        else:
            p, half = float("nan"), float("nan")
        decidable = bool(np.isfinite(p) and p < alpha)
        if abs(diff) < 1e-9 * max(1.0, abs(means[best])):
            rows.append(dict(dataset=ds, variant=var, metric=metric, best=best, runner_up=second, difference=0.0,
                             ci_low=diff - half, ci_high=diff + half, test="paired t-test", p_value=p,
                             decidable=False, sentence=f"On {ds}, {best} and {second} tie on mean {metric} "
                                                       f"({means[best]:.3g}) in every repetition."))
            continue
        sentence = (f"On {ds}, {best} has the {'highest' if hib else 'lowest'} mean {metric} "
                    f"({means[best]:.3g}), {abs(diff):.3g} {'above' if hib else 'below'} the runner-up {second} "
                    f"({1 - alpha:.0%} CI of the difference {diff - half:.3g} to {diff + half:.3g}; paired t-test "
                    f"over {d.size} repetitions p = {p:.3g}): "
                    + ("the difference is significant." if decidable else
                       "the test cannot decide between them."))
        rows.append(dict(dataset=ds, variant=var, metric=metric, best=best, runner_up=second, difference=diff,
                         ci_low=diff - half, ci_high=diff + half, test="paired t-test", p_value=p,
                         decidable=decidable, sentence=sentence))
    return pd.DataFrame(rows, columns=BEST_COLS)
