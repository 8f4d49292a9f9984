"""``governance org pull URL``: fetch the organisation's bundle, verify it, install it as a whole.

A bundle is installed only when its signature verifies against the installed public key and its
version is above the installed one (the same version with the same content is "already current";
the files it installed that changed on disk are put back). Installing is all or nothing: the new
files are staged beside their places, then moved in with the replaced ones kept as hard links
until the state (``bundle.json``) is written; any failure puts every file back as it was, so the
last verified bundle stays in force (and an offline machine keeps enforcing it). Files are 0644,
folders 0755: the hook refuses org files that group or others may write.
"""

from __future__ import annotations

import errno
import fcntl
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from governance import project
from governance.organisation import bundle, installed
from governance.organisation.bundle import BundleError

MAX_BYTES = 16 * 1024 * 1024
TIMEOUT = 30.0
FILE_MODE = 0o644
DIR_MODE = 0o755
SCHEMES = ("http", "https", "file")


@dataclass
class Result:
    """What a pull did: ``installed``, ``current`` (nothing to do) or ``repaired``."""

    outcome: str
    version: int
    issued: str
    previous: int | None = None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def describe(self, url: str) -> str:
        if self.outcome == "current":
            return (f"The organisation bundle version {self.version} from {url} is already "
                    "current; nothing changed.")
        if self.outcome == "repaired":
            return (f"The organisation bundle version {self.version} was already installed, but "
                    f"{', '.join(self.changed)} had changed on disk: put back from {url}.")
        was = (f" (was version {self.previous})" if self.previous is not None
               else " (the first bundle here)")
        lines = [f"Installed the organisation bundle version {self.version}{was}, issued "
                 f"{self.issued}, from {url} into {project.org_dir()}."]
        for label, names in (("added", self.added), ("changed", self.changed),
                             ("removed", self.removed)):
            if names:
                lines.append(f"  {label}: {', '.join(names)}")
        return "\n".join(lines)


def pull(url: str) -> Result:
    """Install the bundle at ``url`` (http, https or file); a BundleError, with every installed
    file left as it was, when it cannot be fetched, does not verify or would go backwards."""
    url = _as_url(url)
    key = installed.public_key()
    org = project.org_dir()
    before = installed.read_state()
    if not os.access(org, os.W_OK):
        raise _needs_root(org, url, before)
    data = fetch(url, before)
    with _locked(org):
        state = installed.read_state()
        try:
            found = bundle.verify(data, key, url)
        except BundleError as exc:
            raise BundleError(f"{exc.message}; {installed.in_force(state)}", file=exc.file,
                              fix=exc.fix) from None
        writes, result = _plan(found, state, url)
        if not writes:
            return result
        when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        writes[os.path.basename(project.org_bundle_state_path())] = installed.state_bytes(
            found, url, key, when)
        try:
            apply(org, writes, result.removed)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise _needs_root(org, url, state) from None
            raise BundleError(f"the bundle could not be installed ({exc}); every file was put "
                              f"back, and {installed.in_force(state)}", file=org,
                              fix=f"free the disk or fix {org}, then run `governance org pull "
                                  f"{url}` again") from None
    return result


def _as_url(url: str) -> str:
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme in SCHEMES:
        return url
    if not scheme and os.path.exists(url):  # an offline copy named by its path
        return Path(url).resolve().as_uri()
    raise BundleError(f"{url!r} is not an http, https or file URL", file=url,
                      fix="pass the team server's bundle URL, or file:///PATH for an offline copy")


def fetch(url: str, state: dict[str, Any] | None = None) -> bytes:
    """The bytes at ``url``; a BundleError saying what stays in force when it cannot be read."""
    from governance.project import installed_version

    request = urllib.request.Request(url, headers={
        "User-Agent": f"claude-governance/{installed_version()}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            data: bytes = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        reason = f"the server answered HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = str(getattr(exc, "reason", None) or exc)
    else:
        if len(data) <= MAX_BYTES:
            return data
        reason = f"it is larger than {MAX_BYTES // (1024 * 1024)} MiB"
    raise BundleError(f"the bundle could not be fetched ({reason}); {installed.in_force(state)}",
                      file=url, fix="check the URL and the network (or copy the bundle here and "
                                    "pull it as file:///PATH), then pull again")


def _plan(found: bundle.Bundle, state: dict[str, Any] | None, url: str
          ) -> tuple[dict[str, bytes], Result]:
    """The files to write for ``found`` and what the pull does, or a BundleError for a version
    that goes backwards (or changes what a version held)."""
    hashes = {name: installed.digest(data) for name, data in found.files.items()}
    if state is None:
        return dict(found.files), Result("installed", found.version, found.issued,
                                         added=sorted(found.files))
    have = state["version"]
    if found.version < have or (found.version == have and hashes != state["files"]):
        same = found.version == have
        raise BundleError(
            f"the bundle is version {found.version}, "
            + ("already installed with other content" if same else f"older than the installed "
               f"version {have}")
            + f"; a bundle's version never goes backwards, so it is refused and "
              f"{installed.in_force(state)}", file=url,
            fix="serve the current bundle" + (", or re-sign this content" if same else "")
                + f" with a version above {have} (`governance org sign DIR --version "
                  f"{have + 1} ...`)")
    if found.version == have:
        changed = sorted(name for name, want in hashes.items() if installed.on_disk(name) != want)
        return ({name: found.files[name] for name in changed},
                Result("repaired" if changed else "current", found.version, found.issued, have,
                       changed=changed))
    before: dict[str, str] = state["files"]
    return dict(found.files), Result(
        "installed", found.version, found.issued, have,
        added=sorted(set(hashes) - set(before)),
        changed=sorted(name for name in hashes if name in before and before[name] != hashes[name]),
        removed=sorted(name for name in set(before) - set(hashes) if bundle.is_layer_file(name)))


def _needs_root(org: str, url: str, state: dict[str, Any] | None) -> BundleError:
    return BundleError(f"writing the organisation layer needs root; nothing was changed and "
                       f"{installed.in_force(state)}", file=org,
                       fix=f"run `sudo governance org pull {url}`")


@contextmanager
def _locked(org: str) -> Iterator[None]:
    """One pull at a time: an exclusive lock on the org folder itself (no lock file in it)."""
    fd = os.open(org, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def apply(org: str, writes: dict[str, bytes], removals: list[str]) -> None:
    """Write ``writes`` (name under ``org`` -> bytes) and remove ``removals``, all or nothing:
    an OSError leaves every file as it was."""
    staged: list[tuple[str, str]] = []
    made: list[str] = []
    done: list[tuple[str, str | None]] = []   # (target, hard link to what it held, or None)
    try:
        for name, data in writes.items():
            target = os.path.join(org, name)
            _folders(org, os.path.dirname(target), made)
            temp = project.temp_path(target)
            staged.append((temp, target))
            _write(temp, data)
        for temp, target in staged:
            done.append((target, _keep(target)))
            os.replace(temp, target)
        for name in removals:
            target = os.path.join(org, name)
            kept = _keep(target)
            if kept is not None:
                done.append((target, kept))
                os.unlink(target)
    except BaseException:
        for target, kept in reversed(done):
            if kept:
                _quietly(os.replace, kept, target)
                # still there when target was not replaced yet (a rename between two links to
                # one file does nothing)
                _quietly(os.unlink, kept)
            else:
                _quietly(os.unlink, target)
        for temp, _ in staged:
            _quietly(os.unlink, temp)
        for folder in reversed(made):
            _quietly(os.rmdir, folder)
        raise
    for _, kept in done:
        if kept:
            _quietly(os.unlink, kept)
    for name in removals:  # a folder the bundle no longer has files in goes too
        folder = os.path.dirname(os.path.join(org, name))
        if folder != org:
            _quietly(os.rmdir, folder)


def _folders(org: str, folder: str, made: list[str]) -> None:
    """Create ``folder`` (0755) and the missing ones between it and ``org``, adding each to
    ``made`` as it is created."""
    missing: list[str] = []
    while folder != org and not os.path.isdir(folder):
        missing.insert(0, folder)
        folder = os.path.dirname(folder)
    for each in missing:
        os.mkdir(each, DIR_MODE)
        made.append(each)
        os.chmod(each, DIR_MODE)   # whatever the umask


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)   # whatever the umask
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _keep(target: str) -> str | None:
    """A hard link to what ``target`` holds now (None when it does not exist)."""
    kept = f"{target}.{os.getpid()}.kept"
    _quietly(os.unlink, kept)
    try:
        os.link(target, kept, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return kept


def _quietly(call: Any, *args: str) -> None:
    try:
        call(*args)
    except OSError:
        pass
