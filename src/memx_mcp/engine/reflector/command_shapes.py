"""Risky command shapes: what a lesson's commands and settings do, read from their syntax, not their wording.

An attacker can rephrase every sentence around a command, not what the command does. Each shape below is a
way a command hands control to something unseen, removes a safeguard, or lets data out, whoever wrote the
lesson (issue 31, point 1):

- **decode or download, then execute**: a pipe into a shell or interpreter (``… | sh``, ``| python3``,
  ``| $C$D``), process or command substitution fed to one (``source <(…)``, ``sh -c "$(…)"``, ``eval "$(…)"``),
  a program name spliced from variables (``$A$B``), code that executes what it decodes
  (``exec(base64.b64decode(…))``, ``eval(atob(…))``);
- **verification off**: a verification setting set false (``verify=False``, ``http.sslVerify false``,
  ``NODE_TLS_REJECT_UNAUTHORIZED=0``, ``strict-ssl false``), an "insecure" setting set true
  (``GIT_SSL_NO_VERIFY=1``, ``InsecureSkipVerify: true``), a flag that skips it (``--insecure``, ``--no-verify``,
  ``--no-check-certificate``, ``--trusted-host``, curl's ``-k``), a global git setting that runs or reroutes
  programs for every repository (``git config --global core.hooksPath``);
- **world-writable permissions**: ``chmod`` giving others write (``777``, ``a+rwx``, ``o+w``);
- **credentials in shell start-up files**: a credential-shaped variable and a shell rc file in one lesson;
- **data out through a network command**: a network program whose argument runs a command
  (``dig $(base64 .env).host``, ``curl …/$(whoami)``);
- **where code comes from**: a package index or registry other than the canonical one (``--index-url``,
  ``--extra-index-url``, ``PIP_INDEX_URL``, ``npm config set registry``, ``registry=`` or ``always-auth`` in
  ``.npmrc``), a dependency pinned to a direct URL on another host (``pkg @ https://…``);
- **what runs inside every process**: a preload or inject variable (``LD_PRELOAD``, ``DYLD_INSERT_LIBRARIES``,
  ``NODE_OPTIONS=--require …``, ``PYTHONSTARTUP``, ``JAVA_TOOL_OPTIONS=-javaagent…``);
- **the agent's own permissions widened**: ``bypassPermissions``, ``Bash(*)``, ``--dangerously-skip-permissions``,
  approvals or sandbox off for every call (``approval_policy = "never"``, ``danger-full-access``, auto-approve
  all, ``--yolo``).

These hold whoever backs the advice: the assistant may have run the command with success because content told
it to, and a good run says nothing about who controls the index, the library or the settings."""

from __future__ import annotations

import re

_INTERPRETER = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:(?:ba|z|da|k|fi|c|tc|a)?sh|python[\d.]*|pypy\d*|perl|ruby|node|php|"
    r"deno|bun|lua|Rscript|pwsh|powershell|iex|Invoke-Expression|source|osascript)"
)
_VAR = r"\$\{?[A-Za-z_]\w*\}?"
DECODE_AND_RUN = re.compile(
    r"\|\s*" + _INTERPRETER + r"(?=$|[\s;&|)`'\"]|-)(?!\s+-(?:m|c|e|E|Command)\b)|"  # piped in as code
    r"\|\s*" + _VAR + r"|"  # … into a program named by a variable
    r"(?<![\w$])" + _VAR + _VAR + r"|"  # a program name spliced from variables
    r"(?:^|[\s;&|(`'\"])(?:source|\.|(?:ba|z|da|k)?sh|python[\d.]*|perl|ruby|node)\s+<\(|"  # source <(…)
    r"(?:^|[\s;&|(`'\"])(?:(?:ba|z|da|k)?sh|python[\d.]*|perl|ruby|node|pwsh|powershell)\s+-(?:c|e|Command)\s+"
    r"[\"']?\s*(?:\$\(|" + _VAR + r")|"  # sh -c "$(…)"
    r"\beval\b\s*[\"']?\s*(?:\$\(|" + _VAR + r"|<\()|"  # eval "$(…)"
    r"\b(?:exec|eval|Function)\s*\(\s*(?:[\w.]*(?:b64decode|b32decode|decompress|fromhex|atob|unhexlify)|"
    r"Buffer\.from|bytes\.fromhex|codecs\.decode)",
    re.I | re.M,
)
# A verification setting (verify, sslVerify, strict-ssl, rejectUnauthorized, check_hostname …) set false
_VERIFY_KEY = r"[\w.-]*(?:verif|reject_?unauthori[sz]ed|check_?hostname|strict[-_]?ssl)[\w.-]*"
_INSECURE_KEY = r"[\w.-]*(?:insecure|no_?verify|skip_?(?:tls|ssl|verif)|ssl_?no_?verify|allow_?unverified)[\w.-]*"
VERIFICATION_OFF = re.compile(
    r"(?<![\w.-])" + _VERIFY_KEY + r"(?:\s*=\s*[\"']?(?:false|0|no|off|none)|\s*:\s*[\"']?(?:false|no|off)|"
    r"\s+[\"']?false)\b|"
    r"(?<![\w.-])" + _INSECURE_KEY + r"\s*(?:=|:)\s*[\"']?(?:true|1|yes|on)\b|"
    r"(?<![\w-])--[\w-]*(?:insecure|no-?verify|no-check-certificate|skip[\w-]*verif|trusted-host|unauthenticated|"
    r"no-?gpg-?check|ignore-certificate|disable-(?:ssl|tls))[\w-]*|"
    r"\b(?:curl|wget)\b[^|;&\n`]{0,200}?(?<=\s)-[a-zA-Z]*k[a-zA-Z]*(?=\s|$|`)|"
    r"\bgit\b[^|;&\n`]{0,40}\bconfig\s+(?:--\w+\s+)*--(?:global|system)\b[^|;&\n`]{0,20}"
    r"\b(?:core\.(?:hooksPath|sshCommand|fsmonitor|pager|editor)|url\.\S+\.insteadOf|credential\.helper)\b",
    re.I,
)
WORLD_WRITABLE = re.compile(
    r"\bchmod\s+(?:-\w+\s+)*(?:[0-7]?[0-7][0-7][2367]\b|[ugoa]*[ao][ugoa]*[+=][rwxXst]*w)",
    re.I,
)
_RC_FILE = re.compile(
    r"\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile|kshrc|cshrc|tcshrc|mkshrc)\b|"
    r"config\.fish\b|\\Microsoft\.PowerShell_profile\.ps1|\$PROFILE\b",
    re.I,
)
_CREDENTIAL_NAME = re.compile(
    r"\b[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|ACCESS_KEY|API_KEY|PRIVATE_KEY|KEY_ID|CREDENTIALS?|_PAT)"
    r"[A-Z0-9_]*\b"
)
DATA_OUT = re.compile(
    r"\b(?:dig|nslookup|host|drill|ping|curl|wget|nc|ncat|telnet|ssh|scp|Resolve-DnsName|Invoke-WebRequest)\b"
    r"[^|;&\n`]{0,200}?\$\(",
    re.I,
)


# The canonical package hosts: an index, a registry or a direct URL on any other host changes where code comes from
_CANONICAL_HOST = r"(?:pypi\.org|files\.pythonhosted\.org|registry\.npmjs\.org|registry\.yarnpkg\.com)(?![\w.-])"
_OTHER_URL = r"[\"']?(?:[a-z][\w+.-]*://)(?![^/\s\"'`]*@)?(?!" + _CANONICAL_HOST + r")[^\s\"'`]+"
CODE_SOURCE = re.compile(
    r"(?<![\w-])--(?:extra-)?index-url(?:\s*=\s*|\s+)" + _OTHER_URL + r"|"  # pip / uv flags
    r"\b(?:pip3?|uv\s+pip)\s+install\b[^\n|;&`]{0,200}?\s-i\s+" + _OTHER_URL + r"|"
    r"\b(?:PIP|UV)_(?:EXTRA_)?INDEX_URL\s*=\s*" + _OTHER_URL + r"|\bUV_(?:DEFAULT_)?INDEX\s*=\s*" + _OTHER_URL + r"|"
    r"(?<![\w-])(?:extra-)?index-url\s*=\s*" + _OTHER_URL + r"|"  # pip.conf
    r"\b(?:npm|pnpm|yarn)\s+config\s+set\s+(?:[\w@/:.-]*:)?registry\b|"  # npm config set registry …
    r"(?<![\w-])--registry(?:\s*=\s*|\s+)" + _OTHER_URL + r"|"
    r"\bnpm_config_registry\s*=|"
    r"(?:^|[\s`\"'])(?:@[\w-]+:)?registry\s*=\s*" + _OTHER_URL + r"|"  # .npmrc
    r"\balways-auth\s*=\s*true\b|"
    r"\b(?:npmRegistryServer|registry)[\"']?\s*:\s*" + _OTHER_URL + r"|"  # .yarnrc.yml, package.json
    r"(?<![\w.-])[A-Za-z0-9][\w.-]*(?:\[[\w,-]+\])?\s*@\s*(?:git\+)?" + _OTHER_URL,  # pkg @ https://…
    re.I | re.M,
)
PRELOAD = re.compile(
    r"\b(?:LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES|PYTHONSTARTUP)\b[\"']?\s*[=:]|"
    r"\b(?:NODE_OPTIONS|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|RUBYOPT|PERL5OPT)\b[\"']?\s*[=:][^\n`]{0,40}?"
    r"(?:--require\b|(?<![\w-])-r\b|--import\b|--(?:experimental-)?loader\b|-javaagent|(?<![\w-])-[rM]\w)",
    re.I,
)
AGENT_PERMISSIONS = re.compile(
    r"\bbypassPermissions\b|\bBash\(\s*\*?\s*:?\s*\*\s*\)|--dangerously-(?:skip-permissions|bypass[\w-]*)|"
    r"\bdanger-full-access\b|\bapproval[_-]?policy\b[\"']?\s*[=:]\s*[\"']?never\b|--ask-for-approval\s+never\b|"
    r"\bauto[_-]?(?:approve|accept|allow)[\w-]*[\"']?\s*[=:]\s*[\"']?(?:true|all|\*|\[\s*[\"']\*)|"
    r"(?<![\w-])--(?:yolo|trust-all-tools|allow-all-tools)\b|\"yolo\"\s*:\s*true",
    re.I,
)


def shapes(text: str) -> tuple[str, ...]:
    """The risky shapes of the commands and settings in ``text``: a reason each."""
    found = []
    if DECODE_AND_RUN.search(text):
        found.append("runs what it decodes or downloads (a pipe or substitution into an interpreter)")
    if VERIFICATION_OFF.search(text):
        found.append("switches verification off (a setting, a flag or a global hook)")
    if WORLD_WRITABLE.search(text):
        found.append("makes files world-writable")
    if _RC_FILE.search(text) and _CREDENTIAL_NAME.search(text):
        found.append("puts credentials in a shell start-up file")
    if DATA_OUT.search(text):
        found.append("sends the output of a command out through a network command")
    if CODE_SOURCE.search(text):
        found.append("changes where code comes from (a package index, registry or direct URL)")
    if PRELOAD.search(text):
        found.append("loads code into every process (a preload or inject variable)")
    if AGENT_PERMISSIONS.search(text):
        found.append("widens the agent's own permissions")
    return tuple(found)
