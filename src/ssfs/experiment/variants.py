"""The variants of an experiment: the cartesian product of the config's ``sweeps`` and the
supervision settings each variant runs with (config semantics the workflow's rules and the
report both read)."""

from __future__ import annotations

import copy
import itertools

BASE_VARIANT = "base"


def variants(cfg: dict) -> dict[str, dict]:
    """Variant name -> overrides, the cartesian product of ``sweeps`` (``{"base": {}}`` if none)."""
    sweeps = cfg.get("sweeps") or {}
    if not sweeps:
        return {BASE_VARIANT: {}}
    keys = sorted(sweeps)
    out = {}
    for combo in itertools.product(*(sweeps[k] for k in keys)):
        over = dict(zip(keys, combo, strict=True))
        name = "__".join(f"{k}-{v}" for k, v in over.items())
        out[name] = over
    return out


def supervision_for(cfg: dict, variant_overrides: dict) -> dict:
    """The supervision settings of one variant (sweep values applied)."""
    sup = copy.deepcopy(cfg["supervision"])
    if "labeled_per_class" in variant_overrides:
        sup["labeled_per_class"] = variant_overrides["labeled_per_class"]
    if "n_constraints" in variant_overrides:
        sup["constraints"]["n_ml"] = sup["constraints"]["n_cl"] = variant_overrides["n_constraints"]
    if "noise" in variant_overrides:
        sup["constraints"]["noise"] = variant_overrides["noise"]
    return sup
