"""Time and peak memory of EnsCLS (default committee, eq. 4) and SSFI (paper settings:
eq. 1 committee, n = 1, maxiter = 10) on ALLAML, TOX-171 and PCMAC, whole data set with
3 labeled samples per class (seed 0). Each (dataset, method) runs in a fresh process so
its peak resident memory (ru_maxrss) is its own.

    python benchmarks/bench_ensembles.py            # all three data sets
    python benchmarks/bench_ensembles.py --quick    # ALLAML only
    python benchmarks/bench_ensembles.py --methods ssfi --datasets ALLAML,TOX-171,PCMAC,colon,leukemia
    python benchmarks/bench_ensembles.py --methods enscls_paper --datasets PCMAC --threads 2

``enscls_paper`` is the paper's committee (``weights: literal``: every member searches its own
random subspace, as in config/enscls.yaml); ``enscls`` the defaults (members share one PCA graph).

``cpu_seconds`` (user + system time of the run, all threads) is the figure to compare on a
shared machine, where wall time depends on the other processes.

Results: benchmarks/results/bench_ensembles.tsv. The data are read from ../shared/data
(never copied into the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "asu"
OUT = ROOT / "benchmarks" / "results"
DATASETS = ["ALLAML", "TOX-171", "PCMAC"]
METHODS = ["enscls_paper", "enscls", "ssfi"]
#: benchmark labels -> (method, parameters): the paper's committee (issue #16's goal) and the defaults
VARIANTS = {"enscls_paper": ("enscls", {"weights": "literal"})}


def load(name: str):
    import numpy as np
    import scipy.io

    d = scipy.io.loadmat(DATA / f"{name}.mat")
    X = d["X"]
    X = X.toarray() if hasattr(X, "toarray") else X
    Y = np.asarray(d["Y"]).ravel()
    rng = np.random.default_rng(0)
    y = np.full(Y.size, -1, dtype=np.int64)
    for code, c in enumerate(np.unique(Y)):
        y[rng.choice(np.flatnonzero(c == Y), 3, replace=False)] = code
    return np.asarray(X, dtype=np.float64), y


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def one(dataset: str, method: str) -> dict:
    from ssfs import run_method

    X, y = load(dataset)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu, t = _cpu(), time.perf_counter()
    name, params = VARIANTS.get(method, (method, {}))
    r = run_method(name, X, y, rng=0, **params)
    sec, cpu = time.perf_counter() - t, _cpu() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    extra = {k: v for k, v in r.result.extra.items() if isinstance(v, (int, float))}
    return {"dataset": dataset, "method": method, "n": X.shape[0], "p": X.shape[1],
            "n_labeled": int((y >= 0).sum()), "seconds": round(sec, 2), "cpu_seconds": round(cpu, 2),
            "threads": os.environ.get("SSFS_THREADS", "1"), "peak_rss_mb": round(peak / 1024, 1),
            "rss_before_mb": round(base / 1024, 1), "extra": json.dumps(extra)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="ALLAML only")
    ap.add_argument(
        "--datasets",
        help=f"comma-separated .mat names in ../shared/data/asu (default: {','.join(DATASETS)})",
    )
    ap.add_argument("--methods", help=f"comma-separated methods (default: {','.join(METHODS)})")
    ap.add_argument("--out", help="result file name in benchmarks/results (default by mode)")
    ap.add_argument("--threads", type=int, default=1, help="SSFS_THREADS of each run (EnsCLS members in threads)")
    ap.add_argument("--one", nargs=2, metavar=("DATASET", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    if not DATA.exists():
        sys.exit(f"benchmark data not found at {DATA}")
    datasets = args.datasets.split(",") if args.datasets else (DATASETS[:1] if args.quick else DATASETS)
    methods = args.methods.split(",") if args.methods else METHODS
    custom = bool(args.datasets or args.methods)
    rows = []
    for ds in datasets:
        for m in methods:
            cmd = [sys.executable, __file__, "--one", ds, m]
            env = {**os.environ, "SSFS_THREADS": str(args.threads)}
            res = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            if res.returncode:
                print(res.stderr, file=sys.stderr)
                continue
            row = json.loads(res.stdout.strip().splitlines()[-1])
            print("\t".join(str(v) for v in row.values()), flush=True)
            rows.append(row)
    OUT.mkdir(parents=True, exist_ok=True)
    name = args.out or ("bench_ensembles_custom.tsv" if custom else
                        "bench_ensembles_quick.tsv" if args.quick else "bench_ensembles.tsv")
    path = OUT / name
    with open(path, "w") as fh:
        fh.write(f"# {platform.platform()}; {os.cpu_count()} cpus; python {platform.python_version()}\n")
        fh.write("\t".join(rows[0].keys()) + "\n" if rows else "")
        for row in rows:
            fh.write("\t".join(str(v) for v in row.values()) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
