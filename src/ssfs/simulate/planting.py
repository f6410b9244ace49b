"""Building blocks every generator shares: class sizes, which genes are markers of which
class, and marker strengths drawn from a range."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError


def markers_per_class(n_markers: int | Sequence[int], n_classes: int) -> np.ndarray:
    """``n_markers`` as one count per class (an int is the same for every class)."""
    counts = np.asarray(n_markers, dtype=np.int64)
    if counts.ndim == 0:
        counts = np.full(n_classes, counts)
    if counts.shape != (n_classes,) or (counts < 0).any():
        raise InputError(f"n_markers must be a count >= 0 or one per class ({n_classes}), got {n_markers!r}")
    return counts


def check_shape(n_samples: int, n_genes: int, n_classes: int, n_planted: int, shared: int) -> None:
    """Refuse shapes no simulation can have (one message naming the numbers)."""
    if n_classes < 1 or n_planted < 1 or n_planted + shared > n_genes:
        raise InputError(f"need 1 <= n_types * n_markers (+ shared markers) <= n_genes, got {n_planted} "
                         f"markers + {shared} shared for {n_genes} genes and {n_classes} classes")
    if n_samples < n_classes:
        raise InputError(f"need at least one sample per class: {n_samples} samples for {n_classes} classes")
    if shared and n_classes < 2:
        raise InputError("shared markers need at least 2 classes")


def draw_classes(rng: np.random.Generator, n: int, n_classes: int,
                 proportions: Sequence[float] | None = None) -> np.ndarray:
    """Class of each of ``n`` samples in random order: balanced (sizes differ by at most one)
    or sizes ``proportions * n`` rounded by largest remainder, each class at least one."""
    if proportions is None:
        return rng.permutation(np.arange(n) % n_classes).astype(np.int64)
    p = np.asarray(proportions, dtype=float)
    if p.shape != (n_classes,) or (p <= 0).any():
        raise InputError(f"proportions must be {n_classes} positive numbers, got {proportions!r}")
    sizes = largest_remainder(p / p.sum() * n)
    short = sizes < 1
    if short.any():  # a tiny class keeps one sample, taken from the largest
        sizes[short] = 1
        sizes[np.argmax(sizes)] -= int(short.sum())
    return rng.permutation(np.repeat(np.arange(n_classes), sizes)).astype(np.int64)


def largest_remainder(quotas: np.ndarray) -> np.ndarray:
    """Integers summing to ``round(quotas.sum())``, each the floor of its quota or one more
    (Hamilton's method; ties to the lower index)."""
    base = np.floor(quotas).astype(np.int64)
    extra = int(round(quotas.sum())) - int(base.sum())
    if extra > 0:
        base[np.argsort(-(quotas - base), kind="stable")[:extra]] += 1
    return base


def plant(perm: np.ndarray, counts: np.ndarray, shared_pairs: np.ndarray) -> np.ndarray:
    """Membership matrix (classes x genes, bool): class k owns the next ``counts[k]`` genes
    of the permutation ``perm``; then each row (a, b) of ``shared_pairs`` takes one more
    gene, a marker of both a and b."""
    member = np.zeros((counts.size, perm.size), dtype=bool)
    ends = np.cumsum(counts)
    for k, (s, e) in enumerate(zip(ends - counts, ends, strict=True)):  # one slice per class
        member[k, perm[s:e]] = True
    genes = perm[ends[-1]: ends[-1] + len(shared_pairs)]
    for col in range(2):
        member[shared_pairs[:, col], genes] = True
    return member


def draw_pairs(rng: np.random.Generator, n_pairs: int, n_classes: int) -> np.ndarray:
    """``n_pairs`` random pairs of distinct classes (rows)."""
    if n_pairs == 0:
        return np.zeros((0, 2), dtype=np.int64)
    first = rng.integers(n_classes, size=n_pairs)
    second = (first + rng.integers(1, n_classes, size=n_pairs)) % n_classes
    return np.column_stack([first, second]).astype(np.int64)


def strengths(rng: np.random.Generator, value: float | Sequence[float], size: int, *, log: bool) -> np.ndarray:
    """``size`` marker strengths: ``value`` itself, or drawn uniformly from the range
    ``(low, high)`` (on the log scale when ``log``: fold changes)."""
    if np.ndim(value) == 0:
        return np.full(size, float(value))
    lo, hi = (float(v) for v in value)
    if not (0 < lo <= hi if log else lo <= hi):
        raise InputError(f"a strength range must be (low, high) with low <= high{' > 0' if log else ''}, got {value!r}")
    if log:
        return np.exp(rng.uniform(np.log(lo), np.log(hi), size=size))
    return rng.uniform(lo, hi, size=size)
