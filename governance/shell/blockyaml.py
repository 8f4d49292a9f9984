"""The block style of YAML that task files are written in, read without a YAML library.

``load(text)`` gives mappings as ``dict``, sequences as ``list`` and every scalar as ``str``
(numbers and booleans stay text), or None for what it does not read: anchors and aliases
(``&a``, ``*a``), tags (``!x``), complex and merge keys (``? k``, ``<<:``), a second document,
nested flow collections, and text that is not YAML at all. What it reads: ``key: value`` and
``key:`` with a deeper block, ``- item`` sequences (also at the key's own indentation), a
mapping that starts on a ``- `` line, plain scalars over several lines, quoted scalars (``'``
with ``''``, ``"`` with backslash escapes), literal and folded block scalars (``|``, ``>``, with
``-`` or ``+``), one-line flow sequences and mappings of scalars, and comments.

A caller that gets None cannot tell what the file runs (the runner's own parser may read it), and
says so. Imported by ``shell.task_tables`` only for a runner whose file is YAML; imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Unread(Exception):
    """What this reader does not read."""


class _Lines:
    def __init__(self, text: str) -> None:
        self.raw = text.replace("\r\n", "\n").split("\n")
        self.lines: list[tuple[int, str, int]] = []      # (indent, content, raw index)
        for k, line in enumerate(self.raw):
            content = _uncommented(line).rstrip()
            stripped = content.lstrip(" ")
            if not stripped:
                continue
            if "\t" in line[:len(line) - len(line.lstrip())]:
                raise _Unread("a tab in the indentation")
            if stripped in ("---", "...") and not (len(content) - len(stripped)):
                if self.lines or stripped == "...":
                    raise _Unread("a second document")
                continue
            if stripped.startswith("%"):
                raise _Unread("a directive")
            self.lines.append((len(content) - len(stripped), stripped, k))


def load(text: str) -> Any | None:
    """The document (see the module), or None when it is not read."""
    try:
        lines = _Lines(text)
        if not lines.lines:
            return {}
        value, end = _block(lines, 0, lines.lines[0][0])
        if end != len(lines.lines):
            raise _Unread("text after the document")
        return value
    except (_Unread, IndexError, ValueError, RecursionError):
        return None


def _block(ls: _Lines, i: int, indent: int) -> tuple[Any, int]:
    content = ls.lines[i][1]
    if content == "-" or content.startswith("- "):
        return _sequence(ls, i, indent)
    return _mapping(ls, i, indent)


def _sequence(ls: _Lines, i: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    n = len(ls.lines)
    while i < n and ls.lines[i][0] == indent and (ls.lines[i][1] == "-" or
                                                   ls.lines[i][1].startswith("- ")):
        rest = ls.lines[i][1][1:].lstrip(" ")
        if not rest:
            if i + 1 < n and ls.lines[i + 1][0] > indent:
                value, i = _block(ls, i + 1, ls.lines[i + 1][0])
            else:
                value, i = None, i + 1
        elif rest == "-" or rest.startswith("- ") or _key(rest) is not None:
            inner = indent + len(ls.lines[i][1]) - len(rest)   # - key: v / - - x
            ls.lines[i] = (inner, rest, ls.lines[i][2])
            value, i = _block(ls, i, inner)
        else:
            value, i = _value(ls, i, indent, rest)
        items.append(value)
    return items, i


def _mapping(ls: _Lines, i: int, indent: int) -> tuple[dict[str, Any], int]:
    found: dict[str, Any] = {}
    n = len(ls.lines)
    while i < n and ls.lines[i][0] == indent:
        content = ls.lines[i][1]
        if content == "-" or content.startswith("- "):
            break
        split = _key(content)
        if split is None:
            raise _Unread(f"not a key: {content[:40]}")
        key, rest = split
        if key == "<<" or key.startswith("?"):
            raise _Unread("a merge or complex key")
        if not rest:
            if i + 1 < n and ls.lines[i + 1][0] > indent:
                value, i = _block(ls, i + 1, ls.lines[i + 1][0])
            elif i + 1 < n and ls.lines[i + 1][0] == indent and (
                    ls.lines[i + 1][1] == "-" or ls.lines[i + 1][1].startswith("- ")):
                value, i = _sequence(ls, i + 1, indent)
            else:
                value, i = None, i + 1
        else:
            value, i = _value(ls, i, indent, rest)
        found[key] = value
    return found, i


def _key(content: str) -> tuple[str, str] | None:
    """``key: rest`` as (key, rest), the key unquoted; None when the line holds no key."""
    if content[:1] in ("'", '"'):
        end = _quoted_end(content, 0)
        if end is None or content[end + 1:end + 2] != ":" or \
                content[end + 2:end + 3] not in ("", " "):
            return None
        return _scalar(content[:end + 1]), content[end + 2:].strip()
    k = content.find(":")
    while k >= 0:
        if content[k + 1:k + 2] in ("", " "):
            key = content[:k].rstrip()
            if not key or key[0] in "[{&*!|>%@`":
                return None
            return key, content[k + 1:].strip()
        k = content.find(":", k + 1)
    return None


def _value(ls: _Lines, i: int, indent: int, rest: str) -> tuple[Any, int]:
    """The value after ``key:`` or ``-`` on line ``i``, with the lines that continue it."""
    if rest[:1] in ("&", "*", "!"):
        raise _Unread("an anchor, alias or tag")
    if rest[:1] in ("|", ">"):
        return _block_scalar(ls, i, indent, rest)
    n = len(ls.lines)
    j = i + 1
    if rest[:1] in ("'", '"'):
        text = rest
        while _quoted_end(text, 0) is None and j < n and ls.lines[j][0] > indent:
            text += " " + ls.lines[j][1]          # a quoted scalar over several lines
            j += 1
        end = _quoted_end(text, 0)
        if end is None or text[end + 1:].strip():
            raise _Unread("a quoted scalar")
        return _scalar(text[:end + 1]), j
    if rest[:1] in ("[", "{"):
        return _flow(rest), j
    parts = [rest]
    while j < n and ls.lines[j][0] > indent and _key(ls.lines[j][1]) is None and not (
            ls.lines[j][1] == "-" or ls.lines[j][1].startswith("- ")):
        parts.append(ls.lines[j][1])             # a plain scalar over several lines
        j += 1
    return " ".join(parts), j


def _block_scalar(ls: _Lines, i: int, indent: int, header: str) -> tuple[str, int]:
    folded = header[0] == ">"
    chomp = "-" if "-" in header[1:] else "+" if "+" in header[1:] else ""
    n = len(ls.lines)
    j = i + 1
    while j < n and ls.lines[j][0] > indent:
        j += 1
    if j == i + 1:
        return "", j
    first, last = ls.lines[i + 1][2], ls.lines[j - 1][2]
    body = ls.raw[first:last + 1]
    margin = min(len(line) - len(line.lstrip(" ")) for line in body if line.strip())
    text_lines = [line[margin:] if line.strip() else "" for line in body]
    if folded:                      # lines joined by a space; an empty line is a line break
        out: list[str] = []
        for line in text_lines:
            if not line:
                out.append("\n")
            elif out and not out[-1].endswith("\n"):
                out.append(" " + line)
            else:
                out.append(line)
        text = "".join(out)
    else:
        text = "\n".join(text_lines)
    return (text if chomp == "-" else text + "\n"), j


def _flow(text: str) -> Any:
    """A one-line flow sequence or mapping of scalars."""
    text = text.strip()
    close = "]" if text[0] == "[" else "}"
    if not text.endswith(close):
        raise _Unread("a flow collection over several lines")
    items: list[str] = []
    current, k, inner = "", 0, text[1:-1]
    while k < len(inner):
        c = inner[k]
        if c in ("'", '"'):
            end = _quoted_end(inner, k)
            if end is None:
                raise _Unread("a quoted scalar")
            current += inner[k:end + 1]
            k = end + 1
            continue
        if c in "[]{}":
            raise _Unread("a nested flow collection")
        if c == ",":
            items.append(current.strip())
            current = ""
        else:
            current += c
        k += 1
    if current.strip():
        items.append(current.strip())
    if close == "]":
        return [_scalar(item) for item in items]
    found: dict[str, Any] = {}
    for item in items:
        split = _key(item) if ": " in item or item.endswith(":") else (item, "")
        if split is None:
            raise _Unread("a flow mapping")
        found[split[0]] = _scalar(split[1]) if split[1] else None
    return found


def _scalar(text: str) -> str:
    text = text.strip()
    if text[:1] == "'" and text.endswith("'") and len(text) > 1:
        return text[1:-1].replace("''", "'")
    if text[:1] == '"' and text.endswith('"') and len(text) > 1:
        import json

        try:
            return str(json.loads(text))
        except ValueError:
            return text[1:-1]
    return text


def _quoted_end(text: str, start: int) -> int | None:
    """The index of the quote that closes the one at ``start``, or None."""
    quote = text[start]
    k = start + 1
    while k < len(text):
        if quote == '"' and text[k] == "\\":
            k += 2
            continue
        if text[k] == quote:
            if quote == "'" and text[k + 1:k + 2] == "'":
                k += 2
                continue
            return k
        k += 1
    return None


def _uncommented(line: str) -> str:
    """The line without its comment (``#`` at its start or after a blank, outside quotes)."""
    quote = ""
    for k, c in enumerate(line):
        if quote:
            if c == quote and not (quote == '"' and line[k - 1] == "\\"):
                quote = ""
        elif c in ("'", '"') and _starts_value(line, k):
            quote = c
        elif c == "#" and (k == 0 or line[k - 1] in " \t"):
            return line[:k]
    return line


def _starts_value(line: str, k: int) -> bool:
    """Whether position ``k`` starts a scalar (a quote there opens a quoted one): the line's
    first text, or after ``: ``, ``- ``, ``[``, ``{`` or ``,``; a quote inside a plain scalar
    is a character of it."""
    before = line[:k].rstrip(" \t")
    if not before:
        return True
    if before[-1] in "[{,":
        return True
    return before[-1] in ":-" and k > len(before) and (len(before) == 1 or
                                                        before[-2] in " \t" or
                                                        before[-1] == ":")
