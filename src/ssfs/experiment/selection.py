"""Selection mode: from rankings on resamples of the user's data to one consensus feature list
with selection frequencies, its stability and an error bound (issue #14).

* Resamples (:func:`resamples`): complementary pairs of half-samples (CPSS, Shah & Samworth 2013,
  Sec. 2.2) or bootstrap samples, drawn *within groups*: every labeled class and the unlabeled
  samples are split separately, so each half keeps labels of every class.
* Aggregation across methods (:func:`aggregate`): ``mean_rank`` (default; the Borda count of
  complete rankings, linear in the ranks, so one method cannot veto a feature), ``rank_product``
  (geometric mean of the ranks, Breitling et al. 2004: rewards features ranked very high by some
  method) or ``median_rank`` (robust to one dissenting method).
* Frequency (:func:`consensus`): fraction of resamples in which a feature is in the top ``top``
  of the aggregated ranking: its estimated selection probability (Meinshausen & Bühlmann 2010,
  eq. 7). The consensus rank orders the features by frequency, ties by the aggregated rank on the
  full data, then by column.
* Error bound (:func:`error_bound`): Meinshausen & Bühlmann (2010) Theorem 1 and Shah & Samworth
  (2013) Theorem 1, eq. (8) (unimodal) and eq. (9)-(10) (r-concave), with the constants, ranges and
  algorithm of the R package stabs (Hofner & Hothorn; checked against its saved test outputs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..methods._shared.stability import nogueira

SCHEMES = ("cpss", "bootstrap")
AGGREGATIONS = ("mean_rank", "rank_product", "median_rank")


def _groups(y: np.ndarray) -> list[np.ndarray]:
    """Sample indices of each labeled class (in class order), then the unlabeled ones."""
    y = np.asarray(y)
    groups = [np.flatnonzero(y == c) for c in np.unique(y[y >= 0])]
    unl = np.flatnonzero(y < 0)
    return groups + ([unl] if unl.size else [])


def resamples(y: np.ndarray, n: int, scheme: str, rng: np.random.Generator, class_names=None) -> list[np.ndarray]:
    """``n`` sorted index arrays of samples. ``cpss``: n/2 complementary pairs; each group of
    size m is permuted and its first floor(m/2) samples go to one half, the next floor(m/2) to the
    other (one sample of an odd group sits out, as in CPSS). ``bootstrap``: n draws with
    replacement of each group's size within each group. ``class_names`` (by code) name the
    classes in errors."""
    if scheme not in SCHEMES:
        raise InputError(f"selection scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    groups = _groups(y)
    labeled = groups[:-1] if groups and np.asarray(y)[groups[-1][0]] < 0 else groups
    out: list[np.ndarray] = []
    if scheme == "cpss":
        if n % 2:
            raise InputError(f"selection.resamples must be even with scheme cpss (complementary pairs), got {n}")
        small = [int(np.asarray(y)[g[0]]) for g in labeled if g.size < 2]
        if small:
            names = ", ".join(repr(str(class_names[c])) if class_names is not None else str(c) for c in small)
            raise InputError(f"selection scheme cpss: class(es) {names} have fewer than 2 labeled samples, "
                             "so a half-sample would miss the class; label more samples or use scheme bootstrap")
        for _ in range(n // 2):
            a, b = [], []
            for g in groups:
                perm = rng.permutation(g)
                h = g.size // 2
                a.append(perm[:h])
                b.append(perm[h:2 * h])
            out += [np.sort(np.concatenate(a)), np.sort(np.concatenate(b))]
    else:
        for _ in range(n):
            out.append(np.sort(np.concatenate([rng.choice(g, size=g.size, replace=True) for g in groups])))
    return out


def ranks_from_order(order, p: int) -> np.ndarray:
    """Rank (1 = best) of every feature from an ordering best first; features absent from a
    partial ordering share the rank after the last listed one."""
    order = np.asarray(order, dtype=np.int64)
    r = np.full(p, order.size + 1, dtype=np.float64)
    r[order] = np.arange(1, order.size + 1)
    return r


def aggregate(ranks: np.ndarray, how: str = "mean_rank") -> np.ndarray:
    """Aggregated score (lower = better) of each feature from ``ranks`` (methods × features)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if how == "mean_rank":
        return ranks.mean(axis=0)
    if how == "rank_product":
        return np.exp(np.log(ranks).mean(axis=0))
    if how == "median_rank":
        return np.median(ranks, axis=0)
    raise InputError(f"selection aggregation must be one of {', '.join(AGGREGATIONS)}, got {how!r}")


def order_by(score: np.ndarray) -> np.ndarray:
    """Feature indices by increasing score, ties by column (stable)."""
    return np.argsort(np.asarray(score), kind="stable")


def consensus(full_ranks: dict, resample_ranks: dict, top: int, how: str = "mean_rank"):
    """The consensus table and the selection matrix.

    ``full_ranks``: method -> ranks (p,) on the full data; ``resample_ranks``: method -> ranks
    (B, p) on the B resamples (same resamples for every method). Returns (table, Z) where Z (B, p)
    is True where the feature is in the top ``top`` of the aggregated ranking of a resample.
    """
    methods = sorted(full_ranks)
    R = np.stack([np.asarray(resample_ranks[m], dtype=np.float64) for m in methods])  # (M, B, p)
    _, B, p = R.shape
    top = min(top, p)
    agg = np.stack([aggregate(R[:, b], how) for b in range(B)])  # (B, p)
    Z = np.zeros((B, p), dtype=bool)
    for b in range(B):
        Z[b, order_by(agg[b])[:top]] = True
    freq = Z.mean(axis=0)
    full_agg = aggregate(np.stack([full_ranks[m] for m in methods]), how)
    # frequency descending, then aggregated full-data rank, then column
    order = np.lexsort((np.arange(p), full_agg, -freq))
    table = pd.DataFrame({"index": order, "consensus_rank": np.arange(1, p + 1), "frequency": freq[order],
                          "aggregated_rank": full_agg[order]})
    for m in methods:
        table[f"rank_{m}"] = np.asarray(full_ranks[m])[order].astype(np.int64)
    for m in methods:
        Zm = np.asarray(resample_ranks[m]) <= top
        table[f"frequency_{m}"] = Zm.mean(axis=0)[order]
    return table, Z


def error_bound(q: int, p: int, threshold: float, n_resamples: int, scheme: str) -> dict:
    """Bound on the expected number of falsely selected features at selection frequency >= threshold.

    q = features selected per resample (``top``), p = features. Meinshausen & Bühlmann (2010),
    Theorem 1: E[V] <= q^2 / ((2 pi - 1) p) for pi in (1/2, 1], V = noise features selected,
    assuming the noise features' selection indicators are exchangeable and the procedure is not
    worse than random guessing, for subsamples of size floor(n/2). Shah & Samworth (2013),
    Theorem 1: the same number bounds, with complementary pairs and without those assumptions,
    the expected number of selected features of low selection probability (<= q/p). Their
    eq. (8), under unimodality of the simultaneous-selection probabilities, gives
    E <= C(pi, B) q^2 / p with B pairs: C = 1 / (2 (2 pi - 1 - 1/(2B))) for
    pi in [min(1/2 + theta^2, 1/2 + 1/(2B) + 3 theta^2 / 4), 3/4] (theta = q/p), and
    C = 4 (1 - pi + 1/(2B)) / (1 + 1/B) for pi in (3/4, 1] (and only where the first constant is
    positive, pi > 1/2 + 1/(4B), as stabs' grid of cutoffs 1/2 + j/(2B), j >= 2); constants and range as the R
    package stabs (Hofner & Hothorn, ``um_const`` in R/helpers.R, from the paper's authors'
    code). Under r-concavity (eq. 9-10, :func:`r_concave_bound`) the bound also covers thresholds
    in (q/p, 1/2]. Bootstrap resamples satisfy neither theorem: no bound is given.
    """
    pi, theta = float(threshold), q / p
    out = {"q": int(q), "p": int(p), "threshold": pi, "scheme": scheme,
           "meinshausen_buhlmann": None, "cpss_unimodal": None, "cpss_r_concave": None}
    if scheme != "cpss":
        out["statement"] = ("bootstrap resamples: the stability-selection bounds assume subsamples of half the "
                            "samples drawn without replacement (scheme: cpss); no error bound is given")
        return out
    B = n_resamples // 2
    if pi <= 0.5:
        # only the r-concave bound reaches below 1/2 (stabs: any threshold above q/p)
        out["cpss_r_concave"] = r_concave_bound(q, p, pi, B)
        out["statement"] = ("threshold <= 1/2: Meinshausen & Buhlmann's and the unimodal bound need a threshold "
                            "above 1/2" + (f"; under r-concavity (Shah & Samworth 2013, eq. 9-10, as the R package "
                                           f"stabs): <= {out['cpss_r_concave']:.4g}"
                                           if out["cpss_r_concave"] is not None else "; no error bound is given"))
        return out
    mb = q * q / ((2 * pi - 1) * p)
    out["meinshausen_buhlmann"] = mb
    lo = min(0.5 + theta**2, 0.5 + 1 / (2 * B) + 0.75 * theta**2)
    if lo <= pi <= 0.75 and 2 * pi - 1 - 1 / (2 * B) > 0:  # stabs' cutoff grid starts at 1/2 + 1/B
        out["cpss_unimodal"] = q * q / p / (2 * (2 * pi - 1 - 1 / (2 * B)))
    elif pi > 0.75:
        out["cpss_unimodal"] = q * q / p * 4 * (1 - pi + 1 / (2 * B)) / (1 + 1 / B)
    out["cpss_r_concave"] = r_concave_bound(q, p, pi, B)
    out["statement"] = (
        f"E[false selections] <= q^2/((2*pi-1)*p) = {mb:.4g} (Meinshausen & Buhlmann 2010, Thm 1: assumes the "
        "noise features are exchangeable and the selection is not worse than random; Shah & Samworth 2013, "
        "Thm 1: holds for complementary pairs without these assumptions if 'false' means selection "
        "probability <= q/p)"
        + (f"; under unimodality of the selection probabilities (Shah & Samworth 2013, eq. 8): "
           f"<= {out['cpss_unimodal']:.4g}" if out["cpss_unimodal"] is not None else
           "; the unimodal refinement (Shah & Samworth 2013, eq. 8) does not apply at this threshold")
        + (f"; under r-concavity (their eq. 9-10, as the R package stabs): <= {out['cpss_r_concave']:.4g}"
           if out["cpss_r_concave"] is not None else ""))
    return out


def _r_concave_tail(theta: float, which: int, B: int, r: float) -> float | None:
    """stabs' ``D``: the largest upper-tail probability P(X >= which / B) over r-concave
    distributions on {0, 1/B, ..., 1} with mean ``theta`` (Shah & Samworth 2013, Sec. 3.3;
    their code, as the R package stabs); 1 below the tail's start, None when theta is too large
    (stabs stops there). Per k the tail is maximised over a in [a_{k+1}, a_k] (stabs: ``optimize``,
    which stops within its tolerance of an end point); the maximum often lies at the end point, so
    both ends are evaluated too: the supremum, at most 6 % above stabs' numbers, never below."""
    from scipy.optimize import brentq, minimize_scalar

    s, tB = 1.0 / r, theta * B
    k0 = int(np.ceil(2 * tB)) + 1
    if which < k0:
        return 1.0
    if k0 >= B:  # stabs: k0 > B stops; k0 = B leaves no interval [a_{k+1}, a_k] to maximise over
        return None

    def mean_gap(a, k):
        w = (a + np.arange(k + 1)) ** s
        return float((np.arange(k + 1) * w).sum() / w.sum() - tB)

    a = np.full(B + 1, 1e5)
    for k in range(k0, B + 1):
        a[k] = brentq(mean_gap, 1e-5, a[k - 1], args=(k,), xtol=np.finfo(float).eps ** 0.75)

    def tail(x, k):
        j = np.arange(k + 1)
        return 1.0 - (k + 1 - tB) * ((x + np.arange(which)) ** s).sum() / ((k + 1 - j) * (x + j) ** s).sum()

    best = 0.0
    for k in range(k0, B):
        res = minimize_scalar(lambda x, k=k: -tail(x, k), bounds=(a[k + 1], a[k]), method="bounded")
        best = max(best, -float(res.fun), tail(a[k + 1], k), tail(a[k], k))
    return best


def r_concave_bound(q: int, p: int, threshold: float, B: int) -> float | None:
    """E[false selections] under r-concavity (Shah & Samworth 2013, eq. 9-10, r = -1/2 for the
    pairs' simultaneous selection, -1/4 for single selections), as stabs' ``minD`` times p: None
    (no bound) for q above stabs' ``maxQ`` (ceil(4 B q / p) + 1 >= 2 B) or threshold <= q/p."""
    theta = q / p
    if np.ceil(q * (4 * B / p)) + 1 - 2 * B >= 0 or threshold <= theta:
        return None
    which = int(np.ceil(float(f"{threshold * 2 * B:.10g}")))  # stabs: ceiling(signif(pi / (1/(2B)), 10))
    tails = [_r_concave_tail(theta**2, which - B, B, -0.5), _r_concave_tail(theta, which, 2 * B, -0.25)]
    if any(t is None for t in tails):
        return None
    return min(1.0, *tails) * p


def summary(table: pd.DataFrame, Z: np.ndarray, names, *, top: int, threshold: float, scheme: str,
            aggregation: str, methods, alpha: float = 0.05) -> dict:
    """summary.json content: the selected features, stability (Nogueira) and the error bound."""
    B, p = Z.shape
    sel = table[table["frequency"] >= threshold]
    nog = nogueira(Z, p, alpha)
    fin = lambda v: None if not np.isfinite(v) else float(v)  # noqa: E731
    return {
        "features": [str(names[i]) for i in sel["index"]],
        "n_selected": int(len(sel)),
        "threshold": float(threshold), "top": int(top), "resamples": int(B), "scheme": scheme,
        "aggregation": aggregation, "methods": list(methods), "n_features": int(p),
        "stability": {"measure": "nogueira", "value": fin(nog.stability), "ci_low": fin(nog.lower),
                      "ci_high": fin(nog.upper), "alpha": alpha,
                      "of": f"the top {top} of the aggregated ranking over the {B} resamples"},
        "error_bound": error_bound(min(top, p), p, threshold, B, scheme),
        "note": (top_covers_all(top, p) if top >= p else None if len(sel) else
                 nothing_selected(table, names, top=top, threshold=threshold, resamples=B,
                                  stability=fin(nog.stability))),
    }


def top_covers_all(top: int, p: int) -> str:
    """The note when ``top`` (q) is not below the number of features: every feature is in the
    top q of every resample, so all are 'selected' and the list says nothing."""
    return (f"top = {top} is not below the {p} features: every feature is in the top {top} of every resample, so "
            f"all {p} are selected and the selection frequencies carry no information; set top below {p} "
            "(e.g. a tenth of the features)")


def nothing_selected(table: pd.DataFrame, names, *, top: int, threshold: float, resamples: int,
                     stability: float | None) -> str:
    """Why no feature reached the threshold, and what to try: the consensus's most frequent
    feature, each method's own best frequency (methods that disagree dilute the consensus)."""
    best = table.iloc[int(np.argmax(table["frequency"].to_numpy()))]
    alone = []
    for col in [c for c in table.columns if c.startswith("frequency_")]:
        i = int(np.argmax(table[col].to_numpy()))
        alone.append(f"{col.removeprefix('frequency_')} {table[col].iloc[i]:.2f} ({names[table['index'].iloc[i]]})")
    stab = "undefined" if stability is None else f"{stability:.2f}"
    return (f"no feature reached selection frequency {threshold:g}: the most frequent, {names[best['index']]}, "
            f"was in the top {top} in a share {best['frequency']:.2f} of the {resamples} resamples"
            + (f"; each method alone reaches at most {', '.join(alone)}" if alone else "")
            + f". Stability (Nogueira) {stab}. More labeled samples, the methods that agree, or a lower threshold "
            "may give a list; the ranking is in consensus.tsv")
