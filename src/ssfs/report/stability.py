"""Stability of the selected subsets across the repetitions of the workflow.

For every dataset x variant x method and every number of features t of the
evaluation grid, the top-t features of the R repetitions' rankings
(``results/{dataset}/{variant}/rankings/{method}/{rep}.tsv``) are compared with
the measures of :mod:`ssfs.experiment.stability`: the EFSIS measure (EFSIS eq. 1), Kuncheva's
index, the mean pairwise Jaccard index and Nogueira's estimator with its
(1 - alpha) confidence interval.

Choices: extraction methods (components, not features) are skipped; a size t is
skipped for a subset method when one of its repetitions selected fewer than t
features (the evaluation skips those sizes too); fewer than 2 repetitions -> no rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..methods._shared.stability import all_measures, top_sets
from ..ranking import RankingOrders, read_ranking

KEYS = ["dataset", "variant", "method"]
MEASURES = ["efsis", "kuncheva", "jaccard", "nogueira"]
COLUMNS = KEYS + ["n_features", "n_runs"] + MEASURES + ["nogueira_lower", "nogueira_upper"]


def read_orders(paths, max_rows: int | None = None) -> dict[tuple, list[RankingOrders]]:
    """``(dataset, variant, method) -> [orders of rep 0, rep 1, ...]`` (sorted by rep) from
    ranking files ``.../{dataset}/{variant}/rankings/{method}/{rep}.tsv``."""
    found: dict[tuple, list] = {}
    for p in paths:
        parts = Path(p).parts
        key = (parts[-5], parts[-4], parts[-2])
        rep = int(Path(p).stem)
        found.setdefault(key, []).append((rep, read_ranking(p, max_rows)))
    return {k: [o for _, o in sorted(v, key=lambda t: t[0])] for k, v in sorted(found.items())}


def stability_table(orders: dict[tuple, list], n_features: dict[str, int], grid: dict[str, list[int]],
                    *, alpha: float = 0.05, skip_methods=()) -> pd.DataFrame:
    """One row per ``dataset, variant, method, n_features`` (columns :data:`COLUMNS`).

    ``n_features``: dataset -> p (total number of features); ``grid``: dataset -> the
    numbers of features to compare; ``skip_methods``: method labels to leave out."""
    rows = []
    for (ds, var, meth), ords in orders.items():
        if meth in skip_methods or len(ords) < 2:
            continue
        ords = [o if isinstance(o, RankingOrders) else RankingOrders(o) for o in ords]
        shortest = min(o.size for o in ords)
        for t in grid[ds]:
            if t > shortest:
                continue
            m = all_measures(top_sets([o.at(t) for o in ords], t), n_features[ds], alpha=alpha)
            rows.append({"dataset": ds, "variant": var, "method": meth, "n_features": t, "n_runs": len(ords), **m})
    return pd.DataFrame(rows, columns=COLUMNS)


def stability_long(table: pd.DataFrame) -> pd.DataFrame:
    """Long format for :func:`ssfs.report.figures.stability_vs_features`: ``metric, value`` plus
    ``ci_low``/``ci_high`` on the Nogueira rows."""
    long = table.melt(id_vars=KEYS + ["n_features"], value_vars=MEASURES, var_name="metric", value_name="value")
    ci = table[KEYS + ["n_features", "nogueira_lower", "nogueira_upper"]].assign(metric="nogueira")
    ci = ci.rename(columns={"nogueira_lower": "ci_low", "nogueira_upper": "ci_high"})
    long = long.merge(ci, on=KEYS + ["n_features", "metric"], how="left")
    long["rep"] = 0  # one value per point (the measures already summarise the repetitions)
    return long.dropna(subset=["value"])


def stability_at_one_size(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Report view at one number of features per dataset x variant: the largest evaluated
    t at which Nogueira's measure is defined (t < p), else the largest t. One row per
    measure, one column per method ("value", Nogueira "value ±half-width of the CI");
    the most stable method of each row in bold (**)."""
    if table.empty:
        return pd.DataFrame(columns=["dataset", "variant", "n_features", "measure"])
    t = table.assign(_ok=table["nogueira"].notna())
    pick = t.sort_values(["_ok", "n_features"]).groupby(["dataset", "variant"], sort=True).tail(1)
    at = dict(zip(zip(pick["dataset"], pick["variant"], strict=True), pick["n_features"], strict=True))
    keys = zip(table["dataset"], table["variant"], table["n_features"], strict=True)
    sel = table[[at.get((d, v)) == n for d, v, n in keys]]
    rows = []
    for (ds, var), g in sel.groupby(["dataset", "variant"], sort=True):
        for m in MEASURES:
            row = {"dataset": ds, "variant": var, "n_features": int(g["n_features"].iloc[0]), "measure": m}
            vals = g.set_index("method")[m]
            top = vals.max() if vals.notna().any() else np.nan
            for meth, r in g.set_index("method").iterrows():
                v = r[m]
                if pd.isna(v):
                    cell = ""
                elif m == "nogueira":
                    cell = f"{v:.{digits}f}\u00a0±{(r['nogueira_upper'] - r['nogueira_lower']) / 2:.{digits}f}"
                else:
                    cell = f"{v:.{digits}f}"
                row[meth] = f"**{cell}**" if cell and np.isclose(v, top) else cell
            rows.append(row)
    return pd.DataFrame(rows)
