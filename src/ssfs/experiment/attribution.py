"""Per-class attribution of the features of a consensus list (issue #29 item 2): the class each
feature marks, its direction and log fold change, and its mean and fraction expressing in every
class, from :func:`ssfs.methods._shared.class_stats.class_statistics`.

Which samples count: the labeled ones (one-hot memberships), or, when one of the selection's
methods propagated the labels (its full-data result carries ``extra["memberships"]``, an
n x K or n x (K + 1) array whose first K columns are the labeled classes in class order, or
``extra["groups"]`` / ``extra["group_names"]`` as ``propagate`` returns them), every sample
weighted by its memberships (labels plus propagated ones; :func:`memberships_of`). A propagated
group of no labeled class ("unlabeled 1": cells the labels do not reach, a type nobody labeled)
is a group of the attribution too, so its markers are credited to it, not to the labeled class
whose mean happens to differ most from the rest.

The class a feature marks is the class whose mean differs most from the rest of the samples
(|mean_c - mean_rest|, ties to the class where the feature is higher, then class order): a
difference of means needs no variance, so it is defined down to one labeled sample per class,
where Welch's t is not. ``direction`` is ``up`` when the feature is higher in that class than in
the rest, else ``down``; ``log_fold_change`` is :class:`~ssfs.methods._shared.class_stats.ClassStatistics`'
value for that class (log2 for counts and positive intensities; the difference of means in the
data's own unit when the data hold negative values: log-scale or standardised data).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..methods._shared.class_stats import class_statistics, one_hot

#: columns of the attribution table besides the per-class ``mean_<class>`` / ``fraction_<class>``
COLUMNS = ("marks", "direction", "log_fold_change")


def memberships_of(result, n: int, classes) -> tuple[np.ndarray, list[str]] | None:
    """``(memberships, groups)`` a method's full-data result carries, or None: ``memberships`` is
    n x G, ``groups`` the G column names, the labeled ``classes`` first in class order.
    ``extra["memberships"]`` (soft) gives its first K = len(classes) columns;
    ``extra["groups"]`` with ``extra["group_names"]`` (every sample's propagated group, as
    ``propagate`` returns them) gives one-hot columns: the classes named alike, then every other
    group that holds samples ("unlabeled 1", ...: a type nobody labeled, which would otherwise be
    credited to a labeled class), in the result's order; a sample of no group (code < 0) counts
    in none."""
    extra = getattr(result, "extra", None) or {}
    classes = [str(c) for c in classes]
    K = len(classes)
    P = extra.get("memberships")
    if P is not None:
        P = np.asarray(P, dtype=np.float64)
        return (P[:, :K], classes) if P.ndim == 2 and P.shape[0] == n and P.shape[1] >= K else None
    groups, names = extra.get("groups"), extra.get("group_names")
    if groups is None or names is None or len(groups) != n:
        return None
    g = np.asarray(groups, dtype=np.int64)
    g = np.where((g >= 0) & (g < len(names)), g, len(names))
    held = np.bincount(g, minlength=len(names) + 1)[:-1] > 0
    where = {c: k for k, c in enumerate(classes)}
    others = [str(m) for m, h in zip(names, held, strict=True) if h and str(m) not in where]
    where.update({m: K + j for j, m in enumerate(others)})
    code = np.array([where.get(str(m), -1) for m in names] + [-1], dtype=np.int64)
    y = code[g]
    return (one_hot(y, K + len(others)), classes + others) if (y[y >= 0] < K).any() else None


def attribution(X, y, classes, *, memberships=None, groups=None,
                source: str | None = None) -> tuple[pd.DataFrame, dict]:
    """``(table, info)``: one row per feature (in column order) with ``marks``, ``direction``,
    ``log_fold_change``, then ``mean_<group>`` and ``fraction_<group>`` for every group (the
    classes, then any propagated group of no labeled class); ``info`` says which samples counted
    (``{"samples": "labeled" | "propagated", "method", "n_samples", "scale", "classes"}``,
    ``classes`` naming every group). ``memberships`` (n x G, optional) replace the one-hot labels,
    ``groups`` names their G columns (default ``classes``: G = K); ``source`` names the method
    that propagated them."""
    y = np.asarray(y, dtype=np.int64)
    K = len(classes)
    classes = [str(c) for c in (classes if memberships is None or groups is None else groups)]
    if K < 2 or (memberships is None and (y >= 0).sum() == 0):
        raise InputError("per-class attribution needs labeled samples of at least 2 classes")
    P = one_hot(y, K) if memberships is None else np.asarray(memberships, dtype=np.float64)
    if P.shape[1] != len(classes):
        raise InputError(f"per-class attribution: {P.shape[1]} membership columns for {len(classes)} groups")
    st = class_statistics(X, P, classes)
    diff = st.mean - st.mean_rest  # K x p
    key = np.abs(diff) + 1e-12 * (diff > 0)  # ties: the class where the feature is higher
    marks = np.argmax(np.nan_to_num(key, nan=-1.0), axis=0)
    cols = np.arange(diff.shape[1])
    table = pd.DataFrame({
        "marks": np.asarray(classes, dtype=object)[marks],
        "direction": np.where(diff[marks, cols] >= 0, "up", "down"),
        "log_fold_change": st.logfoldchanges[marks, cols],
    })
    for c, name in enumerate(classes):
        table[f"mean_{name}"] = st.mean[c]
    for c, name in enumerate(classes):
        table[f"fraction_{name}"] = st.pts[c]
    info = {"samples": "labeled" if memberships is None else "propagated", "method": source,
            "n_samples": int((P.sum(axis=1) > 0).sum()), "scale": st.scale, "classes": classes}
    return table, info


def long_stats(table: pd.DataFrame, features, classes) -> pd.DataFrame:
    """The per-class means and fractions of ``features`` (rows of a consensus table with
    attribution columns, best first) as the long frame of :func:`ssfs.report.figures.dotplot`:
    ``feature, group, mean, fraction``."""
    sub = table.set_index("feature").loc[list(features)]
    rows = [pd.DataFrame({"feature": sub.index, "group": c, "mean": sub[f"mean_{c}"].to_numpy(),
                          "fraction": sub[f"fraction_{c}"].to_numpy()}) for c in classes]
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["feature", "group", "mean", "fraction"])
    out["group"] = pd.Categorical(out["group"], categories=list(classes))
    order = {f: i for i, f in enumerate(features)}
    return out.sort_values(["feature", "group"], key=lambda s: s.map(order) if s.name == "feature" else s.cat.codes,
                           kind="stable").reset_index(drop=True)
