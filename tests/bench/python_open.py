"""Opening a big .gscope into pandas DataFrames with the Python module, against the C++ read alone.

    PYTHONPATH=build/python python3 tests/bench/python_open.py [--kernels 10000000] [--runs 5] [FILE]

Without FILE it writes (once) the synthetic trace of docs/PERFORMANCE.md with `gpuscope synth` into
$GPUSCOPE_BENCH_DIR (default /tmp). Each run, in this process: gpuscope.open() (the C++ read_gscope, with
the GIL released: the "C++ read"), then the kernels DataFrame, then every other table. Target: open +
every DataFrame <= 2x the C++ read. Prints one line per run and the medians.
"""
import argparse
import gc
import os
import statistics
import subprocess
import sys
import time

import gpuscope

TABLES = ["memcpys", "memsets", "api_calls", "ranges", "syncs", "counters", "overheads"]


def trace_file(args):
    if args.file:
        return args.file
    d = os.environ.get("GPUSCOPE_BENCH_DIR", "/tmp")
    path = os.path.join(d, f"gpuscope-python-bench-{args.kernels}.gscope")
    if not os.path.exists(path):
        cli = args.gpuscope or os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin", "gpuscope")
        subprocess.run([cli, "synth", "-o", path, "--kernels", str(args.kernels)], check=True)
    return path


def now():
    return time.perf_counter(), time.process_time()


def one_run(path):
    """(wall, CPU) seconds of the read, of the kernels DataFrame and of the other tables; rows."""
    gc.collect()
    t0 = now()
    t = gpuscope.open(path)
    t1 = now()
    k = t.kernels
    t2 = now()
    rows = len(k) + sum(len(t.table(n)) for n in TABLES)
    t3 = now()
    del k, t
    span = lambda a, b: (b[0] - a[0], b[1] - a[1])  # noqa: E731
    return span(t0, t1), span(t1, t2), span(t2, t3), rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", nargs="?")
    p.add_argument("--kernels", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--gpuscope", help="the gpuscope binary (default build/bin/gpuscope)")
    args = p.parse_args()
    path = trace_file(args)
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB; gpuscope {gpuscope.__version__}, Python {sys.version.split()[0]}")
    runs = [one_run(path) for _ in range(args.runs)]
    ms = lambda s: f"{s * 1e3:.0f}"  # noqa: E731
    for i, (read, kernels, others, rows) in enumerate(runs):
        print(f"run {i + 1}: C++ read {ms(read[0])} ms wall / {ms(read[1])} ms CPU, kernels DataFrame "
              f"{ms(kernels[0])} / {ms(kernels[1])} ms, the other tables {ms(others[0])} / {ms(others[1])} ms "
              f"({rows:,} rows); open + kernels = {(read[0] + kernels[0]) / read[0]:.2f}x the read wall, "
              f"{(read[1] + kernels[1]) / read[1]:.2f}x CPU; open + every table = "
              f"{(read[0] + kernels[0] + others[0]) / read[0]:.2f}x wall, "
              f"{(read[1] + kernels[1] + others[1]) / read[1]:.2f}x CPU")
    for k, what in ((0, "wall"), (1, "CPU")):
        read = statistics.median(r[0][k] for r in runs)
        frame = statistics.median(r[1][k] for r in runs)
        others = statistics.median(r[2][k] for r in runs)
        ratio = statistics.median((r[0][k] + r[1][k]) / r[0][k] for r in runs)
        every = statistics.median((r[0][k] + r[1][k] + r[2][k]) / r[0][k] for r in runs)
        print(f"median {what}: C++ read {ms(read)} ms, kernels DataFrame {ms(frame)} ms, other tables {ms(others)} "
              f"ms; open + kernels {ratio:.2f}x the read, open + every table {every:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
