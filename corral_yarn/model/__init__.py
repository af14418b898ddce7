"""Latency-response functions L_j(r): MRCute (thesis §3.1.2) or MRCute+ (docs/model.md), DAG critical paths (§3.1.3)."""

from corral_yarn.model.mrcute import (
    critical_path,
    dag_latency,
    default_alpha,
    job_rack_latency,
    latency_table,
    packed_latency,
    packed_table,
    plus_rack_latency,
    plus_terms,
    rack_latency,
    rack_waves,
    reservation_latency,
    shuffle_bandwidth,
    write_latency,
)

__all__ = [
    "critical_path",
    "dag_latency",
    "default_alpha",
    "job_rack_latency",
    "latency_table",
    "packed_latency",
    "packed_table",
    "plus_rack_latency",
    "plus_terms",
    "rack_latency",
    "rack_waves",
    "reservation_latency",
    "shuffle_bandwidth",
    "write_latency",
]
