"""Command line: ``ssfs methods`` lists the registered methods; ``ssfs rank`` ranks the
features of one data file with one method, without Snakemake.

    ssfs rank data.tsv --labels-file labels.tsv --method cls -o ranking.tsv
    ssfs rank data.csv --method laplacian                      # label-free: no labels needed
    ssfs rank cells.h5ad --label-key cell_type --method cls --param k=15 -o ranked.h5ad
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from .errors import SSFSError

RANK_LABELS_HELP = """\
Labels are used as given: a blank or NA label cell (NaN in an h5ad obs column) is an
unlabeled sample, and so is any value given with --unlabeled-value (repeatable, e.g.
--unlabeled-value unknown --unlabeled-value -1). --labeled-per-class N hides labels
(keeps N random labeled samples per class) only when asked. Label-free methods
(variance, laplacian, pca, scanpy_hvg, ...) need no labels. --constraints adds
must-link / cannot-link pairs by sample id (columns sample_a, sample_b, kind = ML | CL).
"""


def _parse_params(items) -> dict:
    """``--param NAME=VALUE`` items as a dict; values read as YAML, numbers in any float
    spelling (``1e3``); types and ranges are checked against the method's signature by
    :func:`ssfs.registry.check_params` (one line naming method, parameter, expected, got)."""
    from .params import parse_text

    out = {}
    for item in items or []:
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise SSFSError(f"--param expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = parse_text(v)
    return out


def _labeled_per_class(text: str):
    """``--labeled-per-class``: a positive integer or 'all' (argparse prints the error)."""
    if text == "all":
        return text
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'all', got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'all', got {text!r}")
    return n


def cmd_methods(args) -> int:
    from .registry import get_method, list_methods

    for name in list_methods():
        spec = get_method(name)
        params = ", ".join(f"{k}={v!r}" for k, v in spec.defaults.items() if k != "graph")
        print(f"{name:20s} {spec.kind:10s} {spec.direction:6s} {spec.description}")
        if args.verbose and params:
            print(f"{'':20s} params: {params}")
        if args.verbose and spec.members is not None:
            print(f"{'':20s} splittable into member jobs (execution.member_chunks)")
    return 0


def _rank_constraints(path, y, names):
    """Constraints of ``ssfs rank``: those of the given labels (all pairs) plus the file's
    (by sample id: sample_a, sample_b, kind; or the workflow's i, j, kind indices)."""
    import pandas as pd

    from .constraints import Constraints, check_consistent, read_sample_constraints

    derived = Constraints.from_labels(y)
    if path is None:
        return None if not len(derived) else derived
    try:
        head = pd.read_csv(path, sep=None, engine="python", nrows=0).columns
    except Exception:  # noqa: BLE001 - read_sample_constraints gives the one-line message
        head = []
    if "i" in head and "j" in head and "sample_a" not in head:
        user = Constraints.from_tsv(path)
        user.validate(len(names))
    else:
        user = read_sample_constraints(path, names, where="--constraints")
    both = Constraints(np.vstack([derived.ml, user.ml]), np.vstack([derived.cl, user.cl]))
    check_consistent(both, names, where=f"--constraints {path} with the labels")
    return both


def cmd_rank(args) -> int:
    from pathlib import Path

    from .experiment.splits import draw_labeled
    from .io import prepare_dataset
    from .io.atomic import write_tsv
    from .io.h5ad import prepared_labels
    from .labels import class_counts
    from .ranking import ranking_table
    from .registry import check_params, get_method
    from .runner import run_method

    params = check_params(get_method(args.method), _parse_params(args.param))  # before reading data
    if args.output != "-":
        folder = Path(args.output).parent
        if not folder.is_dir():
            raise SSFSError(f"output folder {str(folder)!r} of -o {args.output} does not exist; create it first")
    name = Path(args.input).name
    entry = {"path": args.input}
    for key in ("label_column", "labels_file", "label_key", "orientation", "format", "normalize", "geo_characteristic"):
        val = getattr(args, key)
        if val is not None:
            entry[key] = val
    if args.unlabeled_value:
        entry["unlabeled_values"] = list(args.unlabeled_value)
    adata = prepare_dataset(name, entry, ".")
    X = adata.X
    y, classes = prepared_labels(adata.obs["label"])
    rng = np.random.default_rng(args.seed)
    if args.labeled_per_class not in (None, "all"):  # an experiment: hide labels, keep N per class
        lab = draw_labeled(y, np.flatnonzero(y >= 0), int(args.labeled_per_class), rng, dataset=name,
                           class_names=classes)
        hidden = np.full(y.size, -1)
        hidden[lab] = y[lab]
        y = hidden
    cons = _rank_constraints(args.constraints, y, np.asarray(adata.obs_names))
    ranked = run_method(args.method, X, y, cons, rng=rng, **params)
    if ranked.kind == "extraction":
        raise SSFSError(f"{args.method!r} extracts components; it does not rank features")
    if ranked.n_tied and ranked.result.selected is None:
        print(f"ssfs: note: {ranked.n_tied} of {ranked.ties.size} features share their score with another "
              f"(largest group: {int(ranked.ties.max())}); ties are broken by variance, then a seeded "
              "permutation; the 'ties' column gives each feature's group size", file=sys.stderr)
    info = {"method": args.method, "n_features": int(X.shape[1]), "n_labeled": class_counts(y, classes),
            "n_unlabeled": int((y < 0).sum()), "output": args.output}
    if args.output.endswith(".h5ad"):
        _write_h5ad(args, adata, ranked, info, params)
    else:
        table = ranking_table(adata.var_names, ranked.scores, ranked.order,
                              selected_only=ranked.result.selected is not None)
        if args.output == "-":
            table.to_csv(sys.stdout, sep="\t", index=False)
            return 0
        write_tsv(table, args.output)
    print(json.dumps(info))
    return 0


def _write_h5ad(args, prepared, ranked, info: dict, params: dict) -> None:
    """``-o x.h5ad``: the input AnnData (h5ad input; else the prepared one) with
    ``var[f"{method}_score"]``, ``var[f"{method}_rank"]`` and ``uns[method]``, as
    :func:`ssfs.tl.rank_features` writes them."""
    import anndata

    from .io import write_prepared
    from .tl import store

    adata, idx = prepared, None
    if str(args.input).endswith(".h5ad"):
        adata = anndata.read_h5ad(args.input)
        idx = adata.var_names.get_indexer(prepared.var_names)
    store(adata, args.method, ranked, idx)
    uns = {k: v for k, v in info.items() if k != "output"}
    uns["params"] = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in params.items()}
    uns["random_state"] = int(args.seed)
    adata.uns[args.method] = uns
    write_prepared(adata, args.output)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ssfs", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("methods", help="list the registered methods")
    m.add_argument("-v", "--verbose", action="store_true", help="also show parameters and defaults")
    m.set_defaults(func=cmd_methods)
    r = sub.add_parser(
        "rank", help="rank the features of a data file", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Rank the features of a data file with one method.\n\n" + RANK_LABELS_HELP)
    r.add_argument("input", help="data file (.h5ad, .csv, .tsv, .arff, .mat, GEO series matrix)")
    r.add_argument("--method", default="cls")
    r.add_argument("--param", action="append", metavar="NAME=VALUE", help="method parameter (repeatable)")
    r.add_argument("--labeled-per-class", default=None, type=_labeled_per_class, metavar="N",
                   help="an experiment: keep N random labels per class and hide the others "
                        "(default: every given label is used)")
    r.add_argument("--unlabeled-value", action="append", metavar="VALUE",
                   help="label value meaning 'no label' (repeatable); blank and NA cells always mean unlabeled")
    r.add_argument("--constraints", metavar="TSV",
                   help="must-link / cannot-link pairs by sample id: columns sample_a, sample_b, kind (ML or CL); "
                        "added to the pairs of the given labels")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("-o", "--output", default="-",
                   help="output TSV (default: standard output), or .h5ad: the AnnData with var "
                        "<method>_score, <method>_rank and uns[<method>] (as ssfs.tl.rank_features)")
    for opt in ("label-column", "labels-file", "label-key", "orientation", "format", "normalize",
                "geo-characteristic"):
        r.add_argument(f"--{opt}", help="as the dataset config key of the same name (config/README.md)")
    r.set_defaults(func=cmd_rank)
    return p


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"ssfs: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    import warnings

    args = build_parser().parse_args(argv)
    warnings.showwarning = _one_line_warning
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except SSFSError as e:
        print(f"ssfs: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
