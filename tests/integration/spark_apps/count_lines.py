"""A Spark application for test_spark_yarn.py: counts the lines of argv[1] and prints one JSON line with
its application id and the hosts of its executors (the driver runs in the test's process, client mode)."""

import json
import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
sc = spark.sparkContext
lines = sc.textFile(sys.argv[1]).count()
driver = sc.getConf().get("spark.driver.host")
hosts = sorted(e.host() for e in sc._jsc.sc().statusTracker().getExecutorInfos() if e.host() != driver)
print("CORRAL-SPARK " + json.dumps({"app_id": sc.applicationId, "lines": lines, "executor_hosts": hosts}))
spark.stop()
