"""mRMR (Peng et al. 2005), a supervised baseline of the thesis (3.8.1), from the
optional PyPI package ``mrmr_selection`` (import name ``mrmr``)."""

from __future__ import annotations

import numpy as np

from .._validation import dense
from ..errors import MethodError
from ..params import PosInt
from ..registry import SelectionResult, register


@register("mrmr", higher_is_better=True, kind="subset", needs=("labels",), requires="mrmr")
def mrmr_select(X, y, constraints, rng, *, n_features: PosInt = 50, relevance: str = "f",
                redundancy: str = "c"):
    """mRMR on the labeled samples only: ``n_features`` (at most p) features chosen
    greedily by relevance ("f": ANOVA F statistic) over mean redundancy ("c": absolute
    Pearson correlation), the package's defaults (``mrmr.mrmr_classif``). Single-threaded
    for reproducibility. ``scores``: the relevance of the selected features (NaN for the
    others; the order is in ``selected``); ``extra["relevance"]``: every feature's."""
    from mrmr import mrmr_classif

    lab = np.flatnonzero(y >= 0)
    XL = dense(X[lab], method="mrmr")
    p = XL.shape[1]
    K = int(min(n_features, p))
    if K < 1:
        raise MethodError(f"mrmr: n_features must be >= 1, got {n_features}")
    import pandas as pd

    frame = pd.DataFrame(XL, columns=[f"f{j}" for j in range(p)])
    sel, rel, _red = mrmr_classif(frame, pd.Series(y[lab]), K=K, relevance=relevance, redundancy=redundancy,
                                 return_scores=True, n_jobs=1, show_progress=False)
    selected = np.array([int(s[1:]) for s in sel], dtype=np.int64)
    scores = np.full(p, np.nan)
    relv = np.asarray(rel.reindex(frame.columns), dtype=float)
    scores[selected] = relv[selected]
    return SelectionResult(scores=scores, selected=selected, extra={"relevance": relv})
