"""Where the Hadoop services are, and one object holding a client for each of them.

Addresses come from flags or from a cluster description JSON (the embedded cluster writes one:
keys ``webhdfs``, ``resourcemanager``, ``jobhistory``; see docs/minicluster.md), and optionally
``grant_secret_file``, the secret the submitter signs planner grants with (docs/deploy.md), and
``kerberos``, the identity every request authenticates as on a secure cluster.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from corral_yarn.cluster.grants import read_secret
from corral_yarn.cluster.history import JobHistory
from corral_yarn.cluster.kerberos import KerberosConfig
from corral_yarn.cluster.mapreduce import ClientConfiguration, MapReduceSubmitter
from corral_yarn.cluster.rest import Retry
from corral_yarn.cluster.rm import ResourceManager
from corral_yarn.cluster.topology import Topology, discover
from corral_yarn.cluster.upload import RackAwareUploader
from corral_yarn.cluster.webhdfs import WebHdfs
from corral_yarn.errors import InputError
from corral_yarn.io import load, parse


def http_url(address: str) -> str:
    """``host:port`` or a URL -> a URL (http:// added when missing)."""
    return address if "://" in address else f"http://{address}"


class Endpoints(BaseModel):
    """HTTP addresses of the NameNode (WebHDFS and JMX), the ResourceManager and the JobHistory server."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    webhdfs: str
    resourcemanager: str
    jobhistory: str | None = None
    grant_secret_file: str | None = None  # the RM's yarn.scheduler.corral.grant.secret, in a file (docs/deploy.md)
    kerberos: KerberosConfig | None = None  # a secure cluster: who we authenticate as (docs/deploy.md, "Kerberos")

    @classmethod
    def from_cluster_json(cls, path: str | Path) -> Endpoints:
        return load(cls, path)


@dataclass
class Cluster:
    """Clients of one Hadoop cluster, sharing a user, timeout and retry policy."""

    endpoints: Endpoints
    user: str | None = None  # None: the user the RM attributes our requests to (its /userinfo)
    timeout_s: float = 30.0
    retry: Retry = Retry()
    threads: int = 4
    progress: bool = True
    grant_secret: bytes | None = None  # None: read endpoints.grant_secret_file if given, else unsigned mode

    def __post_init__(self) -> None:
        if self.endpoints.kerberos and not self.retry.kerberos:  # every client authenticates as the endpoints say
            self.retry = replace(self.retry, kerberos=self.endpoints.kerberos)

    @cached_property
    def rm(self) -> ResourceManager:
        secret = self.grant_secret or (read_secret(path) if (path := self.endpoints.grant_secret_file) else None)
        return ResourceManager(http_url(self.endpoints.resourcemanager), user=self.user, timeout_s=self.timeout_s, retry=self.retry,
                               grant_secret=secret)

    @cached_property
    def hdfs_user(self) -> str:
        return self.user or self.rm.user() or getpass.getuser()

    @cached_property
    def hdfs(self) -> WebHdfs:
        return WebHdfs(http_url(self.endpoints.webhdfs), user=self.hdfs_user, timeout_s=self.timeout_s, retry=self.retry)

    @cached_property
    def history(self) -> JobHistory:
        if not self.endpoints.jobhistory:
            raise InputError("no JobHistory server address given (cluster description key 'jobhistory')")
        return JobHistory(http_url(self.endpoints.jobhistory), timeout_s=self.timeout_s, retry=self.retry)

    @classmethod
    def from_description(cls, description: dict[str, Any] | str | Path, **options: Any) -> Cluster:
        """Clients for the cluster a description (its dict, or the JSON file) names."""
        if isinstance(description, dict):
            return cls(parse(Endpoints, description, source="cluster description"), **options)
        return cls(Endpoints.from_cluster_json(description), **options)

    def topology(self) -> Topology:
        return discover(http_url(self.endpoints.webhdfs), self.rm)

    def uploader(self, topology: Topology | None = None) -> RackAwareUploader:
        return RackAwareUploader(self.hdfs, topology or self.topology(), threads=self.threads, progress=self.progress)

    def mapreduce(self) -> MapReduceSubmitter:
        conf = ClientConfiguration.from_services(self.rm, self.history)
        return MapReduceSubmitter(self.rm, self.hdfs, conf, self.hdfs_user)
