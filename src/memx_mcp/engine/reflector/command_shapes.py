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
  (``dig $(base64 .env).host``, ``curl …/$(whoami)``)."""

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
    return tuple(found)
