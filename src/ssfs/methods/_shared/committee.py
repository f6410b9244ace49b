"""Committee (random-subspace ensemble) sizing shared by EnsCLS, SSFI and RF.

Both papers draw m = sqrt(p) features per member and size the committee so that
every feature is drawn about ten times (EnsCLS paper eq. 4, SSFI paper eq. 1).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InputError


def subspace_size(p: int, m: int | None = None) -> int:
    """Features per member: ``m`` if given, else round(sqrt(p)) (at least 1, at most p)."""
    if m is None:
        return max(1, min(p, int(round(math.sqrt(p)))))
    m = int(m)
    if not 1 <= m <= p:
        raise InputError(f"subspace size must be in 1..{p}, got {m}")
    return m


def committee_size(p: int, times: int = 10, confidence: float = 0.01, m: int | None = None) -> int:
    """N = times * ceil(log(confidence) / log(1 - m/p)) (eq. 4 with m = sqrt(p): each
    feature is drawn ``times`` times at confidence level ``confidence``)."""
    frac = 1.0 / math.sqrt(p) if m is None else subspace_size(p, m) / p
    if frac >= 1.0:
        return int(times)
    return int(times * math.ceil(math.log(confidence) / math.log(1.0 - frac)))


def draw_subspaces(p: int, n_members: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """(n_members x m) feature indices, each row m distinct features drawn uniformly."""
    if m == p:
        return np.tile(np.arange(p), (n_members, 1))
    # argpartition of uniform keys = a uniform m-subset per row, vectorized over blocks of
    # members (consecutive rng.random calls continue one stream: blocking changes nothing)
    out = np.empty((n_members, m), dtype=np.int64)
    step = max(1, 2**20 // p)
    for s in range(0, n_members, step):
        keys = rng.random((min(step, n_members - s), p))
        out[s:s + step] = np.sort(np.argpartition(keys, m - 1, axis=1)[:, :m], axis=1)
    return out


def resolve_members(p: int, n_members: int | None, m: int | None) -> tuple[int, int]:
    """(N, m) from the user's values, defaults by eq. 4 and sqrt(p)."""
    m = subspace_size(p, m)
    if n_members is None:
        n = committee_size(p, m=None if m == subspace_size(p) else m)
    else:
        n = int(n_members)
        if n < 1:
            raise InputError(f"committee size n_members must be >= 1, got {n_members}")
    return n, m
