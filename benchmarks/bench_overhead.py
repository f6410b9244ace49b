"""Issue #16 items 3-6: the cost around the kernels, each beside its peer in one run.

    python benchmarks/bench_overhead.py

1. start-up: ``import ssfs.runner`` + registry load in a fresh interpreter (wall, peak RSS),
   beside a bare ``import numpy, scipy.sparse`` (the floor);
2. kNN search (k = 10/15, one BLAS thread): ``knn_search`` exact (float64 / float32 blocks)
   against scikit-learn's ``NearestNeighbors`` (brute force) on PCMAC (../shared/data, skipped
   when absent) and on a 20,000 x 50 Gaussian "PCA" matrix; the neighbour sets are compared;
3. ``run_method("fisher", X, y)`` with every sample labeled against ``f_classif`` alone
   (goal <= 1.2x) on Isolet / PCMAC when present, else a 1,560 x 617 Gaussian matrix;
4. ``run_method(m, X, y)`` for the label-aware scores ``--label-methods`` (default the graph scores
   cls, c3, c4, sselect, csfs with the kNN neighbourhood, enscls, and cs1, cs2, fisher) on 40,000
   samples x ``--label-features`` (default 200) features with 20,000 labeled (2 classes, 5 planted
   features), kNN graph included, each in a fresh process with ``$SSFS_THREADS`` = ``--threads``
   (default 2): wall, CPU and peak RSS (issue #32 goal: < 30 s on 2 cores); also the planted
   features' ranks.

Medians of --repeats runs; the 1-minute load average is printed (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


#: the clock of the medians: wall (perf_counter), or CPU time with --cpu (one thread: steadier on a busy machine)
CLOCK = {"fn": time.perf_counter}


def _median_time(fn, repeats: int) -> float:
    clock = CLOCK["fn"]
    ts = []
    for _ in range(repeats):
        t = clock()
        fn()
        ts.append(clock() - t)
    return float(np.median(ts))


def _fresh(code: str) -> tuple[float, float]:
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code])
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t, usage.ru_maxrss / 1024


def _mat(name):
    from scipy.io import loadmat

    path = DATA / "asu" / f"{name}.mat"
    if not path.exists():
        return None
    m = loadmat(path)
    return np.asarray(m["X"], dtype=float), np.asarray(m["Y"]).ravel()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sections", default="1,2,3,4", help="which sections to run (comma-separated: 1,2,3,4)")
    ap.add_argument("--label-methods", default=LABEL_METHODS, help="section 4: the methods (comma-separated)")
    ap.add_argument("--label-features", type=int, default=200, help="section 4: number of features")
    ap.add_argument("--threads", type=int, default=2, help="section 4: $SSFS_THREADS of each run")
    ap.add_argument("--cpu", action="store_true", help="medians of CPU time (time.process_time) instead of wall")
    args = ap.parse_args(argv)
    sections = {int(v) for v in args.sections.split(",")}
    if args.cpu:
        CLOCK["fn"] = time.process_time
    from threadpoolctl import threadpool_limits

    print(f"# load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cpus, {'CPU' if args.cpu else 'wall'} time")
    if 1 in sections:
        _startup(args.repeats)
    _kernels(args.repeats, sections, threadpool_limits)
    if 4 in sections:
        _many_labeled(args.label_methods, args.label_features, args.threads)
    print(f"# load {os.getloadavg()[0]:.1f}; peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


def _startup(repeats: int) -> None:
    floor = [_fresh("import numpy, scipy.sparse") for _ in range(repeats)]
    ours = [_fresh("import ssfs.runner; ssfs.runner.get_method('variance')") for _ in range(repeats)]
    print(f"start-up  ssfs {np.median([w for w, _ in ours]):.2f} s {np.median([m for _, m in ours]):.0f} MB | "
          f"numpy+scipy.sparse {np.median([w for w, _ in floor]):.2f} s {np.median([m for _, m in floor]):.0f} MB")


MANY_LABELED = """
import sys, time, numpy as np
from ssfs import run_method
method, p = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
n = 40_000
y = rng.integers(0, 2, n)
X = rng.normal(size=(n, p))
X[:, :5] += 1.5 * y[:, None]
lab = np.full(n, -1)
lab[:20_000] = y[:20_000]
name, _, variant = method.partition(":")
t, c = time.perf_counter(), time.process_time()
r = run_method(name, X, lab, **({"neighbourhood": variant} if variant else {}))
print(round(time.perf_counter() - t, 2), round(time.process_time() - c, 2), sorted(r.order[:5].tolist()))
"""
LABEL_METHODS = "cls,c3,c4,sselect,csfs:knn,enscls,cs1,cs2,fisher"


def _many_labeled(methods: str, p: int, threads: int) -> None:
    for method in methods.split(","):
        env = dict(os.environ, SSFS_THREADS=str(threads))
        t = time.perf_counter()
        with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:  # no pipe to fill up
            proc = subprocess.Popen([sys.executable, "-c", MANY_LABELED, method, str(p)], env=env, stdout=fo, stderr=fe)
            _, status, usage = os.wait4(proc.pid, 0)
            fo.seek(0)
            fe.seek(0)
            out, err = fo.read(), fe.read()
        if status:
            print(f"{method}: failed after {time.perf_counter() - t:.0f} s: {err.strip().splitlines()[-1]}")
            continue
        wall, cpu, top = out.split(maxsplit=2)
        print(f"{method}, 40,000 x {p} with 20,000 labeled (graph included), {threads} threads: {wall} s wall, "
              f"{cpu} s CPU, peak RSS {usage.ru_maxrss / 1024:.0f} MB; top 5 {top.strip()} (planted: [0, 1, 2, 3, 4]); "
              f"load {os.getloadavg()[0]:.1f}", flush=True)


def _kernels(repeats: int, sections: set, threadpool_limits) -> None:
    from sklearn.feature_selection import f_classif
    from sklearn.neighbors import NearestNeighbors

    from ssfs import run_method
    from ssfs.io.builtin import waveform
    from ssfs.methods._shared.graph import knn_search

    rng = np.random.default_rng(0)
    sets = [("gaussian 20000 x 50", rng.normal(size=(20000, 50)) * np.linspace(3, 0.5, 50), 15)]
    pcmac = _mat("PCMAC") if 2 in sections else None
    if pcmac is not None:
        sets.insert(0, ("PCMAC 1943 x 3289", pcmac[0], 10))
    with threadpool_limits(limits=1):
        for name, X, k in sets if 2 in sections else []:
            res = {}
            for label, fn in (
                ("exact f64", lambda X=X, k=k: knn_search(X, k, method="exact")),
                ("exact f32", lambda X=X, k=k: knn_search(X, k, method="exact", precision="float32")),
                ("sklearn brute",
                 lambda X=X, k=k: NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(X).kneighbors(X)),
            ):
                res[label] = (_median_time(fn, repeats), fn())
            a = res["exact f64"][1][0]
            b = res["sklearn brute"][1][1][:, 1:]
            same = np.mean([len(set(u) & set(v)) / k for u, v in zip(a, b, strict=True)])
            t_sk = res["sklearn brute"][0]
            timings = ", ".join(f"{lab} {t:.3f} s ({t_sk / t:.1f}x sklearn)" for lab, (t, _) in res.items())
            print(f"kNN {name}: {timings}; neighbour sets equal to sklearn's: {same:.4f}")
        for name in ("Isolet", "PCMAC", "waveform") if 3 in sections else []:
            d = _mat(name) if name != "waveform" else waveform(5000, rng=np.random.default_rng(0))
            if d is None:
                X, y = rng.normal(size=(1560, 617)), rng.integers(0, 26, 1560)
                name = "gaussian 1560 x 617"
            else:
                X, y = np.asarray(d[0], dtype=float), d[1]
            codes = np.unique(y, return_inverse=True)[1]
            run_method("fisher", X, codes), f_classif(X, codes)  # warm-up (first calls: imports)
            t_ours = _median_time(lambda X=X, codes=codes: run_method("fisher", X, codes), repeats)
            t_peer = _median_time(lambda X=X, codes=codes: f_classif(X, codes), repeats)
            print(f"fisher, all {len(codes)} labeled, {name} {X.shape[0]} x {X.shape[1]}: run_method "
                  f"{1e3 * t_ours:.1f} ms, f_classif {1e3 * t_peer:.1f} ms, ratio {t_ours / t_peer:.2f}")


if __name__ == "__main__":
    sys.exit(main())
