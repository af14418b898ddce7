"""Adapters to a real Hadoop cluster over its public HTTP interfaces (WebHDFS, RM and JobHistory REST).

Two actions carry out a Corral plan (thesis §4.1): :mod:`~corral_yarn.cluster.upload` puts one replica
of every block of job j's input in its racks R_j, and :mod:`~corral_yarn.cluster.rm` /
:mod:`~corral_yarn.cluster.mapreduce` submit the job tagged with R_j at priority p_j.
"""

from corral_yarn.cluster.connect import Cluster, Endpoints
from corral_yarn.cluster.errors import ApplicationFailedError, ClusterError, MalformedResponseError, RemoteError, UnreachableError
from corral_yarn.cluster.tags import CorralTags

__all__ = ["ApplicationFailedError", "Cluster", "ClusterError", "CorralTags", "Endpoints", "MalformedResponseError",
           "RemoteError", "UnreachableError"]
