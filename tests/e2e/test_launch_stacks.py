"""Launch call stacks (trace --launch-stacks): the call stack of every kernel launch and
copy, taken on the launching thread and unwound after the run, and gpuprof profile
--kernels, the device time by the program's call paths. The premises are counts the
program makes (launch-sites: light() launches N kernels, heavy() N/2 kernels and N/2
copies) and the device times the database itself records for those kernels and copies:
every figure of the profile is checked against an independent SQL sum, never a timing."""
import json
import os

import pytest

from conftest import GPUPROF, TESTS, frames_of, outputs, pocl_linker, run, trace

SITES = os.path.join(TESTS, "launch-sites")


def processes(directory):
    return [o for o in outputs(str(directory)) if not pocl_linker(o)]


def launches(out):
    """Each launch stack: its API function, frames from the root, and what it launched
    (a kernel's name or "copy") with its device time."""
    rows = out.query(
        "SELECT l.stack_id, s.string AS api, l.tid, "
        "COALESCE(n.string, CASE WHEN c.id IS NOT NULL THEN 'copy' END) AS what, "
        "COALESCE(k.end - k.start, c.end - c.start) AS ns, "
        "COALESCE(k.tid, c.tid) AS work_tid "
        "FROM gpuprof_launch_stack l JOIN gpuprof_string s ON s.id = l.function_id "
        "LEFT JOIN gpuprof_kernel k ON k.correlation_id = l.correlation_id "
        "LEFT JOIN gpuprof_string n ON n.id = k.name_id "
        "LEFT JOIN gpuprof_memory_copy c ON c.correlation_id = l.correlation_id "
        "ORDER BY l.id")
    for r in rows:
        r["frames"] = frames_of(out, r["stack_id"])
    return rows


def device_time(out, sql):
    (row,) = out.query(sql)
    return row["ns"]


def check_sites(out, n, callers):
    """n launches of light under callers["light"], n/2 of heavy and n/2 copies under
    callers["heavy"]; every kernel and copy of the process has its launch stack."""
    rows = launches(out)
    kernels = out.query("SELECT COUNT(*) AS n FROM gpuprof_kernel")[0]["n"]
    copies = out.query("SELECT COUNT(*) AS n FROM gpuprof_memory_copy")[0]["n"]
    assert (kernels, copies, len(rows)) == (n + n // 2, n // 2, n + n)
    for r in rows:
        assert r["work_tid"] == r["tid"]  # the thread that launched it
        site = "light" if r["what"] == "light" else "heavy"
        api = "clEnqueueReadBuffer" if r["what"] == "copy" else "clEnqueueNDRangeKernel"
        assert r["api"] == api and r["frames"][-1] == api, r
        assert r["frames"][-3:-1] == [callers[site], site], r
        assert not any(f.startswith(("recorder_", "pending_", "kernel_begin")) for f in
                       r["frames"]), r  # gpuprof's own frames left out
    counts = {w: sum(r["what"] == w for r in rows) for w in ("light", "heavy", "copy")}
    assert counts == {"light": n, "heavy": n // 2, "copy": n // 2}


def test_launches_are_attributed_to_the_functions_that_made_them(tmp_path):
    n = 20
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "--memory-copy-trace", "-d", "out"],
              [SITES, "-n", str(n)])
    assert r.returncode == 0, r.stderr
    (out,) = processes(tmp_path / "out")
    check_sites(out, n, {"light": "run", "heavy": "run"})
    db = out.path("results.db")
    light = device_time(out, "SELECT SUM(k.end - k.start) AS ns FROM gpuprof_kernel k "
                             "JOIN gpuprof_string s ON s.id = k.name_id WHERE s.string = 'light'")
    heavy = device_time(out, "SELECT SUM(k.end - k.start) AS ns FROM gpuprof_kernel k "
                             "JOIN gpuprof_string s ON s.id = k.name_id WHERE s.string = 'heavy'")
    copies = device_time(out, "SELECT SUM(end - start) AS ns FROM gpuprof_memory_copy")
    # the flat profile: each function's total is the device time it launched
    p = run([GPUPROF, "profile", "--kernels", "--format", "json", "--limit", "0", db],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (table,) = json.loads(p.stdout)
    assert table["title"].startswith("DEVICE TIME BY LAUNCHING FUNCTION (device time of 40 "
                                     "launches with a call stack: ")
    rows = {(row[0], row[1]): row for row in table["rows"]}
    # the program's functions (module launch-sites) and what ran (module [device], a
    # kernel's own time as its self)
    total = {name: row[4] for (name, module), row in rows.items()
             if module == "launch-sites" and name in ("main", "run", "light", "heavy")}
    assert total == {"main": light + heavy + copies, "run": light + heavy + copies,
                     "light": light, "heavy": heavy + copies}
    assert rows[("light", "[device]")][2:5:2] == [light, light]
    assert rows[("heavy", "[device]")][2:5:2] == [heavy, heavy]
    assert rows[("[copy device to host]", "[device]")][2] == copies
    shares = {name: row[5] for (name, module), row in rows.items()
              if name in ("light", "heavy") and module == "launch-sites"}
    all_ns = light + heavy + copies
    assert shares == {"light": pytest.approx(100 * light / all_ns, rel=1e-12),
                      "heavy": pytest.approx(100 * (heavy + copies) / all_ns, rel=1e-12)}
    # the folded stacks: one line per path down to what ran, weighted by device ns
    p = run([GPUPROF, "profile", "--kernels", "--format", "folded", db], cwd=tmp_path)
    folded = dict(line.rsplit(" ", 1) for line in p.stdout.splitlines())
    ends = {";".join(k.split(";")[-4:]): int(v) for k, v in folded.items()}
    assert ends == {"run;light;clEnqueueNDRangeKernel;light": light,
                    "run;heavy;clEnqueueNDRangeKernel;heavy": heavy,
                    "run;heavy;clEnqueueReadBuffer;[copy device to host]": copies}
    # _start and libc's entry only pass the call on: left out, kept with --all-frames
    assert all(k.startswith("main;run;") for k in folded), folded
    p = run([GPUPROF, "profile", "--kernels", "--format", "folded", "--all-frames", db],
            cwd=tmp_path)
    assert all(k.startswith("_start;__libc_start_main;__libc_start_call_main;main;run;")
               for k in dict(line.rsplit(" ", 1) for line in p.stdout.splitlines())), p.stdout
    # the tree, from the root down to each kernel
    p = run([GPUPROF, "profile", "--kernels", "--tree", "--format", "json", "--min-percent", "0",
             db], cwd=tmp_path)
    tree = json.loads(p.stdout)
    assert (tree["device_ns"], tree["launches"]) == (all_ns, 40)

    def find(nodes, name):
        for node in nodes:
            if node["function"] == name:
                return node
            found = find(node["children"], name)
            if found:
                return found
    # summary and report: the launch sites, each the program's function that called
    # the API (the innermost of the user's code: the program's executable), with the
    # launches and device time of what it launched, through nothing in between
    p = run([GPUPROF, "summary", "--format", "json", db], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (sites,) = [t for t in json.loads(p.stdout) if t["name"] == "launch_sites"]
    assert sites["columns"] == ["Function", "Module", "Through", "Call", "Launched",
                                "Launches", "Device time (nsec)", "Pct"]
    assert sorted(tuple(row[:7]) for row in sites["rows"]) == sorted([
        ("light", "launch-sites", "", "clEnqueueNDRangeKernel", "light", n, light),
        ("heavy", "launch-sites", "", "clEnqueueNDRangeKernel", "heavy", n // 2, heavy),
        ("heavy", "launch-sites", "", "clEnqueueReadBuffer", "[copy device to host]", n // 2,
         copies)])
    report = tmp_path / "report.html"
    p = run([GPUPROF, "report", "-o", str(report), db], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    section = report.read_text().split('<section id="launch-sites">')[1].split("</section>")[0]
    assert f"Device time of {n + n} launches" in section
    assert (f'<td class="name">light</td><td class="name"></td><td>clEnqueueNDRangeKernel</td>'
            f'<td class="name">light</td><td>{n}</td><td data-ns="{light}">') in section
    light_node = find(tree["tree"], "light")
    assert light_node["total"] == light
    assert [c["function"] for c in light_node["children"]] == ["clEnqueueNDRangeKernel"]
    assert light_node["children"][0]["children"][0] == {
        "function": "light", "module": "[device]", "total": light, "self": light, "children": []}


def test_threads_and_a_forked_child_have_their_launch_stacks(tmp_path):
    n = 10
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "--memory-copy-trace", "-d", "out"],
              [SITES, "-n", str(n), "--threads", "--fork"])
    assert r.returncode == 0, r.stderr
    outs = processes(tmp_path / "out")
    assert len(outs) == 2  # the parent and its child, each with its own database
    for out in outs:
        check_sites(out, n, {"light": "light_thread", "heavy": "heavy_thread"})
        tids = {r["tid"] for r in launches(out)}
        assert len(tids) == 2 and out.pid not in tids  # the two threads, not main


def test_launch_stacks_through_a_small_buffer(tmp_path):
    """A buffer of 16 KiB a thread holds a few dozen launch stacks: a thread that finds
    it full writes it to the spool itself (or waits for the writer), on two threads and a
    forked child at once. Every launch keeps its whole stack; nothing is dropped."""
    n = 400
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "--memory-copy-trace",
                         "--buffer-size", "16K", "-d", "out"],
              [SITES, "-n", str(n), "--threads", "--fork"])
    assert r.returncode == 0, r.stderr
    outs = processes(tmp_path / "out")
    assert len(outs) == 2
    for out in outs:
        check_sites(out, n, {"light": "light_thread", "heavy": "heavy_thread"})
        assert out.query("SELECT COUNT(*) AS n FROM gpuprof_dropped")[0]["n"] == 0


def test_code_made_at_run_time_is_named_in_launch_stacks(tmp_path):
    # a JIT compiler's perf map (here launch-sites --jit's, a trampoline per function
    # named "py::light:/srv/app/sites.py", as CPython's perf support writes) names the
    # launch stacks' frames in a process that is not sampled, unwound past by its frame
    # pointer; gpuprof sets nothing in the program's environment
    n = 6
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "-d", "out"],
              [SITES, "-n", str(n), "--jit"])
    (out,) = processes(tmp_path / "out")
    try:
        assert r.returncode == 0, r.stderr
        assert "launch-sites: PYTHONPERFSUPPORT=(unset)" in r.stdout
        paths = {}
        for launch in launches(out):
            assert launch["api"] == "clEnqueueNDRangeKernel", launch
            names = launch["frames"]
            assert "main" in names, names  # (run() may be inlined into it)
            key = (launch["what"], ";".join(names[names.index("run_jitted"):]))
            paths[key] = paths.get(key, 0) + 1
        assert paths == {
            ("light", "run_jitted;sites.py:light;light;clEnqueueNDRangeKernel"): n,
            ("heavy", "run_jitted;sites.py:heavy;heavy;clEnqueueNDRangeKernel"): n // 2,
        }, paths
    finally:
        try:
            os.unlink(f"/tmp/perf-{out.pid}.map")
        except FileNotFoundError:
            pass


def test_without_the_option_there_are_none_and_profile_says_so(tmp_path):
    r = trace(tmp_path, ["--kernel-trace", "-d", "out"], [SITES, "-n", "4"])
    assert r.returncode == 0, r.stderr
    (out,) = processes(tmp_path / "out")
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_launch_stack") == [{"n": 0}]
    p = run([GPUPROF, "profile", "--kernels", out.path("results.db")], cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == ""
    assert p.stderr == ("gpuprof: profile: no launch with a call stack and device time "
                        "(record them with gpuprof trace --launch-stacks --kernel-trace)\n")
    # the option needs something launched to trace
    r = trace(tmp_path, ["--launch-stacks", "--opencl-trace"], [SITES, "-n", "1"])
    assert r.returncode == 2
    assert r.stderr == ("gpuprof: trace: --launch-stacks takes the call stacks of kernel "
                        "launches and copies, and neither is traced: add --kernel-trace or "
                        "--memory-copy-trace\n")
    p = run([GPUPROF, "profile", "--kernels", "--device-idle", out.path("results.db")],
            cwd=tmp_path)
    assert p.returncode == 2 and "--kernels weighs launches by their device time" in p.stderr


def test_a_deep_launch_needs_a_larger_copy(tmp_path):
    """Launches beneath 16 frames of 1 KiB each (as deep as PyTorch's through cuDNN): the
    default copy (7,936 bytes) holds the launching end of each stack, under one
    [truncated] root, and profile says how much device time that is and which option
    copies more; --launch-stack-size 32K reaches main through all 16 frames."""
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "-d", "short"],
              [SITES, "-n", "4", "--deep", "16"])
    assert r.returncode == 0, r.stderr
    (out,) = processes(tmp_path / "short")
    stacks = [x["frames"] for x in launches(out)]
    assert len(stacks) == 6
    assert all(f[0] == "[truncated: deeper than the stack copied]" and
               0 < f.count("descend") < 16 for f in stacks), stacks
    kernels = device_time(out, "SELECT SUM(end - start) AS ns FROM gpuprof_kernel")
    p = run([GPUPROF, "profile", "--kernels", "--format", "json", out.path("results.db")],
            cwd=tmp_path)
    (table,) = json.loads(p.stdout)
    assert table["title"] == (
        f"DEVICE TIME BY LAUNCHING FUNCTION (device time of 6 launches with a call stack: "
        f"{kernels / 1e9:.6f} s, {kernels / 1e9:.6f} s of it under stacks cut short (deeper "
        f"than the stack copied: --launch-stack-size copies more); self and total in nsec)")
    r = trace(tmp_path, ["--launch-stacks", "--launch-stack-size", "32K", "--kernel-trace",
                         "-d", "whole"], [SITES, "-n", "4", "--deep", "16"])
    assert r.returncode == 0, r.stderr
    (out,) = processes(tmp_path / "whole")
    for f in (x["frames"] for x in launches(out)):
        at = f.index("main")
        assert f[at + 1:at + 18] == ["descend"] * 16 + ["run"], f
    # the option's errors
    r = trace(tmp_path, ["--kernel-trace", "--launch-stack-size", "32K"], [SITES, "-n", "1"])
    assert (r.returncode, r.stderr) == (2, "gpuprof: trace: --launch-stack-size sets how "
                                           "much of each launch's stack is copied, and none "
                                           "is: add --launch-stacks\n")
    r = trace(tmp_path, ["--kernel-trace", "--launch-stacks", "--launch-stack-size", "4"],
              [SITES, "-n", "1"])
    assert r.returncode == 2
    assert "--launch-stack-size: '4' is not a number of bytes from 8 to 65344" in r.stderr


def test_merge_keeps_each_process_launch_stacks(tmp_path):
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "-d", "out"],
              [SITES, "-n", "6", "--fork"])
    assert r.returncode == 0, r.stderr
    outs = processes(tmp_path / "out")
    merged = str(tmp_path / "all.db")
    m = run([GPUPROF, "merge", "-o", merged] + [o.path("results.db") for o in outs], cwd=tmp_path)
    assert m.returncode == 0, m.stderr

    def folded(db):
        p = run([GPUPROF, "profile", "--kernels", "--format", "folded", db], cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        lines = {}
        for line in p.stdout.splitlines():
            stack, ns = line.rsplit(" ", 1)
            lines[stack] = lines.get(stack, 0) + int(ns)
        return lines
    separate = {}
    for o in outs:
        for stack, ns in folded(o.path("results.db")).items():
            separate[stack] = separate.get(stack, 0) + ns
    assert folded(merged) == separate and len(separate) == 2


PYOPENCL_SCRIPT = '''
import numpy as np
import pyopencl as cl

ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, """
__kernel void twice(__global float *x) { int i = get_global_id(0); x[i] = 2 * x[i]; }
__kernel void plus(__global float *x) { int i = get_global_id(0); x[i] = x[i] + 1; }
""").build()
a = np.ones(4096, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
twice, plus = prg.twice, prg.plus


def doubling(n):
    for _ in range(n):
        twice(queue, a.shape, None, buf)


def adding(n):
    for _ in range(n):
        plus(queue, a.shape, None, buf)


def step():
    doubling(6)
    adding(3)


step()
queue.finish()
'''


def test_pyopencl_kernels_are_attributed_to_the_python_functions(tmp_path):
    """A pyopencl script: each launch's stack holds the Python functions that made it
    (in place of the interpreter's evaluation loop), from the module down."""
    check = run(["/usr/bin/python3", "-c", "import pyopencl"], cwd=tmp_path)
    if check.returncode:
        pytest.skip("pyopencl is not installed (Debian's python3-pyopencl)")
    script = tmp_path / "launcher.py"
    script.write_text(PYOPENCL_SCRIPT)
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "-d", "out"],
              ["/usr/bin/python3", str(script)])
    assert r.returncode == 0, r.stderr
    (out,) = processes(tmp_path / "out")
    rows = launches(out)
    assert len(rows) == 9
    for r in rows:
        python = [f for f in r["frames"] if f.startswith("launcher.py:")]
        caller = "launcher.py:doubling" if r["what"] == "twice" else "launcher.py:adding"
        assert python == ["launcher.py:<module>", "launcher.py:step", caller], r["frames"]
        assert r["frames"][-1] == "clEnqueueNDRangeKernel"
    assert sorted(r["what"] for r in rows) == ["plus"] * 3 + ["twice"] * 6
    p = run([GPUPROF, "profile", "--kernels", "--format", "json", "--limit", "0",
             out.path("results.db")], cwd=tmp_path)
    (table,) = json.loads(p.stdout)
    total = {row[0]: row[4] for row in table["rows"]}
    twice = device_time(out, "SELECT SUM(k.end - k.start) AS ns FROM gpuprof_kernel k "
                             "JOIN gpuprof_string s ON s.id = k.name_id WHERE s.string = 'twice'")
    assert total["launcher.py:doubling"] == twice
    # the launch sites: the script's functions, not pyopencl's extension in which the
    # API is called, nor pyopencl's Python (an installed package); that extension one
    # level down
    p = run([GPUPROF, "summary", "--format", "json", out.path("results.db")], cwd=tmp_path)
    (sites,) = [t for t in json.loads(p.stdout) if t["name"] == "launch_sites"]
    rows = {(row[0], row[4]): row for row in sites["rows"]}
    assert sorted(rows) == [("launcher.py:adding", "plus"), ("launcher.py:doubling", "twice")]
    assert rows[("launcher.py:doubling", "twice")][5] == 6
    assert rows[("launcher.py:doubling", "twice")][6] == twice
    assert rows[("launcher.py:adding", "plus")][5] == 3
    for row in rows.values():
        assert row[1] == "launcher.py" and row[3] == "clEnqueueNDRangeKernel"
        assert row[2] and not row[2].startswith("launcher.py"), row


def test_timelines_carry_each_launch_stack_on_its_api_slice(tmp_path):
    """The API slice of each launch carries its call stack (call_stack), in the Perfetto
    trace and the JSON timeline, written at the run and converted from the database."""
    from pftrace import Trace
    n = 4
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "--opencl-trace", "-f", "json",
                         "pftrace", "sqlite", "-d", "out"], [SITES, "-n", str(n)])
    assert r.returncode == 0, r.stderr
    (out,) = processes(tmp_path / "out")
    expected = sorted((r["api"], ";".join(r["frames"])) for r in launches(out))
    assert len(expected) == n + n // 2

    def from_json(path):
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        return sorted((e["name"], e["args"]["call_stack"]) for e in events
                      if e.get("ph") == "X" and "call_stack" in e.get("args", {}))

    def from_pftrace(path):
        return sorted((s["name"], s["args"]["call_stack"]) for s in Trace(path).slices
                      if "call_stack" in s["args"])
    assert from_json(out.path("results.json")) == expected
    assert from_pftrace(out.path("results.pftrace")) == expected
    c = run([GPUPROF, "convert", "-f", "json", "pftrace", "-d", str(tmp_path / "again"),
             out.path("results.db")], cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    again = str(tmp_path / "again" / f"{out.pid}_results")
    assert from_json(again + ".json") == expected
    assert from_pftrace(again + ".pftrace") == expected


def test_a_launch_through_a_library_of_the_programs_own(tmp_path):
    """private-opencl launches through libclwork.so, a library of its own: the launch site
    is the caller in the program (main), the library's function one level down; with the
    library's directory named in GPUPROF_USER_CODE, the library's function is the site."""
    program = os.path.join(TESTS, "private-opencl")
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "-d", "out"], [program, "7"])
    assert r.returncode == 0, r.stderr
    (out,) = processes(tmp_path / "out")
    db = out.path("results.db")
    p = run([GPUPROF, "summary", "--format", "json", db], cwd=tmp_path)
    (sites,) = [t for t in json.loads(p.stdout) if t["name"] == "launch_sites"]
    # the library's frame below main: clwork_linked() or, where the compiler made its
    # call a jump, the clwork_run() it jumps to
    [(site, module, through, call, launched, launches)] = [tuple(row[:6])
                                                           for row in sites["rows"]]
    assert (site, module, call, launched, launches) == (
        "main", "private-opencl", "clEnqueueNDRangeKernel", "vcopy", 7)
    assert through.startswith(("clwork_linked", "clwork_run")), through
    # the same table from gpuprof profile --kernels --sites
    p = run([GPUPROF, "profile", "--kernels", "--sites", "--format", "json", db], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (table,) = json.loads(p.stdout)
    assert table["name"] == "launch_sites" and table["rows"] == sites["rows"]
    # 61: with --lines, the program's lines; the API function called has none of its own
    # (its frame is gpuprof's interposer, whose line is gpuprof's)
    p = run([GPUPROF, "profile", "--kernels", "--sites", "--lines", "--format", "json", db],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    [row] = json.loads(p.stdout)[0]["rows"]
    assert row[0].startswith("main (private-opencl.c:") and row[3] == "clEnqueueNDRangeKernel", row
    p = run([GPUPROF, "profile", "--sites", db], cwd=tmp_path)
    assert p.returncode == 2 and "--sites is a table of --kernels' launches" in p.stderr
    p = run([GPUPROF, "summary", "--format", "json", db], cwd=tmp_path,
            env={"GPUPROF_USER_CODE": TESTS + "/libclwork"})
    (sites,) = [t for t in json.loads(p.stdout) if t["name"] == "launch_sites"]
    [(site, module, through, call, launched, launches)] = [tuple(row[:6])
                                                           for row in sites["rows"]]
    # the innermost frame of the library now named the user's: the one that called the API
    assert site.startswith("clwork_run") and (module, through, launches) == (
        "libclwork.so", "", 7), sites["rows"]


def test_a_pytorch_model_launching_through_pyopencl(tmp_path):
    """A PyTorch model whose modules launch OpenCL kernels through pyopencl: 200 steps give
    each module's forward 200 launches in LAUNCH SITES, pyopencl's kernel call one level
    down; the device time of each is the database's."""
    check = run(["/usr/bin/python3", "-c", "import pyopencl, torch"], cwd=tmp_path)
    if check.returncode:
        pytest.skip("pyopencl or torch is not installed (python3-pyopencl, python3-torch)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_pyopencl.py")
    r = trace(tmp_path, ["--launch-stacks", "--kernel-trace", "-d", "out"],
              ["/usr/bin/python3", script, "200"])
    assert r.returncode == 0, r.stderr
    assert "200 steps, y[0] = 3" in r.stdout
    (out,) = processes(tmp_path / "out")
    p = run([GPUPROF, "summary", "--format", "json", out.path("results.db")], cwd=tmp_path)
    (sites,) = [t for t in json.loads(p.stdout) if t["name"] == "launch_sites"]
    rows = {row[0]: row for row in sites["rows"]}
    assert sorted(rows) == ["torch_pyopencl.py:Scale.forward", "torch_pyopencl.py:Shift.forward"]
    for name, kernel in (("Scale", "scale"), ("Shift", "shift")):
        row = rows[f"torch_pyopencl.py:{name}.forward"]
        ns = device_time(out, "SELECT SUM(k.end - k.start) AS ns FROM gpuprof_kernel k JOIN "
                              f"gpuprof_string s ON s.id = k.name_id WHERE s.string = '{kernel}'")
        assert row[2].startswith("pyopencl/") and row[3:7] == [
            "clEnqueueNDRangeKernel", kernel, 200, ns], row
