import os
import sys
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

if os.environ.get("PYTEST_XDIST_WORKER"):
    # each of `pytest -n N`'s workers gets its share of the cores for BLAS, as a workflow job gets its rule's
    # threads: N workers with every core each oversubscribe (OpenBLAS's threads spin while they wait; on 2 cores,
    # -n 2, five of the slowest test files took 169 s wall and 326 s CPU unpinned, 144 s and 266 s pinned)
    _WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    threadpool_limits(limits=max(1, (os.cpu_count() or 1) // max(1, _WORKERS)), user_api="blas")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def shared_data():
    """Path of ../shared/data (the real benchmark files); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


def _benchmark(name: str):
    """``benchmarks/<name>.py`` as a module; skips when the benchmarks folder is not beside the tests."""
    import importlib.util

    path = REPO / "benchmarks" / f"{name}.py"
    if not path.is_file():
        pytest.skip("benchmarks/ is not beside the tests")
    sys.path.insert(0, str(path.parent))  # bench_other_shapes imports bench_labels_sweep beside it
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def other_shapes():
    """``benchmarks/bench_other_shapes.py`` as a module (the shapes tests redraw must be the benchmark's)."""
    return _benchmark("bench_other_shapes")


@pytest.fixture
def real_sets(shared_data):
    """``benchmarks/bench_labels_sweep.py`` as a module, for its real sets (``load_real(name, shared_data)``) and
    their splits (``real_splits``: the real-set benchmarks' own); skips without ../shared/data."""
    return _benchmark("bench_labels_sweep")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def pytest_configure(config):
    """Before pytest-xdist starts its workers, compile the EFSIS rankers' numba kernels once (or
    load them from the disk cache): otherwise every worker, and every workflow job they start,
    compiles them at the same time on a fresh machine (about 30 s each)."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None):
        return
    from ssfs.methods.efsis import warm_up

    warm_up()
