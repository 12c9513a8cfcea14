"""Kernel filters (--kernel-include-regex, --kernel-exclude-regex,
--kernel-iteration-range) on the busy sample: each keeps exactly the dispatches it
should, checked against the unfiltered run of the same spool."""
import os

import pytest

from conftest import GPUPROF, SAMPLES, outputs, run, trace

ITERATIONS = 4  # busy -i 4: each thread runs scale, add and square 4 times


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("filters")
    r = trace(tmp, ["--kernel-trace", "--keep-spool", "-d", "out"],
              [os.path.join(SAMPLES, "busy"), "-i", str(ITERATIONS)])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp / "out"))
    kernels = sorted(out.csv("kernel_trace.csv"), key=lambda k: int(k["Dispatch_Id"]))
    assert len(kernels) == 3 * 2 * ITERATIONS
    return tmp, out.prefix + ".spool", kernels


def convert(recorded, tmp_path, options):
    workdir, spool, _ = recorded
    r = run([GPUPROF, "convert", "-f", "csv", "-d", str(tmp_path), *options, spool], cwd=workdir)
    assert r.returncode == 0, r.stderr
    path = [p for p in os.listdir(tmp_path) if p.endswith("_kernel_trace.csv")]
    if not path:
        return [], r
    import csv
    with open(tmp_path / path[0], newline="") as f:
        return [int(k["Dispatch_Id"]) for k in csv.DictReader(f)], r


def dispatches(kernels, names=None):
    return [int(k["Dispatch_Id"]) for k in kernels if names is None or k["Kernel_Name"] in names]


def test_include_and_exclude(recorded, tmp_path):
    kernels = recorded[2]
    kept, r = convert(recorded, tmp_path / "a", ["--kernel-include-regex", "sca|squ"])
    assert sorted(kept) == dispatches(kernels, {"scale", "square"})
    assert f"{2 * ITERATIONS} kernels left out by the kernel filters, {4 * ITERATIONS} kept" in r.stderr
    kept, _ = convert(recorded, tmp_path / "b", ["--kernel-exclude-regex", "^add$"])
    assert sorted(kept) == dispatches(kernels, {"scale", "square"})
    kept, _ = convert(recorded, tmp_path / "c", ["--kernel-include-regex", "a",
                                                 "--kernel-exclude-regex", "dd"])
    assert sorted(kept) == dispatches(kernels, {"scale", "square"})


def test_iteration_range_keeps_exactly_kernel_n_of_m(recorded, tmp_path):
    kernels = recorded[2]
    scale = dispatches(kernels, {"scale"})
    kept, _ = convert(recorded, tmp_path / "a", ["--kernel-include-regex", "^scale$",
                                                 "--kernel-iteration-range", "[2-3, [8]]"])
    assert sorted(kept) == [scale[1], scale[2], scale[7]]
    # the first dispatch of every kernel name
    kept, _ = convert(recorded, tmp_path / "b", ["--kernel-iteration-range", "1"])
    first = {}
    for k in kernels:
        first.setdefault(k["Kernel_Name"], int(k["Dispatch_Id"]))
    assert sorted(kept) == sorted(first.values())
    # past the last iteration: nothing is left
    kept, _ = convert(recorded, tmp_path / "c", ["--kernel-iteration-range", "[100-200]"])
    assert kept == []


def test_filters_on_trace(tmp_path):
    r = trace(tmp_path, ["--kernel-trace", "--kernel-include-regex", "^add$",
                         "--kernel-iteration-range", "[1-2],[4]"],
              [os.path.join(SAMPLES, "busy"), "-i", str(ITERATIONS)])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    assert [k["Kernel_Name"] for k in out.csv("kernel_trace.csv")] == ["add"] * 3


def test_bad_filters(recorded, tmp_path):
    _, spool, _ = recorded
    for options, message in (
            (["--kernel-include-regex", "("], "--kernel-include-regex: '(' is not a valid regular expression"),
            (["--kernel-exclude-regex", "a{2"], "--kernel-exclude-regex: 'a{2' is not a valid regular expression"),
            (["--kernel-iteration-range", "[0-2]"], "'[0-2]' is not a set of iterations"),
            (["--kernel-iteration-range", "[3-1]"], "'[3-1]' is not a set of iterations"),
            (["--kernel-iteration-range", "1,x"], "the error is at 'x'")):
        for command in (["convert", spool], ["trace", "--", "true"]):
            r = run([GPUPROF, command[0], *options, *command[1:]], cwd=tmp_path)
            assert r.returncode == 2, (options, r.stderr)
            assert message in r.stderr, (options, r.stderr)
    db = spool[: -len(".spool")] + "_results.db"
    r = run([GPUPROF, "convert", "--kernel-include-regex", "a", "-d", str(tmp_path), db], cwd=tmp_path)
    assert r.returncode == 1 and "is a database: the kernel filters and --kernel-rename apply to spools" in r.stderr
    assert os.listdir(tmp_path) == []
