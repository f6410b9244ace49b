"""Error control of selection mode: bounds on the expected number of false selections and the
``top`` (q) they allow (issue #29).

* :func:`error_bound`: Meinshausen & Bühlmann (2010) Theorem 1 and Shah & Samworth (2013)
  Theorem 1, eq. (8) (unimodal) and eq. (9)-(10) (r-concave), with the constants, ranges and
  algorithm of the R package stabs (Hofner & Hothorn; checked against its saved test outputs).
* :func:`bound_of`: the bound of one assumption (``r_concave``, ``unimodal``, ``none``), the
  next weaker one where it is undefined.
* :func:`choose_top`: the largest q whose bound at the threshold stays at or below the target
  expected number of false selections (stabs' ``stabsel_parameters`` with ``PFER`` and
  ``cutoff`` given): q from the number of features, the number of resample pairs, the
  threshold and the target alone, fixed before any method runs.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

#: the assumption under which a bound holds, weakest last; ``none`` = Shah & Samworth's
#: Theorem 1 (complementary pairs, no assumption; Meinshausen & Bühlmann's number)
ASSUMPTIONS = ("r_concave", "unimodal", "none")
_BOUND_KEYS = {"r_concave": "cpss_r_concave", "unimodal": "cpss_unimodal", "none": "meinshausen_buhlmann"}


def error_bound(q: int, p: int, threshold: float, n_resamples: int, scheme: str) -> dict:
    """Bound on the expected number of falsely selected features at selection frequency >= threshold.

    q = features selected per resample (``top``), p = features. Meinshausen & Bühlmann (2010),
    Theorem 1: E[V] <= q^2 / ((2 pi - 1) p) for pi in (1/2, 1], V = noise features selected,
    assuming the noise features' selection indicators are exchangeable and the procedure is not
    worse than random guessing, for subsamples of size floor(n/2). Shah & Samworth (2013),
    Theorem 1: the same number bounds, with complementary pairs and without those assumptions,
    the expected number of selected features of low selection probability (<= q/p). Their
    eq. (8), under unimodality of the simultaneous-selection probabilities, gives
    E <= C(pi, B) q^2 / p with B pairs: C = 1 / (2 (2 pi - 1 - 1/(2B))) for
    pi in [min(1/2 + theta^2, 1/2 + 1/(2B) + 3 theta^2 / 4), 3/4] (theta = q/p), and
    C = 4 (1 - pi + 1/(2B)) / (1 + 1/B) for pi in (3/4, 1] (and only where the first constant is
    positive, pi > 1/2 + 1/(4B), as stabs' grid of cutoffs 1/2 + j/(2B), j >= 2); constants and range as the R
    package stabs (Hofner & Hothorn, ``um_const`` in R/helpers.R, from the paper's authors'
    code). Under r-concavity (eq. 9-10, :func:`r_concave_bound`) the bound also covers thresholds
    in (q/p, 1/2]. Bootstrap resamples satisfy neither theorem: no bound is given.
    """
    pi, theta = float(threshold), q / p
    out = {"q": int(q), "p": int(p), "threshold": pi, "scheme": scheme,
           "meinshausen_buhlmann": None, "cpss_unimodal": None, "cpss_r_concave": None}
    if scheme != "cpss":
        out["statement"] = bound_statement(out)
        return out
    B = n_resamples // 2
    if pi > 0.5:  # Meinshausen & Buhlmann's and the unimodal bound need pi > 1/2
        out["meinshausen_buhlmann"] = q * q / ((2 * pi - 1) * p)
        lo = min(0.5 + theta**2, 0.5 + 1 / (2 * B) + 0.75 * theta**2)
        if lo <= pi <= 0.75 and 2 * pi - 1 - 1 / (2 * B) > 0:  # stabs' cutoff grid starts at 1/2 + 1/B
            out["cpss_unimodal"] = q * q / p / (2 * (2 * pi - 1 - 1 / (2 * B)))
        elif pi > 0.75:
            out["cpss_unimodal"] = q * q / p * 4 * (1 - pi + 1 / (2 * B)) / (1 + 1 / B)
    out["cpss_r_concave"] = r_concave_bound(q, p, pi, B)  # also below 1/2 (stabs: any threshold above q/p)
    out["statement"] = bound_statement(out)
    return out


#: how each bound is named in words: (key, assumption, source)
BOUND_WORDS = (("cpss_r_concave", "if the selection probabilities are r-concave",
                "Shah & Samworth 2013, eq. 9-10, as the R package stabs"),
               ("cpss_unimodal", "if they are unimodal", "Shah & Samworth 2013, eq. 8"),
               ("meinshausen_buhlmann", "with no assumption",
                "Shah & Samworth 2013, Theorem 1; Meinshausen & Buhlmann 2010, Theorem 1"))


def bound_statement(bound: dict) -> str:
    """The bounds of an :func:`error_bound` dict in one plain sentence, tightest first."""
    if bound["scheme"] != "cpss":
        return ("bootstrap resamples: the stability-selection bounds need complementary half-samples "
                "(scheme: cpss); no error bound is given")
    parts = [f"at most {bound[k]:.3g} {words} ({src})" for k, words, src in BOUND_WORDS if bound[k] is not None]
    if not parts:
        return (f"no error bound applies at threshold {bound['threshold']:g} with top {bound['q']} of "
                f"{bound['p']} features")
    return "expected number of false selections: " + "; ".join(parts)


def _r_concave_tail(theta: float, which: int, B: int, r: float) -> float | None:
    """stabs' ``D``: the largest upper-tail probability P(X >= which / B) over r-concave
    distributions on {0, 1/B, ..., 1} with mean ``theta`` (Shah & Samworth 2013, Sec. 3.3;
    their code, as the R package stabs); 1 below the tail's start, None when theta is too large
    (stabs stops there). Per k the tail is maximised over a in [a_{k+1}, a_k] (stabs: ``optimize``,
    which stops within its tolerance of an end point); the maximum often lies at the end point, so
    both ends are evaluated too: the supremum, at most 6 % above stabs' numbers, never below."""
    from scipy.optimize import brentq, minimize_scalar

    s, tB = 1.0 / r, theta * B
    k0 = int(np.ceil(2 * tB)) + 1
    if which < k0:
        return 1.0
    if k0 >= B:  # stabs: k0 > B stops; k0 = B leaves no interval [a_{k+1}, a_k] to maximise over
        return None

    def mean_gap(a, k):
        w = (a + np.arange(k + 1)) ** s
        return float((np.arange(k + 1) * w).sum() / w.sum() - tB)

    a = np.full(B + 1, 1e5)
    for k in range(k0, B + 1):
        a[k] = brentq(mean_gap, 1e-5, a[k - 1], args=(k,), xtol=np.finfo(float).eps ** 0.75)

    def tail(x, k):
        j = np.arange(k + 1)
        return 1.0 - (k + 1 - tB) * ((x + np.arange(which)) ** s).sum() / ((k + 1 - j) * (x + j) ** s).sum()

    best = 0.0
    for k in range(k0, B):
        res = minimize_scalar(lambda x, k=k: -tail(x, k), bounds=(a[k + 1], a[k]), method="bounded")
        best = max(best, -float(res.fun), tail(a[k + 1], k), tail(a[k], k))
    return best


def r_concave_bound(q: int, p: int, threshold: float, B: int) -> float | None:
    """E[false selections] under r-concavity (Shah & Samworth 2013, eq. 9-10, r = -1/2 for the
    pairs' simultaneous selection, -1/4 for single selections), as stabs' ``minD`` times p: None
    (no bound) for q above stabs' ``maxQ`` (ceil(4 B q / p) + 1 >= 2 B) or threshold <= q/p."""
    theta = q / p
    if np.ceil(q * (4 * B / p)) + 1 - 2 * B >= 0 or threshold <= theta:
        return None
    which = int(np.ceil(float(f"{threshold * 2 * B:.10g}")))  # stabs: ceiling(signif(pi / (1/(2B)), 10))
    tails = [_r_concave_tail(theta**2, which - B, B, -0.5), _r_concave_tail(theta, which, 2 * B, -0.25)]
    if any(t is None for t in tails):
        return None
    return min(1.0, *tails) * p


def bound_of(bound: dict, assumption: str = "r_concave") -> tuple[float | None, str | None]:
    """``(value, assumption it holds under)`` from an :func:`error_bound` dict: the bound of
    ``assumption``, else of the next weaker assumption that gives one (r-concave, then
    unimodal, then none); ``(None, None)`` when no bound applies (bootstrap resamples)."""
    if assumption not in ASSUMPTIONS:
        raise ConfigError(f"assumption must be one of {', '.join(ASSUMPTIONS)}, got {assumption!r}")
    for a in ASSUMPTIONS[ASSUMPTIONS.index(assumption):]:
        v = bound.get(_BOUND_KEYS[a])
        if v is not None:
            return float(v), a
    return None, None


def choose_top(p: int, threshold: float, n_resamples: int, *, max_false: float = 1.0,
               assumption: str = "r_concave") -> int:
    """The largest q in 1..p-1 whose :func:`bound_of` at ``threshold`` with ``n_resamples``
    complementary-pair resamples is at most ``max_false`` (the bounds grow with q; binary
    search); 1 when even q = 1 exceeds it (the summary then says so). Bootstrap resamples have
    no bound: the caller uses the q of the same number of complementary pairs."""
    def ok(q: int) -> bool:
        v, _ = bound_of(error_bound(q, p, threshold, n_resamples, "cpss"), assumption)
        return v is not None and v <= max_false

    if p < 2 or not ok(1):
        return 1
    lo, hi = 1, p - 1  # ok(lo) holds
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
