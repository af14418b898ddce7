"""Placeholder until the fast planner lands: delegates to the reference (replaced in this same change)."""

from corral_yarn.planner.reference import plan

__all__ = ["plan"]
