"""What every hook entry script does first: find the ``governance`` package and call its entry.

Imports the builtin ``gc``, ``posix`` and ``sys`` only (``json`` when the package cannot be
imported): ``os`` costs a hook process a millisecond, and the package's hot path does without it too.
A package that cannot be imported is a broken installation: it is said, never swallowed, and a fail-closed
PreToolUse hook (``--on-error block``, ``GOVERNANCE_ON_ERROR=block``) denies the call.
"""

import gc
import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import NoReturn

# The folder that holds the governance package: the checkout (hooks/x.py) or, for the installed
# copy (governance/hookscripts/x.py), site-packages, which -S leaves off sys.path. __file__ is
# absolute: the entry script put this folder on sys.path as its own absolute __file__'s folder.
_HERE = __file__.rpartition("/")[0]
_PARENT = _HERE.rpartition("/")[0]


def _absolute(path: str) -> str:
    """``path`` absolute and normalised (as ``os.path.abspath``)."""
    if not path.startswith("/"):
        path = posix.getcwd() + "/" + path
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return ("//" if path.startswith("//") and not path.startswith("///") else "/") + "/".join(parts)


def _isfile(path: str) -> bool:
    try:
        return posix.stat(path).st_mode & 0o170000 == 0o100000
    except (OSError, ValueError):
        return False


def _foreign_entries() -> "list[str]":
    """``sys.path`` entries the project could have put there: this script folder (put there by the
    entry script only to find this module) and, in an interpreter started without ``-I``, the
    working folder and ``PYTHONPATH``'s folders."""
    foreign = [_HERE]
    if not sys.flags.isolated:
        foreign.append("")
        try:
            foreign.append(posix.getcwd())
        except OSError:
            pass   # a working folder that is gone holds nothing to import
        if not sys.flags.ignore_environment:
            foreign += posix.environ.get(b"PYTHONPATH", b"").decode(
                sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()).split(":")
    return foreign


def _put_package_on_path() -> str:
    """The package's folder goes first on ``sys.path``, and nothing the project could have put
    there stays on it: a ``governance`` (or ``yaml``) the agent wrote in the project is never
    imported in place of ours. Our package already imported from elsewhere (by a
    ``sitecustomize.py`` of an interpreter started without ``-I``) is refused. Returns the folder
    that holds the package ("" when none beside this script does)."""
    foreign = {_absolute(entry) if entry else "" for entry in _foreign_entries()}
    sys.path[:] = [entry for entry in sys.path
                   if (_absolute(entry) if entry else "") not in foreign]
    for root in (_PARENT, _PARENT.rpartition("/")[0]):
        if _isfile(root + "/governance/__init__.py"):
            if root in sys.path:
                sys.path.remove(root)
            sys.path.insert(0, root)
            loaded = sys.modules.get("governance")
            where = _absolute(str(getattr(loaded, "__file__", "") or ""))
            if loaded is not None and not where.startswith(root + "/"):
                raise ImportError(f"a governance package at {where} was imported before ours "
                                  f"(at {root}): run the hooks with `python -I -S`")
            return root
    return ""


# --- the hook image ------------------------------------------------------------------------------
# A hook process imports some thirty of our modules, and the import system spends about 50 us on
# each (finding, opening, checking) before its code runs: more than a Bash call's whole analysis.
# The image holds their compiled code in one file:
# <package>/__pycache__/hook-image.<cache tag>.marshal, written by governance.hook.image after a
# call that found it missing or out of date. It opens with its format and the length of a small
# table (each module's source, size, modification time, and where its code lies in the file); a
# call reads the table, and the code of only the modules it imports. A module is served from it
# only while its source has the size and modification time it had when compiled (the check a .pyc
# gets); otherwise it is imported the usual way, and the image is written anew after the call.
# The image lies inside our installation, which the agent may not write (as it may not write the
# .pyc files beside it). GOVERNANCE_HOOK_IMAGE=off turns it off.
# The standard library's modules a call imports after the interpreter started (``__future__``,
# which every module of ours names, and the compiled ``_json``, ``fcntl`` and ``_sha256``) cost
# the import system a search of every ``sys.path`` folder each: the image holds the code of those
# written in Python, and the file of the compiled ones (length -1), which is loaded from there
# directly, on the same condition (the file as it was).

IMAGE_FORMAT = 3


def image_path(root: str) -> str:
    return f"{root}/governance/__pycache__/hook-image.{sys.implementation.cache_tag}.marshal"


class Image:
    """The modules of the hook image: a finder and loader on ``sys.meta_path``, and the names it
    could not serve (absent, or changed since), which the next image must hold."""

    def __init__(self, root: str, table: "dict[str, tuple[str, bool, int, int, int, int]]",
                 fd: int = -1, body: int = 0) -> None:
        self.root = root
        self.table = table
        self.fd = fd               # the image, open: code is read where the table says
        self.body = body           # where the code begins
        self.missed: set[str] = set()
        self.whole = bool(table)   # False: no image (or a broken one) was found

    @classmethod
    def load(cls, root: str) -> "Image":
        import marshal

        table = {}
        fd = -1
        try:
            fd = posix.open(image_path(root), posix.O_RDONLY | posix.O_CLOEXEC)
            head = posix.read(fd, 16)
            length = int.from_bytes(head[8:16], "little")
            if len(head) == 16 and int.from_bytes(head[:8], "little") == IMAGE_FORMAT:
                magic, table = marshal.loads(posix.pread(fd, length, 16))
                if magic != _MAGIC or not isinstance(table, dict):
                    table = {}
        except (OSError, ValueError, EOFError, TypeError):
            table = {}   # none yet, or unreadable: imported the usual way and written anew
        if not table and fd >= 0:
            posix.close(fd)
            fd = -1
        return cls(root, table, fd, 16 + length if table else 0)

    def code(self, name: str) -> bytes:
        """The marshalled code of a module the image holds."""
        entry = self.table[name]
        data = posix.pread(self.fd, entry[5], self.body + entry[4])
        if len(data) != entry[5]:
            raise ImportError(f"the hook image ends inside {name}", name=name)
        return data

    def find_spec(self, name: str, path: "Sequence[str] | None" = None,
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        entry = self.table.get(name)
        if entry is None:
            self.missed.add(name)
            return None
        origin, package, mtime, size = entry[:4]
        try:
            info = posix.stat(origin)
        except OSError:
            info = None
        if info is None or info.st_mtime_ns != mtime or info.st_size != size:
            self.missed.add(name)
            return None
        if entry[5] < 0:   # a compiled module of the standard library, loaded from its file
            spec: ModuleSpec = _ModuleSpec(name, _Extension(name, origin), origin=origin)
            spec.has_location = True
            return spec
        spec = _ModuleSpec(name, self, origin=origin, is_package=package)
        spec.has_location = True   # __file__ is the source, as for a module imported the usual way
        if package:
            spec.submodule_search_locations = [origin.rpartition("/")[0]]
        return spec

    def create_module(self, spec: "ModuleSpec") -> None:
        return None

    def exec_module(self, module: "ModuleType") -> None:
        import marshal

        exec(marshal.loads(self.code(module.__name__)), module.__dict__)

    def refresh(self) -> None:
        """Write the image anew when this call imported one of our modules the usual way, unless
        the call compiled a configuration (its cold-path modules stay out) or the installation is
        not writable (as Python leaves a .pyc unwritten)."""
        if (self.whole and not any(_belongs(name) for name in self.missed)) \
                or "yaml" in sys.modules or "pydantic" in sys.modules:
            return
        path = image_path(self.root)
        if not posix.access(path.rpartition("/")[0], posix.W_OK):
            return
        from governance.hook import image

        image.write(path, IMAGE_FORMAT, self.root, self.table, self.code,
                    sorted(name for name in self.missed if _belongs(name)))


_MAGIC = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER
_ModuleSpec = sys.modules["_frozen_importlib"].ModuleSpec
_Extension = sys.modules["_frozen_importlib_external"].ExtensionFileLoader


def _belongs(name: str) -> bool:
    """Whether the module ``name``, imported, is one the image holds: ours, or a standard library
    module loaded from its own ``.py`` or ``.so`` file (not built in, not frozen, not from
    site-packages)."""
    module = sys.modules.get(name)
    if module is None:
        return False
    if name == "governance" or name.startswith("governance."):
        return True
    origin = getattr(module, "__file__", None)
    if not isinstance(origin, str) or getattr(module.__spec__, "origin", None) != origin:
        return False   # built in, or frozen into the interpreter: no search to spare
    stdlib = getattr(sys.modules.get("encodings"), "__file__", None) or ""
    stdlib = stdlib.rpartition("/")[0].rpartition("/")[0]   # .../lib/python3.X
    return bool(stdlib) and origin.startswith(stdlib + "/") and "/site-packages/" not in origin \
        and origin.endswith((".py", ".so"))


def _image(root: str) -> "Image | None":
    if not root or posix.environ.get(b"GOVERNANCE_HOOK_IMAGE") == b"off":
        return None
    image = Image.load(root)
    sys.meta_path.insert(0, image)
    return image


def _fail_closed(argv: "list[str]") -> bool:
    for i, item in enumerate(argv):
        if item == "--on-error" and i + 1 < len(argv):
            return argv[i + 1] == "block"
        if item.startswith("--on-error="):
            return item.split("=", 1)[1] == "block"
    return posix.environ.get(b"GOVERNANCE_ON_ERROR") == b"block"


def broken(exc: BaseException, argv: "list[str]", event: "str | None", text_only: bool) -> int:
    """Tell Claude Code that the installation is broken: JSON for a hook, a line for the status line.

    Only a PreToolUse hook can deny, and only when it is configured to fail closed.
    """
    if text_only:
        print(f"◆ governance unavailable ({type(exc).__name__}): reinstall it")
        return 0
    import json

    text = f"governance hook could not start ({type(exc).__name__}: {exc}); reinstall it."
    answer: dict[str, object] = {"systemMessage": text}
    if event == "PreToolUse" and _fail_closed(argv):
        answer["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                        "permissionDecisionReason": text}
    print(json.dumps(answer))
    return 0


def run(module: str, function: str, argv: "list[str] | None" = None, *,
        event: "str | None" = None, text_only: bool = False) -> int:
    """Import ``module``, call ``function(argv)`` and return its exit code.

    The entry answers its own errors; anything that still escapes it (a module it imports late
    is missing, say) is answered here like a broken installation.
    """
    gc.disable()   # a hook process lives for milliseconds: the cyclic collector's passes over the
    # objects of every module it unmarshals cost more than the little cyclic garbage it leaves
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        image = _image(_put_package_on_path())
        entry = getattr(__import__(module, fromlist=[function]), function)
        code: int = entry(words)
    except Exception as exc:  # a broken installation must say so, never fail silently
        return broken(exc, words, event, text_only)
    if image is not None:
        try:
            image.refresh()
        except (OSError, ValueError):
            pass   # not written: the next call imports the usual way and tries again
    return code


def leave(code: int) -> "NoReturn":
    """End a hook process with ``code`` once its answer is written, without the interpreter's
    teardown. Claude Code waits for the process to end, and the teardown (a last collection of
    every object, every module cleared and freed) is about a seventh of a Bash call's work.
    Nothing of ours needs it: every file is written with plain ``write`` calls and closed, locks
    go with the process, and no thread outlives the call. Standard output and error are flushed
    first; when they cannot be (Claude Code stopped reading), the exit code says so as Python's
    would."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = code or 120   # as Python exits when it cannot flush its standard streams
    posix._exit(code)


def launch(words: "list[str]") -> int:
    """Run our module ``words[0]`` as ``__main__`` with the arguments ``words[1:]`` (the MCP
    servers, the slash commands' CLI, the detached server): ``python -I hooks/launch.py MODULE``
    is ``python -m MODULE`` without the working folder on ``sys.path``, with our package first."""
    if not words or words[0].split(".")[0] != "governance":
        print("usage: launch.py governance.MODULE [ARGUMENTS...] (one of governance's modules)",
              file=sys.stderr)
        return 2
    _put_package_on_path()
    import runpy

    sys.argv = list(words)
    runpy.run_module(words[0], run_name="__main__", alter_sys=True)
    return 0
