"""Reading shell commands and tool output: normalising, keying, error signatures, explanations."""

from __future__ import annotations

import re
import shlex

from ....text.clip import shorten
from ....text.sentences import split_sentences

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
    rsync tar zip unzip gzip tmux vim nano code claude ping ping6 traceroute tracert mtr dig nslookup host ip
    ifconfig ipconfig netstat ss arp route nc ncat telnet nmap lsof top htop free uptime uname hostname id sudo
    su systemctl journalctl service dmesg mount umount lsblk lspci lsusb crontab nohup screen watch pgrep pkill
    killall nproc openssl ssh-keygen base64 md5sum sha1sum sha256sum xxd od hexdump strings readlink realpath
    basename dirname type command where whereis egrep fgrep ag fd bat exa eza http httpie sed perl php lua
    python2 pypy py pwsh powershell cmd reg sc net netsh tasklist taskkill wmic setx start explorer xdg-open
    osascript defaults launchctl say pbcopy pbpaste xclip iptables nft ufw opkg apk dnf yum pacman snap flatpak
    nix conda mamba micromamba virtualenv venv pyenv nvm fnm volta rbenv rustup sdk asdf mise xcodebuild xcrun
    swiftc clang clang++ gcc g++ cc ld gdb lldb valgrind strace ltrace objdump nm ffmpeg convert magick sqlite
    terraform helm aws gcloud az heroku vercel netlify firebase wrangler fly supabase ollama hf huggingface-cli
    tsx ts-node nodemon pm2 webpack rollup esbuild turbo nx lerna playwright cypress mocha ava tox nox hatch
    pdm rye flake8 pylint isort bandit pyright pre-commit husky biome oxlint stylelint golangci-lint gofmt
    clippy rustfmt swiftlint swiftformat ktlint shellcheck shfmt hadolint actionlint markdownlint""".split()
)

INSTALL = re.compile(
    r"^(?:sudo\s+)?(?:pip3?|uv pip|uv|pipx|poetry|npm|pnpm|yarn|bun|cargo|brew|apt(?:-get)?|gem|go|mix|composer)"
    r"\s+(?:install|add|get|i)\b(?P<rest>.*)$"
)


_PATHS = re.compile(r"(?:\s+(?!-)[\w./@-]*[/.][\w./@-]*){3,}")


def first_line(command: str) -> str:
    """The command's first line, with its backslash continuations joined (never half a command)."""
    out = ""
    for line in command.strip().splitlines():
        out = f"{out} {line.strip()}" if out else line.strip()
        if not out.endswith("\\"):
            break
        out = out[:-1].rstrip()
    return out


def clean_command(command: str) -> str:
    """The command as a person would retype it: no ``cd … &&`` prefix, redirects, trailing pagers,
    here-doc bodies or long lists of paths, first line only."""
    first = first_line(command)
    first = _HEREDOC.sub("…", first)
    first = _CD_PREFIX.sub("", first)
    first = _REDIRECTS.sub("", first)
    first = _TAIL_PIPE.sub("", first)
    first = _PATHS.sub(" <paths>", first)
    return first.strip()


def first_segment(command: str) -> str:
    """The first command of a ``;`` / ``&&`` chain."""
    return re.split(r"\s*(?:;|&&|\|\|)\s*", clean_command(command), maxsplit=1)[0]


def segments(command: str) -> list[str]:
    """The commands of a ``;`` / ``&&`` / ``||`` chain (first line, ``cd`` prefix kept out), at least one."""
    first = first_line(command)
    first = _CD_PREFIX.sub("", _HEREDOC.sub("", first))
    parts = [p.strip() for p in re.split(r"\s*(?:;|&&|\|\|)\s*", first) if p.strip()]
    return parts or [""]


def words_of(command: str) -> list[str]:
    """Shell words (quotes undone), or plain whitespace words when the quoting is unbalanced or the
    command has Windows paths (POSIX quoting would eat their backslashes)."""
    if "\\" in command:
        return command.split()
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


_words = words_of


_QUESTION = re.compile(
    r"[?？]\s*[)\]」』\"'*]*\s*$|(?:吗|嗎|么|麼|呢|吧)\s*[。.!！]?\s*$|"
    r"(?:ですか|ますか|ましたか|でしょうか|のか|かな|か)\s*[。.!！]?\s*$"
)


def is_question(text: str) -> bool:
    """A question ("is it done?", "搞定了吗", "できましたか") states nothing: never a source of a fix."""
    return bool(_QUESTION.search(text.strip()))


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
    r"missing|exception|refused|\*\* \(|not formatted|no upstream|错误|失败|エラー|失敗|无法|不能|找不到|拒绝|"
    r"没有权限|权限不足|不是内部或外部命令|無法|找不到|見つかりません|できません|拒否|存在しません"
)
_NOT_SIGNAL = re.compile(
    r"^(?:Exit code \d+|Compiling|Generated|Running|Getting extensions|warning:|Checking \d+ source files?|"
    r"npm warn|npm notice|WARN\b|warn\b|info\b|hint:|note:|Need to disable some ESLint rules|"
    r"Finding suitable PLTs|Checking PLT|\s*[│┃|]\s*$)"
)


_IP_ONLY = re.compile(r"^[\W\d_]*(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?[\W\d_]*$|^[0-9a-f:]{6,}$", re.I)
_MOJIBAKE = re.compile(r"[\ufffd]|[ÃÂâ][\x80-\xbf€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ¡-¿]|锟斤拷|烫烫|屯屯")


def is_mojibake(line: str) -> bool:
    """Console text decoded with the wrong code page (cp936 read as UTF-8, UTF-8 read as Latin-1)."""
    if _MOJIBAKE.search(line):
        return True
    odd = sum(
        1 for ch in line if "\u0080" <= ch <= "\u00ff" or "\u0370" <= ch <= "\u03ff" or "\u0400" <= ch <= "\u04ff"
    )
    return odd >= 4 and odd * 3 >= len(line.replace(" ", ""))


def _not_an_error(line: str, command: str) -> bool:
    """A line that cannot say what went wrong: the command echoed back, a prompt, a bare address."""
    echo = line.lstrip("$>#% ").strip()
    cmd = " ".join(command.split())
    return (
        (bool(cmd) and (echo == cmd or (len(echo) >= 25 and " " in echo and echo in cmd)))
        or line.startswith(("$ ", "> ", "PS ", "+ "))
        or bool(_IP_ONLY.match(line))
        or is_mojibake(line)
    )


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\[\??[0-9;]{1,8}[A-Za-z](?=\S)")
# A lint rule or a compiler's error code: "@typescript-eslint/no-explicit-any", "TS6133", "E0432".
ERROR_CODE = re.compile(r"@[\w-]+/[\w-]+(?:/[\w-]+)?|\b(?:TS|CS|E|SC|PY|SIM|RUF)\d{3,5}\b|\berror\[E\d{4}\]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def error_signature(result: str, command: str = "") -> str:
    """The line of a failed command's output that says what went wrong (with the next line when it ends
    in a colon), shortened at a word boundary; '' when no line can (echoes, addresses, garbled text)."""
    text = _ANSI.sub("", result.replace("\\n", "\n"))
    lines = [ln.strip(" │┃|\t") for ln in text.splitlines() if ln.strip(" │┃|\t")]
    lines = [ln for ln in lines if not _not_an_error(ln, command)]
    at = next((i for i, ln in enumerate(lines) if _SIGNAL.search(ln) and not _NOT_SIGNAL.match(ln)), -1)
    if at < 0:
        at = next((i for i, ln in enumerate(lines) if not _NOT_SIGNAL.match(ln)), -1)
    if at < 0:
        return ""
    pick = lines[at]
    if (pick.endswith(":") or len(pick) < 30) and at + 1 < len(lines):
        pick = f"{pick} {lines[at + 1]}"  # "Failed to compile." says less than the line after it
    code = next((m.group(0) for ln in lines[at : at + 12] if (m := ERROR_CODE.search(ln))), "")
    if code and code not in pick:
        pick = f"{shorten(pick, 110)} ({code})"  # the rule or error code names the convention broken
    pick = re.sub(r"\s+", " ", pick)
    return shorten(pick, 140)


_NARRATION = re.compile(
    r"^(?:let me|now let me|now i|i'll|i will|let's|good|great|perfect|excellent|ok(?:ay)?|now,?|first,?)\b|"
    r"^(?:让我|我来|我先|现在|好的|好，|首先|接下来|下面|では|まず|次に|それでは)",
    re.I,
)
# Japanese and Chinese announce the next action at the end of the sentence ("…を作成します：").
_NARRATION_END = re.compile(r"(?:します|しましょう|してみます|しています|ましょう|一下)\s*[:：。.]?\s*$")
_EXPLAINS = re.compile(
    r"(?i)\b(?:needs?|must|should|because|since|expects?|requires?|missing|instead|the (?:issue|problem|cause|fix)|"
    r"is clear|isn't|doesn't|can't|cannot|has no|only|so that|otherwise)\b|→|需要|因为|原因|必要|ため|ので|"
    r"所以|导致|由于|必须|应该|问题是|问题在于|不支持|只能|因為|導致|必須|べき|せいで|原因は|しか"
)


def explanation(text: str) -> str:
    """The first sentence of an assistant message that explains rather than narrates, or ''."""
    for sentence in split_sentences(text):
        s = sentence.strip().strip("*").strip()
        if (
            12 <= len(s) <= 260
            and _EXPLAINS.search(s)
            and not _NARRATION.match(s)
            and not _NARRATION_END.search(s)
            and not is_question(s)
            and not s.endswith(("!", "！"))  # "…すぐにデプロイできます！": a cheer at the end of the work, not a cause
        ):
            return s.rstrip(":")
    return ""
