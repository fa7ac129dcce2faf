"""Crash-safe outputs: special files written into, umask and modes, symlinks, groups and
release directories that are all-or-nothing even when the writer is killed at any step."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from histor_sign import _atomic as atomic
from histor_sign._atomic import (
    OutputBusy,
    OutputDirectory,
    write_all_atomic,
    write_atomic,
)
from histor_sign.errors import InputError, OperationalError

NAMES = ("envelope.json", "statement.json", "summary.md")


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def hidden(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.startswith("."))


# ------------------------------------------------------------------ groups of files


def test_group_written_completely(tmp_path: Path) -> None:
    files = {tmp_path / "a.json": b"A", tmp_path / "sub" / "b.json": b"B"}
    write_all_atomic(files)
    assert {p: p.read_bytes() for p in files} == files
    assert sorted(os.listdir(tmp_path)) == ["a.json", "sub"]  # no temp, backup or record


def test_failed_rename_rolls_back_earlier_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / "envelope.json"
    old.write_bytes(b"old envelope")
    new_only = tmp_path / "statement.json"
    failing = tmp_path / "bundle.json"
    real_record = atomic._write_record

    def record_then_lose_one(record: Path, first: Path, staged: dict[Path, str]) -> None:
        real_record(record, first, staged)
        os.unlink(staged[failing])  # the finisher's rename of this one fails for real

    monkeypatch.setattr(atomic, "_write_record", record_then_lose_one)
    with pytest.raises(OperationalError) as caught:
        write_all_atomic({old: b"new envelope", new_only: b"new statement", failing: b"x"})
    assert old.read_bytes() == b"old envelope"  # restored
    assert not new_only.exists()  # removed again
    assert sorted(os.listdir(tmp_path)) == ["envelope.json"]  # nothing left over
    # The error names the output, never the temporary file.
    assert str(caught.value) == f"cannot write {failing}: No such file or directory"


def test_a_directory_at_the_output_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out.json").mkdir()
    with pytest.raises(OperationalError, match=r"out\.json: it is a directory"):
        write_atomic(tmp_path / "out.json", b"x")


def test_stage_errors_name_the_output(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    target = tmp_path / "file" / "out.json"
    with pytest.raises(OperationalError) as caught:
        write_atomic(target, b"x")
    assert str(target) in str(caught.value) and ".tmp" not in str(caught.value)


# ------------------------------------------------------------------ modes


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_follow_the_umask(tmp_path: Path, mask: int, expected: int) -> None:
    with umask(mask):
        write_atomic(tmp_path / "a.json", b"A")
        write_all_atomic({tmp_path / "b.json": b"B", tmp_path / "c.json": b"C"})
        with OutputDirectory(tmp_path / "rel", NAMES) as out:
            out.publish({"envelope.json": b"E"})
    for path in ("a.json", "b.json", "c.json", "rel/envelope.json"):
        assert stat.S_IMODE(os.stat(tmp_path / path).st_mode) == expected, path
    assert stat.S_IMODE(os.stat(tmp_path / "rel").st_mode) == expected | 0o111 & ~mask


def test_overwriting_keeps_the_mode(tmp_path: Path) -> None:
    single, grouped = tmp_path / "a.json", tmp_path / "b.json"
    rel = tmp_path / "rel"
    rel.mkdir(mode=0o750)
    os.chmod(rel, 0o750)
    for path in (single, grouped, rel / "envelope.json"):
        path.write_bytes(b"old")
        os.chmod(path, 0o640)
    with umask(0o077):
        write_atomic(single, b"new")
        write_all_atomic({grouped: b"new", tmp_path / "fresh.json": b"new"})
        with OutputDirectory(rel, NAMES) as out:
            out.publish({"envelope.json": b"new", "summary.md": b"new"})
    for path in (single, grouped, rel / "envelope.json"):
        assert path.read_bytes() == b"new"
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path
    assert stat.S_IMODE((tmp_path / "fresh.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((rel / "summary.md").stat().st_mode) == 0o600
    assert stat.S_IMODE(rel.stat().st_mode) == 0o750  # the directory keeps its mode too


def test_private_files_are_0600_whatever_the_umask(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")
    os.chmod(token, 0o644)
    with umask(0o000):
        write_atomic(token, b"secret", private=True)
    assert stat.S_IMODE(token.stat().st_mode) == 0o600


def test_setuid_bits_are_not_carried_over(tmp_path: Path) -> None:
    path = tmp_path / "a"
    path.write_bytes(b"old")
    os.chmod(path, 0o4755)
    write_atomic(path, b"new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


# ------------------------------------------------------------------ special files and links


@pytest.mark.parametrize("pieces", [False, True])
def test_fifo_is_written_into_not_replaced(tmp_path: Path, pieces: bool) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    data = b"through the pipe\n"
    write_atomic(fifo, iter([data[:3], bytearray(data[3:9]), memoryview(data[9:])])
                 if pieces else data)
    reader.join(10)
    assert received == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


def test_char_device_is_written_into_not_replaced(tmp_path: Path) -> None:
    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
    except PermissionError:
        pytest.skip("creating a device node needs root")
    for _ in range(2):
        write_atomic(null, b"discarded")
        write_all_atomic({null: b"discarded", tmp_path / "beside.json": b"kept"})
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert sorted(os.listdir(tmp_path)) == ["beside.json", "null"]


def test_dev_stdout_style_paths_write_into_the_descriptor(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    link = tmp_path / "stdout"
    link.symlink_to(f"/proc/self/fd/{write_fd}")  # what /dev/stdout is
    try:
        write_atomic(f"/dev/fd/{write_fd}", b"one ")
        write_atomic(link, b"two")
        os.close(write_fd)
        assert os.read(read_fd, 100) == b"one two"
    finally:
        os.close(read_fd)
        with contextlib.suppress(OSError):
            os.close(write_fd)
    assert link.is_symlink()


def test_dev_stdout_into_a_regular_file_appends(tmp_path: Path) -> None:
    out = tmp_path / "captured"
    with open(out, "wb") as fh:
        fh.write(b"before\n")
        fh.flush()
        write_atomic(f"/proc/self/fd/{fh.fileno()}", b"output\n")
    assert out.read_bytes() == b"before\noutput\n"
    assert os.listdir(tmp_path) == ["captured"]


def test_symlink_is_followed_and_its_target_replaced(tmp_path: Path) -> None:
    target = tmp_path / "real" / "envelope.json"
    target.parent.mkdir()
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / "latest.json"
    link.symlink_to(Path("real") / "envelope.json")
    write_atomic(link, b"new")
    assert link.is_symlink() and link.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(target.parent) == ["envelope.json"]  # temp was beside the target


def test_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to("made.json")
    write_atomic(link, b"new")
    assert link.is_symlink() and (tmp_path / "made.json").read_bytes() == b"new"


def test_symlink_to_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "link").symlink_to("d")
    with pytest.raises(OperationalError, match="is a directory"):
        write_atomic(tmp_path / "link", b"x")


# ------------------------------------------------------------------ release directories


def test_directory_publish_replaces_the_whole_set(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with OutputDirectory(out, NAMES) as d:
        d.publish({"envelope.json": b"E1", "statement.json": b"S1", "summary.md": b"M1"})
    with OutputDirectory(out, NAMES) as d:
        paths = d.publish({"summary.md": b"gate failed"})  # e.g. a tripped gate
    assert paths == {"summary.md": out / "summary.md"}
    assert os.listdir(out) == ["summary.md"]  # no stale envelope beside the new summary
    assert os.listdir(tmp_path) == ["out"]  # no staging or old generation left


def test_directory_symlink_is_kept_and_its_target_replaced(tmp_path: Path) -> None:
    (tmp_path / "gen").mkdir()
    link = tmp_path / "out"
    link.symlink_to("gen")
    with OutputDirectory(link, NAMES) as d:
        d.publish({"envelope.json": b"E"})
    assert link.is_symlink() and (tmp_path / "gen" / "envelope.json").read_bytes() == b"E"
    assert sorted(os.listdir(tmp_path)) == ["gen", "out"]


def test_directory_with_foreign_files_is_refused_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"not outputs of this command \('notes\.txt'\)"):
        with OutputDirectory(out, NAMES):
            pass
    assert os.listdir(out) == ["notes.txt"]


def test_out_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        with OutputDirectory(tmp_path / "f", NAMES):
            pass


def test_unused_fresh_directory_is_removed_again(tmp_path: Path) -> None:
    with OutputDirectory(tmp_path / "out", NAMES):
        pass  # e.g. signing failed
    assert os.listdir(tmp_path) == []


def test_second_user_of_a_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with OutputDirectory(out, NAMES) as first:
        with pytest.raises(OutputBusy, match="in use by another run"):
            with OutputDirectory(out, NAMES):
                pass
        first.publish({"envelope.json": b"E"})
        # After the swap the published directory is still locked.
        with pytest.raises(OutputBusy):
            with OutputDirectory(out, NAMES):
                pass
    with OutputDirectory(out, NAMES) as again:
        again.publish({"envelope.json": b"E2"})
    assert (out / "envelope.json").read_bytes() == b"E2"


def test_lock_held_by_another_process(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(1, b"")
        import time

        time.sleep(30)
        os._exit(0)
    try:
        import time

        for _ in range(200):  # wait until the child holds the lock
            probe = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                break
            finally:
                os.close(probe)
            time.sleep(0.02)
        with pytest.raises(OutputBusy):
            with OutputDirectory(out, NAMES):
                pass
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_exchange_unavailable_falls_back_to_a_group_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unsupported(a: Path, b: Path) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(atomic, "_exchange", unsupported)
    out = tmp_path / "out"
    with OutputDirectory(out, NAMES) as d:
        d.publish({"envelope.json": b"E", "statement.json": b"S"})
    with OutputDirectory(out, NAMES) as d:
        d.publish({"summary.md": b"M"})
    assert os.listdir(out) == ["summary.md"]
    assert os.listdir(tmp_path) == ["out"]


# ------------------------------------------------------------------ kill -9 at every step

_STEPS = ("replace", "rename", "unlink", "link", "mkdir", "fsync", "rmdir", "open", "chmod",
          "fchmod")


def _killed_at(step: int, work: Callable[[], None]) -> bool:
    """Run ``work`` in a child that dies like ``kill -9`` at its ``step``-th file system call;
    True when it died, False when the work finished before that step."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        count = [0]

        def counting(name: str, real: Callable[..., object]) -> Callable[..., object]:
            def call(*args: object, **kwargs: object) -> object:
                count[0] += 1
                if count[0] == step:
                    os._exit(86)
                return real(*args, **kwargs)

            return call

        for name in _STEPS:
            setattr(os, name, counting(name, getattr(os, name)))
        atomic._exchange = counting("exchange", atomic._exchange)  # type: ignore[assignment]
        try:
            work()
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 86), code
    return code == 86


OLD = {"envelope.json": b"envelope rev 1", "statement.json": b"statement rev 1",
       "summary.md": b"summary rev 1"}
NEW = {"envelope.json": b"envelope rev 2", "statement.json": b"statement rev 2",
       "summary.md": b"summary rev 2"}


def _contents(directory: Path) -> dict[str, bytes]:
    return {n: (directory / n).read_bytes() for n in os.listdir(directory)
            if not n.startswith(".")}


@pytest.mark.slow  # a forked child per kill point
def test_release_directory_is_old_or_new_whatever_step_is_killed(tmp_path: Path) -> None:
    def publish() -> None:
        with OutputDirectory(tmp_path / "out", NAMES) as d:
            d.publish(NEW)

    seen = set()
    step = 0
    while True:
        step += 1
        shutil.rmtree(tmp_path)
        tmp_path.mkdir()
        out = tmp_path / "out"
        out.mkdir()
        for name, data in OLD.items():
            (out / name).write_bytes(data)
        if not _killed_at(step, publish):
            break
        # Straight after the kill, before anything tidies up: all old or all new.
        state = _contents(out)
        assert state in (OLD, NEW), (step, state)
        seen.add("old" if state == OLD else "new")
        assert hidden(out) == [], step  # staging happens beside the directory, not in it
        # The next run removes what the killed one left and publishes normally.
        with OutputDirectory(out, NAMES) as d:
            d.publish({"summary.md": b"rev 3"})
        assert os.listdir(tmp_path) == ["out"], (step, os.listdir(tmp_path))
        assert _contents(out) == {"summary.md": b"rev 3"}
    assert seen == {"old", "new"} and step > 10  # kills landed before and after the swap


def _wait_for_finisher(directory: Path) -> None:
    """Block until a detached finisher still renaming a group in ``directory`` (it shares
    its record's lock) is done: the event, not a guess of how long it takes."""
    for record in directory.glob(".*commit"):
        with contextlib.suppress(FileNotFoundError), open(record, "rb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)


@pytest.mark.slow  # a forked child per kill point
def test_group_is_old_or_new_whatever_step_is_killed(tmp_path: Path) -> None:
    # kill -9 of the writer at any step: the group is all old or all new (the renames run
    # in a detached finisher once handed over); the next write tidies up and works.
    paths = {tmp_path / name: data for name, data in NEW.items()}
    records = tmp_path

    def write() -> None:
        write_all_atomic(paths)

    step = 0
    seen = set()
    while True:
        step += 1
        for p in tmp_path.iterdir():
            p.unlink()
        for name, data in OLD.items():
            (tmp_path / name).write_bytes(data)
        if not _killed_at(step, write):
            break
        _wait_for_finisher(records)
        state = _contents(tmp_path)
        assert state in (OLD, NEW), (step, state)
        seen.add("old" if state == OLD else "new")
        write_all_atomic({tmp_path / "envelope.json": b"rev 3", tmp_path / "statement.json":
                          b"rev 3", tmp_path / "summary.md": b"rev 3"})
        assert hidden(tmp_path) == [], (step, hidden(tmp_path))
        assert set(_contents(tmp_path).values()) == {b"rev 3"}
    assert seen == {"old", "new"}  # kills landed before and after the hand-over


def test_leftovers_of_old_versions_and_dead_processes_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "envelope.json").write_bytes(b"E")
    (out / ".envelope.json.k2j4h5g6.tmp").write_bytes(b"old-style temp")
    (out / ".envelope.json.histor-999999999-0123456789ab.tmp").write_bytes(b"dead writer")
    (tmp_path / ".out.histor-999999999-0123456789ab").mkdir()
    live = out / f".summary.md.histor-{os.getpid()}-0123456789ab.tmp"
    live.write_bytes(b"a live writer's temp is left alone")
    with OutputDirectory(out, NAMES) as d:
        assert sorted(d.cleaned) == [".envelope.json.histor-999999999-0123456789ab.tmp",
                                     ".envelope.json.k2j4h5g6.tmp",
                                     ".out.histor-999999999-0123456789ab"]
        assert live.exists()
        d.publish({"envelope.json": b"E2"})
    assert os.listdir(tmp_path) == ["out"] and os.listdir(out) == ["envelope.json"]


def test_unwritable_parent_falls_back_to_a_group_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "envelope.json").write_bytes(b"old")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if Path(p) == tmp_path
                        else real_access(p, m))  # root ignores permission bits
    with OutputDirectory(out, NAMES) as d:
        d.publish({"summary.md": b"M"})
    assert os.listdir(out) == ["summary.md"] and os.listdir(tmp_path) == ["out"]


def test_content_in_pieces_is_written_whole(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    pieces = (f"line {i}\n".encode() for i in range(10_000))
    write_atomic(out, pieces)
    assert out.read_bytes() == b"".join(f"line {i}\n".encode() for i in range(10_000))
    assert hidden(tmp_path) == []


def test_pieces_that_fail_leave_the_old_file(tmp_path: Path) -> None:
    """A report whose rendering raises half-way never replaces the previous output."""
    out = tmp_path / "report.json"
    out.write_bytes(b"old report\n")

    def pieces() -> Iterator[bytes]:
        yield b"new, partial"
        raise RuntimeError("renderer failed")

    with pytest.raises(RuntimeError):
        write_atomic(out, pieces())
    assert out.read_bytes() == b"old report\n"
    assert hidden(tmp_path) == []


def test_create_exclusive_writes_a_new_file_and_never_replaces_one(tmp_path: Path) -> None:
    path = tmp_path / "1.yank.envelope.json"
    atomic.create_exclusive(path, b"first")
    assert path.read_bytes() == b"first"
    with pytest.raises(atomic.AlreadyExists):
        atomic.create_exclusive(path, b"second")
    assert path.read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no staged leftover


def test_create_exclusive_treats_a_dangling_link_as_taken(tmp_path: Path) -> None:
    link = tmp_path / "yank.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(atomic.AlreadyExists):
        atomic.create_exclusive(link, b"data")
    assert link.is_symlink() and not (tmp_path / "elsewhere.json").exists()


def test_create_exclusive_has_one_winner_among_concurrent_writers(tmp_path: Path) -> None:
    path = tmp_path / "claimed.json"
    start = threading.Barrier(8)
    won: list[bytes] = []
    lost: list[bytes] = []

    def writer(data: bytes) -> None:
        start.wait()
        try:
            atomic.create_exclusive(path, data)
            won.append(data)
        except atomic.AlreadyExists:
            lost.append(data)

    threads = [threading.Thread(target=writer, args=(b"writer %d" % i * 4096,))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(lost) == 7
    assert path.read_bytes() == won[0]
