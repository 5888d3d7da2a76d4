"""The ``memx`` command line: every subcommand, its options, and examples for ``--help``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from .. import __version__
from ..config import reflector_modes
from ..domain.inputs import MAX_RESULTS_CAP, TOKEN_BUDGET_CAP
from .clients import clients

EXAMPLES = """examples:
  memx remember "Use pytest -n auto (pytest-xdist) to run the suite in parallel"
  memx recall "make the tests run faster" --json
  memx conflicts --all
  memx review
  memx forget b_0123456789abcdef
  memx reflect ~/.claude/projects/*/SESSION.jsonl --dry-run
  memx install claude-code --dry-run
  memx doctor
  memx show b_0123456789abcdef
  echo "token=ghp_..." | memx sanitize
  memx --home /tmp/memx-demo stats
"""


def int_between(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``; anything else is a usage error that says
    the range (never silently moved into it)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range: give {low} to {high}")
        return value

    return parse


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
    unscoped = _common(scope=False)

    def add(name: str, text: str, example: str, parent: argparse.ArgumentParser = common) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            parents=[parent],
            help=text,
            description=text,
            epilog="example:\n  " + example,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    p = add("remember", "store one bullet", 'memx remember "Use uv sync --frozen in CI" --tag ci')
    p.add_argument("text", help="the knowledge, one concise bullet")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")

    p = add("recall", "find relevant bullets, with their score breakdown", 'memx recall "tests are slow" -n 3')
    p.add_argument("query")
    p.add_argument(
        "-n", "--max-results", type=int_between(1, MAX_RESULTS_CAP), help=f"default 5, 1 to {MAX_RESULTS_CAP}"
    )
    p.add_argument(
        "--token-budget", type=int_between(1, TOKEN_BUDGET_CAP), help=f"default 2000, 1 to {TOKEN_BUDGET_CAP}"
    )

    p = add("show", "one bullet in full, with its decay weight", "memx show b_0123456789abcdef", unscoped)
    p.add_argument("id", help="the bullet's whole id, as `memx list` shows it")

    p = add(
        "edit",
        "change a bullet's content or tags",
        'memx edit b_0123456789abcdef --content "Use uv 0.9" --tag uv',
        unscoped,
    )
    p.add_argument("id", help="the bullet's whole id, as `memx list` shows it")
    p.add_argument("--content", help="new content (masked and embedded again)")
    p.add_argument("--tag", action="append", dest="tags", help="the new tags (repeatable; replaces the old ones)")
    p.add_argument("--clear-tags", action="store_true", help="remove every tag")

    p = add("forget", "archive (or erase) bullets", "memx forget --query 'old redis advice' --yes")
    p.add_argument("ids", nargs="*", help="bullet ids")
    p.add_argument("--query", help="forget what recall returns for this query")
    p.add_argument("--yes", action="store_true", help="apply a --query forget (otherwise only list)")
    p.add_argument("--purge", action="store_true", help="erase instead of archive")

    p = add(
        "conflicts",
        "list, scan for, or resolve contradicting bullets",
        "memx conflicts resolve c_0123456789abcdef --keep b",
    )
    p.add_argument("action", nargs="?", choices=["resolve"], help="resolve CONFLICT_ID --keep a|b|both|merge")
    p.add_argument("conflict_id", nargs="?")
    p.add_argument("--keep", choices=["a", "b", "both", "merge"])
    p.add_argument("--all", action="store_true", help="also overlaps without contradiction evidence")
    p.add_argument("--scan", action="store_true", help="re-examine the whole visible store first")

    p = add(
        "review",
        "approve, edit or reject the learned bullets that wait for you",
        'memx review --edit b_0123456789abcdef "Run make test before pushing"',
    )
    p.add_argument("--approve", metavar="ID", help="make a waiting bullet active")
    p.add_argument("--reject", metavar="ID", help="erase a waiting bullet")
    p.add_argument("--edit", nargs=2, metavar=("ID", "TEXT"), help="approve a waiting bullet with new text")

    p = add("gc", "archive bullets that decayed below 0.02", "memx gc --dry-run", unscoped)
    p.add_argument("--dry-run", action="store_true", help="only say what would move")
    p.add_argument("--purge", action="store_true", help="also erase archived bullets")

    for name, text in (("share", "move bullets to the team store"), ("unshare", "move team bullets to this machine")):
        p = add(name, text, f"memx {name} b_0123456789abcdef", unscoped)
        p.add_argument("ids", nargs="+")

    p = add("team", "the team store's Curator pass (safe on any machine)", "memx team curate", unscoped)
    p.add_argument("action", choices=["curate"])

    p = add(
        "adopt",
        "move every bullet of this repository's old bare name (project:NAME) here",
        "memx adopt project:api",
        unscoped,
    )
    p.add_argument("old", help="the old name: project:NAME, NAME being this repository's name")

    p = add("restore", "bring archived bullets back", "memx restore b_0123456789abcdef", unscoped)
    p.add_argument("ids", nargs="+")

    p = add("list", "list bullets, newest first", "memx list --scope project:api --section DEBUGGING --type PITFALL")
    p.add_argument(
        "--section", help="COMMANDS, DEBUGGING, ARCHITECTURE, WORKFLOW, TOOLS, PATTERNS, PREFERENCES or GENERAL"
    )
    p.add_argument("--type", dest="knowledge_type", help="METHOD, TRICK, PITFALL, PREFERENCE, KNOWLEDGE")
    p.add_argument("--archived", action="store_true", help="archived bullets instead of active ones")
    p.add_argument("-n", "--limit", type=int, default=50)

    p = add("export", "write every bullet as JSONL", "memx export -o backup.jsonl", unscoped)
    p.add_argument("-o", "--output", type=Path, help="file to write (default: stdout; JSON lines either way)")
    p.add_argument("--vectors", action="store_true", help="include the embedding vectors")

    p = add("import", "read bullets from JSONL (any SPEC field)", "memx import backup.jsonl")
    p.add_argument("file", type=Path)

    p = add("reflect", "distill bullets from session transcripts", "memx reflect session.jsonl --dry-run --json")
    p.add_argument(
        "files",
        nargs="+",
        type=Path,
        help="Claude Code or Codex CLI JSONL, Aider, SpecStory or session-export markdown, a JSON message list or text",
    )
    p.add_argument(
        "--mode",
        choices=reflector_modes(),
        help="default: MEMX_REFLECTOR_MODE (auto: the model memx finds reads the whole session, else rules)",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would be kept; store nothing")

    add("sanitize", "mask secrets and personal data: stdin to stdout", "memx sanitize < notes.txt", unscoped)

    p = add("hook", "run as a client hook (hook JSON on stdin)", "memx hook claude-code < event.json", unscoped)
    p.add_argument("client", choices=[*clients(), "worker"], help="the client whose hook runs, or the worker")
    p.add_argument("notification", nargs="?", help="Codex CLI: the notification JSON (its notify program's argument)")

    for name, text in (("install", "add memx to a client"), ("uninstall", "remove memx from a client")):
        p = add(name, text, f"memx {name} claude-code --scope project --dry-run", unscoped)
        p.add_argument("client", choices=list(clients()))
        p.add_argument("--scope", dest="install_scope", choices=["user", "project"], default="user")
        p.add_argument("--dry-run", action="store_true", help="print the change; write nothing")
        if name == "install":
            p.add_argument("--no-reflect", action="store_true", help="no reflection at session end (any client)")
            p.add_argument("--no-session-start", action="store_true", help="no context at session start (any client)")
            p.add_argument("--no-prompt", action="store_true", help="no context with each prompt (any client)")
            p.add_argument("--no-tool-hooks", action="store_true", help="no hooks before and after tool calls")

    p = add("ui", "a local web page to look inside the memory", "memx ui --port 8765", unscoped)
    p.add_argument(
        "--port", type=int_between(0, 65535), default=0, help="port on 127.0.0.1, 1 to 65535 (default, 0: a free one)"
    )
    p.add_argument("--no-open", action="store_true", help="do not open a browser; just print the URL")

    add("doctor", "check the installation; exit 1 on a failure", "memx doctor --json", unscoped)
    add("stats", "what the store holds, with a decay histogram", "memx stats --json", unscoped)
    add("reindex", "re-embed every bullet with the configured model", "memx reindex", unscoped)
    add("repair", "rebuild a damaged store from what is on disk (backs it up first)", "memx repair", unscoped)
    return parser
