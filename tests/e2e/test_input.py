"""Input files (-i FILE, JSON and YAML, one run per job into pass_N), presets
(--preset NAME, gpuprof avail --presets) and their errors, which name the file, the
line and the key."""
import json
import os
import re

import pytest
from conftest import GPUPROF, SAMPLES, outputs, run, trace

BUSY = [os.path.join(SAMPLES, "busy"), "-i", "1"]  # 6 kernels, 12 copies


def write(path, text):
    path.write_text(text)
    return str(path)


def files(directory):
    return sorted(os.path.relpath(os.path.join(d, f), directory)
                  for d, _, names in os.walk(directory) for f in names)


def test_json_jobs_each_run_into_pass_n(tmp_path):
    jobs = write(tmp_path / "jobs.json", json.dumps({"jobs": [
        {"kernel_trace": True, "output_format": ["csv"]},
        {"opencl-trace": True, "output_format": "json", "output_file": "second"}]}))
    r = trace(tmp_path, ["-i", jobs, "-d", "out"], BUSY)
    assert r.returncode == 0, r.stderr
    assert "job 1 of 2, into out/pass_1" in r.stderr and "job 2 of 2, into out/pass_2" in r.stderr
    assert r.stdout.count("busy: 2 threads") == 2  # the program ran once per job
    (first,) = outputs(str(tmp_path / "out" / "pass_1"))
    assert [f.split("_", 1)[1] for f in files(os.path.dirname(first.prefix))] == [
        "agent_info.csv", "kernel_trace.csv"]
    assert len(first.csv("kernel_trace.csv")) == 6
    assert files(tmp_path / "out" / "pass_2") == ["second_results.json"]
    with open(tmp_path / "out" / "pass_2" / "second_results.json") as f:
        events = json.load(f)["traceEvents"]
    categories = {e.get("cat") for e in events if e.get("ph") == "X"}
    assert categories == {"OPENCL_API"}


def test_yaml_jobs_and_command_line_options_under_them(tmp_path):
    jobs = write(tmp_path / "jobs.yaml", """\
# two runs of the same program
jobs:
  - kernel_trace: true
    kernel_include_regex: "^add$"
  - memory_copy_trace: yes
    stats: true
""")
    r = trace(tmp_path, ["-i", jobs, "-d", "out", "-f", "csv"], BUSY)
    assert r.returncode == 0, r.stderr
    (first,) = outputs(str(tmp_path / "out" / "pass_1"))
    assert [k["Kernel_Name"] for k in first.csv("kernel_trace.csv")] == ["add", "add"]
    assert not first.exists("results.db")  # -f csv from the command line holds for every job
    (second,) = outputs(str(tmp_path / "out" / "pass_2"))
    assert len(second.csv("memory_copy_trace.csv")) == 12
    assert second.exists("memory_copy_stats.csv") and not second.exists("kernel_trace.csv")


def test_bad_input_files_name_file_line_and_key(tmp_path):
    cases = [
        ("unknown.yaml", "jobs:\n  - kernel_trace: true\n    kernal_trace: true\n",
         "unknown.yaml:3: key 'kernal_trace': unknown option '--kernal-trace'; did you mean '--kernel-trace'?"),
        ("value.json", '{"jobs": [\n {"kernel_trace": "maybe"}\n]}',
         "value.json:2: key 'kernel_trace': invalid value 'maybe' for --kernel-trace"),
        ("syntax.json", '{"jobs": [{"kernel_trace": true,}\n', "syntax.json:2:1: "),
        ("list.yaml", "jobs: 3\n", "list.yaml:1: key 'jobs': a list of one or more jobs"),
        ("empty.yaml", "jobs: []\n", "empty.yaml:1: key 'jobs': a list of one or more jobs"),
        ("nested.yaml", "jobs:\n  - kernel_trace: {a: 1}\n",
         "nested.yaml:2: key 'kernel_trace': a value or a list of values"),
        ("refused.yaml", "jobs:\n  - input: other.yaml\n",
         "refused.yaml:2: key 'input' cannot be set in a file"),
        ("scalar.yaml", "- kernel_trace\n", "scalar.yaml:1: expected a mapping"),
        ("range.yaml", "jobs:\n  - kernel_trace: true\n  - kernel_iteration_range: '[0]'\n",
         "range.yaml, job 2: --kernel-iteration-range: '[0]' is not a set of iterations"),
    ]
    for name, text, message in cases:
        path = write(tmp_path / name, text)
        r = trace(tmp_path, ["-i", path, "-d", "out"], BUSY)
        assert r.returncode == 2, (name, r.stderr)
        assert message in r.stderr, (name, r.stderr)
    r = trace(tmp_path, ["-i", str(tmp_path / "missing.yaml")], BUSY)
    assert r.returncode == 2 and "cannot read" in r.stderr and "missing.yaml" in r.stderr
    assert not os.path.exists(tmp_path / "out")  # no job ran


def test_presets_listed_and_applied(tmp_path):
    r = run([GPUPROF, "avail", "--presets"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()[1:] if not line.startswith(" " * 5)]
    assert names == ["api-overhead", "comprehensive", "compute-bound", "lightweight",
                     "memory-bound", "pc-sampling", "perfetto", "sys"]
    assert "options: --kernel-trace --opencl-trace --cuda-runtime-trace --output-format=json" in r.stdout

    r = trace(tmp_path, ["--preset", "lightweight", "-d", "a"], BUSY)
    assert r.returncode == 0, r.stderr
    assert [f.split("_", 1)[1] for f in files(tmp_path / "a")] == ["results.json"]
    # the command line adds to the preset's lists and overrides its switches
    r = trace(tmp_path, ["--preset", "lightweight", "-f", "csv", "--opencl-trace=false", "-d", "b"],
              BUSY)
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path / "b"))
    assert sorted(f.split("_", 1)[1] for f in files(tmp_path / "b")) == [
        "agent_info.csv", "kernel_trace.csv", "results.json"]
    assert len(out.csv("kernel_trace.csv")) == 6

    # sys and comprehensive say "every format": they write each one trace has
    r = trace(tmp_path, ["--preset", "sys", "-d", "c"], BUSY)
    assert r.returncode == 0, r.stderr
    written = sorted(f.split("_", 1)[1] for f in files(tmp_path / "c"))
    assert [f for f in written if not f.endswith(".csv")] == [
        "report.html", "results.db", "results.json", "results.pftrace"], written
    presets = os.path.join(os.path.dirname(GPUPROF), "..", "share", "gpuprof", "presets")
    for name in ["sys", "comprehensive"]:
        with open(os.path.join(presets, name + ".yaml")) as f:
            assert "output_format: [csv, sqlite, json, pftrace, html]" in f.read(), name

    r = trace(tmp_path, ["--preset", "nope"], BUSY)
    assert r.returncode == 2
    assert ("unknown preset 'nope' (available: api-overhead, comprehensive, compute-bound, "
            "lightweight, memory-bound, pc-sampling, perfetto, sys)") in r.stderr


def test_counter_presets_name_metric_sets_that_plan(tmp_path):
    """The counter presets (madengine's compute-bound, memory-bound, comprehensive) are
    built on metric sets of gpuprof compute: each set they name exists and CUPTI's host
    API plans it on GH100 (every metric known); without a GPU they are refused in one
    line before the program runs."""
    listed = run([GPUPROF, "compute", "profile", "--list-sets", "--chip", "GH100"], cwd=tmp_path)
    if listed.returncode != 0:
        pytest.skip("CUPTI's profiler host API is not available: " + listed.stderr.strip())
    planned = dict(re.findall(r"^(\S+) +\d+ metrics, \d+ CUPTI metrics, (\d+) pass",
                              listed.stdout, re.M))
    presets = os.path.join(os.path.dirname(GPUPROF), "..", "share", "gpuprof", "presets")
    for name in ["compute-bound", "memory-bound", "comprehensive"]:
        with open(os.path.join(presets, name + ".yaml")) as f:
            sets = re.search(r"^pmc_set: \[(.*)\]$", f.read(), re.M).group(1).split(", ")
        assert sets and all(int(planned[s]) >= 1 for s in sets), (name, sets)
        marker = tmp_path / "ran"
        r = trace(tmp_path, ["--preset", name], ["touch", str(marker)])
        assert r.returncode == 2 and not marker.exists()
        assert r.stderr.count("\n") == 1 and "no CUDA device is usable here" in r.stderr, r.stderr
        assert r.stderr.startswith(f"gpuprof: trace: the counters of --preset {name} "
                                   f"(pmc_set: {', '.join(sets)}): "), r.stderr
