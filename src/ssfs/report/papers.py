"""Our numbers beside a paper's published table (``report.paper``).

A published table is ``ssfs/report/published/<name>.tsv`` (package data) (``#`` comment lines, then the
columns ``dataset, method, metric, value, sd, features, setting, ssfs_dataset,
ssfs_method, note``; see any of those files' header). Each published row is matched to

- our datasets whose name equals (case-insensitively, ignoring non-alphanumerics) the
  paper's name or one of ``ssfs_dataset``;
- our method labels whose label or registered method equals ``ssfs_method`` (or the
  paper's name);
- our variants whose effective supervision has the ``setting`` (``key=value``
  separated by ``;``: ``labeled_per_class``, ``n_constraints`` (= n_ml = n_cl, random
  constraints), ``noise``); an empty setting matches every variant;

and our value is computed the same way: ``top:K`` = per repetition the mean over the
numbers of features 1..K, then mean ± sd over repetitions (all K sizes must have
been evaluated); ``at:K`` = at K features; ``percent:Q`` = at round(p Q / 100)
features; ``rank_sum:<metric>`` = the rank-sum statistic T
(:func:`ssfs.experiment.stats.rank_sum`, ties = min) over our repetitions, among the methods
of the same table that this run has; a repetition where one of them has no value
(NaN: COP-KMeans found no feasible labelling) is left out of T and of ``n_runs``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..experiment.stats import rank_sum
from ..experiment.variants import supervision_for, variants

COLUMNS = ["dataset", "method", "metric", "value", "sd", "features", "setting", "ssfs_dataset", "ssfs_method",
           "note"]
OUT_COLUMNS = ["paper_dataset", "paper_method", "metric", "features", "setting", "published", "dataset",
               "variant", "method", "ours", "n_runs", "note"]


def _norm(s) -> str:
    return re.sub(r"[^a-z0-9]", "", str(s).lower())


def available_papers(papers_dir) -> list[str]:
    d = Path(papers_dir)
    return sorted(p.stem for p in d.glob("*.tsv")) if d.is_dir() else []


def load_paper(path) -> pd.DataFrame:
    """A published table (all columns as printed, strings)."""
    df = pd.read_csv(path, sep="\t", comment="#", dtype=str, keep_default_na=False)
    missing = [c for c in ("dataset", "method", "metric", "value", "features") if c not in df.columns]
    if missing:
        raise ConfigError(f"published table {path} lacks column(s) {', '.join(missing)}")
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = ""
    return df[COLUMNS]


def parse_setting(text: str) -> dict:
    out = {}
    for part in filter(None, (p.strip() for p in str(text).split(";"))):
        k, _, v = part.partition("=")
        out[k.strip()] = float(v) if v.strip() not in ("all",) else v.strip()
    return out


def _variant_matches(setting: dict, sup: dict) -> bool:
    for k, v in setting.items():
        if k == "labeled_per_class":
            lpc = sup["labeled_per_class"]
            if (lpc == "all") != (v == "all") or (v != "all" and float(lpc) != v):
                return False
        elif k == "n_constraints":
            c = sup["constraints"]
            if c["mode"] != "random" or float(c["n_ml"]) != v or float(c["n_cl"]) != v:
                return False
        elif k == "noise":
            if not np.isclose(float(sup["constraints"]["noise"]), v):
                return False
        else:
            return False
    return True


def feature_sizes(spec: str, p: int) -> list[int]:
    kind, _, val = str(spec).partition(":")
    if kind == "top":
        return list(range(1, int(val) + 1))
    if kind == "at":
        return [int(val)]
    if kind == "percent":
        return [max(1, int(round(p * float(val) / 100.0)))]
    if kind in ("best", "upto"):
        return list(range(1, int(val) + 1))
    raise ConfigError(f"published table: unknown features spec {spec!r} (top:K, at:K, percent:Q, best:K or upto:K)")


def compare_with_paper(paper: pd.DataFrame, scores: pd.DataFrame, n_features: dict[str, int],
                       cfg: dict) -> pd.DataFrame:
    """One row per published row x matching (dataset, variant, method) of this run
    (columns :data:`OUT_COLUMNS`); published rows with no match are left out."""
    our_ds = {_norm(d): d for d in scores["dataset"].unique()}
    method_of = {label: m["method"] for label, m in cfg["methods"].items()}
    var_over = variants(cfg)
    var_sup = {v: supervision_for(cfg, var_over.get(v, {})) for v in scores["variant"].unique()}
    rows = []
    for r in paper.itertuples(index=False):
        names = [r.dataset, *[a for a in str(r.ssfs_dataset).split(",") if a.strip()]]
        dsets = list(dict.fromkeys(our_ds[_norm(n)] for n in names if _norm(n) in our_ds))
        want = {_norm(r.ssfs_method or r.method), _norm(r.method)}
        labels = [lab for lab in sorted(scores["method"].unique())
                  if _norm(lab) in want or _norm(method_of.get(lab, lab)) in want]
        setting = parse_setting(r.setting)
        vars_ = [v for v in sorted(var_sup) if _variant_matches(setting, var_sup[v])]
        published = r.value + (f" ± {r.sd}" if r.sd else "")
        for ds in dsets:
            sizes = feature_sizes(r.features, n_features[ds])
            for var in vars_:
                sub = scores[(scores["dataset"] == ds) & (scores["variant"] == var)]
                for lab in labels:
                    ours, n_runs = _our_value(sub, lab, r.metric, sizes, paper, method_of, rank_sum,
                                              kind=str(r.features).partition(":")[0])
                    rows.append(dict(paper_dataset=r.dataset, paper_method=r.method, metric=r.metric,
                                     features=r.features, setting=r.setting, published=published, dataset=ds,
                                     variant=var, method=lab, ours=ours, n_runs=n_runs, note=r.note))
    return pd.DataFrame(rows, columns=OUT_COLUMNS)


def _our_value(sub: pd.DataFrame, label: str, metric: str, sizes: list[int], paper, method_of, rank_sum,
               kind: str = "top"):
    if metric.startswith("rank_sum:"):
        base = metric.split(":", 1)[1]
        # the methods of this published table that this run has (T depends on who is ranked)
        peers = {_norm(x) for x in paper["ssfs_method"]} | {_norm(x) for x in paper["method"]}
        members = [m for m in sub["method"].unique() if _norm(m) in peers or _norm(method_of.get(m, m)) in peers]
        s = sub[sub["method"].isin(members) & (sub["metric"] == base) & sub["n_features"].isin(sizes)]
        if s.empty or len(members) < 2 or set(sizes) - set(s["n_features"]):
            return "", 0
        # a run where some member has no value (e.g. COP-KMeans found no feasible labelling: NaN) cannot be
        # ranked; T is taken over the complete runs only (n_runs says how many)
        s = s.dropna(subset=["value"])
        complete = s.groupby("rep").size() == len(members) * len(sizes)
        s = s[s["rep"].isin(complete.index[complete])]
        if s.empty:
            return "", 0
        t = rank_sum(s, base, ties="min")
        return f"{float(t[label].iloc[0]):g}", int(t["n_runs"].iloc[0])
    s = sub[(sub["method"] == label) & (sub["metric"] == metric)]
    if kind in ("best", "upto"):
        s = s[s["n_features"].isin(sizes)].dropna(subset=["value"])
        if s.empty:
            return "", 0
        if kind == "upto":
            per_rep = s.sort_values("n_features").groupby("rep")["value"].last()
        else:
            per_rep = s.groupby("rep")["value"].agg("min" if metric == "red" else "max")
        sd = per_rep.std() if len(per_rep) > 1 else 0.0
        return f"{per_rep.mean():.3f} ± {sd:.3f}", int(len(per_rep))
    if s.empty or set(sizes) - set(s["n_features"]):
        return "", 0
    s = s[s["n_features"].isin(sizes)]
    per_rep = s.groupby("rep")["value"].mean()
    sd = per_rep.std() if len(per_rep) > 1 else 0.0
    return f"{per_rep.mean():.3f} ± {sd:.3f}", int(len(per_rep))
