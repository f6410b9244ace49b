"""Labels that count (issue 28) on shapes drawn outside ``ssfs.simulate``: a check of the default
against data its authors did not tune on.

    python benchmarks/bench_other_shapes.py --seeds 0 1 2 3 --per-class 3 10
    python benchmarks/bench_other_shapes.py --seeds 0 1 2 3 --per-class --share 1     # 1 % of the samples labeled

Each shape is drawn here with its own few lines of numpy (not ``ssfs.simulate``'s generators):
Gaussian arrays with heteroscedastic genes, heavy tails, outlying samples, an unrecorded batch,
imbalanced classes, many classes, very few samples, noise factors unrelated to the classes (co-regulated gene
modules, as in real arrays) with markers of mixed strength; and low-depth counts of many types. Later sessions
added two-colour log ratios, 20 classes, weak markers, a lineage's shared markers and one loud class (session 35),
unlogged intensities, 1,000 samples of 120 genes, many weak (polygenic) markers, markers co-expressed within their
class, a 60-sample two-class study of 6,000 genes, three shapes z-scored gene by gene and one min-max scaled
(session 36); gene modules of equal variance (10 modules at 30 % of the noise, 40 at 60 %), a continuous program,
classes of two subclusters, markers of mixed strength and on/off counts of 10 types (session 40, a blind check);
SNP genotypes, methylation beta values, classes cut from a continuum, censored intensities with zeros for missing
values, and counts with a cell-cycle-like program, an unrecorded batch or doublets (session 41, a blind check);
counts whose types differ in depth (one at 4x, one at 0.4x), with dropouts, with markers lower in their type, with
ambient RNA, of six types of 40 % down to 3 %, of two lineages of three types, and along a continuum (session 43);
counts whose markers are low-expressed genes, with 150 bursty genes (negative binomial size 0.1, no type signal),
of 12 types of Dirichlet shares, of 3 strong and 3 weak types, bulk RNA-seq (24 samples, 2e7 reads, gene-wise
dispersions) and log counts scaled gene by gene and clipped at 10 as ``sc.pp.scale`` leaves them (session 44);
bulk studies of other sizes and depths (session 45); scATAC-seq-like peaks, binarised or counted (session 46);
scikit-learn's ``make_classification`` in eight forms (session 51); markers planted on the samples of three real
arrays of ../shared/data, dealt into 3 classes at random (session 59; skipped without ../shared).
The metric is the recall of the planted markers in the top m (m = the number of markers); ``k`` labels per class
are drawn from every class. ``propagate (no labels)`` is the default with every label hidden (its label-free
scores), so a row shows whether the labels helped it. Prints one line per draw and then the table of means
(markdown); nothing is cached or written.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_labels_sweep import rank  # noqa: E402  (the sweep's method and anchor calls)


def _classes(rng, n: int, k: int, shares=None) -> np.ndarray:
    """n class codes in random order, class c holding ``shares[c]`` of them (equal by default)."""
    shares = np.full(k, 1.0 / k) if shares is None else np.asarray(shares, float) / np.sum(shares)
    sizes = np.floor(shares * n).astype(int)
    sizes[: n - sizes.sum()] += 1
    return rng.permutation(np.repeat(np.arange(k), sizes))


def gaussian_array(seed: int, n=300, p=2000, k=4, per=10, effect=1.5, hetero=False, outliers=0.0,
                   batch=0.0, shares=None, tails=None):
    """Log-expression-like arrays: gene means N(6, 2); noise N(0, 1) (Student's t with ``tails`` degrees
    of freedom), scaled per gene by exp(N(0, 0.8)) with ``hetero``; ``outliers``: that share of the samples
    with 4x the noise; ``batch``: half the samples shifted by N(0, batch) per gene (not recorded). Class c
    shifts its ``per`` markers by +-``effect`` times their gene's noise sd."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k, shares)
    sd = np.exp(rng.normal(0.0, 0.8, p)) if hetero else np.ones(p)
    noise = rng.standard_t(tails, size=(n, p)) if tails else rng.normal(size=(n, p))
    if outliers:
        noise[rng.random(n) < outliers] *= 4.0
    X = noise * sd + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        genes = markers[c * per:(c + 1) * per]
        X[np.ix_(cls == c, genes)] += effect * sd[genes] * rng.choice([-1.0, 1.0], per)
    if batch:
        X[rng.random(n) < 0.5] += batch * rng.normal(size=p)
    return X, None, cls, markers


def factor_array(seed: int, n=200, p=3000, k=3, per=15, factors=5, loaded=200, shares=(0.5, 0.3, 0.2),
                 effects=(0.5, 2.5)):
    """Log-expression-like arrays whose noise has structure the classes do not share: gene means N(7, 2),
    noise N(0, 1) plus ``factors`` latent factors, each a N(0, 1) sample score times N(0, 0.8) loadings on
    ``loaded`` random genes (co-regulated modules: cell cycle, stress, a hidden covariate), every gene's noise
    scaled by exp(N(0, 0.3)); classes of ``shares`` (equal when None); class c shifts its ``per`` markers by
    U(``effects``) times their gene's noise sd, up or down (weak and strong markers in one array)."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k, shares)
    sd = np.exp(rng.normal(0.0, 0.3, p))
    X = rng.normal(size=(n, p))
    for _ in range(factors):
        genes = rng.choice(p, loaded, replace=False)
        X[:, genes] += np.outer(rng.normal(size=n), rng.normal(0.0, 0.8, loaded))
    X = X * sd + rng.normal(7.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        genes = markers[c * per:(c + 1) * per]
        X[np.ix_(cls == c, genes)] += rng.uniform(*effects, per) * sd[genes] * rng.choice([-1.0, 1.0], per)
    return X, None, cls, markers


def centred_log_ratios(seed: int, n=150, p=4000, k=5, per=12, effect=1.2):
    """Two-colour arrays: :func:`gaussian_array`'s weak markers, every gene centred (log ratios against a
    common reference: no gene's mean tells anything)."""
    X, counts, cls, markers = gaussian_array(seed, n=n, p=p, k=k, per=per, effect=effect)
    return X - X.mean(axis=0), counts, cls, markers


def shared_markers(seed: int, n=300, p=2000, k=4, shared=20, per=10, effect=1.5):
    """A hierarchy: classes 0 and 1 (one lineage) shift ``shared`` markers together, and every class shifts
    ``per`` of its own, up or down (gene means N(6, 2), noise N(0, 1))."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    X = rng.normal(size=(n, p)) + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, shared + k * per, replace=False)
    X[np.ix_(np.isin(cls, [0, 1]), markers[:shared])] += effect
    for c in range(k):
        own = markers[shared + c * per:shared + (c + 1) * per]
        X[np.ix_(cls == c, own)] += effect * rng.choice([-1.0, 1.0], per)
    return X, None, cls, markers


def one_loud_class(seed: int, n=300, p=2000, k=4, per=10, loud=4.0, quiet=1.2):
    """One class far from the others (its markers ``loud`` sd away), the others ``quiet``: the loud class's
    markers are easy, the quiet ones are what labels may add."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    X = rng.normal(size=(n, p)) + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        shift = (loud if c == 0 else quiet) * rng.choice([-1.0, 1.0], per)
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += shift
    return X, None, cls, markers


def unlogged_intensities(seed: int):
    """:func:`gaussian_array` read as log2 intensities and handed over unlogged (2^X): values from ~1 to ~100,000,
    every gene's spread proportional to its level, as a MAS5 or raw-intensity table often arrives."""
    X, counts, cls, markers = gaussian_array(seed)
    return np.exp2(X), counts, cls, markers


def co_regulated_markers(seed: int, n=300, p=2000, k=4, per=10, effect=1.2, program=0.8):
    """:func:`gaussian_array`'s markers at ``effect`` sd, and within its class every class's markers share one
    program (a common N(0, ``program``) factor per sample): co-expressed, as the genes of one pathway are."""
    X, counts, cls, markers = gaussian_array(seed, n=n, p=p, k=k, per=per, effect=effect)
    rng = np.random.default_rng(seed + 77)
    for c in range(k):
        rows = np.flatnonzero(cls == c)
        X[np.ix_(rows, markers[c * per:(c + 1) * per])] += rng.normal(size=(rows.size, 1)) * program
    return X, counts, cls, markers


def rescaled(shape, how: str):
    """``shape`` with every gene rescaled one by one, as many public arrays arrive: ``how`` "z" z-scores it (mean 0,
    sd 1: scikit-feature's ALLAML, colon, ...), "min_max" maps it to [0, 1]. Each gene's spread then says nothing."""
    def draw(seed: int):
        X, counts, cls, markers = shape(seed)
        lo, spread = (X.mean(axis=0), X.std(axis=0)) if how == "z" else (X.min(axis=0), X.max(axis=0) - X.min(axis=0))
        return (X - lo) / spread, counts, cls, markers
    return draw


def low_depth_counts(seed: int, n=2000, p=1500, k=8, per=15, depth=1500, fold=2.5):
    """Negative binomial counts (dispersion 0.2) of ``k`` types at ``depth`` reads a cell (log-normal
    libraries); each type raises its ``per`` markers (among the 70 % most expressed genes) ``fold``-fold.
    Returns log1p(CP10k) and the counts."""
    rng = np.random.default_rng(seed)
    cls = rng.integers(0, k, n)
    base = np.exp(rng.normal(-1.0, 1.5, p))
    mu = np.tile(base / base.sum(), (k, 1))
    markers = rng.choice(np.flatnonzero(base > np.quantile(base, 0.3)), k * per, replace=False)
    for c in range(k):
        mu[c, markers[c * per:(c + 1) * per]] *= fold
    mu /= mu.sum(axis=1, keepdims=True)
    lam = mu[cls] * rng.lognormal(np.log(depth), 0.4, n)[:, None]
    C = rng.negative_binomial(5, 5.0 / (5.0 + lam)).astype(float)
    return np.log1p(C / C.sum(axis=1, keepdims=True) * 1e4), C, cls, markers


def equal_variance_modules(seed: int, n=200, p=2000, k=3, per=15, effect=1.3, modules=10, share=0.3):
    """Noise with structure the classes do not share, stronger than theirs: every gene in one of ``modules``
    co-expressed modules, its noise ``share`` its module's factor and the rest its own (unit variance either way:
    a module adds no variance, so ``variance`` ranks the markers); class c shifts its ``per`` markers by
    +-``effect``. Gene means N(7, 2)."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    module = rng.integers(0, modules, p)
    X = (np.sqrt(share) * rng.normal(size=(n, modules))[:, module] + np.sqrt(1.0 - share) * rng.normal(size=(n, p))
         + rng.normal(7.0, 2.0, p))
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += effect * rng.choice([-1.0, 1.0], per)
    return X, None, cls, markers


def program(seed: int, n=300, p=2000, k=4, per=10, effect=1.2, genes=150, strength=2.0):
    """A continuous program the classes do not share (cell-cycle-like): a score max(0, N(0, 1)) per sample raises
    ``genes`` genes by ``strength`` x U(0.5, 1.5) x score; class c shifts its ``per`` markers by +-``effect``."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    X = rng.normal(size=(n, p)) + rng.normal(6.0, 2.0, p)
    order = rng.permutation(p)
    markers, programmed = order[:k * per], order[k * per:k * per + genes]
    X[:, programmed] += strength * np.clip(rng.normal(size=n), 0.0, None)[:, None] * rng.uniform(0.5, 1.5, genes)
    for c in range(k):
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += effect * rng.choice([-1.0, 1.0], per)
    return X, None, cls, markers


def subclusters(seed: int, n=400, p=2500, k=4, per=10, effect=1.5, sub=1.5, sub_per=15):
    """Every class two subclusters: the class's ``per`` markers (shifted +-``effect``) shared by both, and each
    subcluster raising ``sub_per`` genes of its own by ``sub`` (not counted as markers)."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    half = rng.integers(0, 2, n)
    X = rng.normal(size=(n, p)) + rng.normal(6.0, 2.0, p)
    order = rng.permutation(p)
    markers, own = order[:k * per], order[k * per:k * per + 2 * k * sub_per]
    for c in range(k):
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += effect * rng.choice([-1.0, 1.0], per)
        for h in range(2):
            X[np.ix_((cls == c) & (half == h), own[(2 * c + h) * sub_per:(2 * c + h + 1) * sub_per])] += sub
    return X, None, cls, markers


def mixed_effects(seed: int, n=250, p=3000, k=5, per=12):
    """Markers of every strength: shifts of +-exp(N(log 1.2, 0.5)) sd (about 0.4-3)."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    X = rng.normal(size=(n, p)) + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    shift = np.exp(rng.normal(np.log(1.2), 0.5, k * per)) * rng.choice([-1.0, 1.0], k * per)
    for c in range(k):
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += shift[c * per:(c + 1) * per]
    return X, None, cls, markers


def on_off_counts(seed: int, n=3000, p=2000, k=10, per=10, depth=3000):
    """Negative binomial counts (dispersion 1/3) of ``k`` types of Dirichlet(2) shares, library sizes
    log-normal(log ``depth``, 0.7); each type's ``per`` markers (among the more expressed half) 10 x lower in the
    other types and 3 x higher in their own. Returns log1p(CP10k) and the counts."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k, rng.dirichlet(np.full(k, 2.0)))
    base = np.exp(rng.normal(-1.0, 1.8, p))
    mu = np.tile(base, (k, 1))
    markers = rng.choice(np.flatnonzero(base > np.quantile(base, 0.5)), k * per, replace=False)
    for c in range(k):
        genes = markers[c * per:(c + 1) * per]
        mu[:, genes] *= 0.1
        mu[c, genes] *= 30.0
    mu /= mu.sum(axis=1, keepdims=True)
    lam = mu[cls] * rng.lognormal(np.log(depth), 0.7, n)[:, None]
    C = rng.negative_binomial(3, 3.0 / (3.0 + lam)).astype(float)
    return np.log1p(C / C.sum(axis=1, keepdims=True) * 1e4), C, cls, markers


def genotypes(seed: int, n=400, p=3000, k=3, per=15, delta=0.25):
    """SNP genotypes 0 / 1 / 2 (Binomial(2, f)) of ``k`` populations: allele frequencies U(0.05, 0.95), each
    population's ``per`` markers shifted by +-``delta`` (session 41, a blind check)."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    f = rng.uniform(0.05, 0.95, p)
    F = np.tile(f, (k, 1))
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        genes = markers[c * per:(c + 1) * per]
        F[c, genes] = np.clip(f[genes] + delta * rng.choice([-1.0, 1.0], per), 0.01, 0.99)
    return rng.binomial(2, F[cls]).astype(float), None, cls, markers


def methylation(seed: int, n=200, p=4000, k=3, per=15, shift=0.2, precision=20.0):
    """Methylation beta values in (0, 1): Beta(mu phi, (1 - mu) phi) about CpG means Beta(0.5, 0.5) (mostly near 0
    or 1, so the noise follows mu (1 - mu)); each class moves its ``per`` markers ``shift`` towards the middle."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    mu = np.clip(rng.beta(0.5, 0.5, p), 0.02, 0.98)
    M = np.tile(mu, (k, 1))
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        genes = markers[c * per:(c + 1) * per]
        M[c, genes] = np.clip(mu[genes] + shift * np.where(mu[genes] > 0.5, -1.0, 1.0), 0.02, 0.98)
    return rng.beta(M[cls] * precision, (1.0 - M[cls]) * precision), None, cls, markers


def gradient(seed: int, n=300, p=2000, k=4, graded=40, effect=2.0):
    """Classes cut from a continuum: a time t ~ U(0, 1) per sample, class = its quarter of t; the ``graded`` markers
    follow a sigmoid of t (threshold U(0.2, 0.8), width 0.08, +-``effect``), so no class owns a marker."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, n)
    cls = np.minimum((t * k).astype(int), k - 1)
    X = rng.normal(size=(n, p)) + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, graded, replace=False)
    step = 1.0 / (1.0 + np.exp(-(t[:, None] - rng.uniform(0.2, 0.8, graded)) / 0.08))
    X[:, markers] += effect * rng.choice([-1.0, 1.0], graded) * step
    return X, None, cls, markers


def censored_intensities(seed: int, n=200, p=3000, k=4, per=12, effect=1.5, limit=18.0):
    """Proteomics-like log intensities N(20, 2) + N(0, 1) with every value below the detection ``limit`` exported as
    0 (a missing value filled with zero: a third of the values); class c shifts its ``per`` markers +-``effect``."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    X = rng.normal(size=(n, p)) + rng.normal(20.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += effect * rng.choice([-1.0, 1.0], per)
    np.copyto(X, 0.0, where=np.less(X, limit))  # below the detection limit
    return X, None, cls, markers


def typed_counts(seed: int, n=2000, p=1500, k=6, per=15, fold=3.0, depth=2000, nuisance: str = "", strength=4.0):
    """Negative binomial counts (dispersion 1/5) of ``k`` types drawn uniformly, log-normal(log ``depth``, 0.4)
    libraries, each type raising its ``per`` markers (among the 70 % most expressed genes) ``fold``-fold, with a
    ``nuisance`` the types do not share: "program" (120 genes ``strength``-fold in a random 35 % of the cells, a
    cell cycle), "batch" (half the cells, every gene x log-normal(0, 0.6), not recorded) or "doublets" (12 % of the
    cells the sum of two). Returns log1p(CP10k) and the counts (session 41, a blind check)."""
    rng = np.random.default_rng(seed)
    cls = rng.integers(0, k, n)
    flagged = rng.random(n) < {"program": 0.35, "batch": 0.5}.get(nuisance, 0.0)
    base = np.exp(rng.normal(-1.0, 1.5, p))
    mu = np.tile(base / base.sum(), (k, 1))
    expressed = np.flatnonzero(base > np.quantile(base, 0.3))
    markers = rng.choice(expressed, k * per, replace=False)
    for c in range(k):
        mu[c, markers[c * per:(c + 1) * per]] *= fold
    M = mu[cls] / mu[cls].sum(axis=1, keepdims=True)
    if nuisance == "program":
        M[np.ix_(flagged, rng.choice(expressed, 120, replace=False))] *= strength
    elif nuisance == "batch":
        M[flagged] *= rng.lognormal(0.0, 0.6, p)
    M /= M.sum(axis=1, keepdims=True)
    lam = M * rng.lognormal(np.log(depth), 0.4, n)[:, None]
    C = rng.negative_binomial(5, 5.0 / (5.0 + lam)).astype(float)
    if nuisance == "doublets":
        pairs = np.flatnonzero(rng.random(n) < 0.12)
        C[pairs] += C[rng.integers(0, n, pairs.size)]
    return np.log1p(C / C.sum(axis=1, keepdims=True) * 1e4), C, cls, markers


def _log_counts(rng, lam: np.ndarray, dispersion: float = 4.0) -> tuple[np.ndarray, np.ndarray]:
    """(log1p(CP10k), counts) of negative binomial counts of means ``lam`` (size ``dispersion``: one, or one per
    gene)."""
    C = rng.negative_binomial(dispersion, dispersion / (dispersion + lam)).astype(float)
    return np.log1p(C / np.maximum(C.sum(axis=1, keepdims=True), 1.0) * 1e4), C


def planted_counts(seed: int, n=2000, p=2000, k=5, per=15, fold=3.0, depth=2500, shares=None, depths=None,
                   down=False, dropout=0.0, ambient=0.0, pool=None, bursty=0, size=4.0):
    """Negative binomial counts (size ``size``) of ``k`` types (``shares``; equal by default, "dirichlet":
    Dirichlet(1.5), at least 1 %), library sizes log-normal(log ``depth``, 0.4) times the type's factor in
    ``depths``; each type's ``per`` markers (among the 60 % most expressed genes, the 40 % with ``down``; ``pool``:
    between those quantiles of expression, e.g. (0.1, 0.5) for low-expressed genes) ``fold``-fold higher in it, or
    ``fold``-fold lower with ``down`` (a tuple: type c's is ``fold[c % len(fold)]``). ``dropout``: every count zeroed
    with probability exp(-``dropout`` x its mean); ``ambient``: every cell's profile mixed with the pooled one at
    U(0.05, ``ambient``) (session 43, a blind check); ``bursty``: that many genes outside the markers (of the more
    expressed half) of size 0.1, transcriptional bursts with no type signal (session 44)."""
    rng = np.random.default_rng(seed)
    if isinstance(shares, str):
        shares = np.maximum(rng.dirichlet(np.full(k, 1.5)), 0.01)
    cls = _classes(rng, n, k, shares)
    base = np.exp(rng.normal(-1.0, 1.6, p))
    lo, hi = np.quantile(base, (0.6 if down else 0.4, 1.0) if pool is None else pool)
    markers = rng.choice(np.flatnonzero((base > lo) & (base <= hi)), k * per, replace=False)
    folds = np.atleast_1d(fold)
    mu = np.tile(base, (k, 1))
    for c in range(k):
        mu[c, markers[c * per:(c + 1) * per]] *= 1.0 / folds[c % folds.size] if down else folds[c % folds.size]
    mu /= mu.sum(axis=1, keepdims=True)
    M = mu[cls]
    if ambient:
        mixed = rng.uniform(0.05, ambient, n)[:, None]
        M = (1.0 - mixed) * M + mixed * M.mean(axis=0)
    sizes = np.full(p, float(size))
    if bursty:
        others = np.setdiff1d(np.flatnonzero(base > np.quantile(base, 0.5)), markers)
        sizes[rng.choice(others, bursty, replace=False)] = 0.1
    totals = rng.lognormal(np.log(depth), 0.4, n) * (1.0 if depths is None else np.asarray(depths, float)[cls])
    lam = M * totals[:, None]
    X, C = _log_counts(rng, lam, sizes)
    if dropout:
        C[rng.random(C.shape) < np.exp(-dropout * lam)] = 0.0
        X = np.log1p(C / np.maximum(C.sum(axis=1, keepdims=True), 1.0) * 1e4)
    return X, C, cls, markers


def lineage_counts(seed: int, n=2400, p=2000, lineages=2, sub=3, lineage_per=20, sub_per=10, depth=2500):
    """Counts of ``lineages`` x ``sub`` types: each lineage's ``lineage_per`` markers 3-fold higher in its types,
    each type's ``sub_per`` markers 2-fold higher in it alone; the markers are both (session 43, a blind check)."""
    rng = np.random.default_rng(seed)
    k = lineages * sub
    cls = _classes(rng, n, k)
    base = np.exp(rng.normal(-1.0, 1.6, p))
    markers = rng.choice(np.flatnonzero(base > np.quantile(base, 0.4)), lineages * lineage_per + k * sub_per,
                         replace=False)
    mu = np.tile(base, (k, 1))
    for lineage in range(lineages):
        mu[lineage * sub:(lineage + 1) * sub, markers[lineage * lineage_per:(lineage + 1) * lineage_per]] *= 3.0
    own = markers[lineages * lineage_per:]
    for c in range(k):
        mu[c, own[c * sub_per:(c + 1) * sub_per]] *= 2.0
    mu /= mu.sum(axis=1, keepdims=True)
    return (*_log_counts(rng, mu[cls] * rng.lognormal(np.log(depth), 0.5, n)[:, None]), cls, markers)


def continuum_counts(seed: int, n=2000, p=2000, k=4, graded=60, fold=4.0, depth=2500):
    """Counts of cells along a time t ~ U(0, 1), class = its quarter of t; the ``graded`` markers' log means follow
    a sigmoid of t (threshold U(0.2, 0.8), width 0.08, +-log ``fold``), the counts' version of :func:`gradient`."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, n)
    cls = np.minimum((t * k).astype(int), k - 1)
    base = np.exp(rng.normal(-1.0, 1.6, p))
    markers = rng.choice(np.flatnonzero(base > np.quantile(base, 0.4)), graded, replace=False)
    log_mu = np.tile(np.log(base), (n, 1))
    step = 1.0 / (1.0 + np.exp(-(t[:, None] - rng.uniform(0.2, 0.8, graded)) / 0.08))
    log_mu[:, markers] += np.log(fold) * rng.choice([-1.0, 1.0], graded) * step
    mu = np.exp(log_mu)
    mu /= mu.sum(axis=1, keepdims=True)
    return (*_log_counts(rng, mu * rng.lognormal(np.log(depth), 0.4, n)[:, None]), cls, markers)


def bulk_counts(seed: int, n=24, p=10000, k=3, per=30, fold=2.0, depth=2e7, composition=0.0):
    """Bulk RNA-seq: ``n`` samples of ``k`` conditions, libraries log-normal(log ``depth``, 0.2), every gene's
    biological dispersion 1 / size ~ log-normal(log 0.1, 0.6) (edgeR's typical 0.05-0.3), each condition's ``per``
    genes ``fold``-fold up or down (among the 70 % most expressed); log1p(CPM) and the counts (session 44).
    ``composition``: the last condition's 10 most expressed genes (no markers) (1 + ``composition``)-fold up, so
    every other gene's share of its libraries falls (session 45)."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    base = np.exp(rng.normal(0.0, 2.0, p))
    markers = rng.choice(np.flatnonzero(base > np.quantile(base, 0.3)), k * per, replace=False)
    mu = np.tile(base, (k, 1))
    for c in range(k):
        mu[c, markers[c * per:(c + 1) * per]] *= fold ** rng.choice([-1.0, 1.0], per)
    if composition:
        mu[k - 1, np.setdiff1d(np.argsort(-base)[:10 + k * per], markers)[:10]] *= 1.0 + composition
    mu /= mu.sum(axis=1, keepdims=True)
    sizes = 1.0 / rng.lognormal(np.log(0.1), 0.6, p)
    lam = mu[cls] * rng.lognormal(np.log(depth), 0.2, n)[:, None]
    C = rng.negative_binomial(sizes, sizes / (sizes + lam)).astype(float)
    return np.log1p(C / C.sum(axis=1, keepdims=True) * 1e6), C, cls, markers


def peaks(seed: int, n=2000, p=10000, k=5, per=60, fold=5.0, depth=3000, shares=None, binary=True):
    """scATAC-seq-like peaks: accessibility log-normal(0, 1) over ``p`` peaks, each of ``k`` types' ``per`` peaks
    ``fold``-fold more accessible in it, fragments in peaks log-normal(log ``depth``, 0.5) a cell, Poisson counts
    and, with ``binary``, only whether a peak holds any (ArchR's and SnapATAC's binarised matrices; session 46).
    log1p(CP10k) and the counts."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k, shares)
    base = rng.lognormal(0.0, 1.0, p)
    markers = rng.choice(p, k * per, replace=False)
    mu = np.tile(base, (k, 1))
    for c in range(k):
        mu[c, markers[c * per:(c + 1) * per]] *= fold
    mu /= mu.sum(axis=1, keepdims=True)
    C = rng.poisson(mu[cls] * rng.lognormal(np.log(depth), 0.5, n)[:, None]).astype(float)
    if binary:
        C = np.minimum(C, 1.0)
    return np.log1p(C / np.maximum(C.sum(axis=1, keepdims=True), 1.0) * 1e4), C, cls, markers


def full_length(seed: int, n=400, p=6000, k=5, per=30, fold=3.0, depth=1e6, size=2.0, dropout=1.0, form="counts"):
    """Smart-seq2-like full-length read counts of single cells: expression log-normal(0, 2) over ``p`` genes, each
    of ``k`` types' ``per`` genes ``fold``-fold up (among the 70 % most expressed), reads in proportion to expression
    x gene length (log-normal, median 2 kb), libraries log-normal(log ``depth``, 0.5), negative binomial counts of
    size ``size`` (amplification), and dropouts that take a count of mean mu with probability 0.9 exp(-``dropout``
    log10(1 + mu)) (session 47). ``form``: "counts" (log1p(CPM) and the counts) or "log2_tpm" (log2(TPM + 1) alone,
    the table such studies publish: reads over gene length, scaled to 10^6 a cell)."""
    rng = np.random.default_rng(seed)
    cls = _classes(rng, n, k)
    expression = rng.lognormal(0.0, 2.0, p)
    length = rng.lognormal(np.log(2000.0), 0.6, p)
    markers = rng.choice(np.flatnonzero(expression > np.quantile(expression, 0.3)), k * per, replace=False)
    mu = np.tile(expression, (k, 1))
    for c in range(k):
        mu[c, markers[c * per:(c + 1) * per]] *= fold
    reads = mu * length
    reads /= reads.sum(axis=1, keepdims=True)
    lam = reads[cls] * rng.lognormal(np.log(depth), 0.5, n)[:, None]
    C = rng.negative_binomial(size, size / (size + lam)).astype(float)
    C[rng.random(C.shape) < 0.9 * np.exp(-dropout * np.log10(1.0 + lam))] = 0.0
    if form == "log2_tpm":
        per_kb = C / length
        return np.log2(per_kb / np.maximum(per_kb.sum(axis=1, keepdims=True), 1e-12) * 1e6 + 1.0), None, cls, markers
    return np.log1p(C / np.maximum(C.sum(axis=1, keepdims=True), 1.0) * 1e6), C, cls, markers


def filtered_genes(seed: int, keep: str = "expressed", **kw):
    """:func:`full_length` as log2(TPM + 1) with genes filtered after the normalisation, so that its rows no longer
    sum alike (session 48): ``keep`` "expressed" drops the 2 % most expressed genes (as mitochondrial and ribosomal
    genes often are), "variable" keeps the 2,000 most variable of the 6,000."""
    X, _, cls, markers = full_length(seed, form="log2_tpm", **kw)
    mean = X.mean(axis=0)
    kept = (np.flatnonzero(mean < np.quantile(mean, 0.98)) if keep == "expressed"
            else np.sort(np.argsort(-X.var(axis=0), kind="stable")[:2000]))
    return np.ascontiguousarray(X[:, kept]), None, cls, np.flatnonzero(np.isin(kept, markers))


def citeseq(seed: int, n=3000, p=60, k=8, per=3, shared=6, size=5.0, background=20.0, signal=15.0):
    """CITE-seq antibody counts (session 48): ``p`` proteins, each cell with ambient background (log-normal around
    ``background`` counts, a capture and an ambient factor per cell); ``k`` types with ``per`` proteins each
    ``signal``-fold up, ``shared`` lineage proteins up in about half the types; negative binomial of size ``size``.
    The truth: every protein that differs between types (the types' own and the lineage proteins)."""
    rng = np.random.default_rng(1000 + seed)
    cls = rng.permutation(np.arange(n) % k)
    base = rng.lognormal(np.log(background), 0.6, p)
    differing = rng.choice(p, k * per + shared, replace=False)
    own, lineage = differing[:k * per], differing[k * per:]
    level = np.tile(base, (k, 1))
    for c in range(k):
        level[c, own[c * per:(c + 1) * per]] *= signal * rng.lognormal(0.0, 0.4, per)
    level[:, lineage] *= np.where(rng.random((k, shared)) < 0.5, signal * 0.7, 1.0)
    capture, ambient = rng.lognormal(0.0, 0.5, n)[:, None], rng.lognormal(0.0, 0.4, n)[:, None]
    lam = level[cls] * capture + base[None, :] * (ambient - 1.0).clip(0.0)
    C = rng.negative_binomial(size, size / (size + lam)).astype(float)
    return np.log1p(C / C.sum(axis=1, keepdims=True) * 1e4), C, cls, differing


def spots(seed: int, n=2000, p=3000, k=6, per=20, fold=4.0, depth=8000.0, purity=6.0, size=4.0):
    """Visium-like spatial spots (session 48): every spot a Dirichlet mixture of ``k`` types' profiles leaning to its
    region's type (concentration ``purity`` on it, 1 on the others), ``per`` markers a type ``fold``-fold up,
    libraries log-normal(log ``depth``, 0.5), negative binomial of size ``size``; a spot's class is its region."""
    rng = np.random.default_rng(2000 + seed)
    cls = rng.permutation(np.arange(n) % k)
    base = np.exp(rng.normal(-1.0, 1.6, p))
    markers = rng.choice(np.flatnonzero(base > np.quantile(base, 0.4)), k * per, replace=False)
    mu = np.tile(base, (k, 1))
    for c in range(k):
        mu[c, markers[c * per:(c + 1) * per]] *= fold
    mu /= mu.sum(axis=1, keepdims=True)
    alpha = np.ones((n, k))
    alpha[np.arange(n), cls] = purity
    weights = np.array([rng.dirichlet(a) for a in alpha])
    lam = weights @ mu * rng.lognormal(np.log(depth), 0.5, n)[:, None]
    X, C = _log_counts(rng, lam, size)
    return X, C, cls, markers


def pearson_residuals(seed: int, shape: str = "strong_and_weak_counts", theta: float = 100.0):
    """The counts of ``shape`` as their analytic Pearson residuals (Lause et al. 2021; scanpy's
    ``normalize_pearson_residuals``: overdispersion ``theta`` 100, clipped at +- sqrt(n)) with no counts beside: an
    AnnData's ``X`` after such a normalisation, or SCTransform's (session 48)."""
    _, C, cls, markers = SHAPES[shape](seed)
    mu = C.sum(axis=1, keepdims=True) * C.sum(axis=0, keepdims=True) / C.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        Z = np.nan_to_num((C - mu) / np.sqrt(mu + mu ** 2 / theta))
    return np.clip(Z, -np.sqrt(C.shape[0]), np.sqrt(C.shape[0])), None, cls, markers


def scaled_log_counts(seed: int):
    """:func:`planted_counts` as many AnnData files hold them in ``X``: log1p(CP10k) scaled to unit variance per gene
    and clipped at 10 (``sc.pp.scale(max_value=10)``, pbmc68k_reduced's ``X``), no counts beside."""
    X, _, cls, markers = planted_counts(seed)
    sd = X.std(axis=0)
    Z = np.clip((X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), None, 10.0)
    return Z, None, cls, markers


def sklearn_classification(seed: int, n=300, p=2000, k=4, informative=20, redundant=0, clusters=2, sep=1.0,
                           flip=0.0, scaled=False):
    """scikit-learn's ``make_classification`` (Guyon's design for the NIPS 2003 feature selection challenge, session
    51): every class ``clusters`` Gaussian clusters at vertices of a hypercube of side 2 ``sep`` in the
    ``informative`` features, mixed by a random covariance (so those features' variance is several times the
    noise's and each is weak alone), ``redundant`` random linear combinations of them, the rest N(0, 1) noise,
    ``flip`` of the labels flipped at random; ``scaled``: every feature shifted and scaled at random
    (``shift=None, scale=None``: scales 1-100). The markers are the informative and redundant features, in a random
    place."""
    from sklearn.datasets import make_classification

    X, cls = make_classification(n_samples=n, n_features=p, n_informative=informative, n_redundant=redundant,
                                 n_repeated=0, n_classes=k, n_clusters_per_class=clusters, class_sep=sep, flip_y=flip,
                                 shift=None if scaled else 0.0, scale=None if scaled else 1.0, shuffle=False,
                                 random_state=seed)
    place = np.random.default_rng(seed).permutation(p)
    return X[:, place], None, cls, np.flatnonzero(place < informative + redundant)


#: ../shared/data beside the checkout (the real backgrounds of :func:`real_background`)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def real_background(seed: int, name: str, k=3, per=15, effect=1.0):
    """Markers planted on a real array's samples (session 59): the array ``name`` of ../shared/data as it is (its
    genes' scales and correlations; its own classes become structure the planted classes do not share), its samples
    dealt into ``k`` classes at random, each shifting its ``per`` markers (genes that vary) by +-``effect`` times
    their gene's sd. Needs ../shared/data: ``--shapes`` skips these shapes without it."""
    from bench_labels_sweep import load_real

    loaded = load_real(name, DATA)
    if loaded is None:
        raise SystemExit(f"real_background: {name} not found under {DATA}")
    X = np.asarray(loaded[0].toarray() if hasattr(loaded[0], "toarray") else loaded[0], dtype=float).copy()
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.arange(X.shape[0]) % k)
    sd = X.std(axis=0)
    markers = rng.choice(np.flatnonzero(sd > 0), k * per, replace=False)
    for c in range(k):
        genes = markers[c * per:(c + 1) * per]
        X[np.ix_(cls == c, genes)] += effect * sd[genes] * rng.choice([-1.0, 1.0], per)
    return X, None, cls, markers


#: the arrays whose samples :func:`real_background` plants on (z-scored ones excluded: every gene's variance is 1
#: there, so the markers alone add variance and ``variance`` finds them by construction)
BACKGROUNDS = ("TOX-171", "GLIOMA", "Prostate-GE")


SHAPES = {
    "heteroscedastic": lambda s: gaussian_array(s, hetero=True),
    "many_classes": lambda s: gaussian_array(s, n=400, p=3000, k=8, per=5),
    "outlying_samples": lambda s: gaussian_array(s, outliers=0.05),
    "heavy_tails": lambda s: gaussian_array(s, tails=3),
    "hidden_batch": lambda s: gaussian_array(s, batch=1.0),
    "imbalanced_array": lambda s: gaussian_array(s, shares=[0.6, 0.25, 0.1, 0.05]),
    "few_samples": lambda s: gaussian_array(s, n=40, p=5000, k=2, per=20),
    "noise_factors": factor_array,
    "noise_factors_few_samples": lambda s: factor_array(s, n=60, p=8000, per=20, factors=3),
    "noise_factors_many_classes": lambda s: factor_array(s, n=300, p=2000, k=6, per=8, factors=8, shares=None),
    "low_depth_counts": low_depth_counts,
    # session 35: shapes drawn after the places of the held-out labels' own classes were counted
    "centred_log_ratios": centred_log_ratios,
    "twenty_classes": lambda s: gaussian_array(s, n=600, p=2000, k=20, per=5, effect=2.0),
    "weak_markers": lambda s: gaussian_array(s, n=150, p=4000, k=6, per=10, effect=1.0),
    "shared_markers": shared_markers,
    "one_loud_class": one_loud_class,
    # session 36: shapes drawn to look for data the default had not met
    "unlogged_intensities": unlogged_intensities,
    "many_samples_few_genes": lambda s: gaussian_array(s, n=1000, p=120, k=4, per=5, effect=0.8),
    "polygenic": lambda s: gaussian_array(s, n=200, p=3000, k=3, per=60, effect=0.6),
    "co_regulated_markers": co_regulated_markers,
    "small_two_class_study": lambda s: gaussian_array(s, n=60, p=6000, k=2, per=30, effect=1.2),
    "z_scored_many_classes": rescaled(lambda s: gaussian_array(s, n=400, p=3000, k=8, per=5), "z"),
    "z_scored_twenty_classes": rescaled(lambda s: gaussian_array(s, n=600, p=2000, k=20, per=5, effect=2.0), "z"),
    "z_scored_few_samples": rescaled(lambda s: gaussian_array(s, n=40, p=5000, k=2, per=20), "z"),
    "min_max_many_classes": rescaled(lambda s: gaussian_array(s, n=400, p=3000, k=8, per=5), "min_max"),
    "gene_modules": equal_variance_modules,
    "gene_modules_strong": lambda s: equal_variance_modules(s, modules=40, share=0.6),
    "program": program,
    "subclusters": subclusters,
    "mixed_effects": mixed_effects,
    "on_off_counts": on_off_counts,
    "genotypes": genotypes,
    "methylation": methylation,
    "gradient": gradient,
    "censored_intensities": censored_intensities,
    "counts_program": lambda s: typed_counts(s, nuisance="program"),
    "counts_hidden_batch": lambda s: typed_counts(s, nuisance="batch"),
    "counts_doublets": lambda s: typed_counts(s, nuisance="doublets"),
    "depth_confounded_counts": lambda s: planted_counts(s, depths=[4.0, 0.4, 1.0, 1.0, 1.0]),
    "zero_inflated_counts": lambda s: planted_counts(s, depth=3000, dropout=0.5),
    "down_marker_counts": lambda s: planted_counts(s, fold=4.0, down=True),
    "ambient_counts": lambda s: planted_counts(s, fold=5.0, ambient=0.4),
    "type_sizes_counts": lambda s: planted_counts(s, n=3000, k=6, shares=[0.40, 0.25, 0.15, 0.10, 0.07, 0.03]),
    "lineage_counts": lineage_counts,
    "continuum_counts": continuum_counts,
    # session 44: a blind check
    "low_expressed_markers_counts": lambda s: planted_counts(s, fold=6.0, pool=(0.1, 0.5)),
    "bursty_genes_counts": lambda s: planted_counts(s, bursty=150),
    "many_types_counts": lambda s: planted_counts(s, n=3000, k=12, per=10, shares="dirichlet"),
    "strong_and_weak_counts": lambda s: planted_counts(s, k=6, fold=(5.0, 1.6)),
    "bulk_counts": bulk_counts,
    # session 45: bulk studies of other sizes and depths (deep counts read as log values)
    "bulk_counts_four_conditions": lambda s: bulk_counts(s, n=60, k=4),
    "bulk_counts_shallow": lambda s: bulk_counts(s, depth=3e6, fold=1.7),
    "bulk_counts_large": lambda s: bulk_counts(s, n=200, fold=1.5),
    "bulk_counts_composition": lambda s: bulk_counts(s, n=40, k=2, per=45, composition=3.0),
    "scaled_log_counts": scaled_log_counts,
    # session 46: scATAC-seq-like peaks, binarised and as counts
    "binary_peaks": peaks,
    "binary_peaks_weak": lambda s: peaks(s, fold=3.0),
    "binary_peaks_rare": lambda s: peaks(s, n=3000, shares=[0.4, 0.3, 0.2, 0.07, 0.03]),
    "peak_counts": lambda s: peaks(s, binary=False),
    # session 47: Smart-seq2-like full-length reads of single cells (deep, with dropouts)
    "full_length_counts": full_length,
    "full_length_counts_noisy": lambda s: full_length(s, size=0.7, fold=4.0),
    "full_length_counts_deep": lambda s: full_length(s, depth=3e6, size=5.0),
    "full_length_log_tpm": lambda s: full_length(s, form="log2_tpm"),
    "full_length_log_tpm_noisy": lambda s: full_length(s, size=0.7, fold=4.0, form="log2_tpm"),
    "full_length_log_tpm_deep": lambda s: full_length(s, depth=3e6, size=5.0, form="log2_tpm"),
    # session 48: the same tables with genes filtered after the normalisation
    "full_length_log_tpm_filtered": filtered_genes,
    "full_length_log_tpm_variable": lambda s: filtered_genes(s, keep="variable"),
    "full_length_log_tpm_noisy_filtered": lambda s: filtered_genes(s, size=0.7, fold=4.0),
    "pearson_residuals": pearson_residuals,
    "pearson_residuals_program": lambda s: pearson_residuals(s, "counts_program"),
    "citeseq_proteins": citeseq,
    "citeseq_proteins_many": lambda s: citeseq(s, p=200, per=4, shared=10, signal=6.0),
    "spatial_spots": spots,
    "spatial_spots_mixed": lambda s: spots(s, purity=2.5, fold=3.0),
    # session 50: an unrecorded batch with two classes (the held-out labels see too little to judge it)
    "hidden_batch_two_classes": lambda s: gaussian_array(s, n=200, k=2, per=20, batch=1.0),
    # session 51: scikit-learn's make_classification (classes in a few features of large variance, each weak alone)
    "sklearn_classification": sklearn_classification,
    "sklearn_classification_one_cluster": lambda s: sklearn_classification(s, clusters=1),
    "sklearn_classification_redundant": lambda s: sklearn_classification(s, informative=10, redundant=20),
    "sklearn_classification_flipped": lambda s: sklearn_classification(s, flip=0.1),
    "sklearn_classification_scaled": lambda s: sklearn_classification(s, scaled=True),
    "sklearn_classification_small_two_class": lambda s: sklearn_classification(s, n=100, p=5000, k=2, informative=10),
    "sklearn_classification_weak": lambda s: sklearn_classification(s, clusters=1, sep=0.6),
    "sklearn_classification_eight_classes": lambda s: sklearn_classification(s, n=500, k=8, informative=16,
                                                                             clusters=1),
    # session 52: the docs' recipe (docs/sklearn.md: 200 x 100, 5 informative) and make_classification's defaults
    "sklearn_classification_recipe": lambda s: sklearn_classification(s, n=200, p=100, k=2, informative=5),
    "sklearn_classification_defaults": lambda s: sklearn_classification(s, n=100, p=20, k=2, informative=2,
                                                                        redundant=2),
    # session 59: planted markers on real arrays' samples (../shared/data)
    **{f"real_background_{name}": (lambda s, name=name: real_background(s, name)) for name in BACKGROUNDS},
}

ARRAY_METHODS = ["propagate", "propagate (no labels)", "fisher", "rank_genes_groups", "label_spreading_f",
                 "variance"]
COUNT_METHODS = ARRAY_METHODS + ["hvg_seurat_v3", "hvg_pearson"]
#: label-free anchors run only when named in ``--methods`` (label-free: the same order at every budget): Hotspot and
#: triku on counts, scanpy's seurat flavour on log values (tables of log2(TPM + 1))
ON_REQUEST = ["hotspot", "triku", "hvg_seurat"]


def per_class_labels(cls: np.ndarray, k: int, seed: int) -> np.ndarray:
    """``k`` labels drawn from every class (all of a smaller class), -1 elsewhere."""
    rng = np.random.default_rng(1000 + seed)
    y = np.full(cls.size, -1)
    for c in np.unique(cls):
        members = np.flatnonzero(cls == c)
        y[rng.choice(members, min(k, members.size), replace=False)] = c
    return y


def share_labels(cls: np.ndarray, share: float, seed: int) -> np.ndarray:
    """A random ``share`` of the samples labeled (at least 2, whatever their classes), -1 elsewhere: "1 %" of a
    300-sample array is 3 labels, often 2 in one class and 1 in another."""
    rng = np.random.default_rng(2000 + seed)
    y = np.full(cls.size, -1)
    pick = rng.choice(cls.size, max(2, round(share * cls.size)), replace=False)
    y[pick] = cls[pick]
    return y


def budget_labels(cls: np.ndarray, budget: str, seed: int) -> np.ndarray:
    """The labels of a budget: "k/class" (:func:`per_class_labels`) or "s%" (:func:`share_labels`)."""
    if budget.endswith("%"):
        return share_labels(cls, float(budget[:-1]) / 100.0, seed)
    return per_class_labels(cls, int(budget.split("/")[0]), seed)


def recall(order, markers: np.ndarray) -> float:
    return float(np.isin(np.asarray(order)[:markers.size], markers).mean())


def run(shapes, seeds, budgets, methods=None) -> list[dict]:
    """Recall of every method (``methods``: those of :data:`COUNT_METHODS` to run, None: all that fit the data) on
    every shape x seed x label budget."""
    rows = []
    for shape in shapes:
        for seed in seeds:
            X, counts, cls, markers = SHAPES[shape](seed)
            kind = "counts" if counts is not None else "microarray"
            data = {"expression": X, "counts": counts}
            for budget in budgets:
                y = budget_labels(cls, budget, seed)
                for method in [m for m in (COUNT_METHODS if counts is not None else ARRAY_METHODS) + ON_REQUEST
                               if (m in methods if methods else m not in ON_REQUEST)]:
                    hidden = method.endswith("(no labels)")
                    t0 = time.perf_counter()
                    order = rank(method.split(" ")[0], data, np.full_like(y, -1) if hidden else y, seed, kind)
                    value = np.nan if order is None else recall(order, markers)
                    rows.append({"shape": shape, "seed": seed, "labels": budget, "method": method, "recall": value})
                    print(f"{shape:18s} seed {seed} {budget:>8s} {method:24s} {value:.3f} "
                          f"({time.perf_counter() - t0:.1f} s)", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    import pandas as pd

    frame = pd.DataFrame(rows)
    mean = frame.pivot_table(index=["shape", "labels"], columns="method", values="recall", aggfunc="mean", sort=False)
    methods = [m for m in COUNT_METHODS + ON_REQUEST if m in mean.columns]
    lines = ["| shape | labels | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for (shape, labels), values in mean.iterrows():
        best = np.nanmax(values[methods].to_numpy(dtype=float))
        cells = ["—" if np.isnan(values[m]) else (f"**{values[m]:.3f}**" if values[m] == best else f"{values[m]:.3f}")
                 for m in methods]
        lines.append(f"| {shape} | {labels} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", choices=list(SHAPES),
                    default=[s for s in SHAPES if DATA.exists() or not s.startswith("real_background")])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    ap.add_argument("--per-class", nargs="*", type=int, default=[3, 10], help="labels per class (none: only --share)")
    ap.add_argument("--share", nargs="*", type=float, default=[],
                    help="also label this percentage of the samples at random (e.g. --share 1: 1 %%, at least 2)")
    ap.add_argument("--methods", nargs="+", choices=COUNT_METHODS + ON_REQUEST, metavar="METHOD",
                    help=f"only these (default: all of {', '.join(COUNT_METHODS)}; {', '.join(ON_REQUEST)} only when "
                         "named; e.g. --methods propagate to compare "
                         "two versions of it, each with PYTHONPATH at its src)")
    ap.add_argument("--out", help="also write every measurement (shape, seed, labels, method, recall) as TSV")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # the methods' warnings (graph notes) would bury the lines
    rows = run(args.shapes, args.seeds, [f"{k}/class" for k in args.per_class] + [f"{v:g}%" for v in args.share],
               args.methods)
    if args.out:
        import pandas as pd

        pd.DataFrame(rows).to_csv(args.out, sep="\t", index=False)
    print("\nRecall of the planted markers in the top m, mean over seeds "
          f"{' '.join(map(str, args.seeds))}; **bold** = best of the row.\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
