"""corral-yarn: Corral's network-aware offline planning of recurring jobs for Hadoop YARN and HDFS."""

__version__ = "0.1.0"
