"""Kerberos in the adapters without a KDC: token re-labelling, configuration checks, and GSSAPI failures
as KerberosErrors naming the cause (the secure cluster itself: tests/integration/test_secure_cluster.py)."""

from __future__ import annotations

import base64

import pytest
from pydantic import ValidationError

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.connect import Endpoints
from corral_yarn.cluster.kerberos import KerberosConfig, KerberosError, _read_fields, _read_vint, _vint, credentials, hdfs_token
from corral_yarn.cluster.rest import Retry
from corral_yarn.cluster.rm import AmContainerSpec

# A token a secure embedded cluster's NameNode sent for GETDELEGATIONTOKEN (owner corral, renewer hadoop).
WEBHDFS_TOKEN = "IAAGY29ycmFsBmhhZG9vcACKAaIUXYI8igGiOGoGPAECFAPP9XoGdv4d0zAD_uDy1qD2RaceEldFQkhERlMgZGVsZWdhdGlvbg8xMjcuMC4wLjE6MjA5NTQ"


def fields(url_string: str) -> list[bytes]:
    raw = base64.urlsafe_b64decode(url_string + "=" * (-len(url_string) % 4))
    found, end = _read_fields(raw, 4)
    assert end == len(raw)
    return found


def test_a_webhdfs_token_becomes_an_hdfs_token_aliased_by_its_service() -> None:
    alias, token = hdfs_token(WEBHDFS_TOKEN)
    before, after = fields(WEBHDFS_TOKEN), fields(token)
    assert before[2] == b"WEBHDFS delegation" and after[2] == b"HDFS_DELEGATION_TOKEN"
    assert after[:2] == before[:2] and after[3] == before[3] == b"127.0.0.1:20954"
    assert alias == "127.0.0.1:20954" and "=" not in token  # Hadoop's url-safe, unpadded base64


@pytest.mark.parametrize("value", [0, 1, 127, 128, 255, 300, 65535, 70000, 2**31 - 1])
def test_hadoop_vints_round_trip(value: int) -> None:
    encoded = _vint(value) + b"tail"
    assert _read_vint(encoded, 0) == (value, len(encoded) - 4)


def test_long_identifiers_keep_their_bytes() -> None:
    identifier, password = bytes(range(256)) * 2, b"p" * 20
    raw = b"".join(_vint(len(f)) + f for f in (identifier, password, b"WEBHDFS delegation", b"10.0.0.1:8020"))
    alias, token = hdfs_token(base64.urlsafe_b64encode(raw).decode().rstrip("="))
    assert alias == "10.0.0.1:8020" and fields(token)[:2] == [identifier, password]


def test_a_token_that_is_not_a_hadoop_token_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="not a Hadoop Token"):
        hdfs_token(base64.urlsafe_b64encode(b"\x7f\x01").decode())


def test_a_keytab_needs_its_principal() -> None:
    with pytest.raises(ValidationError, match="needs the principal"):
        KerberosConfig(keytab="/etc/krb5.keytab")


def test_missing_files_are_named(tmp_path) -> None:
    with pytest.raises(KerberosError, match="keytab .*missing.keytab does not exist"):
        credentials(KerberosConfig(principal="corral@EXAMPLE.COM", keytab=str(tmp_path / "missing.keytab")))
    with pytest.raises(KerberosError, match="krb5.conf .* does not exist"):
        credentials(KerberosConfig(krb5_conf=str(tmp_path / "krb5.conf")))


def test_an_empty_ticket_cache_says_no_ticket(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KRB5_CONFIG", str(tmp_path / "none.conf"))
    with pytest.raises(KerberosError, match="no Kerberos ticket") as caught:
        credentials(KerberosConfig(ccache=f"FILE:{tmp_path / 'krb5cc_empty'}"))
    assert "GSSAPI:" in str(caught.value) and "krb5cc_empty" in str(caught.value)


def test_endpoints_carry_kerberos_into_every_session() -> None:
    endpoints = Endpoints(webhdfs="http://nn:9870", resourcemanager="http://rm:8088",
                          kerberos={"principal": "corral@EXAMPLE.COM", "keytab": "/k", "realm": "EXAMPLE.COM"})
    cluster = Cluster(endpoints)
    assert cluster.retry.kerberos == KerberosConfig(principal="corral@EXAMPLE.COM", keytab="/k")
    assert Cluster(Endpoints(webhdfs="http://nn:9870", resourcemanager="http://rm:8088")).retry.kerberos is None
    assert Retry().session("alice").params == {"user.name": "alice"}  # pseudo authentication stays off the secure path


def test_launch_context_credentials_only_when_there_are_tokens() -> None:
    assert "credentials" not in AmContainerSpec(command="x").to_json()
    spec = AmContainerSpec(command="x", tokens={"127.0.0.1:8020": "abc"}).to_json()
    assert spec["credentials"] == {"tokens": {"entry": [{"key": "127.0.0.1:8020", "value": "abc"}]}, "secrets": {"entry": []}}
