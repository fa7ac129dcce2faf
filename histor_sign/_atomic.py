"""Crash-safe output: a reader sees the old output or the complete new one, never half.

What each kind of output path gets:

* A regular file (or a path that does not exist yet) is written to a hidden temporary
  file in the same directory, fsynced, and renamed over the path. A new file gets the
  user's umask (created ``0666 & ~umask``, as ``open(..., "w")`` would); an existing file
  keeps its permission bits (``0777`` part) and, where allowed, its owner.
* A symbolic link is followed: the file it points to is replaced the same way (the link
  stays a link; a dangling link creates its target).
* An existing device node, FIFO or socket, and any path that leads through ``/proc``
  (``/dev/stdout``, ``/dev/fd/N``), is opened for writing and written into: it is never
  replaced (so ``-o /dev/null`` as root leaves ``/dev/null`` a device).
* A directory is refused.

A group of files (an envelope and its companions) is staged completely first; then a
commit record of this writer's own (``.FIRST.histor-PID-RANDOM.commit``) naming the staged
files is written, the files are renamed into place by a detached process and the record
removed. A rename that fails rolls the group back. A renamer killed mid-way hands the
renames back to the writer, which finishes them. When both are killed the record stays:
the next write of the same group first finishes the renames (every staged file is complete
and fsynced), so the group ends up all new, and :func:`finish_interrupted` tells its caller.

Files several runs change (a pin store, a lock file, a host config, a checkpoint, a chain
directory) follow one lock discipline, :func:`locked_directory`: take the directory's
``flock``, re-read, decide, write atomically, let go.

A release directory (:class:`OutputDirectory`) is stronger: every output is written into a
fresh sibling directory, which is then exchanged with the output directory in one atomic
``renameat2(RENAME_EXCHANGE)`` step, so even ``kill -9`` at any instant leaves the complete
old directory or the complete new one. Leftovers of a killed run (hidden ``.NAME.histor-*``
siblings and temporary files whose process is gone) are removed by the next run.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType

from histor_sign._escape import printable
from histor_sign.errors import InputError, OperationalError

_TAG = "histor-"
#: Temporary and backup names older versions made with ``tempfile.mkstemp``.
_LEGACY = re.compile(r"\.[a-z0-9_]{8}\.(?:tmp|old)\Z")
_OURS = re.compile(r"histor-(\d+)-[0-9a-f]{12}(?:\.tmp|\.old|\.commit)?\Z")
#: A group's commit record: ``.FIRST.histor-PID-RANDOM.commit`` (``.FIRST.histor-commit``
#: before records were named per writer; still finished when found).
_RECORD = re.compile(r"histor-(?:\d+-[0-9a-f]{12}\.)?commit\Z")


#: What a file is written from: its bytes, or consecutive pieces of them (a large report is
#: streamed without ever being held whole; a piece that raises leaves the old file as it was).
Content = bytes | Iterable[bytes]


def _pieces(data: Content) -> Iterator[bytes]:
    if isinstance(data, bytes | bytearray | memoryview):
        yield bytes(data) if isinstance(data, memoryview) else data
    else:
        yield from data


class OutputBusy(OperationalError):
    """Another process holds the lock of the output directory (a concurrent release)."""


def write_atomic(path: str | Path, data: Content, *, private: bool = False) -> None:
    """Write ``data`` to ``path`` (see the module docstring for what each kind of path gets).

    ``private`` creates the file ``0600`` whatever the umask (for secrets such as tokens).
    """
    write_all_atomic({Path(path): data}, private=(Path(path),) if private else ())


class ReservedOutputs:
    """Outputs checked writable before work that cannot be undone (a signature and its
    transparency-log entry), from :func:`reserve_outputs`.

    Holds the open descriptor of each special output (a FIFO keeps the reader it found);
    :func:`write_all_atomic` writes into those. Close it (or use it as a context manager)
    when done.
    """

    def __init__(self) -> None:
        self.fds: dict[Path, int] = {}

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()

    def __enter__(self) -> ReservedOutputs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def reserve_outputs(
    paths: Iterable[str | Path], *, room: int = 0, reader_seconds: float | None = None
) -> ReservedOutputs:
    """Check that every output in ``paths`` can be written, before anything is signed.

    A regular output (or a new one): its directory is created if needed and a probe file
    is made there with ``room`` bytes allocated (``posix_fallocate``), then removed, so a
    read-only or full file system fails now, not after a log entry exists. A device, FIFO
    or ``/proc`` descriptor is opened for writing and kept open; a FIFO without a reader is
    waited on for at most ``reader_seconds`` (default
    :data:`~histor_sign._limits.DEFAULT_OUTPUT_READER_SECONDS`). Errors are
    :class:`OperationalError` naming the output.
    """
    from histor_sign._limits import DEFAULT_OUTPUT_READER_SECONDS

    wait = DEFAULT_OUTPUT_READER_SECONDS if reader_seconds is None else reader_seconds
    reserved = ReservedOutputs()
    probed: set[Path] = set()
    try:
        for given in map(Path, paths):
            target = _target(given)
            if target is None:
                reserved.fds[given] = _open_special(given, wait)
            elif target.parent not in probed:
                probed.add(target.parent)
                _probe_room(given, target, room)
    except BaseException:
        reserved.close()
        raise
    return reserved


def _probe_room(given: Path, target: Path, room: int) -> None:
    try:
        tmp = _stage(target, b"", private=True, fresh=True)
    except OSError as exc:
        raise _cannot_write(given, exc) from None
    try:
        fd = os.open(tmp, os.O_WRONLY)
        try:
            if room > 0:
                try:
                    os.posix_fallocate(fd, 0, room)
                except OSError as exc:
                    if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                        raise OSError(exc.errno, f"{exc.strerror} (about {room} bytes are "
                                      "needed)") from None
        finally:
            os.close(fd)
    except OSError as exc:
        raise _cannot_write(given, exc) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _open_special(path: Path, wait: float) -> int:
    """Open a device, FIFO or descriptor link for appending; a FIFO with no reader yet
    (``ENXIO`` on a non-blocking open) is retried until ``wait`` seconds have passed."""
    import time

    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() >= deadline:
                if exc.errno == errno.ENXIO:
                    raise OperationalError(
                        f"cannot write {_shown(path)}: it is a FIFO and no reader opened it "
                        f"within {wait:g} s"
                    ) from None
                raise _cannot_write(path, exc) from None
            time.sleep(0.05)
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    return fd


def write_all_atomic(
    files: Mapping[Path, Content],
    *,
    private: Collection[Path] = (),
    reserved: ReservedOutputs | None = None,
) -> list[Path]:
    """Write several files so that either all of the new ones end up in place or none does.

    Special files (devices, FIFOs, ``/dev/stdout``) among them are written into after the
    regular files were committed; they cannot take part in a rollback. ``reserved`` (from
    :func:`reserve_outputs`) supplies the descriptors special outputs were opened with.
    Returns the outputs an earlier, interrupted write of the same group left staged and
    this one rolled forward first (empty almost always), for the caller to report.
    """
    regular: dict[Path, tuple[Path, Content, bool]] = {}  # target → (as given, data, private)
    special: list[tuple[Path, Content]] = []
    private_set = {Path(p) for p in private}
    for given, data in files.items():
        given = Path(given)
        target = _target(given)
        if target is None:
            special.append((given, data))
        else:
            regular[target] = (given, data, given in private_set)
    recovered = _commit_group(regular) if regular else []
    for given, data in special:
        _write_into(given, data, reserved.fds.pop(given, None) if reserved is not None else None)
    return recovered


class AlreadyExists(OperationalError):
    """:func:`create_exclusive` found its path taken (by an earlier or a concurrent writer)."""


def create_exclusive(path: str | Path, data: Content) -> None:
    """Create ``path`` with ``data`` only if nothing is there yet, atomically: the complete,
    fsynced file is staged and then hard-linked to ``path``, which the kernel does only
    when the name is free. Of two concurrent writers exactly one succeeds; the other gets
    :class:`AlreadyExists` and has changed nothing. A reader never sees a partial file. A
    symbolic link at ``path`` (dangling or not) counts as taken and is never followed."""
    path = Path(path)
    try:
        tmp = _stage(path, data, private=False, fresh=True)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        raise AlreadyExists(f"{_shown(path)} already exists") from None
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _fsync_dir(path.parent)


def _target(path: Path) -> Path | None:
    """The regular file to replace for ``path`` (symlinks followed), or None to write into it."""
    if _through_proc(path):
        return None
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    if stat.S_ISDIR(st.st_mode):
        raise OperationalError(f"cannot write {_shown(path)}: it is a directory")
    return target if stat.S_ISREG(st.st_mode) else None


def output_exists(path: str | Path) -> bool:
    """Whether an output path names something already (a dangling link does not).

    A path that cannot be looked up (too long, under a regular file, a symlink loop) is
    :class:`OperationalError` naming it, as the write itself would report it."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    return True


#: Directories this process holds locked, per thread: (device, inode, thread) → depth. A
#: nested lock of the same directory in the same thread is the one already held.
_HELD: dict[tuple[int, int, int], int] = {}


@contextlib.contextmanager
def locked_directory(
    directory: str | Path,
    *,
    shown: str | Path | None = None,
    wait: float | None = None,
    busy: str | None = None,
) -> Iterator[Path]:
    """The one lock discipline for shared outputs: take this lock, re-read what is there,
    decide, write atomically, let go. Yields the directory (created if needed).

    The lock is an exclusive ``flock`` on ``directory`` itself (no lock file is left
    anywhere: the chain directory is committed as it is). Another process holding it is
    waited on for at most ``wait`` seconds (default
    :data:`~histor_sign._limits.DEFAULT_LOCK_WAIT_SECONDS`; 0: not at all), then
    :class:`OutputBusy` with ``busy`` (``{holder}`` becomes ``pid N`` when the kernel says
    which process holds it), naming ``shown``. The same thread may nest it. A directory that
    cannot be made or opened is :class:`OperationalError` naming ``shown``.
    """
    import threading
    import time

    from histor_sign._limits import DEFAULT_LOCK_WAIT_SECONDS

    directory = Path(directory)
    shown = directory if shown is None else shown
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _cannot_write(shown, exc) from None
    try:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino, threading.get_ident())
        if key not in _HELD:
            deadline = time.monotonic() + (DEFAULT_LOCK_WAIT_SECONDS if wait is None else wait)
            while not _try_flock(fd, shown):
                if time.monotonic() >= deadline:
                    holder = _holder(st.st_ino)
                    text = busy or "{shown} is being changed by another process ({holder}); " \
                        "nothing was written: run again when it is done"
                    raise OutputBusy(text.format(shown=_shown(shown), holder=holder))
                time.sleep(0.02)
        _HELD[key] = _HELD.get(key, 0) + 1
        try:
            yield directory
        finally:
            _HELD[key] -= 1
            if not _HELD[key]:
                del _HELD[key]
    finally:
        os.close(fd)  # the last descriptor of a nested lock is the outermost one


@contextlib.contextmanager
def _holding(fd: int) -> Iterator[None]:
    """Count the directory ``fd`` holds locked (another way) as held by this thread, so a
    :func:`locked_directory` of it inside nests instead of waiting for itself."""
    import threading

    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino, threading.get_ident())
    _HELD[key] = _HELD.get(key, 0) + 1
    try:
        yield
    finally:
        _HELD[key] -= 1
        if not _HELD[key]:
            del _HELD[key]


def _try_flock(fd: int, shown: str | Path) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise _cannot_write(shown, exc) from None
    return True


def _holder(inode: int) -> str:
    """``pid N`` of the process holding a ``flock`` on ``inode`` (from ``/proc/locks``)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) > 5 and parts[1] == "FLOCK" and \
                        parts[5].rsplit(":", 1)[-1] == str(inode):
                    return f"pid {int(parts[4])}"
    return "it is locked"


@contextlib.contextmanager
def locked_beside(path: str | Path, *, wait: float | None = None) -> Iterator[None]:
    """The lock of :func:`locked_directory` on the directory holding ``path`` (the file a
    symbolic link leads to: two links to one file share one lock), for a read-change-write
    cycle of ``path`` (re-read it inside, then :func:`write_atomic`). Errors name ``path``."""
    real = Path(os.path.realpath(path))
    with locked_directory(real.parent, shown=path, wait=wait):
        yield


def probe_room(path: str | Path, room: int, *, shown: str | Path | None = None) -> None:
    """Check, before work that cannot be undone, that ``room`` bytes can be written beside
    ``path`` (a probe named as a leftover of this process is allocated and removed): a
    read-only or full file system is :class:`OperationalError` naming ``shown`` (default
    ``path``)."""
    path = Path(path)
    _probe_room(Path(shown or path), Path(os.path.realpath(path.parent)) / path.name, room)


def _through_proc(path: Path) -> bool:
    """Whether ``path`` is or leads (through symlinks) into ``/proc`` (``/dev/stdout``)."""
    current = os.path.abspath(path)
    for _ in range(40):
        parent = os.path.realpath(os.path.dirname(current))
        current = os.path.join(parent, os.path.basename(current))
        if current == "/proc" or current.startswith("/proc/"):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.normpath(os.path.join(parent, os.readlink(current)))
    return False


def _write_into(path: Path, data: Content, held: int | None = None) -> None:
    """Write into an existing device, FIFO or ``/proc`` descriptor link (never replaced);
    ``held`` is a descriptor :func:`reserve_outputs` opened for it (closed here). A FIFO
    without a reader is waited on for a bounded time, never forever."""
    from histor_sign._limits import DEFAULT_OUTPUT_READER_SECONDS

    fd = held if held is not None else _open_special(path, DEFAULT_OUTPUT_READER_SECONDS)
    try:
        for piece in _pieces(data):
            view = memoryview(piece)
            while view:
                view = view[os.write(fd, view):]
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    finally:
        os.close(fd)


def _commit_group(files: Mapping[Path, tuple[Path, Content, bool]]) -> list[Path]:
    """Commit a group (see the module docstring); returns the outputs of an earlier,
    interrupted group that were rolled forward first. Two writers of groups in one
    directory take turns (:func:`locked_directory`), so their renames never interleave
    into a mixed group; a single file needs no turn (one rename is atomic)."""
    first = next(iter(files))
    if len(files) == 1:
        return _commit_files(files)
    with locked_directory(first.parent, shown=files[first][0]):
        return _commit_files(files)


def _commit_files(files: Mapping[Path, tuple[Path, Content, bool]]) -> list[Path]:
    first = next(iter(files))
    recovered = finish_interrupted(first)
    # Each writer's own record: two writers of one group never share (or finish) one.
    record = first.with_name(f".{first.name}.{_unique()}.commit")
    for target in files:
        _remove_leftovers(target.parent, target.name)
    staged: dict[Path, str] = {}
    backups: dict[Path, str | None] = {}
    done: list[Path] = []
    current: Path = first
    try:
        for target, (given, data, private) in files.items():
            current = given
            staged[target] = _stage(target, data, private)
        for target, (given, _data, _private) in files.items():
            current = given
            backups[target] = _backup(target)
        if len(files) > 1:
            current = files[first][0]
            _write_record(record, first, staged)
            moved, error = _renames_detached(record, len(files))
            if moved is None:  # the renamer died mid-way: this process finishes its work
                moved, error = _rename_rest(staged)
            done.extend(list(files)[:moved])
            for target in done:
                del staged[target]
            if error is not None:
                current = files[list(files)[moved]][0]
                raise error
        else:
            os.replace(staged[first], first)
            del staged[first]
            done.append(first)
            _fsync_dir(first.parent)
    except OSError as exc:
        for target in reversed(done):
            _restore(target, backups.get(target))
        raise _cannot_write(current, exc) from None
    finally:
        _discard_leftovers(record, staged, backups)
    return recovered


def _discard_leftovers(record: Path, staged: dict[Path, str],
                       backups: dict[Path, str | None]) -> None:
    """Step: remove the commit record, what was staged and not moved, and the backups."""
    with contextlib.suppress(OSError):
        os.unlink(record)
    for tmp in staged.values():
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    for backup in backups.values():  # restored ones were moved back already
        if backup is not None:
            with contextlib.suppress(OSError):
                os.unlink(backup)


def _rename_rest(staged: Mapping[Path, str]) -> tuple[int, OSError | None]:
    """Finish renames a killed renamer left (it renames in order, so the staged files still
    present are the rest); returns how many are in place and the error that stopped it."""
    pairs = list(staged.items())
    moved = sum(not os.path.lexists(tmp) for _target, tmp in pairs)
    for index in range(moved, len(pairs)):
        target, tmp = pairs[index]
        try:
            os.replace(tmp, target)
        except OSError as exc:
            return index, exc
    _fsync_dir(pairs[0][0].parent)
    return len(pairs), None


def _write_record(record: Path, first: Path, staged: Mapping[Path, str]) -> None:
    """The commit record: which staged file becomes which output (for rolling forward).

    Staged under ``first``'s temporary name pattern, so a kill leaves nothing new to clean.
    """
    doc = {"pid": os.getpid(), "files": [[tmp, str(target)] for target, tmp in staged.items()]}
    tmp = _stage(first, json.dumps(doc).encode(), private=False, fresh=True)
    os.replace(tmp, record)
    _fsync_dir(record.parent)


def _renames_detached(record: Path, count: int) -> tuple[int | None, OSError | None]:
    """Do a group's renames in a detached process (``_renamer.py``), so that killing this
    one, even with ``kill -9`` or its whole process group, cannot stop them half-way: the
    group ends all old (killed before the hand-over) or all new. Returns how many renames
    happened and the error that stopped the rest (None when all did); None renames when
    the process ended without a word (killed): the caller is responsible again."""
    import subprocess
    import sys

    fd = os.open(record, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # shared with the finisher through the inherited fd
        source = Path(__file__).with_name("_renamer.py").read_text(encoding="utf-8")
        try:
            run = subprocess.run(
                [sys.executable, "-I", "-c", source, str(record), str(fd)],
                pass_fds=(fd,), start_new_session=True, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False,
            )
        except OSError as exc:
            return 0, exc
    finally:
        os.close(fd)
    if run.returncode == 0:
        return count, None
    try:
        report = json.loads(run.stdout)
        code = int(report["errno"])
        return int(report["done"]), OSError(code, os.strerror(code))
    except (ValueError, KeyError, TypeError):
        return None, None


def finish_interrupted(path: str | Path) -> list[Path]:
    """Settle every group commit of ``path`` (its first file) that a killed writer left:
    each is rolled forward (its staged files are complete and fsynced), after waiting on
    its record's lock for a finisher still at work. Returns the outputs put in place, so
    the caller can say that an interrupted write was completed."""
    path = Path(path)
    prefix = f".{path.name}."
    try:
        entries = sorted(os.listdir(path.parent))
    except OSError:
        return []
    done: list[Path] = []
    for entry in entries:
        if entry.startswith(prefix) and _RECORD.match(entry[len(prefix):]):
            done += _finish_commit(path.parent / entry)
    return done


def _finish_commit(record: Path) -> list[Path]:
    """Roll forward a group whose writer was killed between its renames (waiting, through
    the record's lock, for a finisher that is still at work)."""
    try:
        with open(record, "rb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            doc = json.loads(fh.read(1 << 20))
        pid = int(doc["pid"])
        pairs = [(str(tmp), str(target)) for tmp, target in doc["files"]]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError):
        pairs, pid = [], 0  # unreadable: nothing to finish, drop it
    if pid and _alive(pid):
        return []
    done: list[Path] = []
    for tmp, target in pairs:
        if os.path.dirname(tmp) == os.path.dirname(target) and os.path.lexists(tmp):
            with contextlib.suppress(OSError):
                os.replace(tmp, target)
                done.append(Path(target))
    with contextlib.suppress(OSError):
        os.unlink(record)
    return done


def _stage(target: Path, data: Content, private: bool, fresh: bool = False) -> str:
    """A complete, fsynced hidden copy of ``data`` beside ``target``; returns its path.

    It takes ``target``'s mode (unless ``fresh`` or ``private``)."""
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    old = None
    if not fresh:
        with contextlib.suppress(OSError):
            old = os.stat(target)
    tmp = str(directory / f".{target.name}.{_unique()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            if private:
                os.fchmod(fh.fileno(), 0o600)
            elif old is not None and stat.S_ISREG(old.st_mode):
                with contextlib.suppress(OSError):
                    os.fchown(fh.fileno(), old.st_uid, old.st_gid)
                os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode) & 0o777)
            for piece in _pieces(data):
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def stage_copy(target: str | Path, data: Content, *, private: bool = False) -> str:
    """A complete, fsynced hidden copy of ``data`` beside ``target``
    (``.NAME.histor-PID-RANDOM.tmp``, ``0600`` when ``private``), for a caller that puts it
    in place itself (a hard link that never replaces anything). A kill leaves it named as a
    leftover of a dead process: :func:`process_alive` tells, and the next atomic write of
    ``target`` removes it."""
    return _stage(Path(target), data, private, fresh=True)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` (named in a leftover's name) still exists."""
    return _alive(pid)


def _backup(path: Path) -> str | None:
    """A hard link to the current file (None when there is none), for rolling back."""
    if not path.is_file():
        return None
    backup = str(path.with_name(f".{path.name}.{_unique()}.old"))
    os.link(path, backup)
    return backup


def _restore(path: Path, backup: str | None) -> None:
    with contextlib.suppress(OSError):
        if backup is None:
            os.unlink(path)
        else:
            os.replace(backup, path)


def _unique() -> str:
    """``histor-PID-RANDOM``: names a temporary as ours and says which process made it."""
    return f"{_TAG}{os.getpid()}-{secrets.token_hex(6)}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _leftover_pid(name: str, prefix: str) -> int | None:
    """The pid in a leftover's name (``.NAME.histor-PID-…``), 0 for an old-style one."""
    if not name.startswith(prefix):
        return None
    rest = name[len(prefix):]
    if rest == f"{_TAG}commit":
        return 0
    match = _OURS.match(rest)
    if match:
        return int(match.group(1))
    return 0 if _LEGACY.match("." + rest) else None


def _remove_leftovers(directory: Path, name: str) -> list[str]:
    """Remove temporaries of ``name`` whose writer is gone; returns the names removed."""
    removed: list[str] = []
    prefix = f".{name}."
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        pid = _leftover_pid(entry, prefix)
        if pid is None or (pid and _alive(pid)) or _RECORD.search(entry):
            continue
        path = directory / entry
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(entry)
    return removed


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _shown(path: str | Path) -> str:
    return printable(str(path))


def _cannot_write(path: str | Path, exc: OSError) -> OperationalError:
    """One line naming the output path (never the temporary file)."""
    reason = exc.strerror or type(exc).__name__
    return OperationalError(f"cannot write {_shown(path)}: {reason}")


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> None:
    """Atomically swap two directory entries (Linux ``renameat2(RENAME_EXCHANGE)``)."""
    import ctypes  # here: only publishing a directory needs it, and it costs every start-up

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS)) from None
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(b))


class OutputDirectory:
    """A directory of outputs that one run owns: locked while in use, replaced as a whole.

    Entering locks the directory (``flock`` on the directory itself, so no lock file is left
    anywhere), creating it if needed; a second process fails at once with
    :class:`OutputBusy`. The directory may only hold the files named in ``names`` (and
    leftovers of earlier runs): anything else is refused with :class:`InputError` before any
    work is done, because publishing replaces the whole directory.

    :meth:`publish` writes the new files into a fresh hidden sibling and exchanges it with
    the directory in one atomic step (symlinks to the directory are followed; the link is
    kept). Files of an earlier run that are not in the new set disappear with the old
    directory, so the directory only ever holds one run's outputs. Where the exchange is not
    available (not Linux, a mount point, a filesystem without it, a parent directory this
    process may not write to), the files are committed as a group (see the module
    docstring) and stale names are removed afterwards.
    """

    def __init__(self, path: Path, names: Collection[str], *, param: str = "out_dir") -> None:
        self.path = Path(path)
        self.names = frozenset(names)
        self.param = param
        self._real = Path(os.path.realpath(self.path))
        self._fd: int | None = None
        self._created = False
        self._published = False
        self.cleaned: list[str] = []

    def __enter__(self) -> OutputDirectory:
        real = self._real
        try:
            st: os.stat_result | None = os.stat(real)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise _cannot_write(self.path, exc) from None
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise InputError(
                f"`{self.param}` {_shown(self.path)} exists and is not a directory",
                param=self.param,
            )
        if st is None:
            try:
                real.mkdir(parents=True)
                self._created = True
            except FileExistsError:
                pass
            except OSError as exc:
                raise _cannot_write(self.path, exc) from None
        self._fd = self._lock(real)
        try:
            self._check_contents()
            for name in sorted(self.names):  # a group commit a killed run left half done
                finish_interrupted(real / name)
                self.cleaned += _remove_leftovers(real, name)
            self.cleaned += _remove_leftovers(real.parent, real.name)
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._created and not self._published:
            with contextlib.suppress(OSError):
                os.rmdir(self._real)  # only if still empty: nothing was written
        self._release()

    def _release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _lock(self, real: Path) -> int:
        for _ in range(10):
            try:
                fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY)
            except OSError as exc:
                raise _cannot_write(self.path, exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise OutputBusy(
                        f"`{self.param}` {_shown(self.path)} is in use by another run "
                        "(it is locked); nothing was written",
                        param=self.param,
                    ) from None
                raise _cannot_write(self.path, exc) from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(real))
            except OSError:
                same = False
            if same:
                return fd
            os.close(fd)  # swapped by a run that just finished: lock the new one
        raise OutputBusy(f"`{self.param}` {_shown(self.path)} keeps changing; nothing was "
                         "written", param=self.param)

    def _foreign(self, directory: Path | None = None) -> list[str]:
        prefix_ok = [f".{n}." for n in self.names]
        foreign = []
        for entry in sorted(os.listdir(directory or self._real)):
            if entry in self.names:
                continue
            if any(_leftover_pid(entry, p) is not None for p in prefix_ok):
                continue
            foreign.append(entry)
        return foreign

    def reserve(self, room: int) -> None:
        """Check, before work that cannot be undone (signing), that ``room`` bytes can be
        written into the directory: a probe (named as a leftover of this run, so a kill
        leaves nothing foreign) is allocated there and removed. A full or read-only file
        system is :class:`OperationalError` naming the directory."""
        _probe_room(self.path, self._real / sorted(self.names)[0], room)

    def _check_contents(self) -> None:
        try:
            foreign = self._foreign()
        except OSError as exc:
            raise _cannot_write(self.path, exc) from None
        if foreign:
            shown = ", ".join(repr(_shown(n)) for n in foreign[:3])
            more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
            raise InputError(
                f"`{self.param}` {_shown(self.path)} holds files that are not outputs of this "
                f"command ({shown}{more}); give it a directory of its own, since each run "
                "replaces the directory's contents",
                param=self.param,
            )

    def publish(self, files: Mapping[str, bytes]) -> dict[str, Path]:
        """Replace the directory's contents with ``files`` (name → bytes) in one step.

        Returns each name's path as the caller spelled the directory.
        """
        assert self._fd is not None, "publish() outside the with block"
        unknown = set(files) - self.names
        assert not unknown, f"not an output name: {sorted(unknown)}"
        real = self._real
        if not os.access(real.parent, os.W_OK | os.X_OK):  # no room for a sibling
            self._publish_in_place(files)
            return self._paths(files)
        stage = real.parent / f".{real.name}.{_unique()}"
        current: Path = self.path
        try:
            os.mkdir(stage, 0o777)
            try:
                os.chmod(stage, stat.S_IMODE(os.stat(real).st_mode))
                for name, data in files.items():
                    current = self.path / name
                    _write_new(stage / name, data, real / name)
                current = self.path
                _fsync_dir(stage)
                new_fd = self._lock(stage)
                try:
                    _exchange(stage, real)
                except OSError as exc:
                    os.close(new_fd)
                    if exc.errno in (errno.ENOSYS, errno.EINVAL, errno.EXDEV, errno.EBUSY,
                                     errno.ENOTSUP, errno.EPERM):
                        self._publish_in_place(files)
                        return self._paths(files)
                    raise
                _fsync_dir(real.parent)
                self._carry_over(stage)
                self._release()
                self._fd = new_fd  # keep the published directory locked until we exit
                self._published = True
            finally:
                with contextlib.suppress(OSError):
                    shutil.rmtree(stage)  # after the exchange: the old contents
        except OSError as exc:
            raise _cannot_write(current, exc) from None
        return self._paths(files)

    def _paths(self, files: Mapping[str, bytes]) -> dict[str, Path]:
        return {name: self.path / name for name in files}

    def _carry_over(self, old: Path) -> None:
        """Entries someone added to the directory while this run worked are kept."""
        for entry in self._foreign(old):
            with contextlib.suppress(OSError):
                os.rename(old / entry, self._real / entry)

    def _publish_in_place(self, files: Mapping[str, bytes]) -> None:
        assert self._fd is not None
        with _holding(self._fd):  # the group commit's turn is this run's lock already
            write_all_atomic({self._real / name: data for name, data in files.items()})
        for name in self.names - set(files):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._real / name)
        self._published = True


def _write_new(path: Path, data: bytes, previous: Path) -> None:
    """A new file in a staging directory, with the mode of the file it will replace."""
    old = None
    with contextlib.suppress(OSError):
        old = os.stat(previous)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "wb") as fh:
        if old is not None and stat.S_ISREG(old.st_mode):
            with contextlib.suppress(OSError):
                os.fchown(fh.fileno(), old.st_uid, old.st_gid)
            os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode) & 0o777)
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
