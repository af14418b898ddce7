"""The container deployment's files agree with each other and with docs/deploy.md (docker/, make deploy-check runs them)."""

from __future__ import annotations

import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

DOCKER = Path(__file__).resolve().parents[2] / "docker"


def site(name: str) -> dict[str, str]:
    root = ET.parse(DOCKER / "conf" / name).getroot()
    return {p.findtext("name"): p.findtext("value") for p in root.iter("property")}  # type: ignore[misc]


def topology(*hosts: str, conf_dir: Path) -> list[str]:
    done = subprocess.run(["bash", str(DOCKER / "bin" / "corral-topology"), *hosts], capture_output=True, text=True,
                          env={**os.environ, "HADOOP_CONF_DIR": str(conf_dir)}, check=True)
    return done.stdout.split()


def test_compose_runs_the_master_and_every_listed_worker() -> None:
    services = yaml.safe_load((DOCKER / "compose.yaml").read_text())["services"]
    workers = (DOCKER / "conf" / "workers").read_text().split()
    assert sorted(services) == sorted(["master", *workers])
    assert services["master"]["command"] == ["master"]
    for name in workers:
        assert services[name]["hostname"] == name and services[name]["command"] == ["worker"]
    assert {re.fullmatch(r"worker-([a-z])-\d", w).group(1) for w in workers} == {"a", "b", "c"}  # type: ignore[union-attr]


def test_site_files_set_what_docs_deploy_tells_an_operator_to_set() -> None:
    core, hdfs, yarn = site("core-site.xml"), site("hdfs-site.xml"), site("yarn-site.xml")
    deploy = (DOCKER.parent / "docs" / "deploy.md").read_text()
    assert hdfs["dfs.block.replicator.classname"] == "io.corralyarn.hdfs.CorralBlockPlacementPolicy"
    assert yarn["yarn.resourcemanager.scheduler.class"] == "io.corralyarn.yarn.CorralCapacityScheduler"
    assert int(yarn["yarn.cluster.max-application-priority"]) > 0
    assert core["net.topology.node.switch.mapping.impl"] == "org.apache.hadoop.net.ScriptBasedMapping"
    assert core["net.topology.script.file.name"] == "/opt/hadoop/bin/corral-topology"
    for key in ("dfs.block.replicator.classname", "yarn.resourcemanager.scheduler.class", "yarn.cluster.max-application-priority"):
        assert key in deploy


def test_topology_script_maps_worker_names_to_racks(tmp_path: Path) -> None:
    # Addresses are matched to names only through the cluster network's DNS (make deploy-check shows it);
    # here the names do not resolve, so they are taken as they are.
    (tmp_path / "workers").write_text("worker-a-1\nworker-c-2\n")
    assert topology("worker-a-1", "worker-c-2.dns.podman", "master", "10.255.255.7", "node-b-3", conf_dir=tmp_path) == [
        "/rack-a", "/rack-c", "/default-rack", "/default-rack", "/rack-b"]


def test_entrypoint_and_scripts_parse() -> None:
    for script in (DOCKER / "bin" / "hadoop-role", DOCKER.parent / "scripts" / "containers.sh"):
        subprocess.run(["bash", "-n", str(script)], check=True)
