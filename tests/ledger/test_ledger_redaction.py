"""Redaction: secrets never reach the ledger or errors.log; ordinary text is left alone.

The corpus is assembled at run time so that no secret-shaped literal sits in the repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.ledger import chain as ledger
from governance.ledger.redaction import redact, redact_record
from governance.ledger.verifier import verify
from tests.ledger.records import pre_record

A36 = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"
HEX40 = "4f3c2b1a09e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4"
B64 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

# (text, secret that must disappear, kind expected in the mark)
CORPUS: list[tuple[str, str, str]] = [
    ("export AWS_ACCESS_KEY_ID=" + "AKIA" + "IOSFODNN7EXAMPLE", "AKIA" + "IOSFODNN7EXAMPLE",
     "aws-access-key-id"),
    ("aws_secret_access_key = " + B64, B64, "secret"),
    ("git push https://" + "ghp_" + A36 + "@github.com/o/r.git", "ghp_" + A36, "github-token"),
    ("GH_TOKEN=" + "github_pat_" + "11ABCDEFG0" + A36 + "_" + A36[:20],
     "github_pat_" + "11ABCDEFG0" + A36, "github-token"),
    ("curl --header 'PRIVATE-TOKEN: " + "glpat-" + "xY9_aB3dE5fG7hJ9kL1m" + "' https://gitlab.com",
     "glpat-" + "xY9_aB3dE5fG7hJ9kL1m", "gitlab-token"),
    ("SLACK_BOT=" + "xoxb-" + "123456789012-1234567890123-" + A36[:24],
     "xoxb-" + "123456789012-1234567890123-" + A36[:24], "slack-token"),
    ("post to https://hooks.slack.com/services/" + "T00000000/B00000000/" + A36[:24],
     "T00000000/B00000000/" + A36[:24], "slack-webhook"),
    ("stripe.api_key = '" + "sk_live_" + A36[:24] + "'", "sk_live_" + A36[:24], "stripe-key"),
    ("rk_test_" + A36[:26] + " is the restricted key", "rk_test_" + A36[:26], "stripe-key"),
    ("OPENAI_API_KEY=" + "sk-proj-" + A36 + A36, "sk-proj-" + A36 + A36, "openai-key"),
    ("old openai " + "sk-" + A36 + "T3BlbkFJ" + A36[:12], "sk-" + A36, "openai-key"),
    ("x-api-key: " + "sk-ant-api03-" + A36 + A36 + A36[:20] + "-AAAAAA",
     "sk-ant-api03-" + A36, "anthropic-key"),
    ("maps?key=" + "AIza" + "SyD" + A36[:32], "AIza" + "SyD" + A36[:32], "google-api-key"),
    ("Authorization: Bearer " + "ya29." + "a0AfH6SM" + A36, "ya29." + "a0AfH6SM" + A36,
     "google-oauth-token"),
    ("client_secret=" + "GOCSPX-" + A36[:28], "GOCSPX-" + A36[:28], "google-client-secret"),
    ("cookie jwt " + "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
     "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6y",
     "SflKxwRJSMeKKF2QT4fwpMeJf36POk6y", "jwt"),
    ("curl -H 'Authorization: Bearer " + HEX40 + "' https://api.example.com", HEX40, "bearer"),
    ("curl -H 'Authorization: Basic " + "YWRtaW46czNjcjN0LXBhc3M=" + "' https://x",
     "YWRtaW46czNjcjN0LXBhc3M=", "basic-auth"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + A36 + "\n" + B64 +
     "\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA" + A36, "private-key"),
    ("cat id_ed25519 -> -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + A36,
     "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"),
    ("mysql -u root --password=Tr0ub4dor-and-3 db", "Tr0ub4dor-and-3", "secret"),
    ("DB_PASSWORD=hunter2hunter2 npm start", "hunter2hunter2", "secret"),
    ('{"username": "bob", "password": "correct horse battery staple"}',
     "correct horse battery staple", "secret"),
    ("password: s3cr3t-yaml-value", "s3cr3t-yaml-value", "secret"),
    ("https://api.example.com/v1?token=" + HEX40 + "&page=2", HEX40, "secret"),
    ("SECRET_KEY='django-insecure-" + A36 + "'", "django-insecure-" + A36, "secret"),
    ("psql postgresql://admin:P4ssw0rd!x@db.internal:5432/app", "P4ssw0rd!x", "url-password"),
    ("pip install --index-url https://user:" + A36[:20] + "@pypi.example.com/simple pkg",
     A36[:20], "url-password"),
    ("//registry.npmjs.org/:_authToken=" + "npm_" + A36, "npm_" + A36, "npm-token"),
    ("HF_TOKEN=" + "hf_" + A36[:34], "hf_" + A36[:34], "huggingface-token"),
]

# Ordinary text that must survive unchanged.
TRAPS = [
    "tokens = tokenize(text)",
    "max_tokens=4096",
    "token = get_token()",
    "def login(username: str, password: str) -> bool:",
    "if password == confirm:",
    "password=settings.password",
    "api_key: ${API_KEY}",
    "export GITHUB_TOKEN=$GITHUB_TOKEN",
    "Basic authentication is configured in nginx.conf",
    "The bearer of this letter",
    "git clone git@github.com:org/repo.git",
    "https://github.com/org/repo/blob/main/keyboard.py",
    "http://localhost:8080/@scope/package",
    "sha256 " + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "skip-tests ask-before-push task-runner",
    "The tool call Bash (shell-execute) is blocked in state EXPLORE by rules.shell-execute.EXPLORE",
    "monkey patch the keyring backend",
    "passing tests: 42, password reset flow documented",
    "session_id: <redacted>",
]


@pytest.mark.parametrize(("text", "secret", "kind"), CORPUS, ids=[c[2] + str(i)
                                                                   for i, c in enumerate(CORPUS)])
def test_secret_is_redacted(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out


@pytest.mark.parametrize("text", TRAPS)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text


def test_redaction_keeps_context_around_the_secret() -> None:
    out = redact("mysql -u root --password=Tr0ub4dor-and-3 db")
    assert out == "mysql -u root --password=[REDACTED:secret] db"
    out = redact("psql postgresql://admin:P4ssw0rd!x@db.internal:5432/app")
    assert out == "psql postgresql://admin:[REDACTED:url-password]@db.internal:5432/app"


def test_records_are_redacted_in_every_string_but_digests_stay() -> None:
    secret = "ghp_" + A36
    record = pre_record(1, reason=f"uses {secret}", error=f"failed with {secret}",
                        acts=[{"primitive": "shell-execute", "segment": f"echo {secret}",
                               "reason": "x"}], input_sha256="a" * 64)
    out = redact_record(record)
    assert secret not in json.dumps(out)
    assert out["input_sha256"] == "a" * 64
    assert out["acts"][0]["segment"] == "echo [REDACTED:github-token]"
    assert secret in record["reason"]  # the caller's record is untouched


def test_secrets_never_reach_the_ledger_and_the_chain_holds(gov: Path) -> None:
    for i, (text, _secret, _kind) in enumerate(CORPUS):
        ledger.append(str(gov), pre_record(i, reason=text, acts=[{"primitive": "x",
                                                                   "segment": text}]))
    stored = (gov / ledger.LEDGER).read_text()
    for _text, secret, _kind in CORPUS:
        assert secret not in stored
    assert verify(str(gov)).ok  # the hash is over the redacted record that is stored


def test_secrets_never_reach_errors_log(gov: Path) -> None:
    path = ledger.log_error(str(gov), "PreToolUse: boom " + " | ".join(t for t, _s, _k in CORPUS))
    assert path is not None
    text = Path(path).read_text()
    for _text, secret, _kind in CORPUS:
        assert secret not in text
    assert "boom" in text


def test_errors_log_is_bounded_by_one_rotation(gov: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger, "ERRORS_MAX_BYTES", 1000)
    for i in range(100):
        ledger.log_error(str(gov), f"PreToolUse: hook input is not JSON, line {i:03d}")
    current, older = gov / "errors.log", gov / "errors.log.1"
    assert current.stat().st_size <= 1000 + 100 and older.stat().st_size <= 1000 + 100
    assert "line 099" in current.read_text() and oct(older.stat().st_mode & 0o777) == "0o600"
