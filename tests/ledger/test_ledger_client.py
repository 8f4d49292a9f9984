"""The client of a governance server: each caller's error class and consequence, the generic rest."""

from __future__ import annotations

import socket

import pytest

from governance.errors import GovernanceError, LedgerError
from governance.ledger import client


class Refused(GovernanceError):
    pass


def test_an_address_is_an_http_url_or_host_and_port() -> None:
    assert client.root(client.address("127.0.0.1:8765", Refused)) == "http://127.0.0.1:8765"
    parts = client.address("https://example.org/x/", Refused)
    assert (client.root(parts), parts.path) == ("https://example.org", "/x/")
    with pytest.raises(Refused, match=r"--server 'ftp://h' is not an http\(s\) URL"):
        client.address("ftp://h", Refused)


def test_the_token_is_the_one_given_else_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(client.TOKEN_ENV, "from-env")
    assert client.token("given", Refused) == "given"
    assert client.token(None, Refused) == "from-env"
    monkeypatch.delenv(client.TOKEN_ENV)
    with pytest.raises(Refused) as missing:
        client.token(None, Refused, consequence="nothing was done", fix="give one")
    assert missing.value.message == "no token for the server; nothing was done"
    assert missing.value.fix == "give one"


@pytest.mark.parametrize("raw, document", [
    (b"", {}), (b'{"seq": 3}', {"seq": 3}), (b"[1]", [1]), (b"<html>", {"error": "<html>"}),
])
def test_an_answer_reads_its_body_as_json(raw: bytes, document: object) -> None:
    assert client.Answer(200, raw).document() == document


def test_an_unreachable_server_is_one_sentence_of_the_callers_kind() -> None:
    with socket.socket() as probe:       # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    parts = client.address(f"127.0.0.1:{port}", LedgerError)
    remote = client.Client(parts, "t", LedgerError, url=f"http://127.0.0.1:{port}/x",
                           consequence="run it again")
    with pytest.raises(LedgerError) as failed:
        remote.send("GET", "/x")
    assert failed.value.message.startswith(f"cannot reach the server http://127.0.0.1:{port}/x (")
    assert failed.value.message.endswith("); run it again")
    assert failed.value.fix == client.REACH_FIX
