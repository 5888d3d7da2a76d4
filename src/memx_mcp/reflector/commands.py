"""Reading shell commands and tool output: normalising, keying, error signatures, explanations."""

from __future__ import annotations

import re
import shlex

from ..text.sentences import split_sentences

_CD_PREFIX = re.compile(r"^\s*cd\s+\S+\s*&&\s*")
_ENV_PREFIX = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")
_REDIRECTS = re.compile(r"\s*(?:2>&1|2>/dev/null|>\s*/dev/null)")
_TAIL_PIPE = re.compile(r"\s*\|\s*(?:tail|head|grep|less|cat)\b[^|]*$")
_HEREDOC = re.compile(r"\"?\$\(cat <<'?EOF'?.*", re.S)

# Commands that only look around: their repetition or first use teaches nothing.
ROUTINE = frozenset(
    """ls cat head tail grep rg find echo pwd wc sed awk sort uniq cut tr which whoami date sleep true false
    cd test env printenv file stat du df ps kill clear tree less more diff xargs tee touch mkdir rm cp mv ln
    chmod chown python python3 node bash sh zsh source export jq curl wget open timeout time""".split()
)
ROUTINE_GIT = frozenset({"status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "remote", "fetch"})
# Widely known CLIs: using one is not a "new tool" discovery.
COMMON_CLIS = ROUTINE | frozenset(
    """git gh mix iex elixir erl npm npx pnpm yarn bun pip pip3 pipx uv uvx poetry pytest ruff mypy black cargo
    rustc go make cmake docker docker-compose kubectl brew apt apt-get dpkg gem bundle rails ruby java javac
    mvn gradle dotnet swift tsc eslint prettier vite vitest jest deno psql mysql sqlite3 redis-cli ssh scp
    rsync tar zip unzip gzip tmux vim nano code claude""".split()
)

INSTALL = re.compile(
    r"^(?:sudo\s+)?(?:pip3?|uv pip|uv|pipx|poetry|npm|pnpm|yarn|bun|cargo|brew|apt(?:-get)?|gem|go|mix|composer)"
    r"\s+(?:install|add|get|i)\b(?P<rest>.*)$"
)


_PATHS = re.compile(r"(?:\s+(?!-)[\w./@-]*[/.][\w./@-]*){3,}")


def clean_command(command: str) -> str:
    """The command as a person would retype it: no ``cd … &&`` prefix, redirects, trailing pagers,
    here-doc bodies or long lists of paths, first line only."""
    first = command.strip().splitlines()[0] if command.strip() else ""
    first = _HEREDOC.sub("…", first)
    first = _CD_PREFIX.sub("", first)
    first = _REDIRECTS.sub("", first)
    first = _TAIL_PIPE.sub("", first)
    first = _PATHS.sub(" <paths>", first)
    return first.strip()


def first_segment(command: str) -> str:
    """The first command of a ``;`` / ``&&`` chain."""
    return re.split(r"\s*(?:;|&&|\|\|)\s*", clean_command(command), maxsplit=1)[0]


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def command_key(command: str) -> str:
    """What a command is for: its program and first sub-command (``mix test``, ``git push``, ``node``)."""
    words = _words(_ENV_PREFIX.sub("", clean_command(command)))
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    sub = next((w for w in words[1:3] if re.fullmatch(r"[a-z][\w:.-]*", w) and "/" not in w and "." not in w), "")
    return f"{program} {sub}".strip()


def is_routine(command: str) -> bool:
    words = command_key(command).split()
    if not words:
        return True
    if words[0] == "git":
        return len(words) < 2 or words[1] in ROUTINE_GIT
    return words[0] in ROUTINE


def program(command: str) -> str:
    key = command_key(command)
    return key.split()[0] if key else ""


_SIGNAL = re.compile(
    r"(?i)error|fatal|failed|failure|undefined|cannot|can't|could not|not found|no such|denied|invalid|"
    r"missing|exception|refused|\*\* \(|not formatted|no upstream|错误|失败|エラー|失敗"
)
_NOT_SIGNAL = re.compile(
    r"^(?:Exit code \d+|Compiling|Generated|Running|Getting extensions|warning:|Checking \d+ source files|"
    r"Finding suitable PLTs|Checking PLT|\s*[│┃|]\s*$)"
)


def error_signature(result: str) -> str:
    """The line of a failed command's output that says what went wrong (with the next line when it ends
    in a colon), trimmed."""
    text = result.replace("\\n", "\n")
    lines = [ln.strip(" │┃|\t") for ln in text.splitlines() if ln.strip(" │┃|\t")]
    at = next((i for i, ln in enumerate(lines) if _SIGNAL.search(ln) and not _NOT_SIGNAL.match(ln)), -1)
    if at < 0:
        at = next((i for i, ln in enumerate(lines) if not _NOT_SIGNAL.match(ln)), -1)
    if at < 0:
        return ""
    pick = lines[at]
    if pick.endswith(":") and at + 1 < len(lines):
        pick = f"{pick} {lines[at + 1]}"
    pick = re.sub(r"\s+", " ", pick)
    return pick[:140] + ("…" if len(pick) > 140 else "")


_NARRATION = re.compile(
    r"^(?:let me|now let me|now i|i'll|i will|let's|good|great|perfect|excellent|ok(?:ay)?|now,?|first,?)\b", re.I
)
_EXPLAINS = re.compile(
    r"(?i)\b(?:needs?|must|should|because|since|expects?|requires?|missing|instead|the (?:issue|problem|cause|fix)|"
    r"is clear|isn't|doesn't|can't|cannot|has no|only|so that|otherwise)\b|→|需要|因为|原因|必要|ため|ので"
)


def explanation(text: str) -> str:
    """The first sentence of an assistant message that explains rather than narrates, or ''."""
    for sentence in split_sentences(text):
        s = sentence.strip().strip("*").strip()
        if 12 <= len(s) <= 260 and _EXPLAINS.search(s) and not _NARRATION.match(s):
            return s.rstrip(":")
    return ""
