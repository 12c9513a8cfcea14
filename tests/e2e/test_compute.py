"""gpuprof compute without a GPU: the metric catalog (catalog/*.yaml) against CUPTI's
profiler host API, which lists a chip's metrics and counts passes with no GPU; the
planning that -b selects; bad input. Collecting counters needs a GPU (tests/gpu)."""
import glob
import os
import re

import pytest

from conftest import GPUPROF, run

CATALOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "catalog")
HOST_LIB = os.path.join(os.path.dirname(GPUPROF), "..", "lib", "gpuprof",
                        "libgpuprof-cupti-host.so")
ROW = re.compile(r"^    (\d+\.\d+\.\d+) +(.+?) {2,}(\S+) +(yes|no|derived) +(.*)$")


@pytest.fixture(autouse=True)
def host_api():
    if not os.path.exists(HOST_LIB):
        pytest.skip("built without the CUDA toolkit: no CUPTI profiler host API")


def catalog_ids():
    """Every metric id of the catalog files, read here from the YAML text."""
    ids = []
    for path in sorted(glob.glob(os.path.join(CATALOG, "*.yaml"))):
        with open(path) as f:
            ids += re.findall(r"^      - id: (\d+\.\d+\.\d+)$", f.read(), re.M)
    return ids


def listing(tmp_path, *options):
    r = run([GPUPROF, "compute", "profile", "--list-available-metrics", *options], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [ROW.match(line).groups() for line in r.stdout.splitlines() if ROW.match(line)]
    blocks = dict(re.findall(r"^(\d+) +.*\): (.*)$", r.stdout, re.M))
    total = re.search(r"^selected: (\d+) metrics, (.*)$", r.stdout, re.M).groups()
    return rows, blocks, total


def test_every_catalog_metric_is_one_gh100_has(tmp_path):
    rows, blocks, total = listing(tmp_path, "--chip", "GH100")
    ids = catalog_ids()
    assert [r[0] for r in rows] == ids and len(ids) == 62
    assert {r[3] for r in rows} == {"yes", "derived"}, [r for r in rows if r[3] == "no"]
    derived = [r[0] for r in rows if r[3] == "derived"]
    assert derived == ["2.1.10", "7.1.0", "7.1.1", "7.1.2", "7.1.3", "7.1.4", "7.2.0"]
    # the passes, from the host API: the speed-of-light set takes 9 on GH100, raw DRAM
    # byte counters one
    assert blocks["2"] == "10 CUPTI metrics, 9 passes"
    assert blocks["18"] == "4 CUPTI metrics, 1 pass"
    assert blocks["12"] == "4 CUPTI metrics, 1 pass"
    assert total == ("62", "57 CUPTI metrics, 13 passes")


def test_a_selection_plans_what_it_names(tmp_path):
    rows, blocks, total = listing(tmp_path, "--chip", "GH100", "-b", "dram", "-b", "2.1.5",
                                  "-b", "7.2")
    assert [r[0] for r in rows] == ["2.1.5", "7.2.0", "7.2.1", "7.2.2", "18.1.0", "18.1.1",
                                    "18.1.2", "18.1.3"]
    assert blocks == {"2": "1 CUPTI metrics, 1 pass", "7": "2 CUPTI metrics, 1 pass",
                      "18": "4 CUPTI metrics, 1 pass"}
    assert total == ("8", "6 CUPTI metrics, 1 pass")  # the duration counted once


def test_a_chip_without_a_metric_says_which(tmp_path):
    # the Hopper metrics (warpgroup MMA, TMA) are not Ampere's: marked with the name
    # missing, and the blocks that hold them say so
    rows, blocks, total = listing(tmp_path, "--chip", "GA100")
    missing = {r[0]: r[4] for r in rows if r[3] == "no"}
    assert missing == {
        "11.2.4": "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed  "
                  "(sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed missing)",
        "11.2.5": "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed  "
                  "(sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed missing)",
        "20.1.8": "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio  "
                  "(smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio missing)"}
    assert blocks["11"].startswith("9 CUPTI metrics; GA100 has no sm__inst_executed_pipe_tensor")
    assert blocks["20"] == ("9 CUPTI metrics; GA100 has no "
                            "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio")
    assert blocks["18"] == "4 CUPTI metrics, 1 pass"


def test_bad_input_is_one_clear_line(tmp_path):
    cases = [
        (["--chip", "XY100", "--list-available-metrics"], 2,
         "--chip XY100: CUPTI knows no such chip"),
        (["-b", "99", "--chip", "GH100", "--list-available-metrics"], 2,
         "-b 99: no block, table or metric has this id or alias"),
        (["-b", "2.1.99", "--chip", "GH100", "--list-available-metrics"], 2,
         "-b 2.1.99: no block, table or metric"),
        (["--chip", "GH100"], 2, "nothing to do"),
        (["--chip", "GH100", "--", "true"], 1,
         "collecting counters (CUPTI's range profiler) is not in this version yet"),
        (["--bogus"], 2, "--bogus"),
    ]
    for options, status, message in cases:
        r = run([GPUPROF, "compute", "profile", *options], cwd=tmp_path)
        assert r.returncode == status, (options, r.stderr)
        assert message in r.stderr and r.stderr.count("\n") == 1, (options, r.stderr)
    r = run([GPUPROF, "compute", "analyse"], cwd=tmp_path)
    assert r.returncode == 2 and "unknown command 'analyse'" in r.stderr
