"""What the PrivacySanitizer looks for (SPEC §4.5): one regex per kind of secret or personal datum, with
the group that holds the value. Whether a match is a secret is decided in ``sanitizer.py``."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[str]
    group: int = 0  # which group holds the secret (0: the whole match)


def pattern(name: str, regex: str, group: int = 0) -> Pattern:
    return Pattern(name, re.compile(regex), group)


_B = r"(?<![\w+/-])"  # start of a token
_E = r"(?![\w+/=-])"  # end of a token
_NAME_CHAR = r"[^/\\\s\"':`,;()<>\[\]{}|*?]"  # a character of a home folder's user name
_NAME_END = r"[^/\\\s\"':`,;()<>\[\]{}|*?.]"  # its last character: not a dot (a sentence's end)
# Where a key name may begin: the first word character of a run of [\w.-], as \b found it, but tried once
# per run, not at each character (a 100,000-character run was read again from every one of its positions).
# What follows the secret word is capped ({0,80}) for the same reason.
# An unquoted value ends at white space, a quote, or a JSON escape of one (\n, \t, \"): in a raw
# transcript line, secret_key_base: ...\n\n is an elided value followed by line breaks.
_BARE = r"(?:[^\s\"'\\]|\\(?![nrt\"])){3,}[^\s\"',;)\\]"
_RUN_START = r"(?<![\w.\-])[.\-]*+\b"
_SECRET_WORD = (
    r"(?:password|passwd|pwd|pw|pass|passphrase|secrete?|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credentials?|auth|key|login|access[_.-]?id)"
)
IPV4 = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}"
_CJK_SECRET_WORD = (
    r"密码|口令|密钥|秘钥|私钥|令牌|凭证|凭据|授权码|パスワード|パスフレーズ|暗証番号|秘密鍵|秘密キー|トークン|"
    r"シークレット|(?:API|api)[ \t]?(?:密钥|キー)"
)
_ZH_COPULA = r"(?:[我你他她们已经都也就]{0,3})(?:是|为|為|(?:改|设|设置|换|变|重置)(?:成|为)了?)"  # 密码我设成了 …
JA_PARTICLE = r"は|が|を|[ \t]"  # パスワードは …, パスワード K8s-… (a value after a space alone)
_CJK_VALUE = r"[「『\"'“‘`]?([!#-&(-~]{4,200}?)(?=[」』\"'”’`]|[.,;。，、；！？)]?(?:\s|$|[^\x00-\x7f]))"
_QUOTED = r"""\\*(?:"([^"\\\n]{4,200})\\*"|'([^'\\\n]{4,200})\\*')"""  # "…" or '…', escaped in JSON or not
_OPERATOR = r"(?:::?:?=|\?=|:=|=>|!==?|===?|=|:|[\"'][ \t]*,)"

# A Discord id (17 to 21 decimal digits) in base64: each three digits are four characters of these classes,
# and one or two digits left over end it in two or three; a random token almost never reads so.
_DISCORD_ID = r"[MNO](?:[DTjz][AEIMQUYcgk][w-z0-5][MNO]){5,6}(?:[DTjz][AEIMQUYcgk][w-z0-5]|[DTjz][AEIMQUYcgk]|[AQgw])"

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
        # Discord bot tokens (base64 of a numeric id first; a digit in it, unlike a dotted Java name)
        r"[MNO](?=[\w-]{0,24}\d)[\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}",
        _DISCORD_ID + r"\.[\w-]{6}\.[\w-]{25,45}",  # the same, any id length and either signature length
        r"dckr_(?:pat|oat)_[\w-]{20,}",  # Docker Hub personal and organisation access tokens
        r"\d{8,10}:AA[\w-]{33}",  # Telegram bot tokens
        r"gsk_[A-Za-z0-9]{52}",  # Groq
        r"r8_[A-Za-z0-9]{37}",  # Replicate
        r"xai-[A-Za-z0-9]{80}",  # xAI
        r"GOCSPX-[\w-]{28}",  # Google OAuth client secrets
        r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",  # LangSmith
        r"sbp_[a-f0-9]{40}",  # Supabase
        r"tskey-(?:auth|api|client|scim|webhook)-[\w-]{16,}",  # Tailscale
        r"nfp_[A-Za-z0-9]{36}",  # Netlify
        r"figd_[\w-]{40,}",  # Figma
        r"bkua_[a-f0-9]{40}",  # Buildkite
        r"CCIPAT_\w{20,}",  # CircleCI
        r"pcsk_\w{5,}_\w{40,}",  # Pinecone
        r"whsec_[A-Za-z0-9+/=]{32,}",  # Stripe (and Svix) webhook signing secrets
        r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}",  # Resend
        r"secret_[A-Za-z0-9]{43}",  # Notion internal integrations (before ntn_)
        r"NRAK-[A-Z0-9]{27}",  # New Relic user keys
        r"pul-[a-f0-9]{40}",  # Pulumi
        r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}",  # PlanetScale
        r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",  # Brevo (Sendinblue)
        r"shippo_(?:live|test)_[a-f0-9]{40}",
        r"duffel_(?:test|live)_[\w=-]{43}",
        r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",  # Dynatrace
        r"EZ[AT]K[A-Za-z0-9]{54}",  # EasyPost
        r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X",  # Flutterwave secret keys
        r"fio-u-[\w=-]{64}",  # Frame.io
        r"pat\.[\w-]{22}\.[0-9a-f]{24}\.\w{20}",  # Harness
        r"[a-z0-9]{14}\.atlasv1\.[\w=-]{60,70}",  # Terraform Cloud
        r"(?<!\.)ico-[A-Za-z0-9]{32}",  # Infracost (not favicon.ico-<hash>.png)
        r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}",  # SettleMint
        r"tfp_[\w.=-]{59}",  # Typeform
        r"dnkey-[\w=-]{26}-[\w=-]{52}",  # Defined Networking
        r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",  # Airtable personal access tokens
        r"sk\.eyJ[\w-]{50,}\.[\w-]{20,}",  # Mapbox secret tokens (pk. ones are public)
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

# A password given to a command-line client on the flag that means password for that client: glued to
# mysql's -p (-pS3cr3t, -p'…', -p"…"; mysql -p alone prompts, -P is the port), after sshpass -p, docker or
# podman login -p, mongo's -p, redis-cli -a, the ldap tools' -w, smbclient's -U user%password. The same
# flags mean other things elsewhere (mkdir -p, cp -p, ssh -p 22, psql -p 5432), so the client is named, and
# the flag must lie in the same command (no |, ;, & or line break between).
_VALUE = r"""(?P<q>['"]?)((?<=')[^'\n]+|(?<=")(?:[^"\\\n]|\\.)+|(?<!['"])(?![-\\])[^\s'"|;&]+)(?P=q)"""
_SAME_COMMAND = r"\b[^\n|;&]*?[ \t]"
_CLIENT_FLAGS = "|".join(
    [
        r"(?:mysql(?:dump|admin|import|show|check|pump|binlog|slap)?|mariadb(?:-dump|-admin)?)(?:\.exe)?"
        + _SAME_COMMAND
        + r"-p",
        r"sshpass(?:[ \t]+-[^p\s]\S*)*[ \t]+-p[ \t]*",
        r"(?:docker|podman|nerdctl|buildah)[ \t]+login" + _SAME_COMMAND + r"-p[ \t]+",
        r"(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop)"
        + _SAME_COMMAND
        + r"-p[ \t]+",
        r"redis-cli" + _SAME_COMMAND + r"-a[ \t]+",
        r"ldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn)" + _SAME_COMMAND + r"-w[ \t]+",
        r"(?:smbclient|rpcclient|smbmap|smbcacls)" + _SAME_COMMAND + r"-U[ \t]*['\"]?[^\s%'\"]+%",
    ]
)

BUILTIN_PATTERNS: tuple[Pattern, ...] = (
    pattern(
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[ \t]*[\w-]+:[^\n]*\n)*[A-Za-z0-9+/=\s]{16,}?"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    pattern("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?"),
    pattern("api_token", _B + r"(?:" + _PREFIXED + r")" + _E),
    pattern("slack_webhook", r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]+"),
    pattern("api_token", r"api\.softlayer\.com/soap/v3(?:\.1)?/([a-z0-9]{64})\b", 1),
    pattern("url_credentials", r"(?i)\b[a-z][a-z0-9+.\-]{0,40}://([^\s:/@\"'`]+:[^\s@/\"'`]+)@", 1),
    pattern(
        "basic_auth",
        r"(?:\s-u|--user)[ \t=]+(\"[^\"\n]*:[^\"\n]*\"|'[^'\n]*:[^'\n]*'|(?:\"[^\"]*\"|'[^']*'|[^\s:\"']*):"
        r"(?:\"[^\"]*\"|'[^']*'|[^\s\"']+))",
        1,
    ),
    pattern("bundler_credentials", r"\bBUNDLE_[A-Z0-9_]+__[A-Z]+[\"']?[ \t]*[:=][ \t]*[\"']?([^\s\"';&]+)", 1),
    pattern(
        "auth_header",
        r"(?i)(?<![\w-])(?:authorization|proxy-authorization|x-api-key|x-auth-token|api-key|token)[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:bearer|basic|token|api-token|digest|sso-key)\s+)?([^\s\"',;]{8,})",
        1,
    ),
    pattern("password_flag", r"(?<![\w.-])(?:" + _CLIENT_FLAGS + r")" + _VALUE, 2),
    pattern("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)", 1),
    pattern(
        "secret_flag",
        r"(?i)(?:^|\s)-{1,2}[\w-]*" + _SECRET_WORD + r"[\w-]{0,80}(?:[= ]|\s+)[\"']?([^\s\"'-][^\s\"']{5,})",
        1,
    ),
    pattern(
        "secret_assignment",
        r"(?i)" + _RUN_START + r"(?P<key>[\w.\-]*" + _SECRET_WORD + r"[\w-]{0,80})[\"']?(?:\[\d*\])?[ \t]*"
        r"(?:" + _OPERATOR + r"|\()[ \t]*@?"
        r"(?:\"([^\"\n]{4,200})\"|'([^'\n]{4,200})'|`([^`\n]{4,200})`|(" + _BARE + r"))",
        0,
    ),
    pattern(
        "secret_assignment",
        r"(?i)[\"']([^\"'\n]{6,200})[\"'][ \t]*(?:!==?|===?)[ \t]*(?P<key>[\w.]*" + _SECRET_WORD + r"\w{0,80})\b",
        1,
    ),
    pattern(  # config syntax without an operator: password "…" (nginx, redis.conf, many DSLs)
        "secret_assignment",
        r"(?i)(?<![\w.-])(?P<key>password|passwd|passphrase|secrete?|requirepass|masterauth)[ \t]+\"([^\"\n]{4,200})\"",
        2,
    ),
    pattern(  # a default in code: neo4j_password: str = "…", const TOKEN: string = '…', x: SecretStr = SecretStr("…")
        "secret_assignment",
        r"(?i)" + _RUN_START + r"(?P<key>[\w.\-]*" + _SECRET_WORD + r"[\w-]{0,80})[ \t]*:[ \t]*"
        r"[\w.&'<>\[\]|, \t]{1,60}?[ \t]*=[ \t]*(?:[\w.]+\((?:default[ \t]*=[ \t]*)?)?" + _QUOTED,
        0,
    ),
    pattern(  # a default after a read from the environment: getenv("DB_PASSWORD") or "…", env.TOKEN || '…'
        "secret_assignment",
        r"(?i)(?:getenv\(|environ\.get\(|environ\[|\benv\.|\benv\[)[ \t]*[\"']?"
        r"(?P<key>[\w.\-]*" + _SECRET_WORD + r"[\w-]{0,80})[\\\"'\])]*[ \t]*(?:\bor\b|\|\||\?\?)[ \t]*" + _QUOTED,
        0,
    ),
    pattern(  # the shell's default: ${DB_PASSWORD:-…}, ${DB_PASSWORD:=…}
        "secret_assignment",
        r"(?i)\$\{(?P<key>[\w]*" + _SECRET_WORD + r"\w{0,80}):[-=]([^\s}\"'$]{4,200})\}",
        2,
    ),
    pattern("netrc", r"\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+(\S+)", 1),  # ~/.netrc
    pattern(  # the signature of a pre-signed or SAS URL: the URL is a credential while it lasts
        "url_signature",
        r"(?i)[?&](?:sig|x-amz-signature|x-goog-signature|x-amz-security-token)=([\w%+/=.-]{20,})",
        1,
    ),
    pattern(
        "secret_phrase",
        r"(?i)\b(?:password|passwd|passphrase|pwd|secret|token|credentials?|api[ _-]?key)(?:\s+(?:is|was|of|for|to))?"
        r"\s+[\"'`]?([^\s\"'`,;\u3000-\u9fff\uff00-\uffef]{6,})",
        1,
    ),
    pattern(  # 密码：…, 密码是 …, パスワードは …, APIキー = …: Chinese and Japanese names of secrets
        "secret_assignment",
        r"(?P<key>"
        + _CJK_SECRET_WORD
        + r")[ \t]*(?P<op>[:：=＝]|"
        + _ZH_COPULA
        + "|"
        + JA_PARTICLE
        + r")[ \t]*"
        + _CJK_VALUE,
        3,
    ),
    pattern(  # 用 … 这个密码, … というパスワード: the value before the name
        "secret_phrase",
        r"(?<![!-~])([!#-&(-~]{4,200})[ \t]*(?:这个|这一个|的|という|っていう)[ \t]*(?:" + _CJK_SECRET_WORD + ")",
        1,
    ),
    pattern(
        "ip_address",
        r"(?<![\w.-])(?!(?:10|127|0)\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.)" + IPV4 + r"(?![\w.]|\.\d)",
    ),
    pattern(  # from the start of the run only, as for key names
        "email",
        r"(?<![A-Za-z0-9._%+\-])[._%+\-]*+\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b",
    ),
    pattern("card_number", r"(?<![\w.\-])[3-6]\d{3}(?:[ -]?\d{4}){2}[ -]?\d{1,7}(?![\w\-])"),
    pattern("phone", r"(?<![\w.])\+\d{1,3}[ \-]?\(?\d{1,4}\)?(?:[ \-]?\d{2,4}){2,4}(?![\w.])"),
    pattern("phone", r"(?<![\w.\-])\(?\d{3}\)?[ .\-]\d{3}[ .\-]\d{4}(?![\w.\-])"),
    pattern("phone", r"(?<![\w.\-])0\d{1,4}-\d{1,4}-\d{4}(?![\w.\-])"),  # 090-1234-5678, 03-1234-5678, 010-…
    pattern("phone", r"(?<![\w.\-+])1[3-9]\d[ \-]\d{4}[ \-]\d{4}(?![\w.\-])"),  # mainland China mobile: 138-1234-5678
    pattern(  # 13812345678 bare only beside a word for phone: alone it is as likely a byte count (15032385536)
        "phone",
        r"(?i)(?:手机|电话|联系|致电|携帯|電話|tel|phone|mobile|cell)[^\d\n]{0,8}(?<![\w.\-+])(1[3-9]\d{9})(?![\w.\-])",
        1,
    ),
    # the user's name: no quote, bracket or punctuation a sentence puts after a path, and not ending in a dot
    # ("`/c/Users/...`," is a placeholder and its punctuation; "/Users/alice." ends a sentence)
    pattern("home_user", r"(?:/home/|/Users/|[A-Za-z]:\\+Users\\+)(" + _NAME_CHAR + "*" + _NAME_END + ")", 1),
    pattern("high_entropy", r"(?<![\w+/.~=-])[A-Za-z0-9+/_~-]{20,}={0,2}(?![\w+/=.~-])"),
)
