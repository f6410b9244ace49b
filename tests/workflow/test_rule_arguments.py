"""Pipeline entry points take the rule's named inputs, outputs, params and wildcards by name."""

from types import SimpleNamespace

import pytest
from snakemake.iocontainers import InputFiles, OutputFiles, Params, Wildcards

from ssfs.workflow.scripting import rule_arguments


def _rule(wildcards=None, input=None, output=None, params=None):
    return SimpleNamespace(wildcards=Wildcards(fromdict=wildcards or {}), input=InputFiles(fromdict=input or {}),
                           output=OutputFiles(fromdict=output or {}), params=Params(fromdict=params or {}))


def entry(*, prepared, splits: list, seed: int, rep: int, method: str, extra=None):
    return prepared, splits, seed, rep, method, extra


def test_named_entries_reach_the_keyword_parameters():
    sm = _rule(wildcards={"dataset": "wine", "method": "cls", "rep": "3"},
               input={"prepared": "p.h5ad", "splits": ["a.json", "b.json"]}, output={"unused": "x"},
               params={"seed": 7})
    kw = rule_arguments(sm, entry)
    assert kw == {"method": "cls", "rep": 3, "prepared": "p.h5ad", "splits": ["a.json", "b.json"], "seed": 7}
    assert entry(**kw) == ("p.h5ad", ["a.json", "b.json"], 7, 3, "cls", None)


def test_a_name_twice_and_a_missing_name_are_refused():
    sm = _rule(wildcards={"method": "cls", "rep": "0"}, input={"prepared": "p", "splits": []},
               params={"seed": 1, "method": {"method": "cls"}})
    with pytest.raises(TypeError, match="'method' is both wildcards.method and params.method"):
        rule_arguments(sm, entry)
    with pytest.raises(TypeError, match=r"no named input, output, param or wildcard \['rep'\]"):
        rule_arguments(_rule(wildcards={"method": "m"}, input={"prepared": "p", "splits": []}, params={"seed": 1}),
                       entry)
