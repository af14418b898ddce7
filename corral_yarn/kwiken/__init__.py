"""Kwiken (thesis ch. 5): apportion a latency-reduction budget across the stages of a DAG.

Pure core: per-stage variance-response curves learned from latency samples, SumVar and the baselines,
the trace-driven DAG simulator, partial answers, catch-up, synthetic workloads, and the mapping of a
budget onto Hadoop MapReduce speculative execution (docs/kwiken.md).
"""
