"""corral_plan: every period, learn from the finished runs and plan the next period's recurring jobs.

One ``CorralPlanOperator`` task: ingest history (JobHistory server -> history store) -> estimate (the
period's predicted jobs) -> plan (rack set R_j, priority p_j, start T_j per job on the live cluster) ->
report (HTML; its path is in the task log) -> publish (versioned on HDFS, earlier plans kept). Its XCom is
the published plan's HDFS directory; its outlet, the ``corral_published_plan`` Asset, schedules
``corral_run``. Every argument comes from the DAG's Params; with ``node_classes_file`` (and ``interference``)
the racks are planned by node class (docs/paragon.md); ``sharing`` ``slots`` lets small jobs share a rack, as
``corral plan --sharing slots`` (docs/planner.md). Logic: ``corral_yarn.pipeline``; design: docs/pipeline.md.
"""

from __future__ import annotations

from airflow.sdk import dag

from corral_yarn.airflow.operators import CorralPlanOperator
from corral_yarn.pipeline.dag_params import PUBLISHED_PLAN, dag_defaults, planning_params


@dag(
    dag_id="corral_plan",
    schedule="@daily",
    params=planning_params(),
    **dag_defaults(retry_delay_s=30),
    doc_md=__doc__,
)
def corral_plan() -> None:
    CorralPlanOperator(
        task_id="plan",
        outlets=[PUBLISHED_PLAN],
        doc_md="Ingest history, estimate the period, plan R_j/p_j/T_j, render the report, publish the plan on HDFS "
               "(XCom: its HDFS directory). Safe to retry: each step keeps or rewrites its own files.",
        home="{{ params.home }}",
        plans_dir="{{ params.plans_dir }}",
        period_start="{{ params.period_start }}",
        horizon="{{ params.horizon }}",
        scenario="{{ params.scenario }}",
        slack="{{ params.slack }}",
        nic_gbps="{{ params.nic_gbps }}",
        disk_mbps="{{ params.disk_mbps }}",
        oversubscription="{{ params.oversubscription }}",
        task_memory_mb="{{ params.task_memory_mb }}",
        node_classes_file="{{ params.node_classes_file }}",
        interference="{{ params.interference }}",
        sharing="{{ params.sharing }}",
    )


corral_plan()
