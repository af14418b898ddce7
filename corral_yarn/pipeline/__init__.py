"""The Corral pipeline's steps, importable without Airflow (thesis §4.1: plan offline, then place data
and run every job in its racks R_j).

``planning``: ingest history -> estimate -> plan -> report -> publish; ``execution``: per planned job
upload -> submit -> wait -> ingest -> verify locality -> record; ``tasks``: one function per Airflow
task; ``dag_params``: the DAGs' Params (the only module here that imports Airflow at import time).
Kept free of imports so that DAG files parse fast.
"""
