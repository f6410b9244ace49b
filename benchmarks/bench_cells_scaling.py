"""Issue #16 item 6, single cell: graph + CLS from raw sparse counts against scanpy, 10k-1M cells.

    python benchmarks/bench_cells_scaling.py --cells 10000 30000 100000      # scaling curve
    /usr/bin/time -v python benchmarks/bench_cells_scaling.py --cells 1000000 # the goal (~10 GB)

For each size, in two fresh processes on the same generated matrix (planted markers,
log-normalised CSR, 2,000 genes, 1 % of the cells labeled):

* ``ssfs``: PCA (``ssfs``'s ``pca_embedding``, the one ``space="pca"`` uses, or with
  ``--pca scanpy`` scanpy's ``pp.pca``; 50 components) -> ``knn_search`` on the PCA
  representation (exact blocked up to 50,000 cells, pynndescent above) -> ``cls`` with that
  connectivity as ``graph=`` (heat-kernel weights in gene space on its edges);
* ``scanpy``: ``pp.pca`` + ``pp.neighbors`` + ``tl.rank_genes_groups`` (t-test on the
  labeled cells), the usual single-cell pipeline.

Prints wall and CPU seconds and peak RSS of each process (os.wait4; ``gen`` the peak
once the matrix is generated, before the timed part), the ratio
ssfs / scanpy, and, with several sizes, the fitted exponents of time ~ n^a. BLAS on
``--threads`` threads in both (default 2). Goal: 1M cells, ssfs <= 5 min and <= 16 GB,
within 2x of scanpy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def _matrix(cells: int, genes: int, seed: int):
    from ssfs.simulate import few_labels, generate_planted_markers
    from ssfs.singlecell import log_normalize

    rng = np.random.default_rng(seed)
    sim = generate_planted_markers(cells, genes, 8, 20, rng)
    X = log_normalize(sim.X)
    n_lab = max(16, cells // 100)
    y = few_labels(sim.cell_type, n_lab // 8, rng)
    return X, y, sim


def _child(args) -> dict:
    """One side in this process; returns timings (matrix generation excluded)."""
    import resource

    from threadpoolctl import threadpool_limits

    X, y, sim = _matrix(args.cells, args.genes, args.seed)
    planted = set(sim.markers.ravel().tolist())
    top = len(planted)
    del sim  # the raw counts: only the normalised matrix is timed
    out = {"gen_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2}
    with threadpool_limits(limits=args.threads):
        import anndata as ad
        import scanpy as sc

        t0, c0 = time.perf_counter(), time.process_time()
        if args.side == "ssfs":
            from scipy import sparse

            from ssfs import run_method
            from ssfs.methods._shared.graph import knn_search
            from ssfs.methods._shared.representation import pca_embedding

            if args.pca == "scanpy":
                pcs = sc.pp.pca(X, n_comps=args.pcs, random_state=args.seed)
            else:
                pcs = pca_embedding(X, args.pcs, seed=args.seed)
            t1 = time.perf_counter()
            ind, _ = knn_search(pcs, args.neighbors, method=args.search)
            n = X.shape[0]
            G = sparse.csr_matrix((np.ones(ind.size), (np.repeat(np.arange(n), ind.shape[1]), ind.ravel())),
                                  shape=(n, n))
            t2 = time.perf_counter()
            ranked = run_method("cls", X, y, graph=G)
            order = ranked.order
            out["stages"] = {"pca": t1 - t0, "knn": t2 - t1, "cls": time.perf_counter() - t2}
        else:
            from scipy import sparse

            if not hasattr(sparse.csr_array, "getnnz"):  # scanpy 1.11.5 + scipy 1.17 + pynndescent: shim
                sparse.csr_array.getnnz = lambda self, axis=None: sparse.csr_matrix(self).getnnz(axis=axis)
            a = ad.AnnData(X=X)
            sc.pp.pca(a, n_comps=args.pcs, random_state=args.seed)
            t1 = time.perf_counter()
            sc.pp.neighbors(a, n_neighbors=args.neighbors + 1, use_rep="X_pca", random_state=args.seed)
            t2 = time.perf_counter()
            lab = a[y >= 0].copy()
            lab.obs["type"] = [str(v) for v in y[y >= 0]]
            sc.tl.rank_genes_groups(lab, "type", method="t-test")
            names = lab.uns["rank_genes_groups"]["names"]
            per = top // len(names.dtype.names)
            order = np.array([int(g) for grp in names.dtype.names for g in names[grp][:per]])
            out["stages"] = {"pca": t1 - t0, "neighbors": t2 - t1, "rank_genes_groups": time.perf_counter() - t2}
        out["wall"] = time.perf_counter() - t0
        out["cpu"] = time.process_time() - c0
    out["recovered"] = len(planted & set(np.asarray(order)[:top].tolist())) / top
    return out


def _run_side(side: str, args) -> dict:
    cmd = [sys.executable, __file__, "--child", side, "--cells", str(args.cells[0]), "--genes", str(args.genes),
           "--seed", str(args.seed), "--threads", str(args.threads), "--pcs", str(args.pcs),
           "--neighbors", str(args.neighbors), "--search", args.search, "--pca", args.pca]
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    ap.add_argument("--genes", type=int, default=2_000)
    ap.add_argument("--pcs", type=int, default=50)
    ap.add_argument("--neighbors", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--search", default="auto", choices=["auto", "exact", "nndescent"])
    ap.add_argument("--pca", default="ours", choices=["ours", "scanpy"], help="the ssfs side's PCA")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sides", nargs="+", default=["ssfs", "scanpy"])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        args.side, args.cells = args.child, args.cells[0]
        print(json.dumps(_child(args)))
        return 0
    print(f"# {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; BLAS threads {args.threads}", flush=True)
    rows = []
    for n in args.cells:
        one = argparse.Namespace(**{**vars(args), "cells": [n]})
        res = {side: _run_side(side, one) for side in args.sides}
        for side, r in res.items():
            if "error" in r:
                print(f"{n:>9} {side:<7} {r['error']}", flush=True)
                continue
            st = " ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
            print(f"{n:>9} {side:<7} wall {r['wall']:8.1f} s  cpu {r['cpu']:8.1f} s  peak {r['peak_gb']:5.2f} GB "
                  f"(gen {r['gen_gb']:5.2f})  "
                  f"markers {r['recovered']:.0%}  ({st})", flush=True)
        if all("error" not in r for r in res.values()) and len(res) == 2:
            print(f"{n:>9} ratio ssfs/scanpy wall {res['ssfs']['wall'] / res['scanpy']['wall']:.2f}", flush=True)
        rows.append((n, res))
    for side in args.sides:
        ok = [(n, r[side]) for n, r in rows if "error" not in r[side]]
        if len(ok) >= 2:
            logn = np.log([n for n, _ in ok])
            a = {key: np.polyfit(logn, np.log([r[key] for _, r in ok]), 1)[0] for key in ("wall", "cpu", "peak_gb")}
            print(f"# {side}: wall ~ n^{a['wall']:.2f}, cpu ~ n^{a['cpu']:.2f}, peak RSS ~ n^{a['peak_gb']:.2f} "
                  f"over {ok[0][0]}-{ok[-1][0]} cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
