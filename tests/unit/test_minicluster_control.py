"""The control channel's client against a one-line server speaking ControlServer's protocol.

The live protocol is tested in Java (ControlServerTest) and on the live cluster by the fault tests.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.errors import InputError
from corral_yarn.minicluster import MiniClusterError, control
from corral_yarn.minicluster.__main__ import main
from corral_yarn.minicluster.launcher import SCHEMA_VERSION


class LineServer:
    """Accepts connections on 127.0.0.1, records each received line, answers with ``reply(line)``."""

    def __init__(self, reply: Callable[[str], bytes]) -> None:
        self.reply = reply
        self.lines: list[str] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def description(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "control": {"address": f"127.0.0.1:{self.sock.getsockname()[1]}"}}

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(1024)
                    if not chunk:
                        break
                    data += chunk
                line = data.decode().rstrip("\n")
                self.lines.append(line)
                conn.sendall(self.reply(line))


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[LineServer]:
    answers: dict[str, bytes] = {
        "stop-datanode 127.0.100.10": b"ok DataNode 127.0.100.10 stopped\n",
        "start-datanode 127.0.100.10": b"ok\n",
        "stop-datanode 10.0.0.1": b"error: unknown host 10.0.0.1; workers: [127.0.100.10]\n",
        "garbage": b"maybe\n",
        "silent": b"",
    }
    s = LineServer(lambda line: answers.get(line, b"error: unknown command\n"))
    yield s
    s.sock.close()


def test_ok_replies_give_their_detail(server: LineServer) -> None:
    assert control(server.description, "stop-datanode", "127.0.100.10") == "DataNode 127.0.100.10 stopped"
    assert control(server.description, "start-datanode", "127.0.100.10") == ""
    assert server.lines == ["stop-datanode 127.0.100.10", "start-datanode 127.0.100.10"]


def test_error_and_malformed_replies_raise(server: LineServer) -> None:
    with pytest.raises(MiniClusterError, match=r"refused 'stop-datanode 10.0.0.1': unknown host 10.0.0.1"):
        control(server.description, "stop-datanode", "10.0.0.1")
    with pytest.raises(MiniClusterError, match="neither ok nor error"):
        control(server.description, "garbage")
    with pytest.raises(MiniClusterError, match="closed without a reply line"):
        control(server.description, "silent")


@pytest.mark.parametrize(("command", "args", "field"), [
    ("", (), "command"),
    ("stop-datanode", ("127.0.100.10 extra",), "args[0]"),
    ("stop-datanode\nstart-datanode", (), "command"),
    ("stop-datanode", ("",), "args[0]"),
    ("stöp", (), "command"),
])
def test_malformed_commands_are_refused_before_sending(server: LineServer, command: str, args: tuple[str, ...],
                                                        field: str) -> None:
    with pytest.raises(InputError) as e:
        control(server.description, command, *args)
    assert e.value.field == field
    assert server.lines == []


@pytest.mark.parametrize("description", [
    {},
    {"control": {}},
    {"control": {"address": "127.0.0.1"}},
    {"control": {"address": "127.0.0.1:notaport"}},
    {"control": {"address": "10.0.0.1:4000"}},
    {"control": {"address": "example.org:4000"}},
    {"control": {"address": "127.0.0.1:70000"}},
])
def test_descriptions_without_a_loopback_channel_are_refused(description: dict[str, Any]) -> None:
    with pytest.raises(InputError) as e:
        control(description, "stop-datanode", "127.0.100.10")
    assert e.value.field == "control.address"


def test_a_cluster_that_is_gone_is_a_clear_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    with pytest.raises(MiniClusterError, match=f"127.0.0.1:{port} did not answer"):
        control({"control": {"address": f"127.0.0.1:{port}"}}, "stop-datanode", "127.0.100.10")


def test_cli_exit_codes(server: LineServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(server.description))
    assert main(["control", "--description", str(path), "stop-datanode", "127.0.100.10"]) == 0
    assert capsys.readouterr().out == "ok DataNode 127.0.100.10 stopped\n"
    assert main(["control", "--description", str(path), "stop-datanode", "10.0.0.1"]) == 1
    assert "unknown host 10.0.0.1" in capsys.readouterr().err
    assert main(["control", "--description", str(path), "stop datanode"]) == 2
    assert "command: " in capsys.readouterr().err
    assert main(["control", "--description", str(tmp_path / "missing.json"), "stop-datanode", "x"]) == 2
    assert "no cluster description" in capsys.readouterr().err
    (tmp_path / "old.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION}))
    assert main(["control", "--description", str(tmp_path / "old.json"), "stop-datanode", "x"]) == 2
    assert "control.address" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["control", "--description", str(path)])
    assert e.value.code == 2
    assert server.lines == ["stop-datanode 127.0.100.10", "stop-datanode 10.0.0.1"]
