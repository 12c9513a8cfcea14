"""gpuprof advise on CUDA programs: each rule fires on the CUDA twin of the sample made
for it and not on its fixed version (skipped without a GPU, as every test here)."""
import json

import pytest
from conftest import GPUPROF, run


def findings(tmp_path, program, *args):
    out = tmp_path / "_".join(["run", *[a.strip("-") for a in args]])
    r = run([GPUPROF, "trace", "--runtime-trace", "-d", str(out), "-o", "run", "-f", "sqlite",
             "--", program, *args], cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    r = run([GPUPROF, "advise", "--format", "json", str(out / "run_results.db")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [table] = json.loads(r.stdout)
    return {row[table["columns"].index("Rule")] for row in table["rows"]}


@pytest.mark.parametrize("sample,rules", [
    ("hostsync", {"sync-per-launch"}),
    ("launchbound", {"launch-bound"}),
    ("copies", {"small-copies", "pageable-copies", "copy-kernel-serial"}),
])
def test_each_rule_on_its_cuda_sample(tmp_path, cuda_sample, sample, rules):
    found = findings(tmp_path, cuda_sample(sample))
    assert rules <= found, found
    assert not rules & findings(tmp_path, cuda_sample(sample), "--fixed")


def test_only_pageable_copies_on_vcopy(tmp_path, cuda_sample):
    """vcopy's device time is mostly its two copies, from and to a std::vector: pageable
    memory, which the rule names; nothing else is wrong with it."""
    assert findings(tmp_path, cuda_sample("vcopy")) == {"pageable-copies"}
