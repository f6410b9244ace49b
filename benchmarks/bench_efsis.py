"""EFSIS speed benchmark (issue 4) and peer ratios (issue 7).

    python benchmarks/bench_efsis.py [--quick] [--n-jobs 2]

1. Full EFSIS (SAM, GeoDE, ReliefF, information gain x 50 bootstraps, nine thresholds)
   for one training fold of a synthetic 54 x 12625 matrix (the paper's AML size; no
   such file ships), with the time per ranker and the peak traced memory; goal < 0.5 s
   on 2 cores (issue #16). Median of --repeats runs after a warm-up (which also loads
   the compiled kernels: the first use on a machine compiles them, about 40 s, once).
2. The same for one 90 % training fold of cns.arff, dlbcl.arff and ALLAML
   (../shared/data, skipped when absent).
3. Peer ratios: our ReliefF vs scikit-rebate's ReliefF (same k = 10, all
   instances; equal scores checked) and our information gain vs scikit-learn's
   mutual_info_classif, on ALLAML, TOX-171, PCMAC, Isolet (--quick: ALLAML only).
   Every implementation is warmed up once untimed (ours on the full data, the slow
   peers on a 40-sample x 200-feature slice: imports, thread pools, first-call
   allocations); ours is then timed --repeats times (``seconds`` = median,
   ``seconds_min`` = minimum), the peers --peer-repeats times (default once; their
   median). ``ratio`` = peer median / our median. All in one BLAS thread, so the
   comparison is one core against one core (neither side uses more by default).

Writes benchmarks/results/bench_efsis.tsv (bench_efsis_partial.tsv with --peers or
--no-efsis) and prints it. Wall-clock numbers depend on the machine's load: the
table records os.getloadavg() (1-minute) at the end of each row.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
from pathlib import Path

import numpy as np

from ssfs.methods import efsis
from ssfs.methods._labeled import labeled
from ssfs.methods.infogain import information_gain
from ssfs.methods.relieff import relieff_scores

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "benchmarks" / "results"
RANKERS = ("sam", "geode", "relieff", "infogain")


def load(name):
    from scipy.io import arff, loadmat

    if name.endswith(".arff"):
        d, meta = arff.loadarff(DATA / "efsis" / name)
        cols = meta.names()
        X = np.column_stack([d[a] for a in cols[:-1]]).astype(float)
        y = np.array([int(v.decode()) for v in d[cols[-1]]])
        return X, y
    m = loadmat(DATA / "asu" / f"{name}.mat")
    X = m["X"]
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    y = np.unique(m["Y"].ravel(), return_inverse=True)[1]
    return X.astype(float), y


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def repeated(fn, repeats: int, warmup=None):
    """(median seconds, min seconds, output) of ``repeats`` timed calls after one untimed
    warm-up call (``warmup``, default ``fn`` itself)."""
    (warmup or fn)()
    times, out = [], None
    for _ in range(max(1, repeats)):
        t, out = timed(fn)
        times.append(t)
    return float(np.median(times)), float(np.min(times)), out


def efsis_row(label, X, y, n_jobs, n_boot=50, repeats=5):
    rng = np.random.default_rng(0)
    XL, codes, _ = labeled(X, y, method="bench")
    boots, seeds = efsis.draw_bootstraps(codes, n_boot, rng)
    per = {}
    for r in RANKERS:  # breakdown: each ranker alone on the same resamples (median of repeats)
        per[r] = repeated(lambda r=r: efsis.bootstrap_chunk(XL, codes, boots, seeds, [r], n_jobs=n_jobs), repeats)[0]

    def fold():
        return efsis.efsis_fold(X, y, np.random.default_rng(0), n_boot=n_boot,
                                top_percent=[0.3, 0.5, 0.7, 1, 1.5, 2, 3, 4, 5], n_jobs=n_jobs)

    total, fastest, _ = repeated(fold, repeats)  # timed without tracemalloc: tracing slows the run
    tracemalloc.start()
    fold()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "benchmark": "efsis_fold", "dataset": label, "n": X.shape[0], "p": X.shape[1], "n_jobs": n_jobs,
        "seconds": round(total, 3), "seconds_min": round(fastest, 3), "repeats": repeats, "peer_seconds": "",
        "ratio": "",
        "detail": "; ".join(f"{r}={per[r]:.3f}s" for r in RANKERS) + f"; peak_traced_MB={peak / 2**20:.0f}",
        "load": round(os.getloadavg()[0], 2),
    }


def peer_rows(name, X, y, skip_skrebate=False, repeats=5, peer_repeats=1):
    from scipy import sparse
    from sklearn.feature_selection import mutual_info_classif
    from threadpoolctl import threadpool_limits

    rows = []
    K = np.unique(y).size
    # scikit-rebate's conventions: <= 10 distinct values = categorical; multi-class miss weights
    kw = {"discrete_threshold": 10} if K == 2 else {"discrete_threshold": 10, "miss_weights": "neighbourhood"}
    Xo = sparse.csr_matrix(X) if np.mean(X != 0) < 0.1 else X  # text data: our sparse path
    # a two-class slice for warming the peers up
    c0, c1 = np.unique(y)[:2]
    sl = np.r_[np.flatnonzero(y == c0)[:20], np.flatnonzero(y == c1)[:20]]
    Xw, yw = X[sl][:, :200], y[sl]

    def row(bench, ours, peer, detail):
        return {
            "benchmark": bench, "dataset": name, "n": X.shape[0], "p": X.shape[1], "n_jobs": 1,
            "seconds": round(ours[0], 4), "seconds_min": round(ours[1], 4), "repeats": repeats,
            "peer_seconds": round(peer[0], 2) if peer else "", "peer_repeats": peer_repeats if peer else "",
            "ratio": round(peer[0] / ours[0], 1) if peer else "", "detail": detail,
            "load": round(os.getloadavg()[0], 2),
        }

    with threadpool_limits(limits=1):
        ours = repeated(lambda: relieff_scores(Xo, y, np.random.default_rng(0), k=10, **kw), repeats)
        peer, detail = None, f"{kw}"
        if not skip_skrebate:
            from skrebate import ReliefF

            # label_type: scikit-rebate would treat > 10 classes (Isolet) as a continuous outcome
            lt = "binary" if K == 2 else "multiclass"
            peer = repeated(lambda: ReliefF(n_neighbors=10, label_type=lt).fit(X, y).feature_importances_,
                            peer_repeats,
                            warmup=lambda: ReliefF(n_neighbors=10, label_type="binary").fit(Xw, yw))
            diff = float(np.nanmax(np.abs(ours[2] - peer[2])))
            detail = f"max|ours-skrebate|={diff:.2e} {kw}"
        rows.append(row("relieff_vs_skrebate", ours, peer, detail))
        ours = repeated(lambda: information_gain(X, y), repeats)
        peer = repeated(lambda: mutual_info_classif(X, y, discrete_features=False, random_state=0), peer_repeats,
                        warmup=lambda: mutual_info_classif(Xw, yw, discrete_features=False, random_state=0))
        rows.append(row("infogain_vs_mutual_info_classif", ours, peer,
                        "MDL information gain vs kNN mutual information (speed only)"))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="synthetic + ALLAML only")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--no-skrebate", action="store_true", help="skip the slow scikit-rebate runs")
    ap.add_argument("--peers", nargs="*", default=None, help="peer datasets (default: all; --quick: ALLAML)")
    ap.add_argument("--no-efsis", action="store_true", help="skip the EFSIS timings")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of ours (median reported)")
    ap.add_argument("--peer-repeats", type=int, default=1, help="timed runs of the peers (median reported)")
    a = ap.parse_args(argv)
    rows = []
    rng = np.random.default_rng(42)
    n, p = 54, 12625
    y = np.r_[np.zeros(26, int), np.ones(28, int)]
    X = rng.normal(7, 1.5, size=(n, p))
    X[y == 1, :100] += rng.normal(0.8, 0.3, size=100)
    if not a.no_efsis:
        rows.append(efsis_row("synthetic_54x12625", X, y, a.n_jobs, repeats=a.repeats))
    if DATA.exists():
        from sklearn.model_selection import StratifiedKFold

        for name in ([] if a.no_efsis else ["ALLAML"] if a.quick else ["cns.arff", "dlbcl.arff", "ALLAML"]):
            Xd, yd = load(name)
            if name == "cns.arff":
                Xd = np.sign(Xd) * np.log2(1 + np.abs(Xd))
            elif name == "dlbcl.arff":
                Xd = np.log2(Xd)
            tr, _ = next(StratifiedKFold(10, shuffle=True, random_state=0).split(Xd, yd))
            rows.append(efsis_row(name, Xd[tr], yd[tr], a.n_jobs, repeats=a.repeats))
        peers = a.peers if a.peers is not None else ["ALLAML"] if a.quick else ["ALLAML", "TOX-171", "PCMAC", "Isolet"]
        for name in peers:
            Xd, yd = load(name)
            rows.extend(peer_rows(name, Xd, yd, a.no_skrebate, a.repeats, a.peer_repeats))
    import pandas as pd

    df = pd.DataFrame(rows)
    OUT.mkdir(parents=True, exist_ok=True)
    tag = "" if (a.peers is None and not a.no_efsis) else "_partial"
    df.to_csv(OUT / f"bench_efsis{tag}.tsv", sep="\t", index=False)
    with pd.option_context("display.width", 250, "display.max_colwidth", 90):
        print(df.to_string(index=False))


if __name__ == "__main__":
    main()
