"""gpuprof roofline on the OpenCL CPU device (PoCL): the microbenchmarks, roofline.csv
in rocprof-compute's columns, the cache and its lock, the plot in headless Chromium."""
import csv
import os
import re
import subprocess

import pytest
from conftest import GPUPROF, NEEDS_CHROMIUM, chromium, run

CEILINGS = ["HBMBw", "HBMReadBw", "L2Bw", "L1Bw", "LDSBw", "FP64Flops", "FP32Flops",
            "FP16Flops", "I32Ops", "MFMAF64Flops", "MFMAF32Flops", "MFMAF16Flops",
            "MFMABF16Flops", "MFMAF8Flops", "MFMAI8Ops"]
COLUMNS = ["device", "device_name", "backend", "experiments"] + [
    name + part for name in CEILINGS for part in ("", "Low", "High")]
# The measurements themselves are the helper's (not built with the sanitizers): the
# sanitizer runs check gpuprof's side only.
SANITIZED = pytest.mark.skipif(bool(os.environ.get("GPUPROF_SANITIZER")),
                               reason="measures the machine, not gpuprof's memory safety")
# what an OpenCL CPU device can be measured for; the matrix units cannot
OPENCL = ["HBMBw", "HBMReadBw", "L2Bw", "L1Bw", "LDSBw", "FP64Flops", "FP32Flops", "I32Ops"]


def roofline(tmp_path, *options, directory="out", env=None):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), **(env or {})}
    return run([GPUPROF, "roofline", "-d", str(tmp_path / directory), *options], cwd=tmp_path,
               env=env, timeout=300)


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == COLUMNS
    assert len(rows) == 2
    return dict(zip(rows[0], rows[1]))


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One --quick run, shared by the tests that read it."""
    tmp_path = tmp_path_factory.mktemp("roofline")
    return tmp_path, roofline(tmp_path, "--quick")


def test_quick_run_measures_every_ceiling_of_the_device(quick):
    """Every ceiling an OpenCL CPU device has is positive, inside its 95 % interval; what
    it cannot have (matrix units; FP16 without cl_khr_fp16) is empty, never 0, and the
    FP16 case is said. How the figures compare with each other and with peers (clpeak, a
    C triad), and how long it takes, are timings of a shared CPU: bench/run.sh, section 9."""
    tmp_path, r = quick
    assert r.returncode == 0, r.stderr
    row = read(tmp_path / "out" / "roofline.csv")
    assert (row["device"], row["backend"], row["experiments"]) == ("0", "opencl", "10")
    assert row["device_name"]
    for name in OPENCL:
        low, mean, high = (float(row[name + p]) for p in ("Low", "", "High"))
        assert 0 <= low <= mean <= high and mean > 0, (name, low, mean, high)
    for name in CEILINGS[9:]:
        assert row[name] == row[name + "Low"] == row[name + "High"] == "", name
    if row["FP16Flops"] == "":
        assert "FP16Flops not measured: the device has no half precision" in r.stderr
    # the table printed has the same figures
    table = {line.split()[0]: float(line.split()[1]) for line in r.stdout.splitlines()[1:]}
    assert set(table) == {n for n in CEILINGS if row[n]}
    assert all(abs(table[n] - float(row[n])) <= 0.006 for n in table)


def test_second_run_reuses_the_cache(quick):
    """A second run for the same device reuses the cached measurement (the same file), a
    run asking for more experiments measures again, and --rerun too."""
    tmp_path, r = quick
    first = (tmp_path / "out" / "roofline.csv").read_bytes()
    again = roofline(tmp_path, "--quick", directory="again")
    assert again.returncode == 0, again.stderr
    assert "reusing the measurement" in again.stderr
    # 44: the cache's age said, from the cached file's time (set here to 3 h 5 min ago)
    import glob as globmod, time as timemod
    (cached,) = [p for p in globmod.glob(str(tmp_path / "**" / "roofline" / "*"), recursive=True)
                 if not p.endswith(".lock")]
    when = timemod.time() - (3 * 3600 + 5 * 60 + 20)
    os.utime(cached, (when, when))
    aged = roofline(tmp_path, "--quick", directory="aged")
    stamp = timemod.strftime("%Y-%m-%d %H:%M", timemod.localtime(when))
    assert f"per ceiling) made 3 h 5 min ago ({stamp}) cached in {cached}" in aged.stderr, \
        aged.stderr
    assert "95% CI of this run's mean" in aged.stdout
    assert (tmp_path / "again" / "roofline.csv").read_bytes() == first
    more = roofline(tmp_path, "--experiments", "11", "-q", directory="more")
    assert more.returncode == 0 and "reusing" not in more.stderr, more.stderr
    assert read(tmp_path / "more" / "roofline.csv")["experiments"] == "11"


@SANITIZED
def test_two_runs_at_once_measure_once(tmp_path):
    """Two runs on one node (two ranks) at once: the lock makes the second wait, then it
    reuses what the first measured."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    runs = [subprocess.Popen([GPUPROF, "roofline", "--experiments", "3", "-o",
                              str(tmp_path / f"out{i}")], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(2)]
    results = [p.communicate(timeout=300) for p in runs]
    assert [p.returncode for p in runs] == [0, 0], results
    errs = [e for _, e in results]
    assert sum("measuring OpenCL device 0" in e for e in errs) == 1, errs
    assert sum("reusing the measurement" in e for e in errs) == 1, errs
    assert any("waiting for another gpuprof roofline on this device" in e for e in errs), errs
    assert (tmp_path / "out0" / "roofline.csv").read_bytes() == \
        (tmp_path / "out1" / "roofline.csv").read_bytes()


@SANITIZED
@NEEDS_CHROMIUM
def test_plot_renders_every_ceiling_in_chromium(quick):
    """roofline.html opened in headless Chromium: it renders without a console error, holds
    one ceiling per value of roofline.csv with that value, no point and the note saying
    why, loads nothing from elsewhere; a screenshot is kept in build/test-artifacts."""
    tmp_path, r = quick
    html = tmp_path / "out" / "roofline.html"
    text = html.read_text()
    assert "<script" not in text and "http://" not in text.replace(
        'xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in text
    dom = chromium(html, tmp_path / "profile", screenshot="roofline.png")
    row = read(tmp_path / "out" / "roofline.csv")
    drawn = dict(re.findall(r'<g class="ceiling" data-name="(\w+)" data-value="([^"]+)"', dom))
    assert set(drawn) == {n for n in CEILINGS if row[n]}
    assert all(abs(float(drawn[n]) - float(row[n])) <= 1e-5 * float(row[n]) + 1e-6
               for n in drawn)
    assert 'class="point"' not in dom
    assert "No kernel is placed on this plot" in dom


def test_bad_input_is_one_clear_line(tmp_path):
    cases = [
        (["--device", "99"], "roofline: --device 99: "),
        (["--device", "x"], "roofline: --device: 'x' is not a device number"),
        (["--experiments", "1"], "--experiments: '1' is not a whole number from 2"),
        (["--bogus"], "--bogus"),
        (["extra"], "'extra': no argument is taken"),
    ]
    cuda = os.path.exists(os.path.join(os.path.dirname(GPUPROF), "..", "lib", "gpuprof",
                                       "gpuprof-roofline-cuda"))
    for options, message in cases:
        r = roofline(tmp_path, *options)
        assert r.returncode == 2, (options, r.stderr)
        assert message in r.stderr and r.stderr.count("\n") == 1, (options, r.stderr)
    if cuda and not os.path.exists("/dev/nvidiactl"):  # built with CUDA, run without a GPU
        r = roofline(tmp_path, "--backend", "cuda")
        assert r.returncode == 1 and r.stderr == (
            "gpuprof: roofline: no CUDA device is usable here (no driver, no GPU, or one "
            "hidden by CUDA_VISIBLE_DEVICES)\n"), r.stderr
    # an OpenCL loader that finds no driver: no device, one line (no GPU here either)
    (tmp_path / "no-icd").mkdir()
    no_icd = {"OCL_ICD_VENDORS": str(tmp_path / "no-icd")}
    r = roofline(tmp_path, "--backend", "opencl", env=no_icd)
    assert r.returncode == 1 and r.stderr == (
        "gpuprof: roofline: no OpenCL device is usable here (no OpenCL driver is installed: "
        "PoCL runs OpenCL on the CPU)\n"), r.stderr
    if cuda and not os.path.exists("/dev/nvidiactl"):  # and without --backend: neither
        r = roofline(tmp_path, env=no_icd)
        assert r.returncode == 1 and r.stderr == (
            "gpuprof: roofline: no CUDA or OpenCL device is usable here (no NVIDIA GPU, and "
            "no OpenCL driver: PoCL runs OpenCL on the CPU)\n"), r.stderr
    (tmp_path / "file").write_text("")
    r = roofline(tmp_path, "--experiments", "2", directory="file/sub")
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
