"""The MapReduce job description and what it becomes: job.xml properties, AM command, classpath."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

from corral_yarn.cluster.apps import FileResource, YarnApp
from corral_yarn.cluster.mapreduce import ClientConfiguration, MapReduceJob, MapReduceSubmitter, job_xml
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.errors import InputError
from corral_yarn.io import parse


class PublishedConf:
    """Stands in for the RM / JobHistory ``/conf`` readers."""

    def __init__(self, props: dict[str, tuple[str, str]]) -> None:
        self.props = props

    def configuration(self) -> dict[str, tuple[str, str]]:
        return self.props


RM_CONF = {"fs.defaultFS": ("hdfs://127.0.0.1:9000", "core-site.xml"),
           "io.file.buffer.size": ("4096", "core-default.xml"),
           "yarn.application.classpath": ("/conf,/jars/*", "yarn-site.xml"),
           "yarn.resourcemanager.scheduler.address": ("127.0.0.1:8030", "programmatically"),
           "hadoop.security.secret": ("<redacted>", "core-site.xml")}
JHS_CONF = {"mapreduce.application.classpath": ("/mr/*", "mapred-site.xml"),
            "yarn.app.mapreduce.am.resource.mb": ("512", "mapred-site.xml"),
            "yarn.app.mapreduce.am.command-opts": ("-Xmx384m", "mapred-site.xml")}


def submitter() -> MapReduceSubmitter:
    conf = ClientConfiguration.from_services(PublishedConf(RM_CONF), PublishedConf(JHS_CONF))  # type: ignore[arg-type]
    return MapReduceSubmitter(rm=None, hdfs=None, conf=conf, user="alice")  # type: ignore[arg-type]


def job(**kw: Any) -> MapReduceJob:
    return MapReduceJob(**{"name": "wc", "jar": "/x.jar", "inputs": ["in"], "output": "/out", **kw})


def test_client_configuration_keeps_site_settings_and_the_classpath() -> None:
    conf = submitter().conf
    assert conf.properties["fs.defaultFS"] == "hdfs://127.0.0.1:9000"
    assert "io.file.buffer.size" not in conf.properties  # a *-default.xml value: the AM has it already
    assert "hadoop.security.secret" not in conf.properties
    assert conf.classpath == ["/conf", "/jars/*", "/mr/*"]


def test_program_classes_yield_to_explicit_fields_and_defaults_fill_the_rest() -> None:
    classes = job(program="wordcount", reducer="my.Reducer").classes()
    assert classes["mapreduce.job.map.class"] == "org.apache.hadoop.examples.WordCount$TokenizerMapper"
    assert classes["mapreduce.job.reduce.class"] == "my.Reducer"
    assert classes["mapreduce.job.inputformat.class"].endswith("TextInputFormat")
    sort = job(program="sort").classes()
    assert sort["mapreduce.job.inputformat.class"].endswith("KeyValueTextInputFormat")
    assert "mapreduce.job.combine.class" not in sort


def test_job_properties_are_what_jobsubmitter_sets() -> None:
    s = submitter()
    props = s.job_properties("application_17_0003", job(program="wordcount", reduces=3, properties={"x.y": "z"}), 4,
                             "hdfs://127.0.0.1:9000/out", "/tmp/hadoop-yarn/staging/alice/.staging/job_17_0003", "hdfs://127.0.0.1:9000/j.jar")
    assert props["mapreduce.job.id"] == "job_17_0003"
    assert props["mapreduce.job.maps"] == "4" and props["mapreduce.job.reduces"] == "3"
    assert props["mapreduce.input.fileinputformat.inputdir"] == "hdfs://127.0.0.1:9000/user/alice/in"
    assert props["mapreduce.job.dir"] == "hdfs://127.0.0.1:9000/tmp/hadoop-yarn/staging/alice/.staging/job_17_0003"
    assert props["mapred.mapper.new-api"] == "true" and props["x.y"] == "z"
    assert props["yarn.resourcemanager.scheduler.address"] == "127.0.0.1:8030"
    assert "mapreduce.map.memory.mb" not in props  # left to the cluster
    sized = s.job_properties("application_1_1", job(map_memory_mb=1000), 1, "o", "/d", "j")
    assert sized["mapreduce.map.memory.mb"] == "1000" and sized["mapreduce.map.java.opts"] == "-Xmx800m"


def test_am_command_and_environment_follow_yarnrunner() -> None:
    s = submitter()
    command = s.am_command(job())
    assert command.startswith("$JAVA_HOME/bin/java ") and "-Xmx384m" in command
    assert "org.apache.hadoop.mapreduce.v2.app.MRAppMaster 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr" in command
    assert "-Xmx819m" in s.am_command(job(am_memory_mb=1024))
    assert s.am_environment()["CLASSPATH"].split(":")[:2] == ["$PWD", "$PWD/*"]
    assert s.am_environment()["CLASSPATH"].endswith(":/conf:/jars/*:/mr/*")


def test_qualify_resolves_relative_paths_under_the_home_directory() -> None:
    s = submitter()
    assert s.qualify("data/in") == "hdfs://127.0.0.1:9000/user/alice/data/in"
    assert s.qualify("/a/../b") == "hdfs://127.0.0.1:9000/b"
    assert s.qualify("hdfs://other:1/x") == "hdfs://other:1/x"


def test_job_xml_escapes_and_parses_as_a_hadoop_configuration() -> None:
    root = ET.fromstring(job_xml({"a": "x<y&z", "b": "1"}))
    assert {p.findtext("name"): p.findtext("value") for p in root} == {"a": "x<y&z", "b": "1"}


def test_job_description_errors_name_the_field() -> None:
    with pytest.raises(InputError, match="job.json: reduces"):
        parse(MapReduceJob, {"name": "j", "jar": "x", "inputs": ["i"], "output": "o", "reduces": -1}, source="job.json")
    with pytest.raises(InputError, match="program"):
        parse(MapReduceJob, {"name": "j", "jar": "x", "inputs": ["i"], "output": "o", "program": "grep"}, source="job.json")


def test_am_attempts_follow_yarnrunner_job_then_cluster_then_two() -> None:
    s = submitter()
    assert s.am_max_attempts(job()) == 2
    site = MapReduceSubmitter(rm=None, hdfs=None, conf=ClientConfiguration({"mapreduce.am.max-attempts": "4"}, []),  # type: ignore[arg-type]
                              user="alice")
    assert site.am_max_attempts(job()) == 4
    assert site.am_max_attempts(job(properties={"mapreduce.am.max-attempts": "1"})) == 1
    for bad in ("0", "two", "-3"):
        with pytest.raises(InputError, match=f"mapreduce.am.max-attempts is '{bad}'"):
            s.am_max_attempts(job(properties={"mapreduce.am.max-attempts": bad}))


def test_default_fs_must_be_hdfs() -> None:
    with pytest.raises(InputError, match="not an hdfs:// URL"):
        _ = ClientConfiguration({"fs.defaultFS": "file:///"}, []).default_fs


class FakeHdfs:
    """WebHDFS status answers for the local-resource lookups of a YarnApp."""

    def __init__(self, files: dict[str, dict[str, int]]) -> None:
        self.files = files

    def status(self, path: str, strict: bool = True) -> dict[str, int] | None:
        return self.files.get(path)


def test_yarn_app_resources_take_size_and_timestamp_from_hdfs() -> None:
    app = YarnApp(name="ds", command="run", local_resources=[FileResource(key="AppMaster.jar", path="/apps/ds.jar")])
    hdfs = FakeHdfs({"/apps/ds.jar": {"length": 43004, "modificationTime": 1405452071209}})
    body = app.submission(hdfs, "hdfs://nn:8020/", CorralTags("p", "ds", ("/rack-a",)), priority=2).to_json("application_1_1")  # type: ignore[arg-type]
    [entry] = body["am-container-spec"]["local-resources"]["entry"]
    assert entry == {"key": "AppMaster.jar", "value": {"resource": "hdfs://nn:8020/apps/ds.jar", "type": "FILE",
                                                         "visibility": "APPLICATION", "size": 43004, "timestamp": 1405452071209}}
    assert body["priority"] == 2 and body["resource"] == {"memory": 512, "vCores": 1}
    with pytest.raises(InputError, match="local resource 'AppMaster.jar': /apps/ds.jar does not exist"):
        app.submission(FakeHdfs({}), "hdfs://nn:8020", CorralTags("p", "ds", ()))  # type: ignore[arg-type]


def test_jobhistory_conf_values_come_back_as_hadoops_text() -> None:
    from corral_yarn.cluster.history import conf_text

    # the JobHistory server's JSON types values: false, 1000, 0.01; job.xml holds "false", "1000", "0.01"
    assert [conf_text(v) for v in (False, True, 1000, 0.01, "a,b", None)] == ["false", "true", "1000", "0.01", "a,b", ""]
