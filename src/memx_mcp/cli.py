"""The memx command: a person's window on the same Memory the MCP server uses."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from . import __version__, render
from .config import load_settings
from .errors import MemxError

if TYPE_CHECKING:
    from .memory import Memory

EXAMPLES = """examples:
  memx remember "Use pytest -n auto (pytest-xdist) to run the suite in parallel"
  memx recall "make the tests run faster" --json
  memx conflicts --all
  memx forget b_0123456789abcdef
  memx reflect ~/.claude/projects/*/SESSION.jsonl --dry-run
  memx install claude-code --dry-run
  echo "token=ghp_..." | memx sanitize
  memx --home /tmp/memx-demo stats
"""


def _common(json_flag: bool = True, scope: bool = True) -> argparse.ArgumentParser:
    """Options every subcommand accepts after its name. SUPPRESS keeps a value given before it."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--home", default=argparse.SUPPRESS, help="data folder (default: MEMX_HOME)")
    if json_flag:
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
    if scope:
        p.add_argument(
            "--scope", default=argparse.SUPPRESS, help="global, project:NAME[/workspace:NAME], workspace:NAME"
        )
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memx",
        description="memx: long-term memory for AI coding assistants.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memx {__version__}")
    parser.add_argument("--home", help="data folder (default: MEMX_HOME or the per-user data folder)")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.add_argument("--scope", help="scope to act in (default: detected from the working directory)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = _common()

    p = sub.add_parser("remember", parents=[common], help="store one bullet")
    p.add_argument("text", help="the knowledge, one concise bullet")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")

    p = sub.add_parser("recall", parents=[common], help="find relevant bullets")
    p.add_argument("query")
    p.add_argument("-n", "--max-results", type=int, help="default 5")
    p.add_argument("--token-budget", type=int, help="default 2000")

    p = sub.add_parser("forget", parents=[common], help="archive (or erase) bullets")
    p.add_argument("ids", nargs="*", help="bullet ids")
    p.add_argument("--query", help="forget what recall returns for this query")
    p.add_argument("--yes", action="store_true", help="apply a --query forget (otherwise only list)")
    p.add_argument("--purge", action="store_true", help="erase instead of archive")

    p = sub.add_parser("conflicts", parents=[common], help="list, scan for, or resolve contradicting bullets")
    p.add_argument("action", nargs="?", choices=["resolve"], help="resolve CONFLICT_ID --keep a|b|both|merge")
    p.add_argument("conflict_id", nargs="?")
    p.add_argument("--keep", choices=["a", "b", "both", "merge"])
    p.add_argument("--all", action="store_true", help="also overlaps without contradiction evidence")
    p.add_argument("--scan", action="store_true", help="re-examine the whole visible store first")

    p = sub.add_parser("gc", parents=[_common(scope=False)], help="archive bullets that decayed below 0.02")
    p.add_argument("--dry-run", action="store_true", help="only say what would move")
    p.add_argument("--purge", action="store_true", help="also erase archived bullets")

    p = sub.add_parser("restore", parents=[_common(scope=False)], help="bring archived bullets back")
    p.add_argument("ids", nargs="+")

    p = sub.add_parser("list", parents=[common], help="list bullets (newest first)")
    p.add_argument("--archived", action="store_true", help="archived bullets instead of active ones")
    p.add_argument("-n", "--limit", type=int, default=50)

    p = sub.add_parser("export", parents=[_common(json_flag=False, scope=False)], help="write every bullet as JSONL")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    p.add_argument("--vectors", action="store_true", help="include the embedding vectors")

    p = sub.add_parser("import", parents=[common], help="read bullets from JSONL (any SPEC field)")
    p.add_argument("file", type=Path)

    p = sub.add_parser("reflect", parents=[common], help="distill bullets from session transcripts")
    p.add_argument("files", nargs="+", type=Path, help="Claude Code JSONL, a JSON message list, or a text transcript")
    p.add_argument("--mode", choices=["rules", "hybrid", "llm"], help="default: MEMX_REFLECTOR_MODE (hybrid)")
    p.add_argument("--dry-run", action="store_true", help="show what would be kept; store nothing")

    sub.add_parser("sanitize", help="mask secrets and personal data: stdin to stdout")

    p = sub.add_parser("hook", parents=[_common(json_flag=False, scope=False)], help="run as a client hook")
    p.add_argument("client", choices=["claude-code"])

    for name, text in (("install", "add memx's hooks to a client"), ("uninstall", "remove memx's hooks")):
        p = sub.add_parser(name, parents=[_common(scope=False)], help=text)
        p.add_argument("client", choices=["claude-code"])
        p.add_argument("--scope", dest="install_scope", choices=["user", "project"], default="user")
        p.add_argument("--dry-run", action="store_true", help="print the change; write nothing")
        p.add_argument("--settings", type=Path, help="the settings file (default: the client's own)")

    sub.add_parser("stats", parents=[_common(scope=False)], help="what the store holds")
    sub.add_parser("reindex", parents=[_common(scope=False)], help="re-embed every bullet with the configured model")
    return parser


def _emit(args: argparse.Namespace, model: BaseModel, text: Callable[..., str]) -> None:
    if args.json:
        sys.stdout.write(model.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(text(model) + "\n")


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        width = 30
        filled = width * done // max(1, total)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")


def _run(args: argparse.Namespace, memory: Memory) -> int:
    from .schemas import ForgetOut, RecallOut, RememberOut, StatsOut

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
        if args.ids:
            done = memory.forget(args.ids, purge=args.purge)
        elif args.query:
            done = memory.forget_matching(args.query, scope=args.scope, confirm=args.yes)
        else:
            raise MemxError("give bullet ids, or --query")
        _emit(args, ForgetOut.of(done), render.forget_text)
    elif args.command == "conflicts":
        _conflicts(args, memory)
    elif args.command in ("gc", "restore", "list", "export", "import"):
        _maintain(args, memory)
    elif args.command == "reflect":
        from .reflect import read_transcript, reflect
        from .schemas import ReflectOut

        outs = []
        for path in args.files:
            reflected = reflect(
                memory,
                read_transcript(path),
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
                sys.stdout.write(f"{path}\n{render.reflect_text(out)}\n")
    elif args.command == "stats":
        _emit(args, StatsOut.of(memory.stats()), render.stats_text)
    elif args.command == "reindex":
        count = memory.reindex(progress=_progress)
        sys.stdout.write(
            f'{{"reindexed": {count}}}\n'
            if args.json
            else f"Re-embedded {count} bullet(s) with {memory.settings.model_name}.\n"
        )
    return 0


def _conflicts(args: argparse.Namespace, memory: Memory) -> None:
    from . import maintenance
    from .schemas import BulletOut, ConflictOut, ConflictsOut, ResolveOut

    if args.action == "resolve":
        if not args.conflict_id or not args.keep:
            raise MemxError("usage: memx conflicts resolve CONFLICT_ID --keep a|b|both|merge")
        conflict, merged = maintenance.resolve_conflict(memory, args.conflict_id, args.keep)
        out = ResolveOut(conflict_id=conflict.id, kept=args.keep, merged=BulletOut.of(merged) if merged else None)
        _emit(args, out, lambda o: f"Resolved {o.conflict_id}: kept {o.kept}.")
        return
    if args.scan:
        found = maintenance.scan_conflicts(memory, args.scope)
        if not args.json:
            sys.stdout.write(f"Scan recorded {len(found)} new conflict(s).\n")
    views = memory.list_conflicts(args.scope, include_overlaps=args.all)
    _emit(args, ConflictsOut(conflicts=[ConflictOut.of(v) for v in views]), render.conflicts_text)


def _maintain(args: argparse.Namespace, memory: Memory) -> None:
    from . import maintenance
    from .schemas import BulletOut, GcOut, ImportOut, ListOut
    from .store.lance import sql_list

    if args.command == "gc":
        r = maintenance.gc(memory, dry_run=args.dry_run, purge=args.purge)
        gc_out = GcOut(dry_run=r.dry_run, archived=r.archived, purged=r.purged, active_left=r.active_left)
        verb = "Would archive" if r.dry_run else "Archived"
        _emit(args, gc_out, lambda o: f"{verb} {len(o.archived)}, erased {len(o.purged)}; {o.active_left} active left.")
    elif args.command == "restore":
        restored, missing = maintenance.restore(memory, args.ids)
        restored_out = ListOut(bullets=[BulletOut.of(b) for b in memory.store.get(restored)])
        _emit(
            args,
            restored_out,
            lambda o: f"Restored {len(restored)}." + (f" Not found: {', '.join(missing)}" if missing else ""),
        )
    elif args.command == "list":
        status = "archived" if args.archived else "active"
        scopes = memory.resolve_scope(args.scope).visible() if args.scope else None
        where = f"status = '{status}'" + (f" AND scope IN {sql_list(scopes)}" if scopes else "")
        bullets = sorted(memory.store.all_bullets(where), key=lambda b: b.created_at, reverse=True)[
            : max(1, args.limit)
        ]
        _emit(args, ListOut(bullets=[BulletOut.of(b) for b in bullets]), render.list_text)
    elif args.command == "export":
        target = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
        total = memory.store.count()
        try:
            for n, record in enumerate(maintenance.export(memory, vectors=args.vectors), 1):
                target.write(json.dumps(record, ensure_ascii=False) + "\n")
                if args.output:  # stdout carries the data: the bar goes to stderr, on a terminal only
                    _progress(n, total)
        finally:
            if args.output:
                target.close()
    elif args.command == "import":
        from .reflect import read_transcript

        result = maintenance.import_records(
            memory,
            read_transcript(args.file).splitlines(),
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
                + "".join(f"\n  {e}" for e in o.errors[:20])
            ),
        )


def _sanitize() -> int:
    from .reflector.sanitizer import PrivacySanitizer

    sanitizer = PrivacySanitizer()
    for line in sys.stdin:
        sys.stdout.write(sanitizer.mask(line))
    return 0


def _install(args: argparse.Namespace) -> int:
    from .clients import claude_settings_path, configure_claude_code

    path = args.settings or claude_settings_path(args.install_scope)
    result = configure_claude_code(path, install=args.command == "install", dry_run=args.dry_run)
    if args.json:
        sys.stdout.write(
            json.dumps(
                {
                    "path": str(result.path),
                    "changed": result.changed,
                    "dry_run": args.dry_run,
                    "diff": result.diff,
                    "backup": str(result.backup) if result.backup else None,
                }
            )
            + "\n"
        )
    elif not result.changed:
        sys.stdout.write(f"{result.path}: already up to date, nothing changed.\n")
    else:
        sys.stdout.write(result.diff)
        verb = "Would change" if args.dry_run else "Changed"
        backup = f" (backup: {result.backup})" if result.backup else ""
        sys.stdout.write(f"{verb} {result.path}{backup}.\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from .compose import configure_logging, open_memory, private_files

    if args.command == "sanitize":
        return _sanitize()
    try:
        settings = load_settings(home=args.home)
        if args.command == "hook":
            from .hooks import claude_code

            private_files()
            return claude_code.run(settings)
        if args.command in ("install", "uninstall"):
            return _install(args)
        configure_logging(settings)
        private_files()
        needs_model = args.command in ("remember", "recall", "reindex") or bool(getattr(args, "query", None))
        needs_model = needs_model or (args.command == "reflect" and not args.dry_run)
        needs_model = needs_model or args.command in ("import",) or getattr(args, "keep", None) == "merge"
        memory = open_memory(
            settings, cwd=Path.cwd(), allow_model_change=args.command == "reindex", preload=needs_model
        )
        return _run(args, memory)
    except MemxError as exc:
        sys.stderr.write(f"memx: error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: say so plainly; the traceback goes to the log at DEBUG
        logging.getLogger("memx_mcp.cli").debug("unexpected error", exc_info=True)
        sys.stderr.write(f"memx: unexpected error ({type(exc).__name__}: {exc}); MEMX_LOG_LEVEL=DEBUG shows more\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
