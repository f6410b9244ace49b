"""The JSON schema and registry checks refuse malformed configs with messages naming the key."""

from pathlib import Path

import pytest
import yaml

from ssfs import ConfigError
from ssfs.errors import MethodError
from ssfs.experiment.variants import variants
from ssfs.workflow.config import load_schema, validate_config

REPO = Path(__file__).resolve().parents[2]
SCHEMA = load_schema(REPO / "workflow/schemas/config.schema.yaml")
GOOD = {"datasets": {"wine": {"source": "builtin", "name": "wine"}}, "methods": {"cls": {}}}


def with_(**over):
    cfg = yaml.safe_load(yaml.safe_dump(GOOD))
    cfg.update(over)
    return cfg


def test_every_shipped_config_validates():
    for path in sorted((REPO / "config").glob("*.yaml")):
        validate_config(yaml.safe_load(path.read_text()), SCHEMA)


def test_defaults_are_filled():
    cfg = validate_config(GOOD, SCHEMA)
    assert cfg["supervision"]["labeled_per_class"] == 3
    assert cfg["evaluation"]["classifier"] == "svm"
    assert cfg["methods"]["cls"] == {"method": "cls", "params": {}}


@pytest.mark.parametrize(
    "cfg, match",
    [
        (with_(bogus=1), "unknown key.*bogus"),
        (with_(supervision={"repetitions": "ten"}), "supervision.repetitions"),
        (with_(supervision={"protocol": "loo"}), "supervision.protocol"),
        (with_(methods={"nosuch": {}}), "methods.nosuch: unknown method 'nosuch'"),
        (with_(methods={"cls": {"kk": 3}}), "unknown parameter.*kk"),
        (with_(methods={"propagate": {"batch": ["a", "b"]}}), "methods.propagate: batch is one value per sample.*"
                                                               "batch_key"),
        (with_(datasets={"../x": {"path": "a.csv"}}), "'../x'.*not allowed"),
        (with_(datasets={"a b": {"path": "a.csv"}}), "'a b'.*not allowed"),
        (with_(datasets={"a/b": {"path": "a.csv"}}), "'a/b'.*not allowed"),
        (with_(methods={"x/y": {"method": "cls"}}), "'x/y'.*not allowed"),
        (with_(datasets={"w": {"source": "builtin"}}), "datasets.w.*name"),
        (with_(datasets={"w": {"path": "a.csv", "normalize": "log"}}), "datasets.w.normalize"),
        (with_(report={"control": "fisher"}), "report.control"),
        (with_(supervision={"protocol": "kfold", "repetitions": 12, "n_folds": 10}), "n_folds"),
        ([1, 2], "mapping"),
    ],
)
def test_malformed_configs_are_refused(cfg, match):
    with pytest.raises(ConfigError, match=match):
        validate_config(cfg, SCHEMA)


def test_sweeps_expand_to_variants():
    cfg = validate_config(with_(sweeps={"labeled_per_class": [1, 3], "noise": [0.0, 0.1]}), SCHEMA)
    v = variants(cfg)
    assert len(v) == 4
    assert v["labeled_per_class-3__noise-0.1"] == {"labeled_per_class": 3, "noise": 0.1}
    assert variants(validate_config(GOOD, SCHEMA)) == {"base": {}}


def test_method_schema_generated_from_the_registry_agrees_with_the_door():
    """The JSON schema of every method's parameters (from its signature) accepts the
    defaults and refuses what check_params refuses (wrong type, out of range)."""
    import jsonschema
    from test_bad_input import _bad_value, _out_of_range

    from ssfs.registry import check_params, get_method, list_methods
    from ssfs.workflow.config import method_params_schema

    n_refused = 0
    for name in list_methods():
        spec = get_method(name)
        v = jsonschema.Draft202012Validator(method_params_schema(name))
        defaults = {k: (list(d) if isinstance(d, tuple) else d) for k, d in spec.defaults.items() if k != "graph"}
        assert not list(v.iter_errors({"method": name, **defaults})), name
        for k, alts in spec.types.items():
            for bad in (_bad_value(alts), _out_of_range(alts)):
                if bad is None:
                    continue
                with pytest.raises(MethodError):
                    check_params(spec, {k: bad})
                assert list(v.iter_errors({k: bad})), (name, k, bad)
                n_refused += 1
    assert n_refused > 150
    assert list(jsonschema.Draft202012Validator(method_params_schema("cls")).iter_errors({"k": 2.5}))
