"""Thread pools pinned to the rule's ``threads`` inside a job and in run_method (issue #16 item 3)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import ssfs.runner as runner
from ssfs.workflow.scripting import run_step


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


@pytest.fixture
def recording_variance(monkeypatch):
    """run_method's "variance" with a method body that records the BLAS pool sizes it runs with."""
    seen = []
    spec = runner.get_method("variance")

    def fn(X, y, constraints, rng, **params):
        seen.append(_blas_threads())
        return spec.fn(X, y, constraints, rng, **params)

    monkeypatch.setattr(runner, "get_method", lambda name: dataclasses.replace(spec, fn=fn))
    return seen


@pytest.mark.parametrize("threads", [1, 2])
def test_run_method_pins_blas_to_ssfs_threads(monkeypatch, recording_variance, threads):
    if not _blas_threads():
        pytest.skip("no BLAS pool visible to threadpoolctl")
    monkeypatch.setenv(runner.THREADS_ENV, str(threads))
    with threadpool_limits(limits=7):  # whatever the caller had set
        runner.run_method("variance", np.arange(12.0).reshape(4, 3) ** 2)
        assert _blas_threads() == {7}  # restored afterwards
    assert recording_variance == [{threads}]


def test_run_method_defaults_to_one_thread(monkeypatch, recording_variance):
    if not _blas_threads():
        pytest.skip("no BLAS pool visible to threadpoolctl")
    monkeypatch.delenv(runner.THREADS_ENV, raising=False)
    runner.run_method("variance", np.eye(4))
    assert recording_variance == [{1}]


def test_run_step_pins_the_rules_threads(tmp_path):
    """A workflow job (run_step) with threads=1 runs its method with one BLAS thread even
    when the process started with more (fresh interpreter: the pin is process-wide)."""
    code = textwrap.dedent("""
        import json, numpy as np
        from types import SimpleNamespace
        from threadpoolctl import threadpool_info, threadpool_limits
        import ssfs.runner as runner
        from ssfs.workflow.scripting import run_step
        threadpool_limits(limits=2)
        seen = {}
        spec = runner.get_method("variance")
        def fn(X, y, c, rng, **p):
            seen["in_method"] = sorted({q["num_threads"] for q in threadpool_info() if q["user_api"] == "blas"})
            return spec.fn(X, y, c, rng, **p)
        import dataclasses
        runner.get_method = lambda name: dataclasses.replace(spec, fn=fn)
        def main(sm):
            seen["in_job"] = sorted({q["num_threads"] for q in threadpool_info() if q["user_api"] == "blas"})
            runner.run_method("variance", np.eye(5))
        run_step(main, SimpleNamespace(threads=1, log=[]))
        print(json.dumps(seen))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    if not seen["in_job"]:
        pytest.skip("no BLAS pool visible to threadpoolctl")
    assert seen == {"in_job": [1], "in_method": [1]}


def test_run_step_exports_threads(monkeypatch):
    from ssfs.workflow.scripting import _POOL_ENV

    for var in (runner.THREADS_ENV, *_POOL_ENV):
        monkeypatch.delenv(var, raising=False)
    got = {}
    with threadpool_limits(limits=None):
        run_step(lambda sm: got.update(threads=runner.job_threads()), SimpleNamespace(threads=3, log=[]))
    assert got == {"threads": 3}
    import os

    assert os.environ["OMP_NUM_THREADS"] == "3"


def test_startup_imports_no_heavy_library():
    """Loading the registry (what every select job does) imports neither scikit-learn, pandas,
    scanpy, anndata, matplotlib nor numba: each is imported where it is used (issue #16 item 4)."""
    code = ("import sys, ssfs.runner; ssfs.runner.get_method('variance'); "
            "print(sorted(m for m in ('sklearn', 'pandas', 'scanpy', 'anndata', 'matplotlib', 'numba', "
            "'pynndescent', 'scipy.stats') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_enscls_members_run_on_the_jobs_threads(monkeypatch):
    """EnsCLS's n_jobs defaults to the job's threads ($SSFS_THREADS); the scores do not depend on it."""
    import ssfs.methods.enscls as ens
    from ssfs import run_method

    seen = []
    real = ens.enscls_chunk
    monkeypatch.setattr(ens, "enscls_chunk", lambda *a, **k: seen.append(k["n_jobs"]) or real(*a, **k))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 16))
    y = np.full(40, -1)
    y[:6] = [0, 0, 0, 1, 1, 1]
    monkeypatch.setenv(runner.THREADS_ENV, "2")
    two = run_method("enscls", X, y, rng=0, n_members=8).scores
    monkeypatch.setenv(runner.THREADS_ENV, "1")
    one = run_method("enscls", X, y, rng=0, n_members=8).scores
    assert seen == [2, 1]
    np.testing.assert_array_equal(one, two)


def test_every_script_imports_without_collections_and_its_job_collects_again():
    """A workflow script turns the garbage collector off before its imports (0.2 s of CPU a job)
    and its job() turns it back on before the work: the first two statements of every script,
    then a job."""
    import ast
    import gc
    from pathlib import Path

    scripts = sorted((Path(__file__).resolve().parents[2] / "workflow" / "scripts").glob("*.py"))
    assert len(scripts) >= 10
    for path in scripts:
        body = ast.parse(path.read_text()).body
        assert ast.unparse(body[0]) == "import gc" and ast.unparse(body[1]) == "gc.disable()", path.name
        assert "job(snakemake)" in path.read_text() or "run_step(" in path.read_text(), path.name
    got = []
    gc.disable()
    try:
        run_step(lambda sm: got.append(gc.isenabled()), SimpleNamespace(threads=1, log=[]))
    finally:
        gc.enable()
    assert got == [True]
