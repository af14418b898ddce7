"""Profiling a job that has no history (thesis §3.1.2): run it on a sample of its input and keep the
run, marked ``is_profile``, for the MRCute fit (``fit.fit_job`` falls back to profiling runs).

The thesis profiles on a single machine; we run the sample on the racks given (one rack of the
embedded cluster is two machines) through the project's cluster adapters. The sample is the first
``sample_bytes`` of the job's input files, cut at a line end (text inputs, as the thesis's jobs).
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
from pathlib import Path


from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.errors import InputError
from estimator.identity import RecurringKey
from estimator.records import IngestReport, JobRun
from estimator.sources.jobhistory import JobHistorySource
from estimator.store import HistoryStore

log = logging.getLogger(__name__)


def _input_files(cluster: Cluster, inputs: list[str]) -> list[str]:
    files = []
    for path in inputs:
        status = cluster.hdfs.status(path)
        if status["type"] == "DIRECTORY":
            files += [f"{path}/{name}" for name, s in sorted(cluster.hdfs.list(path, status=True))
                      if s["type"] == "FILE" and not name.startswith(("_", "."))]
        else:
            files.append(path)
    return files


def sample_text(cluster: Cluster, inputs: list[str], sample_bytes: int) -> bytes:
    """The first ``sample_bytes`` of the input files in order, cut after the last whole line."""
    sample = b""
    for path in _input_files(cluster, inputs):
        with cluster.hdfs.read(path, length=sample_bytes - len(sample)) as f:
            sample += f.read()
        if len(sample) >= sample_bytes:
            break
    cut = sample.rfind(b"\n") + 1
    if cut == 0:
        raise InputError(f"no whole line in the first {sample_bytes} bytes of {inputs}; profile with a larger sample")
    return sample[:cut]


def profile(cluster: Cluster, job: MapReduceJob, key: str, racks: list[str], sample_bytes: int, store: HistoryStore,
            plan_id: str = "profile", block_bytes: int | None = None) -> JobRun:
    """Run ``job`` on a sample of its input on ``racks``, store the run as the profile of ``key``."""
    base = f"{job.output.rstrip('/')}.profile"
    cluster.hdfs.delete(base, recursive=True)  # an earlier profile's sample and output: profiling again replaces them
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "sample.txt"
        local.write_bytes(sample_text(cluster, job.inputs, sample_bytes))
        cluster.uploader().upload(local, f"{base}/in/sample.txt", racks, block_bytes=block_bytes)
    sample_job = job.model_copy(update={"name": f"{job.name}-profile", "inputs": [f"{base}/in"], "output": f"{base}/out"})
    app = cluster.mapreduce().submit(sample_job, CorralTags(plan_id, f"{key}-profile", tuple(racks)))
    cluster.rm.wait(app.app_id, timeout_s=1800)
    job_id = job_id_of(app.app_id)
    cluster.history.wait_for_job(job_id)
    source = JobHistorySource(cluster.history.rest.base_url, RecurringKey(), history=cluster.history)
    run = dataclasses.replace(source.run(job_id), recurring_key=key, is_profile=True)
    report = store.append([run], IngestReport())
    log.info("profiled %s on a %d-byte sample as %s: %s", key, sample_bytes, job_id, report.summary())
    return run
