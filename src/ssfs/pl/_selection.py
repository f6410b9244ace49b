"""The stability path and the dot plot of a stable selection stored in an AnnData."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..errors import InputError
from ..report import figures


def _result(adata, key: str) -> dict:
    """``adata.uns[key]`` as :func:`ssfs.tl.select_stable` stores it (else one-line error)."""
    res = adata.uns.get(key)
    if not isinstance(res, dict) or "stability_path" not in res:
        raise InputError(f"adata.uns[{key!r}] holds no stable selection: run "
                         f"ssfs.tl.select_stable(adata, key_added={key!r}) first")
    return res


def _save(fig, path):
    return fig if path is None else figures.save_as(fig, path)


def stability_path(adata, key: str = "ssfs_selection", *, path=None, title: str | None = None,
                   max_lines: int = 200):
    """Each feature's selection frequency against q, the features per resample (Meinshausen &
    Bühlmann 2010, Fig. 1), the selected features in colour, the threshold and the q used marked.

    Parameters
    ----------
    adata : anndata.AnnData
        With the results of :func:`ssfs.tl.select_stable` under ``key``.
    key : str
        Its ``key_added``.
    path : str or pathlib.Path, optional
        Also write the figure there, in its suffix's format (.svg, .png or .pdf).
    title : str, optional
        Axes title (default: the key).
    max_lines : int
        Draw at most this many features (those with the highest largest frequency).

    Returns
    -------
    matplotlib.figure.Figure
    """
    res = _result(adata, key)
    fig = figures.stability_path(pd.DataFrame(res["stability_path"]), threshold=res["threshold"], q=res["top"],
                                 selected=list(res["features"]), title=title or key, max_lines=max_lines)
    return _save(fig, path)


def dotplot(adata, key: str = "ssfs_selection", *, features: Sequence | None = None, path=None,
            standard_scale: bool = True, title: str | None = None, max_features: int = 60):
    """The selected features by class: colour = the class mean (scaled per feature), size = the
    share of the class's samples expressing it; the class each feature marks ringed.

    Parameters
    ----------
    adata : anndata.AnnData
        With the results of :func:`ssfs.tl.select_stable` under ``key``, computed with labels
        (``groupby``).
    key : str
        Its ``key_added``.
    features : sequence of str, optional
        Rows, top to bottom (default: the selected features, else the first consensus ones).
    path : str or pathlib.Path, optional
        Also write the figure there, in its suffix's format (.svg, .png or .pdf).
    standard_scale : bool
        Scale each feature's class means to 0..1 (scanpy's ``standard_scale="var"``).
    title : str, optional
        Axes title.
    max_features : int
        At most this many rows.

    Returns
    -------
    matplotlib.figure.Figure
    """
    res = _result(adata, key)
    if "class_means" not in res:
        raise InputError(f"adata.uns[{key!r}] has no per-class statistics: the selection ran without labels "
                         "(give select_stable a groupby column)")
    means, fractions = pd.DataFrame(res["class_means"]), pd.DataFrame(res["class_fractions"])
    if features is None:
        rank = adata.var[f"{key}_rank"]
        features = list(res["features"]) or list(rank[rank > 0].sort_values(kind="stable").index[:max_features])
    missing = [f for f in features if f not in means.index]
    if missing:
        raise InputError(f"feature(s) {', '.join(map(str, missing[:5]))} are not among the selection's features")
    classes = list(means.columns)
    stats = pd.concat([pd.DataFrame({"feature": list(features), "group": c, "mean": means.loc[features, c].to_numpy(),
                                     "fraction": fractions.loc[features, c].to_numpy()}) for c in classes],
                      ignore_index=True)
    stats["group"] = pd.Categorical(stats["group"], categories=classes)
    marks_col = f"{key}_marks"
    marks = dict(zip(adata.var_names, adata.var[marks_col], strict=True)) if marks_col in adata.var else None
    fig = figures.dotplot(stats, features=list(features), groups=classes, standard_scale=standard_scale,
                          marks=marks, title=title or f"{key}: features by class", max_features=max_features)
    return _save(fig, path)
