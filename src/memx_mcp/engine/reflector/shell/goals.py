"""Reading shell commands for episodes: what a command is for (its goal, however it is formed) and
what kind of action it is (it only looks, it changes state, or something else)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath

from .commands import INSTALL, segments, words_of

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


def workdir(command: str) -> str:
    m = re.match(r"^\s*cd\s+(\"[^\"]+\"|'[^']+'|\S+)\s*(?:&&|;)", command)
    return m.group(1).strip("\"'") if m else ""


def main_goal(command: str) -> str:
    """The goal of a chain is its last command that does something (``git add -A && git commit`` is a
    commit, ``mix compile && mix credo`` a credo run)."""
    goals = [
        goal_key(seg) for seg in segments(command) if _segment_kind(seg) != "diagnostic" or len(segments(command)) == 1
    ]
    return goals[-1] if goals else goal_key(command)


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


def _urls(command: str) -> set[str]:
    return {u.rstrip("/\"'") for u in re.findall(r"https?://[^\s\"']+", command)}


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
    script_a, script_b = _script(a), _script(b)
    if script_a and script_b and script_a != script_b:
        return False  # `python test_simple.py` is another program than `python diverse_ai.py`, not another form
    return not rest_a or not rest_b or bool(rest_a & rest_b) or rest_a <= rest_b or len(a) <= 2


_SCRIPT = re.compile(r"[\w./-]+\.(?:py|js|mjs|cjs|ts|tsx|rb|sh|php|pl|lua|exs?)$")


def _script(words: list[str]) -> str:
    """The script an interpreter runs (``python x.py``, ``node build.js``): its file name, or ''."""
    return next((w.rsplit("/", 1)[-1] for w in words[1:] if _SCRIPT.match(w)), "")
