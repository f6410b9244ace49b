"""Labels that count (issue 28): scenario kinds x label budgets x methods, anchors included.

    python benchmarks/bench_labels_sweep.py --quick          # a few minutes: docs/benchmark_labels.md (quick block)
    python benchmarks/bench_labels_sweep.py                  # the full sweep (hours; resumable)
    python benchmarks/bench_labels_sweep.py --part sim --scenarios counts rare --budgets 0 3/class 1% \\
        --methods cls "cls[label_weight=1]" label_spreading_f triku --seeds 0 1 2 --no-doc

Simulations (``ssfs.simulate.SCENARIOS``: counts, nuisance programs and batches, knobs drawn per
seed, a rare type, a type nobody labeled, 20 % wrong labels, imbalanced labels, microarrays):
each method ranks the genes of the scenario's data given the scenario's partial labels at a
budget (0, k per class, a share of the cells); the metric is the recall of the planted markers
in the top m (m = number of markers). ssfs methods read ``Simulation.expression()``
(log-normalised counts, microarray values); anchors (``benchmarks/anchors.py``, ``pip install
-e ".[anchors]"``) read the input their documentation asks for (raw counts for seurat_v3,
Pearson residuals, triku and Hotspot).

Real sets (``--part real``): the microarrays of ../shared/data (raw intensities log2-transformed,
floored at 1) and scanpy's pbmc68k_reduced (log-normalised ``.raw``; counts recovered from it for
the count anchors). Each repetition splits the samples (2/3 train, stratified), shows the methods
the training rows with 3 labels per class, and scores the top 1, 2, 5, 10, 20 features by a
linear SVM (C = 1, standardised, trained on every training label) on the test third; the metric
is the mean accuracy over those sizes. Each method is compared with the best other method of the
set by the corrected resampled t-test (Nadeau & Bengio 2003; ``ssfs.experiment.stats``).

Labels added (``--nested``, simulations only): each budget's labeled samples hold the previous
budget's (``Scenario.labels_added``: one order of the samples, the first of every class labeled; a
wrong label stays wrong), so a change between budgets is the labels', not a new draw's; ``100%``
labels every sample of the classes shown (with ``fisher`` there: the F test on the true classes,
the ceiling). A last table gives the first method's mean change at every step and the seeds where
it fell or rose.

Batches (``--batches``, simulations only): on data of several batches every method is told them
as a user would: ssfs methods through ``ssfs.runner.within_batches`` (``propagate``'s ``batch``,
the others the data centred within batches), anchors that read the expression get it corrected by
``scanpy.pp.combat``; anchors that read raw counts cannot be told (they run as without).

Methods: ssfs registry names with parameters (``cls``, ``"cls[label_weight=1,weights=literal]"``)
or anchor names. Every (data, labels, method) result is cached as JSON under ``--cache``
(default benchmarks/results/labels_sweep/), so an interrupted run resumes; ``--fresh`` recomputes
(``--fresh m1 m2``: those methods' results only).
Label-free methods are computed once per data set and reused for every budget.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import re
import sys
import time
import traceback
from itertools import pairwise
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from anchors import ANCHORS, anchor_order, available, warm_up  # noqa: E402

HERE = Path(__file__).resolve().parent
SSFS_METHODS = ["variance", "laplacian", "fisher", "cls", "csfs", "sselect"]
ARRAY_METHODS = [*SSFS_METHODS, "efsis"]
#: ssfs methods that ignore labels (computed once per data set)
LABEL_FREE = {"variance", "laplacian", "pca", "scanpy_hvg", "ssdr", "wckm", "l2gfs"}
#: parameters set for simulated counts: on thousands of cells csfs's adaptive (Ward, all pairs)
#: neighbourhood takes minutes per call (with the kNN one and balanced weights it scores as cls)
COUNTS_PARAMS = {"csfs": {"neighbourhood": "knn"}}
QUICK = dict(scenarios=["counts", "counts_nuisance", "rare", "unlabeled_type", "wrong_labels", "microarray"],
             budgets=["0", "3/class", "1%"], seeds=[0], reps=2, arrays=["GLIOMA", "TOX-171"])
FULL = dict(scenarios=None, budgets=["0", "2/class", "3/class", "1%", "10/class", "20/class"], seeds=[0, 1, 2],
            reps=10, arrays=None)
ARRAYS = {"ALLAML": "asu/ALLAML.mat", "colon": "asu/colon.mat", "GLIOMA": "asu/GLIOMA.mat",
          "lung_small": "asu/lung_small.mat", "lymphoma": "asu/lymphoma.mat", "nci9": "asu/nci9.mat",
          "Prostate-GE": "asu/Prostate-GE.mat", "TOX-171": "asu/TOX-171.mat", "cns": "efsis/cns.arff",
          "dlbcl": "efsis/dlbcl.arff", "leukemia": "asu/leukemia.mat", "arcene": "asu/arcene.mat",
          "orlraws10P": "asu/orlraws10P.mat", "pixraw10P": "asu/pixraw10P.mat", "warpAR10P": "asu/warpAR10P.mat",
          "warpPIE10P": "asu/warpPIE10P.mat", "Yale": "asu/Yale.mat", "ORL": "asu/ORL.mat"}
SIZES = (1, 2, 5, 10, 20)


# ----------------------------------------------------------------------------- methods
def parse_method(spec: str) -> tuple[str, dict]:
    """``"cls[label_weight=1,weights=literal]"`` -> ("cls", {"label_weight": 1, "weights": "literal"})."""
    import yaml

    m = re.fullmatch(r"([\w.-]+)(?:\[(.*)\])?", spec.strip())
    if not m:
        raise SystemExit(f"bad method spec {spec!r}: use name or name[key=value,...]")
    params = {}
    for item in filter(None, (m.group(2) or "").split(",")):
        key, _, value = item.partition("=")
        params[key.strip()] = yaml.safe_load(value)
    return m.group(1), params


def cache_name(spec: str, kind: str) -> str:
    """The method's name in the cache: its spec, with the parameters this kind of data sets."""
    name, params = parse_method(spec)
    extra = COUNTS_PARAMS.get(name, {}) if kind == "counts" else {}
    if not extra:
        return spec
    return f"{name}[{','.join(f'{k}={v}' for k, v in {**extra, **params}.items())}]"


def uses_labels(spec: str) -> bool:
    name, _ = parse_method(spec)
    return ANCHORS[name].labels if name in ANCHORS else name not in LABEL_FREE


def runs_on(spec: str, kind: str) -> bool:
    """Whether the method applies to this kind of data (count anchors need counts)."""
    name, _ = parse_method(spec)
    return name not in ANCHORS or ANCHORS[name].input == "any" or kind == "counts"


def rank(spec: str, data: dict, y: np.ndarray, seed: int, kind: str) -> np.ndarray | None:
    """The method's gene order (best first) or None when it does not apply to these labels.
    ``data``: "expression" (what an analysis reads), "counts" (raw counts or None), "embedding"
    (PCA of the expression for the graph methods, computed on first use)."""
    from ssfs import run_method
    from ssfs.errors import InputError, MethodError, SupervisionError
    from ssfs.registry import get_method
    from ssfs.runner import within_batches

    name, params = parse_method(spec)
    if name in ANCHORS:
        X = data["counts"] if ANCHORS[name].input == "counts" else data.get("corrected", data["expression"])
        return anchor_order(name, X() if callable(X) else X, y, np.random.default_rng(seed))
    if not (y >= 0).any() and get_method(name).needs:  # labels, or constraints drawn from them
        return None
    kw = {**(COUNTS_PARAMS.get(name, {}) if kind == "counts" else {}), **params}
    if name in {"cls", "laplacian", "csfs", "sselect"} and "embedding" in data:
        kw.setdefault("embedding", data["embedding"]())
    try:
        X, kw = within_batches(name, data["expression"], kw, data.get("batch"))
        return run_method(name, X, y, rng=seed, **kw).order
    except (SupervisionError, MethodError, InputError):  # e.g. fisher with one label per class
        return None


# ----------------------------------------------------------------------------- cache
def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


class Cache:
    """One JSON file per (data, labels, method) under ``root``."""

    def __init__(self, root: Path, fresh=(), cached_only: bool = False):
        """``fresh``: True (recompute everything) or the method specs to recompute."""
        self.root, self.fresh, self.cached_only = Path(root), fresh, cached_only

    def path(self, *keys: str) -> Path:
        return self.root.joinpath(*[re.sub(r"[^\w.=%,+-]", "_", k) for k in keys]).with_suffix(".json")

    def get_or_run(self, keys: tuple[str, ...], compute, *args) -> dict | None:
        """The cached record, else computed and stored (None with ``cached_only``)."""
        p = self.path(*keys)
        if p.exists() and not (self.fresh is True or parse_method(keys[-1])[0] in self.fresh
                               or keys[-1] in self.fresh):
            return json.loads(p.read_text())
        if self.cached_only:
            return None
        t = time.perf_counter()
        try:
            value, status = compute(*args), "ok"
        except Exception as e:  # a crashing tool is a result too: recorded, the sweep goes on
            value, status = None, f"error: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            traceback.print_exc(limit=2)
        rec = {"value": value, "seconds": time.perf_counter() - t, "status": status if value is not None
               or status != "ok" else "n/a"}
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(rec))
        tmp.replace(p)
        return rec


# ----------------------------------------------------------------------------- simulations
def _sim_data(sim, batches: bool = False) -> dict:
    """What the methods read; the PCA the graph methods would build ("auto" space on
    single-cell-like input) computed once and passed as ``embedding=`` (the same matrix: this
    only saves time; dense microarrays keep their raw-feature graph). With ``batches`` and data of
    several batches: "batch" (every sample's) and "corrected" (the expression after
    ``scanpy.pp.combat``, computed on first use), and no shared embedding."""
    from ssfs.methods._shared.representation import pca_embedding, single_cell_like

    expr = sim.expression()
    data = {"expression": expr, "counts": sim.X if sim.kind == "counts" else None}
    if batches and np.unique(sim.batch).size > 1:
        data["batch"] = sim.batch
        data["corrected"] = _combat(expr, sim.batch)
        return data
    if single_cell_like(expr):
        cache = {}

        def embedding():
            if "emb" not in cache:
                cache["emb"] = pca_embedding(expr, 50)
            return cache["emb"]

        data["embedding"] = embedding
    return data


def _combat(expr, batch):
    """A function giving ``expr`` corrected by ``scanpy.pp.combat`` for ``batch`` (computed once)."""
    done = {}

    def corrected():
        if "X" not in done:
            import anndata as ad
            import scanpy as sc

            a = ad.AnnData(expr.toarray() if hasattr(expr, "toarray") else np.array(expr, dtype=np.float64))
            a.obs["batch"] = np.asarray(batch).astype(str)
            sc.pp.combat(a, key="batch")
            done["X"] = np.asarray(a.X)
        return done["X"]

    return corrected


def sweep_scenarios(args, cache: Cache) -> list[dict]:
    """Recall of the planted markers for every scenario x seed x budget x method."""
    from ssfs.simulate import get_scenario

    rows = []
    for seed in args.seeds:  # seed-major: an interrupted run has every scenario at the first seeds
        for name in args.scenarios:
            rows += _sweep_one(args, cache, get_scenario(name), seed)
    return rows


def _sweep_one(args, cache: Cache, scenario, seed: int) -> list[dict]:
    """Every budget x method on one scenario's data for one seed."""
    knobs = scenario.knobs_for(seed, args.quick)
    sim = scenario.simulate(seed, args.quick)
    data = _sim_data(sim, args.batches)
    data_key = f"{scenario.generator.__name__}-{_digest(knobs)}-s{seed}" + ("-batches" if "batch" in data else "")
    rows = []
    added = None
    if args.nested:  # labels added: one nested draw for the budgets in their order
        added = dict(zip(args.budgets, scenario.labels_added(sim, args.budgets, seed), strict=True))
    for budget in args.budgets:
        label_key = f"{_digest(scenario.labeling)}-{'nested-' if added else ''}{budget}"
        y = added[budget] if added else scenario.labels(sim, budget, seed)
        for spec in args.methods:
            if not runs_on(spec, sim.kind):
                continue
            lk = label_key if uses_labels(spec) else "label-free"
            rec = cache.get_or_run(("sim", data_key, lk, cache_name(spec, sim.kind)), _recall, spec, data, y, seed,
                                   sim)
            if rec is None:
                continue
            rows.append({"scenario": scenario.name, "seed": seed, "budget": budget, "method": spec, **rec})
            print(f"{scenario.name:20s} seed {seed} {budget:>8s} {spec:24s} {_fmt(rec['value'])} "
                  f"({rec['seconds']:.1f} s) {'' if rec['status'] == 'ok' else rec['status']}", flush=True)
    return rows


def _recall(spec, data, y, seed, sim):
    order = rank(spec, data, y, seed, sim.kind)
    return None if order is None else sim.recall(order)


def _fmt(v) -> str:
    return "  —  " if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3f}"


# ----------------------------------------------------------------------------- real sets
def load_real(name: str, data_dir: Path):
    """(expression, counts or None, classes) of a real set, or None when its file is missing."""
    if name == "pbmc68k_reduced":
        import scanpy as sc
        from scipy import sparse

        a = sc.datasets.pbmc68k_reduced()
        log = sparse.csr_matrix(a.raw.X, dtype=np.float64)
        counts = log.copy()  # raw = log1p(counts * 1e4 / n_counts): invert it
        counts.data = np.round(np.expm1(counts.data) * np.repeat(a.obs["n_counts"].to_numpy() / 1e4,
                                                                 np.diff(counts.indptr)))
        _, y = np.unique(a.obs["bulk_labels"].astype(str), return_inverse=True)
        return log, counts, y
    path = data_dir / ARRAYS[name]
    if not path.exists():
        return None
    if path.suffix == ".mat":
        from scipy.io import loadmat

        d = loadmat(path)
        X, labels = np.asarray(d["X"], dtype=float), np.asarray(d["Y"]).ravel()
    else:
        from scipy.io import arff

        d, meta = arff.loadarff(path)
        X = np.column_stack([d[a] for a in meta.names()[:-1]]).astype(float)
        labels = np.asarray(d[meta.names()[-1]]).astype(str)
    if X.max() > 100:  # raw intensities: what an analyst does first
        X = np.log2(np.maximum(X, 1.0))
    _, y = np.unique(labels, return_inverse=True)
    return X, None, y


def _svm_accuracy(Xtr, ytr, Xte, yte, order) -> float:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    def columns(M, f):
        return M[:, f].toarray() if hasattr(M, "toarray") else M[:, f]

    acc = []
    for s in SIZES:
        f = np.asarray(order[:s])
        clf = make_pipeline(StandardScaler(), SVC(kernel="linear", C=1.0)).fit(columns(Xtr, f), ytr)
        acc.append(float((clf.predict(columns(Xte, f)) == yte).mean()))
    return float(np.mean(acc))


def real_splits(y: np.ndarray, reps: int, per_class: int):
    """(rep, train, test, labels) of the real sets' ``reps`` stratified 2/3 - 1/3 splits, ``per_class`` labels per
    class of the training samples (-1 elsewhere), drawn from the seed ``rep``: every real-set benchmark's splits."""
    from sklearn.model_selection import StratifiedShuffleSplit

    from ssfs.simulate import labels_per_class

    splits = StratifiedShuffleSplit(n_splits=reps, test_size=1 / 3, random_state=0).split(np.zeros(y.size), y)
    for rep, (train, test) in enumerate(splits):
        yield rep, train, test, labels_per_class(y[train], per_class, np.random.default_rng(rep))


def sweep_real(args, cache: Cache) -> list[dict]:
    """Mean SVM accuracy on the top 1-20 features, ``args.real_per_class`` labels per class (3), per set x
    rep x method."""
    rows = []
    for name in args.real:
        loaded = load_real(name, Path(args.data))
        if loaded is None:
            print(f"# {name}: missing under {args.data}, skipped", flush=True)
            continue
        X, counts, y = loaded
        kind = "counts" if counts is not None else "microarray"
        for rep, tr, te, ylab in real_splits(y, args.reps, args.real_per_class):
            per_class = "" if args.real_per_class == 3 else f"-{args.real_per_class}pc"  # 3: the former keys
            data = {"expression": X[tr], "counts": None if counts is None else counts[tr]}
            for spec in args.real_methods:
                if not runs_on(spec, kind):
                    continue
                rec = cache.get_or_run(("real", name, f"rep{rep}{per_class}", spec), _real_value,
                                       spec, data, ylab, rep, X, y, tr, te)
                if rec is None:
                    continue
                rows.append({"dataset": name, "rep": rep, "n_train": tr.size, "n_test": te.size,
                             "method": spec, **rec})
                print(f"{name:16s} rep {rep} {spec:24s} {_fmt(rec['value'])} ({rec['seconds']:.1f} s)", flush=True)
    return rows


def _real_value(spec, data, ylab, rep, X, y, tr, te):
    order = rank(spec, data, ylab, rep, "real")
    return None if order is None else _svm_accuracy(X[tr], y[tr], X[te], y[te], order)


# ----------------------------------------------------------------------------- tables
def _bold_best(row, cols) -> list[str]:
    vals = [row[c] for c in cols]
    finite = [v for v in vals if v is not None and np.isfinite(v)]
    best = max(finite) if finite else None
    return [("**" + _fmt(v).strip() + "**") if best is not None and v is not None and np.isfinite(v)
            and v >= best - 1e-9 else _fmt(v).strip() for v in vals]


def _md(header: list[str], lines: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def _short(spec: str) -> str:
    return {"label_spreading_f": "LS+F", "label_propagation_f": "LP+F", "rank_genes_groups": "rank_genes",
            "hvg_seurat": "hvg", "hvg_seurat_v3": "hvg_v3", "hvg_pearson": "pearson"}.get(spec, spec)


def sim_tables(rows: list[dict], methods: list[str], budgets: list[str]) -> str:
    """Recall (mean over seeds) per scenario x budget x method, best anchor / best ssfs, the first
    ssfs method against the best anchor on the seeds both ran (paired), and seconds. A method
    that could not run on some seeds (e.g. label spreading with one labeled class) shows its mean
    over the seeds it ran on and their count, "0.105 (8)": such means are not comparable with the
    row's others, the paired column is."""
    import pandas as pd

    df = pd.DataFrame(rows)
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    ran = df[np.isfinite(df["value"])]
    mean = ran.groupby(["scenario", "budget", "method"])["value"].mean()
    count = ran.groupby(["scenario", "budget", "method"])["seed"].nunique()
    seeds = df.groupby("scenario")["seed"].nunique()
    anchors = [m for m in methods if parse_method(m)[0] in ANCHORS]
    ours = [m for m in methods if m not in anchors]
    lines = []
    for scen in dict.fromkeys(df["scenario"]):
        for b in budgets:
            row = {m: mean.get((scen, b, m), np.nan) for m in methods}
            best_a = np.nanmax([row[m] for m in anchors] + [-np.inf])
            best_o = np.nanmax([row[m] for m in ours] + [-np.inf])
            row["best anchor"], row["best ssfs"] = (v if np.isfinite(v) else np.nan for v in (best_a, best_o))
            cells = [c + (f" ({count[scen, b, m]})" if 0 < count.get((scen, b, m), 0) < seeds[scen] else "")
                     for c, m in zip(_bold_best(row, methods), methods, strict=True)]
            lines.append([scen, b, str(seeds[scen]), *cells, _fmt(row["best anchor"]).strip(),
                          _fmt(row["best ssfs"]).strip(), _paired(ran, scen, b, ours[:1], anchors, row)])
    first = _short(ours[0]) if ours else "ssfs"
    table = _md(["scenario", "labels", "seeds", *map(_short, methods), "best anchor", "best ssfs",
                 f"{first} − best anchor, same seeds"], lines)
    ok = df[df["status"] == "ok"]
    sec = ok.groupby(["method", "scenario"])["seconds"].mean().unstack()
    tl = [[_short(m), *[f"{sec.loc[m, s]:.1f}" if m in sec.index and s in sec.columns and np.isfinite(
        sec.loc[m, s]) else "—" for s in sec.columns]] for m in methods]
    return table + "\n\nSeconds per call (mean; one BLAS thread, shared 2-core machine):\n\n" + _md(
        ["method", *sec.columns], tl)


def _paired(ran, scen: str, budget: str, ours: list[str], anchors: list[str], row: dict) -> str:
    """Mean difference of ``ours[0]`` and the anchor of best mean on the seeds both ran
    ("+0.037 (8)": 8 seeds), or "—"."""
    best = [m for m in anchors if np.isfinite(row[m]) and row[m] >= row["best anchor"] - 1e-9]
    if not ours or not best:
        return "—"
    at = ran[(ran["scenario"] == scen) & (ran["budget"] == budget)].pivot_table(
        index="seed", columns="method", values="value")
    if ours[0] not in at.columns:
        return "—"
    both = at[[ours[0], best[0]]].dropna()
    if both.empty:
        return "—"
    return f"{(both[ours[0]] - both[best[0]]).mean():+.3f} ({len(both)})"


def real_tables(rows: list[dict], methods: list[str], alpha: float = 0.05) -> str:
    """Mean accuracy per set x method; ▼ = significantly behind the set's best (corrected resampled t-test)."""
    import pandas as pd

    from ssfs.experiment.stats import corrected_resampled_ttest

    df = pd.DataFrame(rows)
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    lines = []
    for name, d in df.groupby("dataset", sort=False):
        wide = d.pivot(index="rep", columns="method", values="value")
        means = {m: (wide[m].mean() if m in wide and wide[m].notna().all() else np.nan) for m in methods}
        if not any(np.isfinite(v) for v in means.values()):
            continue
        best = max((m for m in methods if np.isfinite(means[m])), key=lambda m: means[m])
        n_train, n_test = d["n_train"].iloc[0], d["n_test"].iloc[0]
        cells = _bold_best(means, methods)
        for i, m in enumerate(methods):
            if m != best and np.isfinite(means[m]):
                _, p = corrected_resampled_ttest(wide[m], wide[best], n_train=n_train, n_test=n_test)
                cells[i] += " ▼" if p < alpha and means[m] < means[best] else ""
        lines.append([name, str(wide.shape[0]), *cells, _short(best)])
    table = _md(["set", "reps", *map(_short, methods), "best"], lines)
    ok = df[df["status"] == "ok"]
    sec = ok.groupby(["method", "dataset"])["seconds"].mean().unstack()
    tl = [[_short(m), *[f"{sec.loc[m, s]:.1f}" if m in sec.index and np.isfinite(sec.loc[m, s]) else "—"
                        for s in sec.columns]] for m in methods]
    return table + "\n\nSeconds per call (mean):\n\n" + _md(["method", *sec.columns], tl)


def write_doc(path: Path, block: str, text: str) -> None:
    """Replace the page's ``block`` between its markers (appended when new); the rest of the page stays."""
    begin, end = f"<!-- sweep:{block} -->", f"<!-- /sweep:{block} -->"
    page = path.read_text() if path.exists() else "# Labels that count: the benchmark\n"
    new = f"{begin}\n{text.strip()}\n{end}"
    if begin in page and end in page:
        page = page[: page.index(begin)] + new + page[page.index(end) + len(end):]
    else:
        page = page.rstrip() + "\n\n" + new + "\n"
    path.write_text(page)


# ----------------------------------------------------------------------------- main
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small data, few scenarios and budgets, 1 seed (minutes)")
    ap.add_argument("--part", choices=("all", "sim", "real"), default="all")
    ap.add_argument("--scenarios", nargs="+", help="scenario kinds (default: quick or all)")
    ap.add_argument("--budgets", nargs="+", help="label budgets: 0, k/class, f%%")
    ap.add_argument("--seeds", type=int, nargs="+")
    ap.add_argument("--methods", nargs="+", help="ssfs methods (name or name[k=v,...]) and anchors")
    ap.add_argument("--real", nargs="+", help="real sets (microarray names, pbmc68k_reduced)")
    ap.add_argument("--reps", type=int, help="repetitions of the real sets")
    ap.add_argument("--real-per-class", type=int, default=3,
                    help="labels per class of the real sets' training samples (0: none, the label-free scores)")
    ap.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data"))
    ap.add_argument("--cache", default=str(HERE / "results" / "labels_sweep"))
    ap.add_argument("--fresh", nargs="*", help="recompute the cached results (of these methods only)")
    ap.add_argument("--cached-only", action="store_true", help="tables from what is cached, compute nothing")
    ap.add_argument("--doc", default=str(HERE.parent / "docs" / "benchmark_labels.md"))
    ap.add_argument("--block", help="the doc page's block to replace (default: quick or full)")
    ap.add_argument("--no-doc", action="store_true", help="print the tables only")
    ap.add_argument("--out", help="also write every measurement as TSV")
    ap.add_argument("--nested", action="store_true",
                    help="labels added: each budget's labeled samples hold the previous one's (in the order given)")
    ap.add_argument("--batches", action="store_true",
                    help="tell every method the simulated batches (ssfs: within_batches; anchors: ComBat)")
    args = ap.parse_args(argv)
    from ssfs.simulate import SCENARIOS

    mode = QUICK if args.quick else FULL
    args.scenarios = args.scenarios or mode["scenarios"] or list(SCENARIOS)
    args.budgets = args.budgets or mode["budgets"]
    args.seeds = args.seeds if args.seeds is not None else mode["seeds"]
    args.reps = args.reps or mode["reps"]
    if not Path(args.data).is_dir():
        args.data = "/work/shared/data"
    args.real = args.real or [*(mode["arrays"] or ARRAYS), "pbmc68k_reduced"]
    anchors = [a for a in ANCHORS if available(a)]
    missing = [a for a in ANCHORS if not available(a)]
    if missing:
        print(f"# anchors not installed (pip install -e '.[anchors]'): {', '.join(missing)}", flush=True)
    args.real_methods = args.methods or [*ARRAY_METHODS, *anchors]
    args.methods = args.methods or [*SSFS_METHODS, *anchors]
    args.block = args.block or ("quick" if args.quick else "full")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    from threadpoolctl import threadpool_limits

    fresh = True if args.fresh == [] else set(args.fresh or ())
    cache = Cache(Path(args.cache) / ("quick" if args.quick else "full"), fresh=fresh,
                  cached_only=args.cached_only)
    started = time.perf_counter()
    parts = []
    with threadpool_limits(1):
        if not args.cached_only:
            warm_up({*args.methods, *args.real_methods})
        if args.part in ("all", "sim"):
            parts.append(sim_part(args, cache))
        if args.part in ("all", "real"):
            parts.append(real_part(args, cache))
    cmd = "python benchmarks/bench_labels_sweep.py " + " ".join(sys.argv[1:] if argv is None else argv)
    stamp = (f"`{cmd.strip()}` — {datetime.date.today().isoformat()}, "
             f"{(time.perf_counter() - started) / 60:.1f} min for what was not cached.")
    text = stamp + "\n\n" + "\n\n".join(parts)
    print(text)
    if not args.no_doc:
        write_doc(Path(args.doc), args.block, text)
    return 0


def sim_part(args, cache) -> str:
    rows = sweep_scenarios(args, cache)
    _tsv(args.out, "sim", rows)
    if not rows:
        return ""
    text = ("Recall of the planted markers in the top m (m = number of markers), mean over seeds; "
            "**bold** = best of the row.\n\n" + sim_tables(rows, args.methods, args.budgets))
    return text + ("\n\n" + added_table(rows, args.methods[0], args.budgets) if args.nested else "")


def added_table(rows: list[dict], spec: str, budgets: list[str]) -> str:
    """``spec``'s recall as labels are added (``--nested``): each budget's mean, and every step's
    mean change with the seeds where it fell (by any amount) or rose."""
    import pandas as pd

    df = pd.DataFrame(rows)
    df = df[(df.method == spec) & df.value.notna()]
    lines = []
    for scen, part in df.groupby("scenario", sort=False):
        wide = part.pivot_table(index="seed", columns="budget", values="value")
        have = [b for b in budgets if b in wide.columns]
        steps = []
        for a, b in pairwise(have):
            d = (wide[b] - wide[a]).dropna()
            steps.append(f"{d.mean():+.3f} ({int((d < 0).sum())}↓ {int((d > 0).sum())}↑)")
        lines.append([scen, *[f"{wide[b].mean():.3f}" for b in have], *steps])
    header = ["scenario", *budgets, *[f"{a} → {b}" for a, b in pairwise(budgets)]]
    return (f"As labels are added (`{spec}`; each budget's labeled samples hold the previous one's): mean recall, "
            "and each step's mean change over the seeds with the seeds where it fell (↓) or rose (↑).\n\n"
            + _md(header, lines))


def real_part(args, cache) -> str:
    rows = sweep_real(args, cache)
    _tsv(args.out, "real", rows)
    if not rows:
        return ""
    return (f"Real sets: mean linear-SVM accuracy on the top {', '.join(map(str, SIZES))} features, "
            f"{args.real_per_class} labels per class, {args.reps} stratified 2/3 - 1/3 splits; **bold** = best, "
            "▼ = significantly behind the best (corrected resampled t-test, p < 0.05).\n\n"
            + real_tables(rows, args.real_methods))


def _tsv(out, part, rows):
    if out:
        import pandas as pd

        pd.DataFrame(rows).to_csv(f"{out}.{part}.tsv", sep="\t", index=False)


if __name__ == "__main__":
    sys.exit(main())
