"""Every command line of the product's seed documents (rocprofv3, rocprof-compute,
rocprof-sys-* and madengine's rocprof_wrapper.sh; kept in seed-command-lines.txt beside
this file, and checked against the seeds themselves where they are, ../shared/seeds/
beside the repository) runs under gpuprof
with the tool's name replaced by gpuprof's (rocprofv3 and rocprof_wrapper.sh: gpuprof
trace; rocprof-compute: gpuprof compute; rocprof-sys-run and -sample: gpuprof sys;
rocprof-sys-avail: gpuprof avail) and the program by a small bundled one, and does what
it says: every trace and sys line ends well and writes the files it lists; every
compute line, on a machine without an NVIDIA GPU (or in a sanitized build, without
CUPTI's host API), stops with the one line that says so (with one, it ends well), and a line that names a set of rocprof-compute's is told the
NVIDIA set that stands for it."""
import functools
import glob
import os
import re
import shlex

import pytest

from conftest import BUILD, GPUPROF, run

SEEDS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "seeds")
KEPT = os.path.join(os.path.dirname(__file__), "seed-command-lines.txt")
VCOPY = os.path.join(BUILD, "samples", "vcopy")
TOOLS = {"rocprofv3": ["trace"], "rocprof_wrapper.sh": ["trace"], "rocprof-compute": ["compute"],
         "rocprof-sys-run": ["sys"], "rocprof-sys-sample": ["sys"], "rocprof-sys-avail": ["avail"]}
# what each seed line names as its program, replaced by the bundled one
PROGRAM = re.compile(r"^(python3?|julia|mpirun|\./\S+|\$\{\S+\}/\S+)$")


def seed_command_lines():
    """The command lines of the seeds: a line that starts a tool's command (in a code block,
    after a shell prompt or a parallel launcher, or as a JSON "cmd"), its continuation
    lines joined, with an option or a mode after the tool's name; prose that names a tool
    is left out."""
    found = []
    names = "|".join(re.escape(t) for t in TOOLS)
    for path in sorted(glob.glob(os.path.join(SEEDS, "*.txt"))):
        lines = open(path, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            # after a prompt, a parallel launcher (run here as one process), or in JSON
            m = re.search(r'(?:^\s*(?:\$\s+)?(?:(?:srun|mpirun|mpiexec)\b.*?\s)?'
                          r'|"cmd": "(?:bash \S*/)?)(' + names + r')\b(.*)$', lines[i])
            i += 1
            if not m:
                continue
            text = m.group(1) + m.group(2)
            while text.rstrip().endswith("\\") and i < len(lines):
                text = text.rstrip()[:-1] + " " + lines[i].strip()
                i += 1
            text = re.sub(r'"[,}]*\s*$', "", text)      # the end of a JSON string
            text = re.sub(r"\s+#.*$", "", text)          # a shell comment
            words = shlex.split(text)
            after = words[1:]
            if after and after[0] == "--experimental":
                after = after[1:]
            if after and after[0] in ("profile", "analyze"):
                after = after[1:]
            if not after or not after[0].startswith("-") or "..." in words:
                continue                                  # prose, or an elided example
            found.append((os.path.basename(path), text))
    return found


def kept_command_lines():
    """The lines as kept in the repository: "SEED<TAB>COMMAND LINE" per line."""
    with open(KEPT, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if line.strip()]


LINES = kept_command_lines()


def test_the_kept_lines_are_the_seeds():
    """The kept lines are those the seeds show today (where the seeds are: a clone of the
    repository alone has only the kept copy)."""
    if not os.path.isdir(SEEDS):
        pytest.skip(f"the seed documents are not beside this clone ({os.path.normpath(SEEDS)})")
    assert seed_command_lines() == LINES, "regenerate tests/e2e/seed-command-lines.txt"


def test_the_seeds_have_command_lines():
    """The kept lines cover every tool of the seeds (guarding the test below)."""
    tools = {shlex.split(text)[0] for _, text in LINES}
    assert tools == {"rocprofv3", "rocprof_wrapper.sh", "rocprof-compute", "rocprof-sys-run",
                     "rocprof-sys-sample"}, tools
    assert len(LINES) >= 30, LINES


def gpuprof_command(text, tmp_path):
    words = shlex.split(text)
    # the seeds' placeholders: a configuration that gpuprof avail -G writes, as the
    # rocprof-sys guide does, and output directories under the test's own
    args = [str(tmp_path / "sys.cfg") if w == "$RSP_CFG" else
            w.replace("/tmp/", str(tmp_path) + "/").replace("/shared/profiles",
                                                            str(tmp_path / "profiles"))
            for w in words[1:]]
    command = [GPUPROF] + TOOLS[words[0]] + args
    # the program: after --, or from the first word that names one
    if "--" in command:
        cut = command.index("--") + 1
    else:
        cut = next((i for i, w in enumerate(command) if i > 1 and PROGRAM.match(w)), len(command))
    if cut < len(command) or "--" in command:
        command = command[:cut] + [VCOPY]
    elif words[0] == "rocprof_wrapper.sh":  # madengine appends the model's command
        command += ["--", VCOPY]
    return command


@functools.lru_cache(maxsize=None)
def compute_unavailable():
    """The line gpuprof compute stops with here (no NVIDIA GPU, or CUPTI's host API not
    in a sanitized build), None where it runs."""
    r = run([GPUPROF, "compute", "profile", "--list-sets"], cwd="/")
    return r.stderr.strip().splitlines()[-1] if r.returncode else None


NO_GPU = ("gpuprof: compute profile: no NVIDIA GPU is usable here: counters need one (no "
          "driver, no GPU, or one hidden by CUDA_VISIBLE_DEVICES); --chip plans a listing "
          "without",
          "gpuprof: compute profile: no NVIDIA GPU here to plan for: name a chip with --chip "
          "(gpuprof avail lists those CUPTI knows)")
ROCPROF_SETS = {"compute_thruput_util": "pipe-utilization", "launch_stats": "launch",
                "compute_thruput_flops": "flops", "mem_thruput": "memory-throughput"}


@pytest.mark.parametrize("seed, text", LINES, ids=[f"{s}:{t[:60]}" for s, t in LINES])
def test_seed_command_line_runs(tmp_path, seed, text):
    assert run([GPUPROF, "avail", "-G", str(tmp_path / "sys.cfg")], cwd=tmp_path).returncode == 0
    command = gpuprof_command(text, tmp_path)
    r = run(command, cwd=tmp_path, timeout=300)
    assert "unknown option" not in r.stderr and "needs a value" not in r.stderr, r.stderr
    words = shlex.split(text)
    if "--set" in words:
        wanted = words[words.index("--set") + 1]
        assert (f"--set '{wanted}' is rocprof-compute's set (AMD's counters): its nearest here, "
                f"'{ROCPROF_SETS[wanted]}', is collected: ") in r.stderr, r.stderr
    if command[1] == "compute" and compute_unavailable():
        assert r.returncode == 1, r.stderr
        assert r.stderr.splitlines()[-1] in NO_GPU + (compute_unavailable(),), r.stderr
        return
    assert r.returncode == 0, r.stderr
    if "--version" in words:
        assert r.stdout.startswith("gpuprof "), r.stdout
        return
    if command[1] in ("trace", "sys"):
        written = [line.split(None, 1)[1] for line in r.stderr.splitlines()
                   if line.startswith("gpuprof:   ")]
        assert written, r.stderr
        for path in written:
            assert os.path.exists(os.path.join(tmp_path, path)), path
