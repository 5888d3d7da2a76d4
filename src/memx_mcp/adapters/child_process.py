"""A model CLI run as a child within bounds: its input from a file only memx can read (never its command
line, which any local user can read with ``ps -eww``, and which Linux caps at 128 KiB a string), its output
capped (a child that writes 1 GiB took memx to 2.4 GB), a total deadline, and its whole process group ended
when it is over (a child's own child outlived the timeout)."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_OUTPUT = 8 * 1024 * 1024  # what a child may write, stdout and stderr together: an answer is a few KB
_CHUNK = 65536


class OutputTooLarge(RuntimeError):
    """The child wrote more than it may: it was ended."""


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def private_folder(prefix: str = "memx-model-") -> Iterator[Path]:
    """A folder only this user can enter (0700), removed afterwards: the child's input file and its working
    folder (``work/``, empty) live there."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        os.chmod(folder, 0o700)
        (Path(folder) / "work").mkdir(mode=0o700)
        yield Path(folder)


def write_private(path: Path, text: str) -> Path:
    """``text`` in a new file only this user can read (0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
        f.write(text)
    return path


def run_bounded(
    argv: Sequence[str],
    *,
    stdin: Path,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    limit: int = MAX_OUTPUT,
) -> Finished:
    """Run ``argv`` with ``stdin`` (a file) as its input, in a process group of its own. TimeoutError past
    ``timeout`` seconds in all; OutputTooLarge past ``limit`` bytes written. Either way, and when it ends by
    itself, every process left in its group is killed."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        return _run_on_windows(argv, stdin, cwd, env, timeout, limit)
    with stdin.open("rb") as source:
        child = subprocess.Popen(
            list(argv),
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own group: ended whole; a hook's deadline killing memx never reaches it
        )
    deadline = time.monotonic() + timeout
    out, err = bytearray(), bytearray()
    try:
        _collect(child, deadline, out, err, limit, timeout)
        returncode = _exit_status(child)
    finally:
        _end_group(child)
    return Finished(returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def _collect(
    child: subprocess.Popen[bytes], deadline: float, out: bytearray, err: bytearray, limit: int, timeout: float
) -> None:
    """Read the child's output until it has exited and said all it will, the deadline or the limit."""
    assert child.stdout is not None and child.stderr is not None
    buffers = {child.stdout.fileno(): out, child.stderr.fileno(): err}
    with selectors.DefaultSelector() as selector:
        for stream in (child.stdout, child.stderr):
            os.set_blocking(stream.fileno(), False)
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"took longer than {timeout:.0f} s")
            exited = _exited(child)
            for key, _ in selector.select(min(left, 0.2)):
                while True:
                    try:
                        chunk = os.read(key.fd, _CHUNK)
                    except BlockingIOError:
                        break
                    if not chunk:
                        selector.unregister(key.fileobj)
                        break
                    buffers[key.fd] += chunk
                    if len(out) + len(err) > limit:
                        raise OutputTooLarge(f"wrote more than {limit // (1024 * 1024)} MiB")
            if exited:  # all it wrote before exiting was read above: a leftover of its group may hold the pipes
                return
    while not _exited(child):  # it closed its output and runs on
        if time.monotonic() >= deadline:
            raise TimeoutError(f"took longer than {timeout:.0f} s")
        time.sleep(0.05)


def _exited(child: subprocess.Popen[bytes]) -> bool:
    """Whether the child has exited, without reaping it (its group stays addressable until it is reaped)."""
    try:
        return os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _exit_status(child: subprocess.Popen[bytes]) -> int:
    found = os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    if found is None:  # pragma: no cover - called once it has exited
        return -1
    return found.si_status if found.si_code == os.CLD_EXITED else -found.si_status


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """Kill every process of the child's group (before the child is reaped: its id cannot be reused yet),
    then reap it and close the pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    for stream in (child.stdout, child.stderr):
        if stream is not None:
            stream.close()


def _run_on_windows(
    argv: Sequence[str], stdin: Path, cwd: Path, env: dict[str, str], timeout: float, limit: int
) -> Finished:  # pragma: no cover - exercised on Windows only
    """The same bounds without POSIX process groups or selectable pipes: a thread per pipe, and the child's
    tree ended with ``taskkill /T``."""
    with stdin.open("rb") as source:
        child = subprocess.Popen(
            list(argv),
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
        )
    out, err, over = bytearray(), bytearray(), threading.Event()

    def pump(stream: Any, buffer: bytearray) -> None:
        while chunk := stream.read1(_CHUNK):
            buffer.extend(chunk)
            if len(out) + len(err) > limit:
                over.set()
                return

    pumps = [
        threading.Thread(target=pump, args=(p, b), daemon=True) for p, b in ((child.stdout, out), (child.stderr, err))
    ]
    for t in pumps:
        t.start()
    deadline = time.monotonic() + timeout
    try:
        while child.poll() is None:
            if over.is_set():
                raise OutputTooLarge(f"wrote more than {limit // (1024 * 1024)} MiB")
            if time.monotonic() >= deadline:
                raise TimeoutError(f"took longer than {timeout:.0f} s")
            time.sleep(0.05)
        for t in pumps:
            t.join(max(0.0, min(1.0, deadline - time.monotonic())))
        if over.is_set():
            raise OutputTooLarge(f"wrote more than {limit // (1024 * 1024)} MiB")
    finally:
        subprocess.run(["taskkill", "/T", "/F", "/PID", str(child.pid)], capture_output=True, check=False)
        if child.poll() is None:
            child.kill()
        child.wait()
    return Finished(child.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
