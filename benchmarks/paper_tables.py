"""The "published / ours" tables of docs/papers.md from a run's ``results/tables/paper_comparison.tsv``.

    python benchmarks/paper_tables.py results/tables/paper_comparison.tsv

One markdown table per published table (the ``note`` column's "Table N.M"), a row per dataset
("paper name (our file)"), a column per method ("paper name (our label)" when they differ);
cells "published / ours mean ± sd". RED with 3 decimals, the rest with 2.
"""

from __future__ import annotations

import sys

import pandas as pd


def _fmt(value: str, digits: int) -> str:
    parts = [p.strip() for p in value.split("±")]
    try:
        out = f"{float(parts[0]):.{digits}f}"
    except ValueError:
        return value
    return out + (f" ± {float(parts[1]):.{digits}f}" if len(parts) > 1 and parts[1] else "")


def tables(comp: pd.DataFrame) -> str:
    comp = comp[comp["ours"] != ""].copy()
    comp["table"] = comp["note"].str.extract(r"^(Table [0-9.]+)")[0].fillna("Table")
    same = comp["method"] == comp["paper_method"].str.lower().str.replace("-", "", regex=False)
    comp["column"] = comp["paper_method"].where(same, comp["paper_method"] + " (" + comp["method"] + ")")
    comp["row"] = comp["paper_dataset"] + " (" + comp["dataset"] + ")"
    out = []
    for name, g in comp.groupby("table", sort=False):
        digits = 3 if g["metric"].iloc[0] == "red" else 2
        g = g.assign(cell=[f"{_fmt(p.split('±')[0], digits)} / {_fmt(o, digits)}"
                           for p, o in zip(g["published"], g["ours"], strict=True)])
        cols = list(dict.fromkeys(g["column"]))
        runs = sorted(set(g["n_runs"]))
        feats = sorted(set(g["features"]))
        feats = feats[0] if len(feats) == 1 else feats[0].split(":")[0] + " (per dataset)"
        out.append(f"{name} ({g['metric'].iloc[0]}, {feats}) published / ours, runs: {', '.join(runs)}")
        out.append("")
        out.append("| dataset | " + " | ".join(cols) + " |")
        out.append("|---|" + "---|" * len(cols))
        for row, r in g.groupby("row", sort=False):
            cells = dict(zip(r["column"], r["cell"], strict=True))
            out.append(f"| {row} | " + " | ".join(cells.get(c, "") for c in cols) + " |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(tables(pd.read_csv(sys.argv[1], sep="\t", dtype=str, keep_default_na=False)))
