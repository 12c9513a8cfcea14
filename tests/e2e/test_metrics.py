"""gpuprof sys: metrics over time of the machine, the traced processes and the GPUs (an
NVML test double, loaded through GPUPROF_NVML_LIBRARY as the real one is through
dlopen), through every output: database, JSON, pftrace and madengine's CSV files."""
import collections
import csv
import glob
import json
import os
import re
import sqlite3

import pytest

from conftest import GPUPROF, TESTS, outputs, run
from pftrace import Trace

DOUBLE = os.path.join(TESTS, "libnvml-double.so")
GROW = os.path.join(TESTS, "grow")
GIB = 1 << 30


def sys_run(tmp_path, options, command, env=None):
    r = run([GPUPROF, "sys", *options, "--", *command], cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    return r, out


@pytest.fixture(scope="module")
def grown(tmp_path_factory):
    """grow taking 1 GiB in 16 steps 100 ms apart, under gpuprof sys with the NVML double."""
    tmp = tmp_path_factory.mktemp("grow")
    r, out = sys_run(tmp, ["-f", "csv", "sqlite", "json", "pftrace"], [GROW, "1024", "16", "100"],
                     env={"GPUPROF_NVML_LIBRARY": DOUBLE})
    return tmp, r, out


def series(out):
    """(source, device, pid, name) -> [(time, value)] in time order, from the database."""
    rows = out.query("SELECT source, device, pid, name, unit, time, value FROM metrics ORDER BY id")
    found = collections.defaultdict(list)
    for x in rows:
        found[(x["source"], x["device"], x["pid"], x["name"])].append((x["time"], x["value"]))
    return found


def test_rss_rises_to_what_the_program_took(grown):
    _, r, out = grown
    assert "grow: 1024 MiB in 16 steps" in r.stdout
    s = series(out)
    rss = [v for _, v in s[("PROCESS", -1, out.pid, "RSS")]]
    assert max(rss) >= GIB  # 1 GiB touched, plus the program itself
    assert rss[0] < GIB / 4
    # it rises step by step: the highest value is reached late (how often a reading dips
    # on the way is the allocator's and the machine's doing: a sanitizer's allocator
    # gives memory back between steps)
    peak = rss.index(max(rss))
    assert peak > len(rss) // 2
    threads = {v for _, v in s[("PROCESS", -1, out.pid, "threads")]}
    assert threads and min(threads) >= 1


def test_series_are_sampled_at_the_interval(grown):
    _, _, out = grown
    memory = series(out)[("HOST", -1, None, "memory used")]
    span = (memory[-1][0] - memory[0][0]) / 1e6
    assert span > 1500  # the program ran 1.7 s
    expected = span / 50 + 1
    assert abs(len(memory) - expected) <= 0.1 * expected, (len(memory), expected)
    cpus = os.cpu_count()
    per_cpu = [k for k in series(out) if k[0] == "HOST" and k[3] == "CPU utilization"]
    assert sorted(k[1] for k in per_cpu) == list(range(-1, cpus))
    for key in per_cpu:
        values = [v for _, v in series(out)[key]]
        assert all(0 <= v <= 100 for v in values)


def test_gpu_metrics_through_nvml(grown):
    _, r, out = grown
    s = series(out)
    rounds = len(s[("GPU", 0, None, "power")])
    assert rounds > 10
    expected = {"power": 100, "temperature": 40, "SM clock": 1500, "memory clock": 2600,
                "utilization": 75, "memory bandwidth utilization": 30,
                "memory used": 20 * GIB, "memory used %": 25, "clock event reasons": 4}
    for gpu in (0, 1):
        for name, value in expected.items():
            offset = gpu if name in ("power", "temperature") else 0
            assert [v for _, v in s[("GPU", gpu, None, name)]] == [value + offset] * rounds, name
        # energy since sampling began: the double's counter grows 5 J a reading
        assert [v for _, v in s[("GPU", gpu, None, "energy")]] == [5.0 * i for i in range(rounds)]
    assert [v for _, v in s[("GPU", 0, None, "PCIe sent")]] == [1024000] * rounds
    assert [v for _, v in s[("GPU", 0, None, "PCIe received")]] == [2048000] * rounds
    # GPU 1 does not support PCIe throughput: no series, not zeros
    assert ("GPU", 1, None, "PCIe sent") not in s
    units = dict(((x["name"], x["unit"]) for x in
                  out.query("SELECT DISTINCT name, unit FROM metrics WHERE source = 'GPU'")))
    assert units["power"] == "W" and units["memory used"] == "bytes" and units["energy"] == "J"
    assert "GPU metrics are not sampled" not in r.stderr


def test_madengine_files(grown):
    tmp, r, out = grown
    s = series(out)
    for name, column, values in (("gpu_info_power_profiler_output.csv", "Power(Watt) GPU", (100, 101)),
                                 ("gpu_info_vram_profiler_output.csv", "vram(%) GPU", (25, 25))):
        path = tmp / name
        assert f"gpuprof:   ./{name}" in r.stderr
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        assert rows[0] == ["time", f"{column}0", f"{column}1"]
        assert len(rows) - 1 == len(s[("GPU", 0, None, "power")])
        for row in rows[1:]:
            assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}", row[0]), row[0]
            assert [float(v) for v in row[1:]] == list(values)


def test_timelines_carry_every_metric_value(grown):
    _, _, out = grown
    total = out.query("SELECT COUNT(*) AS n FROM metrics")[0]["n"]
    named = {}
    for key, values in series(out).items():
        source, device, pid, name = key
        unit = out.query("SELECT unit FROM metrics WHERE source = ? AND name = ? LIMIT 1",
                         source, name)[0]["unit"]
        prefix = {"GPU": f"GPU {device} ", "PROCESS": f"process {pid} "}.get(
            source, f"CPU {device} " if device >= 0 else "machine ")
        named[f"{prefix}{name} ({unit})"] = values
    assert sum(len(v) for v in named.values()) == total
    with open(out.path("results.json")) as f:
        events = [e for e in json.load(f)["traceEvents"] if e["ph"] == "C" and e["name"] in named]
    assert len(events) == total
    by_track = collections.defaultdict(list)
    for e in events:
        (value,) = e["args"].values()
        by_track[e["name"]].append(value)
    for name, values in named.items():
        assert by_track[name] == pytest.approx([v for _, v in values]), name
    pf = Trace(out.path("results.pftrace"))
    counters = {u: t for u, t in pf.tracks_of("counter").items() if t["name"] in named}
    assert len(counters) == len(named)
    assert {t["unit"] for t in counters.values()} >= {"W", "%", 3}  # 3: UNIT_SIZE_BYTES
    got = collections.defaultdict(list)
    for track, ts, value in pf.counters:
        if track in counters:
            got[counters[track]["name"]].append((ts, value))
    for name, values in named.items():
        assert got[name] == [(t, pytest.approx(v)) for t, v in values], name


def test_each_source_can_be_turned_off_and_trace_takes_them_too(tmp_path):
    env = {"GPUPROF_NVML_LIBRARY": DOUBLE}
    (tmp_path / "none").mkdir()
    r, out = sys_run(tmp_path / "none", ["--no-host-metrics", "--no-device-metrics"],
                     [GROW, "16", "2", "50"], env)
    assert out.query("SELECT COUNT(*) AS n FROM metrics") == [{"n": 0}]
    assert not glob.glob(str(tmp_path / "none" / "gpu_info_*"))
    (tmp_path / "host").mkdir()
    r, out = sys_run(tmp_path / "host", ["--no-device-metrics"], [GROW, "16", "2", "50"], env)
    sources = {x["source"] for x in out.query("SELECT DISTINCT source FROM metrics")}
    assert sources == {"HOST", "PROCESS"}
    (tmp_path / "trace").mkdir()
    r = run([GPUPROF, "trace", "--device-metrics", "--sampling-interval", "20", "--",
             GROW, "16", "2", "100"], cwd=tmp_path / "trace", env=env)
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path / "trace"))
    assert {x["source"] for x in out.query("SELECT DISTINCT source FROM metrics")} == {"GPU"}
    power = out.query("SELECT time FROM metrics WHERE name = 'power' AND device = 0 ORDER BY time")
    gaps = [b["time"] - a["time"] for a, b in zip(power, power[1:])]
    assert sorted(gaps)[len(gaps) // 2] == pytest.approx(20e6, rel=0.25)


def test_without_nvml_one_line_says_so_and_the_rest_runs(tmp_path):
    r, out = sys_run(tmp_path, [], [GROW, "16", "2", "50"],
                     {"GPUPROF_NVML_LIBRARY": str(tmp_path / "missing.so")})
    lines = [x for x in r.stderr.splitlines() if "GPU metrics" in x]
    assert len(lines) == 1 and "NVML cannot be loaded" in lines[0]
    sources = {x["source"] for x in out.query("SELECT DISTINCT source FROM metrics")}
    assert sources == {"HOST", "PROCESS"}
    if not os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"):
        assert r.stderr.count("CPU frequency is not sampled") == 1
        assert out.query("SELECT COUNT(*) AS n FROM metrics WHERE name = 'CPU frequency'") == [{"n": 0}]


@pytest.mark.parametrize("value", ["0", "-5", "12x", "3600001", ""])
def test_a_bad_interval_is_a_usage_error(tmp_path, value):
    r = run([GPUPROF, "sys", "--sampling-interval", value, "--", GROW, "1", "1", "1"], cwd=tmp_path)
    assert r.returncode == 2
    assert f"--sampling-interval: '{value}' is not a whole number of milliseconds" in r.stderr
    assert os.listdir(tmp_path) == []


def test_merge_keeps_the_metrics(grown, tmp_path):
    _, _, out = grown
    db = out.path("results.db")
    r = run([GPUPROF, "merge", db, db.replace("results.db", "results.db"), "-o",
             str(tmp_path / "all.db")], cwd=tmp_path)
    # the same recording twice is merged once (with a warning): its metrics once
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(tmp_path / "all.db")
    assert con.execute("SELECT COUNT(*) FROM metrics").fetchone()[0] == \
        out.query("SELECT COUNT(*) AS n FROM metrics")[0]["n"]


def test_summary_gives_the_range_of_every_series(grown):
    _, _, out = grown
    r = run([GPUPROF, "summary", "--format", "json", out.path("results.db")], cwd=os.path.dirname(out.prefix))
    assert r.returncode == 0, r.stderr
    (table,) = [t for t in json.loads(r.stdout) if t["name"] == "metrics"]
    assert table["columns"] == ["Input", "Source", "Device", "Pid", "Name", "Unit", "Samples",
                                "Min", "Avg", "Max"]
    # the device column is empty where the series has none (the machine as a whole)
    rows = {(x[1], -1 if x[2] is None else x[2], x[3], x[4]): x for x in table["rows"]}
    assert len(rows) == len(series(out))
    for key, values in series(out).items():
        row = rows[key]
        numbers = [v for _, v in values]
        assert row[6] == len(numbers)
        # two decimals, and 15 significant digits (a sanitized process maps terabytes)
        assert row[7] == pytest.approx(min(numbers), rel=1e-14, abs=0.01)
        assert row[8] == pytest.approx(sum(numbers) / len(numbers), rel=1e-14, abs=0.01)
        assert row[9] == pytest.approx(max(numbers), rel=1e-14, abs=0.01)
    assert rows[("GPU", 1, None, "power")][7:] == [101, 101, 101]


def test_avail_lists_the_metrics_of_this_machine(tmp_path):
    r = run([GPUPROF, "avail"], cwd=tmp_path, env={"GPUPROF_NVML_LIBRARY": DOUBLE})
    assert r.returncode == 0, r.stderr
    lines = [x.strip() for x in r.stdout.splitlines() if x.strip().startswith(("host metrics", "device metrics"))]
    assert lines[0].startswith(f"host metrics: per-CPU utilization ({os.cpu_count()} CPUs")
    gpus = [x for x in lines if x.startswith("device metrics: GPU")]
    assert [x.split(":")[1].strip() for x in gpus] == ["GPU 0 Test GPU 0", "GPU 1 Test GPU 1"]
    assert "PCIe sent (not supported)" in gpus[1] and "(not supported)" not in gpus[0]
    r = run([GPUPROF, "avail"], cwd=tmp_path, env={"GPUPROF_NVML_LIBRARY": "/nonexistent.so"})
    assert "device metrics: none: NVML cannot be loaded" in r.stdout


def test_query_joins_metrics_and_reads_a_database_older_than_them(grown, tmp_path):
    _, _, out = grown
    old = tmp_path / "old.db"
    con = sqlite3.connect(out.path("results.db"))
    con.execute("VACUUM INTO ?", (str(old),))
    con.close()
    con = sqlite3.connect(old)  # as schema 3.0 wrote it: no metric tables
    con.executescript("DROP VIEW metrics; DROP TABLE gpuprof_metric; DROP TABLE gpuprof_metric_series; "
                      "UPDATE gpuprof_metadata SET value = '3.0.0' WHERE tag = 'schema_version';")
    con.commit()
    con.close()
    total = out.query("SELECT COUNT(*) AS n FROM metrics")[0]["n"]
    r = run([GPUPROF, "query", out.path("results.db"), str(old), "--format", "csv", "--sql",
             "SELECT db, COUNT(*) FROM metrics GROUP BY db; SELECT db, COUNT(*) FROM kernels GROUP BY db"],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert f"0,{total}" in lines and not any(x.startswith("1,") and x != "1,0" for x in lines[:3])
    r = run([GPUPROF, "convert", "-f", "pftrace", "-d", str(tmp_path), str(old)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    pf = Trace(str(tmp_path / "old_results.pftrace"))
    assert not [t for t in pf.tracks_of("counter").values() if t["unit"] != 3]


def test_a_generated_configuration_runs_and_the_command_line_overrides_it(tmp_path):
    r = run([GPUPROF, "avail", "-G", str(tmp_path / "sys.yaml")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "sys.yaml").read_text()
    live = [x for x in text.splitlines() if x and not x.startswith("#")]
    assert live == ["sys-trace: true", "sample: true", "sampling-freq: 300", "host-metrics: true",
                    "device-metrics: true", "sampling-interval: 50"]
    assert "# kernel-include-regex: REGEX" in text
    edited = text.replace("device-metrics: true", "device-metrics: false").replace(
        "sampling-interval: 50", "sampling-interval: 20")
    (tmp_path / "edited.yaml").write_text(edited)
    env = {"GPUPROF_NVML_LIBRARY": DOUBLE}
    (tmp_path / "a").mkdir()
    r, out = sys_run(tmp_path / "a", ["-c", str(tmp_path / "edited.yaml")], [GROW, "16", "2", "200"], env)
    assert {x["source"] for x in out.query("SELECT DISTINCT source FROM metrics")} == {"HOST", "PROCESS"}
    memory = out.query("SELECT time FROM metrics WHERE name = 'memory used' ORDER BY time")
    gaps = sorted(b["time"] - a["time"] for a, b in zip(memory, memory[1:]))
    assert gaps[len(gaps) // 2] == pytest.approx(20e6, rel=0.25)
    (tmp_path / "b").mkdir()  # the command line over the file
    r, out = sys_run(tmp_path / "b", ["-c", str(tmp_path / "edited.yaml"), "--device-metrics"],
                     [GROW, "16", "2", "100"], env)
    assert "GPU" in {x["source"] for x in out.query("SELECT DISTINCT source FROM metrics")}
    (tmp_path / "jobs.yaml").write_text("jobs:\n  - kernel-trace: true\n  - sys-trace: true\n")
    r = run([GPUPROF, "sys", "-c", str(tmp_path / "jobs.yaml"), "--", GROW, "1", "1", "1"], cwd=tmp_path / "b")
    assert r.returncode == 2 and "holds 2 jobs: a configuration file is one" in r.stderr


def test_a_process_counts_the_context_switches_of_every_thread(tmp_path):
    # 61: /proc/PID/status counts the first thread's switches only; a process's are its
    # threads' summed (those that ended as last seen), gpuprof's own left out. switches
    # sleeps on its first thread and switches on three others: a sleeper (100 sleeps)
    # and two spinners sharing one CPU; each says its own count (getrusage)
    r, out = sys_run(tmp_path, ["--no-sample", "--sampling-interval", "20"],
                     [os.path.join(TESTS, "switches")])
    said = [(who, int(v), int(i)) for who, v, i in
            re.findall(r"switches: (\w+) (\d+) (\d+)", r.stdout)]
    assert sorted(who for who, _, _ in said) == ["sleeper", "spinner", "spinner"], r.stdout
    s = series(out)

    def counted(name):
        # a rate per second at each reading, over the time since the one before: the
        # switches between the first reading and the last
        points = s[("PROCESS", -1, out.pid, name)]
        assert len(points) >= 20, points
        return sum(v * (t - t0) / 1e9 for (t0, _), (t, v) in zip(points, points[1:]))

    # the sleeper's sleeps, on another thread than the first, made while looked at
    (slept,) = [v for who, v, _ in said if who == "sleeper"]
    assert slept >= 100
    voluntary = counted("voluntary context switches")
    assert voluntary >= slept - 0.5, (voluntary, said)
    # the spinners took the CPU from each other
    spun = sum(i for who, _, i in said if who == "spinner")
    involuntary = counted("involuntary context switches")
    assert spun > 0 and involuntary >= spun - 0.5, (involuntary, said)
