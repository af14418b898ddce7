"""The resource selector for jobs with deadlines (thesis §4.2, §4.4): MRCute <N, B> candidates,
Oktopus virtual-cluster allocation on a tree, imbalance-based selection, and its online simulation."""

from corral_yarn.selector.candidates import Candidate, CandidateRules, CandidateSpace, candidate_space, vm_profile
from corral_yarn.selector.simulation import SimulationResult, StrategyResult, simulate
from corral_yarn.selector.strategies import STRATEGIES, Choice, Strategy, select
from corral_yarn.selector.tree import Allocation, Datacenter, TreeTopology, VirtualCluster
from corral_yarn.selector.workload import Request, WorkloadConfig, generate_requests

__all__ = [
    "STRATEGIES",
    "Allocation",
    "Candidate",
    "CandidateRules",
    "CandidateSpace",
    "Choice",
    "Datacenter",
    "Request",
    "SimulationResult",
    "Strategy",
    "StrategyResult",
    "TreeTopology",
    "VirtualCluster",
    "WorkloadConfig",
    "candidate_space",
    "generate_requests",
    "select",
    "simulate",
    "vm_profile",
]
