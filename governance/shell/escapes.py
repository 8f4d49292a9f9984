"""Backslash escapes and ``printf`` formats as Bash decodes them, so that a command spelled in
escapes (``$(printf '\\x72\\x6d')``, ``echo -e 'git\\x20push'``) is read as the command it is.

Imported only when ``echo -e`` or ``printf`` output with a backslash or a conversion is needed; no
imports. Three dialects, as Bash 5 has them:

- ``format``: ``printf``'s format string (and ``$'...'``): ``\\NNN`` is one to three octal
  digits, ``\\'`` ``\\"`` ``\\?`` are the characters, ``\\c`` stays as written;
- ``b``: a ``%b`` argument: ``\\0NNN`` (zero and up to three digits) and ``\\NNN``, ``\\c`` ends all
  output, ``\\'`` ``\\"`` ``\\?`` stay as written;
- ``echo``: ``echo -e``: like ``b``, but ``\\NNN`` without the leading zero stays as written.

Everywhere: ``\\a \\b \\e \\E \\f \\n \\r \\t \\v \\\\``, ``\\xHH`` (one or two hex digits), ``\\uHHHH``
and ``\\UHHHHHHHH`` (up to four or eight). A value produced here is what Bash writes, except that
bytes above 127 are characters of the same number (no command name needs them).
"""

from __future__ import annotations

_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
           "t": "\t", "v": "\v", "\\": "\\"}
_HEX = "0123456789abcdefABCDEF"
_OCT = "01234567"
_SIZE = {"x": 2, "u": 4, "U": 8}


def decode(text: str, dialect: str) -> tuple[str, bool]:
    """``text`` with its escapes decoded, and whether a ``\\c`` ended the output there."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        j = text.find("\\", i)
        if j < 0 or j + 1 >= n:
            out.append(text[i:])
            break
        out.append(text[i:j])
        e = text[j + 1]
        i = j + 2
        if e in _SIMPLE:
            out.append(_SIMPLE[e])
        elif e in _SIZE:
            k = i
            while k < n and k - i < _SIZE[e] and text[k] in _HEX:
                k += 1
            if k == i:
                out.append("\\" + e)
            else:
                code = int(text[i:k], 16)
                out.append(chr(code) if code < 0x110000 else "\ufffd")
                i = k
        elif e in _OCT and (dialect != "echo" or e == "0"):
            start = i if dialect != "format" and e == "0" else i - 1
            k = start
            while k < n and k - start < 3 and text[k] in _OCT:
                k += 1
            out.append(chr(int(text[start:k] or "0", 8) & 0xFF))
            i = k
        elif e == "c" and dialect != "format":
            return "".join(out), True
        elif e in "'\"?" and dialect == "format":
            out.append(e)
        else:
            out.append("\\" + e)
    return "".join(out), False


def echo(args: list[str], portable: bool = False) -> str | None:
    """What ``echo ARGS`` writes (Bash's builtin, ``xpg_echo`` off). With ``portable``, None when
    a POSIX ``sh`` (dash, whose ``echo`` always decodes) would write something else."""
    escapes, newline, plain = False, True, True
    k = 0
    while k < len(args) and len(args[k]) > 1 and args[k][0] == "-" and \
            all(c in "neE" for c in args[k][1:]):
        for c in args[k][1:]:
            if c == "n":
                newline = False
            else:
                escapes, plain = c == "e", False
        k += 1
    text = " ".join(args[k:])
    if portable and plain and "\\" in text and decode(text, "echo") != (text, False):
        return None
    if escapes:
        text, stopped = decode(text, "echo")
        if stopped:
            return text
    return text + "\n" if newline else text


def printf_command(argv: list[str]) -> str | None:
    """What the command ``printf ARGV`` writes (``--`` ends its options; ``-v VAR`` writes
    nothing)."""
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv or argv[0].startswith("-"):
        return None
    return printf(argv[0], argv[1:])


MAX_FIELD = 4096          # a wider field or precision is not written out: the output is unknown
MAX_OUTPUT = 1 << 20      # nor is output longer than this


def printf(form: str, args: list[str]) -> str | None:
    """What ``printf FORM ARGS`` writes; None when it depends on more than its text (``%q``,
    floating point, times), the format is malformed, or a field's width or precision is over
    ``MAX_FIELD`` or the whole output over ``MAX_OUTPUT`` (``%0999999999d`` is a gigabyte)."""
    out: list[str] = []
    size = 0
    k = 0
    for _round in range(len(args) + 1):
        used = False
        i, n = 0, len(form)
        while i < n:
            j = i
            while j < n and form[j] != "%":
                j += 1
            text, _stop = decode(form[i:j], "format")
            out.append(text)
            if j >= n:
                break
            if form.startswith("%%", j):
                out.append("%")
                i = j + 2
                continue
            m = j + 1
            while m < n and form[m] in "-+ #0":
                m += 1
            flags = form[j + 1:m]
            width, m, k = _number(form, m, args, k)
            precision = None
            if m < n and form[m] == ".":
                precision, m, k = _number(form, m + 1, args, k)
                precision = precision or 0
            if m >= n or abs(width or 0) > MAX_FIELD or abs(precision or 0) > MAX_FIELD:
                return None
            size += (width or 0) + (precision or 0) + 1   # at most what this field writes ...
            if size > MAX_OUTPUT:                         # ... beyond its argument's own text
                return None
            conv = form[m]
            i = m + 1
            arg = args[k] if k < len(args) else None
            if k < len(args):
                k += 1
                used = True
            value = _convert(conv, arg, precision, flags)
            if value is None:
                return None
            if value[1]:                       # %b met \c: the output ends here
                out.append(_pad(value[0], width, flags))
                return "".join(out)
            zeros = "0" in flags and "-" not in flags and conv in "diouxX" and precision is None
            if zeros and width is not None and len(value[0]) < width:
                text = value[0]
                head = len(text) - len(text.lstrip("+- ")) + (2 if text.lstrip("+- ")[:2].lower()
                                                               == "0x" else 0)
                out.append(text[:head] + "0" * (width - len(text)) + text[head:])
                continue
            out.append(_pad(value[0], width, flags))
        if not used or k >= len(args):
            break
    text = "".join(out)
    return text if len(text) <= MAX_OUTPUT else None


def _number(form: str, m: int, args: list[str], k: int) -> tuple[int | None, int, int]:
    if m < len(form) and form[m] == "*":
        value = _integer(args[k]) if k < len(args) else 0
        return value, m + 1, k + 1
    start = m
    while m < len(form) and form[m].isdigit():
        m += 1
    return (int(form[start:m]) if m > start else None), m, k


def _pad(text: str, width: int | None, flags: str) -> str:
    if width is None or len(text) >= width:
        return text
    fill = " " * (width - len(text))
    return text + fill if "-" in flags else fill + text


def _integer(arg: str | None) -> int | None:
    if arg is None or arg.strip() == "":
        return 0
    a = arg.strip()
    if a[:1] in "'\"":
        return ord(a[1]) if len(a) > 1 else 0
    sign = -1 if a[:1] == "-" else 1
    body = a.lstrip("+-")
    try:
        if body[:2] in ("0x", "0X"):
            return sign * int(body[2:], 16)
        if body[:1] == "0" and len(body) > 1:
            return sign * int(body[1:], 8)
        return sign * int(body, 10)
    except ValueError:
        return None


def _convert(conv: str, arg: str | None, precision: int | None,
             flags: str) -> tuple[str, bool] | None:
    if conv == "s":
        text = arg or ""
        return (text if precision is None else text[:precision]), False
    if conv == "b":
        text, stopped = decode(arg or "", "b")
        return (text if precision is None else text[:precision]), stopped
    if conv == "c":
        return (arg or "\x00")[:1], False
    if conv in "diouxX":
        value = _integer(arg)
        if value is None:
            return None
        sign = "-" if value < 0 and conv in "di" else "+" if "+" in flags and conv in "di" else \
            " " if " " in flags and conv in "di" else ""
        if conv in "di":
            value = abs(value)
        else:
            value &= 0xFFFFFFFFFFFFFFFF
        digits = format(value, {"d": "d", "i": "d", "o": "o", "u": "d", "x": "x", "X": "X"}[conv])
        if precision is not None:
            digits = digits.rjust(precision, "0")
        if "#" in flags and value and conv in "xX":
            sign += "0" + conv
        elif "#" in flags and conv == "o" and not digits.startswith("0"):
            digits = "0" + digits
        return sign + digits, False
    return None
