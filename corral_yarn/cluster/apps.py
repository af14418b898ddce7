"""Other YARN applications: a user-supplied AM container spec, submitted with the same Corral hints.

The description names the AM command, its environment and HDFS files to localize; sizes and
modification times of those files (which the NodeManager checks) are read from WebHDFS, so the
description stays hand-writable. DistributedShell, for instance, is its ApplicationMaster class
on the command line and its jar as a local resource (docs/cluster-adapters.md).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from corral_yarn.cluster.rm import AmContainerSpec, LocalResource, Submission
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.cluster.webhdfs import WebHdfs
from corral_yarn.errors import InputError


class FileResource(BaseModel):
    """An HDFS file the NodeManager puts in the container's directory as ``key``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1)
    path: str = Field(min_length=1, description="absolute HDFS path")
    type: str = Field("FILE", pattern="^(FILE|ARCHIVE|PATTERN)$")


class YarnApp(BaseModel):
    """An application described by its ApplicationMaster's container spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    command: str = Field(min_length=1, description="shell command line; <LOG_DIR> is expanded by YARN")
    environment: dict[str, str] = Field(default_factory=dict)
    local_resources: list[FileResource] = Field(default_factory=list)
    memory_mb: int = Field(512, ge=1)
    vcores: int = Field(1, ge=1)
    application_type: str = "YARN"
    max_attempts: int = Field(1, ge=1)

    def submission(self, hdfs: WebHdfs, default_fs: str, tags: CorralTags, priority: int = 0,
                   queue: str = "default") -> Submission:
        """The ApplicationSubmissionContext, with each local resource's size and timestamp from HDFS."""
        resources = tuple(self._resource(hdfs, default_fs, r) for r in self.local_resources)
        am = AmContainerSpec(command=self.command, environment=dict(self.environment), local_resources=resources)
        return Submission(name=self.name, tags=tags, am=am, priority=priority, queue=queue, memory_mb=self.memory_mb,
                          vcores=self.vcores, application_type=self.application_type, max_attempts=self.max_attempts)

    @staticmethod
    def _resource(hdfs: WebHdfs, default_fs: str, r: FileResource) -> LocalResource:
        status = hdfs.status(r.path, strict=False)
        if status is None:
            raise InputError(f"local resource {r.key!r}: {r.path} does not exist in HDFS")
        return LocalResource(key=r.key, resource=default_fs.rstrip("/") + r.path, size=int(status["length"]),
                             timestamp=int(status["modificationTime"]), type=r.type)
