"""Command line: ``ssfs methods`` lists the registered methods; ``ssfs rank`` ranks the
features of one data file with one method, without Snakemake.

    ssfs rank data.csv --label-column class --method cls --labeled-per-class 3 -o ranking.tsv
    ssfs rank cells.h5ad --label-key cell_type --method laplacian --param k=15 -o ranking.tsv
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from .errors import SSFSError


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


def cmd_rank(args) -> int:
    from .constraints import Constraints
    from .experiment.splits import draw_labeled
    from .io import prepare_dataset
    from .io.atomic import write_tsv
    from .ranking import ranking_table
    from .registry import check_params, get_method
    from .runner import run_method

    params = check_params(get_method(args.method), _parse_params(args.param))  # before reading data
    if args.output != "-":
        from pathlib import Path

        folder = Path(args.output).parent
        if not folder.is_dir():
            raise SSFSError(f"output folder {str(folder)!r} of -o {args.output} does not exist; create it first")
    entry = {"path": args.input}
    for key in ("label_column", "labels_file", "label_key", "orientation", "format", "normalize", "geo_characteristic"):
        val = getattr(args, key)
        if val is not None:
            entry[key] = val
    adata = prepare_dataset("input", entry, ".")
    X = adata.X
    classes, y = np.unique(adata.obs["label"].astype(str).to_numpy(), return_inverse=True)
    rng = np.random.default_rng(args.seed)
    if args.labeled_per_class == "all":
        yl = y
    else:
        lab = draw_labeled(y, np.arange(y.size), int(args.labeled_per_class), rng, dataset=args.input,
                           class_names=classes)
        yl = np.full(y.size, -1)
        yl[lab] = y[lab]
    cons = Constraints.from_tsv(args.constraints) if args.constraints else None
    ranked = run_method(args.method, X, yl, cons, rng=rng, **params)
    if ranked.kind == "extraction":
        raise SSFSError(f"{args.method!r} extracts components; it does not rank features")
    table = ranking_table(adata.var_names, ranked.scores, ranked.order,
                          selected_only=ranked.result.selected is not None)
    if ranked.n_tied and ranked.result.selected is None:
        print(f"ssfs: note: {ranked.n_tied} of {ranked.ties.size} features share their score with another "
              f"(largest group: {int(ranked.ties.max())}); ties are broken by variance, then a seeded "
              "permutation; the 'ties' column gives each feature's group size", file=sys.stderr)
    if args.output == "-":
        table.to_csv(sys.stdout, sep="\t", index=False)
    else:
        write_tsv(table, args.output)
        print(json.dumps({"method": args.method, "n_features": int(X.shape[1]), "output": args.output}))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ssfs", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("methods", help="list the registered methods")
    m.add_argument("-v", "--verbose", action="store_true", help="also show parameters and defaults")
    m.set_defaults(func=cmd_methods)
    r = sub.add_parser("rank", help="rank the features of a data file")
    r.add_argument("input", help="data file (.h5ad, .csv, .tsv, .arff, .mat, GEO series matrix)")
    r.add_argument("--method", default="cls")
    r.add_argument("--param", action="append", metavar="NAME=VALUE", help="method parameter (repeatable)")
    r.add_argument("--labeled-per-class", default=3, type=_labeled_per_class, help="labels kept per class (the rest hidden), or 'all'")
    r.add_argument("--constraints", help="TSV of pairwise constraints (columns i, j, kind = ML|CL)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("-o", "--output", default="-", help="output TSV (default: standard output)")
    for opt in ("label-column", "labels-file", "label-key", "orientation", "format", "normalize",
                "geo-characteristic"):
        r.add_argument(f"--{opt}", help="as the dataset config key of the same name (config/README.md)")
    r.set_defaults(func=cmd_rank)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except SSFSError as e:
        print(f"ssfs: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
