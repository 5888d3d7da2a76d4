"""PrivacySanitizer (SPEC §4.5): mask secrets and personal data with typed placeholders before text is
stored or sent anywhere. The patterns (``patterns.py``) find candidates; the judgement here decides, from
the value and its context, what is a secret. Git SHAs, UUIDs, versions, lock-file hashes, ordinary
identifiers and code that reads a secret are left alone; so are obvious placeholders (``xxxx``,
``<your token>``, ``${VAR}``)."""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

from ..text.tokenize import CAMEL_PARTS
from .patterns import BUILTIN_PATTERNS, IPV4, JA_PARTICLE, Pattern, pattern
from .shapes import entropy, looks_placeholder, luhn_ok, made_of_words, random_looking

__all__ = ["BUILTIN_PATTERNS", "Pattern", "PrivacySanitizer"]

T = TypeVar("T")

_NOT_USERS = frozenset({"shared", "public", "default", "all users", "runner", "user", "username", "you", "me"})
_NOT_EMAIL_LOCALS = frozenset({"git", "noreply"})
_NOT_SECRET_KEY = re.compile(
    r"(?i)public|csrf|authenticity|_?(?:url|uri|length|len|name|file|path|type|field|env|header|size|signature)$"
    r"|(?<!access)(?<!access[_.-])_?id$"
)
_EXAMPLE_PASSWORDS = frozenset("pass password passwd pwd pw secret foo bar baz test".split())  # user:pass@host
_NOT_SECRET_HEAD = frozenset(  # the last word of a key names what it holds
    "method methods seconds secs ms count counts lifetime expiry expires expiration endpoint endpoints provider "
    "providers policy mode strategy scheme schemes format style version timeout ttl limit limits kind class "
    "handler handlers manager factory store cache service config settings options params label prompt hint "
    "help message error errors regex pattern validator rule rules flow grant scope scopes audience issuer "
    "usage index prefix suffix algorithm enabled required time at date func callback hook".split()
)
_STRONG_WORDS = frozenset(
    "password passwd pwd pw pass passphrase secret secrete token apikey credentials credential auth login "
    "requirepass masterauth".split()  # the last two: redis.conf
)
_STRONG_SUFFIXES = ("apikey", "password", "passwd", "secret", "token")
_KEY_QUALIFIERS = frozenset("api access secret private auth client signing encryption master iam".split())
_MASKED_AFTER = re.compile(r"(?i)#{4}|\*{4}|\.{2,}\s*[\[<(]redacted")  # xoxp-1-2-3-####: the rest shown masked
_REFERENCE = re.compile(r"^\(?(?:#\d+|v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?)\)?[.,;:]?$")  # (#1583), v1.19.30
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_VERSION_BEFORE = re.compile(  # version 1.2.3.4, pkg==1.2.3.4, RFC 6749 Section 4.1.2.1
    r"(?i)(?:\bversion|==|>=|<=|~=|\bsection|\bsec\.|§|\bchapter|\bclause|\bstep)\s*v?$"
)
_FROM_TO = re.compile(r"(?i)\bfrom\s+v?(\d+(?:\.\d+)+)\s+to\s+v?(\d+(?:\.\d+)+)")  # Bump x from A to B
_CALL_OR_INDEX = re.compile(  # os.getenv("X"), await getToken(), env::var("X")?, :crypto.strong_rand_bytes(32)
    r"(?:(?:await|new|yield|try|not)\s+)?[A-Za-z_$:][\w$.!?:]*(?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\[\]\n]*\]"
    r"|[(\[][ \t]*$)"  # a call or subscript that goes on over the next lines
    r"|(?:await|yield|not)\s+[A-Za-z_][\w.]*|[(\[{]"  # await token, (a, b), [x], {…}
)
_OPERATOR_AFTER = re.compile(r"[A-Za-z_][\w.]*(?:[ \t]+(?:or|and|if|else)\b|[ \t]*\?\?)")  # a or b (not shell's ||)
_TYPE_OR_CONSTANT = re.compile(  # password: String, token: Option<String>, auth: true, password: !vault |
    r"(?:&'?\w*\s*)?(?:string|String|bytes|SecretStr|SecretString|number|Optional\[[^\]\n]*\]|Option<[^>\n]*>|"
    r"Secret<[^>\n]*>|Vec<u8>|true|false|True|False|null|nil|None|undefined|object|float|bool|dict|list|tuple|"
    r"return|lambda|function|async)(?![\w<\[])|![A-Za-z]\w*"
)
_ANNOTATION = re.compile(r"([A-Z][A-Za-z0-9_]*)(?:\[[^\]\n]*\])?[ \t]*(?:\||=|,|\)|$)", re.M)  # auth: AuthTypes | None
_BARE_NAME = re.compile(r"[A-Za-z_]+(?![\w.\-/+=])")
_LABELLED_PUBLIC = re.compile(  # key: "…", "key" => ["…"], {"key", "…"}, <meta name="key" content="…">
    r"([\w.-]+)\\*[\"']?[ \t]*(?:=>|[:=,])[ \t]*\[?[ \t]*\\*[\"']?$"  # quotes escaped once or more: JSON
    r"|name=\\*[\"']([\w.-]+)\\*[\"'][ \t]+(?:content|value)=\\*[\"']$"
)
_LOCKFILE_HASH = re.compile(r"(?:h1:|sha\d{1,3}[-:]|sum:|integrity[\"']?:\s*[\"']?)$")
_IDENTIFIER = re.compile(r"^(?:[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+|[A-Z][A-Z0-9_-]+|[\w.-]+\.[a-z]{2,4})$")


_PUBLIC_KEY_BEFORE = re.compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)[ \t]+$")


def _in_public_key_block(text: str, at: int) -> bool:
    begin = text.rfind("-----BEGIN", 0, at)
    if begin < 0:
        return False
    header_end = text.find("-----", begin + 10)
    return "PUBLIC KEY" in text[begin:header_end] and text.find("-----END", begin, at) < 0


def _key_words(key: str) -> list[str]:
    words = [w.lower() for part in re.split(r"[^A-Za-z0-9]+", key) for w in CAMEL_PARTS.findall(part)]
    return [piece for w in words for piece in (("access", "id") if w == "accessid" else (w,))]  # ACCESSID


def _assignment_is_secret(key: str, value: str) -> bool:
    """``password = …`` is a secret whatever the value; ``stripe_key = …`` only when the value looks like
    key material (``bucket_key = "SalesResults-1.2"`` is not)."""
    words = _key_words(key)
    if not words or _NOT_SECRET_KEY.search(key) or _is_identifier(value) or "://" in value or _REFERENCE.match(value):
        return False
    if random_looking(key):
        return False  # "toolu_01DD7PwKMij…","name": an id with "Pw" in it is no key name
    last = words[-1]
    if last in _NOT_SECRET_HEAD:
        return False  # token_endpoint_auth_method, token_lifetime_seconds: about a secret, not one
    if re.fullmatch(r"/[\w/.{}:-]*", value):
        return False  # TOKEN_ENDPOINT = "/v1/oauth/token": a URL path
    if any(w in _STRONG_WORDS or w.endswith(_STRONG_SUFFIXES) for w in words):
        return True
    if last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS:
        return True
    if last == "id" and _UUID.fullmatch(value):
        return False  # report_access_id: <uuid> names a record; UUIDs are identifiers (SPEC §4.5)
    if last in ("key", "id"):
        core = re.sub(r"[^A-Za-z0-9]", "", value)
        random = random_looking(value) or (
            "access" in words  # an access id is a credential by name: mixed classes and near-maximal entropy do
            and all(any(test(c) for c in core) for test in (str.isupper, str.islower, str.isdigit))
            and entropy(core) >= 0.85 * math.log2(len(core) or 1)
        )
        return (
            len(core) >= (12 if "access" in words else 16)
            and " " not in value
            and (random or re.fullmatch(r"[A-Fa-f0-9-]{16,}", value) is not None)
        )
    return False


def _is_identifier(value: str) -> bool:
    """A dotted name, an ALL_CAPS constant made of words, or a file name, unless it is key material."""
    if not _IDENTIFIER.match(value) or random_looking(value):
        return False
    if re.fullmatch(r"[A-Z][A-Z0-9_-]+", value):
        return all(len(part) <= 12 for part in re.split(r"[_-]", value))
    return True


def _is_code(key: str, text: str, start: int) -> bool:
    """The unquoted value at ``start`` is code, not a literal secret: a call or a subscript
    (``os.getenv("TOKEN")``, ``System.fetch_env!("SECRET_KEY_BASE")``, ``request.form["password"]``), a
    type or a constant (``password: String``, ``auth: true``), or a variable named like the key
    (``self.password = password``, ``api_key = apiKey``, ``password = new_password``)."""
    if _CALL_OR_INDEX.match(text, start) or _TYPE_OR_CONSTANT.match(text, start) or _OPERATOR_AFTER.match(text, start):
        return True
    annotation = _ANNOTATION.match(text, start)
    typed = annotation is not None and made_of_words(annotation.group(1)) and not re.search(r"\d", annotation.group(1))
    if typed and (not _holds_password(key) or _reads_as_type(key, text, start, annotation)):  # type: ignore[arg-type]
        return True  # token: EventLoopToken | None = None: a type named in words
    name = _BARE_NAME.match(text, start)
    if name is None:
        return False
    line = text[text.rfind("\n", 0, start) + 1 : start]
    if line.count("(") > line.count(")") or re.match(r"\s*(?:self|this)\.", line):
        return True  # f(auth_token=environment_key), self.access_token = auth_info: a variable
    if not key:
        return False
    named, keyed = _key_words(name.group(0)), _key_words(key)
    return bool(named) and bool(keyed) and named[-1] == keyed[-1]  # not PG_PASSWORD: postgres


_TYPE_WORDS = frozenset("str string bytes field type value input param params schema model data info secret".split())


def _holds_password(key: str) -> bool:
    """A key whose value is a password or a token whatever it looks like (``password``, ``DB_PASSWORD``,
    ``api_token``): a value written in words under it is a pass phrase (CorrectHorseBatteryStaple)."""
    return any(w in _STRONG_WORDS or w.endswith(_STRONG_SUFFIXES) for w in _key_words(key))


def _reads_as_type(key: str, text: str, start: int, annotation: re.Match[str]) -> bool:
    """Under a password-like key, a name in words is a type or a class only where syntax says so: the
    annotation goes on (``| None``, ``= None``, ``,`` or ``)`` in a signature), an ``=`` spaced as code
    spaces it (``token = Keyword``), or a colon before a name of what it holds (``password: PasswordField``,
    ``token: AccessToken``); ``password=CorrectHorseBatteryStaple`` and ``secret: CorrectHorseBatteryStaple``
    are values."""
    if annotation.group(0).rstrip().endswith(("|", "=", ",", ")")):
        return True
    before = text[max(0, start - 80) : start]
    if re.search(r"[ \t]=[ \t]*$|=[ \t]+$", before):
        return True  # token = Keyword, TokenResponse = OAuthToken: code spaces its =; env and URLs do not
    if not before.rstrip().endswith(":"):
        return False
    named = set(_key_words(annotation.group(1)))
    return bool(named & (set(_key_words(key)) | _TYPE_WORDS))


def _password_like(value: str) -> bool:
    """What prose names a password rather than a word: letters with digits, symbols, mixed case."""
    has_digit, has_alpha = any(c.isdigit() for c in value), any(c.isalpha() for c in value)
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)  # not just a capital
    return (has_digit and has_alpha) or (mixed and len(value) >= 12) or random_looking(value)


def _not_literal(value: str) -> bool:
    """v1.2, config.yaml, ./secrets/.env, ${DB_PASSWORD}, SHA-256, https://…: a name for something else."""
    dotted = re.fullmatch(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+", value) is not None and not random_looking(value)
    return (
        bool(_REFERENCE.match(value))
        or dotted
        or "://" in value
        or value[0] in "./~$<{"
        or re.fullmatch(r"[A-Z]{2,}(?:-\d+)?", value) is not None
    )


def _cjk_value_is_secret(op: str, value: str, after: str) -> bool:
    """After 密码：/密码是 the value is the password whatever it is; after a Japanese particle or a bare
    space only when it looks like one or the sentence says so (パスワードは admin です)."""
    if _not_literal(value):
        return False
    if op in ":：=＝" or not re.fullmatch(JA_PARTICLE, op):
        return True
    return _password_like(value) or re.match(r"[ \t]*(?:です|だ|でした|だった)", after) is not None


def _is_version(match: re.Match[str]) -> bool:
    """A dotted quad that is a version: after ``version`` or ``==``, or in ``from A to B`` when the other
    side is no address (Bump x from 2.31.0.10 to 2.31.0.20240106; traffic from one address to another is
    still masked)."""
    text = match.string
    if _VERSION_BEFORE.search(text[max(0, match.start() - 12) : match.start()]):
        return True
    for pair in _FROM_TO.finditer(text, max(0, match.start() - 40), min(len(text), match.end() + 40)):
        sides = pair.group(1), pair.group(2)
        if match.group(0) in sides and not all(re.fullmatch(IPV4, side) for side in sides):
            return True
    return False


def _is_secret(found: Pattern, value: str, match: re.Match[str]) -> bool:
    name = found.name
    if name in ("private_key", "slack_webhook", "home_user", "email"):
        if name == "home_user":
            return value.lower() not in _NOT_USERS and not value.startswith("[REDACTED")
        if name == "email":
            return value.split("@", 1)[0].lower() not in _NOT_EMAIL_LOCALS
        return True
    if value.startswith("[REDACTED") or (name not in ("ip_address", "card_number") and looks_placeholder(value)):
        return False
    if name in ("api_token", "high_entropy") and _MASKED_AFTER.match(match.string, match.end()):
        return False  # a token whose rest is shown masked is an example of its shape, not a key
    if name == "ip_address":  # a netmask, a network or a broadcast address is no one's host
        return not _is_version(match) and not re.match(r"255\.|.*\.(?:0|255)$", value)
    if name == "card_number":
        digits = re.sub(r"\D", "", value)
        return 13 <= len(digits) <= 19 and luhn_ok(digits)
    if name == "secret_assignment" and "op" in match.re.groupindex:  # 密码：…, パスワードは …
        return _cjk_value_is_secret(match.group("op"), value, match.string[match.end() :])
    if name == "secret_assignment":
        return _assignment_match_is_secret(match, value)
    if name == "secret_flag":
        flag = match.group(0).split("=")[0].split()[0] if match.group(0).split() else ""
        return not _NOT_SECRET_KEY.search(flag) and not _is_identifier(value) and "://" not in value
    if name == "secret_phrase":  # "the password hunter2x": only what looks like a password, not prose
        core = value.rstrip(".")
        return not _not_literal(core) and _password_like(core)
    if name == "basic_auth":
        return _basic_auth_is_secret(value)
    if name == "auth_header":
        core = value.rstrip("})],")  # {"x-api-key": self.api_key}
        header = re.match(r"[\w-]*", match.group(0).lstrip("\"'")).group(0)  # type: ignore[union-attr]
        return not _is_identifier(core) and "://" not in core and not _is_code(header, match.string, match.start(1))
    if name == "url_credentials":
        return value.rpartition(":")[2].lower() not in _EXAMPLE_PASSWORDS
    if name == "high_entropy":
        return _high_entropy_is_secret(match, value)
    return True


def _distinctive(literal: str) -> bool:
    """A secret worth masking wherever else it appears: a word such as ``postgres`` or ``changeit`` is masked
    where it is assigned, not in ``psql -U postgres`` further on."""
    return len(literal) >= 6 and (_password_like(literal) or (not literal.isalpha() and len(set(literal)) >= 5))


def _assignment_match_is_secret(match: re.Match[str], value: str) -> bool:
    if match.re.groups >= 5:  # the main form: key, operator, then a value in one of four quotings
        unquoted = match.group(5) is not None
        key_start, key_end = match.start("key"), match.end("key")
        expansion = match.string[max(0, key_start - 2) : key_start] == "${"
        if expansion and match.string[key_end : key_end + 2] in (":-", ":="):
            return False  # ${DB_PASSWORD:-default}: a shell expansion, its default read by a pattern of its own
        if unquoted and "(" in match.string[match.end(1) : match.start(5)]:
            return False  # f(password: …), usernamePassword(credentialsId: …): a name, not a literal
        if match.group(4) is not None and re.search(r"\s", value):
            return False  # KEY=`etcdctl get /secret`: a command substitution, not a literal
        if unquoted and _is_code(match.group("key"), match.string, match.start(5)):
            return False
        value_start = next(match.start(i) for i in range(2, 6) if match.group(i) is not None)
        listed = "," in match.string[match.end("key") : value_start]
        if listed and (unquoted or made_of_words(value)):
            return False  # get("/x/:token", ReviewController), Literal["failed_auth", "failed_content"]
    if _names_itself(match.group("key"), value):
        return False
    if len(value) < 8 and not re.search(r"[^\W_]", value):
        return False  # secret_key_base:"}]}, in a raw JSON line: the string ended, what follows is JSON
    return _assignment_is_secret(match.group("key"), value)


_CONSTANT = re.compile(r"(?i)true|false|null|nil|none|undefined|yes|no|on|off|\d+")


def _value_under_key_is_secret(key: str, value: str) -> bool:
    """A string a structure holds under ``key`` (a tool input's ``{"password": "…"}``): a literal, so no
    code to tell apart, judged as ``key = "…"`` is."""
    core = value.strip()
    if len(core) < 4 or "\n" in core or len(core) > 200 or _CONSTANT.fullmatch(core) or looks_placeholder(core):
        return False
    return not _names_itself(key, core) and _assignment_is_secret(key, core)


def _names_itself(key: str, value: str) -> bool:
    """A value made of words that spells the key's own name, or ends with what the key holds: a constant
    or a stand-in, not a secret (``AUTH_TYPE_USER_OAUTH = "user_oauth"``, ``TOKEN_LIST = "tokenList"``,
    ``api_key="fal-ai-api-key"``)."""
    if not re.fullmatch(r"[A-Za-z]+(?:[-_ ][A-Za-z]+)*", value):
        return False
    named, keyed = _key_words(value), _key_words(key)
    if not named or not keyed:
        return False
    return (len(named) >= 2 and set(named) <= set(keyed)) or named[-1] == keyed[-1]  # not PG_PASSWORD: postgres


def _basic_auth_is_secret(value: str) -> bool:
    """user:password: the password is the secret (a user name alone is not), or, with an empty password,
    the user (an API key)."""
    if value.strip("\"'").startswith("+"):
        return False  # date -u +%Y-%m-%dT%H:%M:%SZ: a date format, not credentials
    user, _, password = value.strip("\"'").rpartition(":")
    password = password.strip("\"'{} ") or user.strip("\"'{} ")
    return (
        not re.fullmatch(r"[a-z]{0,10}", password)
        and not looks_placeholder(password)
        and "[" not in password
        and not password.startswith("$")
    )


def _high_entropy_is_secret(match: re.Match[str], value: str) -> bool:
    """Random-looking key material, unless the text labels it as public or it is a URL part or a hash."""
    before = match.string[max(0, match.start() - 40) : match.start()]
    labelled = _LABELLED_PUBLIC.search(before)
    if labelled and _NOT_SECRET_KEY.search(labelled.group(1) or labelled.group(2)):
        return False  # public_key = "…", csrf-token=…, "credentialId": "…": the text says it is not secret
    if _PUBLIC_KEY_BEFORE.search(before) or _in_public_key_block(match.string, match.start()):
        return False  # an SSH or PGP public key is meant to be shared
    chunk_start = max(match.string.rfind(" ", 0, match.start()), match.string.rfind("\n", 0, match.start()))
    in_url = "://" in match.string[chunk_start + 1 : match.start()]
    hashed = _LOCKFILE_HASH.search(before) or re.match(r"sha\d{1,3}-", value)
    return not in_url and not hashed and random_looking(value)


def _json_strings(text: str) -> list[str]:
    """The strings of each JSON line of ``text`` that JSON writes escaped (a quote, a backslash, a line
    break, a non-ASCII letter): a secret in them is learnt as it reads once decoded. Each follows its key
    (``requestId: req_…``), so that what the key says of it is still known; strings without an escape are
    read where they are, in the line itself."""
    import json

    out: list[str] = []
    for line in text.splitlines():
        if "\\" not in line or not line.lstrip().startswith(("{", "[")):
            continue
        try:
            stack: list[tuple[str, object]] = [("", json.loads(line))]
        except ValueError:
            continue
        while stack:
            key, item = stack.pop()
            if isinstance(item, str) and json.dumps(item)[1:-1] != item:
                out.append(f"{key}: {item}" if key else item)
            elif isinstance(item, dict):
                stack += [(str(k), v) for k, v in item.items()]
            elif isinstance(item, list):
                stack += [("", v) for v in item]
    return out


def _decoded(value: str) -> set[str]:
    """The value as found and as it reads once decoded: one found inside a JSON string keeps its escapes
    (``S3cr\\"t``), one in a URL its %XX, and the other occurrences may be written plainly."""
    import json  # here, not at import: only learning pays for it
    from urllib.parse import unquote

    out = {value}
    for _ in range(2):  # JSON inside a JSON string is escaped twice
        for found in list(out):
            if "\\" in found:
                with contextlib.suppress(ValueError):  # not a JSON escape (a Windows path, a regex)
                    out.add(json.loads(f'"{found}"'))
            if re.search(r"%[0-9A-Fa-f]{2}", found):
                out.add(unquote(found))
    return out


def _char_forms(char: str) -> list[str]:
    """How text may carry one character of a learned secret: as itself; JSON-escaped (``\\"``, ``\\/``,
    ``\\n``, ``\\u0021``), and escaped twice (JSON in a JSON string); URL-encoded (%21, + for a space); in
    a single-quoted shell string (``'\\''``). Hex digits are matched in either case."""
    import json

    single = {char, json.dumps(char)[1:-1], json.dumps(char, ensure_ascii=False)[1:-1]}
    if char == "/":
        single.add("\\/")
    if ord(char) <= 0xFFFF:
        single.add(f"\\u{ord(char):04x}")
    forms = single | {json.dumps(form)[1:-1] for form in single}
    forms.add("".join(f"%{byte:02x}" for byte in char.encode()))
    if char == " ":
        forms.add("+")
    if char == "'":
        forms |= {"'\\''", "'\"'\"'"}
    escaped = sorted((re.escape(form) for form in forms), key=len, reverse=True)
    return [re.sub(r"(?<=\\u)[0-9a-f]{4}|(?<=%)[0-9a-f]{2}", _either_case, form) for form in escaped]


def _either_case(hexdigits: re.Match[str]) -> str:
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in hexdigits.group(0))


def _every_form(literal: str) -> re.Pattern[str]:
    """One regex for every way ``literal`` may be written (``_char_forms`` for each character that is not a
    letter or digit; letters and digits stand for themselves, so the regex starts with a literal prefix)."""
    parts = [re.escape(c) if c.isascii() and c.isalnum() else "(?:" + "|".join(_char_forms(c)) + ")" for c in literal]
    return re.compile("".join(parts))


class PrivacySanitizer:
    """Masks every match of the built-in patterns and the user's own (``name``, regex) patterns, and every
    other occurrence of a secret it has learned (a password seen once in a URL is masked in prose too)."""

    def __init__(self, extra: Iterable[tuple[str, str]] = (), known: dict[str, str] | None = None) -> None:
        self._extra = tuple(extra)
        user = tuple(pattern(name, rx) for name, rx in self._extra)
        self.patterns: tuple[Pattern, ...] = user + BUILTIN_PATTERNS
        self.known: dict[str, str] = dict(known or {})  # secret literal → kind
        self._known_forms = [
            (_every_form(literal), kind) for literal, kind in sorted(self.known.items(), key=lambda lk: -len(lk[0]))
        ]

    def learning(self, text: str, values: Iterable[object] = ()) -> PrivacySanitizer:
        """A sanitizer that also masks, anywhere, each secret found somewhere in ``text`` (a whole
        transcript) or in ``values`` (structured data such as tool inputs, read as ``mask_value`` reads
        them): the copy lives as long as one reflection and is never stored."""
        found: dict[str, str] = dict(self.known)
        self.sanitize(text, found)
        for decoded in _json_strings(text):  # JSON lines (a raw transcript): their strings as they read
            self.sanitize(decoded, found)
        for value in values:
            self._walk(value, "", found)
        return PrivacySanitizer(self._extra, found)

    def mask_value(self, value: T) -> T:
        """``value`` with every string in it masked, however deep it lies (dicts, lists, tuples: a tool's
        input). A string under a key is also judged with its key, as ``key = "…"`` would be in code
        (``{"env": {"DB_PASSWORD": "hunter2"}}``); keys are masked as text of their own; numbers, booleans
        and None come back as they were."""
        return cast(T, self._walk(value, "", None))

    def _walk(self, value: object, key: str, learn: dict[str, str] | None) -> object:
        if isinstance(value, str):
            masked = self.sanitize(value, learn)[0]
            if masked == value and key and _value_under_key_is_secret(key, value):
                if learn is not None and _distinctive(value):
                    learn[value] = "secret_assignment"
                return "[REDACTED:secret_assignment]"
            return masked
        if isinstance(value, Mapping):
            return {
                (self.sanitize(k, learn)[0] if isinstance(k, str) else k): self._walk(v, str(k), learn)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            one = key[:-1] if key.endswith("s") and not key.endswith("ss") else key  # "passwords": [...]
            return type(value)(self._walk(v, one, learn) for v in value)
        return value

    def sanitize(self, text: str, learn: dict[str, str] | None = None) -> tuple[str, dict[str, int]]:
        """The masked text and how many of each kind were masked."""
        counts: dict[str, int] = {}
        for found in self.patterns:
            text = found.regex.sub(lambda m, p=found: self._mask(m, p, counts, learn), text)  # type: ignore[misc]
        for forms, kind in self._known_forms:  # inside a longer token too: Tr0ub4dor-and-3x would show most of it
            text, n = forms.subn(f"[REDACTED:{kind}]", text)
            if n:
                counts[kind] = counts.get(kind, 0) + n
        return text, counts

    def mask(self, text: str) -> str:
        return self.sanitize(text)[0]

    @staticmethod
    def _mask(match: re.Match[str], found: Pattern, counts: dict[str, int], learn: dict[str, str] | None) -> str:
        group = found.group
        if found.name == "secret_assignment" and group == 0:  # the value is whichever quoting matched
            group = next(i for i in range(2, 6) if match.group(i) is not None)
        value = match.group(group)
        if value is None or not _is_secret(found, value, match):
            return match.group(0)
        counts[found.name] = counts.get(found.name, 0) + 1
        if learn is not None and found.name not in ("home_user", "ip_address"):
            for literal in {value, *value.strip("\"'").split(":")}:
                for form in _decoded(literal):
                    if _distinctive(form):
                        learn[form] = found.name
        placeholder = f"[REDACTED:{found.name}]"
        if group == 0:
            return placeholder
        start, end = match.span(group)
        whole_start = match.start(0)
        full = match.group(0)
        return full[: start - whole_start] + placeholder + full[end - whole_start :]
