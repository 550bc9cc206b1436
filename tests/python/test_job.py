"""gpuscope.report of a directory of rank traces: the CLI's job pipeline (job/job_files.h), one file per worker in
memory at a time, the files that cannot be analysed left out as `gpuscope report` leaves them out."""
import json
import os
import subprocess
import sys

import gpuscope


def cli_json(cli, *args):
    return json.loads(cli(*args).stdout)


def test_a_rank_that_cannot_be_read_is_left_out_as_the_cli_does(synth, cli, tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    made = synth("job-small", "--ranks", "3", "--kernels", "2000", "--slow-rank", "1")
    for name in sorted(os.listdir(made)):
        (job / name).write_bytes(open(f"{made}/{name}", "rb").read())
    (job / "zz-broken.gscope").write_bytes(b"GSCOPE but not really a trace")
    r = gpuscope.report(job)
    assert r == cli_json(cli, "report", "--json", job)
    assert [x["file"] for x in r["left_out"]] == [str(job / "zz-broken.gscope")]
    assert len(r["ranks"]) == 3
    # So does diff, of the same directory on both sides.
    assert gpuscope.diff(job, job) == cli_json(cli, "diff", "--json", job, job)


def _peak_kib_of_child(args):
    """The peak resident memory (KiB) of `args` run alone, measured from a fresh interpreter that waits for it."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                              check=True).stdout)


def test_report_of_a_large_job_stays_within_the_cli_memory(synth):
    # 256 ranks of 6,000 kernels: large enough that holding every rank at once (the memory grows with the job)
    # needs about 1.3 times the CLI's peak, small enough to take a few seconds.
    job = synth("job-256", "--ranks", "256", "--kernels", "6000")
    cli_peak = _peak_kib_of_child([os.environ["GPUSCOPE_CLI"], "report", "--json", job])
    # Python's own growth: its peak after report() less its peak once gpuscope (numpy, pandas) is imported.
    code = ("import resource, sys, gpuscope; base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            "r = gpuscope.report(sys.argv[1]); assert len(r['ranks']) == 256, len(r['ranks']); "
            "print(base, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    base, peak = map(int, subprocess.run([sys.executable, "-c", code, job], capture_output=True, text=True,
                                         check=True).stdout.split())
    assert peak - base <= 1.1 * cli_peak, (peak - base, cli_peak)
