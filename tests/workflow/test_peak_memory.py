"""Peak memory of a block (ssfs.workflow.peak_memory): the resident memory a block adds at its peak,
per block (the high-water mark is reset in between), without tracing allocations."""

from pathlib import Path

import numpy as np
import pytest

from ssfs.workflow.peak_memory import PeakMemory

pytestmark = pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")


def test_peak_of_a_freed_allocation_is_measured_per_block():
    with PeakMemory() as big:
        a = np.ones((200, 1024, 128))  # 200 MiB, touched
        del a
    with PeakMemory() as small:  # the earlier peak does not leak into this block
        b = np.ones((10, 1024, 128))  # 10 MiB (may reuse pages the allocator kept: 0 is possible)
        del b
    assert 150 <= big.mib <= 400
    # well below the earlier 200 MiB peak, so the high-water mark was reset in between
    assert 0 <= small.mib <= 60
