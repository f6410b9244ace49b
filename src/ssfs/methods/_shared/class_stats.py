"""Per-class statistics from soft class memberships: the markers of each class, as
scanpy's ``rank_genes_groups`` (t-test, reference "rest") gives them for hard labels.

``memberships`` is an n x K non-negative matrix: sample i belongs to class c with weight
``P[i, c]`` (hard labels: one-hot rows, unlabeled samples all zero; propagated labels:
soft rows). For class c the "rest" are the other classes, each sample weighted by
``r_ic = sum_{c' != c} P[i, c']``, so a sample in no class takes part in neither.
With one-hot rows every statistic below equals the plain per-class computation on the
labeled samples (and scanpy's ``rank_genes_groups(method="t-test", pts=True)`` on them).

Weighted moments (reliability weights w, V1 = sum w, V2 = sum w^2):

* mean m = sum w x / V1, variance s^2 = sum w (x - m)^2 / (V1 - V2 / V1) (the unbiased
  estimator; ``ddof=1`` for 0/1 weights), effective size n_eff = V1^2 / V2 (Kish 1965),
  so Var(m) = sigma^2 / n_eff;
* score: Welch's t, (m_c - m_rest) / sqrt(s_c^2 / n_eff_c + s_rest^2 / n_eff_rest), 0 where
  undefined (scanpy sets its NaN to 0); p-value from Student's t with the Welch-Satterthwaite
  degrees of freedom, Benjamini-Hochberg adjusted over the features. With propagated
  memberships the classes were learned from the same data: the p-values are then a ranking
  aid, not a calibrated test (the same holds for clusters found on the data);
* fraction expressing (``pts``): weighted share of samples with x != 0;
* log fold change per ``scale``: ``"log1p"`` log2((expm1(m_c) + 1e-9) / (expm1(m_rest) + 1e-9))
  (scanpy's, for log1p-normalised counts), ``"log"`` m_c - m_rest (the data's own log unit,
  e.g. log2 microarrays), ``"linear"`` log2((m_c + 1e-9) / (m_rest + 1e-9)) (raw intensities);
  ``"auto"``: "log" when X has negative values, "linear" when its largest value exceeds
  :data:`LOG1P_MAX` (no log1p-normalised matrix reaches e^50), else "log1p".

Cost O(nnz(X) K) time, O(p K) memory; a sparse X is never densified (dense X is centred on
a copy, so second moments do not cancel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..._validation import constant_features
from ...errors import InputError
from .column_sums import sparse_column_sums

#: largest value of a log1p-normalised matrix ("auto" scale); above it X is read as linear
LOG1P_MAX = 50.0
SCALES = ("auto", "log1p", "log", "linear")


@dataclass
class ClassStatistics:
    """Per-class statistics (every array K x p, row c = class ``classes[c]``).

    Attributes
    ----------
    classes : numpy.ndarray
        Class names (K).
    size, size_rest : numpy.ndarray
        Sum of the memberships in the class / in the rest (K).
    n_eff, n_eff_rest : numpy.ndarray
        Kish effective sizes V1^2 / V2 (K); the counts for hard labels.
    mean, mean_rest, var, var_rest, pts, pts_rest : numpy.ndarray
        Weighted means, unbiased variances and fractions with x != 0.
    scores, pvals, pvals_adj, logfoldchanges : numpy.ndarray
        Welch's t (higher = more specific to the class), its p-value and BH-adjusted value,
        and the log2 fold change (module doc).
    scale : str
        How the log fold change was computed ("log1p", "log" or "linear").
    """

    classes: np.ndarray
    size: np.ndarray
    size_rest: np.ndarray
    n_eff: np.ndarray
    n_eff_rest: np.ndarray
    mean: np.ndarray
    mean_rest: np.ndarray
    var: np.ndarray
    var_rest: np.ndarray
    pts: np.ndarray
    pts_rest: np.ndarray
    scores: np.ndarray
    pvals: np.ndarray
    pvals_adj: np.ndarray
    logfoldchanges: np.ndarray
    scale: str

    def order(self, c: int) -> np.ndarray:
        """Feature indices of class ``c`` (an int position), best score first (ties: lower index)."""
        return np.argsort(-self.scores[c], kind="stable")

    def to_frame(self, names=None, *, top: int | None = None, groups=None):
        """Long table as ``scanpy.get.rank_genes_groups_df``: one row per (group, feature), each
        group's features best first, with columns group, names, index, scores, logfoldchanges,
        pvals, pvals_adj, pct_nz_group, pct_nz_reference, mean, mean_rest. ``top``: the best
        ``top`` features of each group; ``groups``: class names to keep (default all)."""
        import pandas as pd

        p = self.scores.shape[1]
        names = np.arange(p).astype(str) if names is None else np.asarray(names).astype(str)
        wanted = list(self.classes) if groups is None else [str(g) for g in groups]
        pos = {str(c): i for i, c in enumerate(self.classes)}
        missing = [g for g in wanted if g not in pos]
        if missing:
            raise InputError(f"no class statistics for group(s) {missing}; groups: {[str(c) for c in self.classes]}")
        parts = []
        for g in wanted:
            c = pos[g]
            o = self.order(c)[: p if top is None else int(top)]
            parts.append(pd.DataFrame({
                "group": g, "names": names[o], "index": o, "scores": self.scores[c, o],
                "logfoldchanges": self.logfoldchanges[c, o], "pvals": self.pvals[c, o],
                "pvals_adj": self.pvals_adj[c, o], "pct_nz_group": self.pts[c, o],
                "pct_nz_reference": self.pts_rest[c, o], "mean": self.mean[c, o], "mean_rest": self.mean_rest[c, o],
            }))
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        if len(out):
            out["group"] = pd.Categorical(out["group"], categories=wanted)
        return out

    def to_rank_genes_groups(self, names, params: dict | None = None) -> dict:
        """The statistics in the layout of scanpy's ``adata.uns["rank_genes_groups"]`` (method
        t-test, reference rest), so ``scanpy.get.rank_genes_groups_df`` and scanpy's plots read
        them: record arrays ``names``, ``scores``, ``logfoldchanges``, ``pvals``, ``pvals_adj``
        (one field per group, each group's features best first) and the DataFrames ``pts`` and
        ``pts_rest`` (features x groups); ``params`` is added to scanpy's."""
        import pandas as pd

        names = np.asarray(names).astype(str)
        groups = [str(c) for c in self.classes]
        orders = [self.order(c) for c in range(len(groups))]

        def rec(values, dtype):
            cols = {g: np.asarray(values[c][orders[c]], dtype=dtype) for c, g in enumerate(groups)}
            return pd.DataFrame(cols).to_records(index=False)

        return {
            "params": {"groupby": "", "reference": "rest", "method": "t-test", "use_raw": False, "layer": None,
                       "corr_method": "benjamini-hochberg", **(params or {})},
            "names": rec(np.broadcast_to(names, (len(groups), names.size)), object),
            "scores": rec(self.scores, np.float32), "logfoldchanges": rec(self.logfoldchanges, np.float32),
            "pvals": rec(self.pvals, np.float64), "pvals_adj": rec(self.pvals_adj, np.float64),
            "pts": pd.DataFrame(self.pts.T, index=names, columns=groups),
            "pts_rest": pd.DataFrame(self.pts_rest.T, index=names, columns=groups),
        }

    def best_class(self) -> np.ndarray:
        """Per feature, the position of the class whose score is highest (the class it marks)."""
        return np.argmax(self.scores, axis=0)


def one_hot(y, n_classes: int | None = None) -> np.ndarray:
    """n x K memberships of hard labels (codes 0..K-1, -1 = unlabeled: an all-zero row)."""
    y = np.asarray(y, dtype=np.int64)
    K = int(y.max()) + 1 if n_classes is None else int(n_classes)
    P = np.zeros((y.size, max(K, 0)))
    lab = np.flatnonzero(y >= 0)
    P[lab, y[lab]] = 1.0
    return P


def _resolve_scale(X, scale: str) -> str:
    if scale not in SCALES:
        raise InputError(f"scale must be one of {SCALES}, got {scale!r}")
    if scale != "auto":
        return scale
    vals = X.data if sparse.issparse(X) else X
    if not vals.size:
        return "log1p"
    if float(vals.min()) < 0:
        return "log"
    return "linear" if float(vals.max()) > LOG1P_MAX else "log1p"


def _moments(X, W: np.ndarray):
    """(sum w x, sum w x^2, sum w [x != 0], shift) for every column of W (n x G): G x p arrays
    each; a dense X is centred on a copy first (the sums are of x - shift, shift = column
    means, added back to the means by the caller; sparse X: shift 0)."""
    if sparse.issparse(X):
        s1 = np.asarray(X.T @ W).T
        s2 = sparse_column_sums(X, W, np.square).T
        return s1, s2, sparse_column_sums(X, W, lambda v: (v != 0).astype(np.float64)).T, 0.0
    nz = W.T @ (X != 0).astype(np.float64)
    shift = X.mean(axis=0)
    Xc = X - shift
    return W.T @ Xc, W.T @ (Xc * Xc), nz, shift


def _weighted(s1, s2, V1, V2):
    """Weighted means and unbiased (reliability-weight) variances from the sums."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s1 / V1[:, None]
        ss = np.maximum(s2 - s1 * mean, 0.0)
        var = ss / (V1 - V2 / V1)[:, None]
    return mean, var


def class_statistics(X, memberships, classes=None, *, scale: str = "auto") -> ClassStatistics:
    """Per-class statistics of every feature from soft (or hard) class memberships.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix
        Samples x features (sparse stays sparse).
    memberships : array-like
        n x K non-negative weights; a label vector (codes, -1 unlabeled) is taken as one-hot.
    classes : sequence, optional
        K class names (default "0".."K-1").
    scale : {"auto", "log1p", "log", "linear"}
        How the log fold change reads X (module doc).

    Returns
    -------
    ClassStatistics
        Means, variances, fractions expressing, Welch t scores, p-values and log fold
        changes of each class against the rest (module doc for the formulas).
    """
    X = sparse.csr_matrix(X, dtype=np.float64) if sparse.issparse(X) else np.asarray(X, dtype=np.float64)
    n, p = X.shape
    P = np.asarray(memberships, dtype=np.float64)
    if P.ndim == 1:
        P = one_hot(P)
    if P.ndim != 2 or P.shape[0] != n:
        raise InputError(f"memberships must have one row per sample ({n}), got shape {P.shape}")
    if not np.all(np.isfinite(P)) or (P < 0).any():
        raise InputError("memberships must be finite and non-negative")
    K = P.shape[1]
    classes = np.arange(K).astype(str) if classes is None else np.asarray(classes, dtype=object)
    if classes.size != K:
        raise InputError(f"{classes.size} class names for {K} membership columns")
    scale = _resolve_scale(X, scale)
    W = np.hstack([P, P.sum(axis=1, keepdims=True) - P])  # the classes, then their rests
    s1, s2, nz, shift = _moments(X, W)
    V1, V2 = W.sum(axis=0), (W * W).sum(axis=0)
    mean, var = _weighted(s1, s2, V1, V2)
    mean += shift
    with np.errstate(invalid="ignore", divide="ignore"):
        pts = nz / V1[:, None]
        n_eff = V1**2 / V2
    return _assemble(classes, V1, n_eff, mean, var, pts, K, scale)


def _assemble(classes, V1, n_eff, mean, var, pts, K, scale) -> ClassStatistics:
    """Welch's t, p-values and log fold changes of the K classes (rows 0..K-1) against their
    rests (rows K..2K-1). Two-sided p = 2 stdtr(df, -|t|), which is what ``scipy.stats.t.sf``
    computes (the same bits, nan and infinite df included; scipy.stats costs 0.4 s to import in
    every job that ranks with ``propagate``)."""
    from scipy.special import stdtr  # lazy: 0.06 s that `import ssfs` does not pay

    m, mr, v, vr = mean[:K], mean[K:], var[:K], var[K:]
    ne, ner = n_eff[:K, None], n_eff[K:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b = v / ne, vr / ner
        t = (m - mr) / np.sqrt(a + b)
        df = (a + b) ** 2 / (a**2 / (ne - 1) + b**2 / (ner - 1))
        pv = 2.0 * stdtr(df, -np.abs(t))
    t = np.where(np.isnan(t), 0.0, t)
    pv = np.where(np.isnan(pv), 1.0, pv)
    return ClassStatistics(
        classes=classes, size=V1[:K], size_rest=V1[K:], n_eff=n_eff[:K], n_eff_rest=n_eff[K:],
        mean=m, mean_rest=mr, var=v, var_rest=vr, pts=pts[:K], pts_rest=pts[K:], scores=t, pvals=pv,
        pvals_adj=np.vstack([benjamini_hochberg(r) for r in pv]) if K else pv,
        logfoldchanges=_log_fold_change(m, mr, scale), scale=scale,
    )


def _log_fold_change(m, mr, scale: str) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if scale == "log":
            return m - mr
        if scale == "linear":
            return np.log2((m + 1e-9) / (mr + 1e-9))
        return np.log2((np.expm1(m) + 1e-9) / (np.expm1(mr) + 1e-9))


def benjamini_hochberg(pvals) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (step-up, monotone, capped at 1)."""
    p = np.asarray(pvals, dtype=np.float64)
    m = p.size
    if not m:
        return p.copy()
    o = np.argsort(p, kind="stable")
    adj = p[o] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(adj[::-1])[::-1]
    out = np.empty(m)
    out[o] = np.minimum(adj, 1.0)
    return out


def variance_explained(X, groups, weights=None, batch=None) -> np.ndarray:
    """Share of every feature's variance explained by a partition of the samples: the
    between-group sum of squares sum_g W_g (m_g - m)^2 over the total sum w_i (x_i - m)^2, i.e.
    the one-way ANOVA's R^2 (it ranks the features as the F statistic F = R^2 / (1 - R^2)
    (n - G) / (G - 1) does). ``groups``: an int group code per sample (every sample in one
    group); ``weights``: a non-negative weight per sample (default 1; W_g their sum in group g,
    m_g and m weighted means). NaN for a feature constant over the weighted samples. Sparse X
    stays sparse; dense X is centred first (no cancellation). ``batch``: a batch code >= 0 per
    sample; then the R^2 of the groups on x minus its (weighted) batch mean, both sums of
    squares within batches (:func:`_grouped_sums`)."""
    g = np.asarray(groups, dtype=np.int64)
    w = np.ones(g.size) if weights is None else np.asarray(weights, dtype=np.float64)
    return _explained(*_grouped_sums(X, g, w, batch), w.sum())


def _explained(size, total, sums, shift, weight: float) -> np.ndarray:
    """:func:`variance_explained` from :func:`_grouped_sums` (``weight``: the samples' total weight)."""
    between = (sums**2 / np.where(size > 0, size, np.inf)[:, None]).sum(axis=0) - weight * shift**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.clip(between, 0.0, None) / total, np.nan)


def _grouped_sums(X, g: np.ndarray, w: np.ndarray, batch=None, centred: tuple | None = None):
    """(W_g, total, sums, shift) of a partition ``g`` of the samples weighted ``w``: the groups'
    weights, every feature's weighted sum of squares about its weighted mean m, and the groups'
    weighted sums of x - shift (dense X is centred first: shift 0; sparse X stays sparse: shift
    m), so the centred group sums are ``sums - W_g shift``. With ``batch`` (codes >= 0) x is
    replaced by its residual r = x - m_b about its batch's weighted mean (shift 0): total
    sum_i w_i x_i^2 - sum_b W_b m_b^2 and group sums S_g - sum_b W_gb m_b (W_gb: the weight of
    group g in batch b), so sparse X stays sparse. ``centred``: :func:`centred_columns` (X) of dense X when
    already computed (unit weights ``w``)."""
    n = g.size
    if X.shape[0] != n or (g < 0).any():
        raise InputError(f"groups must give a group code >= 0 to each of the {X.shape[0]} samples")
    H = sparse.csr_matrix((w, (g, np.arange(n))), shape=(int(g.max()) + 1 if n else 0, n))
    size = np.asarray(H.sum(axis=1)).ravel()
    if batch is not None:
        return (size, *_within_batches(X, H, w, np.asarray(batch, dtype=np.int64)))
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
        mu = np.asarray(X.T @ w).ravel() / w.sum()
        total = constant_at_zero(sparse_column_sums(X, w, np.square) - w.sum() * mu**2, X, w, np.abs(mu))
        return size, total, np.asarray((H @ X).todense()), mu
    Xc, total = centred if centred is not None else centred_columns(X, w)
    return size, total, np.asarray(H @ Xc), np.zeros(X.shape[1])


def _within_batches(X, H, w: np.ndarray, batch: np.ndarray):
    """(total, sums, 0) of :func:`_grouped_sums` for the residuals about the batches' weighted
    means m_b (a batch of weight 0: m_b = 0)."""
    n = batch.size
    Bw = sparse.csr_matrix((w, (batch, np.arange(n))), shape=(int(batch.max()) + 1 if n else 0, n))
    weight_b = np.asarray(Bw.sum(axis=1)).ravel()
    per_b = 1.0 / np.where(weight_b > 0, weight_b, np.inf)
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
        means = np.asarray((Bw @ X).todense()) * per_b[:, None]
        total = sparse_column_sums(X, w, np.square) - weight_b @ means**2
        total = constant_at_zero(total, X, w, np.abs(means).max(axis=0, initial=0.0), batch)
        share = H @ sparse.csr_matrix((np.ones(n), (np.arange(n), batch)), shape=(n, Bw.shape[0]))
        return total, np.asarray((H @ X).todense()) - share @ means, np.zeros(X.shape[1])
    X = np.asarray(X, dtype=np.float64)
    means = np.asarray(Bw @ X) * per_b[:, None]
    Xr = X - means[batch]
    total = constant_at_zero(w @ (Xr * Xr), X, w, np.abs(means).max(axis=0, initial=0.0), batch)
    return total, np.asarray(H @ Xr), np.zeros(X.shape[1])


def within_batch_total(X, batch) -> np.ndarray:
    """Every feature's sum of squares about its batch's mean (codes ``batch``)."""
    b = np.asarray(batch, dtype=np.int64)
    return _grouped_sums(X, np.zeros(b.size, dtype=np.int64), np.ones(b.size), b)[1]


def one_vs_rest_explained(X, groups, up_only: bool = False, batch=None) -> np.ndarray:
    """G x p: the share of every feature's variance that group g against all other samples
    explains (the R^2 of a two-group ANOVA, t^2 / (t^2 + n - 2) for the pooled-variance t):
    (S_g - n_g m)^2 n / (n_g (n - n_g)) over the total sum of squares, S_g the group's column sums,
    n_g its size, m the column mean. A marker of a small group ranks at the top of its own row
    however little of the total variance it carries. NaN for a constant feature; 0 rows for
    empty groups or a group of all samples. ``batch``: within batches, as :func:`variance_explained`."""
    g = np.asarray(groups, dtype=np.int64)
    return _one_vs_rest(*_grouped_sums(X, g, np.ones(g.size), batch), g.size, up_only)


def centred_columns(X, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Xc, total): dense X's columns centred on their ``w``-weighted means (default: unit weights) and
    their weighted sums of squares about them (:func:`_grouped_sums`'s): a caller that groups the same X
    many ways computes them once (:func:`explained_and_one_vs_rest`'s ``centred``)."""
    w = np.ones(X.shape[0]) if w is None else w
    X = np.asarray(X, dtype=np.float64)
    mean = (w @ X) / w.sum()
    Xc = X - mean
    return Xc, constant_at_zero(w @ (Xc * Xc), X, w, np.abs(mean))


#: units in the last place of a constant column's mean squared (times the samples' weight) that its rounded sum of
#: squares is checked up to (:func:`constant_at_zero`; sparse X's sum w x^2 - W m^2 cancels to about that)
ROUNDING_ULPS = 1024.0


def constant_at_zero(total: np.ndarray, X, w: np.ndarray, scale: np.ndarray, batch=None) -> np.ndarray:
    """``total`` (every column's weighted sum of squares about its mean) with an exact 0 where X's column
    takes one value over the samples of positive weight ``w`` (within every ``batch``). The weighted mean of
    equal values is not always that value to the last bit (12 labeled samples at 1.30103, the floor of a
    log10 microarray, weights 1 and 0.5: a mean one unit off), and the sum of squares the rounding leaves
    made such a column's R^2 any number in [0, 1], often 1: a feature constant over the labeled samples
    ranked first (GLIOMA, 3 labels per class, the propagated samples weighing 0), and a gene zero in every
    labeled cell, once standardised, could enter the graph the labels' chain builds. Only the columns whose
    ``total`` is within ``W`` :data:`ROUNDING_ULPS` eps ``scale``^2 of 0 (W the weights' sum, ``scale`` the
    largest mean's magnitude) are compared, value by value."""
    bound = w.sum() * ROUNDING_ULPS * np.finfo(float).eps * scale**2  # sparse X's sum of squares cancels
    suspect = np.flatnonzero((total != 0) & (np.abs(total) <= bound))
    if suspect.size == 0:
        return total
    rows = np.flatnonzero(w > 0)
    A = X[:, suspect][rows]  # the few suspect columns, then the weighted rows
    parts = np.zeros(rows.size, dtype=np.int64) if batch is None else np.asarray(batch)[rows]
    flat = np.ones(suspect.size, dtype=bool)
    for b in np.unique(parts):  # a batch at a time (few)
        flat &= constant_features(A[parts == b])
    total = np.array(total, dtype=np.float64)
    total[suspect[flat]] = 0.0
    return total


def explained_and_one_vs_rest(X, groups, up_only: bool = False, batch=None,
                              centred: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`variance_explained`, :func:`one_vs_rest_explained`) of unweighted ``groups`` from one
    pass over X (the same values to the bit as the two calls); ``centred``: :func:`centred_columns` (X)
    when already computed (dense X, no ``batch``)."""
    g = np.asarray(groups, dtype=np.int64)
    grouped = _grouped_sums(X, g, np.ones(g.size), batch, centred)
    return _explained(*grouped, float(g.size)), _one_vs_rest(*grouped, g.size, up_only)


def _one_vs_rest(size, total, sums, shift, n: int, up_only: bool) -> np.ndarray:
    """:func:`one_vs_rest_explained` from :func:`_grouped_sums` of ``n`` unweighted samples."""
    centred_sums = sums - size[:, None] * shift
    rest = size * (n - size)
    between = centred_sums**2 * (n / np.where(rest > 0, rest, np.inf))[:, None]
    if up_only:
        between[centred_sums < 0] = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.clip(between, 0.0, None) / total, np.nan)
