"""The recurring jobs the pipeline knows how to run: for each recurring key, its MapReduce program and
where each period's input lands locally before it is uploaded into the job's racks (thesis §4.1).

The estimator predicts *what* recurs (``JobSpec.recurring_key``); the catalog says *how to run it*.
A planned job whose key has no catalog entry is reported and not run.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.contracts import ProfileChoice, Workload
from corral_yarn.io import load, save

CATALOG_SCHEMA = "corral-yarn/catalog/v1"
LIB = "org.apache.hadoop.mapreduce.lib"
# What hadoop-mapreduce-examples' Grep driver sets for its counting job (RegexMapper + LongSumReducer).
GREP = {"mapper": f"{LIB}.map.RegexMapper", "combiner": f"{LIB}.reduce.LongSumReducer",
        "reducer": f"{LIB}.reduce.LongSumReducer", "output_key_class": "org.apache.hadoop.io.Text",
        "output_value_class": "org.apache.hadoop.io.LongWritable"}


class RecurringJob(BaseModel):
    """How to run one recurring job: ``program`` from hadoop-mapreduce-examples and its input."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1, description="the estimator's recurring key (job name without dates)")
    program: Literal["wordcount", "sort", "grep"]
    reduces: int = Field(1, ge=0)
    grep_pattern: str | None = Field(None, description="regex counted by 'grep' (mapreduce.mapper.regex)")
    local_input: str = Field(description="local directory of one period's input; {date} is the job's arrival day")
    block_bytes: int | None = Field(None, ge=1024, description="HDFS block size of the uploaded input (None: the cluster's)")
    latency_profile: ProfileChoice | None = Field(
        None, description="how the job's performance falls with network latency (NoMora; docs/nomora.md): the plan and its tags carry it")

    def input_dir(self, arrival: datetime) -> Path:
        return Path(self.local_input.format(date=f"{arrival:%Y-%m-%d}", key=self.key))

    def mapreduce_job(self, name: str, jar: str, inputs: list[str], output: str) -> MapReduceJob:
        """The declarative MapReduce job of one run (submitted as one YARN application)."""
        if self.program == "grep":
            return MapReduceJob(name=name, jar=jar, inputs=inputs, output=output, reduces=self.reduces,
                                properties={"mapreduce.mapper.regex": self.grep_pattern or "."}, **GREP)
        return MapReduceJob(name=name, jar=jar, program=self.program, inputs=inputs, output=output, reduces=self.reduces)


class Catalog(BaseModel):
    """The catalog file: the job jar and the recurring jobs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["corral-yarn/catalog/v1"] = CATALOG_SCHEMA
    jar: str = Field(description="hadoop-mapreduce-examples jar (local path or hdfs:// URL)")
    jobs: list[RecurringJob] = Field(min_length=1)

    def entry(self, key: str | None) -> RecurringJob | None:
        return next((j for j in self.jobs if j.key == key), None)

    def with_latency_profiles(self, workload: Workload) -> Workload:
        """The predicted jobs with the latency profiles of their recurring keys' entries (the estimator knows none)."""
        jobs = [job.model_copy(update={"latency_profile": entry.latency_profile})
                if (entry := self.entry(job.recurring_key)) is not None and entry.latency_profile is not None else job
                for job in workload.jobs]
        return workload.model_copy(update={"jobs": jobs})

    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        return load(cls, path)

    def save(self, path: str | Path) -> None:
        save(self, path)
