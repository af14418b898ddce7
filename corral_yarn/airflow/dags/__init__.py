"""The bundled pipelines, corral_plan and corral_run (docs/pipeline.md); the demo points Airflow here."""
