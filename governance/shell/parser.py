"""Bash syntax: one command string -> the simple commands it runs, with words and redirections.

Hot path: imports only ``governance.shell.words`` (no ``re``: compiling patterns costs more than
a character loop on commands of everyday size). A hand-written recursive-descent parser for the
Bash grammar that matters to governance: lists (``;`` ``&&`` ``||`` ``|`` ``|&`` ``&`` and
newlines), subshells, ``{ }`` groups, ``if``/``while``/``until``/``for``/``select``/``case``/
function bodies, ``[[ ]]`` and ``(( ))``, assignments, redirections with file-descriptor prefixes,
heredocs (``<<``, ``<<-``, quoted or not) and here-strings. Words (quoting and expansions) are
read by ``governance.shell.words``.

Compound commands are flattened: every simple command inside them, in order, is reported, because
governance cares about what may run, not about control flow. Words keep their parts (literal text,
variables, nested command lists) so that the analysis can tell a known word from a run-time one.

Work is bounded: nesting deeper than ``max_nesting`` or more than ``max_words`` words raise
:class:`LimitError`; malformed input raises :class:`ParseError`. Both are caught by the analysis.
"""

from __future__ import annotations

from governance.shell.words import (
    WORD_END,
    LimitError,
    ParseError,
    Word,
    WordLexer,
    is_assignment,
    name_end,
)

_OPEN_KEYWORDS = frozenset(("if", "then", "elif", "else", "do", "while", "until", "!", "{",
                            "fi", "done", "}", "esac", "coproc"))
_OPENERS = frozenset(("if", "do", "{"))        # each opens a block that a closer ends
_CLOSERS = frozenset(("fi", "done", "}"))
_BLOCKS = frozenset(("{", "if", "while", "until", "for", "select"))
_DECLARERS = frozenset(("declare", "typeset", "local", "export", "readonly"))
__all__ = ["LimitError", "ParseError", "Parser", "Redir", "Simple", "Word", "parse"]


class Redir:
    __slots__ = ("body", "body_subs", "expands", "fd", "op", "target")

    def __init__(self, op: str, target: Word | None, fd: str | None = None) -> None:
        self.op = op
        self.target = target
        self.fd = fd                          # the descriptor written before it: 3 of 3<>FILE
        self.body: str | None = None          # heredoc text
        self.body_subs: list[Simple] = []     # commands substituted in an unquoted heredoc
        self.expands = False                  # an unquoted heredoc whose body holds $


class Simple:
    """One simple command: assignments, words, redirections; ``inert`` words are only expanded
    (for-lists, case subjects and patterns, arithmetic)."""

    __slots__ = ("assigns", "background", "end", "fed", "fed_from", "function", "inert", "loop",
                 "piped", "piped_from", "redirs", "start", "text", "words")

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.start = start
        self.end = start
        self.assigns: list[tuple[str, Word]] = []
        self.words: list[Word] = []
        self.redirs: list[Redir] = []
        self.inert: list[Word] = []
        self.background = False
        self.piped = False                       # reads standard input from a pipe
        self.piped_from: Simple | None = None    # the simple command writing into it, if one
        self.function: tuple[str, list[Simple]] | None = None  # a definition: name and body
        self.loop: str | None = None             # for NAME in WORDS: NAME (the words are inert)
        # a while/until loop's first command: the text of the process substitution its `done`
        # reads from (while read f; do ...; done < <(find /srv))
        self.fed: str | None = None
        self.fed_from: Word | None = None   # ... or the file it reads from (done < list.txt)

    @property
    def segment(self) -> str:
        return self.text[self.start:self.end].strip()


class Parser(WordLexer):
    def __init__(self, text: str, depth: int = 0, max_nesting: int = 48,
                 max_words: int = 20000, budget: list[int] | None = None) -> None:
        super().__init__(text, depth, max_nesting, max_words, budget)
        self.pending: list[tuple[Redir, str, bool, bool]] = []
        self.blocks = 0        # open { / if / do blocks: where a function's body ends
        # the loops open: (list, index of the loop's first command) for while/until, None for for
        self.loops: list[tuple[list[Simple], int] | None] = []
        self.closed: tuple[list[Simple], int] | None = None   # the loop a `done` just closed

    # --- entry -----------------------------------------------------------------------------------
    def parse(self) -> list[Simple]:
        out = self.seq(None, False)
        if self.pending:
            self._read_heredocs()
        return out

    # --- lists -----------------------------------------------------------------------------------
    def seq(self, closer: str | None, case_body: bool, until: int = -1) -> list[Simple]:
        """Commands up to ``closer`` (``)``) or, in a case arm, up to ``;;``/``;&``/``esac``;
        with ``until``, up to where the open blocks are back to that many (a function's body)."""
        s = self.s
        out: list[Simple] = []
        group = 0
        last: Simple | None = None     # the simple command just read, when it was one
        pipe: list[Simple | None] = []  # set by '|': what the next command reads from
        while True:
            self._blanks()
            if self.i >= self.n:
                if closer:
                    raise ParseError(f"missing {closer!r}")
                return out
            c = s[self.i]
            before = len(out)
            if c == "\n":
                self.i += 1
                self._read_heredocs()
                group = len(out)
            elif c == ")":
                if closer != ")":
                    raise ParseError("unexpected ')'")
                self.i += 1
                return out
            elif c == ";":
                if s.startswith(";;", self.i) or s.startswith(";&", self.i):
                    if not case_body:
                        raise ParseError("';;' outside case")
                    self.i += 3 if s.startswith(";;&", self.i) else 2
                    return out
                self.i += 1
                group = len(out)
            elif c == "&" and not s.startswith("&>", self.i):
                if s.startswith("&&", self.i):
                    self.i += 2
                else:
                    self.i += 1
                    for cmd in out[group:]:
                        cmd.background = True
                    group = len(out)
            elif c == "|":
                if s.startswith("||", self.i):
                    self.i += 2
                else:
                    self.i += 2 if s.startswith("|&", self.i) else 1
                    pipe[:] = [last]
                last = None
                continue
            elif c == "(":
                self._nest()
                if s.startswith("((", self.i) and self._arith_command(out):
                    pass
                else:
                    self.i += 1
                    self.depth += 1
                    out.extend(self.seq(")", False))
                    self.depth -= 1
            else:
                if case_body and self._at_word("esac"):
                    return out
                self._command(out)
            if until >= 0 and self.blocks <= until:
                return out
            if len(out) > before:
                if pipe:
                    self._feed(out, before, pipe[0])
                    pipe.clear()
                last = out[-1] if len(out) == before + 1 else None
            elif c != "\n":  # a newline may follow '|'; anything else ends the pipeline
                last = None
                pipe.clear()

    @staticmethod
    def _feed(out: list[Simple], first: int, source: Simple | None) -> None:
        """Mark the commands read since ``first`` as reading from a pipe fed by ``source``."""
        for cmd in out[first:first + 1]:
            cmd.piped = True
            cmd.piped_from = source

    def _at_word(self, word: str) -> bool:
        j = self.i + len(word)
        return self.s.startswith(word, self.i) and (j >= self.n or self.s[j] in WORD_END)

    def _blanks(self) -> None:
        s, n = self.s, self.n
        i = self.i
        while i < n:
            c = s[i]
            if c == " " or c == "\t" or c == "\r":
                i += 1
            elif c == "\\" and i + 1 < n and s[i + 1] == "\n":
                i += 2
            elif c == "#":
                j = s.find("\n", i)
                i = n if j < 0 else j
            else:
                break
        self.i = i

    # --- commands --------------------------------------------------------------------------------
    def _command(self, out: list[Simple]) -> None:
        self._spend()
        s = self.s
        cmd = Simple(s, self.i)
        closed: tuple[list[Simple], int] | None = None   # the loop a `done` here closes
        while True:
            self._blanks()
            i = self.i
            if i >= self.n:
                break
            c = s[i]
            if c in "\n;|)" or (c == "&" and not s.startswith(("&>", "&>>"), i)):
                break
            if c == "(":
                if len(cmd.words) == 1 and not cmd.redirs:
                    j = i + 1
                    while j < self.n and s[j] in " \t":
                        j += 1
                    if j < self.n and s[j] == ")":   # name () compound: a function definition
                        self.i = j + 1
                        self._define(cmd, cmd.words[0])
                        break
                heads = [s[w.start:w.end] for w in cmd.words]
                if (not heads and not cmd.assigns and not cmd.redirs) or (heads and all(
                        h in ("time", "-p") for h in heads)):
                    cmd.words = []                 # if (( ... )), time ( ... ): the list reads it
                    break
                if heads and s[i - 1] == "=" and any(h in _DECLARERS for h in heads):
                    self.i = i + 1                 # declare -A m=([k]=v): an array value
                    items: list[Word] = []
                    self._array_items(items)
                    cmd.inert.extend(items)
                    name = cmd.words[-1]           # its elements, read back like a=(x y)
                    text = "\0".join(w.text[w.start:w.end] for w in items if w.text is not None)
                    cmd.words[-1] = Word([*name.parts, ("arr", text, True, None)], name.start,
                                         self.i, s)
                    cmd.end = self.i
                    continue
                raise ParseError("unexpected '('")
            if self._redirection(cmd):
                continue
            word = self.word()
            if not cmd.words:
                if not cmd.redirs and is_assignment(s, word.start, self.n) and self._assign(cmd, word):
                    continue
                if not cmd.assigns and not cmd.redirs:
                    key = self._keyword(word)
                    if key is not None and self._keyword_action(key, cmd, out):
                        cmd = Simple(s, self.i)
                        closed, self.closed = self.closed, None   # read before a nested parse
                        continue
            cmd.words.append(word)
            cmd.end = word.end
        if cmd.words or cmd.assigns or cmd.redirs or cmd.inert or cmd.function:
            out.append(cmd)
        if closed is not None and closed[1] < len(closed[0]):
            for redir in cmd.redirs:         # done < <(find /srv -type f)
                target = redir.target
                text = s[target.start:target.end] if target is not None else ""
                if redir.op == "<" and text.startswith("<(") and text.endswith(")"):
                    closed[0][closed[1]].fed = text[2:-1]
                elif redir.op == "<" and target is not None:
                    closed[0][closed[1]].fed_from = target

    def _define(self, cmd: Simple, name: Word) -> None:
        """``name () BODY`` / ``function name BODY``: ``cmd`` becomes the definition, holding the
        body's commands (which run only when the function is called)."""
        self._skip_newlines()
        s = self.s
        body: list[Simple] = []
        self._nest()
        self.depth += 1
        if s.startswith("((", self.i) and self._arith_command(body):
            pass
        elif self.i < self.n and s[self.i] == "(":
            self.i += 1
            body = self.seq(")", False)
        else:
            j = self.i
            while j < self.n and s[j] not in WORD_END:
                j += 1
            if s[self.i:j] in _BLOCKS:
                body = self.seq(None, False, self.blocks)
            else:                                 # case ... esac, [[ ... ]]
                self._command(body)
        self.depth -= 1
        cmd.words = []
        cmd.function = ("".join(str(p[1]) for p in name.parts), body)
        cmd.end = self.i

    def _keyword(self, word: Word) -> str | None:
        parts = word.parts
        if len(parts) == 1 and parts[0][0] == "lit" and not parts[0][2]:
            value: str = parts[0][1]
            if value in _OPEN_KEYWORDS or value in ("for", "select", "case", "function", "[[",
                                                    "time"):
                return value
        return None

    def _keyword_action(self, key: str, cmd: Simple, out: list[Simple]) -> bool:
        """Handle a reserved word at command position; False means: treat it as a plain word."""
        if key in _OPEN_KEYWORDS:
            self.blocks += (key in _OPENERS) - (key in _CLOSERS)
            if key in ("while", "until"):
                self.loops.append((out, len(out)))
            elif key == "done" and self.loops:
                self.closed = self.loops.pop()
            return True
        if key in ("for", "select"):
            self.loops.append(None)
            self._blanks()
            if self.s.startswith("((", self.i):
                if not self._arith_command(out):
                    raise ParseError("unterminated arithmetic")
                return True
            name = self.word()                # the loop variable
            self._skip_newlines()
            if self._at_word("in"):
                self.i += 2
                loop = Simple(self.s, self.i)
                loop.loop = name.text[name.start:name.end] if name.text is not None else None
                while True:
                    self._blanks()
                    if self.i >= self.n or self.s[self.i] in "\n;&|)":
                        break
                    loop.inert.append(self.word())
                loop.end = self.i
                out.append(loop)
            return True
        if key == "time":                      # time [-p] PIPELINE: a reserved word, not a program
            self._blanks()
            for option in ("-p", "--"):
                if self._at_word(option):
                    self.i += len(option)
                    self._blanks()
            return True
        if key == "function":
            self._blanks()
            name = self.word()
            self._blanks()
            if self.s.startswith("()", self.i):
                self.i += 2
            self._define(cmd, name)
            out.append(cmd)
            return True
        if key == "case":
            self._case(out)
            return True
        if key == "[[":
            self._condition(cmd)
            cmd.end = self.i
            out.append(cmd)
            return True
        return False

    def _skip_newlines(self) -> None:
        while True:
            self._blanks()
            if self.i < self.n and self.s[self.i] == "\n":
                self.i += 1
                self._read_heredocs()
            else:
                return

    def _case(self, out: list[Simple]) -> None:
        head = Simple(self.s, self.i)
        self._blanks()
        head.inert.append(self.word())
        self._skip_newlines()
        if not self._at_word("in"):
            raise ParseError("case without 'in'")
        self.i += 2
        head.end = self.i
        out.append(head)
        while True:
            self._skip_newlines()
            if self.i >= self.n:
                raise ParseError("case without 'esac'")
            if self._at_word("esac"):
                self.i += 4
                return
            if self.s[self.i] == "(":
                self.i += 1
            pats = Simple(self.s, self.i)
            while True:
                self._blanks()
                if self.i >= self.n:
                    raise ParseError("unterminated case pattern")
                c = self.s[self.i]
                if c == ")":
                    self.i += 1
                    break
                if c == "|":
                    self.i += 1
                    continue
                pats.inert.append(self.word())
            pats.end = self.i
            out.append(pats)
            self._nest()
            self.depth += 1
            out.extend(self.seq(None, True))
            self.depth -= 1

    def _condition(self, cmd: Simple) -> None:
        """``[[ ... ]]``: operators inside are plain words, not redirections or separators."""
        s = self.s
        cmd.words.append(Word([("lit", "[[", False, None)], self.i - 2, self.i, s))
        while True:
            self._blanks()
            if self.i >= self.n:
                raise ParseError("unterminated [[")
            c = s[self.i]
            if c == "\n":
                self.i += 1
                continue
            if self._at_word("]]"):
                self.i += 2
                return
            if c in "&|<>()!;":
                j = self.i
                while j < self.n and s[j] in "&|<>()!=~;":
                    j += 1
                cmd.words.append(Word([("lit", s[self.i:j], False, None)], self.i, j, s))
                self.i = j
                continue
            cmd.words.append(self.word())

    def _arith_command(self, out: list[Simple]) -> bool:
        """``(( ... ))``; False (nothing read) when it does not close as arithmetic: then, as
        in bash, ``((ls) | wc)`` is a subshell inside a subshell."""
        cmd = Simple(self.s, self.i)
        start = self.i
        try:
            cmd.inert.append(self._arith_body(start + 2))
        except ParseError:
            self.i = start
            return False
        cmd.end = self.i
        out.append(cmd)
        return True

    def _assign(self, cmd: Simple, word: Word) -> bool:
        first = word.parts[0]
        if first[0] != "lit" or first[2]:
            return False
        text: str = first[1]
        eq = text.find("=")
        if eq < 0:
            return False
        name = text[:eq].rstrip("+")
        if "[" in name:
            name = name[:name.index("[")]
        rest = [("lit", text[eq + 1:], False, None), *word.parts[1:]]
        if s_value_open_paren(self.s, word.end):      # array assignment: a=(x y z)
            self.i = word.end + 1
            inner = Simple(self.s, self.i)
            self._array_items(inner.inert)
            cmd.inert.extend(inner.inert)
            # the elements, as their source text: ("arr", text) is read back by the analysis
            items = "\0".join(w.text[w.start:w.end] for w in inner.inert if w.text is not None)
            cmd.assigns.append((name, Word([("arr", items, False, None)], word.start, self.i,
                                           self.s)))
            cmd.end = self.i
            return True
        cmd.assigns.append((name, Word(rest, word.start, word.end, self.s)))
        cmd.end = word.end
        return True

    def _array_items(self, items: list[Word]) -> None:
        """The elements of an array value, from just after its ``(`` to its ``)``."""
        while True:
            self._skip_newlines()
            if self.i >= self.n:
                raise ParseError("unterminated array assignment")
            if self.s[self.i] == ")":
                self.i += 1
                return
            items.append(self.word())

    # --- redirections ----------------------------------------------------------------------------
    def _redirection(self, cmd: Simple) -> bool:
        s, i = self.s, self.i
        j = i
        while j < self.n and s[j].isdigit():
            j += 1
        if j < self.n and s[j] == "{" and j == i:        # {fd}>file
            k = s.find("}", j)
            if k > 0 and name_end(s, j + 1, k) == k > j + 1 and k + 1 < self.n and s[k + 1] in "<>":
                j = k + 1
        if j >= self.n:
            return False
        if s.startswith(("&>>", "&>"), j) and j == i:
            op = "&>>" if s.startswith("&>>", j) else "&>"
        elif s[j] == "<" and not s.startswith("<(", j):
            op = next(o for o in ("<<<", "<<-", "<<", "<&", "<>", "<") if s.startswith(o, j))
        elif s[j] == ">" and not s.startswith(">(", j):
            op = next(o for o in (">>", ">&", ">|", ">") if s.startswith(o, j))
        else:
            return False
        self.i = j + len(op)
        self._blanks()
        if self.i >= self.n or (s[self.i] in "\n;&|()<>" and not (
                s.startswith(("<(", ">("), self.i))):        # done < <(cmd): a process substitution
            raise ParseError(f"redirection {op!r} without a target")
        target = self.word()
        redir = Redir(op, target, s[i:j] if j > i and s[i:j].isdigit() else None)
        cmd.redirs.append(redir)
        cmd.end = target.end
        if op in ("<<", "<<-"):
            raw = s[target.start:target.end]
            quoted = any(p[2] for p in target.parts) or "\\" in raw
            delim = "".join(p[1] if p[0] == "lit" else "$" + p[1] for p in target.parts)
            self.pending.append((redir, delim, op == "<<-", quoted))
        return True

    def _read_heredocs(self) -> None:
        pending, self.pending = self.pending, []
        s, n = self.s, self.n
        for redir, delim, strip, quoted in pending:
            start = self.i
            i = start
            while True:
                if i >= n:
                    redir.body = s[start:n]
                    self.i = n
                    break
                j = s.find("\n", i)
                line = s[i:] if j < 0 else s[i:j]
                if (line.lstrip("\t") if strip else line) == delim:
                    redir.body = s[start:i]
                    self.i = n if j < 0 else j + 1
                    break
                i = n if j < 0 else j + 1
            if not quoted and redir.body and ("$" in redir.body or "`" in redir.body):
                redir.expands = "$" in redir.body
                self._nest()
                sub = Parser(redir.body, self.depth + 1, self.max_nesting, 0, self.budget)
                word = sub._dquote_body(0, heredoc=True)
                redir.body_subs = [c for p in word.parts if p[3] for c in p[3]]

    # --- words -----------------------------------------------------------------------------------
def s_value_open_paren(s: str, i: int) -> bool:
    return i < len(s) and s[i] == "(" and i > 0 and s[i - 1] == "="


def parse(text: str, max_nesting: int = 48, max_words: int = 20000,
          budget: list[int] | None = None) -> list[Simple]:
    """Every simple command in ``text``, in order; raises ParseError or LimitError.

    ``budget`` (a one-item list) is the number of words left, shared across several parses."""
    return Parser(text, 0, max_nesting, max_words, budget).parse()
