"""Command line: ``ssfs methods`` lists the registered methods; ``ssfs rank`` ranks the
features of one data file with one method; ``ssfs select`` gives the stable consensus list of
several methods over resamples (the workflow's selection mode), all without Snakemake.

    ssfs rank data.tsv --labels-file labels.tsv --method cls -o ranking.tsv
    ssfs rank data.csv --method laplacian                      # label-free: no labels needed
    ssfs rank cells.h5ad --label-key cell_type --method cls --param k=15 -o ranked.h5ad
    ssfs select cells.h5ad --label-key cell_type -o selection/   # --methods auto: propagate on counts
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

from . import __version__
from ._docs import cli_help, plain
from ._outputs import check_destination, os_cause, output_error
from ._progress import enable_bar, fmt_seconds
from .constraints import Constraints, check_consistent, read_sample_constraints
from .errors import SSFSError
from .experiment.selection_defaults import LABELED, SELECTION_DEFAULTS
from .labels import Labels, class_counts, encode_labels
from .params import describe, parse_text
from .ranking import ranking_table
from .registry import PIP_NAMES, check_params, get_method, list_methods
from .runner import run_method, within_batches
from .workflow.scripting import configure_logging

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
    out = {}
    for item in items or []:
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise SSFSError(f"--param expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = parse_text(v)
    return out


def _int_or_word(text: str, minimum: int, words: dict, expected: str):
    """An integer >= ``minimum``, or one of ``words`` (lower case -> value); else the
    argparse error ``expected ..., got ...``."""
    if text.lower() in words:
        return words[text.lower()]
    try:
        n = int(text)
    except ValueError:
        n = minimum - 1
    if n < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return n


def _seed(text: str) -> int:
    """``--seed``: an integer >= 0 (argparse prints the error)."""
    return _int_or_word(text, 0, {}, "an integer >= 0")


def _labeled_per_class(text: str):
    """``--labeled-per-class``: a positive integer or 'all' (argparse prints the error)."""
    return _int_or_word(text, 1, {"all": "all"}, "a positive integer or 'all'")


METHOD_COLUMNS = ("name", "kind", "needs", "direction", "splittable", "invariant to", "parameters (defaults)")
#: leading columns of the text table padded to their width (the last ones are long)
PADDED = 6


def method_rows(names=None) -> list[dict]:
    """One summary per registered method (:meth:`ssfs.registry.MethodSpec.summary`), or per method
    of ``names`` (an unknown name: MethodError naming the known ones)."""
    return [get_method(name).summary() for name in names or list_methods()]


def _cells(row: dict, code: str = "") -> list[str]:
    """Table cells of one method; ``code`` wraps names and values (a backtick in Markdown)."""
    needs = ", ".join(n.replace("_", "-") for n in row["needs"]) or "-"
    if row["requires"]:
        needs += f" (package {PIP_NAMES.get(row['requires'], (row['requires'],))[0]})"
    params = ", ".join(f"{code}{k}={v!r}{code}" for k, v in row["parameters"].items()) or "-"
    return [f"{code}{row['name']}{code}", row["kind"], needs, f"{row['direction']} is better",
            "yes" if row["splittable"] else "no", " ".join(row["invariances"]) or "-", params]


def methods_markdown(rows=None) -> str:
    """The methods table in Markdown (docs/methods.md holds this text)."""
    lines = ["| " + " | ".join(METHOD_COLUMNS) + " |", "|" + "---|" * len(METHOD_COLUMNS)]
    lines += ["| " + " | ".join(_cells(r, "`")) + " |" for r in rows or method_rows()]
    return "\n".join(lines) + "\n"


def method_help(name: str, width: int = 100) -> str:
    """What ``ssfs methods -v`` prints of one method: what it needs and returns, its description,
    and each parameter's default, type and meaning: the text of the Parameters section of its
    docstring (:attr:`ssfs.registry.MethodSpec.param_text`), without reST markup."""
    spec = get_method(name)
    row = spec.summary()
    _, kind, needs, direction, splittable, invariant, _ = _cells(row)
    lines = [f"{name}: {kind}, {direction}; needs: {needs}; splittable: {splittable}; invariant to: {invariant}",
             *textwrap.wrap(plain(row["description"]), width, initial_indent="  ", subsequent_indent="  ")]
    for param, text in spec.param_text.items():
        lines.append(f"  {param} = {spec.defaults[param]!r}  ({describe(spec.types[param])})")
        lines += textwrap.wrap(plain(text), width, initial_indent="      ", subsequent_indent="      ",
                               break_on_hyphens=False)
    if not spec.param_text:
        lines.append("  (no parameters)")
    return "\n".join(lines) + "\n"


def cmd_methods(args) -> int:
    _stdout(lambda: print(methods_text(args), end=""))
    return 0


def methods_text(args) -> str:
    """What ``ssfs methods`` prints (a text table, ``--markdown`` or ``--json``)."""
    rows = method_rows(args.names)
    if args.verbose and not (args.json or args.markdown):
        return "\n".join(method_help(r["name"]) for r in rows)
    if args.json:
        return json.dumps(rows, indent=1, default=repr) + "\n"
    if args.markdown:
        return methods_markdown(rows)
    cols = list(METHOD_COLUMNS)
    table = [_cells(r) for r in rows]
    width = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols[:PADDED])]
    lines = []
    for cells in [cols, ["-" * w for w in width] + ["-" * 21] * (len(cols) - PADDED), *table]:
        head = "  ".join(c.ljust(w) for c, w in zip(cells[:PADDED], width, strict=True))
        lines.append(head + "  " + "  ".join(cells[PADDED:]) + "\n")
    lines.append("\nneeds: labels = some labeled samples; constraints = must-link or cannot-link pairs "
                 "(derived from the\nlabels when none are given); cannot-link = at least one cannot-link pair. "
                 "splittable: the ensemble can\nbe spread over jobs (execution.member_chunks). invariant to "
                 "(docs/invariances.md): samples / features =\ntheir order; copies = an exact copy of a feature "
                 "scores exactly as the feature; scale / shift = each\nfeature's; unit = a common scale of X. "
                 "--markdown / --json for other formats.\n")
    return "".join(lines)


def _rank_output(args):
    """stderr for ``ssfs rank``: ssfs's messages at ``--log-level``, progress as a tqdm bar on a
    terminal (else a line every 30 s) unless ``--no-progress``. Returns the ssfs logger."""
    configure_logging(args.log_level, capture_warnings=False)
    if args.no_progress:
        logging.getLogger("ssfs.progress").setLevel(logging.WARNING)
    else:
        enable_bar()
    return logging.getLogger("ssfs")


def _rank_constraints(path, y, names):
    """Constraints of ``ssfs rank``: those of the given labels (all pairs) plus the file's
    (by sample id: sample_a, sample_b, kind; or the workflow's i, j, kind indices)."""
    import pandas as pd

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


def _read_input(args, log):
    """(prepared AnnData, labels with -1 = unlabeled, class names, the seeded generator, every
    sample's batch or None) of the input file, read with the dataset config keys given as options;
    ``--labeled-per-class`` hides labels (an experiment)."""
    # lazy: the readers load pandas and anndata (about 0.7 s), which `ssfs methods` and --help do not need
    from .experiment.splits import draw_labeled
    from .io import prepare_dataset, prepared_batch

    t0 = time.perf_counter()
    name = Path(args.input).name
    entry = {"path": args.input}
    for key in ("label_column", "labels_file", "label_key", "orientation", "format", "normalize", "geo_characteristic",
                "layer", "batch_key"):
        val = getattr(args, key)
        if val is not None:
            entry[key] = val
    if args.use_raw:
        entry["use_raw"] = True
    if args.index_column != "auto":
        entry["index_col"] = args.index_column
    if args.unlabeled_value:
        entry["unlabeled_values"] = list(args.unlabeled_value)
    adata = prepare_dataset(name, entry, ".")
    log.debug("ssfs %s: read %s: %d samples x %d features in %s", args.cmd, args.input, *adata.X.shape,
              fmt_seconds(time.perf_counter() - t0))
    y, classes = encode_labels(adata.obs["label"])
    rng = np.random.default_rng(args.seed)
    if args.labeled_per_class not in (None, "all"):  # an experiment: hide labels, keep N per class
        if not (y >= 0).any():
            raise SSFSError(f"--labeled-per-class {args.labeled_per_class}: {args.input} has no labels to keep "
                            "(give --label-column, --labels-file or --label-key)")
        lab = draw_labeled(y, np.flatnonzero(y >= 0), int(args.labeled_per_class), rng, dataset=name,
                           class_names=classes)
        hidden = np.full(y.size, -1)
        hidden[lab] = y[lab]
        y = hidden
    return adata, y, classes, rng, prepared_batch(adata)


def _check_output_file(output: str) -> None:
    """``-o`` of ``ssfs rank``, checked before any data is read: its folder exists, and it is
    not a directory or a device (:func:`ssfs._outputs.check_destination`; a link is followed)."""
    target = check_destination(output, what="-o")
    folder = target.parent
    if not folder.is_dir():
        kind = "is not a folder" if folder.exists() else "does not exist"
        raise SSFSError(f"output folder {str(folder)!r} of -o {output} {kind}; create it first")


def _check_output_folder(output: str) -> None:
    """``-o`` of ``ssfs select``: a folder (created), not an existing file or device."""
    import os
    from pathlib import Path

    out = Path(output)
    if out.exists() and not out.is_dir():
        raise SSFSError(f"-o {output}: it exists and is not a folder; ssfs select writes a folder of results "
                        "(consensus.tsv, summary.json, stability_path.png)")
    if not out.exists():
        parent = Path(os.path.abspath(out)).parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir():
            raise SSFSError(f"-o {output}: cannot create the folder: {parent} is a file, not a folder")


class _StdoutError(SSFSError):
    """Standard output failed (disk full, closed pipe ...)."""


def _stdout(write) -> None:
    """Call ``write()`` (which writes to standard output) and flush; an operating-system
    error becomes one line naming standard output and the cause."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise _StdoutError(f"cannot write to standard output: {os_cause(e)}") from None


def cmd_rank(args) -> int:
    from .io.atomic import write_tsv  # lazy: loads pandas and anndata (about 0.7 s)

    params = check_params(get_method(args.method), _parse_params(args.param))  # before reading data
    if args.output != "-":
        _check_output_file(args.output)
    log = _rank_output(args)
    adata, y, classes, rng, batch = _read_input(args, log)
    X = adata.X
    cons = _rank_constraints(args.constraints, y, np.asarray(adata.obs_names))
    t0 = time.perf_counter()
    X, call = within_batches(args.method, X, params, batch)
    ranked = run_method(args.method, X, Labels(y, classes), cons, rng=rng, **call)
    log.debug("ssfs rank: %s done in %s", args.method, fmt_seconds(time.perf_counter() - t0))
    if ranked.kind == "extraction":
        raise SSFSError(f"{args.method!r} extracts components; it does not rank features")
    if ranked.n_tied and ranked.result.selected is None:
        print(f"ssfs: note: {ranked.n_tied} of {ranked.ties.size} features share their score with another "
              f"(largest group: {int(ranked.ties.max())}); ties are broken by variance (over the squared "
              "range for a scale-free method), then a seeded permutation; the 'ties' column gives each feature's "
              "group size", file=sys.stderr)
    info = {"method": args.method, "n_features": int(X.shape[1]), "n_labeled": class_counts(y, classes),
            "n_unlabeled": int((y < 0).sum()), "output": args.output,
            **({"batch_key": args.batch_key, "n_batches": int(np.unique(batch).size)} if batch is not None else {}),
            **({"fit": fit} if (fit := ranked.result.fit_summary()) else {}),
            **({"outlying_samples": named} if (named := ranked.result.outlying(adata.obs_names)) else {})}
    if args.output.endswith(".h5ad"):
        info.update(_populations(ranked, adata.var_names))
        _write_h5ad(args, adata, ranked, info, params)
    else:
        table = ranking_table(adata.var_names, ranked.scores, ranked.order,
                              selected_only=ranked.result.selected is not None)
        if args.output == "-":
            _stdout(lambda: table.to_csv(sys.stdout, sep="\t", index=False))
            return 0
        write_tsv(table, args.output, what="-o")
        info.update(_write_markers(ranked, adata.var_names, args.output, write_tsv))
    _stdout(lambda: print(json.dumps(info)))
    return 0


def markers_path(output: str) -> Path:
    """Where ``ssfs rank -o ranking.tsv`` writes the per-class markers: ``ranking.markers.tsv``."""
    out = Path(output)
    return out.with_name(f"{out.stem}.markers.tsv")


def _write_markers(ranked, var_names, output: str, write_tsv) -> dict:
    """The per-class markers of a method that gives them (``propagate``) next to the ranking, one
    row per (group, feature) best first (:meth:`ssfs.ClassStatistics.to_frame`); {} otherwise."""
    stats = ranked.result.extra.get("class_statistics")
    if stats is None:
        return {}
    path = markers_path(output)
    frame = stats.to_frame(np.asarray(var_names)).rename(columns={"names": "feature"})
    frame.insert(1, "rank", frame.groupby("group", observed=True).cumcount() + 1)
    write_tsv(frame, path)
    groups = ranked.result.extra["groups"]
    sizes = np.bincount(groups, minlength=len(ranked.result.extra["group_names"]))
    info = {"markers": str(path), "groups": dict(zip(ranked.result.extra["group_names"], map(int, sizes), strict=True))}
    return info | _populations(ranked, var_names)


def _populations(ranked, var_names, shown: int = 10) -> dict:
    """{"populations": ...}: each population the data separate that no labeled class's group matches
    (``propagate``), its samples and its best ``shown`` features in ranking order; {} when none."""
    extra = ranked.result.extra
    if not extra.get("unseen_sizes"):
        return {}
    order = np.asarray(ranked.order)
    features = [str(name) for name in np.asarray(var_names)[order[np.asarray(extra["unseen"])[order]][:shown]]]
    sizes = {f"population {j + 1}": int(v) for j, v in enumerate(extra["unseen_sizes"])}
    return {"populations": {"samples": sizes, "features": features}}


def _select_settings(args) -> tuple[dict, dict]:
    """(method -> its parameters, the selection options with ``methods``: the names or "auto")
    of ``ssfs select``, checked before any data is read (one line naming the option)."""
    from .experiment.stable_selection import method_settings, selection_options  # lazy: loads pandas

    labels = [m.strip() for m in args.methods.split(",") if m.strip()]
    labels = "auto" if labels == ["auto"] else labels
    params: dict = {}
    for item in args.param or []:
        head, eq, value = item.partition("=")
        method, dot, name = head.partition(".")
        if not (eq and dot and name.strip() and method.strip()):
            raise SSFSError(f"--param expects METHOD.NAME=VALUE, got {item!r}")
        params.setdefault(method.strip(), {}).update(_parse_params([f"{name}={value}"]))
    sel = selection_options(resamples=args.resamples, top=args.top, threshold=args.threshold,
                            max_false=args.max_false, assumption=args.assumption, scheme=args.scheme,
                            aggregation=args.aggregation, labeled=args.labeled, where="--")
    method_settings(labels, params)  # checked before the data is read (auto: chosen on it, methods_for)
    return params, {**sel, "methods": labels}


def _top(text: str):
    """``--top``: 'auto' or an integer (checked with the other options: one line naming it)."""
    return _int_or_word(text, -(2**62), {"auto": "auto"}, "'auto' or an integer")


def cmd_select(args) -> int:
    # lazy: pandas and anndata (about 0.7 s), which --help does not need
    from .experiment.stable_selection import methods_for, stable_selection
    from .io.atomic import write_json, write_tsv
    from .io.h5ad import gene_symbols
    from .report.selection import draw_selection_figures

    params, sel = _select_settings(args)  # before reading data
    _check_output_folder(args.output)
    log = _rank_output(args)
    adata, y, classes, _, batch = _read_input(args, log)
    cons = _rank_constraints(args.constraints, y, np.asarray(adata.obs_names))
    if cons is None:
        cons = Constraints.empty()
    methods, rule = methods_for(sel["methods"], adata.X, params, y)
    res = stable_selection(adata.X, y, cons, methods, sel, seed=args.seed, dataset=args.name or Path(args.input).name,
                           names=np.asarray(adata.var_names), classes=classes, symbols=gene_symbols(adata),
                           batch=batch, rule=rule, samples=np.asarray(adata.obs_names))
    out = Path(args.output)
    files = {k: out / f for k, f in SELECT_FILES.items()}
    inputs = {k: files[k] for k in ("summary", "path", "consensus")}
    _write_all(out, [lambda p: write_tsv(res.table, p), lambda p: write_json(res.summary, p),
                     lambda p: write_tsv(res.path, p), lambda p: draw_selection_figures(**inputs, figure=p),
                     lambda p: draw_selection_figures(**inputs, dotplot=p)], list(SELECT_FILES.values()))
    if res.summary["note"]:
        print(f"ssfs select: {res.summary['note']}", file=sys.stderr)
    if args.json:
        _stdout(lambda: print(json.dumps({
            "n_selected": res.summary["n_selected"], "features": res.summary["features"],
            "stability": res.summary["stability"]["value"], "top": res.summary["top"],
            "error_bound": res.summary["error_bound"]["bound"], "verdict": res.summary["verdict"],
            "output": str(out)})))
    else:
        _stdout(lambda: print(selection_text(res.table, res.summary, out)))
    return 0


#: ``ssfs select``'s files in --output (the names the workflow writes)
SELECT_FILES = {"consensus": "consensus.tsv", "summary": "summary.json", "path": "stability_path.tsv",
                "figure": "stability_path.svg", "dotplot": "dotplot.svg"}


def selection_text(table, summary: dict, out: Path, max_rows: int = 25) -> str:
    """What ``ssfs select`` prints: the verdict, the selected features with the class each marks,
    and where the files are."""
    import textwrap

    lines = textwrap.wrap(summary["verdict"], 100) + [""]
    if summary.get("methods_rule"):
        lines += [f"({summary['methods_rule']}; --methods to choose)", ""]
    shown = table[table["selected"]].head(max_rows)
    cols = [c for c in ("feature", "symbol", "frequency", "marks", "direction", "log_fold_change") if c in shown]
    if len(shown):
        lines.append(shown[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        if summary["n_selected"] > max_rows:
            lines.append(f"... {summary['n_selected'] - max_rows} more in consensus.tsv")
        lines.append("")
    lines.append(f"Files in {out}/: consensus.tsv (every feature, the selected ones marked), summary.json, "
                 "stability_path.tsv/.svg, dotplot.svg (--json: one JSON line instead of this text)")
    return "\n".join(lines)


def _write_all(folder, writers, names) -> None:
    """Each ``writers[i](folder / names[i])`` (atomic); when one fails, the files this call
    already wrote are removed again, so the folder never holds part of a result."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error(folder, e, "-o") from None
    done = []
    try:
        for write, name in zip(writers, names, strict=True):
            write(folder / name)
            done.append(folder / name)
    except BaseException:
        for path in done:
            path.unlink(missing_ok=True)
        raise


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Every option's help shows its default (unless there is none); descriptions keep their line breaks."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


def _index_column(value: str):
    """``--index-column``: a column number, ``none`` when the file has no id column, or
    ``auto`` (column 0 unless it looks like data, see :func:`ssfs.io.delimited.check_id_column`)."""
    return _int_or_word(value, 0, {"none": None, "null": None, "-": None, "auto": "auto"},
                        "a column number >= 0 or 'none'")


def _write_h5ad(args, prepared, ranked, info: dict, params: dict) -> None:
    """``-o x.h5ad``: the input AnnData (h5ad input; else the prepared one) with
    ``var[f"{method}_score"]``, ``var[f"{method}_rank"]`` and ``uns[method]``, as
    :func:`ssfs.tl.rank_features` writes them."""
    import anndata

    # lazy: the h5ad writers load anndata (about 0.7 s)
    from .io import write_prepared
    from .tl._anndata import store
    from .tl._markers import store_markers

    adata = anndata.read_h5ad(args.input) if str(args.input).endswith(".h5ad") else prepared
    store(adata, args.method, ranked, prepared.var_names)
    store_markers(adata, args.method, ranked, prepared.var_names)
    uns = {k: v for k, v in info.items() if k != "output"}
    uns["params"] = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in params.items()}
    uns["random_state"] = int(args.seed)
    adata.uns[args.method] = uns
    write_prepared(adata, args.output, what="-o")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ssfs", description=__doc__, formatter_class=_Formatter)
    p.add_argument("--version", action="version", version=f"ssfs {__version__}")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="ssfs's messages on stderr (DEBUG also shows other libraries' INFO messages)")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="{methods,rank,select}")
    m = sub.add_parser("methods", help="list the registered methods", formatter_class=_Formatter,
                       description="The registered methods: what each needs, which way its score goes, "
                                   "whether it can be split over jobs, its parameters and their defaults.")
    m.add_argument("names", nargs="*", metavar="METHOD", help="only these methods (default: all)")
    m.add_argument("-v", "--verbose", action="store_true",
                   help="each method's description and parameters: default, type and meaning (as its docstring)")
    fmt = m.add_mutually_exclusive_group()
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table (as in docs/methods.md)")
    fmt.add_argument("--json", action="store_true", help="JSON: one object per method")
    m.set_defaults(func=cmd_methods)
    r = sub.add_parser(
        "rank", help="rank the features of a data file", formatter_class=_Formatter,
        description="Rank the features of a data file with one method (no Snakemake; a progress bar shows on a "
                    "terminal for long ensembles).\n\n" + RANK_LABELS_HELP)
    _add_input_arguments(r)
    r.add_argument("--method", default="propagate", help=cli_help("method"))
    r.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="method parameter (repeatable; `ssfs methods -v METHOD` describes them)")
    r.add_argument("-o", "--output", default="-",
                   help="output TSV ('-': standard output), or .h5ad: the AnnData with var "
                        "<method>_score, <method>_rank and uns[<method>] (as ssfs.tl.rank_features); methods "
                        "with per-class markers (propagate) add <output>.markers.tsv (TSV) or "
                        "uns[<method>_markers] and obs[<method>_group] (h5ad)")
    r.set_defaults(func=cmd_rank)
    _add_select_parser(sub)
    return p


def _add_input_arguments(r) -> None:
    """The data file and how to read its labels (shared by ``rank`` and ``select``)."""
    r.add_argument("input", help="data file (.h5ad, .csv, .tsv, .arff, .mat, GEO series matrix), or 10x Genomics "
                                 "output: a Cell Ranger matrix folder (matrix.mtx.gz, barcodes.tsv.gz, "
                                 "features.tsv.gz) or a feature-barcode .h5 (labels: --labels-file barcode,label "
                                 "listing the labeled cells)")
    r.add_argument("--labeled-per-class", default=None, type=_labeled_per_class, metavar="N",
                   help="an experiment: keep N random labels per class and hide the others "
                        "(default: every given label is used)")
    r.add_argument("--unlabeled-value", action="append", metavar="VALUE",
                   help=cli_help("unlabeled_values") + " Repeatable.")
    r.add_argument("--constraints", metavar="TSV",
                   help="must-link / cannot-link pairs by sample id: columns sample_a, sample_b, kind (ML or CL); "
                        "added to the pairs of the given labels")
    r.add_argument("--seed", type=_seed, default=0, help=cli_help("random_state"))
    r.add_argument("--index-column", type=_index_column, default="auto", metavar="N|none|auto",
                   help="CSV/TSV: column number of the row ids, 'none' when the file has none; 'auto': "
                        "column 0, refused when it looks like data")
    r.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    for opt in ("label-column", "labels-file", "label-key", "orientation", "format", "normalize",
                "geo-characteristic", "layer"):
        r.add_argument(f"--{opt}", help="as the dataset config key of the same name (config/README.md)")
    r.add_argument("--batch-key", metavar="COLUMN",
                   help="CSV/TSV column or h5ad obs column naming every sample's batch; methods with a batch "
                        "parameter (propagate) compare samples within batches")
    r.add_argument("--use-raw", action="store_true",
                   help="h5ad: read .raw.X (the file's X otherwise; ssfs.tl reads .raw when present, as scanpy)")


def _add_select_parser(sub) -> None:
    s = sub.add_parser(
        "select", help="the stable feature list of several methods (selection mode)", formatter_class=_Formatter,
        description="Every method on the data and on resamples of it (complementary pairs of half-samples by "
                    "default), rank aggregation across methods, and the features selected in at least "
                    "--threshold of the resamples, with their stability and an error bound: the workflow's "
                    "selection mode (config/README.md) for one file. Prints the answer in words; writes consensus.tsv, "
                    "summary.json, stability_path.tsv/.svg and dotplot.svg to --output.\n\n" + RANK_LABELS_HELP)
    _add_input_arguments(s)
    s.add_argument("--methods", default="auto",
                   help="comma-separated registered methods, or auto: propagate alone on count-like data (single "
                        "cells, at least 300) and on labeled data (at least 50 samples, partly or fully labeled), "
                        "else the committee propagate,laplacian,fisher,cls "
                        "(docs/labels_that_count.md, Selection mode); methods that cannot run, e.g. fisher without 2 "
                        "labels per class, are left out and named")
    s.add_argument("--param", action="append", metavar="METHOD.NAME=VALUE",
                   help="a parameter of one of the methods, e.g. cls.k=15 (repeatable)")
    d = SELECTION_DEFAULTS
    s.add_argument("--resamples", type=int, default=d["resamples"], help="number of resamples (cpss: even)")
    s.add_argument("--top", type=_top, default=d["top"], metavar="auto|Q",
                   help="q: features selected per resample; auto: the largest q whose error bound at --threshold "
                        "is at most --max-false")
    s.add_argument("--threshold", type=float, default=d["threshold"],
                   help="selection frequency at or above which a feature is selected (as the workflow's default)")
    s.add_argument("--max-false", type=float, default=d["max_false"],
                   help="expected number of false selections that --top auto allows")
    s.add_argument("--assumption", choices=["r_concave", "unimodal", "none"], default=d["assumption"],
                   help="the error bound that chooses --top auto and that the verdict states (Shah & Samworth 2013)")
    s.add_argument("--scheme", choices=["cpss", "bootstrap"], default=d["scheme"], help="resampling scheme")
    s.add_argument("--labeled", choices=LABELED, default=d["labeled"], help=cli_help("labeled"))
    s.add_argument("--aggregation", choices=["stability_weighted", "mean_rank", "rank_product", "median_rank"],
                   default=d["aggregation"],
                   help="rank aggregation across methods (stability_weighted: each method weighted by its own "
                        "stability over the resamples)")
    s.add_argument("--name", help="dataset name in summary.json and in the seed derivation (default: the file "
                                  "name; the workflow's dataset key gives its byte-identical list)")
    s.add_argument("-o", "--output", default="selection", help="output folder (created)")
    s.add_argument("--json", action="store_true", help="print one JSON line (n_selected, features, stability, "
                                                       "top, error_bound, verdict, output) instead of the text")
    s.set_defaults(func=cmd_select)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"ssfs: warning: {message}", file=sys.stderr)


def _detach_stdout() -> None:
    """Point standard output at the null device, so the interpreter's last flush at exit does
    not fail again (a closed pipe, a full disk) and print a traceback."""
    import contextlib
    import os

    with contextlib.suppress(OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv=None) -> int:
    """The ``ssfs`` command: every failure ends as one ``ssfs: error: ...`` line and exit
    status 1 (2: a usage error, from argparse), never a traceback (docs/errors.md)."""
    import warnings

    args = build_parser().parse_args(argv)
    warnings.showwarning = _one_line_warning
    try:
        return _stdout_flushed(args.func(args))
    except BrokenPipeError:  # e.g. piped into `head`
        _detach_stdout()
        return 0
    except SSFSError as e:
        if isinstance(e, _StdoutError):
            _detach_stdout()
        print(f"ssfs: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # an operating-system error no reader or writer named more precisely
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        print(f"ssfs: error: {where}{os_cause(e)}", file=sys.stderr)
        return 1
    except MemoryError:
        print("ssfs: error: out of memory; use a machine with more memory, fewer features (top_variable) or a "
              "sparse matrix", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ssfs: interrupted", file=sys.stderr)
        return 130


def _stdout_flushed(rc: int) -> int:
    _stdout(lambda: None)
    return rc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
