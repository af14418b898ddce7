"""Corral on a Kerberized cluster: the embedded cluster in secure mode (its own KDC, a keytab for the
daemons, SPNEGO on WebHDFS and the REST APIs, block access tokens), the adapters authenticating with
SPNEGO from a keytab or a ticket cache, and a MapReduce job run upload -> submit -> wait -> verify with
an HDFS delegation token, its containers and input blocks inside R_j (docs/minicluster.md, "Secure mode")."""

from __future__ import annotations

import os
import random
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import requests

from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.connect import Endpoints
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.kerberos import KerberosError
from corral_yarn.cluster.mapreduce import MapReduceJob

pytestmark = pytest.mark.integration
BLOCK = 65536


def with_kerberos(description: dict[str, Any], **kerberos: str) -> Cluster:
    endpoints = Endpoints.model_validate({**description, "kerberos": {"krb5_conf": description["kerberos"]["krb5_conf"], **kerberos}})
    return Cluster(endpoints, progress=False, timeout_s=120)


def test_the_description_names_realm_kdc_and_client_identity(secure_cluster: dict[str, Any]) -> None:
    kerberos = secure_cluster["kerberos"]
    assert kerberos["realm"] == "CORRAL.TEST" and kerberos["principal"] == "corral@CORRAL.TEST"
    assert os.path.isfile(kerberos["keytab"]) and "dns_canonicalize_hostname = false" in open(kerberos["krb5_conf"]).read()


def test_clients_are_told_to_authenticate_data_transfer(secure_cluster: dict[str, Any]) -> None:
    # the DataNodes refuse a block read or write without the SASL handshake; the upload and the job below
    # (containers, the NodeManager's localizer, the DataNodes' WebHDFS) all pass through it
    site = ElementTree.parse(Path(secure_cluster["conf_dir"]) / "hdfs-site.xml").getroot()
    settings = {p.findtext("name"): p.findtext("value") for p in site.iter("property")}
    assert settings["dfs.data.transfer.protection"] == "authentication"


def test_requests_without_kerberos_are_refused(secure_cluster: dict[str, Any]) -> None:
    for url in (f"{secure_cluster['webhdfs']}/webhdfs/v1/?op=GETFILESTATUS", f"{secure_cluster['resourcemanager']}/ws/v1/cluster/apps",
                f"{secure_cluster['jobhistory']}/ws/v1/history/info"):
        assert requests.get(url, params={"user.name": "corral"}, timeout=60).status_code == 401, url


@pytest.fixture(scope="module")
def wordcount(secure_cluster: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Upload -> submit -> wait: a map-only wordcount whose input and containers are in rack B (R_j)."""
    cluster = Cluster.from_description(secure_cluster, progress=False, timeout_s=120)
    topology = cluster.topology()
    racks = [topology.racks[1]]
    run = random.Random().randrange(10**6)
    words = [f"w{random.Random(run + i).randrange(50)}" for i in range(30000)]
    local = tmp_path_factory.mktemp("secure-input") / "data.txt"
    local.write_text("\n".join(" ".join(words[i:i + 10]) for i in range(0, len(words), 10)) + "\n")
    cluster.uploader(topology).upload(local, f"/secure/{run}/in/data.txt", racks, block_bytes=BLOCK)
    # map-only: a secure ShuffleHandler opens map outputs with SecureIOUtils, which needs Hadoop's native
    # library, not on Maven Central (docs/minicluster.md, "Secure mode")
    job = MapReduceJob(name="wc", jar=secure_cluster["examples_jar"], program="wordcount", inputs=[f"/secure/{run}/in"],
                       output=f"/secure/{run}/out", reduces=0)
    app = cluster.mapreduce().submit(job, CorralTags(f"secure-{run}", "wc", tuple(racks)), priority=4)
    final = cluster.rm.wait(app.app_id, timeout_s=900)
    return {"cluster": cluster, "topology": topology, "racks": racks, "run": run, "words": words, "final": final}


def test_the_job_ran_as_its_principal_with_blocks_and_containers_in_r_j(wordcount: dict[str, Any]) -> None:
    cluster, racks, final = wordcount["cluster"], wordcount["racks"], wordcount["final"]
    assert cluster.rm.user() == "corral"  # SPNEGO from the keytab: the RM knows us by our principal
    assert final.succeeded and final.user == "corral" and final.priority == 4
    blocks = cluster.hdfs.block_locations(f"/secure/{wordcount['run']}/in/data.txt")
    assert len(blocks) >= 2 and all(racks[0] in b.racks for b in blocks)
    attempts = cluster.history.attempts(job_id_of(final.app_id))
    assert attempts
    for attempt in attempts:
        assert (attempt.rack or wordcount["topology"].rack_of_node(attempt.node_http_address)) in racks, attempt
    outputs = [n for n in cluster.hdfs.list(f"/secure/{wordcount['run']}/out") if n.startswith("part-")]
    assert len(outputs) == len(blocks)  # one map per block, map-only


def test_the_output_counts_every_word(wordcount: dict[str, Any]) -> None:
    cluster, out = wordcount["cluster"], f"/secure/{wordcount['run']}/out"
    counted: Counter[str] = Counter()
    for name in cluster.hdfs.list(out):
        if name.startswith("part-"):
            with cluster.hdfs.read(f"{out}/{name}", encoding="utf-8") as f:
                for word, count in (line.split("\t") for line in f.read().splitlines()):
                    counted[word] += int(count)
    assert counted == Counter(wordcount["words"])


def test_a_ticket_cache_filled_by_kinit_authenticates(secure_cluster: dict[str, Any], tmp_path: Any) -> None:
    kerberos, ccache = secure_cluster["kerberos"], f"FILE:{tmp_path / 'krb5cc'}"
    subprocess.run(["kinit", "-k", "-t", kerberos["keytab"], "-c", ccache, kerberos["principal"]], check=True, timeout=60,
                   env={**os.environ, "KRB5_CONFIG": kerberos["krb5_conf"]})
    assert with_kerberos(secure_cluster, ccache=ccache).rm.user() == "corral"


def test_a_keytab_without_the_principal_is_a_clear_error(secure_cluster: dict[str, Any]) -> None:
    cluster = with_kerberos(secure_cluster, principal="someone-else@CORRAL.TEST", keytab=secure_cluster["kerberos"]["keytab"])
    with pytest.raises(KerberosError, match="someone-else@CORRAL.TEST.*keytab"):
        cluster.rm.cluster_info()


def test_an_empty_ticket_cache_is_a_clear_error(secure_cluster: dict[str, Any], tmp_path: Any) -> None:
    with pytest.raises(KerberosError, match="no Kerberos ticket"):
        with_kerberos(secure_cluster, ccache=f"FILE:{tmp_path / 'none'}").rm.cluster_info()
