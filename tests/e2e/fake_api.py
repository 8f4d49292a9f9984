"""A scripted fake of the Anthropic Messages API for end-to-end runs of Claude Code.

The real client is pointed at it with ``ANTHROPIC_BASE_URL``. Each conversation is a
script: a list of turns, each turn a list of blocks (``ToolUse`` or ``Text``) that the
"model" answers with. The turn is chosen from the request itself (the number of
assistant messages already in it), and the script from the first user message, so side
requests (titles, sub-agents) never consume a turn of another conversation. Every
request is logged so a test can read what the model was sent next.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MODEL = "claude-sonnet-4-5"
FALLBACK_TEXT = "Done."


@dataclass(frozen=True)
class ToolUse:
    """One tool call the fake model makes."""

    name: str
    input: Mapping[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Text:
    """A text block the fake model writes."""

    text: str


Block = ToolUse | Text
Turn = Sequence[Block]


@dataclass
class RecordedRequest:
    """One HTTP request the client made."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path.rstrip("/") == "/v1/messages"


@dataclass
class Script:
    """The turns of one conversation, chosen by a substring of its first user message."""

    key: str
    turns: list[Turn]
    ids: dict[tuple[int, int], str] = field(default_factory=dict)


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_result":
                    parts.append(_message_text(block.get("content", "")))
    return "\n".join(parts)


def first_user_text(body: Mapping[str, Any]) -> str:
    """All text of the first user message of a Messages API request body."""
    for message in body.get("messages", []):
        if message.get("role") == "user":
            return _message_text(message.get("content"))
    return ""


def turns_to_json(turns: Sequence[Turn]) -> list[list[dict[str, Any]]]:
    """A script as plain JSON, to hand it to a server in another process."""
    out: list[list[dict[str, Any]]] = []
    for turn in turns:
        out.append([
            {"text": b.text} if isinstance(b, Text)
            else {"tool": b.name, "input": dict(b.input), "id": b.id}
            for b in turn
        ])
    return out


def turns_from_json(data: Sequence[Sequence[Mapping[str, Any]]]) -> list[Turn]:
    return [
        [Text(b["text"]) if "text" in b else ToolUse(b["tool"], b["input"], b.get("id", ""))
         for b in turn]
        for turn in data
    ]


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class RequestLog:
    """Every request the client made, with questions a test asks about them."""

    def __init__(self, requests: Sequence[RecordedRequest] = ()) -> None:
        self.requests = list(requests)

    def to_json(self) -> list[dict[str, Any]]:
        return [vars(r) for r in self.requests]

    @classmethod
    def from_json(cls, data: Sequence[Mapping[str, Any]]) -> RequestLog:
        return cls([RecordedRequest(**dict(r)) for r in data])

    def message_requests(self) -> list[dict[str, Any]]:
        """Bodies of every POST /v1/messages, in arrival order."""
        return [r.body for r in self.requests if r.is_messages and isinstance(r.body, dict)]

    def conversation(self, key: str) -> list[dict[str, Any]]:
        """Request bodies of the conversation whose first user message contains ``key``."""
        return [b for b in self.message_requests() if key in first_user_text(b)]

    def tool_result(self, tool_use_id: str) -> dict[str, Any]:
        """The tool_result block the client sent back for ``tool_use_id``."""
        for body in self.message_requests():
            for message in body.get("messages", []):
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if block.get("type") != "tool_result":
                        continue
                    if block.get("tool_use_id") == tool_use_id:
                        return dict(block)
        raise AssertionError(f"no tool_result for {tool_use_id} in {len(self.requests)} requests")

    def text_after(self, tool_use_id: str) -> str:
        """All text the client sent from the tool_result for ``tool_use_id`` to the next
        assistant message: the tool result itself plus any hook context around it."""
        best = ""
        for body in self.message_requests():
            collected: list[str] = []
            seen = False
            for message in body.get("messages", []):
                content = message.get("content")
                if message.get("role") == "assistant":
                    if seen:
                        break
                    continue
                if not isinstance(content, list):
                    content = [{"type": "text", "text": content}]
                blocks = content
                for block in blocks:
                    is_result = block.get("type") == "tool_result"
                    if is_result and block.get("tool_use_id") == tool_use_id:
                        seen = True
                    if seen:
                        text = _message_text([block]) if is_result else str(block.get("text", ""))
                        collected.append(text)
            if len("\n".join(collected)) > len(best):
                best = "\n".join(collected)
        return best


class FakeModel:
    """A threaded HTTP server on 127.0.0.1 that plays scripted model turns."""

    def __init__(self, scripts: Mapping[str, Sequence[Turn]] | None = None) -> None:
        self.scripts = [Script(key, list(turns)) for key, turns in (scripts or {}).items()]
        self.log = RequestLog()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- lifecycle -------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # -- answering -------------------------------------------------------------
    def _turn_for(self, body: Mapping[str, Any]) -> tuple[Script | None, int]:
        text = first_user_text(body)
        index = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        for script in self.scripts:
            if script.key in text:
                return script, index
        return None, index

    def _blocks(self, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        script, index = self._turn_for(body)
        if script is None or not body.get("tools") or index >= len(script.turns):
            return [{"type": "text", "text": FALLBACK_TEXT}]
        blocks: list[dict[str, Any]] = []
        with self._lock:
            for position, block in enumerate(script.turns[index]):
                if isinstance(block, Text):
                    blocks.append({"type": "text", "text": block.text})
                    continue
                key = (index, position)
                if key not in script.ids:
                    script.ids[key] = block.id or f"toolu_e2e_{next(self._ids):04d}"
                blocks.append(
                    {"type": "tool_use", "id": script.ids[key], "name": block.name,
                     "input": dict(block.input)}
                )
        return blocks

    def _events(self, blocks: list[dict[str, Any]], model: str) -> Iterator[bytes]:
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message: dict[str, Any] = {
            "id": f"msg_e2e_{next(self._ids):04d}", "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }
        yield _sse("message_start", {"type": "message_start", "message": message})
        for index, block in enumerate(blocks):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield _sse("content_block_start",
                       {"type": "content_block_start", "index": index, "content_block": start})
            yield _sse("content_block_delta",
                       {"type": "content_block_delta", "index": index, "delta": delta})
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        yield _sse("message_delta", {
            "type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        })
        yield _sse("message_stop", {"type": "message_stop"})

    def _answer(self, request: RecordedRequest) -> tuple[int, str, bytes]:
        body = request.body if isinstance(request.body, dict) else {}
        path = request.path.rstrip("/")
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            size = len(json.dumps(body))
            return 200, "application/json", json.dumps({"input_tokens": size // 4}).encode()
        if request.is_messages:
            blocks = self._blocks(body)
            model = str(body.get("model", MODEL))
            if body.get("stream"):
                return 200, "text/event-stream", b"".join(self._events(blocks, model))
            stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
            reply = {
                "id": f"msg_e2e_{next(self._ids):04d}", "type": "message", "role": "assistant",
                "model": model, "content": blocks, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 20},
            }
            return 200, "application/json", json.dumps(reply).encode()
        if request.method == "GET" and path == "/v1/models":
            models = {"data": [{"type": "model", "id": MODEL, "display_name": "Fake"}],
                      "has_more": False, "first_id": MODEL, "last_id": MODEL}
            return 200, "application/json", json.dumps(models).encode()
        error = {"type": "error",
                 "error": {"type": "not_found_error", "message": f"fake: no {request.path}"}}
        return 404, "application/json", json.dumps(error).encode()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                parts = urlsplit(self.path)
                request = RecordedRequest(self.command, parts.path, parts.query,
                                          {k.lower(): v for k, v in self.headers.items()}, body)
                with fake._lock:
                    fake.log.requests.append(request)
                    number = len(fake.log.requests)
                status, content_type, payload = fake._answer(request)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("request-id", f"req_e2e_{number}")
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        return Handler
