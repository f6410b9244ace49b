"""Issue #32 item 1: every graph score against its plain numpy / scikit-learn equivalent, side by side.

    python benchmarks/bench_graph_plain.py [--repeats 7] [--sizes ALLAML,Isolet,gauss20k] [--methods ...] [--data DIR]

Three sizes: ALLAML 72 x 7,129 (as ``scipy.io.loadmat`` returns it: Fortran-ordered), Isolet
1,560 x 617 (both from ../shared/data, skipped when absent) and a 20,000 x 50 Gaussian matrix with
5 planted features (two classes); 3 labeled samples per class. One BLAS thread on both sides.

"ours" is ``ssfs.run_method`` (input checks, graph, score, ranking with ties). "plain" is the same
score written directly with scikit-learn and numpy, as a user would: ``kneighbors_graph`` (brute
force) for the kNN edges, the heat kernel on them, the score's formula over all features at once
and ``np.argsort`` for the ranking (for csfs: scipy's Ward linkage and scikit-learn's
``davies_bouldin_score`` per cut; for enscls: a loop over the committee's members on the shared PCA
graph, scikit-learn's ``PCA``). Both sides' scores are compared (Spearman correlation; equal up to
rounding unless the kNN lists differ on ties).

The two run alternately (ours, plain, ours, plain, ...) after a warm-up of each; the table gives the
median process CPU time of each side and the median of the per-pair ratios ours / plain (a ratio
<= 1: ours as fast or faster), and the 1-minute load average at the start and end.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from scipy import sparse

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
K = 10
METHODS = ["laplacian", "cls", "c3", "c4", "sselect", "csfs", "csfs:knn", "enscls"]


# ------------------------------------------------------------------ the plain side
def plain_heat_graph(Z, k=K):
    """Symmetric heat-kernel kNN graph: scikit-learn's brute-force kNN distances, t = their mean square."""
    from sklearn.neighbors import kneighbors_graph

    D = kneighbors_graph(Z, k, mode="distance")
    d2 = D.data**2
    t = d2[d2 > 0].mean()
    W = sparse.csr_matrix((np.exp(-d2 / t), D.indices, D.indptr), shape=D.shape)
    return W.maximum(W.T).tocsr()


def plain_laplacian(X, W):
    d = np.asarray(W.sum(axis=1)).ravel()
    X2 = X * X
    num = d @ X2 - np.einsum("ij,ij->j", X, W @ X)
    den = d @ X2 - (d @ X) ** 2 / d.sum()
    return num / den


def label_terms(X, y):
    """(M, C, n_m, n_c) of the balanced CLS: per labeled sample, the mean squared difference to its
    must-link (same class) and cannot-link (other classes) partners, summed."""
    lab = y >= 0
    M = np.zeros(X.shape[1])
    C = np.zeros(X.shape[1])
    n_m = n_c = 0
    XL, yl = X[lab], y[lab]
    for c in np.unique(yl):
        A, B = XL[yl == c], XL[yl != c]
        if len(A) >= 2:
            M += 2 * len(A) / (len(A) - 1) * ((A - A.mean(0)) ** 2).sum(0)
            n_m += len(A)
        if len(B):
            C += (A**2).sum(0) - 2 * A.sum(0) * B.mean(0) + len(A) * (B**2).mean(0)
            n_c += len(A)
    return M, C, n_m, n_c


def share(n_m, n, w=10.0):
    return w * n_m / (w * n_m + n) if n_m else 0.0


def plain_cls(X, y, W):
    """Balanced CLS: the kNN graph without edges between differently labeled samples, the
    Laplacian score's terms per unit degree, the label terms per constrained sample."""
    E = W.tocoo()
    keep = ~((y[E.row] >= 0) & (y[E.col] >= 0) & (y[E.row] != y[E.col]))
    W = sparse.csr_matrix((E.data[keep], (E.row[keep], E.col[keep])), shape=W.shape)
    d = np.asarray(W.sum(axis=1)).ravel()
    vol = d.sum()
    X2 = X * X
    G = (d @ X2 - np.einsum("ij,ij->j", X, W @ X)) / vol
    V = (d @ X2 - (d @ X) ** 2 / vol) / vol
    M, C, n_m, n_c = label_terms(X, y)
    s = share(n_m, X.shape[0]) if n_c else 0.0
    return ((1 - s) * G + s * M / max(2 * n_m, 1)) / ((1 - s) * V + s * C / max(2 * n_c, 1))


def plain_c3(X, y, gamma=100.0):
    """C3: binary kNN graph (weight 1 on edges touching an unlabeled sample, gamma on must-link
    pairs) over the sum of squared differences of the cannot-link pairs."""
    from sklearn.neighbors import kneighbors_graph

    A = kneighbors_graph(X, K, mode="connectivity")
    A = A.maximum(A.T).tocoo()
    free = y < 0
    lab = np.flatnonzero(y >= 0)
    a, b = np.triu_indices(lab.size, 1)
    same = y[lab[a]] == y[lab[b]]
    ml = np.c_[lab[a][same], lab[b][same]]
    cl = np.c_[lab[a][~same], lab[b][~same]]
    n = X.shape[0]
    W = sparse.csr_matrix(((free[A.row] | free[A.col]).astype(float), (A.row, A.col)), shape=(n, n))
    Mm = sparse.csr_matrix((np.ones(2 * len(ml)), (np.r_[ml[:, 0], ml[:, 1]], np.r_[ml[:, 1], ml[:, 0]])), shape=(n, n))
    W = (W - W.multiply(Mm) + gamma * Mm).tocsr()
    d = np.asarray(W.sum(axis=1)).ravel()
    num = 2 * (d @ (X * X) - np.einsum("ij,ij->j", X, W @ X))
    den = 2 * ((X[cl[:, 0]] - X[cl[:, 1]]) ** 2).sum(0)
    return num / den


def plain_c4(X, y, W):
    ls = plain_laplacian(X, W)
    M, C, n_m, n_c = label_terms(X, y)
    s = share(n_m, X.shape[0])
    if n_m == 0 or s == 0:
        return ls
    return ls ** (1 - s) * ((M / n_m) / (C / max(n_c, 1))) ** s


def plain_sselect(X, y, W):
    d = np.asarray(W.sum(axis=1)).ravel()
    mu = d @ X / d.sum()
    cut = plain_laplacian(X, W)
    lab = np.flatnonzero(y >= 0)
    B = X[lab] > mu
    _, yi = np.unique(y[lab], return_inverse=True)
    Y = np.eye(yi.max() + 1)[yi].T  # C x l
    l = lab.size
    pos = Y @ B
    nc = Y.sum(1)[:, None]
    joint = np.stack([pos, nc - pos]) / l
    pg = joint.sum(1)
    py = nc / l
    with np.errstate(divide="ignore", invalid="ignore"):
        mi = np.where(joint > 0, joint * np.log(joint / (pg[:, None] * py[None])), 0).sum((0, 1))
        hg = -np.where(pg > 0, pg * np.log(pg), 0).sum(0)
    den = np.sqrt(hg * float(-(py * np.log(py)).sum()))
    nmi = np.where(den > 0, mi / np.where(den > 0, den, 1), 0)
    eta = 1 - share(l, X.shape[0])
    return eta * cut + (1 - eta) * (1 - nmi)


def plain_csfs(X, y):
    """Adaptive neighbourhood: Ward tree (scipy), the cut of 2..sqrt(n) clusters with the lowest
    Davies-Bouldin index (scikit-learn), heat-kernel edges within clusters, balanced CLS."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist, squareform
    from sklearn.metrics import davies_bouldin_score

    dist = pdist(X)
    Z = linkage(dist, method="ward")
    best, best_db = None, np.inf
    for c in range(2, int(np.sqrt(X.shape[0])) + 1):
        lab = fcluster(Z, c, criterion="maxclust")
        if np.unique(lab).size > 1:
            db = davies_bouldin_score(X, lab)
            if db < best_db - 1e-12:
                best, best_db = lab, db
    D2 = squareform(dist**2)
    rows, cols = np.nonzero(np.triu(best[:, None] == best[None, :], 1))
    d2 = D2[rows, cols]
    w = np.exp(-d2 / d2[d2 > 0].mean())
    n = X.shape[0]
    W = sparse.csr_matrix((np.r_[w, w], (np.r_[rows, cols], np.r_[cols, rows])), shape=(n, n))
    return plain_cls(X, y, W)


def plain_enscls(X, y):
    """The default committee: members of sqrt(p) random features and a bootstrap of the labels,
    each a balanced CLS on one heat-kernel kNN graph of 50 principal components; mean over members."""
    from sklearn.decomposition import PCA

    from ssfs.methods.enscls import plan_enscls

    W = plain_heat_graph(PCA(min(50, min(X.shape) - 1), random_state=0).fit_transform(X))
    plan = plan_enscls(y, X.shape[1], np.random.default_rng(0))
    total = np.zeros(X.shape[1])
    count = np.zeros(X.shape[1])
    for i in range(plan.n_members):
        f = plan.features[i]
        lab = np.full(X.shape[0], -1)
        drawn = np.unique(plan.boot[i])
        lab[drawn] = y[drawn]
        sc = plain_cls(X[:, f], lab, W)
        ok = np.isfinite(sc)
        np.add.at(total, f[ok], sc[ok])
        np.add.at(count, f[ok], 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def plain(method, X, y):
    """The plain computation of ``method`` and its ranking (argsort, lower is better)."""
    if method == "c3":
        s = plain_c3(X, y)
    elif method == "csfs":
        s = plain_csfs(X, y)
    elif method == "enscls":
        s = plain_enscls(X, y)
    else:
        W = plain_heat_graph(X)
        fn = {"laplacian": lambda: plain_laplacian(X, W), "cls": lambda: plain_cls(X, y, W),
              "csfs:knn": lambda: plain_cls(X, y, W), "c4": lambda: plain_c4(X, y, W),
              "sselect": lambda: plain_sselect(X, y, W)}[method]
        s = fn()
    np.argsort(np.nan_to_num(s, nan=np.inf), kind="stable")
    return s


def ours(method, X, y):
    from ssfs import run_method

    name, _, variant = method.partition(":")
    params = {"neighbourhood": variant} if variant else {}
    return run_method(name, X, y, rng=0, **params).scores


# ------------------------------------------------------------------ data and timing
def three_per_class(classes, seed=0):
    rng = np.random.default_rng(seed)
    y = np.full(classes.size, -1)
    for i, c in enumerate(np.unique(classes)):
        y[rng.choice(np.flatnonzero(classes == c), 3, replace=False)] = i
    return y


def datasets(names, data=DATA):
    from scipy.io import loadmat

    for name in names:
        if name == "gauss20k":
            rng = np.random.default_rng(0)
            Y = rng.integers(0, 2, 20_000)
            X = rng.normal(size=(20_000, 50))
            X[:, :5] += 1.5 * Y[:, None]
            yield "gaussian 20,000 x 50", X, three_per_class(Y)
            continue
        path = Path(data) / "asu" / f"{name}.mat"
        if not path.exists():
            print(f"# {name}: {path} not found, skipped")
            continue
        m = loadmat(path)
        X = np.asarray(m["X"], dtype=float)  # Fortran-ordered, as loadmat returns it
        yield f"{name} {X.shape[0]:,} x {X.shape[1]:,}", X, three_per_class(np.asarray(m["Y"]).ravel())


def spearman(a, b):
    from scipy.stats import spearmanr

    ok = np.isfinite(a) & np.isfinite(b)
    return float(spearmanr(a[ok], b[ok])[0])


def side_by_side(method, X, y, repeats):
    """Median CPU seconds of ours and plain and the median per-pair ratio, alternating runs."""
    clock = time.process_time
    a, b = ours(method, X, y), plain(method, X, y)  # warm-up
    ta, tb = [], []
    for _ in range(repeats):
        t = clock()
        ours(method, X, y)
        ta.append(clock() - t)
        t = clock()
        plain(method, X, y)
        tb.append(clock() - t)
    ratios = np.array(ta) / np.array(tb)
    return np.median(ta), np.median(tb), np.median(ratios), ratios.min(), ratios.max(), spearman(a, b)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--sizes", default="ALLAML,Isolet,gauss20k")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--data", default=str(DATA), help="the benchmark data folder (default ../shared/data)")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    os.environ["SSFS_THREADS"] = "1"
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f}, one BLAS thread, CPU seconds, "
          f"medians of {args.repeats} alternating pairs")
    print("| data | score | ours (s) | plain (s) | ours / plain (min-max) | Spearman |")
    print("|---|---|---|---|---|---|")
    with threadpool_limits(1):
        for label, X, y in datasets(args.sizes.split(","), args.data):
            for method in args.methods.split(","):
                if method == "csfs" and X.shape[0] > 5000:
                    print(f"| {label} | {method} | - | - | refused above 5,000 samples (all pairs) | |")
                    continue
                reps = args.repeats if X.shape[0] < 5000 else max(3, args.repeats // 2)
                ta, tb, r, lo, hi, rho = side_by_side(method, X, y, reps)
                print(f"| {label} | {method} | {ta:.4f} | {tb:.4f} | **{r:.2f}** ({lo:.2f}-{hi:.2f}) | {rho:.4f} |",
                      flush=True)
    print(f"# load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
