"""The evaluation grid and the direction of each metric: what the report needs from the
evaluation, without its scikit-learn imports (about 1 s of a job's start-up)."""

from __future__ import annotations

LOWER_IS_BETTER = frozenset({"red"})


def metric_higher_is_better(metric: str) -> bool:
    """Direction of a metric (``red`` and rank sums: lower is better)."""
    return metric not in LOWER_IS_BETTER and not str(metric).startswith("rank_sum")


def n_features_grid(p: int, max_features=None, n_features=None, percent=None) -> list[int]:
    """The numbers of features to evaluate: an explicit list, 1..max_features, or
    percentages of p (rounded, at least 1), clipped to p and de-duplicated."""
    if n_features:
        grid = [int(v) for v in n_features]
    elif percent:
        grid = [max(1, int(round(p * float(q) / 100.0))) for q in percent]
    else:
        grid = list(range(1, int(max_features or 20) + 1))
    return sorted({min(g, p) for g in grid if g >= 1})
