"""Start, inspect and stop the embedded cluster's JVM (java_patch's ``MiniClusterMain``).

The JVM writes the cluster description JSON (docs/minicluster.md) only once every daemon is
healthy, so ``start_cluster`` returns when that file appears and names the JVM's pid.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gssapi
import requests
from requests_gssapi import OPTIONAL, HTTPSPNEGOAuth

from corral_yarn.errors import CorralError
from corral_yarn.minicluster import processes

LOG = logging.getLogger(__name__)

SCHEMA_VERSION = "corral-yarn/minicluster/v1"
DEFAULT_BASE_DIR = Path(".corral/minicluster")
MAIN_CLASS = "io.corralyarn.minicluster.MiniClusterMain"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TARGET = REPO_ROOT / "java_patch" / "target"
MARKER = ".corral-minicluster"
PRELOAD_PROPERTY = "corral.minicluster.container-preload"  # ClusterConfig.CONTAINER_PRELOAD_KEY
SCHEDULER_PROPERTY = "corral.minicluster.scheduler"  # ClusterConfig.SCHEDULER_KEY
JVM_CONF_DIR = "jvm-conf"  # MiniClusterMain.JVM_CONF_DIR: first on the cluster JVM's classpath
SCHEDULERS = {"corral": "io.corralyarn.yarn.CorralCapacityScheduler",
              "capacity": "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"}
# Directories the launcher recreates on every start (a fresh, formatted cluster).
STATE_DIRS = ("conf", "hdfs", "yarn", "tmp", "app-logs", "logs", "kerberos", JVM_CONF_DIR)
JAVA_OPTS = (
    "-Xmx2g",
    "-XX:+UseSerialGC",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    # Hadoop's KerberosUtil and the MiniKdc read and refresh the JDK's Kerberos configuration (secure mode)
    "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
)
LOG4J = """\
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p %c{1}: %m%n
log4j.logger.org.apache.hadoop.hdfs.StateChange=WARN
log4j.logger.BlockStateChange=WARN
log4j.logger.org.apache.hadoop.hdfs.server.blockmanagement=WARN
log4j.logger.org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl=WARN
log4j.logger.org.apache.hadoop.conf.Configuration.deprecation=WARN
log4j.logger.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=WARN
log4j.logger.org.apache.hadoop.mapreduce.v2.hs.JobHistory=WARN
"""


class MiniClusterError(CorralError):
    """The embedded cluster could not be started, inspected or stopped."""


@dataclass(frozen=True)
class StartOptions:
    """How to start the embedded cluster (defaults fit 2 cores and 24 GB)."""

    racks: int = 3
    nodes_per_rack: int = 2
    base_dir: Path = DEFAULT_BASE_DIR
    out: Path | None = None
    target_dir: Path = DEFAULT_TARGET
    timeout_s: float = 300.0
    exit_with: int | None = None  # pid whose end also stops the cluster (test sessions)
    container_preload: Path | None = None  # a library every container preloads (the testbed's shim)
    scheduler: str = "corral"  # the RM's scheduler: corral, or capacity (stock YARN, for comparisons)
    secure: bool = False  # Kerberos: a KDC, keytabs, SPNEGO on the web services (docs/minicluster.md, "Secure mode")

    @property
    def description_path(self) -> Path:
        return (self.out or self.base_dir / "cluster.json").resolve()


def load_description(path: Path) -> dict[str, Any]:
    """Reads and checks a cluster description JSON."""
    try:
        description: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError as e:
        raise MiniClusterError(f"no cluster description at {path}; is the cluster started?") from e
    except json.JSONDecodeError as e:
        raise MiniClusterError(f"{path} is not a cluster description: {e}") from e
    except UnicodeDecodeError as e:
        raise MiniClusterError(f"{path} is not a cluster description (not UTF-8 text): {e}") from e
    if not isinstance(description, dict):
        raise MiniClusterError(f"{path} is not a cluster description: expected a JSON object, got {type(description).__name__}")
    if description.get("schema_version") != SCHEMA_VERSION:
        raise MiniClusterError(
            f"{path}: schema_version {description.get('schema_version')!r}, expected {SCHEMA_VERSION!r}"
        )
    return description


def start_cluster(options: StartOptions) -> dict[str, Any]:
    """Starts the cluster in a background JVM and returns its description once it is healthy."""
    if options.racks < 1 or options.nodes_per_rack < 1:
        raise MiniClusterError("--racks and --nodes-per-rack must be at least 1")
    if options.scheduler not in SCHEDULERS:
        raise MiniClusterError(f"--scheduler must be one of {', '.join(SCHEDULERS)}, got {options.scheduler!r}")
    out = options.description_path
    _refuse_if_running(out)
    out.unlink(missing_ok=True)  # a stale description of a cluster that died
    classpath, app_classpath, examples = _jars(options.target_dir)
    base = _fresh_base_dir(options.base_dir.resolve())
    log_file = base / "logs" / "minicluster.log"
    (base / "log4j.properties").write_text(LOG4J)
    (base / JVM_CONF_DIR).mkdir()  # a classpath directory must exist when the JVM starts to be searched
    command = [
        _java(),
        *JAVA_OPTS,
        f"-Dlog4j.configuration=file:{base / 'log4j.properties'}",
        *_preload_property(options.container_preload),
        f"-D{SCHEDULER_PROPERTY}={SCHEDULERS[options.scheduler]}",
        "-cp", f"{base / JVM_CONF_DIR}:{classpath}", MAIN_CLASS,
        "--racks", str(options.racks), "--nodes-per-rack", str(options.nodes_per_rack),
        "--base-dir", str(base), "--out", str(out),
        "--app-classpath", app_classpath, "--examples-jar", str(examples),
    ]  # fmt: skip
    if options.exit_with is not None:
        command += ["--exit-with-pid", str(options.exit_with)]
    if options.secure:
        command += ["--secure", "true"]
    LOG.info("starting %sembedded cluster: %d racks x %d nodes in %s", "secure " if options.secure else "", options.racks,
             options.nodes_per_rack, base)
    with open(log_file, "ab") as log:
        jvm = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        return _await_description(jvm, out, log_file, options.timeout_s)
    except BaseException:
        processes.terminate(jvm.pid, grace_s=30.0)
        raise


def cluster_status(out: Path) -> dict[str, Any]:
    """Liveness of the cluster described at ``out``: the JVM, NameNode, ResourceManager, JobHistory."""
    description = load_description(out)
    pid = int(description["pid"])
    status: dict[str, Any] = {"description": str(out), "pid": pid, "running": processes.is_alive(pid)}
    if not status["running"]:
        return status
    auth = _spnego(description.get("kerberos"))
    status["live_datanodes"] = _get_json(
        description["webhdfs"] + "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState", auth
    )["beans"][0]["NumLiveDataNodes"]
    metrics = _get_json(description["resourcemanager"] + "/ws/v1/cluster/metrics", auth)["clusterMetrics"]
    status["active_nodemanagers"] = metrics["activeNodes"]
    status["apps_running"] = metrics["appsRunning"]
    status["jobhistory_started"] = _get_json(description["jobhistory"] + "/ws/v1/history/info", auth)["historyInfo"]["startedOn"] > 0
    return status


def _spnego(kerberos: dict[str, str] | None) -> HTTPSPNEGOAuth | None:
    """SPNEGO as the secure cluster's client principal, from its keytab (None for an insecure cluster)."""
    if not kerberos:
        return None
    os.environ["KRB5_CONFIG"] = kerberos["krb5_conf"]
    try:
        creds = gssapi.Credentials(name=gssapi.Name(kerberos["principal"], gssapi.NameType.kerberos_principal), usage="initiate",
                                   store={"client_keytab": kerberos["keytab"], "ccache": "MEMORY:corral-minicluster-status"})
    except gssapi.exceptions.GSSError as e:
        raise MiniClusterError(f"cannot authenticate as {kerberos['principal']} with {kerberos['keytab']}: {e.gen_message()}") from None
    return HTTPSPNEGOAuth(creds=creds, mutual_authentication=OPTIONAL)


def stop_cluster(out: Path, timeout_s: float = 90.0) -> bool:
    """Stops the cluster described at ``out`` and every container process it left behind.

    Returns False if no cluster was running. The description file is removed.
    """
    description = load_description(out)
    pid = int(description["pid"])
    base = Path(description["base_dir"])
    was_running = processes.is_alive(pid)
    if was_running:
        if not processes.cmdline_contains(pid, MAIN_CLASS):
            raise MiniClusterError(f"pid {pid} from {out} is not an embedded cluster JVM; not stopping it")
        LOG.info("stopping embedded cluster (pid %d)", pid)
        processes.terminate(pid, grace_s=timeout_s)
    for stray in processes.find_by_path(base):
        LOG.warning("killing leftover container process %d", stray)
        processes.terminate(stray, grace_s=5.0)
    out.unlink(missing_ok=True)
    return was_running


def _refuse_if_running(out: Path) -> None:
    if not out.exists():
        return
    try:
        pid = int(load_description(out)["pid"])
    except (MiniClusterError, KeyError, ValueError):
        return
    if processes.is_alive(pid) and processes.cmdline_contains(pid, MAIN_CLASS):
        raise MiniClusterError(f"a cluster is already running (pid {pid}, {out}); stop it first")


def _preload_property(library: Path | None) -> list[str]:
    if library is None:
        return []
    if not library.is_file():
        raise MiniClusterError(f"container preload library {library} does not exist")
    return [f"-D{PRELOAD_PROPERTY}={library.resolve()}"]


def _jars(target: Path) -> tuple[str, str, Path]:
    """Launcher classpath, container classpath (Hadoop's jars and ours: Kwiken's TaskRuntimeEstimator runs in
    the MR AM) and examples jar, all built by Maven."""
    plugin = sorted(target.glob("corral-hadoop-*[0-9].jar"))
    launcher = sorted(target.glob("corral-hadoop-*-minicluster.jar"))
    examples = target / "examples" / "hadoop-mapreduce-examples.jar"
    lib = target / "lib"
    if not (plugin and launcher and examples.is_file() and lib.is_dir()):
        raise MiniClusterError(f"java_patch is not built (nothing usable in {target}); run java_patch/build.sh")
    classpath = ":".join([f"{lib}/*", f"{target / 'lib-webapps'}/*", str(plugin[-1]), str(launcher[-1])])
    return classpath, f"{lib}/*:{plugin[-1]}", examples


def _fresh_base_dir(base: Path) -> Path:
    """Creates the base directory, or empties the state of a previous cluster in it."""
    if base.exists() and any(base.iterdir()) and not (base / MARKER).exists():
        raise MiniClusterError(f"{base} is not empty and was not made by the minicluster; choose another --base-dir")
    base.mkdir(parents=True, exist_ok=True)
    (base / MARKER).touch()
    for name in STATE_DIRS:
        shutil.rmtree(base / name, ignore_errors=True)
    (base / "logs").mkdir()
    return base


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise MiniClusterError("no java found (set JAVA_HOME or put java 17 on PATH)")
    return java


def _await_description(jvm: subprocess.Popen[bytes], out: Path, log_file: Path, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        code = jvm.poll()
        if code is not None:
            raise MiniClusterError(f"the cluster JVM exited with {code} during start-up:\n{_tail(log_file)}")
        if out.exists():
            description = load_description(out)
            if int(description["pid"]) == jvm.pid:
                return description
        time.sleep(0.5)
    raise MiniClusterError(f"the cluster was not healthy after {timeout_s:.0f} s; log {log_file}:\n{_tail(log_file)}")


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no log at {path})"


def _get_json(url: str, auth: HTTPSPNEGOAuth | None = None) -> dict[str, Any]:
    try:
        response = requests.get(url, headers={"Accept": "application/json"}, timeout=10, auth=auth)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result
    except (requests.RequestException, ValueError) as e:
        raise MiniClusterError(f"cluster endpoint {url} did not answer: {e}") from e

