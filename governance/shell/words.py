"""Bash words: quoting, escapes and expansions, for the parser in ``governance.shell.parser``.

Hot path: no imports. ``WordLexer`` reads one shell word at a time into parts, plain tuples
``(kind, value, quoted, nested commands or None)``:

- ``"lit"``: literal text after quote removal (``'...'``, ``"..."``, ``\\x``, ANSI-C ``$'\\x72'``,
  ``$"..."``);
- ``"var"``: a parameter (``$NAME``, ``${NAME}``, ``${a[@]}``; ``""`` for ``$"..."``);
- ``"param"``: any other ``${...}``, with the text inside the braces (``x:-...``, ``!x``,
  ``a[i]``, ``x@P``) and its nested commands;
- ``"arith"``: arithmetic (``$((...))``, ``$[...]``, ``((...))``), with the expression's text;
- ``"sub"``: command substitution (``$( )``, backticks) with its nested commands;
- ``"proc"``: process substitution (``<( )``, ``>( )``) with its nested commands.

Nested command lists are parsed by the subclass's ``seq`` (the grammar), so a ``$( )`` inside a word
is a full command list. Work is bounded by the nesting and word limits shared with the parser.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_UNQUOTED_STOP = frozenset(" \t\n;&|()<>'\"\\$`")
_DQ_STOP = frozenset("\"\\$`")
_HD_STOP = frozenset("\\$`")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
WORD_END = " \t\n;&|()<>"
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
         "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_SPECIAL_PARAMS = "@*#?-$!0123456789"


def quote(word: str) -> str:
    """``word`` single-quoted for a Bash command line."""
    return "'" + word.replace("'", "'\\''") + "'"


class ParseError(Exception):
    """The command is not valid Bash (as far as this parser can tell)."""


class LimitError(Exception):
    """The command is too large or too deeply nested to analyse within bounds."""


class Word:
    __slots__ = ("end", "parts", "start", "text")

    def __init__(self, parts: list[Any], start: int, end: int, text: str | None = None) -> None:
        self.parts = parts
        self.start = start
        self.end = end
        self.text = text


class WordLexer:
    """Reading state shared by the word lexer and the grammar built on it."""

    def __init__(self, text: str, depth: int = 0, max_nesting: int = 48,
                 max_words: int = 20000, budget: list[int] | None = None) -> None:
        self.s = text
        self.n = len(text)
        self.i = 0
        self.depth = depth
        self.max_nesting = max_nesting
        self.budget = budget if budget is not None else [max_words]

    def seq(self, closer: str | None, case_body: bool) -> list[Any]:
        """Commands up to ``closer``: provided by the grammar."""
        raise NotImplementedError

    def parse(self) -> list[Any]:
        raise NotImplementedError

    def _nest(self) -> None:
        if self.depth >= self.max_nesting:
            raise LimitError("nesting too deep")

    def _spend(self) -> None:
        self.budget[0] -= 1
        if self.budget[0] < 0:
            raise LimitError("too many words")

    def word(self) -> Word:
        """One shell word starting at ``self.i`` (which is not a blank or an operator)."""
        self._spend()
        s, n = self.s, self.n
        start = self.i
        end = _run_end(s, start, n, _UNQUOTED_STOP)
        if end > start and (end >= n or s[end] in " \t\n;&|)" or (
                s[end] in "<>" and s[end + 1:end + 2] != "(")):   # fast path: a plain word
            self.i = end
            return Word([("lit", s[start:end], False, None)], start, end, s)
        parts: list[Any] = []
        while self.i < n:
            i = self.i
            c = s[i]
            end = _run_end(s, i, n, _UNQUOTED_STOP)
            if end > i:
                if end < n and s[end] == "(" and s[end - 1] in "@!+*?":   # extglob pattern
                    end = self._balanced_paren(end)
                parts.append(("lit", s[i:end], False, None))
                self.i = end
                continue
            if c == "'":
                j = s.find("'", i + 1)
                if j < 0:
                    raise ParseError("unterminated single quote")
                parts.append(("lit", s[i + 1:j], True, None))
                self.i = j + 1
            elif c == '"':
                self.i = i + 1
                inner = self._dquote_body(self.i, heredoc=False)
                parts.extend(inner.parts)
            elif c == "\\":
                if i + 1 >= n:
                    parts.append(("lit", "\\", False, None))
                    self.i = n
                elif s[i + 1] == "\n":
                    self.i = i + 2
                else:
                    parts.append(("lit", s[i + 1], True, None))
                    self.i = i + 2
            elif c == "$":
                parts.append(self._dollar(False))
            elif c == "`":
                parts.append(self._backtick(False))
            elif c in "<>" and i + 1 < n and s[i + 1] == "(":   # a=<(cmd): anywhere in a word
                self._nest()
                self.i = i + 2
                self.depth += 1
                nested = self.seq(")", False)
                if c == ">" and nested:   # >(sh): the first command reads what is written there
                    nested[0].piped = True
                parts.append(("proc", "", False, nested))
                self.depth -= 1
            elif c in WORD_END:
                break
            else:  # pragma: no cover - the plain run covers every other character
                parts.append(("lit", c, False, None))
                self.i = i + 1
        if self.i == start:
            raise ParseError(f"unexpected {s[start]!r}" if start < n else "unexpected end")
        return Word(parts, start, self.i, s)

    def _balanced_paren(self, i: int) -> int:
        depth = 0
        while i < self.n:
            c = self.s[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            elif c == "\\":
                i += 1
            i += 1
        raise ParseError("unterminated pattern")

    def _dquote_body(self, i: int, heredoc: bool) -> Word:
        """Inside double quotes (or an unquoted heredoc body when ``heredoc``)."""
        s, n = self.s, self.n
        self.i = i
        parts: list[Any] = []
        stop = _HD_STOP if heredoc else _DQ_STOP
        escapable = "$`\\\n" if heredoc else "$`\"\\\n"
        while True:
            i = self.i
            if i >= n:
                if heredoc:
                    return Word(parts, 0, n)
                raise ParseError("unterminated double quote")
            end = _run_end(s, i, n, stop)
            if end > i:
                parts.append(("lit", s[i:end], True, None))
                self.i = end
                continue
            c = s[i]
            if c == '"':
                self.i = i + 1
                if not parts:
                    parts.append(("lit", "", True, None))
                return Word(parts, i, self.i)
            if c == "\\":
                nxt = s[i + 1] if i + 1 < n else ""
                if nxt == "\n":
                    self.i = i + 2
                elif nxt and nxt in escapable:
                    parts.append(("lit", nxt, True, None))
                    self.i = i + 2
                else:
                    parts.append(("lit", "\\", True, None))
                    self.i = i + 1
            elif c == "$":
                parts.append(self._dollar(True))
            else:
                parts.append(self._backtick(True))

    def _dollar(self, quoted: bool) -> Any:
        s, n = self.s, self.n
        i = self.i
        nxt = s[i + 1] if i + 1 < n else ""
        if nxt == "'" and not quoted:
            return self._ansi_c(i + 2)
        if nxt == '"' and not quoted:
            inner = self._dquote_body(i + 2, heredoc=False)
            subs = [c for p in inner.parts if p[3] for c in p[3]]
            if all(p[0] == "lit" for p in inner.parts):
                return ("lit", "".join(p[1] for p in inner.parts), True, subs)
            return ("var", "", True, subs)
        if nxt == "(":
            self._nest()
            if s.startswith("$((", i):
                try:
                    word = self._arith_body(i + 3)
                    return ("arith", s[i + 3:self.i - 2], quoted, word.parts[0][3])
                except ParseError:     # $((( n++ )) || ls): a command substitution, as bash
                    pass               # reads it when the arithmetic does not close
            self.i = i + 2
            self.depth += 1
            commands = self.seq(")", False)
            self.depth -= 1
            return ("sub", "", quoted, commands)
        if nxt == "{":
            return self._brace_param(i + 2, quoted)
        if nxt == "[":                 # $[ ... ]: the old spelling of $(( ... ))
            self._nest()
            word = self._arith_body(i + 2, "]")
            return ("arith", s[i + 2:self.i - 1], quoted, word.parts[0][3])
        if nxt and nxt in _SPECIAL_PARAMS:
            self.i = i + 2
            return ("var", nxt, quoted, None)
        end = name_end(s, i + 1, n)
        if end > i + 1:
            self.i = end
            return ("var", s[i + 1:end], quoted, None)
        self.i = i + 1
        return ("lit", "$", quoted, None)

    def _ansi_c(self, i: int) -> Any:
        s, n = self.s, self.n
        out: list[str] = []
        while True:
            if i >= n:
                raise ParseError("unterminated $'...'")
            c = s[i]
            if c == "'":
                self.i = i + 1
                return ("lit", "".join(out), True, None)
            if c != "\\" or i + 1 >= n:
                out.append(c)
                i += 1
                continue
            e = s[i + 1]
            i += 2
            if e in _ANSI:
                out.append(_ANSI[e])
            elif e in "xuU":
                size = {"x": 2, "u": 4, "U": 8}[e]
                j = i
                while j < n and j - i < size and s[j] in "0123456789abcdefABCDEF":
                    j += 1
                if j == i:
                    out.append("\\" + e)
                else:
                    code = int(s[i:j], 16)
                    out.append(chr(code) if code < 0x110000 else "\ufffd")
                    i = j
            elif e in "01234567":
                j = i - 1
                while j < n and j - (i - 1) < 3 and s[j] in "01234567":
                    j += 1
                out.append(chr(int(s[i - 1:j], 8) & 0xFF))
                i = j
            elif e == "c" and i < n:
                out.append(chr(ord(s[i]) & 0x1F))
                i += 1
            else:
                out.append("\\" + e)

    def _brace_param(self, i: int, quoted: bool) -> Any:
        self._nest()
        self.depth += 1
        try:
            return self._brace_body(i, quoted)
        finally:
            self.depth -= 1

    def _brace_body(self, i: int, quoted: bool) -> Any:
        s, n = self.s, self.n
        end = name_end(s, i, n)
        if i < end < n and s[end] == "}":
            self.i = end + 1
            return ("var", s[i:end], quoted, None)
        special = _special_param(s, i, n)          # ${1}, ${10}, ${@}, ${#}, ${@:2}, ${*:1:2}
        if special:
            self.i = i + len(special) + 1
            return ("var", special, quoted, None)
        if i < end and s.startswith(("[@]}", "[*]}"), end):   # ${a[@]}: every element
            self.i = end + 4
            return ("var", s[i:end] + ("[@]" if s[end + 1] == "@" else "[*]"), quoted, None)
        subs: list[Any] = []
        depth = 1
        self.i = i
        while True:
            j = self.i
            if j >= n:
                raise ParseError("unterminated ${")
            c = s[j]
            if c == "}":
                depth -= 1
                self.i = j + 1
                if depth == 0:
                    return ("param", s[i:j], quoted, subs)
            elif c == "{":
                depth += 1
                self.i = j + 1
            elif c == "\\":
                self.i = j + 2
            elif c == "'" and not quoted:
                k = s.find("'", j + 1)
                if k < 0:
                    raise ParseError("unterminated single quote")
                self.i = k + 1
            elif c == '"':
                word = self._dquote_body(j + 1, heredoc=False)
                subs.extend(c2 for p in word.parts if p[3] for c2 in p[3])
            elif c == "$" or c == "`":
                part = self._dollar(True) if c == "$" else self._backtick(True)
                if part[3]:
                    subs.extend(part[3])
            else:
                self.i = j + 1

    def _arith_body(self, i: int, closer: str = ")") -> Word:
        """``$(( ... ))`` / ``(( ... ))`` (``$[ ... ]`` with ``closer`` "]") from just after the
        opening parentheses: one ``arith`` part holding the expression's text."""
        s, n = self.s, self.n
        subs: list[Any] = []
        depth = 0
        self.i = i
        while True:
            j = self.i
            if j >= n:
                raise ParseError("unterminated arithmetic")
            c = s[j]
            if c == "(" or (c == "[" and closer == "]"):
                depth += 1
                self.i = j + 1
            elif c == closer and depth == 0 and closer == "]":
                self.i = j + 1
                return Word([("arith", s[i:j], False, subs)], i, self.i)
            elif c == ")" or c == closer:
                if depth == 0:
                    if not s.startswith("))", j):
                        raise ParseError("unterminated arithmetic")
                    self.i = j + 2
                    return Word([("arith", s[i:j], False, subs)], i, self.i)
                depth -= 1
                self.i = j + 1
            elif c == "$" or c == "`":
                part = self._dollar(True) if c == "$" else self._backtick(True)
                if part[3]:
                    subs.extend(part[3])
            elif c == '"':
                word = self._dquote_body(j + 1, heredoc=False)
                subs.extend(c2 for p in word.parts if p[3] for c2 in p[3])
            else:
                self.i = j + 1

    def _backtick(self, quoted: bool) -> Any:
        s, n = self.s, self.n
        i = self.i + 1
        out: list[str] = []
        while True:
            if i >= n:
                raise ParseError("unterminated backtick")
            c = s[i]
            if c == "`":
                break
            if c == "\\" and i + 1 < n and s[i + 1] in ("$`\\" + ('"' if quoted else "")):
                out.append(s[i + 1])
                i += 2
                continue
            out.append(c)
            i += 1
        self.i = i + 1
        self._nest()
        inner = type(self)("".join(out), self.depth + 1, self.max_nesting, 0, self.budget)
        return ("sub", "", quoted, inner.parse())


def _special_param(s: str, i: int, n: int) -> str:
    """The positional or special parameter in ``${...}`` at ``i`` up to its ``}``, or ""."""
    j = i
    if j < n and s[j] in "@*#?$!-":
        j += 1
        if s[i] in "@*" and j < n and s[j] == ":":      # a slice of literal numbers
            k = j + 1
            while k < n and (s[k].isdigit() or (s[k] == ":" and s[k - 1].isdigit())):
                k += 1
            if k > j + 1 and s[k - 1].isdigit():
                j = k
    else:
        while j < n and s[j].isdigit():
            j += 1
    return s[i:j] if j > i and j < n and s[j] == "}" else ""


def _run_end(s: str, i: int, n: int, stop: frozenset[str]) -> int:
    """End of the run of characters from ``i`` that are not in ``stop``."""
    while i < n and s[i] not in stop:
        i += 1
    return i


def name_end(s: str, i: int, n: int) -> int:
    """End of the shell name (identifier) at ``i``; ``i`` itself when there is none."""
    if i < n and s[i] in _NAME_START:
        i += 1
        while i < n and s[i] in _NAME_CHARS:
            i += 1
    return i


def is_assignment(s: str, i: int, n: int) -> bool:
    """``NAME=``, ``NAME+=`` or ``NAME[...]=`` at ``i``."""
    j = name_end(s, i, n)
    if j == i:
        return False
    if j < n and s[j] == "[":
        k = s.find("]", j)
        if k < 0:
            return False
        j = k + 1
    if j < n and s[j] == "+":
        j += 1
    return j < n and s[j] == "="


def word_text(word: Any) -> str:
    """The source text of a parsed word."""
    return str(word.text[word.start:word.end]) if word.text is not None else ""
