"""How a sampled address is named where no symbol holds it: a stub of a procedure linkage
table is named for the function it leads to ("puts@plt"), as binutils and perf name it,
whichever kind of table (.plt, .plt.got, .plt.sec of indirect branch tracking, a lazy
entry that pushes its index, an ifunc's entry of the C library); elsewhere the address
stays module+offset. The expected names come from binutils' own reading of the files."""
import os
import re
import shutil
import sqlite3
import subprocess
import time

import pytest

from conftest import TESTS, recording

pytestmark = pytest.mark.skipif(not shutil.which("objdump") or os.uname().machine != "x86_64",
                                reason="binutils on x86-64 needed (stubs are named on x86-64)")


def tool(*command):
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def tables(path):
    """{name: (address, size, entry size)} of a file's procedure linkage tables."""
    found = {}
    for line in tool("readelf", "-SW", path).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\.plt(?:\.\w+)?)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+"
                     r"([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            found[m[1]] = tuple(int(x, 16) for x in m.group(2, 3, 4))
    return found


def stubs(path):
    """{address: the names it may have} of a file's stubs, by objdump's labels (an ifunc's
    "*ABS*+0xADDRESS@plt" by the dynamic symbols at that address) and, for the lazy
    entries of an IBT table that objdump leaves unlabelled, by .rela.plt's order; and how
    many were ifuncs'."""
    at = {}
    for line in tool("nm", "-D", "--defined-only", path).splitlines():
        address, _, name = line.split(" ", 2)
        at.setdefault(int(address, 16), set()).add(name.split("@")[0])
    found, ifuncs = {}, 0
    for address, label in re.findall(r"^([0-9a-f]+) <(.+)@plt>:$",
                                     tool("objdump", "-d", path), re.M):
        ifunc = re.fullmatch(r"\*ABS\*\+0x([0-9a-f]+)", label)
        names = at.get(int(ifunc[1], 16), set()) if ifunc else {label}
        if names:
            found[int(address, 16)] = {n + "@plt" for n in names}
            ifuncs += bool(ifunc)
    table = tables(path)
    if ".plt.sec" in table:
        slots = re.findall(r"R_X86_64_JUMP_SLOT\s+[0-9a-f]+\s+(\w+)",
                           tool("readelf", "-rW", path).split("'.rela.plt'")[1])
        start, _, size = table[".plt"]
        for i, name in enumerate(slots):
            found[start + size * (i + 1)] = {name + "@plt"}
    return found, ifuncs


def test_a_sample_in_a_stub_is_named_for_the_function_it_leads_to(tmp_path):
    libc = re.search(r"\s(/\S*/libc\.so\.6)\s", tool("ldd", os.path.join(TESTS, "plt")))[1]
    files = [os.path.join(TESTS, "plt"), os.path.join(TESTS, "plt-ibt"),
             os.path.join(TESTS, "split"), libc]
    lines = [f"process pid=4242 start=0 realtime={time.time_ns()}"]
    expected, when, ifuncs = {}, 1000, 0
    for k, path in enumerate(files):
        base = 0x7f0000000000 + k * 0x10000000
        lines.append(f"module path={path} start={base} end={base + os.path.getsize(path)}")
        found, n = stubs(path)
        ifuncs += n
        # every table of the file has stubs among them
        assert {t for t, (start, size, _) in tables(path).items()
                if any(start <= a < start + size for a in found)} == set(tables(path)), path
        # a sample at each stub's first byte and at its eighth (every entry is 8 or 16)
        for address, names in found.items():
            for into in (0, 7):
                lines.append(f"sample time={when} ip={base + address + into}")
                expected[when] = (names, path)
                when += 1000
        # the first entry of a lazy table calls the dynamic linker: no function's stub
        start = tables(path)[".plt"][0]
        lines.append(f"sample time={when} ip={base + start + 2}")
        expected[when] = ({f"{os.path.basename(path)}+{hex(start + 2)}"}, path)
        when += 1000
    assert ifuncs > 0, "the C library has no ifunc's stub here"
    lines.append(f"end time={when}")
    db = recording(tmp_path, lines)
    with sqlite3.connect(db) as c:
        named = {t: (f, m) for t, f, m in c.execute("SELECT time, function, module FROM samples")}
    assert len(named) == len(expected)
    wrong = {t: (named[t], e) for t, e in expected.items()
             if named[t][0] not in e[0] or named[t][1] != e[1]}
    assert not wrong, wrong
