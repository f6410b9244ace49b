"""Issue #32 item 5, single cell: ssfs's methods with their defaults against scanpy, 10k-1M cells.

    python benchmarks/bench_cells_scaling.py --cells 100000 300000              # propagate vs scanpy
    python benchmarks/bench_cells_scaling.py --cells 100000 --methods propagate laplacian cls
    python benchmarks/bench_cells_scaling.py --cells 100000 --methods graph:cls  # the older pipeline

For each size, every side runs in a fresh process on the same generated matrix (planted
markers: 8 cell types x 20 markers, log-normalised CSR, 2,000 genes, 1 % of the cells labeled):

* ``ssfs`` method M (``--methods``, default ``propagate``, the semi-supervised default):
  ``run_method(M, X, y)`` with M's defaults (its own PCA and kNN graph);
  ``graph:M`` is the older pipeline: ``pca_embedding`` -> ``knn_search`` (exact up to 50,000
  cells, pynndescent above) -> M with that connectivity as ``graph=``;
* ``scanpy``: ``pp.pca`` + ``pp.neighbors`` + ``tl.rank_genes_groups`` (``--test``, default
  Wilcoxon, on the labeled cells), each with scanpy's defaults, the usual single-cell pipeline.

Before the timed part each process warms up on a 9,000-cell matrix (the same calls; above
8,192 cells scanpy's neighbours run pynndescent, whose numba functions compile on first use):
its time is reported apart (``warm-up``). Prints wall and CPU seconds and peak RSS of each
process (os.wait4; ``gen`` the peak once the matrix is generated, before the timed part), the
ratios method / scanpy, the share of planted markers in the top 160, and with several sizes the
fitted exponents of time ~ n^a. BLAS and numba on ``--threads`` threads in both (default 2).
Goal (issue #32): at 1M cells, peak <= scanpy's and time <= scanpy's (<= 0.8x for laplacian/cls).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

WARM_CELLS = 9_000


def _matrix(cells: int, genes: int, seed: int):
    from ssfs.simulate import few_labels, generate_planted_markers
    from ssfs.singlecell import log_normalize

    rng = np.random.default_rng(seed)
    sim = generate_planted_markers(cells, genes, 8, 20, rng)
    X = log_normalize(sim.X)
    n_lab = max(16, cells // 100)
    y = few_labels(sim.cell_type, n_lab // 8, rng)
    return X, y, sim


def _ssfs(method: str, X, y, args):
    """The order of the features by ``method`` (``graph:M``: M on ssfs's PCA + kNN connectivity)."""
    from scipy import sparse

    from ssfs import run_method
    from ssfs.methods._shared.graph import knn_search
    from ssfs.methods._shared.representation import pca_embedding

    if not method.startswith("graph:"):
        return run_method(method, X, y).order, {}
    t0 = time.perf_counter()
    pcs = pca_embedding(X, args.pcs, seed=args.seed)
    t1 = time.perf_counter()
    ind, _ = knn_search(pcs, args.neighbors)
    n = X.shape[0]
    G = sparse.csr_matrix((np.ones(ind.size), (np.repeat(np.arange(n), ind.shape[1]), ind.ravel())), shape=(n, n))
    t2 = time.perf_counter()
    order = run_method(method.partition(":")[2], X, y, graph=G).order
    return order, {"pca": t1 - t0, "knn": t2 - t1, "score": time.perf_counter() - t2}


def _scanpy(X, y, args, top: int):
    """scanpy's pipeline with its defaults; the top ``top`` genes, the same number from each class."""
    import anndata as ad
    import scanpy as sc
    from scipy import sparse

    if not hasattr(sparse.csr_array, "getnnz"):  # scanpy 1.11.5 + scipy 1.17 + pynndescent: shim
        sparse.csr_array.getnnz = lambda self, axis=None: sparse.csr_matrix(self).getnnz(axis=axis)
    t0 = time.perf_counter()
    a = ad.AnnData(X=X)
    sc.pp.pca(a, random_state=args.seed)
    t1 = time.perf_counter()
    sc.pp.neighbors(a, random_state=args.seed)
    t2 = time.perf_counter()
    lab = a[y >= 0].copy()
    lab.obs["type"] = [str(v) for v in y[y >= 0]]
    sc.tl.rank_genes_groups(lab, "type", method=args.test)
    names = lab.uns["rank_genes_groups"]["names"]
    per = max(1, top // len(names.dtype.names))
    order = np.array([int(g) for grp in names.dtype.names for g in names[grp][:per]])
    return order, {"pca": t1 - t0, "neighbors": t2 - t1, "rank_genes_groups": time.perf_counter() - t2}


def _child(args) -> dict:
    """One side in this process: a warm-up on a small matrix, then the timed run (matrix
    generation excluded)."""
    import resource

    from threadpoolctl import threadpool_limits

    out = {}
    with threadpool_limits(limits=args.threads):
        Xw, yw, _ = _matrix(WARM_CELLS, args.genes, args.seed + 1)
        t = time.perf_counter()
        if args.side == "scanpy":
            _scanpy(Xw, yw, args, 160)
        else:
            _ssfs(args.side, Xw, yw, args)
            if args.cells > 50_000:  # ssfs's search runs pynndescent above 50,000 cells: compile it too
                from ssfs.methods._shared.graph import knn_search
                from ssfs.methods._shared.representation import pca_embedding

                knn_search(pca_embedding(Xw, args.pcs, seed=0), args.neighbors, method="nndescent")
        out["warmup"] = time.perf_counter() - t
        del Xw, yw
    X, y, sim = _matrix(args.cells, args.genes, args.seed)
    planted = set(sim.markers.ravel().tolist())
    top = len(planted)
    del sim  # the raw counts: only the normalised matrix is timed
    out["gen_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    with threadpool_limits(limits=args.threads):
        t0, c0 = time.perf_counter(), time.process_time()
        if args.side == "scanpy":
            order, out["stages"] = _scanpy(X, y, args, top)
        else:
            order, out["stages"] = _ssfs(args.side, X, y, args)
        out["wall"] = time.perf_counter() - t0
        out["cpu"] = time.process_time() - c0
    out["recovered"] = len(planted & set(np.asarray(order)[:top].tolist())) / top
    return out


def _run_side(side: str, args) -> dict:
    cmd = [sys.executable, __file__, "--child", side, "--cells", str(args.cells[0]), "--genes", str(args.genes),
           "--seed", str(args.seed), "--threads", str(args.threads), "--pcs", str(args.pcs),
           "--neighbors", str(args.neighbors), "--test", args.test]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads),
               NUMBA_NUM_THREADS=str(args.threads), SSFS_THREADS=str(args.threads))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, text=True)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        return {"error": f"exit status {status}"}
    res = json.loads(stdout.strip().splitlines()[-1])
    res["peak_gb"] = usage.ru_maxrss / 1024**2
    return res


def _print(n: int, side: str, r: dict) -> None:
    if "error" in r:
        print(f"{n:>9} {side:<10} {r['error']}", flush=True)
        return
    st = " ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
    print(f"{n:>9} {side:<10} wall {r['wall']:8.1f} s  cpu {r['cpu']:8.1f} s  peak {r['peak_gb']:5.2f} GB "
          f"(gen {r['gen_gb']:5.2f})  markers {r['recovered']:.0%}  warm-up {r['warmup']:.1f} s"
          + (f"  ({st})" if st else ""), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    ap.add_argument("--genes", type=int, default=2_000)
    ap.add_argument("--methods", nargs="+", default=["propagate"],
                    help="ssfs methods with their defaults; graph:M = M on ssfs's PCA + kNN graph")
    ap.add_argument("--pcs", type=int, default=50, help="graph:M only")
    ap.add_argument("--neighbors", type=int, default=15, help="graph:M only")
    ap.add_argument("--test", default="wilcoxon", help="scanpy's rank_genes_groups method")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-scanpy", action="store_true", help="the ssfs side(s) only")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        args.side, args.cells = args.child, args.cells[0]
        print(json.dumps(_child(args)))
        return 0
    sides = list(args.methods) + ([] if args.no_scanpy else ["scanpy"])
    print(f"# {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; BLAS threads {args.threads}", flush=True)
    rows = []
    for n in args.cells:
        one = argparse.Namespace(**{**vars(args), "cells": [n]})
        res = {}
        for side in sides:
            res[side] = _run_side(side, one)
            _print(n, side, res[side])
        peer = res.get("scanpy", {})
        for side in args.methods:
            if "error" not in res[side] and peer and "error" not in peer:
                print(f"{n:>9} ratio {side}/scanpy: wall {res[side]['wall'] / peer['wall']:.2f}, "
                      f"cpu {res[side]['cpu'] / peer['cpu']:.2f}, peak {res[side]['peak_gb'] / peer['peak_gb']:.2f}; "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
        rows.append((n, res))
    for side in sides:
        ok = [(n, r[side]) for n, r in rows if "error" not in r[side]]
        if len(ok) >= 2:
            logn = np.log([n for n, _ in ok])
            a = {key: np.polyfit(logn, np.log([r[key] for _, r in ok]), 1)[0] for key in ("wall", "cpu", "peak_gb")}
            print(f"# {side}: wall ~ n^{a['wall']:.2f}, cpu ~ n^{a['cpu']:.2f}, peak RSS ~ n^{a['peak_gb']:.2f} "
                  f"over {ok[0][0]}-{ok[-1][0]} cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
