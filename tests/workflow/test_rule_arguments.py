"""The glue between a rule and the library is explicit: a script calls a named entry point with
named arguments inside ``job(snakemake)``; a batched rule lists each method's files together, in
the order of its ``methods`` param (label -> settings), and ``by_method`` hands each method its share."""

from types import SimpleNamespace

import pytest

from ssfs.errors import SupervisionError
from ssfs.runner import MethodConfig, method_configs
from ssfs.workflow.pipeline import by_method
from ssfs.workflow.scripting import describe, job

METHODS = {"cls_k15": {"method": "cls", "params": {"k": 15}}, "fisher": {"method": "fisher", "params": {}}}


def test_each_method_gets_its_consecutive_share():
    files = ["r/cls_k15/0.tsv", "r/cls_k15/1.tsv", "r/fisher/0.tsv", "r/fisher/1.tsv"]
    assert by_method(files, METHODS) == {"cls_k15": files[:2], "fisher": files[2:]}
    assert by_method([], METHODS) == {"cls_k15": [], "fisher": []}  # e.g. no full ranking in chunk 1
    with pytest.raises(ValueError, match="3 files cannot be shared equally"):
        by_method(files[:3], METHODS)


def test_config_entries_become_method_configs_in_order():
    assert method_configs(METHODS) == [MethodConfig("cls_k15", "cls", {"k": 15}), MethodConfig("fisher", "fisher")]


def _job(**params):
    return SimpleNamespace(rule="select_0", threads=1, log=[], params=SimpleNamespace(items=params.items),
                           wildcards=SimpleNamespace(items={"dataset": "d"}.items))


def test_job_names_itself_and_turns_an_ssfs_error_into_one_line(capsys):
    sm = _job(methods=METHODS)
    assert describe(sm) == "select_0 dataset=d methods=cls_k15,fisher"
    with pytest.raises(SystemExit) as stop, job(sm):
        raise SupervisionError("method 'fisher' needs labels but no sample is labeled")
    assert stop.value.code == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "ssfs select_0 dataset=d methods=cls_k15,fisher: started"
    assert "ERROR: method 'fisher' needs labels but no sample is labeled" in lines
    assert lines[-1].startswith("ssfs select_0 dataset=d methods=cls_k15,fisher: failed after ")
