"""NoMora (paper 000, journal): latency-driven, application-performance-aware placement.

Pure core. So far: the performance-latency functions and fitting a user's own (latency, performance)
points (docs/nomora.md).
"""
