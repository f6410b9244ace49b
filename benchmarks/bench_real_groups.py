"""What ``propagate`` makes of the real arrays' unlabeled samples, and how many of the genes every label would find
it finds (session 37): per array of ../shared/data, on the real-array benchmark's training splits with ``k`` labels
per class,

- *grouped right*: the share of the unlabeled samples its groups put in their own class (a group of samples nobody
  labeled counts as wrong), the propagation the scores rest on;
- *recall of the full-label F*: the share of the 50 genes the ANOVA F test ranks first on every sample with every
  label that its top 50 holds (a real array has no planted markers; these are what full labels would find).

Each setting is a set of ``propagate`` parameters; the default and the graphs before session 37 (15 neighbours, the
refined graphs on 10 % of the genes within 100-500) by default:

    python benchmarks/bench_real_groups.py --per-class 3 --reps 10
    python benchmarks/bench_real_groups.py --per-class 2 --settings default k=15 k=15,genes=500

SVM accuracy on the same splits: ``bench_labels_sweep.py --part real``. Needs ../shared/data (skips what is missing).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_labels_sweep import ARRAYS, load_real, real_splits  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TOP = 50


def parse_setting(text: str) -> dict:
    """``"k=15,genes=500"`` -> {"k": 15, "genes": 500}; "default" -> {}; "former" -> the graphs before session 37
    (their gene count is resolved per array)."""
    if text in ("default", "former"):
        return {}
    import yaml

    out = {}
    for item in text.split(","):
        key, value = item.split("=", 1)
        out[key] = yaml.safe_load(value)  # 15 -> int, 0.9 -> float, false -> bool, auto -> str
    return out


def params_for(setting: str, p: int) -> dict:
    from ssfs.methods.propagate import refine_genes

    return {"k": 15, "genes": refine_genes("auto", p)} if setting == "former" else parse_setting(setting)


def measure(names, settings, per_class: int, reps: int, data: Path) -> list[dict]:
    from sklearn.feature_selection import f_classif

    from ssfs.methods.propagate import fit_propagation

    rows = []
    for name in names:
        loaded = load_real(name, data)
        if loaded is None:
            print(f"# {name}: missing under {data}, skipped", flush=True)
            continue
        X, _, truth = loaded
        F = np.nan_to_num(f_classif(X, truth)[0])
        full = np.argsort(-F, kind="stable")[:TOP]
        for rep, train, _, y in real_splits(truth, reps, per_class):
            unlabeled = y < 0
            for setting in settings:
                start = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = fit_propagation(X[train], y, **params_for(setting, X.shape[1]))
                top = np.argsort(-model.scores, kind="stable")[:TOP]
                rows.append({"dataset": name, "rep": rep, "setting": setting,
                             "grouped_right": float((model.groups[unlabeled] == truth[train][unlabeled]).mean()),
                             "recall_full_f": float(np.isin(top, full).mean()), "neighbours": model.neighbours,
                             "refined_genes": model.refined_genes, "seconds": time.process_time() - start})
    return rows


def table(rows: list[dict], settings: list[str]) -> str:
    import pandas as pd

    df = pd.DataFrame(rows)
    mean = df.groupby(["dataset", "setting"])[["grouped_right", "recall_full_f", "neighbours",
                                               "refined_genes"]].mean()
    lines = ["| array | " + " | ".join(f"{s}: grouped right / recall (k, genes)" for s in settings) + " |",
             "|---|" + "---|" * len(settings)]
    for name in dict.fromkeys(df["dataset"]):
        cells = []
        for s in settings:
            m = mean.loc[(name, s)]
            cells.append(f"{m.grouped_right:.3f} / {m.recall_full_f:.3f} ({m.neighbours:.0f}, {m.refined_genes:.0f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    overall = df.groupby("setting")[["grouped_right", "recall_full_f"]].mean()
    lines.append("| mean | " + " | ".join(f"{overall.loc[s].grouped_right:.3f} / {overall.loc[s].recall_full_f:.3f}"
                                          for s in settings) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", nargs="+", default=[n for n in ARRAYS if n not in ("cns", "dlbcl")])
    ap.add_argument("--per-class", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--settings", nargs="+", default=["default", "former"],
                    help="propagate parameters per setting: default, former, or k=15,genes=500")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--out", help="also write every measurement as TSV")
    args = ap.parse_args(argv)
    rows = measure(args.real, args.settings, args.per_class, args.reps, Path(args.data))
    if not rows:
        print("no array found: nothing measured")
        return 0
    if args.out:
        import pandas as pd

        pd.DataFrame(rows).to_csv(args.out, sep="\t", index=False)
    print(f"{args.per_class} labels per class, {args.reps} training splits per array\n")
    print(table(rows, args.settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
