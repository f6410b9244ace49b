"""Loading and validating the workflow configuration.

The JSON schema (``workflow/schemas/config.schema.yaml``) checks structure and
types and refuses unknown keys; this module fills the schema's defaults, turns
schema errors into one-line messages naming the offending key, checks method
names and parameters against the registry, and refuses what the config alone shows
cannot run. ``sweeps`` expand into variants in :mod:`ssfs.experiment.variants`.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import jsonschema
import yaml

from ..errors import ConfigError, MethodError
from ..experiment.selection_defaults import AUTO, COMMITTEE, labeled_for
from ..io.builtin import BUILTINS
from ..io.prepare import has_label_source
from ..params import json_schema
from ..registry import check_params, get_method, list_methods

#: folders of results/ that are not datasets: a dataset of that name would mix its files with them
RESERVED_DATASET_NAMES = ("tables", "figures", "logs", "report")
#: published tables shipped with the repository (``report.paper``)
#: the published tables (package data: there inside and outside a checkout)
PAPERS_DIR = Path(__file__).resolve().parents[1] / "report" / "published"


def _fill_defaults(node, schema):
    """Fill ``default`` values of object properties, recursively (like Snakemake's validate)."""
    if not isinstance(node, dict) or schema.get("type") not in ("object", ["object", "null"]):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in node and "default" in sub:
            node[key] = copy.deepcopy(sub["default"])
        if key in node:
            _fill_defaults(node[key], sub)


def _key_path(err) -> str:
    return ".".join(str(p) for p in err.absolute_path) or "<top level>"


def _message(err) -> str:
    where = _key_path(err)
    if err.validator == "additionalProperties":
        return f"config: unknown key(s) under {where}: {err.message.split('(')[-1].rstrip(')')}"
    if "propertyNames" in err.schema_path or err.validator == "propertyNames":
        return (f"config: name {err.instance!r} under {where} is not allowed: use letters, digits, "
                "'_', '.', '+', '-' (no spaces, slashes or leading dots)")
    if err.validator == "required":
        return f"config: {where}: {err.message}"
    return f"config key {where}: {err.message}"


def load_schema(path) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


def validate_config(config: dict, schema: dict, papers_dir=None) -> dict:  # noqa: C901
    """Validated copy of ``config`` with defaults filled. Raises :class:`ConfigError`.
    ``papers_dir``: where ``report.paper`` tables live (default: the repository's
    ``ssfs/report/published``)."""
    if not isinstance(config, dict):
        raise ConfigError("config: the configuration must be a mapping of keys to values")
    cfg = copy.deepcopy(config)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(cfg), key=lambda e: (len(list(e.absolute_path)), str(e.message)))
    if errors:
        # the deepest, most specific error first (oneOf/allOf wrap the useful one)
        err = max(errors, key=lambda e: len(list(e.absolute_path)))
        if err.context:
            err = max(err.context, key=lambda e: len(list(e.absolute_path)))
        raise ConfigError(_message(err))
    _fill_defaults(cfg, schema)
    # dataset entries are passed to ssfs.io.prepare_dataset as written: it applies its
    # own defaults and refuses keys that do not apply to the entry's source/format
    cfg["methods"] = {label: method_entry(label, entry) for label, entry in cfg["methods"].items()}
    for label in cfg["datasets"]:
        if label.lower() in RESERVED_DATASET_NAMES:
            raise ConfigError(f"config: dataset name {label!r} is reserved: results/{label.lower()}/ holds the "
                              f"{'job logs' if label.lower() == 'logs' else 'aggregate ' + label.lower()}; "
                              f"rename the dataset (reserved: {', '.join(RESERVED_DATASET_NAMES)})")
    for label, entry in cfg["datasets"].items():  # unknown builtins stop the run here, not in prepare
        if entry.get("source") == "builtin" and entry.get("name") not in BUILTINS:
            raise ConfigError(
                f"config key datasets.{label}.name: unknown builtin {entry.get('name')!r}; "
                f"builtins: {', '.join(BUILTINS)}"
            )
    _check_label_free(cfg)
    sup = cfg["supervision"]
    if sup["protocol"] == "kfold" and sup["repetitions"] > sup["n_folds"]:
        raise ConfigError(
            f"config key supervision.repetitions: {sup['repetitions']} folds requested but n_folds is {sup['n_folds']}"
        )
    if "n_constraints" in cfg["sweeps"] and sup["constraints"]["mode"] != "random":
        raise ConfigError("config key sweeps.n_constraints needs supervision.constraints.mode: random")
    for label, n in cfg["execution"]["member_chunks"].items():
        key = f"config key execution.member_chunks.{label}"
        if label not in cfg["methods"]:
            raise ConfigError(f"{key}: {label!r} is not one of the configured methods")
        name = cfg["methods"][label]["method"]
        if n > 1 and get_method(name).members is None:
            ok = [m for m in list_methods() if get_method(m).members is not None]
            raise ConfigError(f"{key}: method {name!r} cannot be split into member chunks; "
                              f"splittable methods: {', '.join(ok)}")
    pdir = Path(papers_dir) if papers_dir is not None else PAPERS_DIR
    cc_paper = (cfg.get("constrained_clustering") or {}).get("paper")
    if cc_paper is not None and pdir.is_dir() and not (pdir / f"{cc_paper}.tsv").exists():
        raise ConfigError(f"config key constrained_clustering.paper: no published table {cc_paper!r} "
                          f"({pdir / (cc_paper + '.tsv')})")
    paper = cfg["report"].get("paper")
    if paper is not None and pdir.is_dir() and not (pdir / f"{paper}.tsv").exists():
        have = sorted(q.stem for q in pdir.glob("*.tsv"))  # the report layer is above this one
        raise ConfigError(f"config key report.paper: no published table {paper!r} ({pdir / (paper + '.tsv')}); "
                          f"available: {', '.join(have) or 'none'}")
    ctrl = cfg["report"]["control"]
    if ctrl is not None and ctrl not in cfg["methods"]:
        raise ConfigError(f"config key report.control: {ctrl!r} is not one of the configured methods")
    if "selection" in cfg:
        cfg["selection"]["methods"] = selection_methods(cfg)
    return cfg


#: keys whose presence asks for the benchmark when a ``selection`` section is given
BENCHMARK_KEYS = ("supervision", "evaluation", "sweeps")


def run_parts(config: dict) -> tuple[bool, bool]:
    """(benchmark, selection) to run for a *raw* config: the selection when it has a ``selection``
    section; the benchmark unless the config has ``selection`` and none of :data:`BENCHMARK_KEYS`."""
    selection = "selection" in config
    return (not selection or any(k in config for k in BENCHMARK_KEYS)), selection


def selection_methods(cfg: dict) -> list[str]:
    """The method labels of the selection mode: ``selection.methods`` or every configured method
    that ranks features (extraction methods such as pca build components, not feature lists)."""
    sel = cfg["selection"]
    key = "config key selection"
    if sel["scheme"] == "cpss" and sel["resamples"] % 2:
        raise ConfigError(f"{key}.resamples: {sel['resamples']} is odd; scheme cpss draws complementary pairs "
                          "(use an even number)")
    kept = sel.get("labeled_per_class")
    unknown = sorted(set(kept) - set(cfg["datasets"])) if isinstance(kept, dict) else []
    if unknown:
        raise ConfigError(f"{key}.labeled_per_class: {', '.join(map(repr, unknown))} is not one of the configured "
                          f"datasets ({', '.join(sorted(cfg['datasets']))})")
    if sel["methods"] is None:
        labels = [m for m in sorted(cfg["methods"]) if get_method(cfg["methods"][m]["method"]).kind != "extraction"]
    elif sel["methods"] == AUTO:  # the committee's configured labels; each job chooses on its data (methods_for)
        sel["auto"] = True
        labels = sorted((m for m in cfg["methods"] if cfg["methods"][m]["method"] in COMMITTEE),
                        key=lambda m: (COMMITTEE.index(cfg["methods"][m]["method"]), m))
        if not any(cfg["methods"][m]["method"] == "propagate" for m in labels):
            raise ConfigError(f"{key}.methods: auto chooses among {', '.join(COMMITTEE)} and needs propagate among "
                              "the configured methods")
    else:
        labels = list(sel["methods"])
        for m in labels:
            if m not in cfg["methods"]:
                raise ConfigError(f"{key}.methods: {m!r} is not one of the configured methods")
            if get_method(cfg["methods"][m]["method"]).kind == "extraction":
                raise ConfigError(f"{key}.methods: {m!r} builds components, not a feature ranking")
    if not labels:
        raise ConfigError(f"{key}: no configured method ranks features")
    sel["labeled"] = labeled_for(sel.get("labeled", "auto"),
                                 AUTO if sel.get("auto") else [cfg["methods"][m]["method"] for m in labels])
    return labels


def method_params_schema(name: str) -> dict:
    """JSON schema of a config entry of method ``name``, generated from the registry (each
    parameter's declared type and range, :func:`ssfs.params.json_schema`). The config is
    checked with :func:`ssfs.registry.check_params`, whose messages are clearer; this
    schema states the same contract for editors and other tools."""
    spec = get_method(name)
    props = {"method": {"const": name}}
    props.update({k: json_schema(alts) for k, alts in spec.types.items()})
    return {"type": ["object", "null"], "properties": props, "additionalProperties": False}


def _check_label_free(cfg: dict) -> None:
    """A dataset without any label source runs the label-free methods only: refuse the others
    before any job starts, naming them."""
    for name, entry in cfg["datasets"].items():
        if has_label_source(entry):
            continue
        needs = {"labels"} if entry.get("constraints_file") else {"labels", "constraints", "cannot_link"}
        needy = [label for label, m in cfg["methods"].items() if needs & get_method(m["method"]).needs]
        if needy:
            raise ConfigError(
                f"config key datasets.{name}: the dataset has no labels (no label_column / labels_file), "
                f"but method(s) {', '.join(needy)} need labels"
                + ("" if entry.get("constraints_file") else " or constraints (constraints_file)")
                + "; give them or run label-free methods only"
            )


_YAML11_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def yaml_number(value):
    """A number written without a decimal point in exponent form (``k: 1e9``) is text for
    YAML 1.1 (PyYAML, Snakemake): read it as the number the user wrote."""
    return float(value) if isinstance(value, str) and _YAML11_FLOAT.match(value.strip()) else value


def method_entry(label: str, entry) -> dict:
    """``{"method": registered name, "params": {...}}`` for a config method entry, the parameters
    converted to their declared types (:func:`ssfs.registry.check_params`): what every rule passes on."""
    params = {k: yaml_number(v) for k, v in dict(entry or {}).items()}
    name = params.pop("method", label)
    if "batch" in params:
        raise ConfigError(f"config key methods.{label}: batch is one value per sample; name the column holding it "
                          "in the dataset's entry instead (datasets.<name>.batch_key)")
    try:
        params = check_params(get_method(name), params)
    except MethodError as e:
        raise ConfigError(f"config key methods.{label}: {e}") from None
    return {"method": name, "params": params}


def load_config_file(path, schema_path) -> dict:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {path} is not valid YAML: {e}") from None
    return validate_config(raw, load_schema(schema_path))
