"""cProfile of ``run_method("propagate", X, y)`` on bench_cells_scaling's planted cells (8 types x 20
markers, 2,000 genes, 1 % labeled), after a warm-up on 9,000 cells; prints the CPU seconds, the recall
of the markers and the ssfs functions by cumulative time.

    python benchmarks/profile_propagate_cells.py --cells 100000 [--space values]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from bench_cells_scaling import _matrix

from ssfs import run_method


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", type=int, default=100_000)
    ap.add_argument("--space", default="auto", help="propagate's space parameter")
    ap.add_argument("--rows", type=int, default=40, help="functions listed")
    args = ap.parse_args(argv)
    X, y, _ = _matrix(9_000, 2_000, 1)
    run_method("propagate", X, y, space=args.space)  # numba's compilations out of the profile
    X, y, sim = _matrix(args.cells, 2_000, 0)
    profile, start = cProfile.Profile(), time.process_time()
    profile.enable()
    ranked = run_method("propagate", X, y, space=args.space)
    profile.disable()
    print(f"cpu {time.process_time() - start:.1f} s, recall {sim.recall(ranked.order):.3f}")
    pstats.Stats(profile).sort_stats("cumtime").print_stats("ssfs", args.rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
