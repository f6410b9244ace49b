"""The stable row-wise argsort of large float matrices through one vectorised sort of 64-bit
words (:func:`ssfs.ranking.stable_argsort` from :data:`ssfs.ranking.PACKED_MIN` entries on).

Each key becomes one unsigned word: its order-preserving bits (a float's bits with the
magnitude flipped when negative and the sign flipped), truncated, above its position in
the row. numpy's sort of such words is vectorised and about twice as fast as ``argsort``;
words in order give the keys in order, equal keys by position, except where two keys
differ only in the truncated bits: those neighbours are checked on the full keys, and a
disorder (vanishingly rare) sends the caller back to the stable argsort. Compiled with
numba on first use (imported only from there) and cached on disk.
"""

from __future__ import annotations

import numpy as np

from ._jit import numba_module

numba = numba_module()

_SIGN = np.uint64(1 << 63)


@numba.njit(cache=True, nogil=True)
def _pack(bits, shift, out):  # pragma: no cover - compiled
    """out[r, j]: the order-preserving word of the float whose bits are bits[r, j],
    truncated by ``shift`` bits, with j in the freed bits (-0.0 as 0.0: equal keys)."""
    R, p = bits.shape
    s = np.uint64(shift)
    for r in range(R):
        for j in range(p):
            u = np.uint64(bits[r, j])
            if u == _SIGN:  # -0.0
                u = np.uint64(0)
            if u & _SIGN:
                u = ~u  # negative: larger magnitude first
            else:
                u = u | _SIGN
            out[r, j] = ((u >> s) << s) | np.uint64(j)


@numba.njit(cache=True, nogil=True)
def _unpack(words, keys, shift, order):  # pragma: no cover - compiled
    """order[r, t] = the position held by the t-th sorted word of row r; False when two
    neighbours with equal truncated bits are out of order on their full keys."""
    R, p = words.shape
    s = np.uint64(shift)
    mask = (np.uint64(1) << s) - np.uint64(1)
    for r in range(R):
        prev_high = np.uint64(0)
        prev = -1
        for t in range(p):
            w = words[r, t]
            j = np.int64(w & mask)
            order[r, t] = j
            high = w >> s
            if prev >= 0 and high == prev_high and keys[r, prev] > keys[r, j]:
                return False
            prev_high, prev = high, j
    return True


def packed_order(keys: np.ndarray) -> np.ndarray | None:
    """``np.argsort(keys, axis=1, kind="stable")`` of R x p float keys without NaN, or None
    where the truncated words could not decide."""
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    shift = max(1, (keys.shape[1] - 1).bit_length())
    words = np.empty(keys.shape, dtype=np.uint64)
    _pack(keys.view(np.int64), shift, words)
    words.sort(axis=1)
    order = np.empty(keys.shape, dtype=np.int64)
    return order if _unpack(words, keys, shift, order) else None
