"""Partial labels drawn from the true classes: how many, which classes, how many wrong.

Every scheme returns integer codes with -1 for unlabeled samples (the library's convention)
and applies to any simulation (or any true labels). :func:`make_labels` composes them:

* a budget: ``k`` labeled samples per class (``3`` or ``"3/class"``) or a share of all
  samples (``"1%"`` or ``0.01``); 0 = no labels;
* ``hidden``: classes never labeled (a type nobody annotated);
* ``imbalance``: class budgets falling geometrically from the first shown class to the
  last, the last getting 1/``imbalance`` of the first;
* ``wrong``: that share of the labeled samples gets another class.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import InputError
from .planting import largest_remainder
from .truth import as_generator


def labels_per_class(classes, k: int | Sequence[int] | Mapping[int, int], rng=0) -> np.ndarray:
    """``k`` randomly chosen labeled samples of each class (all of a class smaller than ``k``).

    Parameters
    ----------
    classes : array of int
        True class of every sample.
    k : int, sequence (one per class present, in sorted order) or mapping class -> count
        Labels to draw per class; classes missing from a mapping get none.
    rng : int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        Int64 codes, -1 for unlabeled samples.
    """
    rng = as_generator(rng)
    classes = np.asarray(classes)
    present = np.unique(classes)
    if isinstance(k, Mapping):
        budget = {int(c): int(k.get(int(c), 0)) for c in present}
    elif np.ndim(k) == 0:
        budget = {int(c): int(k) for c in present}
    else:
        if len(k) != present.size:
            raise InputError(f"one label count per class ({present.size}) expected, got {len(k)}")
        budget = {int(c): int(n) for c, n in zip(present, k, strict=True)}
    y = np.full(classes.shape, -1, dtype=np.int64)
    for c in present:  # loop over classes
        if budget[int(c)] <= 0:
            continue
        idx = np.flatnonzero(classes == c)
        y[rng.choice(idx, size=min(budget[int(c)], idx.size), replace=False)] = c
    return y


#: the older name (``few_labels(cell_type, per_type, rng)``)
few_labels = labels_per_class


def labels_fraction(classes, fraction: float, rng=0, *, among=None) -> np.ndarray:
    """``round(fraction * n)`` labeled samples drawn uniformly (not stratified: a rare class
    may get none).

    Parameters
    ----------
    classes : array of int
        True class of every sample (n of them).
    fraction : float
        Share of all n samples to label, in [0, 1].
    rng : int or numpy.random.Generator
    among : array of bool, optional
        Draw only from these samples (at most all of them).

    Returns
    -------
    numpy.ndarray
        Int64 codes, -1 for unlabeled samples.
    """
    if not 0 <= fraction <= 1:
        raise InputError(f"a label fraction must be in [0, 1], got {fraction}")
    rng = as_generator(rng)
    classes = np.asarray(classes)
    pool = np.arange(classes.size) if among is None else np.flatnonzero(among)
    n_lab = min(int(round(fraction * classes.size)), pool.size)
    y = np.full(classes.shape, -1, dtype=np.int64)
    pick = rng.choice(pool, size=n_lab, replace=False)
    y[pick] = classes[pick]
    return y


def flip_labels(y, fraction: float, rng=0, *, n_classes: int | None = None) -> np.ndarray:
    """Wrong labels: a copy of ``y`` where ``round(fraction * n_labeled)`` labeled samples,
    chosen at random, carry another class drawn uniformly.

    Parameters
    ----------
    y : array of int
        Partial labels, -1 for unlabeled samples.
    fraction : float
        Share of the labeled samples to change, in [0, 1].
    rng : int or numpy.random.Generator
    n_classes : int, optional
        The wrong class is drawn from ``0 .. n_classes - 1`` (default: the largest code + 1).

    Returns
    -------
    numpy.ndarray
        Int64 codes, -1 for unlabeled samples.
    """
    if not 0 <= fraction <= 1:
        raise InputError(f"a wrong-label fraction must be in [0, 1], got {fraction}")
    rng = as_generator(rng)
    y = np.array(y, dtype=np.int64)
    lab = np.flatnonzero(y >= 0)
    n_classes = int(y.max()) + 1 if n_classes is None else int(n_classes)
    n_wrong = int(round(fraction * lab.size))
    if n_wrong == 0:
        return y
    if n_classes < 2:
        raise InputError("wrong labels need at least 2 classes")
    pick = rng.choice(lab, size=n_wrong, replace=False)
    y[pick] = (y[pick] + rng.integers(1, n_classes, size=n_wrong)) % n_classes
    return y


def imbalanced_budget(total: float, n_classes: int, imbalance: float) -> np.ndarray:
    """Per-class weights (or counts when ``total`` is a count per class) falling geometrically:
    class 0 gets ``total``, the last ``total / imbalance``; counts are rounded, at least 1."""
    if imbalance < 1:
        raise InputError(f"imbalance must be >= 1 (first class / last class), got {imbalance}")
    steps = np.arange(n_classes) / max(n_classes - 1, 1)
    return total * float(imbalance) ** (-steps)


def parse_budget(budget) -> tuple[str, float]:
    """``("per_class", k)`` or ``("fraction", f)`` from 3, "3/class", "1%", 0.01 or 0."""
    if isinstance(budget, str):
        s = budget.strip().replace(" ", "")
        if m := re.fullmatch(r"(\d+)(/class|pc)?", s):
            return "per_class", int(m.group(1))
        if m := re.fullmatch(r"(\d+(?:\.\d*)?)%", s):
            return "fraction", float(m.group(1)) / 100
        raise InputError(f"a label budget is 'k/class' or 'f%' (e.g. '3/class', '1%'), got {budget!r}")
    if isinstance(budget, (int, np.integer)) or float(budget).is_integer():
        return "per_class", int(budget)
    if 0 < budget < 1:
        return "fraction", float(budget)
    raise InputError(f"a label budget is a count per class or a fraction in (0, 1), got {budget!r}")


def class_budgets(classes: np.ndarray, shown: np.ndarray, kind: str, amount: float,
                  imbalance: float) -> np.ndarray | None:
    """Labels to draw in each ``shown`` class (:func:`make_labels`' counts): ``amount`` per class
    (at least 1, falling geometrically with ``imbalance``), or a share ``amount`` of all samples
    split among the shown classes by size and ``imbalance`` (largest remainders, at most a class's
    size); None for a share drawn uniformly (``imbalance`` 1: the classes' counts are the draw's)."""
    if kind == "per_class":
        return np.maximum(np.round(imbalanced_budget(amount, shown.size, imbalance)), 1).astype(int) if amount \
            else np.zeros(shown.size, dtype=int)
    if imbalance == 1:
        return None
    sizes = np.array([(classes == c).sum() for c in shown])
    quota = imbalanced_budget(1.0, shown.size, imbalance) * sizes
    return np.minimum(largest_remainder(quota / quota.sum() * round(amount * classes.size)), sizes)


def nested_labels(classes, budgets: Sequence, rng=0, *, hidden: Sequence[int] = (), wrong: float = 0.0,
                  imbalance: float = 1.0) -> list[np.ndarray]:
    """Partial labels for a growing sequence of ``budgets`` where each labeled set holds the
    previous one (labels *added*, not drawn anew): one random order of the samples, and each
    budget labels, in every class, the first of that class's samples in it (a share: the first of
    all shown samples). A sample's wrong class is drawn once: it is wrong at every budget that
    labels it (each labeled sample wrong with probability ``wrong``, where :func:`make_labels`
    changes exactly ``round(wrong * n_labeled)``). The class counts follow :func:`make_labels`.

    Parameters
    ----------
    classes : array of int
        True class of every sample (codes 0 .. K-1).
    budgets : sequence
        Budgets as :func:`make_labels` reads them; nested within a kind (per class, or a share);
        a share and a per-class budget share the order, not their samples.
    rng : int or numpy.random.Generator
    hidden, wrong, imbalance
        As in :func:`make_labels`.

    Returns
    -------
    list of numpy.ndarray
        One array of int64 codes (-1 unlabeled) per budget.
    """
    rng = as_generator(rng)
    classes = np.asarray(classes, dtype=np.int64)
    n_classes = int(classes.max()) + 1
    if wrong and n_classes < 2:
        raise InputError("wrong labels need at least 2 classes")
    present = np.unique(classes)
    shown = present[~np.isin(present, np.asarray(hidden, dtype=np.int64))]
    rank = np.empty(classes.size, dtype=np.int64)
    rank[rng.permutation(classes.size)] = np.arange(classes.size)
    wrong_class = (classes + rng.integers(1, max(n_classes, 2), size=classes.size)) % max(n_classes, 2)
    is_wrong = rng.random(classes.size) < wrong
    sizes = np.array([(classes == c).sum() for c in shown])
    out = []
    for budget in budgets:
        kind, amount = parse_budget(budget)
        ks = class_budgets(classes, shown, kind, amount, imbalance)
        if ks is None:  # a share drawn uniformly: the first of all shown samples in the order
            pool = np.flatnonzero(np.isin(classes, shown))
            pool = pool[np.argsort(rank[pool], kind="stable")][: int(round(amount * classes.size))]
            ks = np.array([(classes[pool] == c).sum() for c in shown])
        y = np.full(classes.size, -1, dtype=np.int64)
        for c, k in zip(shown, np.minimum(ks, sizes).astype(int), strict=True):
            members = np.flatnonzero(classes == c)
            picked = members[np.argsort(rank[members], kind="stable")[:k]]
            y[picked] = np.where(is_wrong[picked], wrong_class[picked], c)
        out.append(y)
    return out


def make_labels(classes, budget, rng=0, *, hidden: Sequence[int] = (), wrong: float = 0.0,
                imbalance: float = 1.0) -> np.ndarray:
    """Partial labels from true ``classes`` under one labeling scheme (module docstring).

    Parameters
    ----------
    classes : array of int
        True class of every sample (codes 0 .. K-1).
    budget : int, float or str
        ``k`` / ``"k/class"`` per class, ``"f%"`` / ``f`` in (0, 1) of all samples, 0 none.
    rng : int or numpy.random.Generator
    hidden : sequence of int
        Classes never labeled; a fraction budget is drawn among the other classes' samples.
    wrong : float
        Share of the labeled samples given another class (of all K).
    imbalance : float
        Ratio of the first shown class's budget to the last's (1: balanced).

    Returns
    -------
    numpy.ndarray
        Int64 codes, -1 for unlabeled samples.
    """
    rng = as_generator(rng)
    classes = np.asarray(classes, dtype=np.int64)
    kind, amount = parse_budget(budget)
    present = np.unique(classes)
    shown = present[~np.isin(present, np.asarray(hidden, dtype=np.int64))]
    ks = class_budgets(classes, shown, kind, amount, imbalance)
    if ks is None:
        y = labels_fraction(classes, amount, rng, among=np.isin(classes, shown))
    else:
        y = labels_per_class(classes, dict(zip(shown.tolist(), ks.tolist(), strict=True)), rng)
    return flip_labels(y, wrong, rng, n_classes=int(classes.max()) + 1)
