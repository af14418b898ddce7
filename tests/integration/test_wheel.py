"""The built wheel, installed away from the source tree (issue 16 item 5): its console script runs
``corral plan-demo`` and ``corral demo --help``, and the resources it reads (the bundled DAGs) come
from the installed package, not from a checkout. The wheel is built in pip's isolated build
environment, as a user's ``pip install`` would; its dependencies are this test run's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding only the installed wheel (``pip install --target``)."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(work / "dist")],
                   check=True, timeout=600)
    wheel = next((work / "dist").glob("corral_yarn-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(work / "site"), str(wheel)],
                   check=True, timeout=300)
    return work / "site"


def _run(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command run from a directory outside the checkout, with the wheel first on the path."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([*args], cwd=site.parent, env=env, capture_output=True, text=True, timeout=600)


def test_the_installed_package_is_the_wheel_and_carries_the_bundled_dags(site: Path) -> None:
    probe = "import json, corral_yarn.pipeline.demo as d; print(json.dumps([d.__file__, str(d.DAGS_FOLDER)]))"
    result = _run(site, sys.executable, "-c", probe)
    assert result.returncode == 0, result.stderr
    module, dags = json.loads(result.stdout)
    assert Path(module).is_relative_to(site)
    assert Path(dags).is_relative_to(site)
    assert sorted(p.name for p in Path(dags).glob("corral_*.py")) == ["corral_plan.py", "corral_run.py"]


def test_the_console_script_runs_plan_demo_and_demo_help(site: Path) -> None:
    corral = site / "bin" / "corral"
    demo = _run(site, str(corral), "plan-demo", "--out", str(site.parent / "out"))
    assert demo.returncode == 0, demo.stderr
    for scenario in ("batch", "online"):
        plan = json.loads((site.parent / "out" / f"plan-{scenario}.json").read_text())
        assert plan["jobs"]
        assert (site.parent / "out" / f"report-{scenario}" / "index.html").is_file()
    usage = _run(site, str(corral), "demo", "--help")
    assert usage.returncode == 0, usage.stderr
    assert "usage: corral demo" in usage.stdout
