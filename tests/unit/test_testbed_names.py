"""Testbeds with different homes get different namespaces and CPU groups (two benchmarks may share a machine)."""

from __future__ import annotations

import os
from pathlib import Path

from corral_yarn.testbed import control, cpu


def test_a_testbeds_namespace_follows_its_home(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    mine, theirs = tmp_path / "ablation", tmp_path / "hetero"
    assert control.namespace_for(mine, "corral-bench") != control.namespace_for(theirs, "corral-bench")
    monkeypatch.chdir(tmp_path)
    assert control.namespace_for(Path("ablation"), "corral-bench") == control.namespace_for(mine, "corral-bench"), "relative or absolute"
    name = control.namespace_for(mine, "corral-bench")
    assert name.startswith("corral-bench-") and len(name) <= 32 and os.sep not in name
    assert cpu.group_root(name) != cpu.group_root(control.namespace_for(theirs, "corral-bench"))


def test_the_cli_testbed_keeps_its_namespace_and_another_home_gets_its_own(tmp_path: Path) -> None:
    assert control.namespace_of(control.DEFAULT_HOME) == control.NAMESPACE
    other = control.namespace_of(tmp_path / "second")
    assert other != control.NAMESPACE and other == control.namespace_for(tmp_path / "second", control.NAMESPACE)
