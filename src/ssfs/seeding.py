"""One seed in the config determines every random choice.

Each job derives its own generator from ``(seed, key, key, ...)`` through
``numpy.random.SeedSequence``; string keys are hashed with a stable hash (not
Python's salted ``hash``), so any single job can be re-run alone, in any order,
with any number of cores, and draws the same numbers.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .errors import MethodError


def _key_to_int(key) -> int:
    if isinstance(key, (int, np.integer)):
        return int(key)
    digest = hashlib.sha256(str(key).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little")


def as_generator(seed, *, name: str = "rng") -> np.random.Generator:
    """A generator from ``seed``: an integer >= 0, a :class:`numpy.random.Generator` (used as
    is) or None (fresh entropy); anything else is one-line :class:`~ssfs.errors.MethodError`
    naming ``name``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        return np.random.default_rng(seed)
    raise MethodError(f"{name} must be an integer >= 0 (a seed), a numpy Generator or None, got {seed!r}")


def derive_rng(seed: int, *keys) -> np.random.Generator:
    """Generator for ``seed`` and a path of keys, e.g. ``derive_rng(0, "wine", "split", 3)``."""
    ss = np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(_key_to_int(k) for k in keys))
    return np.random.default_rng(ss)


def child_seeds(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` independent 32-bit seeds drawn up front (for ensemble members or sklearn estimators)."""
    return rng.integers(0, 2**31 - 1, size=n, dtype=np.int64)
