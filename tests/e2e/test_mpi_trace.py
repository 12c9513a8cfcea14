"""--mpi-trace: the bundled MPI program of known shape (samples/mpi/halo.c) under
`mpirun -n 4` with Debian's Open MPI (and MPICH where installed), each rank on PoCL: the
calls, bytes, peers and tags per rank exact, the collectives numbered alike on every rank,
each message paired with its receive, the clocks' offsets, and the cross-rank analysis
(the straggler, the waits computed from the sleeps the program makes)."""
import json
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import GPUPROF, HOST, SAMPLES, csv_table, preload, run

OPENMPI_RUN = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
MPICH_RUN = shutil.which("mpirun.mpich")
HALO = os.path.join(SAMPLES, "mpi", "halo")
HALO_MPICH = os.path.join(SAMPLES, "mpi", "halo-mpich")
LIBDIR = os.path.join(os.path.dirname(os.path.dirname(GPUPROF)), "lib", "gpuprof")
pytestmark = pytest.mark.skipif(
    not OPENMPI_RUN or not os.path.exists(HALO),
    reason="Open MPI or its headers not installed (Debian packages openmpi-bin, libopenmpi-dev "
           "in scripts/debian-packages.txt): no MPI sample was built")

RANKS, STEPS = 4, 3
EXTRA_MS, BASE_MS, LATE_MS = 300, 20, 200  # the straggler's extra sleep per step, ...
HALO_DOUBLES = 1024
STRAGGLER = RANKS - 1


SANITIZER = os.environ.get("GPUPROF_SANITIZER")
# ThreadSanitizer's runtime in an MPICH program: it ends in SIGSEGV at exit, gpuprof or
# not (seen with `trace --kernel-trace` alone)
mpich_runs = pytest.mark.skipif(
    not MPICH_RUN or not os.path.exists(HALO_MPICH) or SANITIZER == "thread",
    reason="MPICH or its headers not installed (Debian packages mpich, libmpich-dev)"
    if SANITIZER != "thread" else "MPICH programs crash at exit under ThreadSanitizer's runtime")


def mpi_env(env=None):
    """The environment of an MPI program (or summary --mpi's helper, an MPI program too):
    what Open MPI and MPICH leave allocated at exit is theirs, not checked for leaks."""
    if SANITIZER != "address":
        return env
    return dict(env or {}, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def halo_run(tmp_path, launcher, program, options=(), env=None, ranks=RANKS):
    env = mpi_env(env)
    args = [launcher]
    if "openmpi" in os.path.basename(os.path.realpath(launcher)) or launcher == OPENMPI_RUN:
        args += ["--allow-run-as-root", "--oversubscribe"]
    args += ["-n", str(ranks), GPUPROF, "trace", "--mpi-trace", "--kernel-trace", "-d", "out",
             "-o", "rank%rank%", *options, "--", program, "-s", str(STEPS), "-e",
             str(EXTRA_MS), "-b", str(BASE_MS), "-l", str(LATE_MS), "-n", str(HALO_DOUBLES)]
    r = run(args, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def calls(db, sql="SELECT * FROM mpi_calls ORDER BY call_id"):
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        return [dict(row) for row in con.execute(sql)]


def expected_counts(rank):
    counts = {"MPI_Init": 1, "MPI_Allreduce": STEPS + 1, "MPI_Irecv": 2 * STEPS,
              "MPI_Isend": 2 * STEPS, "MPI_Waitall": STEPS, "MPI_Bcast": 1,
              "MPI_Comm_split": 2, "MPI_Comm_dup": 1, "MPI_Comm_free": 2 + (rank != 0),
              "MPI_Barrier": 3, "MPI_Finalize": 1}
    if rank == 0:
        counts["MPI_Send"] = 1
    if rank == 1:
        counts["MPI_Recv"] = 1
    return counts


def check_rank(db, rank):
    """Every call of one rank as the program made it."""
    rows = calls(db)
    assert {r["rank"] for r in rows} == {rank}
    counts = {}
    for r in rows:
        counts[r["function"]] = counts.get(r["function"], 0) + 1
    assert counts == expected_counts(rank)
    assert (rows[0]["function"], rows[-1]["function"]) == ("MPI_Init", "MPI_Finalize")
    assert [r["call_id"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(r["result"] == 0 for r in rows)
    left, right = (rank + RANKS - 1) % RANKS, (rank + 1) % RANKS
    halo_bytes = 8 * HALO_DOUBLES
    isends = [(r["peer"], r["tag"], r["bytes_sent"], r["bytes_received"])
              for r in rows if r["function"] == "MPI_Isend"]
    assert isends == [(right, 7, halo_bytes, 0), (left, 8, halo_bytes, 0)] * STEPS
    irecvs = [r for r in rows if r["function"] == "MPI_Irecv"]
    assert [(r["peer"], r["tag"], r["bytes_received"]) for r in irecvs] == \
        [(left, 7, halo_bytes), (right, 8, halo_bytes)] * STEPS
    waitalls = {r["call_id"]: r for r in rows if r["function"] == "MPI_Waitall"}
    for r in irecvs + [r for r in rows if r["function"] == "MPI_Isend"]:
        assert r["request"] > 0 and r["completed_by"] in waitalls  # tied to its wait
        assert r["completed"] == waitalls[r["completed_by"]]["end"]
    world = [r for r in rows if r["communicator"] == "MPI_COMM_WORLD" and r["sequence"] > 0]
    # the collectives on the world, numbered in order: a barrier, STEPS all-reduces, the
    # broadcast, two splits, the copy, a barrier
    assert [(r["function"], r["sequence"]) for r in world] == \
        [("MPI_Barrier", 1)] + [("MPI_Allreduce", i + 2) for i in range(STEPS)] + \
        [("MPI_Bcast", STEPS + 2), ("MPI_Comm_split", STEPS + 3), ("MPI_Comm_split", STEPS + 4),
         ("MPI_Comm_dup", STEPS + 5), ("MPI_Barrier", STEPS + 6)]
    assert all(r["communicator_size"] == RANKS for r in world)
    assert [r["bytes_sent"] for r in world if r["function"] == "MPI_Allreduce"] == [8] * STEPS
    bcast = next(r for r in world if r["function"] == "MPI_Bcast")
    assert (bcast["root"], bcast["bytes_sent"], bcast["bytes_received"]) == \
        ((0, 64, 0) if rank == 0 else (0, 0, 64))
    # the communicator split by parity: named alike on its two members
    # the split leaving rank 0 out counts on rank 0 too: the copy after it is the third
    # communicator made from the world on every rank
    made = [r for r in rows if (r["communicator"] or "").startswith("MPI_COMM_WORLD/")]
    assert [(r["function"], r["communicator"], r["communicator_size"], r["sequence"])
            for r in made] == \
        [("MPI_Allreduce", f"MPI_COMM_WORLD/1@{rank % 2}", 2, 1),
         ("MPI_Comm_free", f"MPI_COMM_WORLD/1@{rank % 2}", 2, 2),
         ("MPI_Barrier", "MPI_COMM_WORLD/3@0", RANKS, 1),
         ("MPI_Comm_free", "MPI_COMM_WORLD/3@0", RANKS, 2)] + \
        ([("MPI_Comm_free", "MPI_COMM_WORLD/2@1", RANKS - 1, 1)] if rank else [])
    if rank == 0:
        (send,) = [r for r in rows if r["function"] == "MPI_Send"]
        assert (send["peer"], send["tag"], send["bytes_sent"]) == (1, 99, 12)
    if rank == 1:  # received from any source: the status says rank 0
        (recv,) = [r for r in rows if r["function"] == "MPI_Recv"]
        assert (recv["peer"], recv["tag"], recv["bytes_received"]) == (0, 99, 12)
    with sqlite3.connect(db) as con:
        syncs = con.execute("SELECT rank, size, offset, round_trip FROM clock_syncs "
                            "ORDER BY local_time").fetchall()
        assert con.execute("SELECT COUNT(*) FROM kernels").fetchone() == (STEPS + 1,)
    assert [(s[0], s[1]) for s in syncs] == [(rank, RANKS)] * 2  # at MPI_Init, at MPI_Finalize
    for _, _, offset, round_trip in syncs:
        if rank == 0:
            assert (offset, round_trip) == (0, 0)
        else:  # one host, one clock: the offset is within half the exchange's round trip
            assert round_trip > 0 and abs(offset) <= round_trip // 2 + 1
    return rows


def message_flows(tmp_path, merged):
    """The merged run's timeline (json): its messages' flows, by id, their starts and
    their ends."""
    c = run([GPUPROF, "convert", "-f", "json", merged], cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    with open(tmp_path / "all_results.json") as f:
        events = json.load(f)["traceEvents"]
    flows = [e for e in events if e.get("cat") == "message"]
    return ({e["id"]: e for e in flows if e["ph"] == "s"},
            {e["id"]: e for e in flows if e["ph"] == "f"})


def test_four_ranks_open_mpi(tmp_path):
    r = halo_run(tmp_path, OPENMPI_RUN, HALO)
    out = tmp_path / "out"
    for rank in range(RANKS):
        assert f"rank {rank} of {RANKS}" in r.stdout
        rows = check_rank(str(out / f"rank{rank}_results.db"), rank)
        with open(out / f"rank{rank}_mpi_api_trace.csv") as f:
            lines = f.read().splitlines()
        assert lines[0].startswith('"Domain","Function","Process_Id","Thread_Id",'
                                   '"Correlation_Id","Start_Timestamp","End_Timestamp",'
                                   '"Communicator"'), lines[:1]
        assert len(lines) == 1 + len(rows)
        assert all(line.startswith('"MPI_API","MPI_') for line in lines[1:])

    merged = str(tmp_path / "all.db")
    m = run([GPUPROF, "merge", "-o", merged, *[str(out / f"rank{k}_results.db")
                                               for k in range(RANKS)]], cwd=tmp_path)
    assert m.returncode == 0, m.stderr
    rows = calls(merged)
    # the waits at each world all-reduce: every rank but the straggler waited for it
    # the straggler's extra sleep (within 20 %); the straggler arrived last
    for step in range(2, STEPS + 2):
        instance = [r for r in rows if r["function"] == "MPI_Allreduce"
                    and r["communicator"] == "MPI_COMM_WORLD" and r["sequence"] == step]
        assert sorted(r["rank"] for r in instance) == list(range(RANKS))
        last = max(instance, key=lambda r: r["start"])
        assert last["rank"] == STRAGGLER
        for r in instance:
            if r["rank"] != STRAGGLER:
                wait_ms = (last["start"] - r["start"]) / 1e6
                assert abs(wait_ms - EXTRA_MS) <= 0.2 * EXTRA_MS, (step, r["rank"], wait_ms)

    s = run([GPUPROF, "summary", "--format", "csv", merged], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    per_rank = {int(row["Rank"]): row for row in csv_table(s.stdout, "# MPI RANKS")}
    assert sorted(per_rank) == list(range(RANKS))
    for rank, row in per_rank.items():
        assert int(row["Calls"]) == sum(expected_counts(rank).values())
        waited_ms = float(row["Waiting (nsec)"]) / 1e6
        if rank != STRAGGLER:  # the all-reduces' waits, then some at the end
            assert waited_ms >= 0.8 * STEPS * EXTRA_MS
    top = csv_table(s.stdout, "# MPI LATE SENDERS")[0]
    assert (top["Sender"], top["Receiver"], top["Tag"], top["Messages"]) == ("0", "1", "99", "1")
    assert abs(float(top["Waited (nsec)"]) / 1e6 - LATE_MS) <= 0.2 * LATE_MS

    # the same analysis where the ranks ran, each rank reading its own recording under the
    # launcher, the ranks reducing over MPI: the same tables, to the nanosecond
    d = run([OPENMPI_RUN, "--allow-run-as-root", "--oversubscribe", "-n", str(RANKS), GPUPROF,
             "summary", "--mpi", "--format", "csv", str(out / "rank%rank%_results.db")],
            cwd=tmp_path, env=mpi_env(), timeout=300)
    assert d.returncode == 0, d.stdout + d.stderr
    mpi_tables = [b for b in s.stdout.strip().split("\n\n") if b.startswith("# MPI ")]
    assert len(mpi_tables) == 4  # ranks, calls and the device, collectives, late senders
    assert d.stdout.strip().split("\n\n") == mpi_tables

    a = run([GPUPROF, "advise", merged], cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    assert "[mpi-imbalance]" in a.stdout
    assert f"Rank {STRAGGLER} holds the others back: it arrived last at" in a.stdout

    # the merged timeline: every message a flow from its send to its receive's end
    starts, ends = message_flows(tmp_path, merged)
    messages = RANKS * 2 * STEPS + 1
    assert len(starts) == len(ends) == messages and set(starts) == set(ends)
    pids = {r["rank"]: r["pid"] for r in rows}
    pairs = sorted((starts[i]["pid"], ends[i]["pid"]) for i in starts)
    expected = sorted([(pids[k], pids[(k + 1) % RANKS]) for k in range(RANKS)] * STEPS +
                      [(pids[k], pids[(k - 1) % RANKS]) for k in range(RANKS)] * STEPS +
                      [(pids[0], pids[1])])
    assert pairs == expected

    if shutil.which("otf2-print"):
        check_otf2(tmp_path, merged, rows)


def check_otf2(tmp_path, merged, rows):
    """The merged run as OTF2, read back by OTF2's own otf2-print: every call a region,
    every message and collective present, and each message's two ends agreeing."""
    c = run([GPUPROF, "convert", "-f", "otf2", merged], cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    assert "merge" not in c.stderr, c.stderr
    # 61: one rank's archive alone is said to lack the others' sides
    one = run([GPUPROF, "convert", "-f", "otf2", "-d", "one",
               str(tmp_path / "out" / "rank1_results.db")], cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert f"rank 1 of a job of {RANKS} ranks alone" in one.stderr and \
        "`gpuprof merge` the ranks' databases" in one.stderr, one.stderr
    p = run(["otf2-print", str(tmp_path / "all_otf2" / "traces.otf2")], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    events = {}
    ends = {"send": [], "recv": []}
    for line in p.stdout.splitlines():
        fields = line.split()
        if len(fields) < 3 or not fields[1].isdigit():
            continue
        events[fields[0]] = events.get(fields[0], 0) + 1
        if fields[0] in ("MPI_ISEND", "MPI_SEND", "MPI_IRECV", "MPI_RECV"):
            peer = int(line.split("Receiver: " if "SEND" in fields[0] else "Sender: ")[1].split()[0])
            tag = int(line.split("Tag: ")[1].split(",")[0])
            length = int(line.split("Length: ")[1].split(",")[0])
            side = "send" if "SEND" in fields[0] else "recv"
            me = int(fields[1])  # the location: the ranks' threads are 0..RANKS-1 in rank order
            ends[side].append((me, peer, tag, length) if side == "send" else (peer, me, tag, length))
    per_rank = [expected_counts(rank) for rank in range(RANKS)]
    calls_total = sum(sum(c.values()) for c in per_rank)
    kernels = RANKS * (STEPS + 1)
    assert events["ENTER"] == events["LEAVE"] == calls_total + kernels
    assert events["MPI_ISEND"] == events["MPI_IRECV"] == RANKS * 2 * STEPS
    assert events["MPI_ISEND_COMPLETE"] == events["MPI_IRECV_REQUEST"] == RANKS * 2 * STEPS
    assert (events["MPI_SEND"], events["MPI_RECV"]) == (1, 1)
    collectives = sum(c["MPI_Allreduce"] + c["MPI_Bcast"] + c["MPI_Barrier"] +
                      c["MPI_Comm_split"] + c["MPI_Comm_dup"] + c["MPI_Comm_free"]
                      for c in per_rank)
    assert events["MPI_COLLECTIVE_BEGIN"] == events["MPI_COLLECTIVE_END"] == collectives
    assert sorted(ends["send"]) == sorted(ends["recv"])


@mpich_runs
def test_four_ranks_mpich(tmp_path):
    r = halo_run(tmp_path, MPICH_RUN, HALO_MPICH)
    out = tmp_path / "out"
    for rank in range(RANKS):
        assert f"rank {rank} of {RANKS}" in r.stdout
        check_rank(str(out / f"rank{rank}_results.db"), rank)
    # summary --mpi under MPICH's launcher: the tables of the merged ranks
    merged = str(tmp_path / "all.db")
    m = run([GPUPROF, "merge", "-o", merged, *[str(out / f"rank{k}_results.db")
                                               for k in range(RANKS)]], cwd=tmp_path)
    assert m.returncode == 0, m.stderr
    s = run([GPUPROF, "summary", "--format", "csv", merged], cwd=tmp_path)
    d = run([MPICH_RUN, "-n", str(RANKS), GPUPROF, "summary", "--mpi", "--format", "csv",
             str(out / "rank%rank%_results.db")], cwd=tmp_path, env=mpi_env(), timeout=300)
    assert d.returncode == 0, d.stdout + d.stderr
    assert d.stdout.strip().split("\n\n") == \
        [b for b in s.stdout.strip().split("\n\n") if b.startswith("# MPI ")]
    check_summary_mpi_inputs(tmp_path, MPICH_RUN, out, merged)


def check_summary_mpi_inputs(tmp_path, launcher, out, merged):
    """61: summary --mpi refuses what is not one recording per rank of one job, each wrong
    file named once by the rank that read it, before any table is printed."""

    def ranks_summary(pattern, ranks=RANKS):
        r = run([launcher, "-n", str(ranks), GPUPROF, "summary", "--mpi", pattern],
                cwd=tmp_path, env=mpi_env(), timeout=300)
        assert r.returncode != 0 and "MPI RANKS" not in r.stdout, r.stdout + r.stderr
        return [l for l in r.stderr.splitlines() if l.startswith("gpuprof: summary --mpi")]

    lines = ranks_summary(merged)  # the merged database: every rank's calls in one
    assert len(lines) == RANKS and all(
        f"holds the MPI calls of {RANKS} processes (ranks 0 to {RANKS - 1}" in l
        for l in lines), lines
    lines = ranks_summary(str(out / "rank%rank%_results.db"), 2)  # fewer ranks
    assert len(lines) == 2 and all(f"recorded in a job of {RANKS} ranks, and summary --mpi "
                                   "runs as 2" in l for l in lines), lines
    lines = ranks_summary(str(out / "none%rank%.db"))  # nothing there: said once a rank
    assert len(lines) == RANKS and all("cannot open" in l for l in lines), lines
    swapped = tmp_path / "swapped"
    swapped.mkdir()
    for k in range(RANKS):
        shutil.copy(out / f"rank{k}_results.db", swapped / f"r{ {0: 1, 1: 0}.get(k, k)}.db")
    lines = ranks_summary(str(swapped / "r%rank%.db"))
    assert sorted(lines) == sorted(
        f"gpuprof: summary --mpi: rank {k}: '{swapped}/r{k}.db' is the recording of rank "
        f"{1 - k}, not of rank {k}: %rank% in the pattern must name each rank's own"
        for k in (0, 1)), lines
    other = tmp_path / "other"
    shutil.copytree(out, other)
    with sqlite3.connect(other / f"rank{RANKS - 1}_results.db") as db:  # a day earlier
        db.execute("UPDATE gpuprof_process SET realtime_start = realtime_start - 86400e9")
    lines = ranks_summary(str(other / "rank%rank%_results.db"))
    late = f"'{other}/rank{RANKS - 1}_results.db' (rank {RANKS - 1}, recorded from "
    assert len(lines) == 1 and late in lines[0] and "not of one run" in lines[0], lines


@mpich_runs
def test_another_mpi_is_left_as_it_is(tmp_path):
    """Open MPI's interposer in an MPICH program (forced): the calls reach MPICH unchanged,
    the program runs and ends as without gpuprof, nothing recorded of MPI."""
    r = halo_run(tmp_path, MPICH_RUN, HALO_MPICH, ranks=2,
                 env={"GPUPROF_MPI_IMPLEMENTATION": "openmpi"})
    assert "rank 1 of 2" in r.stdout
    for rank in range(2):
        assert calls(str(tmp_path / "out" / f"rank{rank}_results.db")) == []


def test_mpich_interposer_is_refused_for_open_mpi(tmp_path):
    """The other way it would damage the calls: refused before the program starts."""
    r = run([GPUPROF, "trace", "--mpi-trace", "--", HALO], cwd=tmp_path,
            env={"GPUPROF_MPI_IMPLEMENTATION": "mpich"})
    assert r.returncode == 2
    assert "GPUPROF_MPI_IMPLEMENTATION is 'mpich', and" in r.stderr
    assert "links Open MPI" in r.stderr


MPI4PY = """
import array
from mpi4py import MPI
comm = MPI.COMM_WORLD
values = array.array("d", [comm.Get_rank()] * 16)
comm.Allreduce(MPI.IN_PLACE, values, op=MPI.SUM)
comm.Barrier()
print(f"rank {comm.Get_rank()} of {comm.Get_size()}: {values[0]:.0f}", flush=True)
"""


def test_python_mpi4py(tmp_path):
    """Python loads mpi4py's MPI privately (RTLD_LOCAL): the interposer finds it there,
    the program runs as without gpuprof, its calls are recorded."""
    if subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"], capture_output=True,
                      cwd="/").returncode:
        pytest.skip("python3-mpi4py is not installed")
    (tmp_path / "app.py").write_text(MPI4PY)
    # shared memory between the ranks: Open MPI's TCP transport, which mpi4py's load
    # brings in too, holds a lock-order inversion of its own that ThreadSanitizer reports
    r = run([OPENMPI_RUN, "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader",
             "-n", "2", GPUPROF, "trace", "--mpi-trace", "-d", "out", "-o", "rank%rank%", "--",
             "/usr/bin/python3", str(tmp_path / "app.py")], cwd=tmp_path, env=mpi_env(),
            timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(2):
        assert f"rank {rank} of 2: 1" in r.stdout
        with sqlite3.connect(tmp_path / "out" / f"rank{rank}_results.db") as db:
            world = db.execute("SELECT function, bytes_sent, bytes_received, sequence FROM "
                               "mpi_calls WHERE communicator = 'MPI_COMM_WORLD' AND "
                               "function IN ('MPI_Allreduce', 'MPI_Barrier') ORDER BY call_id"
                               ).fetchall()
            ends = db.execute("SELECT function FROM mpi_calls WHERE function IN "
                              "('MPI_Init_thread', 'MPI_Finalize') ORDER BY call_id").fetchall()
        assert [w[:3] for w in world] == [("MPI_Allreduce", 128, 128), ("MPI_Barrier", 0, 0)]
        assert world[1][3] == world[0][3] + 1
        assert ends == [("MPI_Init_thread",), ("MPI_Finalize",)]


def test_any_process_loads_the_interposers(tmp_path):
    """Preloaded into a process without MPI (a child of the program inherits LD_PRELOAD),
    with every symbol bound at load: it starts and ends as without them."""
    libraries = [os.path.join(LIBDIR, name) for name in
                 ("libgpuprof-mpi-openmpi.so", "libgpuprof-mpi-mpich.so")]
    libraries = [lib for lib in libraries if os.path.exists(lib)]
    r = run(["/bin/sh", "-c", "echo fine; exit 3"], cwd=tmp_path,
            env={"LD_PRELOAD": preload(":".join(libraries)), "LD_BIND_NOW": "1"})
    assert (r.returncode, r.stdout, r.stderr) == (3, "fine\n", "")


def test_a_program_without_mpi(tmp_path):
    r = run([GPUPROF, "trace", "--mpi-trace", "--kernel-trace", "-d", "out", "--",
             os.path.join(SAMPLES, "vcopy")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "--mpi-trace: cannot tell which MPI" in r.stderr
    assert "GPUPROF_MPI_IMPLEMENTATION=openmpi or mpich" in r.stderr


def test_summary_mpi_outside_a_launcher(tmp_path):
    r = run(["/usr/bin/env", "-u", "OMPI_COMM_WORLD_SIZE", "-u", "PMI_RANK", "-u", "PMI_SIZE",
             GPUPROF, "summary", "--mpi", "rank%rank%_results.db"], cwd=tmp_path)
    assert r.returncode == 2
    assert "summary --mpi: run it under the MPI launcher of the run" in r.stderr
    r = run([GPUPROF, "summary", "--mpi", "a.db", "b.db"], cwd=tmp_path)
    assert r.returncode == 2
    assert "give one pattern of the ranks' databases" in r.stderr


def test_unknown_implementation_is_refused(tmp_path):
    r = run([GPUPROF, "trace", "--mpi-trace", "--", HALO], cwd=tmp_path,
            env={"GPUPROF_MPI_IMPLEMENTATION": "lam"})
    assert r.returncode == 2
    assert "GPUPROF_MPI_IMPLEMENTATION is 'lam': say 'openmpi' or 'mpich'" in r.stderr


def test_merge_places_another_host_by_the_clock_exchanges(tmp_path):
    """Rank 1 made to look recorded on another host, whose real-time clock is 7 s off and
    whose trace clock ran 1 us ahead of rank 0's at MPI_Init and 3 us at MPI_Finalize:
    merged, its times are placed by the exchanges, the offset interpolated between them
    (drift), not by the real-time clock; rank 0's host keeps its times exactly."""
    halo_run(tmp_path, OPENMPI_RUN, HALO, ranks=2)
    out = tmp_path / "out"
    db0, db1 = str(out / "rank0_results.db"), str(out / "rank1_results.db")
    with sqlite3.connect(db1) as con:
        con.execute("UPDATE gpuprof_process SET hostname = 'node-b', "
                    "realtime_start = realtime_start + 7000000000")
        (t1,), (t2,) = con.execute("SELECT local_time FROM gpuprof_clock_sync "
                                   "ORDER BY local_time").fetchall()
        con.execute("UPDATE gpuprof_clock_sync SET offset = CASE local_time WHEN ? THEN 1000 "
                    "ELSE 3000 END", (t1,))
        before1 = con.execute("SELECT call_id, start, end FROM gpuprof_mpi_call "
                              "ORDER BY call_id").fetchall()
        kernels1 = con.execute("SELECT start FROM gpuprof_kernel ORDER BY start").fetchall()
    with sqlite3.connect(db0) as con:
        before0 = con.execute("SELECT call_id, start, end FROM gpuprof_mpi_call "
                              "ORDER BY call_id").fetchall()
    merged = str(tmp_path / "all.db")
    m = run([GPUPROF, "merge", "-o", merged, db0, db1], cwd=tmp_path)
    assert m.returncode == 0, m.stderr

    def placed(t):  # SQLite's CAST of the REAL product: toward zero
        return t + 1000 + int((t - t1) * (2000 / (t2 - t1)))

    with sqlite3.connect(merged) as con:
        after = {host: con.execute(
            "SELECT c.call_id, c.start, c.end FROM gpuprof_mpi_call c JOIN gpuprof_process p "
            "ON p.id = c.process_id WHERE p.hostname = ? ORDER BY c.call_id", (host,)).fetchall()
            for host in (HOST, "node-b")}
        kernels = con.execute("SELECT k.start FROM gpuprof_kernel k JOIN gpuprof_process p "
                              "ON p.id = k.process_id WHERE p.hostname = 'node-b' "
                              "ORDER BY k.start").fetchall()
    assert after[HOST] == before0
    assert after["node-b"] == [(c, placed(s), placed(e)) for c, s, e in before1]
    assert kernels == [(placed(s),) for (s,) in kernels1]
