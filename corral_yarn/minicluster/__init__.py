"""The embedded multi-rack Hadoop cluster for tests and the demo (backed by java_patch's launcher).

``python -m corral_yarn.minicluster start|status|stop|control``; see docs/minicluster.md.
"""

from corral_yarn.minicluster.control import control
from corral_yarn.minicluster.launcher import (
    DEFAULT_BASE_DIR,
    SCHEDULERS,
    MiniClusterError,
    StartOptions,
    cluster_status,
    load_description,
    start_cluster,
    stop_cluster,
)

__all__ = [
    "DEFAULT_BASE_DIR",
    "SCHEDULERS",
    "MiniClusterError",
    "StartOptions",
    "cluster_status",
    "control",
    "load_description",
    "start_cluster",
    "stop_cluster",
]
