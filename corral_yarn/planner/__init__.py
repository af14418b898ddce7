"""Corral's offline planner (thesis §4.3): provisioning + prioritization, LP lower bounds."""
