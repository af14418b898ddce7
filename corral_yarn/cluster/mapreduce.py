"""MapReduce jobs through the RM REST API: a declarative job becomes one YARN application (thesis §4.1).

What ``JobSubmitter`` + ``YARNRunner`` do in a Hadoop client, done over HTTP: compute the input
splits from WebHDFS block locations, stage ``job.xml``, ``job.jar``, ``job.split`` and
``job.splitmetainfo`` in ``<staging-dir>/<user>/.staging/<job id>/``, and submit MRAppMaster as the
AM command with those files as local resources, the Corral tags (R_j) and the priority p_j. The
AM then runs the maps and reduces and writes the job's history for the JobHistory server. The
client configuration is the cluster's own: the site settings the RM and JobHistory server publish
on ``/conf``. See docs/cluster-adapters.md for why this design.
"""

from __future__ import annotations

import logging
import posixpath
import socket
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from pydantic import BaseModel, ConfigDict, Field

from corral_yarn.cluster.history import JobHistory, job_id_of
from corral_yarn.cluster.kerberos import hdfs_token
from corral_yarn.cluster.rm import AmContainerSpec, AppReport, LocalResource, ResourceManager, Submission
from corral_yarn.cluster.splits import FileSplit, InputBlock, file_splits, split_files
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.cluster.webhdfs import WebHdfs
from corral_yarn.errors import InputError

log = logging.getLogger(__name__)

APP_MASTER = "org.apache.hadoop.mapreduce.v2.app.MRAppMaster"
UNPACK_JAR_PATTERN = "(?:classes/|lib/).*"  # JobConf.UNPACK_JAR_PATTERN_DEFAULT
DEFAULT_STAGING = "/tmp/hadoop-yarn/staging"
AM_MAX_ATTEMPTS = "mapreduce.am.max-attempts"
DEFAULT_AM_MAX_ATTEMPTS = 2  # MRJobConfig.DEFAULT_MR_AM_MAX_ATTEMPTS
# YarnConfiguration.DEFAULT_YARN_CROSS_PLATFORM_APPLICATION_CLASSPATH and mapred-default.xml, for clusters that leave them unset
DEFAULT_YARN_CLASSPATH = ("$HADOOP_CONF_DIR,$HADOOP_COMMON_HOME/share/hadoop/common/*,$HADOOP_COMMON_HOME/share/hadoop/common/lib/*,"
                          "$HADOOP_HDFS_HOME/share/hadoop/hdfs/*,$HADOOP_HDFS_HOME/share/hadoop/hdfs/lib/*,"
                          "$HADOOP_YARN_HOME/share/hadoop/yarn/*,$HADOOP_YARN_HOME/share/hadoop/yarn/lib/*")
DEFAULT_MR_CLASSPATH = "$HADOOP_MAPRED_HOME/share/hadoop/mapreduce/*,$HADOOP_MAPRED_HOME/share/hadoop/mapreduce/lib/*"

IO = "org.apache.hadoop.io"
LIB = "org.apache.hadoop.mapreduce.lib"
# The settings each program's driver in hadoop-mapreduce-examples makes (WordCount.main, Sort.run with
# -inFormat KeyValueTextInputFormat -outFormat TextOutputFormat -outKey Text -outValue Text).
PROGRAMS: dict[str, dict[str, str]] = {
    "wordcount": {"mapper": "org.apache.hadoop.examples.WordCount$TokenizerMapper",
                  "combiner": "org.apache.hadoop.examples.WordCount$IntSumReducer",
                  "reducer": "org.apache.hadoop.examples.WordCount$IntSumReducer",
                  "output_key_class": f"{IO}.Text", "output_value_class": f"{IO}.IntWritable"},
    "sort": {"mapper": "org.apache.hadoop.mapreduce.Mapper", "reducer": "org.apache.hadoop.mapreduce.Reducer",
             "input_format": f"{LIB}.input.KeyValueTextInputFormat", "output_format": f"{LIB}.output.TextOutputFormat",
             "output_key_class": f"{IO}.Text", "output_value_class": f"{IO}.Text"},
}
# Hadoop's own defaults (Job / JobContextImpl) for what neither the job nor its program sets.
DEFAULTS = {"mapper": "org.apache.hadoop.mapreduce.Mapper", "reducer": "org.apache.hadoop.mapreduce.Reducer",
            "input_format": f"{LIB}.input.TextInputFormat", "output_format": f"{LIB}.output.TextOutputFormat",
            "output_key_class": f"{IO}.LongWritable", "output_value_class": f"{IO}.Text"}
PROPERTY = {"mapper": "mapreduce.job.map.class", "combiner": "mapreduce.job.combine.class",
            "reducer": "mapreduce.job.reduce.class", "input_format": "mapreduce.job.inputformat.class",
            "output_format": "mapreduce.job.outputformat.class", "output_key_class": "mapreduce.job.output.key.class",
            "output_value_class": "mapreduce.job.output.value.class",
            "map_output_key_class": "mapreduce.map.output.key.class",
            "map_output_value_class": "mapreduce.map.output.value.class"}


class MapReduceJob(BaseModel):
    """A MapReduce job described as data: jar, program or classes, input and output, reducers, memory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    jar: str = Field(min_length=1, description="local path or hdfs:// URL of the job jar")
    program: Literal["wordcount", "sort"] | None = Field(None, description="take the classes of this hadoop-mapreduce-examples program")
    mapper: str | None = None
    combiner: str | None = None
    reducer: str | None = None
    input_format: str | None = None
    output_format: str | None = None
    output_key_class: str | None = None
    output_value_class: str | None = None
    map_output_key_class: str | None = None
    map_output_value_class: str | None = None
    inputs: list[str] = Field(min_length=1, description="HDFS files or directories")
    output: str = Field(min_length=1, description="HDFS directory; must not exist")
    reduces: int = Field(1, ge=0)
    am_memory_mb: int | None = Field(None, ge=128, description="None: the cluster's yarn.app.mapreduce.am.resource.mb")
    map_memory_mb: int | None = Field(None, ge=128, description="None: the cluster's mapreduce.map.memory.mb")
    reduce_memory_mb: int | None = Field(None, ge=128, description="None: the cluster's mapreduce.reduce.memory.mb")
    properties: dict[str, str] = Field(default_factory=dict, description="further job configuration")

    def classes(self) -> dict[str, str]:
        """The job's class settings as configuration properties: explicit fields over program over defaults."""
        merged = {**DEFAULTS, **PROGRAMS.get(self.program or "", {})}
        merged.update({k: v for k in PROPERTY if (v := getattr(self, k)) is not None})
        return {PROPERTY[k]: v for k, v in merged.items()}


@dataclass(frozen=True)
class ClientConfiguration:
    """The cluster's site configuration as the RM and JobHistory server publish it: a Hadoop client's view."""

    properties: dict[str, str]
    classpath: list[str]

    @classmethod
    def from_services(cls, rm: ResourceManager, history: JobHistory) -> ClientConfiguration:
        published = {**rm.configuration(), **history.configuration()}
        site = {k: v for k, (v, source) in published.items()
                if not source.endswith("-default.xml") and v != "<redacted>" and not k.startswith("hadoop.security.")}
        yarn_cp = published.get("yarn.application.classpath", ("", ""))[0] or DEFAULT_YARN_CLASSPATH
        mr_cp = published.get("mapreduce.application.classpath", ("", ""))[0] or DEFAULT_MR_CLASSPATH
        entries = [e.strip() for e in f"{yarn_cp},{mr_cp}".split(",") if e.strip()]
        return cls(site, entries)

    def get(self, key: str, default: str) -> str:
        return self.properties.get(key) or default

    @property
    def default_fs(self) -> str:
        fs = self.properties.get("fs.defaultFS", "")
        if not fs.startswith("hdfs://"):
            raise InputError(f"the cluster's fs.defaultFS is {fs!r}, not an hdfs:// URL")
        return fs.rstrip("/")


class MapReduceSubmitter:
    """Submits :class:`MapReduceJob` s as single YARN applications with Corral's tags and priority."""

    def __init__(self, rm: ResourceManager, hdfs: WebHdfs, conf: ClientConfiguration, user: str) -> None:
        self.rm = rm
        self.hdfs = hdfs
        self.conf = conf
        self.user = user

    def submit(self, job: MapReduceJob, tags: CorralTags, priority: int = 0, queue: str = "default",
               reservation_id: str | None = None, grant_period: tuple[int, int] | None = None) -> AppReport:
        """Submit ``job`` unless it was already submitted for this plan and job (then return that one)."""
        if existing := self.rm.existing(tags):
            return existing
        attempts = self.am_max_attempts(job)
        output = self.qualify(job.output)
        if self.hdfs.status(self._path(output), strict=False) is not None:
            raise InputError(f"output directory {output} already exists")
        splits = self.splits(job.inputs)
        # the tags in job.xml too, as YARNRunner keeps them: JobHistory then knows the run's plan, job and recurring key
        job = job.model_copy(update={"properties": {**job.properties, "mapreduce.job.tags": ",".join(tags.encode())}})
        am_mb = job.am_memory_mb or int(self.conf.get("yarn.app.mapreduce.am.resource.mb", "1536"))
        submission = Submission(name=job.name, tags=tags, priority=priority, queue=queue, memory_mb=am_mb,
                                application_type="MAPREDUCE", max_attempts=attempts, reservation_id=reservation_id,
                                grant_period=grant_period)
        return self.rm.submit(submission, stage=lambda app_id, sub: replace(sub, am=self.stage(app_id, job, splits, output)))

    def am_max_attempts(self, job: MapReduceJob) -> int:
        """MRAppMaster attempts as ``YARNRunner`` asks them: ``mapreduce.am.max-attempts`` of the job, else of the
        cluster, else 2; a later attempt recovers the finished tasks (the RM caps it at its own am.max-attempts)."""
        given = job.properties.get(AM_MAX_ATTEMPTS) or self.conf.get(AM_MAX_ATTEMPTS, str(DEFAULT_AM_MAX_ATTEMPTS))
        try:
            attempts = int(given)
        except ValueError:
            attempts = 0
        if attempts < 1:
            raise InputError(f"{AM_MAX_ATTEMPTS} is {given!r}, not a whole number of at least 1")
        return attempts

    def qualify(self, path: str) -> str:
        """A fully qualified hdfs:// URL; relative paths are under the user's home directory."""
        if path.startswith("hdfs://"):
            return path
        absolute = path if path.startswith("/") else posixpath.join(f"/user/{self.user}", path)
        return self.conf.default_fs + posixpath.normpath(absolute)

    def _path(self, url: str) -> str:
        return url.removeprefix(self.conf.default_fs) or "/"

    def splits(self, inputs: list[str]) -> list[FileSplit]:
        """``FileInputFormat.getSplits`` over the input files (hidden files, _ and ., skipped)."""
        splits: list[FileSplit] = []
        for given in inputs:
            root = self._path(self.qualify(given))
            status = self.hdfs.status(root, strict=False)
            if status is None:
                raise InputError(f"input path {given} does not exist in HDFS")
            files = [(root, status)] if status["type"] == "FILE" else [
                (posixpath.join(root, name), st) for name, st in self.hdfs.list(root, status=True)
                if st["type"] == "FILE" and not name.startswith(("_", "."))]
            for path, st in files:
                blocks = [InputBlock(b.offset, b.length, b.hosts) for b in self.hdfs.block_locations(path)] if st["length"] else []
                splits += file_splits(self.conf.default_fs + path, st["length"], st["blockSize"], blocks)
        return splits

    def stage(self, app_id: str, job: MapReduceJob, splits: list[FileSplit], output: str) -> AmContainerSpec:
        """Write the job files under the staging directory and return MRAppMaster's launch context."""
        job_dir = posixpath.join(self.conf.get("yarn.app.mapreduce.am.staging-dir", DEFAULT_STAGING), self.user, ".staging", job_id_of(app_id))
        self.hdfs.makedirs(job_dir, permission="700")
        split_bytes, meta_bytes = split_files(splits)
        jar_url = self._stage_jar(job.jar, job_dir)
        self.hdfs.write(posixpath.join(job_dir, "job.split"), split_bytes, overwrite=True)
        self.hdfs.write(posixpath.join(job_dir, "job.splitmetainfo"), meta_bytes, overwrite=True)
        props = self.job_properties(app_id, job, len(splits), output, job_dir, jar_url)
        self.hdfs.write(posixpath.join(job_dir, "job.xml"), job_xml(props), overwrite=True)
        resources = (self._resource("job.xml", posixpath.join(job_dir, "job.xml")),
                     self._resource("job.jar", self._path(jar_url), "PATTERN", UNPACK_JAR_PATTERN),
                     self._resource("jobSubmitDir/job.split", posixpath.join(job_dir, "job.split")),
                     self._resource("jobSubmitDir/job.splitmetainfo", posixpath.join(job_dir, "job.splitmetainfo")))
        log.info("staged %s for %s in %s (%d splits)", job.name, app_id, job_dir, len(splits))
        return AmContainerSpec(command=self.am_command(job), environment=self.am_environment(), local_resources=resources,
                               tokens=self.tokens())

    def tokens(self) -> dict[str, str]:
        """On a secure cluster, the HDFS delegation token the job's AM and tasks read and write HDFS with,
        renewable by the ResourceManager (``TokenCache.obtainTokensForNamenodes``); none otherwise."""
        if not self.hdfs.secure:
            return {}
        principal = self.conf.properties.get("yarn.resourcemanager.principal")
        if not principal:
            raise InputError("the secure cluster's ResourceManager publishes no yarn.resourcemanager.principal (the token renewer)")
        renewer = principal.replace("_HOST", urlsplit(self.rm.rest.base_url).hostname or "")
        alias, token = hdfs_token(self.hdfs.delegation_token(renewer))
        return {alias: token}

    def _stage_jar(self, jar: str, job_dir: str) -> str:
        if jar.startswith("hdfs://"):
            return jar
        local = Path(jar)
        if not local.is_file():
            raise InputError(f"job jar {jar} is not a file")
        self.hdfs.upload(posixpath.join(job_dir, "job.jar"), str(local), overwrite=True)
        return self.conf.default_fs + posixpath.join(job_dir, "job.jar")

    def _resource(self, key: str, path: str, type_: str = "FILE", pattern: str | None = None) -> LocalResource:
        st = self.hdfs.status(path)
        return LocalResource(key=key, resource=self.conf.default_fs + path, size=int(st["length"]),
                             timestamp=int(st["modificationTime"]), type=type_, pattern=pattern)

    def job_properties(self, app_id: str, job: MapReduceJob, maps: int, output: str, job_dir: str, jar_url: str) -> dict[str, str]:
        """job.xml: the cluster's site configuration, then what JobSubmitter and the job's setters add."""
        submit_job = {
            "mapreduce.job.name": job.name, "mapreduce.job.user.name": self.user, "mapreduce.framework.name": "yarn",
            "mapreduce.job.id": job_id_of(app_id), "mapreduce.job.dir": self.conf.default_fs + job_dir, "mapreduce.job.jar": jar_url,
            "mapreduce.job.maps": str(maps), "mapreduce.job.reduces": str(job.reduces),
            "mapred.mapper.new-api": "true", "mapred.reducer.new-api": "true",
            "mapreduce.input.fileinputformat.inputdir": ",".join(self.qualify(i).replace(",", "\\,") for i in job.inputs),
            "mapreduce.output.fileoutputformat.outputdir": output,
            "mapreduce.job.working.dir": self.conf.default_fs + f"/user/{self.user}",
            "mapreduce.job.submithostname": socket.gethostname(),
        }
        return {**self.conf.properties, **submit_job, **memory_properties(job), **job.classes(), **job.properties}

    def am_command(self, job: MapReduceJob) -> str:
        """MRAppMaster's command line as ``YARNRunner.setupAMCommand`` builds it (<LOG_DIR> is expanded by YARN)."""
        opts = heap_opts(job.am_memory_mb) if job.am_memory_mb else self.conf.get("yarn.app.mapreduce.am.command-opts", "-Xmx1024m")
        return " ".join([
            "$JAVA_HOME/bin/java", "-Djava.io.tmpdir=$PWD/tmp", "-Dlog4j.configuration=container-log4j.properties",
            "-Dyarn.app.container.log.dir=<LOG_DIR>", "-Dyarn.app.container.log.filesize=0", "-Dhadoop.root.logger=INFO,CLA",
            "-Dhadoop.root.logfile=syslog", self.conf.get("yarn.app.mapreduce.am.admin-command-opts", ""), opts,
            APP_MASTER, "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"])

    def am_environment(self) -> dict[str, str]:
        """CLASSPATH as ``MRApps.setClasspath``: working directory and job jar first, then the cluster's classpath."""
        local = ["$PWD", "$PWD/*", "$PWD/job.jar/*", "$PWD/job.jar/classes/", "$PWD/job.jar/lib/*"]
        return {"CLASSPATH": ":".join(local + self.conf.classpath), "SHELL": "/bin/bash", "LD_LIBRARY_PATH": "$PWD"}


def heap_opts(container_mb: int) -> str:
    """JVM heap for a container: 80 % of it (mapreduce.job.heap.memory-mb.ratio's default)."""
    return f"-Xmx{int(container_mb * 0.8)}m"


def memory_properties(job: MapReduceJob) -> dict[str, str]:
    """Container sizes and heaps the job sets; what it leaves unset stays the cluster's."""
    props = {}
    for task, mb in (("map", job.map_memory_mb), ("reduce", job.reduce_memory_mb)):
        if mb:
            props |= {f"mapreduce.{task}.memory.mb": str(mb), f"mapreduce.{task}.java.opts": heap_opts(mb)}
    if job.am_memory_mb:
        props |= {"yarn.app.mapreduce.am.resource.mb": str(job.am_memory_mb), "yarn.app.mapreduce.am.command-opts": heap_opts(job.am_memory_mb)}
    return props


def job_xml(properties: dict[str, str]) -> bytes:
    """A Hadoop configuration file with these properties."""
    lines = ['<?xml version="1.0" encoding="UTF-8" standalone="no"?>', "<configuration>"]
    lines += [f"<property><name>{escape(k)}</name><value>{escape(v)}</value></property>" for k, v in sorted(properties.items())]
    lines.append("</configuration>")
    return ("\n".join(lines) + "\n").encode("utf-8")
