"""Loop variables: ``for NAME in WORDS`` binds NAME to each word in turn, so the targets of the
loop's body (``rm "$f"``, ``: > "$f"``) are known (``for f in .claude/settings*.json; do ...``).

A list of one known word sets NAME as an assignment would. With several words NAME is known only
at run time, and a target that spells it (``"$f"``, ``${f}.bak``) is checked with each value in
turn; the words are expanded as bash expands them (braces, then globs against the tree,
``shell.expansion``). A word known only at run time (``$(ls .claude/*.json)``) keeps its source
text, which is checked as an unreadable pattern is (``protected_markers``, ``protected_probes``).
The arguments ``xargs`` reads from a pipe are read the same way, from the text of the command
writing into the pipe (``find .claude -name '*.json' | xargs rm``). Imported by
``shell.analysis`` only for a ``for`` loop, a target spelled with a loop variable, or such
arguments.
"""

from __future__ import annotations

from governance import system
from governance.shell.braces import MAX_WORDS
from governance.shell.expansion import named, unreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk

UNKNOWN = "\0"      # a loop value known only at run time, followed by the text that computes it


def bind_loop(an: Walk, name: str, words: list[Any]) -> None:
    """``for NAME in WORDS``: NAME takes each word's value (globs and braces expanded). With one
    known value it is that value; otherwise it is known only at run time, and a target that uses
    it is checked with each value (``loop_protected``)."""
    fields, globs, raws = an.expand_words(words)
    values: list[str] = []
    for field, glob, raw in zip(fields, globs, raws, strict=True):
        paths = named(an, field) if glob and field is not None else None
        if field is None:             # $(ls .claude/*.json): its source text, to be read as a hint
            values.append(UNKNOWN + raw)
        else:
            values.extend(paths if paths is not None else [field])
    values = values[:MAX_WORDS]
    an.vars[name] = values[0] if len(values) == 1 and not values[0].startswith(UNKNOWN) else None
    an.loops[name] = values


def bind_lines(an: Walk, fields: list[str | None], source: str | None, file: Any = None
               ) -> None:
    """``PRODUCER | while read NAME; do ... "$NAME" ...``: each NAME ``read`` sets takes a
    line (or part of one) that PRODUCER writes, known only at run time; PRODUCER's text is kept
    as a ``for NAME in $(PRODUCER)`` keeps it, so the body's targets are read the same way. With
    ``file`` (``done < list.txt``), NAME takes each line of the file when its text is known
    (written earlier in the command, or on disk), else the file's text stands for them."""
    from governance.shell.evaluated import READ_VALUED

    values = [UNKNOWN + (source or "")]
    if file is not None:
        values = _lines(an, file)

    skip = False
    for field in fields[1:]:
        if skip:
            skip = False
        elif field is not None and field[:1] == "-" and len(field) > 1:
            skip = field in READ_VALUED or field == "-a"
        elif field is not None and field.isidentifier():
            an.loops[field] = values


def _regular(path: str) -> bool:
    try:
        return system.S_ISREG(system.stat(path).st_mode)
    except OSError:
        return False


def _lines(an: Walk, file: Any) -> list[str]:
    """The lines of the file a loop reads (``done < FILE``), as loop values."""
    from governance.shell import source

    raw = file.text[file.start:file.end] if file.text is not None else "?"
    value = an.expand_one(file.parts)
    text = an.file_text(value) if value is not None else None
    if text is None and value is not None and not an.wrote(value):
        path = source.path_of(an, value)
        if path is not None and _regular(path):      # not /dev/stdin, a fifo, a folder
            kind, read = source.read(an, path)
            text = read if kind == "text" else None
        elif path is not None and not system.lexists(path):
            text = ""                                # bash cannot open it: the loop never runs
    if text is None:
        return [UNKNOWN + f"cat {raw}"]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[:MAX_WORDS] if len(lines) <= MAX_WORDS else [UNKNOWN + f"cat {raw}"]


def computed_protected(an: Walk, text: str) -> bool:
    """Whether the command text that computes a value (``$(ls .claude/*.json)``, ``find .claude
    -name '*.json'`` piped to ``xargs``) names a protected path or the folder of one."""
    if unreadable(an, text):
        return True
    for word in text.replace("$(", " ").replace("`", " ").replace(")", " ").split()[1:]:
        word = word.strip("'\"")
        if word and word[:1] != "-" and "$" not in word and (
                an.protected(word, word) or an.holds_protected(word, True)):
            return True
    return False


def loop_protected(an: Walk, raw: str) -> bool:
    """Whether a target spelled with loop variables (``"$f"``, ``${f}.bak``) is protected for
    one of the values they take; ``raw`` may instead be ``UNKNOWN`` and the text of a command
    whose output gives the value (what ``xargs`` reads from a pipe)."""
    if raw.startswith(UNKNOWN):
        return computed_protected(an, raw[1:])
    text = raw.replace('"', "").replace("'", "")
    for name, values in an.loops.items():
        for spelled in ("${" + name + "}", "$" + name):
            if spelled not in text:
                continue
            for value in values:
                if value.startswith(UNKNOWN):     # a value known at run time, from this text
                    if computed_protected(an, value[1:]):
                        return True
                    continue
                path = text.replace(spelled, value)
                if "$" not in path and an.protected(path, path):
                    return True
    return False
