"""The embedded multi-rack cluster, started once per test session (see docs/minicluster.md).

Set ``CORRAL_CLUSTER_JSON`` to the description JSON of an already running cluster
(``python -m corral_yarn.minicluster start``) to reuse it instead; it is then left running.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.minicluster import StartOptions, load_description, start_cluster, stop_cluster


@pytest.fixture(scope="session")
def minicluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The parsed cluster description JSON of a healthy 3-rack x 2-node embedded cluster."""
    existing = os.environ.get("CORRAL_CLUSTER_JSON")
    if existing:
        yield load_description(Path(existing))
        return
    # exit_with: the cluster also stops if this pytest process dies without running the teardown.
    options = StartOptions(base_dir=tmp_path_factory.mktemp("minicluster"), exit_with=os.getpid())
    description = start_cluster(options)
    try:
        yield description
    finally:
        stop_cluster(options.description_path)
