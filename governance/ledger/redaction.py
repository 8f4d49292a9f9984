"""Secret redaction for everything the ledger and ``errors.log`` store.

``redact(text)`` replaces provider API keys and tokens, JWTs, bearer and basic credentials,
private key blocks, ``password=``/``token=`` style assignments and passwords in URLs with
``[REDACTED:kind]``.
``redact_record(record)`` applies it to every string of a ledger record (digests and chain fields
excepted) before the record is hashed, so what is stored, and chained, never holds the secret.

Hot path: no imports at load. Each rule has substrings that must be present for it to match; a few
``in`` tests screen every string, and ``re`` is imported and a rule's pattern compiled only when its
screen passes (``re`` with ``enum`` about 3 ms, the assignment rule about 1.5 ms, all rules about
4 ms). Ordinary records pass no screen and cost about 25 us.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

MARK = "[REDACTED:{}]"

# Fields that hold digests, ids or chain links: never secrets, never rewritten.
SKIP_KEYS = frozenset({"hash", "prev", "seq", "ts", "v", "input_sha256", "response_sha256",
                       "config_hash", "session", "tool_use_id", "duration_ms", "tool_duration_ms",
                       # the product's own vocabulary: names from the matrix, never user data
                       "event", "primitive", "primitives", "action", "decision", "map_rule",
                       "state", "state_source", "permission_mode"})

# The secret-word part of an assignment's key: the key must end with it.
_KEY_WORDS = (r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
              r"|private[_-]?key|secret[_-]?key|auth[_-]?key|credentials?|session[_-]?id|cookie)")

# Values that are plainly not secrets (type hints, placeholders, references, empty values).
_NOT_SECRET = frozenset({"str", "bytes", "int", "bool", "none", "null", "true", "false", "nil",
                         "string", "optional", "required", "yes", "no", "undefined", "redacted",
                         "xxx", "***", "...", "<redacted>", "changeme"})

# (lower-case substrings without which the pattern cannot match, pattern, kind), in the
# order they apply. A rule's pattern is compiled the first time one of its substrings is seen:
# ``in`` tests cost nanoseconds, compiling costs up to milliseconds, and most strings need none.
# kind "" marks a rule with its own replacement function (see _SUBS). Two screens are special:
# "://@" means "://" and then "@" (a URL with credentials); "=:" means a secret word followed by
# the rest of a key and ``=`` or ``:`` (see _assignment_screen), so that words like
# ``bypassPermissions`` or ``session`` in ordinary text do not cost a compile.
_RULES: list[tuple[tuple[str, ...], str, str]] = [
    (("private key",), r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
     r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", "private-key"),
    (("akia", "asia", "abia", "acca"), r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
     "aws-access-key-id"),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b",
     "github-token"),
    (("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{40,255}\b", "github-token"),
    (("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glffct-", "glimt-",
      "glagent-"), r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ffct|imt|agent)-[A-Za-z0-9_\-]{20,}",
     "gitlab-token"),
    (("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "slack-token"),
    (("hooks.slack",), r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+",
     "slack-webhook"),
    (("_live_", "_test_"), r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", "stripe-key"),
    (("whsec_",), r"\bwhsec_[A-Za-z0-9]{20,}", "stripe-webhook-secret"),
    (("sk-ant-",), r"\bsk-ant-[a-z]{3,8}\d{2}-[A-Za-z0-9_\-]{20,}", "anthropic-key"),
    (("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", "openai-key"),
    (("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}", "google-api-key"),
    (("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}", "google-oauth-token"),
    (("gocspx-",), r"\bGOCSPX-[0-9A-Za-z_\-]{20,}", "google-client-secret"),
    (("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b", "npm-token"),
    (("hf_",), r"\bhf_[A-Za-z0-9]{30,}\b", "huggingface-token"),
    (("pypi-",), r"\bpypi-[A-Za-z0-9_\-]{50,}", "pypi-token"),
    (("eyj",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "jwt"),
    (("bearer",), r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/\-]{12,}=*)", "bearer"),
    (("://@",), r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@\[\]]+:)([^/\s@]+)(@)",
     "url-password"),
    (("basic",), r"(?i)(\bbasic\s+)([A-Za-z0-9+/]{8,}={0,2})", ""),
    (("=:",),
     r"(?i)(?<![A-Za-z0-9])([A-Za-z0-9_.\-]*" + _KEY_WORDS + r"[\"']?\s*(?::|=(?!=))[ \t]*)"
     r"(?:([\"'])([^\"'\n]*)\2|([^\s\"'&;,()\]}]+))", ""),
]
_compiled: dict[int, re.Pattern[str]] = {}
_SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "cred", "session", "cookie")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-.")


def _at_word_start(lower: str, trigger: str) -> bool:
    """Whether ``trigger`` occurs where a token can start (the patterns anchor on ``\\b``), so
    that ``task-manage`` does not look like an ``sk-`` key. Triggers not starting with a letter
    match anywhere."""
    if not trigger[0].isalpha():
        return True
    at = lower.find(trigger)
    while at >= 0:
        if at == 0 or not (lower[at - 1].isalnum() or lower[at - 1] == "_"):
            return True
        at = lower.find(trigger, at + 1)
    return False


def _assignment_screen(lower: str) -> bool:
    """Whether a secret word is followed by the rest of a key, an optional quote and ``=``/``:``."""
    for word in _SECRET_WORDS:
        at = lower.find(word)
        while at >= 0:
            end = at + len(word)
            while end < len(lower) and lower[end] in _KEY_CHARS:
                end += 1
            if end < len(lower) and lower[end] in "\"'":
                end += 1
            while end < len(lower) and lower[end] in " \t":
                end += 1
            if end < len(lower) and lower[end] in "=:":
                return True
            at = lower.find(word, at + 1)
    return False


def _pattern(index: int) -> re.Pattern[str]:
    pattern = _compiled.get(index)
    if pattern is None:
        import re

        pattern = _compiled[index] = re.compile(_RULES[index][1])
    return pattern


def _keep_groups(kind: str) -> Any:
    def sub(match: re.Match[str]) -> str:
        groups = match.groups()
        return groups[0] + MARK.format(kind) + (groups[2] if len(groups) > 2 else "")

    return sub


def _basic_sub(match: re.Match[str]) -> str:
    import binascii

    try:
        decoded = binascii.a2b_base64(match.group(2))
    except (binascii.Error, ValueError):
        return match.group(0)
    if b":" not in decoded:
        return match.group(0)  # "Basic authentication": a word, not user:password in base64
    return match.group(1) + MARK.format("basic-auth")


def _assignment_sub(match: re.Match[str]) -> str:
    key, quote, quoted, bare = match.group(1), match.group(2), match.group(3), match.group(4)
    value = quoted if quote else bare
    if value is None or len(value) < 3 or value.startswith(("$", "%", "{{", "<", "[REDACTED")):
        return match.group(0)
    if value.lower().strip("*.") in _NOT_SECRET or value.lower() in _NOT_SECRET:
        return match.group(0)
    if not quote and match.end() < len(match.string) and match.string[match.end()] == "(":
        return match.group(0)  # a function call: ``token = get_token()``
    if not quote and value.replace(".", "").replace("_", "").isalpha() and "." in value:
        return match.group(0)  # an attribute: ``password=settings.password``
    mark = MARK.format("secret")
    return key + (quote + mark + quote if quote else mark)


_SUBS = {len(_RULES) - 2: _basic_sub, len(_RULES) - 1: _assignment_sub}


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED:kind]``."""
    if not text:
        return text
    lower = text.lower()
    for index, (triggers, _source, kind) in enumerate(_RULES):
        for trigger in triggers:
            if trigger in lower and _at_word_start(lower, trigger):
                break
            if trigger == "://@" and "@" in lower[lower.find("://") + 3:] and "://" in lower:
                break
            if trigger == "=:" and ("=" in lower or ":" in lower) and _assignment_screen(lower):
                break
        else:
            continue
        pattern = _pattern(index)
        if kind == "":
            replaced = pattern.sub(_SUBS[index], text)
        elif pattern.groups:
            replaced = pattern.sub(_keep_groups(kind), text)
        else:
            replaced = pattern.sub(MARK.format(kind), text)
        if replaced != text:
            text, lower = replaced, replaced.lower()
    return text


def kinds(text: str) -> list[str]:
    """The kinds of secret-shaped values in ``text`` (``redact``'s screen), none when clean."""
    redacted = redact(text)
    if redacted == text:
        return []
    found: list[str] = []
    head = MARK.partition("{")[0]
    start = redacted.find(head)
    while start >= 0:
        end = redacted.find("]", start)
        kind = redacted[start + len(head):end] if end > 0 else ""
        if kind and kind not in found:
            found.append(kind)
        start = redacted.find(head, start + 1)
    return found or ["secret"]


def redact_value(value: Any) -> Any:
    """A copy of a JSON value with every string redacted (dict keys are kept)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: v if k in SKIP_KEYS else redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


def redact_record(record: dict[str, Any]) -> dict[str, Any]:
    """A copy of a ledger record with secrets removed from every stored string."""
    out: dict[str, Any] = redact_value(record)
    return out
