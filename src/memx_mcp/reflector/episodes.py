"""Episodes: a failure (or a blocked call) → the actions taken → the first observed success.

An episode opens at a failed command. It closes at the first later run that reaches the same goal: the
same command, or the same program formed differently (the interpreter's full path instead of a shim,
another flag spelling, an environment variable in front, another working directory). What gets the
credit is the state-changing action just before that success (an edit, a config write, an install, a
restart), never a diagnostic (``cat``, ``ls``, ``grep``, ``git status``); when nothing changed state in
between, the differently formed command is the fix. Calls blocked by the approval system or refused by
the user are episodes of their own: the way out (or the loop) is the lesson."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

from .commands import (
    INSTALL,
    clean_command,
    error_signature,
    explanation,
    is_question,
    segments,
    strip_ansi,
    words_of,
)
from .transcript import Step

LOOKAHEAD = 30  # steps after a failure in which its resolution is looked for
EDIT_TOOLS = frozenset(
    {
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "create_file",
        "write_file",
        "edit_file",
        "replace_in_file",
        "insert_edit_into_file",
        "search_replace",
    }
)
# Harness refusals: the call never ran, so its "error" says nothing about the project's code.
BLOCKED = re.compile(
    r"requires approval|requested permissions? to|haven't granted it|"
    r"permission to use \w+.{0,200}?(?:has been|was) denied|"
    r"PreToolUse:\w+ hook|hook (?:error|blocked|denied)|blocked by (?:a |the )?\w+ hook|"
    r"doesn't want to proceed with this tool use|tool use was rejected|was blocked by (?:a |the )?(?:hook|policy)|"
    r"not allowed by (?:the )?(?:user|permission|policy)|approval (?:is )?required|rejected by (?:the )?user|"
    r"user (?:denied|declined|rejected)",
    re.I,
)
_USAGE_NOISE = re.compile(
    r"Sibling tool call errored|<tool_use_error>|exceeds maximum allowed tokens|Request interrupted|"
    r"InputValidationError|File has not been read yet|String to replace not found|File has been modified since"
)
# Commands that only look: never the fix.
DIAGNOSTIC = frozenset(
    """ls cat head tail grep egrep rg ag find fd echo printf pwd wc which where whereis type whoami id date sleep
    true false env printenv file stat du df ps top htop pgrep free uptime uname hostname lsof tree less more
    diff cmp jq yq ping ping6 traceroute tracert mtr dig nslookup host ip ifconfig ipconfig netstat ss arp route
    nc telnet curl wget http journalctl dmesg lsblk lsusb lspci nproc getent locale md5sum sha1sum sha256sum
    xxd od hexdump strings readlink realpath basename dirname test watch history man help tldr get-content
    get-childitem get-item get-process get-service get-command select-string test-path test-connection
    get-itemproperty resolve-dnsname""".split()
)
_DIAG_SUB = {
    "git": {
        "status",
        "diff",
        "log",
        "show",
        "branch",
        "rev-parse",
        "ls-files",
        "remote",
        "fetch",
        "blame",
        "describe",
        "grep",
        "reflog",
        "shortlog",
        "ls-remote",
        "config--get",
        "check-ignore",
    },
    "systemctl": {"status", "is-active", "is-enabled", "list-units", "show", "cat"},
    "docker": {"ps", "logs", "images", "inspect", "info", "version", "config", "ls", "top", "port", "events"},
    "kubectl": {"get", "describe", "logs", "explain", "version"},
    "npm": {"ls", "list", "view", "info", "outdated", "config", "why", "doctor", "search"},
    "pip": {"show", "list", "freeze", "check", "index", "search"},
    "pip3": {"show", "list", "freeze", "check"},
    "brew": {"list", "info", "search", "doctor"},
    "apt": {"list", "search", "show", "policy"},
    "cargo": {"tree", "metadata", "search"},
    "gh": {"pr", "issue", "run", "api", "repo", "auth"},
}
_STATE = frozenset(
    """rm mv cp ln mkdir rmdir chmod chown chgrp touch tee install unzip tar patch kill pkill killall source
    export set setx unset ln sysctl modprobe mount umount useradd usermod passwd crontab update-alternatives
    opkg nvram defaults launchctl service systemctl rc-service sc reg new-item set-content remove-item
    copy-item move-item set-itemproperty set-executionpolicy""".split()
)
_STATE_SUB = {
    "git": {
        "config",
        "checkout",
        "switch",
        "reset",
        "stash",
        "restore",
        "clean",
        "init",
        "submodule",
        "remote-add",
        "lfs",
        "rebase",
        "merge",
        "pull",
        "rm",
        "mv",
        "update-index",
        "set-url",
        "rename",
    },
    "systemctl": {"restart", "start", "stop", "enable", "disable", "reload", "daemon-reload", "mask", "unmask"},
    "docker": {
        "restart",
        "start",
        "stop",
        "rm",
        "build",
        "pull",
        "run",
        "up",
        "down",
        "create",
        "commit",
        "connect",
        "disconnect",
        "prune",
        "tag",
        "push",
        "cp",
        "kill",
    },
    "npm": {"ci", "install", "i", "uninstall", "rebuild", "link", "cache", "dedupe", "prune", "update"},
    "mix": {"deps.get", "deps.update", "deps.clean", "deps.compile", "ecto.migrate", "ecto.reset", "ecto.create"},
    "bundle": {"install", "update"},
    "uci": {"set", "commit", "add", "delete", "add_list", "del_list", "revert", "import"},
    "pod": {"install", "update"},
}
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "builtin", "npx", "bunx", "pnpx", "uvx"})
_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("bundle", "exec"),
    ("pnpm", "exec"),
    ("yarn", "exec"),
    ("conda", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("rye", "run"),
}
_INTERPRETER = re.compile(r"^(?:python|py|pypy)(?:\d+(?:\.\d+)*)?$")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# The session said the failed result out loud even though the command's exit code (a pipe's last stage)
# was 0: ``pytest | tail`` that printed "3 failed" is not an observed success.
_LOOKS_FAILED = re.compile(
    r"(?m)^(?:FAILED\b|FAIL\b|ERROR\b|Error:|error(?:\[\w+\])?:|fatal:|npm ERR!|Traceback \(most recent)|"
    r"\b\d+ (?:failed|errors?)\b(?!.*\b0 failed)|command not found|No such file or directory|"
    r"failed to solve|Build failed|BUILD FAILED|Failed to compile|\berror TS\d{4}\b|"
    r"HTTP/[\d.]+ [45]\d\d\b|\b(?:502 Bad Gateway|503 Service Unavailable|504 Gateway Time-?out)\b"
)
_HTTP_CODES = re.compile(r"^(?:\s*[45]\d\d\b\s*)+$")
# An interactive prompt waiting for an answer that will never come in an agent's shell.
_PROMPT = re.compile(r"\?.{0,120}›|\((?:y/N|Y/n|yes/no)\)|\[(?:y/N|Y/n)\]|Press (?:any key|Enter|RETURN)", re.I)
_NO_FAILURE = re.compile(r"\b0 (?:failed|errors?)\b|\bno errors?\b", re.I)


def _base(word: str) -> str:
    """``/usr/bin/python3.11`` → ``python3.11``, ``C:\\Python311\\python.exe`` → ``python``."""
    name = PureWindowsPath(word).name if "\\" in word else PurePosixPath(word).name
    name = re.sub(r"\.(?:exe|cmd|bat|ps1)$", "", name, flags=re.I)
    return name.lower()


_FEEDERS = frozenset({"printf", "echo", "yes", "cat", "type"})
_SHELLS = frozenset({"powershell", "pwsh", "cmd", "bash", "sh", "zsh", "wsl"})
_SHELL_RUN = frozenset({"-command", "-c", "/c", "/k", "-lc", "-ic", "--", "-e"})
_SSH_VALUED = frozenset({"-p", "-i", "-o", "-l", "-F", "-J", "-b", "-c", "-E", "-L", "-R", "-D", "-W", "-S"})


def _after_host(args: list[str]) -> list[str]:
    skip = False
    for n, a in enumerate(args):
        if skip:
            skip = False
        elif a in _SSH_VALUED:
            skip = True
        elif not a.startswith("-"):
            return args[n + 1 :]
    return []


def core_words(command: str) -> list[str]:
    """The first segment's words with env assignments, wrappers, runners and interpreter paths taken off:
    ``SKIP=lint .venv/bin/python -m pytest -x`` → ``['pytest', '-x']``."""
    first = segments(command)[0] if command.strip() else ""
    stages = [p for p in re.split(r"\s+\|\s+", first) if p.strip()]
    # `printf 'n\n' | npx create-next-app`: the feeder is not the goal, the stage it feeds is
    while len(stages) > 1 and _base(stages[0].split()[0]) in _FEEDERS:
        stages = stages[1:]
    words = words_of(stages[0]) if stages else []
    for _ in range(8):
        if not words:
            break
        w0 = _base(words[0])
        if _ENV_ASSIGN.match(words[0]) or w0 in _WRAPPERS:
            words = words[1:]
        elif w0 in _SHELLS and len(words) > 2 and words[1].lower() in _SHELL_RUN:
            words = words_of(" ".join(words[2:]))  # `powershell -Command "Get-Service x"`: the inner command
        elif w0 == "ssh" and len(words) > 2:
            inner = _after_host(words[1:])  # a router session is all ssh: the remote command is the goal
            if not inner:
                break
            words = words_of(" ".join(inner))
        elif (len(words) > 1 and (w0, words[1]) in _RUNNERS) or (
            _INTERPRETER.match(w0) and len(words) > 2 and words[1] == "-m"
        ):
            words = words[2:]
        else:
            break
    if words:
        first = _base(words[0])
        words = ["python" if _INTERPRETER.match(first) else first, *words[1:]]
    return words


_VALUED_FLAGS = frozenset({"-p", "-f", "-n", "-c", "-C", "--project-name", "--file", "--namespace", "--context"})
_TWO_LEVEL = {
    "docker": {"compose", "container", "image", "network", "volume", "system", "buildx"},
    "docker-compose": set(),
    "gh": {"pr", "issue", "run", "repo", "release", "workflow"},
    "kubectl": {"rollout", "config"},
    "git": {"remote", "stash", "submodule", "worktree"},
}


def goal_key(command: str) -> str:
    """What a command is for, however it is formed: its program and first sub-command (two levels for
    ``docker compose up``, ``gh pr create``, ``git remote set-url``)."""
    words = core_words(command)
    if not words:
        return ""
    if words[0] in ("curl", "wget", "http", "xh"):
        url = next((w for w in words[1:] if re.match(r"https?://", w)), "")
        return f"{words[0]} {url.split('?')[0].rstrip('/')}".strip()  # each address is its own goal
    if words[0] in _TWO_LEVEL:
        rest, skip = [], False
        for w in words[1:]:
            if skip:
                skip = False
            elif w in _VALUED_FLAGS:
                skip = True
            elif not w.startswith("-"):
                rest.append(w)
        if rest and (rest[0] in _TWO_LEVEL[words[0]] or words[0] == "docker-compose"):
            return " ".join([words[0], *rest[:2]]) if words[0] != "docker-compose" else f"docker compose {rest[0]}"
    if words[0] in _INTERPRETERS:  # `node assets/build.js` and `node build.js` run the same script
        script = next((w for w in words[1:] if not w.startswith("-")), "")
        return f"{words[0]} {PurePosixPath(script.replace(chr(92), '/')).name}".strip()
    if words[0] not in _SUBCOMMAND_CLIS:
        leading = []
        for w in words[1:3]:
            if not re.fullmatch(r"[a-z][a-z-]{1,14}", w):
                break
            leading.append(w)
        if len(leading) == 2 and leading[0] not in _COMMON_VERBS:  # `minsky session start`: sub-commands
            return " ".join([words[0], *leading])
        sub = leading[0] if leading and leading[0] in _COMMON_VERBS else ""
        return f"{words[0]} {sub}".strip()
    sub = next((w for w in words[1:3] if re.fullmatch(r"[a-z][\w:.-]*", w) and "/" not in w and "." not in w), "")
    return f"{words[0]} {sub}".strip()


_INTERPRETERS = frozenset({"python", "node", "ruby", "perl", "php", "deno", "bash", "sh", "zsh", "lua", "Rscript"})
# Sub-commands that name a goal even for a CLI this module does not know (`bd ready`, `tool build`).
_COMMON_VERBS = frozenset(
    """build test run start stop restart deploy install init create update upgrade sync push pull lint check format
    fmt serve dev release publish migrate generate clean show list close ready login logout status""".split()
)


_LOOK_VERBS = frozenset(
    {"list", "ls", "show", "status", "info", "get", "view", "describe", "inspect", "logs", "search"}
)
_FORMAT_SUBS = frozenset({"format", "fmt", "autofix", "fix"})
_FORMAT_PROGS = frozenset({"black", "isort", "gofmt", "rustfmt", "autopep8", "yapf", "clang-format", "shfmt"})
_FIX_FLAGS = frozenset({"--fix", "--write", "-w", "--in-place", "--apply"})
# Running the suite, a linter or a type checker checks, it does not fix (formatters do: above).
_CHECKS = re.compile(
    r"^(?:pytest|jest|vitest|mocha|tox|nox|mypy|pyright|tsc|eslint|ruff|flake8|pylint|credo|dialyzer|rspec|"
    r"shellcheck|golangci-lint|swiftlint|clippy)$|^(?:test|tests|check|lint|credo|dialyzer|compile|vet|typecheck|"
    r"type-check|validate|verify|doctor|audit)$"
)


def _segment_kind(segment: str) -> str:
    """``diagnostic``, ``state`` (changes something) or ``other`` for one command of a chain."""
    words = core_words(segment)
    if not words:
        return "diagnostic"
    prog = words[0]
    if prog == "ssh":
        return "diagnostic"  # `ssh -T git@github.com` checks a login; a remote command was unwrapped above
    sub = next((w for w in words[1:] if not w.startswith("-")), "")
    if prog in _TWO_LEVEL:
        sub = goal_key(segment).split()[-1]  # `docker compose -p x ps`: the verb is `ps`
    if prog in ("npm", "pnpm", "yarn", "bun") and sub == "run":
        sub = next((w for w in words[2:] if not w.startswith("-")), "")
    if {"restart", "reload", "force-reload"} & set(words[1:3]):
        return "state"  # `/etc/init.d/network restart`, `service nginx reload`
    if sub in _FORMAT_SUBS or prog in _FORMAT_PROGS or _FIX_FLAGS & set(words[1:]):
        return "state"  # formatters and --fix runs change the files
    if _CHECKS.match(prog) or _CHECKS.match(sub) or (len(words) > 2 and words[2] in _LOOK_VERBS) or sub in _LOOK_VERBS:
        return "diagnostic"
    if re.search(r"(?<![<>&0-9])>{1,2}\s*(?!&|/dev/null)\S", segment) or (prog == "sed" and "-i" in words):
        return "state"
    if INSTALL.match(" ".join(words)) or prog in _STATE or sub in _STATE_SUB.get(prog, set()):
        return "state"
    if "--version" in words or "-V" in words[1:2] or "--help" in words or "-h" in words[1:2]:
        return "diagnostic"
    if prog in DIAGNOSTIC or sub in _DIAG_SUB.get(prog, set()) or (prog == "git" and not sub):
        return "diagnostic"
    if prog == "python" and len(words) > 1 and words[1] == "-c" and re.search(r"\bprint\(", segment):
        return "diagnostic"
    return "other"


def looks_only(command: str) -> bool:
    """Every command of the chain only looks around (``ls``, ``cat``, ``git status``, ``x list``): its
    failure finds something out, it is not a problem to solve. Tests and linters are not this."""
    for seg in segments(command):
        words = core_words(seg)
        if not words:
            continue
        prog = words[0]
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        if not (prog in DIAGNOSTIC or sub in _DIAG_SUB.get(prog, set()) or sub in _LOOK_VERBS):
            return False
    return True


def action_kind(command: str) -> str:
    """The kind of a whole chain: ``state`` if any part changes state, ``diagnostic`` if all only look."""
    kinds = {_segment_kind(s) for s in segments(command)}
    if "state" in kinds:
        return "state"
    return "other" if "other" in kinds else "diagnostic"


def is_exec(step: Step) -> bool:
    return step.role == "tool" and isinstance(step.tool_input.get("command") or step.tool_input.get("cmd"), str)


def is_edit(step: Step) -> bool:
    name = step.tool.lower()
    return step.role == "tool" and "todo" not in name and (name in EDIT_TOOLS or name.endswith(("edit", "write")))


def edited_file(step: Step) -> str:
    path = str(step.tool_input.get("file_path") or step.tool_input.get("path") or "")
    if not path:
        m = re.search(r"\*\*\* (?:Update|Add) File: (\S+)", str(step.tool_input.get("input") or ""))
        path = m.group(1) if m else ""
    return PurePosixPath(path.replace("\\", "/")).name if path else ""


def is_blocked(step: Step) -> bool:
    return step.role == "tool" and step.is_error and bool(BLOCKED.search(step.result[:500]))


def is_usage_noise(step: Step) -> bool:
    return bool(_USAGE_NOISE.search(step.result[:300]))


def stalled(step: Step) -> str:
    """The interactive prompt a command stopped at (its output ends there), or ''."""
    lines = [ln.strip() for ln in strip_ansi(step.result[-600:]).splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return last if _PROMPT.search(last) and "✔" not in last else ""


def succeeded(step: Step) -> bool:
    """An observed success: no error flag, no failure printed by a command whose exit code hid it (a
    pipe's last stage, curl printing 504), not stopped at an interactive prompt."""
    if step.is_error or stalled(step):
        return False
    head = step.result[:3000]
    if "curl" in step.command and _HTTP_CODES.match(head.strip() or "200"):
        return False
    return not (_LOOKS_FAILED.search(head) and not _NO_FAILURE.search(head))


def hidden_failure(step: Step) -> bool:
    """A run that failed although its exit code says 0: ``build | tail`` printing "failed to solve",
    ``curl -w %{http_code}`` printing 504, a prompt nobody answers. Only for commands that do something
    (a ``grep error log`` that prints errors has not failed)."""
    if step.is_error or not is_exec(step) or (action_kind(step.command) == "diagnostic" and "curl" not in step.command):
        return False
    masked = "|" in step.command or "curl" in step.command or bool(stalled(step))
    return masked and not succeeded(step)


def workdir(command: str) -> str:
    m = re.match(r"^\s*cd\s+(\"[^\"]+\"|'[^']+'|\S+)\s*(?:&&|;)", command)
    return m.group(1).strip("\"'") if m else ""


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{2,}|[\u4e00-\u9fff\u3040-\u30ff]{2,}")
_STOP = frozenset(
    """the and for that this with from into not but are was were has have had been can cannot could should would
    will just now then than when what which where there here its it's our your you they them need needs needed
    must use used using run runs running ran file files error errors fail fails failed failing failure issue
    problem fix fixed test tests code line lines make sure also only still again let see like get got set one two
    new old all any some more most other same because since instead expects expected requires required missing
    doesn't isn't can't won't don't does did done way work works worked working output result results command
    commands""".split()
)


def tokens(text: str) -> set[str]:
    out: set[str] = set()
    for t in _TOKEN.findall(text):
        low = t.lower().strip(".:/-")
        if low in _STOP or len(low) < 3:
            continue
        out.add(low)
        out.update(p for p in re.split(r"[.:/_-]+", low) if len(p) >= 4 and p not in _STOP)
        if re.match(r"[\u4e00-\u9fff\u3040-\u30ff]", low):
            out.update(low[i : i + 2] for i in range(len(low) - 1))
    return out


def relevant(why: str, evidence: str) -> bool:
    """An explanation belongs to this episode when it names something the episode shows: a word of the
    error, the commands, the files edited. One about another problem shares none of them."""
    return bool(tokens(why) & tokens(evidence))


@dataclass(frozen=True)
class Episode:
    kind: str  # "error" (a failed command), "gate" (a commit/CI check refused it), "blocked" (approval),
    # "hook" (a project hook refused the call: its message is the project's rule)
    first: int  # index of the first failed or blocked step
    attempts: tuple[int, ...]  # the failed runs of the same goal with the same error
    end: int  # the resolving step (a success, or for kind error a run that got past this error); -1: none
    success: bool  # end is an observed success
    fix: int  # the state-changing step credited (-1: none; == end when the new form itself is the fix)
    why: str
    user_said: str = ""  # for blocked calls: what the person said right after refusing
    edits: tuple[int, ...] = ()  # for kind "reported": the edits made after the last complaint


_GATE = re.compile(
    r"pre-commit|pre-push|commit-msg|husky|lint-staged|\bhook\b|hooks/|validation failed|check(?:s)? failed|"
    r"\bCI\b|lefthook|prettier --check|would reformat|not formatted|--no-verify",
    re.I,
)


def main_goal(command: str) -> str:
    """The goal of a chain is its last command that does something (``git add -A && git commit`` is a
    commit, ``mix compile && mix credo`` a credo run)."""
    goals = [
        goal_key(seg) for seg in segments(command) if _segment_kind(seg) != "diagnostic" or len(segments(command)) == 1
    ]
    return goals[-1] if goals else goal_key(command)


def _same_goal(fail: Step, other: Step) -> bool:
    a = main_goal(fail.command)
    return bool(a) and a in {goal_key(seg) for seg in segments(other.command)}


_SUBCOMMAND_CLIS = frozenset(
    """git npm pnpm yarn bun cargo mix go docker kubectl uv poetry pip pip3 gh dotnet swift flutter dart rails
    bundle composer gradle mvn make just task deno brew apt systemctl""".split()
)


def _sub(words: list[str]) -> str:
    rest = [w for w in words[1:] if not w.startswith("-")]
    if words[0] in ("npm", "pnpm", "yarn", "bun") and rest[:1] == ["run"]:
        rest = rest[1:]
    return rest[0] if rest else ""


_MISSING_TOOL = re.compile(
    r"command not found|is not recognized as (?:an internal|the name of a cmdlet)|not installed|"
    r"不是内部或外部命令|コマンドが見つかりません|未找到命令|找不到命令",
    re.I,
)
_TARGET = re.compile(r"[\w~.-]*[/\\][\w./\\~-]+|[\w-]+\.[A-Za-z]\w{0,5}\b")


def _new_tool(fail: Step, other: Step) -> bool:
    """The replacement brings a tool of its own (`python3 -c` for `jq`), not the same pipe minus it."""
    before = {core_words(seg)[0] for seg in segments(fail.command) if core_words(seg)}
    after = {core_words(seg)[0] for seg in segments(other.command) if core_words(seg)}
    return bool({p for p in after - before if p not in DIAGNOSTIC})


def _same_targets(fail: Step, other: Step) -> bool:
    """Another tool on the same files: a path or file name of the failed command reappears."""
    targets = {t for t in _TARGET.findall(fail.command) if len(t) > 3} - {fail.command.split()[0]}
    return bool(targets) and any(t in other.command for t in targets)


def _urls(command: str) -> set[str]:
    return {u.rstrip("/\"'") for u in re.findall(r"https?://[^\s\"']+", command)}


def _related_form(fail: Step, other: Step) -> bool:
    """Another spelling of the failed command (its goal in a chain: ``git checkout main && git pull``
    is a pull): the same program (after wrappers and paths) on the same targets, a per-package run of a
    root-level command, or an env var in front."""
    if action_kind(other.command) == "diagnostic":
        return False
    main = main_segment(fail.command)
    return any(_related_segment(main, seg) for seg in segments(other.command))


def main_segment(command: str) -> str:
    segs = segments(command)
    doing = [seg for seg in segs if _segment_kind(seg) != "diagnostic"]
    return (doing or segs)[-1]


def _related_segment(fail: str, other: str) -> bool:
    a, b = core_words(fail), core_words(other)
    if not a or not b or a[0] != b[0]:
        return False
    targets = {w for w in a[1:] if not w.startswith("-") and len(w) >= 4} & {w for w in b[1:] if len(w) >= 4}
    if a[0] in _TWO_LEVEL and targets - set(_TWO_LEVEL[a[0]]) - {"compose"}:
        return True  # `docker compose restart web` failed, `docker compose up -d --build web` brought it up
    if _segment_kind(other) == "state":
        return False  # an install or a config write is an action towards the goal, not the goal
    if a[0] in _SUBCOMMAND_CLIS and (_sub(a) != _sub(b) or goal_key(fail) != goal_key(other)):
        return False  # `npm install` is not another form of `npm test`
    if a[0] in ("curl", "wget", "http"):
        return bool(_urls(fail) & _urls(other))  # another request is another goal
    rest_a = {w for w in a[1:] if not w.startswith("-")}
    rest_b = {w for w in b[1:] if not w.startswith("-")}
    return not rest_a or not rest_b or bool(rest_a & rest_b) or rest_a <= rest_b or len(a) <= 2


def _why(steps: Sequence[Step], start: int, end: int, evidence: str) -> str:
    """The first relevant explanation in the assistant's messages after the failure (at most the first
    three: later ones have usually moved on to another problem)."""
    seen = 0
    for s in steps[start + 1 : end]:
        if s.role == "assistant":
            why = explanation(s.text)
            if why and not is_question(why) and relevant(why, evidence):
                return why
            seen += 1
            if seen >= 3:
                break
    return ""


def _evidence(steps: Sequence[Step], first: int, end: int) -> str:
    parts = []
    for s in steps[first : end + 1]:
        if s.role == "tool":
            parts.append(s.command)
            parts.append(s.result[:1500])
            if is_edit(s):
                parts.append(edited_file(s))
                parts.extend(str(v)[:1500] for v in s.tool_input.values() if isinstance(v, str))
    return "\n".join(parts)


def _credit(steps: Sequence[Step], after: int, end: int) -> int:
    """The state-changing step just before ``end`` (after the last failed attempt): an edit or a
    state-changing command first, another non-diagnostic command else; -1 when only diagnostics ran."""
    fallback = -1
    for s in reversed(steps[after + 1 : end]):
        if s.role != "tool" or s.is_error:
            continue
        if is_edit(s):
            return s.index
        if is_exec(s):
            kind = action_kind(s.command)
            if kind == "state":
                return s.index
            if kind == "other" and fallback < 0:
                fallback = s.index
    return fallback


def same_error(a: str, b: str) -> bool:
    """Two runs failed the same way: the same start of the message (the file it names may differ:
    "could conflict: README.md", then "…: README.md.bak"), or both stopped at a prompt."""

    def key(x: str) -> str:
        return re.sub(r"\d+", "", x.lower())[:40]

    return key(a) == key(b)


def _signature(step: Step) -> str:
    prompt = stalled(step)
    return "stops at an interactive prompt" if prompt else error_signature(step.result, step.command)


def error_episode(steps: Sequence[Step], i: int, consumed: set[int]) -> Episode | None:
    fail = steps[i]
    prompt = stalled(fail)
    signature = _signature(fail)
    missing = bool(_MISSING_TOOL.search(fail.result[:600]))
    named = re.search(r"([\w.-]+): (?:command )?not found|'([\w.-]+)' is not recognized", fail.result[:600])
    tool = (named.group(1) or named.group(2)) if named else ""
    attempts = [i]
    end, success, via_form = -1, False, False
    for j in range(i + 1, min(len(steps), i + 1 + LOOKAHEAD)):
        s = steps[j]
        if not is_exec(s) or is_blocked(s):
            continue
        if missing and tool and tool not in s.command and not _new_tool(fail, s):
            continue  # `head x | jq` without jq is not the way around a missing jq
        if _same_goal(fail, s):
            if succeeded(s) and action_kind(s.command) == "diagnostic" and action_kind(fail.command) != "diagnostic":
                continue  # looking at the state (`docker compose ps`) is not reaching the goal
            if not succeeded(s) and same_error(_signature(s), signature):
                attempts.append(j)
                consumed.add(j)
                continue
            end, success = j, succeeded(s)
            break
        if succeeded(s) and action_kind(s.command) != "diagnostic" and _related_form(fail, s):
            end, success, via_form = j, True, True
            break
        if missing and succeeded(s) and _same_targets(fail, s) and _new_tool(fail, s):
            end, success, via_form = j, True, True  # `jq . a.jsonl` not installed → `python3 -c … a.jsonl` did the job
            break
    if end < 0 and prompt and len(attempts) >= 2:
        return Episode("stall", i, tuple(attempts), -1, False, -1, "")
    if end < 0 or not signature:
        return None
    # another form of the command that reached the goal is the fix itself, not what ran before it; so is a
    # chain that changes state before retrying (`git remote set-url origin git@… && git push`)
    chained = end >= 0 and any(_segment_kind(seg) == "state" for seg in segments(steps[end].command)[:-1])
    fix = end if via_form or (chained and success) else _credit(steps, attempts[-1], end)
    resolved = steps[end]
    differs = clean_command(resolved.command) != clean_command(fail.command) or workdir(resolved.command) != workdir(
        fail.command
    )
    if fix < 0 and differs and success:
        fix = end
    evidence = _evidence(steps, i, end)
    # the explanation after the last failed attempt is the one the fix acted on; earlier ones may be wrong
    why = next((w for a in reversed(attempts) if (w := _why(steps, a, end, evidence))), "")
    if fix < 0 and not why:
        return None  # the same command simply worked again: nothing to learn
    gate = bool(_GATE.search(fail.result[:2000])) and goal_key(fail.command).startswith(("git", "pre-commit"))
    return Episode("gate" if gate else "error", i, tuple(attempts), end, success, fix, why)


_HOOK = re.compile(r"\bhook\b|PreToolUse", re.I)


def blocked_episode(steps: Sequence[Step], i: int, consumed: set[int]) -> Episode | None:
    """Calls refused by the approval system or the user, and what happened next: the same call allowed
    later, another form that ran, or what the person said to do instead."""
    first = steps[i]
    attempts = [i]
    user_said = ""
    end, success = -1, False
    for j in range(i + 1, min(len(steps), i + 1 + LOOKAHEAD)):
        s = steps[j]
        if s.role == "user" and not user_said and not attempts[-1] < j - 6:
            text = " ".join(s.text.split())
            if 8 <= len(text) <= 300 and not is_question(text) and not text.startswith("["):
                user_said = text
            continue
        if s.role != "tool":
            continue
        if is_blocked(s):
            if s.tool == first.tool:
                attempts.append(j)
                consumed.add(j)
            continue
        if s.tool == first.tool and succeeded(s) and not (is_exec(s) and action_kind(s.command) == "diagnostic"):
            end, success = j, True
            break
        if j - attempts[-1] > 8:
            break
    hook = bool(_HOOK.search(first.result[:500]))
    if len(attempts) < 2 and not user_said and not (hook and end >= 0):
        return None  # one refusal then on with the work: no loop, nothing to pre-approve
    return Episode("hook" if hook else "blocked", i, tuple(attempts), end, success, end, "", user_said)


def episodes(steps: Sequence[Step]) -> list[Episode]:
    found: list[Episode] = []
    consumed: set[int] = set()
    for i, s in enumerate(steps):
        if i in consumed or s.role != "tool" or not (s.is_error or hidden_failure(s)):
            continue
        if is_blocked(s):
            ep = blocked_episode(steps, i, consumed)
        elif (
            is_exec(s)
            and not is_usage_noise(s)
            and (not looks_only(s.command) or _MISSING_TOOL.search(s.result[:600]) or "curl" in s.command)
        ):  # `ls x` finding nothing is looking, not a problem; a missing `jq` or a failing test is one
            ep = error_episode(steps, i, consumed)
        else:
            continue
        if ep is not None and not any(e.end == ep.end >= 0 and e.kind == ep.kind for e in found):
            found.append(ep)  # two failures resolved by the same run are one lesson, told from the first
    return found


# What a person says when something they asked for still does not work, and when it finally does.
_COMPLAINT = re.compile(
    r"(?i)\b(?:doesn't|does not|isn't|is not|won't|still not|not) (?:work|working|switch\w*|show\w*|load\w*|"
    r"chang\w*|appl\w*|render\w*)|\bstill (?:broken|fails?|failing|the same)|\bbroken\b|"
    r"動作しない|動かない|うまく動作していない|うまくいかない|切り替わらない|反映されない|表示されない|効かない|"
    r"変わらない|不行|没用|没反应|不起作用|不生效|无效|还是不|報錯|报错|出错|不工作"
)
_CONFIRMED = re.compile(
    r"(?i)\b(?:works now|it works|that worked|it worked|(?:that |this )?fixed it|all good now|works perfectly)\b|"
    r"解決しました|直りました|動きました|うまくいきました|できました|好了|可以了|解决了|成功了|没问题了|搞定了"
)
_NOT_PROJECT = re.compile(r"(?:^|/)\.claude/|(?:^|/)plans?/[\w-]+\.md$")


def reported_episodes(steps: Sequence[Step], window: int = 120) -> list[Episode]:
    """A person says it does not work → the assistant edits → the person says it works now. The edits
    after the last complaint get the credit; the person's word is the observed success."""
    found: list[Episode] = []
    i = 0
    while i < len(steps):
        s = steps[i]
        if s.role != "user" or not _COMPLAINT.search(s.text) or is_question(s.text.strip()):
            i += 1
            continue
        last = i
        end = -1
        for j in range(i + 1, min(len(steps), i + window)):
            u = steps[j]
            if u.role != "user" or u.text.startswith("<"):
                continue
            if _CONFIRMED.search(u.text) and not _COMPLAINT.search(u.text) and not is_question(u.text.strip()):
                end = j
                break
            if _COMPLAINT.search(u.text):
                last = j
        if end < 0:
            i += 1
            continue
        edits = tuple(
            x.index
            for x in steps[last + 1 : end]
            if is_edit(x) and not x.is_error and edited_file(x) and not _NOT_PROJECT.search(_path_of(x))
        )
        if edits:
            evidence = "\n".join(
                [steps[last].text, *(edited_file(steps[e]) for e in edits)]
                + [str(v)[:1500] for e in edits for v in steps[e].tool_input.values() if isinstance(v, str)]
            )
            why = _why(steps, last, end, evidence) or _why(steps, i, last, evidence)
            found.append(Episode("reported", i, (i, last), end, True, edits[-1], why, steps[end].text, edits))
        i = end + 1
    return found


def _path_of(step: Step) -> str:
    return str(step.tool_input.get("file_path") or step.tool_input.get("path") or "").replace("\\", "/")


_EDIT_TOKEN = re.compile(r"[\w.$#@:-]+|[^\s\w]")


def edit_change(step: Step, limit: int = 90) -> str:
    """What a small edit changed, as "`document.body` → `document.documentElement`", or ''."""
    old = str(step.tool_input.get("old_string") or "")
    new = str(step.tool_input.get("new_string") or "")
    if not old or not new:
        return ""
    a, b = _EDIT_TOKEN.findall(old), _EDIT_TOKEN.findall(new)
    import difflib

    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops or len(ops) > 2:
        return ""
    parts = []
    for _tag, i1, i2, j1, j2 in ops:
        before, after = "".join(_join(a[i1:i2])), "".join(_join(b[j1:j2]))
        if len(before) > limit or len(after) > limit or not after.strip():
            return ""
        parts.append(f"`{before}` → `{after}`" if before.strip() else f"added `{after}`")
    return parts[0] + (" …" if len(parts) > 1 else "")  # the first change names it; more is marked


def _join(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for t in tokens:
        if out and (t[0].isalnum() or t[0] in "_$") and (out[-1][-1].isalnum() or out[-1][-1] in "_$"):
            out.append(" ")
        out.append(t)
    return out
