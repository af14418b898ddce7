"""Latency-response functions L_j(r): MRCute (thesis §3.1.2), DAG critical paths (§3.1.3)."""

from corral_yarn.model.mrcute import (
    dag_latency,
    default_alpha,
    job_rack_latency,
    latency_table,
    rack_latency,
    reservation_latency,
    shuffle_bandwidth,
)

__all__ = [
    "dag_latency",
    "default_alpha",
    "job_rack_latency",
    "latency_table",
    "rack_latency",
    "reservation_latency",
    "shuffle_bandwidth",
]
