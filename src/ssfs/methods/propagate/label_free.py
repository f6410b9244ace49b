"""``propagate``'s label-free scores: what ranks without labels (:func:`label_free_scores`,
:func:`label_free_choice`: the data's own groups, autocorrelation on a graph, residual variance, Moran's I, the signal
components' variance or span), the populations the labels' groups miss (:func:`unseen_populations`) and the
graph-free score taken in turn where the graph counts little (:func:`with_graph_free`)."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, get_args

import numpy as np
from scipy import sparse

from ...errors import MethodError
from .._shared.autocorrelation import count_scale, has_count_scale, moran_i, poisson_autocorrelation
from .._shared.batches import centred_in_batches
from .._shared.class_stats import (
    variance_explained,
    within_batch_total,
)
from .._shared.counts import count_like
from .._shared.invariance import distinct_columns, per_distinct_column
from .._shared.kmeans import kmeans
from .._shared.populations import smallest_population, unmatched_populations
from .._shared.representation import signal_pca
from .._shared.residuals import (
    CountModel,
    binary_counts,
    residual_autocorrelation,
    residual_embedding,
    residual_variance,
)
from .._shared.signal import (
    MIN_DIMS,
    canonical_rows,
    clearly_above,
    clearly_rising,
    content_rows,
    rising_embedding,
    scaled,
    signal_dims,
    signal_embedding,
    standardized,
    tail_weight,
)
from .graphs import _knn, _start_graph, unequal_samples
from .model import REFINE_SAMPLES, Propagation
from .ordering import explained_features, in_turn, with_unexplained
from .reading import HEAVY_TAILS


def variance_in_span(X, Z: np.ndarray, batch=None) -> np.ndarray:
    """Share of every feature's variance in the span of the (centred, orthogonal) columns of Z:
    sum_k (z_k . x)^2 / (|z_k|^2 |x - mean|^2), the communality of the features on a PCA.
    ``batch``: Z and x centred in every batch (:func:`span_within_batches`)."""
    if batch is not None:
        return span_within_batches(X, centred_in_batches(Z, batch), batch)
    Z = Z - Z.mean(axis=0)
    zz = np.einsum("ij,ij->j", Z, Z)
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
        proj = np.asarray(X.T @ Z)
        mu = np.asarray(X.mean(axis=0)).ravel()
        total = np.asarray(X.multiply(X).sum(axis=0)).ravel() - X.shape[0] * mu**2
    else:
        Xc = np.asarray(X, dtype=np.float64) - np.mean(X, axis=0)
        proj = Xc.T @ Z
        total = np.einsum("ij,ij->j", Xc, Xc)
    share = (proj**2 / np.where(zz > 0, zz, np.inf)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, share / total, np.nan)


def span_within_batches(X, Z: np.ndarray, batch: np.ndarray) -> np.ndarray:
    """:func:`variance_in_span` of X's residuals about their batch means on Z centred in every
    batch: z . (x - m_b) = z . x then, and the residuals' sum of squares is the within-batch total
    (:func:`variance_explained`'s, one group), so sparse X stays sparse."""
    zz = np.einsum("ij,ij->j", Z, Z)
    proj = np.asarray(X.T @ Z) if sparse.issparse(X) else np.asarray(X, dtype=np.float64).T @ Z
    total = within_batch_total(X, batch)
    share = (proj**2 / np.where(zz > 0, zz, np.inf)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, share / total, np.nan)


#: label-free scores (the ``label_free`` parameter)
LabelFree = Literal["auto", "clusters", "autocorrelation", "residual", "moran", "signal", "span"]
LABEL_FREE = get_args(LabelFree)
#: the autocorrelation scores: the scale X is read on, and the statistic ("residual": :func:`residual_scores`)
AUTOCORRELATION = {"autocorrelation": (count_scale, poisson_autocorrelation), "moran": (None, moran_i),
                   "residual": (None, moran_i)}
#: neighbours of the graph the label-free autocorrelation is measured on (Hotspot's default)
AUTOCORRELATION_K = 30


def signal_variance(X, Z: np.ndarray, batch=None) -> np.ndarray:
    """sqrt(c) var(x) per feature: its variance ``var(x)`` times the square root of its share in
    the span of the signal components ``Z`` (:func:`variance_in_span`, the communality c). The
    geometric mean of the total variance and the variance in the signal span: a gene ranks by its
    variance (the microarray filter), discounted when little of it is structure. ``batch``: both
    within batches."""
    share = variance_in_span(X, Z, batch)
    if batch is not None:
        return np.sqrt(share) * within_batch_total(X, batch) / X.shape[0]
    Xc = np.asarray(X, dtype=np.float64) - np.mean(X, axis=0)
    return np.sqrt(share) * np.einsum("ij,ij->j", Xc, Xc) / X.shape[0]


def resolved_label_free(how: str, counts: bool, space: str = "auto") -> str:
    """``label_free="auto"``: ``"clusters"`` for count-like X (``counts``) on the Pearson residuals'
    components (session 26), ``"autocorrelation"`` on the log values' (``space="values"``: there the
    components follow the noise of highly expressed genes, and so do their k-means groups), ``"signal"``
    for dense X (``"span"`` or ``"dispersion"`` where no component of the genes in their own units rises clearly
    above the null: :func:`dense_label_free`); any other choice as given."""
    if how != "auto":
        return how
    return ("clusters" if space != "values" else "autocorrelation") if counts else "signal"


def label_free_scores(X, n_pcs: int, how: str = "auto", batch=None, graph=None,
                      embedding=None, space: str = "auto", samples: str = "auto") -> tuple[np.ndarray, int]:
    """(scores, signal dimensions) without labels. ``"span"``: every feature's share of variance
    in the span of the signal components of X (columns standardised when dense: the former
    score). ``"signal"``: the signal components of X in its own units (its genes' variances count,
    as in a log-expression matrix they mean something); :func:`signal_variance` for dense X,
    the share alone for :func:`count_like` X (there the variance tracks the expression level;
    sparse X gets the ``"span"`` scores bit for bit). ``"autocorrelation"``: for count-like X,
    every feature's shared variance in units of its Poisson variance
    (:func:`~ssfs.methods._shared.autocorrelation.poisson_autocorrelation`) on the
    :data:`AUTOCORRELATION_K`-neighbour graph of the signal components of the counts' Pearson
    residuals (``space="values"``: of X's values, session 16-18's graph), or on the given
    ``graph`` / ``embedding``'s (:func:`autocorrelation_scores`); ``"residual"``: the residuals'
    own shared variance there (:func:`residual_scores`); ``"moran"``: Moran's I of the values
    (session 15's); dense X as ``"signal"``. ``"clusters"``: the variance explained by k-means groups
    of the same components, in turn with the autocorrelation (:func:`cluster_scores`); ``"auto"``:
    :func:`resolved_label_free`. ``batch``: every variance within batches. ``samples`` (dense X,
    "signal" and "span"): the components of every sample's profile scaled alike ("equal",
    :func:`~ssfs.methods._shared.signal.equal_samples`), of the samples as they are ("as_is"), or with
    "auto" scaled alike where :func:`unequal_samples` (5 % outlying samples: 0.044 -> 0.963 of the markers;
    docs/labels_that_count.md, "Samples scaled alike"). With ``"auto"`` on dense X, where no component of the
    genes in their own units rises clearly above the null (:func:`dense_label_free`: the loudest genes are noise
    and own every component, or nothing carries structure), the ``"span"`` scores where the standardised genes'
    component does (genes of very different noise, 0.056 -> 0.981 of the markers; docs/labels_that_count.md, "Loud
    noisy genes"), else every gene's :func:`gene_dispersion` (8 classes of 5 equal-noise markers 0.269 -> 0.675,
    heavy tails 0.087 -> 0.550; "Nothing rises"); every real array and all but one ``microarray_*`` draw of 48
    have a component rising clearly in the genes' units (the scores unchanged)."""
    return label_free_choice(X, n_pcs, how, batch, graph, embedding, space, samples)[:2]


def label_free_choice(X, n_pcs: int, how: str = "auto", batch=None, graph=None, embedding=None,
                      space: str = "auto", samples: str = "auto") -> tuple[np.ndarray, int, str]:
    """(scores, signal dimensions, how): :func:`label_free_scores` and the scores it chose ("dispersion" where
    ``"auto"`` found no component rising on dense X, :func:`dense_label_free`)."""
    if how not in LABEL_FREE:
        raise MethodError(f"propagate: label_free must be one of {LABEL_FREE}, got {how!r}")
    counts = count_like(X)
    auto, how = how == "auto", resolved_label_free(how, counts, space)
    if how == "clusters":
        return (*cluster_scores(X, n_pcs, batch, graph, embedding, space), how)
    if how == "residual" and counts and has_count_scale(X):
        return (*residual_scores(X, n_pcs, batch, graph, embedding), how)
    if how in AUTOCORRELATION and counts:
        return (*autocorrelation_scores(X, n_pcs, batch, graph, embedding, "moran" if how == "residual" else how,
                                        residuals=space != "values" and how == "autocorrelation"), how)
    if how == "moran" and graph is None and embedding is None:  # dense X: deep counts' label-free scores
        return (*dense_moran(X, n_pcs, batch), how)
    equal = not counts and (samples == "equal" or (samples == "auto" and unequal_samples(X)))
    Z, d, found, null = rising_embedding(X, n_pcs, standardize=how == "span", equal=equal)
    if auto and how == "signal" and not counts:
        how, Z, d = dense_label_free(X, n_pcs, equal, (Z, d, found, null))
    if how == "dispersion":
        return per_distinct_column(lambda A: gene_dispersion(A, batch), X), d, how
    score = variance_in_span if how == "span" or counts else signal_variance
    return per_distinct_column(lambda A: score(A, Z, batch), X), d, how  # a copy scores as its feature, bit for bit


#: dense X's label-free Moran's I (:func:`dense_moran`): a graph of one neighbour per this many samples, 3 to
#: :data:`AUTOCORRELATION_K`
MORAN_SAMPLES_PER_NEIGHBOUR = 10


def dense_moran(X, n_pcs: int, batch=None) -> tuple[np.ndarray, int]:
    """(scores, signal dimensions): every gene's Moran's I on the kNN graph (one neighbour per
    :data:`MORAN_SAMPLES_PER_NEIGHBOUR` samples, 3 to :data:`AUTOCORRELATION_K`) of X's leading principal components in
    its own units, as many as the standardised genes' components rising above their permutations' (at least
    :data:`~ssfs.methods._shared.signal.MIN_DIMS`);
    each centred in its batch; beyond :data:`REFINE_SAMPLES` samples on that many chosen by content. The score of
    deep counts read as log values when no two classes are labeled (:func:`fit_propagation`; Hotspot's idea,
    DeTomaso & Yosef 2021: a gene the samples' neighbours share, with Moran's statistic of the log values), where
    the dense path's ``"signal"`` ranks the genes of most own dispersion. Planted bulk studies without labels
    (4 seeds, docs/labels_that_count.md, "Deep counts"): 24 samples 0.122 -> 0.333 of the condition genes, 60 samples
    of 4 conditions 0.254 -> 0.656, composition 0.464 -> 0.808; with labels the free turns keep ``"signal"`` (a blind
    bulk generator lost 0.04-0.05 with Moran's I there)."""
    rows = label_free_rows(X)
    if rows is not None:
        X, batch = X[rows], None if batch is None else batch[rows]
    V = np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=np.float64)
    Vc = centred_in_batches(V - V.mean(axis=0), batch)
    scaled = standardized(Vc)
    d, _ = signal_dims(scaled, signal_pca(scaled, n_pcs))
    Z = signal_pca(Vc, max(d, MIN_DIMS))
    W = _knn(Z, int(np.clip(V.shape[0] // MORAN_SAMPLES_PER_NEIGHBOUR, 3, AUTOCORRELATION_K)))
    return per_distinct_column(lambda A: moran_i(A, W, batch), V), d


#: genes whose standard deviations vary less than this share of their mean are not standardised again to
#: test whether a component rises (:func:`dense_label_free`)
ALIKE_SCALES = 0.1


def dense_label_free(X, n_pcs: int, equal: bool, own: tuple) -> tuple[str, np.ndarray, int]:
    """(how, Z, d) of ``label_free="auto"`` on dense X: ``"signal"`` where X's leading component in the genes'
    own units (``own``: :func:`~ssfs.methods._shared.signal.rising_embedding` of them) rises clearly above its
    columns' permutations (:func:`~ssfs.methods._shared.signal.clearly_above` or, where that does not decide,
    :func:`~ssfs.methods._shared.signal.clearly_rising`: every real array and
    ``microarray_*`` draw); else ``"span"`` where the standardised genes' does (genes of very different noise: the
    loudest genes are noise and own every component in their units; not tested where the genes' standard
    deviations vary by less than :data:`ALIKE_SCALES` of their mean); else ``"dispersion"``
    (:func:`gene_dispersion`): no component carries structure, and a share in the span of noise components
    only blurs every gene's own dispersion (8 classes of 5 equal-noise markers: 0.269 of the markers against
    the variance's 0.675; docs/labels_that_count.md, "Nothing rises")."""
    Z, d, found, null = own
    if found and (clearly_above(Z, null) or clearly_rising(scaled(X, False, equal))):
        return "signal", Z, d
    sd = np.std(X, axis=0)
    if sd.mean() > 0 and sd.std() < ALIKE_SCALES * sd.mean():  # standardising them would change nothing
        return "dispersion", Z, d
    Zs, ds, found_s, null_s = rising_embedding(X, n_pcs, standardize=True, equal=equal)
    if found_s and (clearly_above(Zs, null_s) or clearly_rising(scaled(X, True, equal))):
        return "span", Zs, ds
    return "dispersion", Z, d


def gene_dispersion(X, batch=None) -> np.ndarray:
    """Every gene's dispersion about its (batch's) mean: its variance, or its interquartile range where the genes'
    noise has heavy tails (their median excess kurtosis above :data:`HEAVY_TAILS`: a few extreme values then
    decide a variance; Student's t with 3 degrees of freedom, 0.019 of the markers by variance, 0.55 by the
    interquartile range; Gaussian noise, 0.675 against 0.25). The label-free score where no component rises
    (:func:`dense_label_free`): the microarray filter."""
    Xc = centred_in_batches(np.asarray(X, dtype=np.float64), batch)
    Xc = Xc - Xc.mean(axis=0)
    if tail_weight(Xc) > HEAVY_TAILS:
        q1, q3 = np.quantile(Xc, [0.25, 0.75], axis=0)
        return q3 - q1
    return np.einsum("ij,ij->j", Xc, Xc) / max(Xc.shape[0], 1)


def autocorrelation_scores(X, n_pcs: int, batch=None, graph=None, embedding=None,
                           how: str = "autocorrelation", residuals: bool = False) -> tuple[np.ndarray, int]:
    """(scores, signal dimensions): every feature's local autocorrelation (:data:`AUTOCORRELATION`
    ``[how]``: :func:`~ssfs.methods._shared.autocorrelation.poisson_autocorrelation` of X on the
    count scale, or :func:`~ssfs.methods._shared.autocorrelation.moran_i`) on the kNN graph
    (:data:`AUTOCORRELATION_K` neighbours) of X's signal components (``residuals``: of the Pearson
    residuals of the counts behind X, :func:`~ssfs.methods._shared.residuals.residual_embedding`,
    where the types of weak markers stand out of the noise of highly expressed genes), each
    centred in its batch, or on the given ``graph`` (e.g. scanpy's ``obsp['connectivities']``, all samples) or the kNN
    graph of the given ``embedding``. A type's markers are shared by its cells' neighbours
    however few the cells, where a type too small to own a component has no variance in their
    span. Without a graph, beyond :data:`REFINE_SAMPLES` samples on that many chosen by content
    (:func:`~ssfs.methods._shared.signal.canonical_rows`): the same cost at any n."""
    if graph is not None:
        W, d = _start_graph(X, 1, 1, graph, None)
        return _autocorrelation_on(X, W, batch, how), d
    X, batch, Z, d = label_free_space(X, n_pcs, batch, embedding, residuals)
    return _autocorrelation_on(X, _knn(Z, AUTOCORRELATION_K), batch, how), d


def _autocorrelation_on(X, W, batch, how: str) -> np.ndarray:
    """:data:`AUTOCORRELATION` ``[how]`` of every distinct feature of X on the graph W (Moran's I
    of X's values where X has no count scale)."""
    scale, statistic = AUTOCORRELATION[how]
    if scale is not None and not has_count_scale(X):  # negative values: no count scale
        scale, statistic = None, moran_i
    on = X if scale is None else scale(X)  # a copied feature does not change the scale
    return per_distinct_column(lambda A: statistic(A, W, batch), on)


def label_free_rows(X) -> np.ndarray | None:
    """The samples the label-free scores are measured on: beyond :data:`REFINE_SAMPLES`, that many chosen
    by content (:func:`~ssfs.methods._shared.signal.canonical_rows`), sorted; None: all."""
    return None if X.shape[0] <= REFINE_SAMPLES else content_rows(canonical_rows(X), REFINE_SAMPLES)


def label_free_space(X, n_pcs: int, batch=None, embedding=None, residuals: bool = False):
    """``(X, batch, Z, d)``: the samples the label-free scores are measured on
    (:func:`label_free_rows`: the same cost at any n), their batches, and their signal components Z
    (d of them) centred in every batch: of the counts' Pearson residuals (``residuals``, X with a count scale;
    :func:`~ssfs.methods._shared.residuals.residual_embedding`), of X's values, or the given ``embedding``'s
    rows."""
    rows = label_free_rows(X)
    if rows is not None:
        X, batch = X[rows], None if batch is None else batch[rows]
    if embedding is None and residuals and has_count_scale(X):
        Z, d = residual_embedding(CountModel.of(X), n_pcs, batch)
    elif embedding is None:
        Z, d = signal_embedding(X, n_pcs, standardize=False)
    else:
        Z = np.asarray(embedding, dtype=np.float64)
        Z = Z if rows is None else Z[rows]
        d = Z.shape[1]
    return X, batch, centred_in_batches(Z, batch), d


class DataGroups(NamedTuple):
    """What :func:`cluster_parts` finds without labels."""

    #: label-free scores: the groups' order taken in turn with the free score's
    scores: np.ndarray
    #: signal dimensions of the space the groups were cut in
    dims: int
    #: the features the groups explain (:func:`explained_features`)
    explained: np.ndarray
    #: k-means group of every sample in ``rows``
    groups: np.ndarray
    #: the samples the groups are of (indices into X; None: all)
    rows: np.ndarray | None
    #: those samples' signal components (centred in every batch)
    space: np.ndarray
    #: their kNN graph (:data:`AUTOCORRELATION_K`), when the scores built it (:meth:`graph`)
    knn: Any = None

    def graph(self):
        """The kNN graph of the samples' signal components (built here when the scores did not)."""
        return self.knn if self.knn is not None else _knn(self.space, AUTOCORRELATION_K)


def cluster_scores(X, n_pcs: int, batch=None, graph=None, embedding=None,
                   space: str = "auto") -> tuple[np.ndarray, int]:
    """(scores, signal dimensions) of ``label_free="clusters"``: those of :func:`cluster_parts`."""
    return cluster_parts(X, n_pcs, batch, graph, embedding, space)[:2]


def cluster_parts(X, n_pcs: int, batch=None, graph=None, embedding=None, space: str = "auto") -> DataGroups:
    """Scores without labels from groups the data form, taken in turn with the graph's
    autocorrelation (:func:`in_turn`), and the groups themselves (:class:`DataGroups`). The samples' signal components
    (:func:`label_free_space`; counts: the Pearson residuals' unless ``space="values"``; or the given
    ``embedding``) are cut into d + 1 groups by k-means (:func:`~ssfs.methods._shared.kmeans.kmeans`;
    d components separate at most d + 1 groups) and every feature is ranked as with labels (module
    doc, point 3): the features the groups explain (:func:`explained_features`) by their R^2, the others
    in turn by R^2 and by the label-free score ("free": counts, the shared variance over the Poisson
    variance on the components' kNN graph or on the given ``graph``, :func:`autocorrelation_scores`;
    dense X, :func:`signal_variance`, as ``"signal"``). That order and the free
    score's alone are then taken in turn. A type's markers differ between groups, where a program that
    moves genes together across every type (cell cycle, stress) is shared by neighbours as much as a
    marker is; the free score keeps what the groups miss (a group cut along a program's gradient; a
    type too small for a group of its own). With labels, the features these groups explain follow those
    the labels' groups explain, and a population they miss before them (:func:`unseen_populations`)."""
    counts = count_like(X)
    rows = label_free_rows(X)  # chosen once: label_free_space then keeps the subsample whole
    X_rows, batch_rows, embedding_rows = (X, batch, embedding) if rows is None else (
        X[rows], None if batch is None else batch[rows], None if embedding is None else np.asarray(embedding)[rows])
    X_rows, batch_rows, Z, d = label_free_space(X_rows, n_pcs, batch_rows, embedding_rows,
                                                residuals=counts and space != "values")
    knn = None
    if counts and graph is not None:  # every sample, on the given graph
        free = _autocorrelation_on(X, _start_graph(X, 1, 1, graph, None)[0], batch, "autocorrelation")
    elif counts:
        knn = _knn(Z, AUTOCORRELATION_K)
        free = _autocorrelation_on(X_rows, knn, batch_rows, "autocorrelation")
    else:
        free = per_distinct_column(lambda A: signal_variance(A, Z, batch_rows), X_rows)
    groups = kmeans(Z, d + 1)
    weight = np.ones(groups.size)
    r2 = per_distinct_column(lambda A: variance_explained(A, groups, weight, batch_rows), X_rows)
    n_batches = np.unique(batch_rows).size if batch_rows is not None else 1
    explained = explained_features(r2, weight, groups, n_batches=n_batches)
    scores = in_turn(with_unexplained(r2, free, explained), free)
    return DataGroups(scores, d, explained, groups, rows, Z, knn)


def residual_scores(X, n_pcs: int, batch=None, graph=None, embedding=None) -> tuple[np.ndarray, int]:
    """(scores, signal dimensions): every gene's Pearson residuals' variance shared by neighbours
    (:func:`~ssfs.methods._shared.residuals.residual_autocorrelation`; counts read back from
    log1p values, one overdispersion for all genes) on the :data:`AUTOCORRELATION_K`-neighbour
    graph of the residuals' signal components
    (:func:`~ssfs.methods._shared.residuals.residual_embedding`, Lause et al. 2021), or on the
    given ``graph`` / the given ``embedding``'s kNN graph. In log values the noise of highly
    expressed genes is a variance of its own and leads the components; in residuals every gene
    without structure has variance 1 (docs/labels_that_count.md, "Residuals"). Beyond
    :data:`REFINE_SAMPLES` samples on that many chosen by content, as :func:`autocorrelation_scores`."""
    if graph is not None:
        W, d = _start_graph(X, 1, 1, graph, None)
        return _residual_autocorrelation(CountModel.of(X), W, batch), d
    rows = label_free_rows(X)
    if rows is not None:
        X, batch = X[rows], None if batch is None else batch[rows]
        embedding = None if embedding is None else np.asarray(embedding, dtype=np.float64)[rows]
    model = CountModel.of(X)
    if embedding is None:
        Z, d = residual_embedding(model, n_pcs, batch)
    else:
        Z = np.asarray(embedding, dtype=np.float64)
        d = Z.shape[1]
    return _residual_autocorrelation(model, _knn(centred_in_batches(Z, batch), AUTOCORRELATION_K), batch), d


def _residual_autocorrelation(model: CountModel, W, batch) -> np.ndarray:
    """:func:`~ssfs.methods._shared.residuals.residual_autocorrelation` of the model's genes on W,
    computed once per distinct column (a copy scores as its feature, bit for bit)."""
    first, group = distinct_columns(model.X)
    C, of_part = model.part(cols=first)
    return residual_autocorrelation(C, W, model.theta, batch, of_part)[group]


def _label_free(X, n_pcs: int, how: str, note: str, batch=None, given=(None, None), space: str = "auto",
                samples: str = "auto") -> Propagation:
    """The model without labels: :func:`label_free_scores` (``given``: the graph and embedding)."""
    scores, d = label_free_scores(X, n_pcs, how, batch, *given, space=space, samples=samples)
    counts = count_like(X)
    how = resolved_label_free(how, counts, space)
    grouped = how == "clusters"
    how = ("autocorrelation" if counts else "signal") if how == "clusters" else how
    where = ("the given graph" if given[0] is not None else "the given embedding's kNN graph"
             if given[1] is not None else "the signal components' kNN graph")
    statistic = {"autocorrelation": "shared variance over the Poisson variance", "moran": "Moran's I",
                 "residual": "the Pearson residuals' shared variance"}
    if how in ("autocorrelation", "residual") and not has_count_scale(X):
        how = "moran"
    on_residuals = how == "residual" or (how == "autocorrelation" and space != "values")
    residuals = "the detection residuals'" if on_residuals and counts and binary_counts(X) else "the Pearson residuals'"
    if given[0] is None and given[1] is None and on_residuals:
        where = f"the kNN graph of {residuals} signal components"
    what = (f"{statistic[how]} on {where}" if how in statistic and counts else
            "Moran's I on the signal components' kNN graph" if how == "moran" and given == (None, None) else
            "the variance in the span of the signal components")
    if grouped:
        space_of = ("the given embedding" if given[1] is not None else f"{residuals} signal components"
                    if on_residuals else "the signal components")
        what = f"the variance explained by k-means groups of {space_of}, in turn with the {what}"
    return Propagation(scores, np.zeros(X.shape[0], dtype=np.int64), [], None, "label-free",
                       float("nan"), float("nan"), float("nan"), d, f"{note} ({what})")


def _label_free_beside(X, n_pcs: int, how: str, batch, graph, embedding, rows, start_z,
                       space="auto", samples="auto") -> tuple[np.ndarray, DataGroups | None, str]:
    """The label-free scores a fit with labels interleaves (:func:`with_unexplained`) and the data's
    own groups (``"clusters"``, :func:`cluster_parts`, their rows of all samples; else None), on the
    samples the refinement ran on (``rows``; None: all) and, for sparse X, on the start graph's
    signal components ``start_z`` (the same PCA; dense X: standardised there, in its own units here;
    "residual": the residuals' own components), and how :func:`label_free_choice` chose the scores."""
    if rows is not None and graph is None:
        X, batch = X[rows], None if batch is None else batch[rows]
        embedding = None if embedding is None else np.asarray(embedding)[rows]
    if graph is None and embedding is None and sparse.issparse(X) and start_z is not None and how != "residual":
        embedding = start_z
    if resolved_label_free(how, count_like(X), space) == "clusters":
        data = cluster_parts(X, n_pcs, batch, graph, embedding, space)
        if rows is not None and graph is None:  # the groups' rows, of all samples
            data = data._replace(rows=rows if data.rows is None else rows[data.rows])
        return data.scores, data, "clusters"
    scores, _, chosen = label_free_choice(X, n_pcs, how, batch, graph, embedding, space, samples)
    return scores, None, chosen


def _data_tiers(model: Propagation, X, data: DataGroups, groups, y, batch) -> tuple:
    """The (features, key) tiers :func:`with_unexplained` puts after the labels' explained features: a
    population the groups miss (:func:`unseen_populations`, recorded in ``model``: a type nobody
    labeled), then the features the data's own groups explain, by the labels' R^2."""
    model.unseen, unseen_r2, model.unseen_sizes, model.unseen_cells = unseen_populations(
        X, data, groups, y, model.explained, batch)
    return (model.unseen, unseen_r2), (data.explained, model.scores)


def unseen_populations(X, data: DataGroups, groups: np.ndarray, y: np.ndarray, explained: np.ndarray,
                       batch=None) -> tuple[np.ndarray, np.ndarray, list[int], np.ndarray]:
    """(features, their R^2, sizes, cells) of the populations the data separate that the fit's ``groups``
    miss: the k-means groups of ``data`` (:func:`cluster_parts`) that are separated on their kNN
    graph, that no group of the fit matches and that hold no label (``y``) of the group holding most
    of their samples (:func:`~ssfs.methods._shared.populations.unmatched_populations`; at least as many samples as a
    group of its own, :func:`~ssfs.methods._shared.populations.smallest_population`): a type nobody
    labeled that the labels' graph spread over the labeled classes or held inside one. The features
    are those these populations explain against all other samples together (R^2 on ``data``'s rows,
    within batches; :func:`explained_features`), those ``explained`` (the fit's) holds too included: the
    population's markers, whatever the fit's groups explain (a type nobody labeled spread over the labeled groups
    raises their residual R^2 too; :func:`with_unexplained` ranks a feature in its first tier); ``cells``:
    every sample's population (0, 1, ...; -1 for none, and for the samples outside ``data``'s rows)."""
    rows = slice(None) if data.rows is None else data.rows
    n = data.groups.size
    found = unmatched_populations(data.graph(), data.groups, np.asarray(groups)[rows], np.asarray(y)[rows],
                                  smallest_population(n))
    cells = np.full(X.shape[0], -1, dtype=np.int64)
    if not found.any():
        return np.zeros(X.shape[1], dtype=bool), np.full(X.shape[1], np.nan), [], cells
    number = np.cumsum(found) - 1  # the populations numbered in the groups' order
    cells[rows] = np.where(found[data.groups], number[data.groups], -1)
    part = np.unique(np.where(found[data.groups], data.groups, -1), return_inverse=True)[1].ravel()
    weight = np.ones(n)
    batch_rows = None if batch is None else batch[rows]
    r2 = per_distinct_column(lambda A: variance_explained(A, part, weight, batch_rows), X[rows])
    n_batches = np.unique(batch_rows).size if batch_rows is not None else 1
    features = explained_features(r2, weight, part, n_batches=n_batches)
    return features, r2, np.bincount(data.groups)[found].tolist(), cells


def with_graph_free(free: np.ndarray, X, rows, batch, model: CountModel | None = None) -> np.ndarray:
    """Label-free scores whose order takes the graph's ``free`` and the genes' Pearson residual
    variance (graph-free: Lause et al. 2021, the statistic of scanpy's pearson-residuals highly
    variable genes) in turn: a gene's place is its better rank of the two, ties by ``free``; on the
    samples ``rows`` (None: all) as ``free``, under ``model`` (the fit's count model of X, read on
    those rows; None: the counts of the rows). X without a count scale (negative values): ``free``."""
    if not has_count_scale(X):
        return free
    if model is None:
        model = CountModel.of(X if rows is None else X[rows])
    elif rows is not None:
        model = model.subset(rows)
    C, part = model.part()
    codes = batch if batch is None or rows is None else batch[rows]
    return in_turn(free, residual_variance(C, model.theta, codes, model=part))


#: ``graph_free``: the genes' Pearson residual variance beside the graph's label-free scores ...
GRAPH_FREE = ("auto", "always", "never")
#: ... with "auto" when the propagated samples weigh less than this (the graph carries the classes little, and a
#: statistic over its edges is as unreliable). Planted counts, 3 labels per class, 6 seeds
#: (docs/labels_that_count.md, "A graph-free score where the graph carries the classes little"): Splatter-like 100
#: cells (weights 0.01-0.15) 0.188 -> 0.229, 200 cells 0.274 -> 0.288; at 0.5 a counts draw of weight 0.45 lost
#: 0.08 and a counts_nuisance one of 0.29 lost 0.05; the weights of 0.25 and below were the graphs whose shared
#: resamples listed the labels' chance patterns (session 23)
GRAPH_FREE_BELOW = 0.25
