"""Paragon (paper 003): classify jobs for heterogeneity and interference by collaborative filtering
(classify.py, §3.1), schedule them greedily for QoS (schedule.py, §3.2), and a generated 1,000-server
cluster to measure both (groundtruth.py, simulate.py; docs/paragon.md). Pure: numpy only."""
