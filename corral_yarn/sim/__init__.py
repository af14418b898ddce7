"""Flow-level simulator of a multi-rack cluster running MapReduce jobs and DAGs (thesis §4.5, §4.5.7)."""

from corral_yarn.sim.engine import SimConfig, SimulationError
from corral_yarn.sim.metrics import SimResult
from corral_yarn.sim.run import RunSpec, simulate

__all__ = ["RunSpec", "SimConfig", "SimResult", "SimulationError", "simulate"]
