"""The JSON schema and registry checks refuse malformed configs with messages naming the key."""

from pathlib import Path

import pytest
import yaml

from ssfs import ConfigError
from ssfs.workflow.config import load_schema, validate_config, variants

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
