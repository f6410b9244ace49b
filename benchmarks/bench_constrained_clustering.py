"""Thesis Table 4.3: COP-KMeans, MPC-KMeans and wCKM without feature selection,
unconstrained and with the constraints of 3 labeled samples per class, Rand index (%)
on the held-out samples, beside the published numbers.

Usage::

    python benchmarks/bench_constrained_clustering.py [--data ../shared/data] [--reps 3] [--n-init 3]
        [--datasets TOX-171,warpPIE10P,pixraw10P,PCMAC,RELATHE] [--out table43.tsv]
        [--algorithms wckm] [--wckm-penalty scaled]

``--wckm-penalty scaled``: wCKM's constraint weight on the data's scale
(``ssfs.experiment.constrained.scaled_penalty``) instead of eq. 4.4's 1 (issue #20: why wCKM does
not gain from the constraints).

Not a workflow rule (no ranking is involved); ``ssfs.experiment.constrained`` holds the protocol.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io

from ssfs.experiment.constrained import compare_constrained

PUBLISHED = {  # Table 4.3, Rand index in %: (COP unc, COP con, MPC unc, MPC con, wCKM unc, wCKM con)
    "PCMAC": (49.98, 50.04, 49.97, 49.98, 49.98, 51.38),
    "RELATHE": (50.40, 50.68, 50.32, 50.39, 50.41, 51.66),
    "TOX-171": (63.38, 64.75, 64.02, 65.04, 63.39, 65.9),
    "warpPIE10P": (70.12, 79.90, 78.40, 81.62, 70.93, 80.39),
    "pixraw10P": (87.80, 90.14, 88.48, 92.20, 90.54, 94.63),
}
COLS = [(a, s) for a in ("cop_kmeans", "mpc_kmeans", "wckm") for s in ("unconstrained", "constrained")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n-init", type=int, default=3)
    ap.add_argument("--datasets", default="TOX-171,warpPIE10P,pixraw10P,PCMAC,RELATHE")
    ap.add_argument("--out", default=None)
    ap.add_argument("--algorithms", default="cop_kmeans,mpc_kmeans,wckm")
    ap.add_argument("--wckm-penalty", default="1", help="eq. 4.4's constraint weight, or 'scaled'")
    a = ap.parse_args(argv)
    pen = a.wckm_penalty if a.wckm_penalty == "scaled" else float(a.wckm_penalty)
    frames = []
    for ds in a.datasets.split(","):
        m = scipy.io.loadmat(Path(a.data) / "asu" / f"{ds}.mat")
        X = np.asarray(m["X"], dtype=np.float64)
        y = np.unique(np.asarray(m["Y"]).ravel(), return_inverse=True)[1]
        for rep in range(a.reps):
            t = compare_constrained(X, y, np.random.default_rng([0, rep]), n_init=a.n_init,
                                    algorithms=a.algorithms.split(","), wckm_penalty=pen)
            frames.append(t.assign(dataset=ds, rep=rep))
            print(ds, rep, t[["algorithm", "setting", "rand"]].to_dict("records"), flush=True)
    df = pd.concat(frames, ignore_index=True)
    if a.out:
        df.to_csv(a.out, sep="\t", index=False)
    agg = df.groupby(["dataset", "algorithm", "setting"])["rand"].agg(["mean", "std"])
    cols = [(i, al, s) for i, (al, s) in enumerate(COLS) if al in a.algorithms.split(",")]
    print("| dataset | " + " | ".join(f"{al} {s[:3]}" for _, al, s in cols) + " |")
    for ds in dict.fromkeys(df["dataset"]):
        cells = []
        for i, al, s in cols:
            mu, sd = agg.loc[(ds, al, s)]
            pub = PUBLISHED.get(ds, (np.nan,) * 6)[i]
            cells.append(f"{100 * mu:.2f} ± {100 * (sd if sd == sd else 0):.2f} ({pub})")
        print(f"| {ds} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
