"""Communication on the devices: NCCL's kernels against the compute kernels beside them
(analysis/communication.h), on generated recordings with exact times: gpuprof summary's
COMMUNICATION table, the report's section, and advise's exposed-communication finding,
at its threshold and not on the overlapped version."""
import json

from conftest import GPUPROF, advise_findings, csv_table, recording, run

US = 1000
HEAD = ["process pid=4242 command=train", "agent id=0 type=cpu name=Host",
        'agent id=1 name="Test GPU"', "queue id=1 agent=1", "queue id=2 agent=1",
        "queue id=3 agent=1"]
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def steps(count, period, compute, communication, extra=()):
    """Each step at t = 1 ms + i * period: a compute kernel on queue 1 over
    [t + compute[0], t + compute[1]] and an all-reduce on queue 2 over
    [t + communication[0], t + communication[1]] (us); extra: (step, queue, name, from,
    to) kernels added to a step."""
    lines, t = list(HEAD), 1_000_000
    for i in range(count):
        lines += [f"kernel name=gemm queue=1 start={t + compute[0] * US} "
                  f"end={t + compute[1] * US}",
                  f'kernel name="{ALLREDUCE}" queue=2 start={t + communication[0] * US} '
                  f"end={t + communication[1] * US}"]
        lines += [f'kernel name="{name}" queue={q} start={t + a * US} end={t + b * US}'
                  for step, q, name, a, b in extra if step == i]
        t += period * US
    return lines + [f"end time={t}"]


# ten steps of 1 ms: gemm 0-300 us, all-reduce 200-500 us (100 us beside gemm, 200 alone);
# step 0 has a second compute kernel 250-350 us on its own queue, beside both (overlap
# 200-350: 150 us; compute 0-350); step 1 a send/receive 400-600 us overlapping the
# all-reduce (communication 200-600: 400 us, 300 alone)
EXTRA = [(0, 3, "softmax", 250, 350), (1, 3, "void ncclKernel_SendRecv(ncclWorkElem)", 400, 600)]
COMMUNICATION = 9 * 300 + 400
OVERLAPPED = 9 * 100 + 150
COMPUTE = 9 * 300 + 350


findings = advise_findings


def test_communication_overlapped_and_exposed_exact(tmp_path):
    db = recording(tmp_path / "run", steps(10, 1000, (0, 300), (200, 500), EXTRA))
    s = run([GPUPROF, "summary", "-u", "usec", "--format", "csv", db], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    (row,) = csv_table(s.stdout, "# COMMUNICATION (")
    assert (row["Pid"], row["Device"], row["Communication kernels"], row["Compute kernels"]) \
        == ("4242", "Test GPU", "11", "11")
    assert (float(row["Communication (usec)"]), float(row["Overlapped (usec)"]),
            float(row["Exposed (usec)"]), float(row["Compute (usec)"])) == \
        (COMMUNICATION, OVERLAPPED, COMMUNICATION - OVERLAPPED, COMPUTE)
    assert row["Exposed %"] == f"{100 * (COMMUNICATION - OVERLAPPED) / COMMUNICATION:.2f}"

    found = findings(tmp_path, db)
    assert set(found) == {"exposed-communication"}, found
    f = found["exposed-communication"]
    assert f["Cost_ns"] == (COMMUNICATION - OVERLAPPED) * US
    assert f["Finding"] == (
        "GPU 1 (Test GPU) ran communication kernels alone, with no compute kernel beside "
        f"them, for 2.050 ms: {100 * 2050 / 3100:.1f} % of their 3.100 ms, and "
        f"{100 * 2050 / 9500:.1f} % of its kernels' span 9.500 ms")
    assert "11 communication kernels ran 3.100 ms, overlapped with compute for 1.050 ms" \
        in f["Evidence"]
    # the compute not already beside communication (3.050 - 1.050 ms) could hide it all
    assert "overlapping could hide up to 2.000 ms of the exposed time" in f["Evidence"]

    page = tmp_path / "page.html"
    r = run([GPUPROF, "report", "-o", str(page), db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    section = html.split('<section id="communication">')[1].split("</section>")[0]
    assert '<table data-table="communication">' in section
    assert '<a href="#communication">Communication</a>' in html


def test_overlapped_communication_is_no_finding(tmp_path):
    # the all-reduce inside the gemm's time: overlapped whole, nothing exposed
    db = recording(tmp_path / "run", steps(10, 1000, (0, 300), (100, 300)))
    s = run([GPUPROF, "summary", "-u", "usec", "--format", "csv", db], cwd=tmp_path)
    (row,) = csv_table(s.stdout, "# COMMUNICATION (")
    assert (float(row["Communication (usec)"]), float(row["Overlapped (usec)"]),
            float(row["Exposed (usec)"])) == (2000, 2000, 0)
    assert findings(tmp_path, db) == {}


def test_exposed_communication_at_its_threshold(tmp_path):
    """Ten steps, the all-reduce after the gemm: exposed 10 x e us against a span of
    9 x period + 300 + e us; the finding needs 1 ms and 5 % of the span. With steps of
    2 ms it fires from e = 100 us (1 ms, 5.4 %), not at e = 99 (0.99 ms); with steps of
    3 ms, e = 140 (1.4 ms) is 5.15 % of the span and fires, e = 130 (1.3 ms) 4.79 % and
    does not."""
    for period, exposed, fires in ((2000, 99, False), (2000, 100, True), (3000, 130, False),
                                   (3000, 140, True)):
        span = 9 * period + 300 + exposed
        assert (10 * exposed >= 1000 and 10 * exposed >= 0.05 * span) == fires
        db = recording(tmp_path / f"e{period}-{exposed}",
                       steps(10, period, (0, 300), (300, 300 + exposed)))
        found = findings(tmp_path, db)
        assert set(found) == ({"exposed-communication"} if fires else set()), (exposed, found)
        if fires:
            assert found["exposed-communication"]["Cost_ns"] == 10 * exposed * US


def test_no_communication_no_table(tmp_path):
    lines = list(HEAD) + ["kernel name=gemm queue=1 start=1000000 end=2000000",
                          "end time=3000000"]
    db = recording(tmp_path / "run", lines)
    s = run([GPUPROF, "summary", "--format", "csv", db], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    assert csv_table(s.stdout, "# COMMUNICATION (") == []
    assert "COMMUNICATION" not in s.stdout


MIB = 1 << 20


def nccl_run():
    """Four all-reduces of 8 MiB on 4 ranks, each launching its kernel (400 us) from its
    call; a group of two all-reduces of 1 MiB whose ncclGroupEnd launches two kernels
    (launch points, no API call: 100-300 and 250-350 us, 250 us merged); a group of a
    send and a receive of 1 MiB (200 us); a compute kernel launched outside any call, and
    one launched by another thread during an all-reduce: neither tied."""
    lines, t = list(HEAD), 1_000_000
    mpi = "mpi domain=nccl comm=world size=4"
    for i in range(4):
        lines += [f"{mpi} name=ncclAllReduce start={t} end={t + 50 * US} sent={8 * MIB} "
                  f"received={8 * MIB}",
                  f"api name=cudaLaunchKernel domain=cuda start={t + 10 * US} end={t + 20 * US}",
                  f'kernel name="{ALLREDUCE}" queue=2 start={t + 100 * US} end={t + 500 * US}']
        t += 1000 * US
    lines += ["api name=cudaLaunchKernel domain=cuda tid=7 start=1015000 end=1016000",
              "kernel name=other_thread queue=1 tid=7 start=1020000 end=1030000"]
    lines += [f"{mpi} name=ncclGroupStart start={t} end={t + 1 * US}",
              f"{mpi} name=ncclAllReduce start={t + 2 * US} end={t + 5 * US} sent={MIB} "
              f"received={MIB}",
              f"{mpi} name=ncclAllReduce start={t + 6 * US} end={t + 9 * US} sent={MIB} "
              f"received={MIB}",
              f"{mpi} name=ncclGroupEnd start={t + 10 * US} end={t + 60 * US}",
              f"launch time={t + 20 * US}",
              f'kernel name="{ALLREDUCE}" queue=2 start={t + 100 * US} end={t + 300 * US}',
              f"launch time={t + 30 * US}",
              f'kernel name="{ALLREDUCE}" queue=3 start={t + 250 * US} end={t + 350 * US}']
    t += 1000 * US
    lines += [f"{mpi} name=ncclGroupStart start={t} end={t + 1 * US}",
              f"{mpi} name=ncclSend start={t + 2 * US} end={t + 5 * US} peer=1 sent={MIB}",
              f"{mpi} name=ncclRecv start={t + 6 * US} end={t + 9 * US} peer=3 received={MIB}",
              f"{mpi} name=ncclGroupEnd start={t + 10 * US} end={t + 60 * US}",
              f"api name=cudaLaunchKernel domain=cuda start={t + 20 * US} end={t + 25 * US}",
              f'kernel name="ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)" '
              f"queue=2 start={t + 100 * US} end={t + 300 * US}"]
    t += 1000 * US
    lines += [f"api name=cudaLaunchKernel domain=cuda start={t} end={t + 10 * US}",
              f"kernel name=gemm queue=1 start={t + 20 * US} end={t + 520 * US}",
              f"end time={t + 1000 * US}"]
    return lines


def test_nccl_calls_tied_to_their_kernels_with_nccl_tests_bandwidths(tmp_path):
    import sqlite3
    db = recording(tmp_path / "run", nccl_run())
    with sqlite3.connect(db) as c:
        tied = c.execute("SELECT s.string, k.call_id FROM gpuprof_kernel k JOIN gpuprof_string s "
                         "ON s.id = k.name_id ORDER BY k.start, k.id").fetchall()
    # the calls are numbered in order: all-reduces 1-4, the first group 5-8 (its
    # ncclGroupEnd 8), the second 9-12
    assert tied[0] == ("other_thread", 0) and tied[-1] == ("gemm", 0)
    assert [call for _, call in tied] == [0, 1, 2, 3, 4, 8, 8, 12, 0]
    # the timelines: each kernel names its call by the correlation_id of the call's slice
    r = run([GPUPROF, "convert", "-f", "json", db], cwd=tmp_path / "run")
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "run" / "4242_results.json") as f:
        slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    calls = {e["args"]["correlation_id"]: e["name"] for e in slices if e["cat"] == "NCCL_API"}
    kernels = [(e["name"], e["args"].get("nccl_call_id")) for e in slices
               if e["cat"] == "KERNEL_DISPATCH"]
    assert [calls.get(call) for _, call in kernels] == \
        [None] + ["ncclAllReduce"] * 4 + ["ncclGroupEnd"] * 3 + [None]
    assert [call for _, call in kernels] == [None, 1, 2, 3, 4, 8, 8, 12, None]
    s = run([GPUPROF, "summary", "-u", "usec", "--format", "csv", db], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    rows = {r["Function"]: r for r in csv_table(s.stdout, "# COMMUNICATION CALLS")}
    assert set(rows) == {"ncclAllReduce", "ncclSend+ncclRecv"}
    allreduce, sendrecv = rows["ncclAllReduce"], rows["ncclSend+ncclRecv"]
    device = 4 * 400 + 250
    assert [allreduce[k] for k in ("Ranks", "Operations", "Calls", "Kernels", "Bytes")] == \
        ["4", "5", "6", "6", str(34 * MIB)]
    assert float(allreduce["Device time (usec)"]) == device
    algbw = 34 * MIB / (device * US)  # bytes per ns: GB/s
    assert allreduce["Algorithm bandwidth (GB/s)"] == f"{algbw:.3f}"
    assert allreduce["Bus bandwidth (GB/s)"] == f"{algbw * 2 * 3 / 4:.3f}"
    # a send and a receive of one 1 MiB buffer: 1 MiB moved each way, as nccl-tests'
    # sendrecv counts it
    assert [sendrecv[k] for k in ("Ranks", "Operations", "Calls", "Kernels", "Bytes")] == \
        ["4", "1", "2", "1", str(MIB)]
    assert float(sendrecv["Device time (usec)"]) == 200
    assert sendrecv["Algorithm bandwidth (GB/s)"] == sendrecv["Bus bandwidth (GB/s)"] == \
        f"{MIB / (200 * US):.3f}"


def test_an_all_to_all_of_sends_and_receives_has_nccl_tests_alltoall_bandwidth(tmp_path):
    """A group of a send to and a receive from each of 4 ranks, itself included (PyTorch's
    all_to_all), 1 MiB each, its kernel 400 us: nccl-tests' alltoall, 4 MiB at a bus
    bandwidth 3/4 of the algorithm's; groups of as many sends and receives with one peer,
    or with peers 0, 0, 3, 3 (their sum that of 0-3's), stay sends and receives (factor
    1)."""
    lines, t = list(HEAD), 1_000_000
    mpi = "mpi domain=nccl comm=world size=4"
    for peers in ((0, 1, 2, 3), (1, 1, 1, 1), (0, 0, 3, 3)):
        lines.append(f"{mpi} name=ncclGroupStart start={t} end={t + 1 * US}")
        for i, peer in enumerate(peers):
            at = t + (2 + 4 * i) * US
            lines += [f"{mpi} name=ncclSend start={at} end={at + 1 * US} peer={peer} sent={MIB}",
                      f"{mpi} name=ncclRecv start={at + 2 * US} end={at + 3 * US} peer={peer} "
                      f"received={MIB}"]
        lines += [f"{mpi} name=ncclGroupEnd start={t + 20 * US} end={t + 60 * US}",
                  f"api name=cudaLaunchKernel domain=cuda start={t + 30 * US} end={t + 35 * US}",
                  f'kernel name="ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)" '
                  f"queue=2 start={t + 100 * US} end={t + 500 * US}"]
        t += 1000 * US
    db = recording(tmp_path / "run", lines + [f"end time={t}"])
    s = run([GPUPROF, "summary", "-u", "usec", "--format", "csv", db], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    rows = {r["Function"]: r for r in csv_table(s.stdout, "# COMMUNICATION CALLS")}
    assert set(rows) == {"all-to-all (ncclSend+ncclRecv)", "ncclSend+ncclRecv"}
    algbw = 4 * MIB / (400 * US)
    for name, factor, ops in (("all-to-all (ncclSend+ncclRecv)", 3 / 4, 1),
                              ("ncclSend+ncclRecv", 1, 2)):
        row = rows[name]
        assert [row[k] for k in ("Ranks", "Operations", "Calls", "Kernels", "Bytes")] == \
            ["4", str(ops), str(8 * ops), str(ops), str(4 * MIB * ops)]
        assert float(row["Device time (usec)"]) == 400 * ops
        assert row["Algorithm bandwidth (GB/s)"] == f"{algbw:.3f}"
        assert row["Bus bandwidth (GB/s)"] == f"{algbw * factor:.3f}"
