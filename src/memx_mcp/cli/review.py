"""``memx review``: the learned bullets that wait for the user. On a terminal, one at a time, one key each
(a approve, e edit then approve, r reject, s skip, q quit); elsewhere, or with ``--json``, the list; and
one answer at a time without a prompt: ``--approve ID``, ``--reject ID``, ``--edit ID TEXT``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..domain.errors import MemxError

if TYPE_CHECKING:
    from ..memory import Memory
    from ..presentation.schemas import PendingOut, ReviewOut

KEYS = "[a]pprove  [e]dit  [r]eject  [s]kip  [q]uit: "


def run(args: argparse.Namespace, memory: Memory, emit: Callable[[argparse.Namespace, ReviewOut], None]) -> int:
    from ..presentation.schemas import PendingOut, ReviewOut

    if args.approve or args.reject or args.edit:
        emit(args, answer(memory, args.approve, args.reject, args.edit))
        return 0
    waiting = [PendingOut.of(p) for p in memory.pending(scope=args.scope)]
    if args.json or not (sys.stdin.isatty() and sys.stdout.isatty()) or not waiting:
        emit(args, ReviewOut(pending=waiting))
        return 0
    return _interactive(memory, waiting)


def answer(memory: Memory, approve: str | None, reject: str | None, edit: list[str] | None) -> ReviewOut:
    from ..presentation.schemas import RememberOut, ReviewOut

    given = [x for x in (approve, reject, edit) if x]
    if len(given) > 1:
        raise MemxError("give one of --approve, --reject or --edit")
    if reject:
        gone = memory.reject(reject)
        return ReviewOut(action="reject", id=gone.id)
    bullet_id, text = (edit[0], edit[1]) if edit else (approve or "", None)
    done = memory.approve(bullet_id, content=text)
    return ReviewOut(action="edit" if done.edited else "approve", id=bullet_id, result=RememberOut.of(done.result))


def _key(prompt: str) -> str:
    """One key press, without Enter where the terminal allows it. The terminal is put in cbreak mode before
    the prompt is shown, and without flushing its input (TCSANOW): a key typed as soon as the prompt shows is
    never discarded (``tty.setcbreak``'s default, TCSAFLUSH, dropped it and the loop then waited forever)."""
    try:
        import termios
        import tty

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):  # no termios (Windows) or not a real terminal
        sys.stdout.write(prompt)
        sys.stdout.flush()
        key = sys.stdin.readline()[:1]
    else:
        try:
            tty.setcbreak(fd, termios.TCSANOW)
            sys.stdout.write(prompt)
            sys.stdout.flush()
            key = sys.stdin.read(1)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    sys.stdout.write(key + "\n")
    return key.lower()


def _interactive(memory: Memory, waiting: list[PendingOut]) -> int:
    from ..presentation import render

    total = len(waiting)
    for i, p in enumerate(waiting, start=1):
        sys.stdout.write("\n" + render.pending_text(render.printable(p), i, total) + "\n")
        while True:
            key = _key(KEYS)
            try:
                if key == "a":
                    out = answer(memory, p.bullet.id, None, None)
                elif key == "r":
                    out = answer(memory, None, p.bullet.id, None)
                elif key == "e":
                    sys.stdout.write("New text (Enter alone keeps it as it is):\n> ")
                    sys.stdout.flush()
                    text = sys.stdin.readline().strip() or p.bullet.content
                    out = answer(memory, None, None, [p.bullet.id, text])
                elif key == "s":
                    break
                elif key in ("q", "\x04", ""):
                    return 0
                else:
                    continue
            except MemxError as exc:
                sys.stdout.write(f"error: {exc}\n")
                continue
            sys.stdout.write(render.review_text(render.printable(out)) + "\n")
            break
    with contextlib.suppress(MemxError):
        left = memory.waiting()
        sys.stdout.write(f"\n{left} bullet(s) still wait for review.\n" if left else "\nNothing waits for review.\n")
    return 0
