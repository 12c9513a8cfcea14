"""Names taken from the profiled program (marker texts, thread names, the command line)
hold any bytes: quotes, commas, newlines, markup, SQL, invalid UTF-8. They round-trip
exactly through CSV and SQLite, and become valid, inert text in JSON and pftrace."""
import csv
import io
import json
import os
import sqlite3
import subprocess

from conftest import GPUPROF, TESTS, outputs, run, trace
from pftrace import Trace

NAMES = [
    b'"</script><script>alert(1)</script>',
    b'comma, "quoted" and\nnewline\r\nand\ttab',
    b"'); DROP TABLE gpuprof_marker; --",
    b"invalid \xff\xfe utf-8 \xc3",
    "emoji \U0001F600 and \u00fc".encode(),
    b"back\\slash and %s %n",
]


def hostile_run(tmp_path):
    r = trace(tmp_path, ["--marker-trace", "-f", "csv", "sqlite", "json", "pftrace"],
              [os.path.join(TESTS, "markers").encode(), b"names", *NAMES])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    return out


def test_csv_and_sqlite_keep_every_byte(tmp_path):
    out = hostile_run(tmp_path)
    with open(out.path("marker_api_trace.csv"), newline="", encoding="utf-8",
              errors="surrogateescape") as f:
        rows = list(csv.DictReader(f))
    assert [r["Function"].encode("utf-8", "surrogateescape") for r in rows] == NAMES
    con = sqlite3.connect(out.path("results.db"))
    con.text_factory = bytes
    assert [r[0] for r in con.execute("SELECT name FROM markers ORDER BY start")] == NAMES
    assert con.execute("SELECT name FROM threads WHERE name IS NOT NULL").fetchall() == [(NAMES[0],)]
    assert con.execute("SELECT COUNT(*) FROM gpuprof_marker").fetchone() == (len(NAMES),)
    # query's CSV passes them through as well (as bytes: CSV has no encoding to enforce)
    r = subprocess.run([GPUPROF, "query", "--format", "csv", "--sql",
                        "SELECT name FROM markers ORDER BY start", out.path("results.db")],
                       cwd=tmp_path, capture_output=True)
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode("utf-8", "surrogateescape")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert [row[0].encode("utf-8", "surrogateescape") for row in rows[1:]] == NAMES


def test_json_and_pftrace_are_valid_and_inert(tmp_path):
    out = hostile_run(tmp_path)
    expected = [n.decode("utf-8", "replace") for n in NAMES]
    with open(out.path("results.json"), "rb") as f:
        raw = f.read()
    assert b"</script>" not in raw and b"<" not in raw  # safe inside an HTML page
    events = json.loads(raw.decode("utf-8"))["traceEvents"]  # strict UTF-8 and JSON
    assert [e["name"] for e in events if e.get("cat") == "MARKER_CORE_API"] == expected
    process = [e for e in events if e.get("name") == "process_name"][0]["args"]["name"]
    assert "</script>" in process  # the command line, escaped, read back intact

    pf = Trace(out.path("results.pftrace"))  # decodes every string as strict UTF-8
    assert [s["name"] for s in pf.slices if s["category"] == "MARKER_CORE_API"] == expected

    r = run([GPUPROF, "summary", "--format", "json", out.path("results.db")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tables = {t["name"]: t for t in json.loads(r.stdout)}
    assert sorted(row[0] for row in tables["markers"]["rows"]) == sorted(expected)


def test_terminal_output_escapes_control_characters(tmp_path):
    # 15: an escape sequence or a line break in a name never reaches the terminal raw
    names = [b"red \x1b[31m alert", b"two\nlines", b"bell\x07 and del\x7f"]
    r = trace(tmp_path, ["--marker-trace"], [os.path.join(TESTS, "markers").encode(), b"names", *names])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    for command in (["summary"], ["query", "--sql", "SELECT name FROM markers ORDER BY start"]):
        r = subprocess.run([GPUPROF, *command, out.path("results.db")], cwd=tmp_path,
                           capture_output=True)
        assert r.returncode == 0, r.stderr
        assert not any(c < 0x20 and c != 0x0a or c == 0x7f for c in r.stdout), r.stdout
        for shown in (b"red \\x1b[31m alert", b"two\\x0alines", b"bell\\x07 and del\\x7f"):
            assert shown in r.stdout, r.stdout


def test_long_names_are_cut_visibly(tmp_path):
    # 15: a name beyond the record's room is cut at a character boundary and marked
    long = "\u00e9" * 5000  # 10,000 bytes of two-byte characters
    r = trace(tmp_path, ["--marker-trace"], [os.path.join(TESTS, "markers"), "names", long, "short"])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    names = [m["name"] for m in out.query("SELECT name FROM markers ORDER BY start")]
    assert names[1] == "short"
    assert names[0].endswith("...") and long.startswith(names[0][:-3])
    assert 8000 < len(names[0].encode()) < 8192
