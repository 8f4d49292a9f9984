"""Inline code (``python -c``, ``node -e``, ``perl -e`` ...): what it does beyond computing.

``findings(language, code)`` reports running a command (``shell``, with a literal ``command`` or
``argv`` for the caller to analyse as Bash; ``shell-unknown`` when the command, or code evaluated, is
known only at run time), network access (``web-fetch``), deleting (``file-delete``; ``destructive``
for trees), writing (``file-write``), with the literal ``path`` when known, and installing
packages (``package-install``: ``pip.main``, ``install.packages``, ``Pkg.add``, ``Gem.install``).
Code that only computes or prints yields ``[]``, whatever its strings say. A program with a literal name and
run-time arguments also yields a ``shell`` template with ``"$__inline"`` for the run-time parts.

Nothing is imported at load time (hot path). Python is parsed with ``ast`` (imported then) by
``shell.python_code``: imports and aliases (``import os as o``, ``from os import system as s``,
``from os import *``, ``s = os.system``), ``__import__``, ``importlib.import_module``, ``getattr(os,
'system')``, ``sys.modules['os']``, ``vars(os)[..]`` and ``os.__dict__[..]`` are resolved (a name
built from pieces is also ``shell-unknown``); a literal given to ``exec``/``eval``/``compile`` is
analysed as Python; ``ctypes``, ``pickle``/``marshal`` loads, ``runpy`` and a runner used uncalled
(``map(os.system, x)``, ``class A: r = os.system``) are ``shell-unknown``. Paths are literal when
built from constants (``Path('a') / 'b'``, ``system.join``, ``Path.home()``, a name assigned once).

Tcl is read by its words and commands (``shell.tcl_code``), Emacs Lisp by its forms
(``shell.elisp_code``). Node (with Deno and Bun), Perl, Ruby,
PHP, awk, Lua, R, Julia and PowerShell are scanned by ``shell.scanner`` (``re``, imported then): a lexer
drops comments and turns literals into tokens (backticks, ``qx``, ``%x`` into command tokens,
``qw``/``%w`` into lists, interpolated strings into run-time values), then the idioms of ``_RULES``
are matched on the result, so a call spelled inside a string is no call. An argument is literal when
it is one token or a ``[...]`` list of tokens; a variable, a concatenation or a call is run-time.

Limits: no data flow beyond names assigned once (``for c in ["ls"]: os.system(c)`` is unknown); an
alias keeps its sensitive meaning when rebound; methods of values of unknown type are missed (but
``Path`` writers and deleters, ``loop.subprocess_*``). The scanners know no grammar: regular
expression literals are guessed from the preceding character; heredocs, nested template literals
and formats are not lexed; escapes are simplified; aliases (``local e = os.execute``: unknown) and
receivers are not resolved. Node's ``exec``/``spawn`` count only in code that mentions
``child_process``, where a computed member call (``cp[m](x)``) or a renamed one is unknown and
``re.exec(s)`` reads as a call. Arguments are read up to 500 characters after the call.
"""

from __future__ import annotations

from governance.shell.finding import LABEL, RUNTIME, Finding

__all__ = ["RUNTIME", "Finding", "findings"]


def findings(language: str, code: str) -> list[Finding]:
    """What inline code does beyond computing. language is one of "python", "node", "perl", "ruby",
    "php", "awk", "lua", "r", "julia", "tcl" (others: return [])."""
    if language not in LABEL:
        return []
    if language == "python":
        from governance.shell import python_code

        return list(dict.fromkeys(python_code.findings(code)))
    if language == "tcl":
        from governance.shell import tcl_code

        return list(dict.fromkeys(tcl_code.findings(code)))
    if language == "elisp":
        from governance.shell import elisp_code

        return list(dict.fromkeys(elisp_code.findings(code)))
    from governance.shell import scanner

    return list(dict.fromkeys(scanner.findings(language, code)))
