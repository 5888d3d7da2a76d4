"""The memx command: a person's window on the same Memory the MCP server uses."""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings, load_settings
from ..domain.errors import MemxError
from .parser import build_parser

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..memory import Memory


def _emit(args: argparse.Namespace, model: BaseModel, text: Callable[..., str]) -> None:
    from ..presentation.render import printable

    if args.json:  # JSON writes control characters as \u escapes
        sys.stdout.write(model.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(text(printable(model)) + "\n")


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        width = 30
        filled = width * done // max(1, total)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")


def _run(args: argparse.Namespace, memory: Memory) -> int:
    from ..presentation import render
    from ..presentation.schemas import RecallOut, RememberOut, StatsOut

    if args.command == "remember":
        _emit(
            args,
            RememberOut.of(memory.remember(args.text, scope=args.scope, tags=args.tag)),
            render.remember_text,
        )
    elif args.command == "recall":
        result = memory.recall(
            args.query, scope=args.scope, max_results=args.max_results, token_budget=args.token_budget
        )
        _emit(args, RecallOut.of(result), render.recall_text)
    elif args.command == "forget":
        return _forget(args, memory)
    elif args.command == "conflicts":
        _conflicts(args, memory)
    elif args.command == "review":
        from . import review

        return review.run(args, memory, lambda a, out: _emit(a, out, render.review_text))
    elif args.command in ("gc", "restore", "list", "export", "import"):
        return _maintain(args, memory)
    elif args.command in ("share", "unshare", "team"):
        _team(args, memory)
    elif args.command == "adopt":
        moved = memory.adopt(args.old)
        adopted = {"from": moved.old, "to": moved.new, "moved": moved.moved}
        text = f"Moved {moved.moved} bullet(s) of {moved.old} to {moved.new}."
        sys.stdout.write((json.dumps(adopted, indent=2) if args.json else text) + "\n")
    elif args.command == "reflect":
        from ..presentation.schemas import ReflectOut

        outs = []
        for named in args.files:
            path = memory.transcript_file(named, Path.cwd())
            reflected = memory.reflect(
                memory.read_transcript(path),
                path=path,
                mode=args.mode,
                dry_run=args.dry_run,
                scope=args.scope,
                progress=_progress,
            )
            outs.append(ReflectOut.of(reflected))
        if args.json:
            sys.stdout.write(json.dumps([o.model_dump(mode="json") for o in outs], indent=2, ensure_ascii=False) + "\n")
        else:
            for path, out in zip(args.files, outs, strict=True):
                sys.stdout.write(f"{render.visible(str(path))}\n{render.reflect_text(render.printable(out))}\n")
    elif args.command == "stats":
        full = memory.store_stats()
        _emit(args, StatsOut.of(full), render.stats_text)
    elif args.command == "ui":
        _ui(args, memory)
    elif args.command in ("show", "edit"):
        from ..presentation.schemas import BulletOut

        if args.command == "show":
            bullet = memory.show(args.id)
        else:
            tags = [] if args.clear_tags else args.tags
            bullet = memory.edit(args.id, content=args.content, tags=tags)
        _emit(args, BulletOut.of(bullet, memory.weight(bullet)), render.show_text)
    elif args.command == "reindex":
        count = memory.reindex(progress=_progress)
        sys.stdout.write(
            f'{{"reindexed": {count}}}\n'
            if args.json
            else f"Re-embedded {count} bullet(s) with {memory.settings.model_name}.\n"
        )
    return 0


def _ui(args: argparse.Namespace, memory: Memory) -> None:
    import webbrowser

    from ..web.server import UiServer

    try:
        server = UiServer(memory, port=args.port)
    except OSError as exc:  # the page's port is the user's choice: say which one, and what to do
        if exc.errno == errno.EADDRINUSE:
            raise MemxError(f"port {args.port} is in use; choose another with --port") from exc
        raise MemxError(f"cannot listen on port {args.port} ({exc.strerror}); choose another with --port") from exc
    if args.json:
        sys.stdout.write(json.dumps({"url": server.url}) + "\n")
    else:
        sys.stdout.write(f"memx ui: {server.url}\n(only this machine can reach it; Ctrl-C stops it)\n")
    sys.stdout.flush()
    if not args.no_open:
        webbrowser.open(server.one_time_url())  # the browser's command line is world-readable: no token on it
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _missing(ids: Sequence[str], done: str) -> int:
    """1 and a line on stderr when some ids named no bullet (the others were acted on: say so); else 0."""
    if not ids:
        return 0
    sys.stderr.write(f"memx: error: no bullet with id {', '.join(ids)}" + (f" ({done})" if done else "") + "\n")
    return 1


def _forget(args: argparse.Namespace, memory: Memory) -> int:
    """0; 1 when an id named no bullet (the ones found are still archived). Without ``--yes`` a ``--query``
    forget only lists what it would archive, each bullet as ``memx list`` shows it."""
    from ..presentation import render
    from ..presentation.schemas import BulletOut, ForgetOut, ListOut

    if args.ids:
        done = memory.forget(args.ids, purge=args.purge)
    elif args.query:
        done = memory.forget_matching(args.query, scope=args.scope, confirm=args.yes, purge=args.purge)
    else:
        raise MemxError("give bullet ids, or --query")
    if done.would_forget and not args.json:
        by_id = {b.id: b for b in memory.show_many(done.would_forget)}
        listed = ListOut(bullets=[BulletOut.of(by_id[i], memory.weight(by_id[i])) for i in done.would_forget])
        verb = "erase" if args.purge else "archive"
        sys.stdout.write(
            f"Would {verb} {len(listed.bullets)}:\n{render.list_text(render.printable(listed))}\n"
            f"Nothing changed: rerun with --yes to {verb} them.\n"
        )
    else:
        _emit(args, ForgetOut.of(done), render.forget_text)
    gone = len(done.archived) + len(done.purged)
    return _missing(done.not_found, f"{gone} other(s) {'erased' if done.purged else 'archived'}")


def _conflicts(args: argparse.Namespace, memory: Memory) -> None:
    from ..presentation import render
    from ..presentation.schemas import BulletOut, ConflictsOut, ResolveOut

    if args.action == "resolve":
        if not args.conflict_id or not args.keep:
            raise MemxError("usage: memx conflicts resolve CONFLICT_ID --keep a|b|both|merge")
        conflict, merged = memory.resolve_conflict(args.conflict_id, args.keep)
        out = ResolveOut(conflict_id=conflict.id, kept=args.keep, merged=BulletOut.of(merged) if merged else None)
        _emit(args, out, lambda o: f"Resolved {o.conflict_id}: kept {o.kept}.")
        return
    if args.scan:
        found = memory.scan_conflicts(args.scope, progress=_progress)
        if not args.json:
            sys.stdout.write(render.scan_text([c.kind for c in found]) + "\n")
    listed = ConflictsOut.listing(memory.list_conflicts(args.scope, include_overlaps=True), args.all)
    _emit(args, listed, render.conflicts_text)


def _team(args: argparse.Namespace, memory: Memory) -> None:
    if args.command == "team":
        done = memory.team_curate()
        out = {"merged": done.merged, "conflicts_added": done.conflicts_added}
        out["conflicts_deduplicated"] = done.conflicts_deduplicated
        gone = sum(len(v) for v in done.merged.values())
        added = len(done.conflicts_added)
        text = f"Merged {gone} duplicate(s) into {len(done.merged)} bullet(s); {added} new conflict(s)."
    else:
        moved = memory.share(args.ids) if args.command == "share" else memory.unshare(args.ids)
        out = {"moved": moved.moved, "already": moved.already, "not_found": moved.not_found}
        where = "the team store" if args.command == "share" else "this machine's store"
        text = f"Moved {len(moved.moved)} to {where}." + "".join(
            f" {what}: {', '.join(ids)}."
            for what, ids in (("Already there", moved.already), ("Not found", moved.not_found))
            if ids
        )
    sys.stdout.write((json.dumps(out, indent=2) if args.json else text) + "\n")


def _maintain(args: argparse.Namespace, memory: Memory) -> int:
    """0, or 1 when an import refused a record or an id to restore named no bullet."""
    from ..presentation import render
    from ..presentation.schemas import BulletOut, GcOut, ImportOut, ListOut

    if args.command == "gc":
        r = memory.gc(dry_run=args.dry_run, purge=args.purge)
        gc_out = GcOut(dry_run=r.dry_run, archived=r.archived, purged=r.purged, active_left=r.active_left)
        archive, erase = ("Would archive", "would erase") if r.dry_run else ("Archived", "erased")
        left = "would remain" if r.dry_run else "left"
        _emit(
            args,
            gc_out,
            lambda o: f"{archive} {len(o.archived)}, {erase} {len(o.purged)}; {o.active_left} active {left}.",
        )
    elif args.command == "restore":
        restored, missing = memory.restore(args.ids)
        restored_out = ListOut(bullets=[BulletOut.of(b) for b in memory.show_many(restored)])
        _emit(
            args,
            restored_out,
            lambda o: f"Restored {len(restored)}." + (f" Not found: {', '.join(missing)}" if missing else ""),
        )
        return _missing(missing, f"{len(restored)} other(s) restored")
    elif args.command == "list":
        bullets = memory.list_bullets(
            scope=args.scope,
            section=args.section,
            knowledge_type=args.knowledge_type,
            archived=args.archived,
            limit=args.limit,
        )
        listed = ListOut(bullets=[BulletOut.of(b, memory.weight(b)) for b in bullets])
        _emit(args, listed, render.list_text)
    elif args.command == "export":
        target = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
        total = memory.count()
        try:
            for n, record in enumerate(memory.export(vectors=args.vectors), 1):
                target.write(json.dumps(record, ensure_ascii=False) + "\n")
                if args.output:  # stdout carries the data: the bar goes to stderr, on a terminal only
                    _progress(n, total)
        finally:
            if args.output:
                target.close()
    elif args.command == "import":
        lines = memory.read_transcript(memory.transcript_file(args.file, Path.cwd())).splitlines()
        result = memory.import_records(
            lines,
            scope=args.scope,
            progress=_progress if sys.stderr.isatty() else None,
        )
        import_out = ImportOut(**result.__dict__)
        _emit(
            args,
            import_out,
            lambda o: (
                f"Imported: {o.restored} restored, {o.inserted} inserted, {o.merged} merged, "
                f"{o.skipped_existing} already present, {len(o.errors)} bad line(s)."
                + (
                    f"\n  {o.reembedded} record(s) carried vectors of another model (or of one the file does not "
                    "name): embedded again with this store's model"
                    if o.reembedded
                    else ""
                )
                + "".join(f"\n  {e}" for e in o.errors[:20])
                + (f"\n  … and {len(o.errors) - 20} more (--json lists them all)" if len(o.errors) > 20 else "")
            ),
        )
        return 1 if result.errors else 0
    return 0


def _sanitize(args: argparse.Namespace, settings: Settings) -> int:
    from ..compose import sanitizer

    # the whole input first: a secret found on one line is masked on every line, in every form it takes
    text = sys.stdin.read()
    masked, counts = sanitizer(settings).learning(text).sanitize(text)
    if args.json:
        sys.stdout.write(json.dumps({"text": masked, "masked": counts}, ensure_ascii=False) + "\n")
        return 0
    sys.stdout.write(masked)
    return 0


def _install(args: argparse.Namespace, settings: Settings) -> int:
    from ..config import default_home
    from .clients import Places, configure, entry_for, launcher, title

    install = args.command == "install"
    places = Places(Path.home(), Path.cwd())
    home = settings.home if settings.home.resolve() != default_home().resolve() else None
    results = configure(
        args.client,
        args.install_scope,
        places,
        install=install,
        dry_run=args.dry_run,
        reflect=not getattr(args, "no_reflect", False),
        session_start=not getattr(args, "no_session_start", False),
        prompt=not getattr(args, "no_prompt", False),
        tool_hooks=not getattr(args, "no_tool_hooks", False),
        home=home,
    )
    if args.json:
        launch = launcher(places)
        out = [
            {
                "path": str(r.path),
                "changed": r.changed,
                "removed": r.removed,
                "dry_run": args.dry_run,
                "diff": r.diff,
                "backup": str(r.backup) if r.backup else None,
            }
            for r in results
        ]
        entry = entry_for(launch, places, home)
        found = {"client": args.client, "launcher": launch.kind, "server": entry.mcp(), "files": out}
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return 0
    for r in results:
        if not r.changed:
            sys.stdout.write(f"{r.path}: already up to date, nothing changed.\n")
            continue
        sys.stdout.write(r.diff)
        verb = "Would change" if args.dry_run else ("Removed" if r.removed else "Changed")
        sys.stdout.write(f"{verb} {r.path}" + (f" (backup: {r.backup})" if r.backup else "") + ".\n")
    if install and not args.dry_run and any(r.changed for r in results):
        sys.stdout.write(f"Restart {title(args.client)} to load memx. `memx doctor` checks the installation.\n")
        from ..clients import client

        if client(args.client).notes:
            sys.stdout.write(f"Note: {client(args.client).notes}.\n")
    if install and not args.dry_run:
        sys.stdout.write(_model_offer(settings))
    return 0


def _model_offer(settings: Settings) -> str:
    """The doctor's languages line when it offers multilingual-e5-small, else "". Only where a store
    exists already: a first install opens none (and imports no store library)."""
    if not (settings.home / "store").exists():
        return ""
    from ..compose import open_memory
    from ..presentation import render
    from .doctor import languages

    try:
        check = languages(open_memory(settings, cwd=Path.cwd(), preload=False))
    except Exception as exc:  # the clients are configured; `memx doctor` says what is wrong with the store
        logging.getLogger(__name__).debug("no model offer: %s", exc)
        return ""
    return render.check_line(check.status, check.name, check.detail, check.fix) + "\n" if check.status != "OK" else ""


def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    from ..presentation import render
    from .clients import Places
    from .doctor import run_checks

    checks = run_checks(settings, Path.cwd(), Places(Path.home(), Path.cwd()))
    failed = any(c.status == "FAIL" for c in checks)
    if args.json:
        rows = [c.__dict__ for c in checks]
        sys.stdout.write(json.dumps({"ok": not failed, "checks": rows}, indent=2, ensure_ascii=False) + "\n")
    else:
        for c in checks:
            sys.stdout.write(render.check_line(c.status, c.name, c.detail, c.fix) + "\n")
    return 1 if failed else 0


def _repair(args: argparse.Namespace, settings: Settings) -> int:
    from ..compose import repair_store

    done = repair_store(settings)
    b, c = done.bullets, done.conflicts
    out = {
        "backup": str(done.backup),
        "problems": done.problems,
        "bullets_recovered": b.recovered,
        "bullets_lost": b.lost,
        "bullets_unreadable": b.unreadable,
        "conflicts_recovered": c.recovered,
        "conflicts_lost": c.lost,
        "notes": done.notes,
    }
    from ..presentation.render import repair_text

    sys.stdout.write(json.dumps(out, indent=2) + "\n" if args.json else repair_text(out) + "\n")
    return 0


def _dry_run(args: argparse.Namespace, settings: Settings) -> int:
    """A dry run on a data folder without a store: against an empty throwaway store, so that looking
    creates nothing in the data folder."""
    import dataclasses
    import tempfile

    from ..compose import open_memory

    with tempfile.TemporaryDirectory(prefix="memx-dry-run-") as scratch:
        memory = open_memory(dataclasses.replace(settings, home=Path(scratch)), cwd=Path.cwd(), preload=False)
        return _run(args, memory)


def _quiet_stdout() -> None:
    """Point stdout at the null device, so that Python's flush at exit meets no closed pipe either."""
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), sys.stdout.fileno())


# Commands the warm helper answers when it runs for the same data folder and settings: they read nothing
# from stdin or from files named relative to the working directory, and finish in moments.
WARM_COMMANDS = frozenset(
    {"remember", "recall", "forget", "show", "edit", "list", "stats", "conflicts", "gc", "restore"}
)


def answer_command(memory: Memory, argv: Sequence[str], *, color: bool) -> tuple[int, str, str] | None:
    """Run one command line on an open Memory (the warm helper's side): exit code, stdout, stderr; None
    for a command the helper does not answer. The caller serialises calls (stdout is redirected)."""
    import contextlib
    import io

    from ..presentation import render

    try:
        args = build_parser().parse_args(list(argv))
    except SystemExit:
        return None
    if args.command not in WARM_COMMANDS or getattr(args, "scan", False):
        return None
    out, err = io.StringIO(), io.StringIO()
    render.use_color(color and not args.json)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = _guarded(args, lambda: memory.settings, lambda: _run(args, memory))
    finally:
        render.use_color(False)
    return code, out.getvalue(), err.getvalue()


def _from_helper(args: argparse.Namespace, settings: Settings, argv: Sequence[str]) -> int | None:
    """The exit code of the command as the warm helper ran it, when one runs for this data folder with
    these settings; None: run it here. ``MEMX_NO_HELPER=1`` always runs it here."""
    if args.command not in WARM_COMMANDS or getattr(args, "scan", False) or os.environ.get("MEMX_NO_HELPER"):
        return None
    from ..hooks import helper

    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    try:
        answer = helper.command(settings, list(argv), Path.cwd(), color)
    except helper.AnswerLost as exc:
        raise MemxError(
            f"the warm helper took the command but its answer was lost ({exc}); it may have run: "
            "`memx list` shows the store, MEMX_NO_HELPER=1 runs a command without the helper"
        ) from exc
    if answer is None:
        return None
    sys.stdout.write(answer.stdout)
    sys.stderr.write(answer.stderr)
    return answer.code


def _guarded(args: argparse.Namespace, settings: Callable[[], Settings | None], body: Callable[[], int]) -> int:
    """``body``'s exit code; a failure becomes one clear line on stderr and exit 1 (0 for a hook, which
    fails open: a bad setting never blocks the client)."""
    failed = 0 if args.command == "hook" else 1
    try:
        code = body()
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except BrokenPipeError:  # `memx export | head`: the reader has all it wanted
        _quiet_stdout()
        return 141
    except MemxError as exc:
        sys.stderr.write(f"memx: error: {exc}\n")
        return failed
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: say so plainly; the traceback goes to the log at DEBUG
        from ..compose import explain_store_error

        where = settings()  # known once loaded: a damaged store is explained with its folder
        known = explain_store_error(exc, where) if where is not None else None
        if known is not None:
            sys.stderr.write(f"memx: error: {known}\n")
            return failed
        logging.getLogger("memx_mcp.cli.app").debug("unexpected error", exc_info=True)
        sys.stderr.write(f"memx: unexpected error ({type(exc).__name__}: {exc}); MEMX_LOG_LEVEL=DEBUG shows more\n")
        return failed


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    line = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(line)
    loaded: list[Settings] = []

    def body() -> int:
        loaded.append(load_settings(home=args.home))
        return _command(args, loaded[0], line)

    return _guarded(args, lambda: loaded[0] if loaded else None, body)


BULK_COMMANDS = ("import", "reindex")  # whole files of texts to embed
BULK_THREADS = 4


def _command(args: argparse.Namespace, settings: Settings, line: Sequence[str]) -> int:
    if args.command == "sanitize":
        return _sanitize(args, settings)
    if args.command == "hook":
        os.umask(0o077)  # what memx writes is its owner's only (compose.private_files, without its imports)
        if args.client == "worker":
            from ..hooks import session_end

            return session_end.work(settings)
        from ..hooks import client_hook

        return client_hook.run(args.client, settings, argument=args.notification, as_json=args.json)
    if args.command in ("install", "uninstall"):
        return _install(args, settings)  # before the imports below: it opens no store (1.2 s less at start)
    answered = _from_helper(args, settings, line)
    if answered is not None:
        return answered
    from ..compose import configure_logging, open_memory, private_files
    from ..presentation import render  # not before the hook: a prompt hook must start fast

    render.use_color(sys.stdout.isatty() and not os.environ.get("NO_COLOR") and not args.json)
    if args.command == "doctor":
        return _doctor(args, settings)
    if args.command == "repair":
        return _repair(args, settings)
    configure_logging(settings)
    private_files()
    needs_model = args.command in ("remember", "recall", "reindex") or bool(getattr(args, "query", None))
    needs_model = needs_model or (args.command == "reflect" and not args.dry_run)
    needs_model = needs_model or args.command in ("import",) or getattr(args, "keep", None) == "merge"
    if getattr(args, "dry_run", False) and not (settings.home / "store").exists():
        return _dry_run(args, settings)
    if args.command in BULK_COMMANDS and "MEMX_EMBED_THREADS" not in os.environ:
        # a one-shot batch on the user's own laptop: the model may use the cores the server leaves to others
        settings = settings.replace(embed_threads=min(BULK_THREADS, os.cpu_count() or 1))
    memory = open_memory(settings, cwd=Path.cwd(), allow_model_change=args.command == "reindex", preload=needs_model)
    return _run(args, memory)


if __name__ == "__main__":
    sys.exit(main())
