"""Writing the hook image: the compiled code of the modules hook processes import, in one file.

``hooks/bootstrap.py`` reads the image and serves our modules from it (see its notes); this module
writes it after a call that found it missing or out of date. The image holds every module of ours
the call loaded, and those of the old image whose sources are unchanged, so the modules of other
paths (a knowledge lookup, an intent, a deny's remedy) stay in it. Each module's code is the
``.pyc`` Python wrote for it when that is current, or compiled here from the source. The standard
library's modules the call imported (``_belongs`` in ``hooks/bootstrap.py``) are held too: the code of those
written in Python, the file of the compiled ones (an entry of length -1: loaded from that file).
"""

from __future__ import annotations

import marshal
import sys

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType

    Entry = tuple[str, bool, int, int, int, int]


def write(path: str, form: int, root: str, old: dict[str, Entry],
          code_of: Callable[[str], bytes], standard: Iterable[str] = ()) -> None:
    """Write the image of format ``form`` at ``path`` for the package in ``root``: the modules of
    ours now loaded, the ``standard`` library's modules named (imported by the call), and those of
    the ``old`` table that are still current (``code_of``: their code, from the old image). The
    file is the format and the table's length (8 bytes each), the table (name -> source, package,
    modification time, size, offset and length of the code; length -1 for a compiled module,
    loaded from its file), then the code. Replaces the file at once (a temporary file renamed over
    it): a hook process reads the old image or the new one, never a part."""
    package = system.join(root, "governance") + "/"
    codes: dict[str, tuple[str, bool, int, int, bytes | None]] = {}
    for name, entry in old.items():
        if _current(entry):
            try:
                codes[name] = (*entry[:4], None if entry[5] < 0 else code_of(name))
            except (OSError, ImportError):
                continue
    for name in standard:
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None)
        if module is None or name in codes or not isinstance(origin, str):
            continue
        if origin.endswith(".so"):
            try:
                info = system.stat(origin)
            except OSError:
                continue
            codes[name] = (origin, False, info.st_mtime_ns, info.st_size, None)
        elif origin.endswith(".py"):
            found = _entry(module, origin)
            if found is not None:
                codes[name] = found
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if (name == "governance" or name.startswith("governance.")) and isinstance(origin, str) \
                and origin.startswith(package) and origin.endswith(".py") and name not in codes \
                and name != __name__:   # this module: only loaded to write the image
            found = _entry(module, origin)
            if found is not None:
                codes[name] = found
    table: dict[str, Entry] = {}
    offset = 0
    for name, (origin, is_package, mtime, size, code) in codes.items():
        if code is None:
            table[name] = (origin, is_package, mtime, size, 0, -1)
            continue
        table[name] = (origin, is_package, mtime, size, offset, len(code))
        offset += len(code)
    header = marshal.dumps((_magic(), table))
    data = b"".join([form.to_bytes(8, "little"), len(header).to_bytes(8, "little"), header,
                     *(entry[4] for entry in codes.values() if entry[4] is not None)])
    temporary = f"{path}.{system.getpid()}.tmp"
    fd = system.open(temporary, system.O_WRONLY | system.O_CREAT | system.O_TRUNC
                     | system.O_CLOEXEC, 0o644)
    try:
        system.write(fd, data)
    finally:
        system.close(fd)
    system.replace(temporary, path)


def _current(entry: Entry) -> bool:
    try:
        info = system.stat(entry[0])
    except OSError:
        return False
    return (info.st_mtime_ns, info.st_size) == (entry[2], entry[3])


def _entry(module: ModuleType, origin: str) -> tuple[str, bool, int, int, bytes] | None:
    """What the image holds for ``module``: its source's path, whether it is a package, the
    source's modification time and size, and its marshalled code."""
    try:
        info = system.stat(origin)
        code = _cached_code(module, info) or _compiled(origin)
    except (OSError, SyntaxError, ValueError):
        return None   # a source that cannot be read or compiled is imported the usual way
    package = system.basename(origin) == "__init__.py"
    return (origin, package, info.st_mtime_ns, info.st_size, code)


def _cached_code(module: ModuleType, info: system.stat_result) -> bytes | None:
    """The code of the module's ``.pyc`` when it was compiled from this very source (the header's
    modification time and size, as the import system checks them), else None."""
    cached = getattr(module, "__cached__", None)
    if not isinstance(cached, str):
        return None
    try:
        with open(cached, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if len(data) < 16 or data[:4] != _magic() or int.from_bytes(data[4:8], "little") != 0:
        return None
    mtime = int.from_bytes(data[8:12], "little")
    size = int.from_bytes(data[12:16], "little")
    if (mtime, size) != (int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF):
        return None
    return data[16:]


def _compiled(origin: str) -> bytes:
    with open(origin, "rb") as handle:
        source = handle.read()
    return marshal.dumps(compile(source, origin, "exec", dont_inherit=True))


def _magic() -> bytes:
    magic: bytes = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER
    return magic
