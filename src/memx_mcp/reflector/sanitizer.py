"""PrivacySanitizer (SPEC §4.5): mask secrets and personal data with typed placeholders before text is
stored or sent anywhere. Git SHAs, UUIDs, versions, lock-file hashes and ordinary identifiers are left
alone; so are obvious placeholders (``xxxx``, ``<your token>``, ``${VAR}``)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .shapes import entropy, looks_placeholder, luhn_ok, random_looking


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[str]
    group: int = 0  # which group holds the secret (0: the whole match)


def _p(name: str, pattern: str, group: int = 0, flags: int = 0) -> Pattern:
    return Pattern(name, re.compile(pattern, flags), group)


_B = r"(?<![\w+/-])"  # start of a token
_E = r"(?![\w+/=-])"  # end of a token
_SECRET_WORD = (
    r"(?:password|passwd|pwd|pw|pass|passphrase|secrete?|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credentials?|auth|key|login|access[_.-]?id)"
)
_IPV4 = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}"
_OPERATOR = r"(?:::?:?=|\?=|:=|=>|!==?|===?|=|:|[\"'][ \t]*,)"

# Provider tokens with a recognisable prefix (from the providers' documented formats).
_PREFIXED = "|".join(
    [
        r"sk-ant-(?:api|admin|sid)\d{2}-[\w-]{20,}",
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}",
        r"gh[pousr]_[A-Za-z0-9]{36,255}",
        r"github_pat_\w{22,255}",
        r"gl(?:pat|dt|ptt|rt|soat|cbt|imt|agent|oas|ft|runner|ffct)-[\w-]{20,}",
        r"xox[baprso]-(?:\d{6,}-){1,3}[A-Za-z0-9-]{6,}",
        r"xox[baprso]-(?:\d+-){2,3}[a-f0-9]{10,}",
        r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{20,}",
        r"xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]+",
        r"xox[a-z]-\d-(?:\d+-){2,3}[a-f0-9]{10,}",
        r"xoxe-\d{10,}-\d+-\d+-[a-f0-9]+",
        r"sq0(?:atp|csp)-[\w-]{22,}",
        r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}",  # Stripe (pk_ keys are public by design)
        r"[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}",  # Discord bot tokens (base64 of a numeric id first)
        r"[a-f0-9]{32}-us\d{1,2}",  # Mailchimp
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",  # 1Password
        r"sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}",  # Sourcegraph
        r"AIza[\w-]{35}",
        r"ya29\.[\w-]{20,}",
        r"sha256~[\w-]{43}",  # OpenShift user tokens
        r"npm_[A-Za-z0-9]{36}",
        r"hf_[A-Za-z]{34}",
        r"api_org_[A-Za-z]{34}",
        r"ntn_\w{40,}",
        r"pplx-\w{40,}",
        r"sntry[su]_[\w+/=]{30,}",
        r"glc_[\w+/=]{30,}",
        r"glsa_\w{32}_\w{8}",
        r"hv[sb]\.[\w-]{20,}",
        r"ops_eyJ[\w+/=]{30,}",
        r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
        r"ATATT3[\w=-]{30,}",
        r"ABSK[A-Za-z0-9+/]{40,}=*",
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[\w+/=]*",  # base64 of bedrock.amazonaws.com
        r"FlyV1 fm\d_[\w+/=]{20,}",
        r"fm\d_[\w+/=]{40,}",
        r"fo1_[\w-]{20,}",
        r"EAA[A-Za-z0-9]{30,}",
        r"s-s4t2(?:ud|af)-[a-f0-9]{64}",
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.\w{40,}",
        r"do[opr]_v1_[a-f0-9]{64}",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        r"SG\.[\w-]{22}\.[\w-]{43}",
        r"key-[a-f0-9]{32}",
        r"dapi[a-f0-9]{32}(?:-\d)?",
        r"pypi-AgEIcHlwaS5vcmc[\w-]{50,}",
        r"lin_api_\w{40}",
        r"PMAK-\w{24}-\w{34}",
        r"HRKU-[\w-]{40,}",
        r"CLOJARS_[a-z0-9]{60}",
        r"rubygems_[a-f0-9]{48}",
        r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
        r"pnu_[A-Za-z0-9]{36}",
        r"rdme_[a-z0-9]{70}",
        r"dop_v1_[a-f0-9]{64}",
        r"[\w~.]{3}\dQ~[\w~.-]{31,34}",  # Azure AD client secrets
        r"AKC[A-Za-z0-9]{10,}",  # JFrog Artifactory API keys
        r"AP[0-9A-F](?=[A-Za-z]*[0-9])[A-Za-z0-9]{8,}",  # JFrog Artifactory passwords (with a digit)
        r"(?:AC|SK)[a-z0-9]{32}",  # Twilio account and API key SIDs
        r"GR1348941[\w-]{20,}",  # GitLab runner registration tokens
    ]
)

BUILTIN_PATTERNS: tuple[Pattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[ \t]*[\w-]+:[^\n]*\n)*[A-Za-z0-9+/=\s]{16,}?"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    _p("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?"),
    _p("api_token", _B + r"(?:" + _PREFIXED + r")" + _E),
    _p("slack_webhook", r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]+"),
    _p("api_token", r"api\.softlayer\.com/soap/v3(?:\.1)?/([a-z0-9]{64})\b", 1),
    _p("url_credentials", r"\b[a-z][a-z0-9+.\-]*://([^\s:/@\"'`]+:[^\s@/\"'`]+)@", 1, re.I),
    _p(
        "basic_auth",
        r"(?:\s-u|--user)[ \t=]+(\"[^\"\n]*:[^\"\n]*\"|'[^'\n]*:[^'\n]*'|(?:\"[^\"]*\"|'[^']*'|[^\s:\"']*):"
        r"(?:\"[^\"]*\"|'[^']*'|[^\s\"']+))",
        1,
    ),
    _p("bundler_credentials", r"\bBUNDLE_[A-Z0-9_]+__[A-Z]+[\"']?[ \t]*[:=][ \t]*[\"']?([^\s\"';&]+)", 1),
    _p(
        "auth_header",
        r"(?i)(?<![\w-])(?:authorization|proxy-authorization|x-api-key|x-auth-token|api-key|token)[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:bearer|basic|token|api-token|digest|sso-key)\s+)?([^\s\"',;]{8,})",
        1,
    ),
    _p("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)", 1),
    _p(
        "secret_flag",
        r"(?i)(?:^|\s)-{1,2}[\w-]*" + _SECRET_WORD + r"[\w-]*(?:[= ]|\s+)[\"']?([^\s\"'-][^\s\"']{5,})",
        1,
    ),
    _p(
        "secret_assignment",
        r"(?i)\b(?P<key>[\w.\-]*" + _SECRET_WORD + r"[\w-]*)[\"']?(?:\[\d*\])?[ \t]*(?:" + _OPERATOR + r"|\()[ \t]*@?"
        r"(?:\"([^\"\n]{4,200})\"|'([^'\n]{4,200})'|`([^`\n]{4,200})`|([^\s\"']{3,}[^\s\"',;)]))",
        0,
    ),
    _p(
        "secret_assignment",
        r"(?i)[\"']([^\"'\n]{6,200})[\"'][ \t]*(?:!==?|===?)[ \t]*(?P<key>[\w.]*" + _SECRET_WORD + r"\w*)\b",
        1,
    ),
    _p(  # config syntax without an operator: password "…" (nginx, redis.conf, many DSLs)
        "secret_assignment",
        r"(?i)(?<![\w.-])(?P<key>password|passwd|passphrase|secrete?|requirepass|masterauth)[ \t]+\"([^\"\n]{4,200})\"",
        2,
    ),
    _p(
        "secret_phrase",
        r"(?i)\b(?:password|passwd|passphrase|pwd|secret|token|credentials?|api[ _-]?key)(?:\s+(?:is|was|of|for|to))?"
        r"\s+[\"'`]?([^\s\"'`,;]{6,})",
        1,
    ),
    _p(
        "ip_address",
        r"(?<![\w.-])(?!(?:10|127|0)\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.)" + _IPV4 + r"(?![\w.]|\.\d)",
    ),
    _p("email", r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"),
    _p("card_number", r"(?<![\w.\-])[3-6]\d{3}(?:[ -]?\d{4}){2}[ -]?\d{1,7}(?![\w\-])"),
    _p("phone", r"(?<![\w.])\+\d{1,3}[ \-]?\(?\d{1,4}\)?(?:[ \-]?\d{2,4}){2,4}(?![\w.])"),
    _p("phone", r"(?<![\w.\-])\(?\d{3}\)?[ .\-]\d{3}[ .\-]\d{4}(?![\w.\-])"),
    _p("home_user", r"(?:/home/|/Users/|[A-Za-z]:\\+Users\\+)([^/\\\s\"':]+)", 1),
    _p("high_entropy", r"(?<![\w+/.~=-])[A-Za-z0-9+/_~-]{20,}={0,2}(?![\w+/=.~-])"),
)

_NOT_USERS = frozenset({"shared", "public", "default", "all users", "runner", "user", "username", "you", "me"})
_NOT_EMAIL_LOCALS = frozenset({"git", "noreply"})
_NOT_SECRET_KEY = re.compile(
    r"(?i)public|csrf|authenticity|_?(?:url|uri|length|len|name|file|path|type|field|env|header|size|signature)$"
    r"|(?<!access)(?<!access[_.-])_?id$"
)
_STRONG_WORDS = frozenset(
    "password passwd pwd pw pass passphrase secret secrete token apikey credentials credential auth login "
    "requirepass masterauth".split()  # the last two: redis.conf
)
_STRONG_SUFFIXES = ("apikey", "password", "passwd", "secret", "token")
_KEY_QUALIFIERS = frozenset("api access secret private auth client signing encryption master iam".split())
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MASKED_AFTER = re.compile(r"(?i)#{4}|\*{4}|\.{2,}\s*[\[<(]redacted")  # xoxp-1-2-3-####: the rest shown masked
_REFERENCE = re.compile(r"^\(?(?:#\d+|v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?)\)?[.,;:]?$")  # (#1583), v1.19.30
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_VERSION_BEFORE = re.compile(r"(?i)(?:\bversion|==|>=|<=|~=)\s*v?$")  # version 1.2.3.4, pkg==1.2.3.4
_FROM_TO = re.compile(r"(?i)\bfrom\s+v?(\d+(?:\.\d+)+)\s+to\s+v?(\d+(?:\.\d+)+)")  # Bump x from A to B
_CALL_OR_INDEX = re.compile(  # os.getenv("X"), await getToken(), env::var("X")?, :crypto.strong_rand_bytes(32)
    r"(?:(?:await|new|yield|try|not)\s+)?[A-Za-z_$:][\w$.!?:]*(?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\[\]\n]*\])"
)
_TYPE_OR_CONSTANT = re.compile(  # password: String, token: Option<String>, auth: true, password: !vault |
    r"(?:&'?\w*\s*)?(?:string|String|bytes|SecretStr|SecretString|number|Optional\[[^\]\n]*\]|Option<[^>\n]*>|"
    r"Secret<[^>\n]*>|Vec<u8>|true|false|True|False|null|nil|None|undefined)(?![\w<\[])|![A-Za-z]\w*"
)
_BARE_NAME = re.compile(r"[A-Za-z_]+(?![\w.\-/+=])")
_LABELLED_PUBLIC = re.compile(  # key: "…", "key" => ["…"], {"key", "…"}, <meta name="key" content="…">
    r"([\w.-]+)\\?[\"']?[ \t]*(?:=>|[:=,])[ \t]*\[?[ \t]*\\?[\"']?$"
    r"|name=\\?[\"']([\w.-]+)\\?[\"'][ \t]+(?:content|value)=\\?[\"']$"
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
    words = [w.lower() for part in re.split(r"[^A-Za-z0-9]+", key) for w in _CAMEL_PARTS.findall(part)]
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
    if _CALL_OR_INDEX.match(text, start) or _TYPE_OR_CONSTANT.match(text, start):
        return True
    name = _BARE_NAME.match(text, start)
    if name is None or not key:
        return False
    named, keyed = _key_words(name.group(0)), _key_words(key)
    return bool(named) and bool(keyed) and named[-1] == keyed[-1]  # not PG_PASSWORD: postgres


def _is_version(match: re.Match[str]) -> bool:
    """A dotted quad that is a version: after ``version`` or ``==``, or in ``from A to B`` when the other
    side is no address (Bump x from 2.31.0.10 to 2.31.0.20240106; traffic from one address to another is
    still masked)."""
    text = match.string
    if _VERSION_BEFORE.search(text[max(0, match.start() - 12) : match.start()]):
        return True
    for pair in _FROM_TO.finditer(text, max(0, match.start() - 40), min(len(text), match.end() + 40)):
        sides = pair.group(1), pair.group(2)
        if match.group(0) in sides and not all(re.fullmatch(_IPV4, side) for side in sides):
            return True
    return False


def _is_secret(pattern: Pattern, value: str, match: re.Match[str]) -> bool:
    name = pattern.name
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
    if name == "ip_address":
        return not _is_version(match)
    if name == "card_number":
        digits = re.sub(r"\D", "", value)
        return 13 <= len(digits) <= 19 and luhn_ok(digits)
    if name == "secret_assignment":
        if match.re.groups >= 5:
            if match.group(5) is not None and "(" in match.string[match.end(1) : match.start(5)]:
                return False  # f(password: …), usernamePassword(credentialsId: …): a name, not a literal
            if match.group(4) is not None and re.search(r"\s", value):
                return False  # KEY=`etcdctl get /secret`: a command substitution, not a literal
            if match.group(5) is not None and _is_code(match.group("key"), match.string, match.start(5)):
                return False
            if match.group(5) is not None and "," in match.string[match.end("key") : match.start(5)]:
                return False  # get("/x/:token", ReviewController, …): in a list a literal is quoted
        return _assignment_is_secret(match.group("key"), value)
    if name == "secret_flag":
        flag = match.group(0).split("=")[0].split()[0] if match.group(0).split() else ""
        return not _NOT_SECRET_KEY.search(flag) and not _is_identifier(value) and "://" not in value
    if name == "secret_phrase":  # "the password hunter2x": only what looks like a password, not prose
        core = value.rstrip(".")
        if _REFERENCE.match(core):
            return False
        has_digit, has_alpha = any(c.isdigit() for c in core), any(c.isalpha() for c in core)
        mixed = any(c.isupper() for c in core[1:]) and any(c.islower() for c in core)  # not just a capital
        return (has_digit and has_alpha) or (mixed and len(core) >= 12) or random_looking(core)
    if name == "basic_auth":  # user:password: the password is the secret (a user name alone is not), or,
        if value.strip("\"'").startswith("+"):
            return False  # date -u +%Y-%m-%dT%H:%M:%SZ: a date format, not credentials
        user, _, password = value.strip("\"'").rpartition(":")  # with an empty password, the user (an API key)
        password = password.strip("\"'{} ") or user.strip("\"'{} ")
        return (
            not re.fullmatch(r"[a-z]{0,10}", password)
            and not looks_placeholder(password)
            and "[" not in password
            and not password.startswith("$")
        )
    if name == "auth_header":
        return not _is_identifier(value) and "://" not in value and not _is_code("", match.string, match.start(1))
    if name == "high_entropy":
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
    return True


class PrivacySanitizer:
    """Masks every match of the built-in patterns and the user's own (``name``, regex) patterns, and every
    other occurrence of a secret it has learned (a password seen once in a URL is masked in prose too)."""

    def __init__(self, extra: Iterable[tuple[str, str]] = (), known: dict[str, str] | None = None) -> None:
        self._extra = tuple(extra)
        user = tuple(_p(name, rx) for name, rx in self._extra)
        self.patterns: tuple[Pattern, ...] = user + BUILTIN_PATTERNS
        self.known: dict[str, str] = dict(known or {})  # secret literal → kind

    def learning(self, text: str) -> PrivacySanitizer:
        """A sanitizer that also masks, anywhere, each secret found somewhere in ``text`` (a whole
        transcript): the copy lives as long as one reflection and is never stored."""
        found: dict[str, str] = dict(self.known)
        self.sanitize(text, found)
        return PrivacySanitizer(self._extra, found)

    def sanitize(self, text: str, learn: dict[str, str] | None = None) -> tuple[str, dict[str, int]]:
        """The masked text and how many of each kind were masked."""
        counts: dict[str, int] = {}
        for pattern in self.patterns:
            text = pattern.regex.sub(lambda m, p=pattern: self._mask(m, p, counts, learn), text)  # type: ignore[misc]
        for literal in sorted(self.known, key=len, reverse=True):
            if literal in text:
                counts[self.known[literal]] = counts.get(self.known[literal], 0) + text.count(literal)
                text = text.replace(literal, f"[REDACTED:{self.known[literal]}]")
        return text, counts

    def mask(self, text: str) -> str:
        return self.sanitize(text)[0]

    @staticmethod
    def _mask(match: re.Match[str], pattern: Pattern, counts: dict[str, int], learn: dict[str, str] | None) -> str:
        group = pattern.group
        if pattern.name == "secret_assignment" and group == 0:  # the value is whichever quoting matched
            group = next(i for i in range(2, 6) if match.group(i) is not None)
        value = match.group(group)
        if value is None or not _is_secret(pattern, value, match):
            return match.group(0)
        counts[pattern.name] = counts.get(pattern.name, 0) + 1
        if learn is not None and pattern.name not in ("home_user", "ip_address"):
            for literal in {value, *value.strip("\"'").split(":")}:
                if len(literal) >= 6:
                    learn[literal] = pattern.name
        placeholder = f"[REDACTED:{pattern.name}]"
        if group == 0:
            return placeholder
        start, end = match.span(group)
        whole_start = match.start(0)
        full = match.group(0)
        return full[: start - whole_start] + placeholder + full[end - whole_start :]
