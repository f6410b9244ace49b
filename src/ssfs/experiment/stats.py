"""Statistics for comparing feature-selection methods over several datasets.

Inputs are the tidy long evaluation tables (``dataset, method, rep, n_features,
metric, value``) or a methods x datasets summary matrix built from them by
:func:`summary_matrix`.

- :func:`friedman`: Friedman test on average ranks with the Iman-Davenport
  correction (Demšar 2006, Section 3.2.2).
- :func:`nemenyi_cd`, :func:`nemenyi_pvalues`, :func:`nemenyi_groups`: Nemenyi
  post-hoc test, critical difference and the groups a CD diagram connects.
- :func:`wilcoxon_holm`: Wilcoxon signed-rank tests of every method against a
  control, Holm step-down corrected (Demšar 2006, Sections 3.1.3 and 3.2.2);
  :func:`signed_rank_test`: scipy's test, its exact permutations vectorised.
- :func:`win_tie_loss`: the paired t-test win/tie/loss matrix of the EnsCLS
  paper's Table 3 with the sign-test verdict (:func:`sign_test`).
- :func:`rank_sum`: the rank-sum statistic T of the constraint-score paper
  (eq. 9, Tables 1-3).
- :func:`corrected_resampled_ttest`, :func:`corrected_interval`: two methods on one
  dataset over J repetitions of holdout / cross-validation, with Nadeau & Bengio's
  (2003) variance correction for the training sets the repetitions share;
  :func:`wilcoxon_min_pvalue`: the smallest p-value the exact signed-rank test can
  give with n pairs (whether it can decide at all).

Critical values come from scipy (``studentized_range``, ``binom``) rather than
copied tables; the tests check them against Demšar's printed tables. ``scipy.stats`` is
imported inside the functions that use it: its import costs 0.45 s of CPU, which every job
importing this module for its table helpers would pay (those drawing figures, the report).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ConfigError, InputError

TIDY_COLUMNS = ("dataset", "method", "rep", "n_features", "metric", "value")


# ----------------------------------------------------------------- reshaping
def _check_tidy(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    missing = [c for c in TIDY_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"evaluation table lacks column(s) {', '.join(missing)}; "
                         f"expected {', '.join(TIDY_COLUMNS)}")
    sub = df[df["metric"] == metric]
    if sub.empty:
        have = ", ".join(map(str, sorted(df["metric"].unique())))
        raise InputError(f"evaluation table has no rows for metric {metric!r} (has: {have})")
    return sub


def per_rep_values(df: pd.DataFrame, metric: str, *, n_features=None, by: Iterable[str] = ()) -> pd.DataFrame:
    """One value per ``dataset, method, rep`` (and the extra columns ``by``, e.g. a
    swept parameter): the mean of ``metric`` over the chosen numbers of features.

    ``n_features``: ``None`` = all evaluated numbers (e.g. "accuracy averaged over
    the top 20 features", EnsCLS Table 2), an int = exactly that number, a sequence
    = the mean over those numbers, a mapping ``dataset -> int or sequence`` = a
    choice per dataset (constraint-score Table 1 uses 6, 5, 8, ... features; datasets
    missing from the mapping are dropped).
    """
    sub = _check_tidy(df, metric)
    if n_features is not None:
        if isinstance(n_features, Mapping):
            keep = np.zeros(len(sub), dtype=bool)
            for ds, nf in n_features.items():
                nf = [nf] if np.isscalar(nf) else list(nf)
                keep |= ((sub["dataset"] == ds) & sub["n_features"].isin(nf)).to_numpy()
        else:
            nf = [n_features] if np.isscalar(n_features) else list(n_features)
            keep = sub["n_features"].isin(nf).to_numpy()
        sub = sub[keep]
        if sub.empty:
            raise InputError(f"no {metric!r} rows for n_features={n_features!r}")
    by = [c for c in by if c not in ("dataset", "method", "rep")]
    missing = [c for c in by if c not in sub.columns]
    if missing:
        raise InputError(f"evaluation table lacks column(s) {', '.join(missing)}")
    return sub.groupby(["dataset", *by, "method", "rep"], sort=True)["value"].mean().reset_index()


def summary_matrix(df: pd.DataFrame, metric: str, *, n_features=None) -> pd.DataFrame:
    """Methods x datasets matrix of the mean over repetitions of :func:`per_rep_values`."""
    pr = per_rep_values(df, metric, n_features=n_features)
    return pr.groupby(["method", "dataset"])["value"].mean().unstack("dataset")


def _matrix(table: pd.DataFrame) -> pd.DataFrame:
    """Validate a methods x datasets matrix (rows = methods)."""
    if not isinstance(table, pd.DataFrame):
        raise InputError("expected a pandas DataFrame with methods as rows and datasets as columns")
    if table.shape[0] < 2:
        raise InputError(f"need at least 2 methods to compare, got {table.shape[0]}")
    if table.shape[1] < 1:
        raise InputError("need at least 1 dataset")
    vals = table.to_numpy(dtype=float)
    if not np.isfinite(vals).all():
        r, c = np.argwhere(~np.isfinite(vals))[0]
        raise InputError(f"summary matrix has a missing/non-finite value for method "
                         f"{table.index[r]!r} on dataset {table.columns[c]!r}")
    return table.astype(float)


def ranks_per_dataset(table: pd.DataFrame, *, higher_is_better: bool = True,
                      ties: str = "average") -> pd.DataFrame:
    """Rank the methods (rows) within each dataset (column); 1 = best.

    ``ties`` is a :func:`scipy.stats.rankdata` method (Demšar: ``average``)."""
    from scipy import stats as sps  # lazy (module doc)

    t = _matrix(table)
    v = t.to_numpy()
    r = sps.rankdata(-v if higher_is_better else v, method=ties, axis=0)
    return pd.DataFrame(r, index=t.index, columns=t.columns)


# ------------------------------------------------------------------ Friedman
@dataclass(frozen=True)
class FriedmanResult:
    ranks: pd.DataFrame  # methods x datasets, 1 = best, ties averaged
    avg_ranks: pd.Series  # best (lowest) first
    statistic: float  # chi^2_F
    p_value: float  # chi^2 with k-1 df
    iman_davenport: float  # F_F
    iman_davenport_p: float  # F with k-1, (k-1)(N-1) df
    n_methods: int
    n_datasets: int


def friedman(table: pd.DataFrame, *, higher_is_better: bool = True,
             tie_correction: bool = False) -> FriedmanResult:
    """Friedman test over datasets (Demšar 2006, Section 3.2.2).

    ``table``: methods x datasets (e.g. :func:`summary_matrix`). Ranks are averaged
    over ties. chi^2_F = 12N/(k(k+1)) [sum_j R_j^2 - k(k+1)^2/4]; F_F = (N-1) chi^2_F /
    (N(k-1) - chi^2_F). ``tie_correction=True`` divides chi^2_F by
    1 - sum(t^3 - t)/(N k (k^2 - 1)) as :func:`scipy.stats.friedmanchisquare` does;
    the default follows Demšar's formula (and the EnsCLS paper).
    """
    from scipy import stats as sps  # lazy (module doc)

    R = ranks_per_dataset(table, higher_is_better=higher_is_better)
    k, N = R.shape
    Rj = R.mean(axis=1)
    chi2 = 12.0 * N / (k * (k + 1)) * (float((Rj**2).sum()) - k * (k + 1) ** 2 / 4.0)
    if tie_correction:
        v = _matrix(table).to_numpy()
        tsum = 0.0
        for col in v.T:  # loop over datasets (few), not features
            _, counts = np.unique(col, return_counts=True)
            tsum += float((counts**3 - counts).sum())
        c = 1.0 - tsum / (N * k * (k * k - 1))
        chi2 = chi2 / c if c > 0 else 0.0
    p = float(sps.chi2.sf(chi2, k - 1))
    denom = N * (k - 1) - chi2
    if N < 2:
        ff, pf = float("nan"), float("nan")
    elif denom <= 1e-12:  # every dataset ranks the methods identically
        ff, pf = float("inf"), 0.0
    else:
        ff = (N - 1) * chi2 / denom
        pf = float(sps.f.sf(ff, k - 1, (k - 1) * (N - 1)))
    order = np.lexsort((np.arange(k), Rj.to_numpy()))
    return FriedmanResult(R, Rj.iloc[order], float(chi2), p, float(ff), pf, k, N)


# ------------------------------------------------------------------- Nemenyi
def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value q_alpha of the Nemenyi test: studentized range quantile
    (k groups, infinite df) divided by sqrt(2) (Demšar 2006, Table 5a)."""
    from scipy import stats as sps  # lazy (module doc)

    if k < 2:
        raise ConfigError(f"the Nemenyi test needs at least 2 methods, got {k}")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    return float(sps.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


def nemenyi_cd(k: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Critical difference CD = q_alpha sqrt(k(k+1)/(6N)) (Demšar 2006, Section 3.2.2)."""
    if n_datasets < 1:
        raise ConfigError(f"need at least 1 dataset, got {n_datasets}")
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n_datasets)))


def nemenyi_pvalues(avg_ranks: Mapping | pd.Series, n_datasets: int) -> pd.DataFrame:
    """Pairwise Nemenyi p-values from average ranks: q = |R_i - R_j| / sqrt(k(k+1)/(6N)),
    p = P(studentized range(k, inf) >= q sqrt(2)) (as scikit-posthocs'
    ``posthoc_nemenyi_friedman``). Diagonal = 1."""
    from scipy import stats as sps  # lazy (module doc)

    r = pd.Series(avg_ranks, dtype=float)
    k = r.size
    se = np.sqrt(k * (k + 1) / (6.0 * n_datasets))
    q = np.abs(r.to_numpy()[:, None] - r.to_numpy()[None, :]) / se
    p = sps.studentized_range.sf(q * np.sqrt(2.0), k, np.inf)
    p = np.clip(np.where(q == 0, 1.0, p), 0.0, 1.0)
    return pd.DataFrame(p, index=r.index, columns=r.index)


def nemenyi_groups(avg_ranks: Mapping | pd.Series, cd: float) -> list[tuple[str, ...]]:
    """Maximal groups of methods whose average ranks all lie within less than ``cd``
    of each other, i.e. pairwise not significantly different (Demšar: significant
    iff the ranks differ by at least CD). Methods ordered best (lowest rank) first;
    groups are contiguous in that order, singletons omitted. These are the bars a
    CD diagram draws."""
    r = pd.Series(avg_ranks, dtype=float)
    order = np.lexsort((np.arange(r.size), r.to_numpy()))
    names = r.index.to_numpy()[order]
    vals = r.to_numpy()[order]
    groups: list[tuple[str, ...]] = []
    last_end = -1
    for i in range(vals.size):
        j = int(np.searchsorted(vals, vals[i] + cd, side="left")) - 1  # last with diff < cd
        if j > i and j > last_end:
            groups.append(tuple(str(n) for n in names[i : j + 1]))
            last_end = j
    return groups


# -------------------------------------------------------- Wilcoxon + Holm
def holm(pvalues) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values: p_(i) * (m - i + 1), made monotone,
    capped at 1; reject H_i iff adjusted p_i <= alpha."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out


def signed_rank_test(d, zero_method: str = "wilcox") -> tuple[float, float]:
    """(statistic, p-value) of scipy's two-sided Wilcoxon signed-rank test of the paired differences ``d``
    (``scipy.stats.wilcoxon(d, zero_method=...)``: statistic min(R+, R-)), the same numbers, faster where scipy
    permutes: with ties or zeros among at most 13 differences its p-value is exact over all 2^n sign flips, and
    scipy applies its statistic once per flip (up to 8,192 Python calls per test). Here R+ of every flip is one
    product with the ranks of |d| (which flips do not change), through the same ``permutation_test``: 800 random
    tests of 2-15 differences with ties and zeros, both zero methods, bit for bit scipy's in 2.4 s of CPU against
    78 s (the report's tables compare every method with the best at every size)."""
    from scipy import stats as sps  # lazy (module doc)

    d = np.asarray(d, dtype=float).ravel()
    nonzero = d != 0
    ranked = np.abs(d[nonzero]) if zero_method == "wilcox" else np.abs(d)
    permuted = d.size <= 13 and (not nonzero.all() or np.unique(ranked).size < ranked.size)
    if not permuted or zero_method not in ("wilcox", "zsplit") or not nonzero.any() or not np.isfinite(d).all():
        res = sps.wilcoxon(d, zero_method=zero_method, alternative="two-sided")
        return float(res.statistic), float(res.pvalue)
    ranks = np.zeros(d.size)
    ranks[nonzero if zero_method == "wilcox" else slice(None)] = sps.rankdata(ranked)
    half = float(ranks[~nonzero].sum()) / 2  # zsplit: a zero's rank split between R+ and R-

    def r_plus(x, axis=-1):
        return np.sum((np.moveaxis(x, axis, -1) > 0) * ranks, axis=-1) + half

    p = sps.permutation_test((d,), r_plus, permutation_type="samples", vectorized=True, alternative="two-sided",
                             axis=-1).pvalue
    return float(min(r_plus(d), np.sum((d < 0) * ranks) + half)), float(p)


def wilcoxon_holm(table: pd.DataFrame, control: str, *, higher_is_better: bool = True,
                  alpha: float = 0.05, zero_method: str = "zsplit") -> pd.DataFrame:
    """Wilcoxon signed-rank test (over datasets) of each method against ``control``,
    with Holm's correction over the k-1 comparisons.

    ``zero_method="zsplit"`` splits the ranks of zero differences between the two
    sums as Demšar (2006, Section 3.1.3) prescribes (scipy's default, ``wilcox``,
    drops them). ``statistic`` is scipy's two-sided T = min(R+, R-).
    Columns: method, n_datasets, wins, ties, losses (of the method against the
    control), mean_diff, statistic, p_value, p_holm, reject.
    """
    t = _matrix(table)
    if control not in t.index:
        raise ConfigError(f"control method {control!r} is not among {', '.join(map(str, t.index))}")
    sign = 1.0 if higher_is_better else -1.0
    rows = []
    for m in t.index:
        if m == control:
            continue
        d = sign * (t.loc[m].to_numpy() - t.loc[control].to_numpy())
        if np.all(d == 0):
            stat, p = float("nan"), 1.0
        else:
            stat, p = signed_rank_test(d, zero_method)
        rows.append(dict(method=m, n_datasets=d.size, wins=int((d > 0).sum()), ties=int((d == 0).sum()),
                         losses=int((d < 0).sum()), mean_diff=float(sign * d.mean()),
                         statistic=stat, p_value=p))
    out = pd.DataFrame(rows)
    out["p_holm"] = holm(out["p_value"].to_numpy())
    out["reject"] = out["p_holm"] <= alpha
    return out.sort_values(["p_value", "method"], kind="stable").reset_index(drop=True)


# ------------------------------------------- one dataset, repeated resampling
def _paired_differences(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise InputError(f"paired samples of different lengths: {a.size} and {b.size}")
    if a.size < 2:
        raise InputError(f"the corrected resampled t-test needs at least 2 repetitions, got {a.size}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise InputError("paired samples contain missing or non-finite values")
    return a - b


def _check_sizes(n_train, n_test) -> float:
    if not (n_train > 0 and n_test > 0):
        raise InputError(f"n_train and n_test must be positive, got {n_train} and {n_test}")
    return float(n_test) / float(n_train)


def corrected_resampled_ttest(a, b, *, n_train: float, n_test: float) -> tuple[float, float]:
    """Corrected resampled t-test (Nadeau & Bengio 2003, Mach. Learn. 52: 239-281, eq. of
    Section 4, "corrected resampled t-test"; Bouckaert & Frank 2004 for repeated CV).

    ``a``, ``b``: the two methods' values over the same J repetitions (paired: same
    split); d = a - b; t = mean(d) / sqrt((1/J + n_test/n_train) var(d, ddof=1)), two-sided
    p from Student's t with J-1 degrees of freedom. The n_test/n_train term accounts for
    the overlap of the training sets (the plain paired t-test, 1/J alone, is
    anti-conservative). A constant difference gives t = ±inf, p = 0 (identical
    values: t = 0, p = 1). Returns ``(statistic, pvalue)``.
    """
    from scipy import stats as sps  # lazy (module doc)

    d = _paired_differences(a, b)
    ratio = _check_sizes(n_train, n_test)
    J = d.size
    mean, var = float(d.mean()), float(d.var(ddof=1))
    if var <= (1e-12 * max(1.0, abs(mean))) ** 2:
        if abs(mean) <= 1e-15:
            return 0.0, 1.0
        return float(np.copysign(np.inf, mean)), 0.0
    t = mean / np.sqrt((1.0 / J + ratio) * var)
    return float(t), float(2.0 * sps.t.sf(abs(t), J - 1))


def corrected_interval(a, b, *, n_train: float, n_test: float, alpha: float = 0.05) -> tuple[float, float, float]:
    """``(mean(d), low, high)``: the (1 - alpha) confidence interval of the mean difference
    d = a - b that inverts :func:`corrected_resampled_ttest`: mean(d) ± t_{J-1, 1-alpha/2}
    sqrt((1/J + n_test/n_train) var(d, ddof=1))."""
    from scipy import stats as sps  # lazy (module doc)

    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    d = _paired_differences(a, b)
    ratio = _check_sizes(n_train, n_test)
    half = float(sps.t.ppf(1 - alpha / 2, d.size - 1) * np.sqrt((1.0 / d.size + ratio) * d.var(ddof=1)))
    m = float(d.mean())
    return m, m - half, m + half


def wilcoxon_min_pvalue(n: int) -> float:
    """Smallest two-sided p-value of the exact Wilcoxon signed-rank test with ``n`` non-zero
    paired differences: all of one sign, 2 / 2^n (5 pairs: 0.0625, so p < 0.05 is
    impossible; 6 pairs: 0.03125)."""
    if n < 1:
        return 1.0
    return float(min(1.0, 2.0 / 2.0**n))


def wilcoxon_pairs_needed(alpha: float = 0.05) -> int:
    """Fewest non-zero pairs with which the exact two-sided signed-rank test can reach p <= alpha."""
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    return int(np.ceil(np.log2(2.0 / alpha) - 1e-12))


# ------------------------------------------------------------- sign test
def sign_test_critical(n: int, alpha: float = 0.05, method: str = "exact") -> int:
    """Critical number of wins out of ``n`` datasets (Demšar 2006, Section 3.1.4).

    ``exact``: the smallest w with P(Binomial(n, 1/2) >= w) <= alpha; this
    reproduces Demšar's Table 3 (all of the alpha = 0.10 row; the alpha = 0.05 row
    except n = 23, 24 where the printed 17, 18 are one more) and the EnsCLS paper's
    "7 for 9 datasets at p = 0.1". ``normal``: ceil(n/2 + z_{1-alpha/2} sqrt(n)/2),
    Demšar's large-n approximation. Returns n + 1 when no count is significant.
    """
    from scipy import stats as sps  # lazy (module doc)

    if n < 1:
        raise ConfigError(f"the sign test needs at least 1 dataset, got {n}")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    if method == "exact":
        w = np.arange(n + 1)
        ok = sps.binom.sf(w - 1, n, 0.5) <= alpha
        return int(w[ok][0]) if ok.any() else n + 1
    if method == "normal":
        return int(np.ceil(n / 2.0 + sps.norm.ppf(1 - alpha / 2) * np.sqrt(n) / 2.0 - 1e-12))
    raise ConfigError(f"unknown sign-test method {method!r}; choose exact or normal")


def sign_test(wins: int, ties: int, losses: int, alpha: float = 0.05,
              method: str = "exact") -> bool:
    """Is the method with ``wins`` significantly better? Ties are split evenly
    between the two methods and, when their number is odd, one is ignored
    (Demšar 2006; EnsCLS paper Section 5.2)."""
    half = ties // 2
    n = wins + losses + 2 * half
    if n == 0:
        return False
    return wins + half >= sign_test_critical(n, alpha, method)


# --------------------------------------------- paired t-test win/tie/loss
def win_tie_loss(df: pd.DataFrame, metric: str, *, n_features=None, alpha: float = 0.1,
                 higher_is_better: bool = True, sign_alpha: float | None = None,
                 sign_method: str = "exact") -> pd.DataFrame:
    """Win/tie/loss counts of every ordered pair of methods (EnsCLS paper, Table 3).

    Per dataset, the per-repetition values (:func:`per_rep_values`, by default the
    mean over all evaluated numbers of features, as Table 2) of the two methods are
    compared with a paired t-test over the repetitions they share; p < ``alpha`` is a
    win or a loss by the sign of the mean difference, otherwise a tie (also when
    the values are identical); a constant non-zero difference counts as a win/loss. ``significant`` is the sign test
    (:func:`sign_test`) at ``sign_alpha`` (default ``alpha``) over the datasets.
    Columns: method, opponent, wins, ties, losses, n_datasets, significant.
    """
    from scipy import stats as sps  # lazy (module doc)

    pr = per_rep_values(df, metric, n_features=n_features)
    methods = sorted(pr["method"].unique(), key=str)
    sign = 1.0 if higher_is_better else -1.0
    counts = {(a, b): [0, 0, 0] for a in methods for b in methods if a != b}
    for ds, g in pr.groupby("dataset", sort=True):  # loop over datasets and method pairs
        wide = g.pivot(index="rep", columns="method", values="value")
        for ia, a in enumerate(methods):
            for b in methods[ia + 1 :]:
                if a not in wide or b not in wide:
                    continue
                pair = wide[[a, b]].dropna()
                if len(pair) < 2:
                    raise InputError(f"dataset {ds!r}: methods {a!r} and {b!r} share {len(pair)} "
                                     "repetition(s); the paired t-test needs at least 2")
                d = sign * (pair[a].to_numpy() - pair[b].to_numpy())
                if np.ptp(d) <= 1e-12 * max(1.0, float(np.abs(d).max())):
                    # constant difference: t = +-inf (always better) or undefined (identical)
                    p = 0.0 if abs(d.mean()) > 1e-12 else 1.0
                else:
                    p = sps.ttest_rel(pair[a].to_numpy(), pair[b].to_numpy()).pvalue
                if np.isfinite(p) and p < alpha and d.mean() != 0:
                    k = 0 if d.mean() > 0 else 2
                else:
                    k = 1
                counts[(a, b)][k] += 1
                counts[(b, a)][2 - k] += 1
    sa = alpha if sign_alpha is None else sign_alpha
    rows = [dict(method=a, opponent=b, wins=w, ties=t, losses=lo, n_datasets=w + t + lo,
                 significant=sign_test(w, t, lo, sa, sign_method))
            for (a, b), (w, t, lo) in counts.items()]
    return pd.DataFrame(rows)


def win_tie_loss_table(wtl: pd.DataFrame) -> pd.DataFrame:
    """Wide ``method x opponent`` table of ``"w/t/l"`` strings (``"–"`` on the diagonal),
    as printed in the EnsCLS paper's Table 3."""
    cell = wtl.assign(cell=wtl["wins"].astype(str) + "/" + wtl["ties"].astype(str) + "/"
                      + wtl["losses"].astype(str))
    names = sorted(set(wtl["method"]) | set(wtl["opponent"]), key=str)
    wide = cell.pivot(index="method", columns="opponent", values="cell").reindex(index=names, columns=names)
    for n in names:
        wide.loc[n, n] = "–"
    return wide.fillna("")


# ----------------------------------------------------------- rank sum T
def rank_sum(df: pd.DataFrame, metric: str, *, n_features=None, by: Iterable[str] = (),
             higher_is_better: bool = True, ties: str = "min") -> pd.DataFrame:
    """Rank-sum statistic T of the constraint-score paper (eq. 9, Tables 1-3).

    In every repetition (run q) the methods are ranked by their value (1 = best);
    T^* = sum over runs of the rank of method *. Lower is better.
    ``ties``: the paper says "scores with the same accuracy have the same rank";
    its Table 1 sums (e.g. 191 + 277 + 206 + 157 = 831 < 1000 for 100 runs of 4
    scores) rule out averaged ties, so the default is ``min`` (1, 2, 2, 4);
    ``dense`` (1, 2, 2, 3) and ``average`` are accepted.
    ``n_features``: as in :func:`per_rep_values`; the paper ranks at one number of
    selected features per dataset (a mapping). One row of the result per dataset and
    value of the extra columns ``by`` (e.g. a column holding the number of
    constraints, Tables 2-3); columns = methods, plus ``n_runs``.
    Runs where a method has no value are refused.
    """
    from scipy import stats as sps  # lazy (module doc)

    if ties not in ("min", "dense", "average", "max"):
        raise ConfigError(f"unknown ties rule {ties!r}; choose min, dense, average or max")
    by = ["dataset", *[c for c in by if c != "dataset"]]
    pr = per_rep_values(df, metric, n_features=n_features, by=by)
    rows = []
    for key, g in pr.groupby(by, sort=True):
        wide = g.pivot(index="rep", columns="method", values="value")
        if wide.isna().any().any():
            bad = wide.columns[wide.isna().any()].tolist()
            raise InputError(f"group {key!r}: method(s) {bad} lack a value in some run; "
                             "the rank sum needs every method in every run")
        v = wide.to_numpy()
        r = sps.rankdata(-v if higher_is_better else v, method=ties, axis=1)
        key = key if isinstance(key, tuple) else (key,)
        sums = dict(zip(wide.columns, r.sum(axis=0), strict=True))
        rows.append(dict(zip(by, key, strict=True)) | sums | {"n_runs": len(wide)})
    out = pd.DataFrame(rows).set_index(by)
    return out
