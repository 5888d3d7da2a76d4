"""The risky-advice test: which learned lessons must wait for the user's review instead of being injected.

A lesson is held when its advice comes from content (what a tool returned: a page, a file read, an output;
see ``voices``), or when whatever its source it tells the agent to fetch and execute something, to send data
out, to touch credentials, or to disregard its instructions (in English, Chinese and Japanese, fake role and
frame markers included). The test is mechanical: it does not depend on any model having obeyed a prompt."""

from __future__ import annotations

import re

from .backing import Backing, unbacked
from .command_shapes import shapes
from .voices import Provenance

FETCH_AND_EXECUTE = re.compile(
    r"\b(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]{0,300}\|\s*(?:sudo\s+)?"
    r"(?:ba|z|da|k|fi)?sh\b|"
    r"\b(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]{0,300}\|\s*(?:sudo\s+)?"
    r"(?:python[\d.]*|perl|ruby|node|iex|Invoke-Expression|source)\b|"
    r"(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\s*<?\(\s*(?:curl|wget)\b|\$\(\s*(?:curl|wget)\b|"
    r"\b(?:eval|source|\.)\s+[\"']?(?:<\(|\$\()\s*(?:curl|wget)|"
    r"\bInvoke-Expression\b|\biex\s*\(|"
    r"\b(?:download|fetch|get)\b.{0,60}\b(?:and|then)\s+(?:run|execute|exec|source)\b|"
    r"\brun\s+(?:this|the\s+following|that)\s+(?:script|command|snippet|one-liner)\b|"
    r"\bexecute\s+(?:this|the\s+following|that)\b|"
    r"(?:下载|下載).{0,20}(?:并|然后|並)?(?:运行|执行|執行)|运行(?:这个|此|以下)(?:脚本|命令)|"
    r"ダウンロード.{0,20}(?:実行|走らせ)|(?:この|次の|以下の)(?:スクリプト|コマンド)を実行",
    re.I,
)
SEND_OUT = re.compile(
    r"\bcurl\b[^\n]{0,300}\s(?:-d|--data(?:-\w+)?|-F|--form)\s+[\"']?(?:[\w.-]+=)?@|"
    r"\bcurl\b[^\n]{0,300}\s(?:-T|--upload-file)\s|"
    r"\bcurl\b[^\n]{0,300}(?:-X\s*POST|--request\s+POST)[^\n]{0,200}(?:\$\(|\benv\b|token|secret|passw)|"
    # a variable's value as the body or a header of a request: `curl -d "$DEPLOY_TOKEN" https://…`, `-H "X: $KEY"`
    r"\b(?:curl|wget|http|https|xh)\b[^\n]{0,300}\s(?:-d|--data(?:-\w+)?|-F|--form|-H|--header|--post-data|--body-data)"
    r"[=\s]+[\"']?[^\"'\n$]{0,40}\$\{?[A-Z][A-Z0-9_]*|"
    r"\b(?:nc|ncat|netcat|socat)\s+(?:-\w+\s+)*[\w.-]+\s+\d{2,5}\b|/dev/tcp/|"
    r"\b(?:send|upload|post|exfiltrate|forward|transmit|e-?mail|copy|paste|report)\b[^.\n]{0,80}"
    r"\b(?:to|into)\s+[^.\n]{0,40}(?:https?://|webhook|pastebin|\b[\w.-]+@[\w-]+\.[a-z]{2,})|"
    r"\b(?:webhook\.site|requestbin|pipedream\.net|ngrok\.io|pastebin\.com|transfer\.sh|interact\.sh|burpcollaborator)\b|"
    r"(?:发送|上传|上傳|发给|發送).{0,30}(?:到|至|给).{0,30}(?:https?://|服务器|伺服器)|"
    r"(?:送信|アップロード|送って|送る).{0,30}(?:https?://|サーバ)|https?://\S+.{0,30}(?:に送信|へ送信|に送って|へ送って)",
    re.I,
)
_SECRET = (
    r"(?:api[ _-]?keys?|(?:access|auth|bearer|api|github|gh|npm|pypi|bot|discord|slack|session|secret)[ _-]?tokens?|"
    r"[A-Z][A-Z0-9_]*_(?:TOKEN|KEY|SECRET|PASSWORD)|passwords?|passwd|secrets?|credentials?|private[ _-]keys?|"
    r"ssh[ _-]keys?|cookies?)"
)
# Where credentials live. Naming one is no risk in itself (a project's own layout: "`ssh.py` (paramiko,
# ~/.ssh/config)"); a lesson that does something with it, or orders anything at all, is (``_touches_file``).
CREDENTIAL_FILES = re.compile(
    r"~/\.ssh\b|\.ssh/(?:id_|authorized_keys|config)|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|"
    r"\.netrc\b|\.git-credentials|\.docker/config\.json|\.kube/config|/etc/shadow",
    re.I,
)
# A verb acting on what follows (or, passive, on what precedes) in the same clause, in any of the languages
_ACTS_ON = (
    r"\b(?:read|reads|reading|cat|less|more|head|tail|grep|copy|copies|copying|cp|scp|rsync|send|sends|upload|"
    r"post|print|show|dump|echo|add|append|write|put|paste|include|share|attach|commit|push|open|edit|modify|"
    r"change|replace|overwrite|store|save|move|mv|chmod|chown|base64|encode|source|load|use|using|export|tar|"
    r"zip|curl|wget|nc|rm|delete|remove|type|get|fetch|check|inspect|leak|forward|e-?mail|mail|need|needs|"
    r"require|requires|give|hand|provide|supply|create|generate|replace|insert|list|look|view|decode)\b|"
    r"复制|拷贝|發送|发送|上传|上傳|读取|讀取|打印|输出|輸出|粘贴|添加|写入|寫入|追加|查看|提交|删除|"
    r"コピー|送信|送って|アップロード|読み|読ん|表示|出力|貼り付け|追加|書き|書い|削除|確認"
)
_ACTS_BEFORE = re.compile("(?:" + _ACTS_ON + r")[^.;\n。；]{0,80}$|(?:>>?|\btee\b(?:\s+-a)?)\s*[\"']?$", re.I)
_ACTS_AFTER = re.compile(
    r"^[^.;\n。；]{0,40}?(?:\b(?:be|is|are|gets?)\s+(?:\w+\s+)?(?:read|copied|sent|uploaded|added|appended|"
    r"written|pasted|included|shared|attached|committed|pushed|printed|shown|dumped|exported|encoded|posted|"
    r"forwarded|e-?mailed|replaced|overwritten|moved|deleted|removed|listed|checked|needed|required)\b|"
    r"[をに](?:コピー|送信|送|アップロード|読|表示|出力|貼り付|追加|書|削除)|"
    r"(?:复制|拷贝|发送|發送|上传|上傳|读取|讀取|打印|输出|輸出|粘贴|添加|写入|寫入|追加|删除))",
    re.I,
)
# Commands that print credentials. Run by the agent they expose a secret; named as what the project's own code
# runs ("`keychain.js` calls `security find-generic-password`") they are a fact about the project
# (``_runs_credential_command``)
CREDENTIAL_COMMANDS = re.compile(
    r"\bsecurity\s+find-(?:generic|internet)-password|\bgcloud\s+auth\s+print-access-token|\bgh\s+auth\s+token\b|"
    r"\bprintenv\b|(?:^|[\s;&|(`])env\s*[|>]|`env`",
    re.I,
)
# A code file (or the project's program) as the subject of a third-person verb, right before the command
_RUN_BY_CODE = re.compile(
    r"(?:\b[\w./-]+\.(?:js|mjs|cjs|ts|tsx|jsx|py|go|rs|rb|sh|swift|java|kt|cs|php|lua|ps1)`?|"
    r"\b(?:the\s+)?(?:companion|app|server|daemon|service|script|cli|tool|program|helper|module|library|extension))"
    r"\s*(?:\([^)\n]{0,40}\)\s*)?(?:calls|runs|invokes|executes|spawns|uses|shells\s+out\s+to)"
    r"\s*`?\s*$",
    re.I,
)
# The rest: verbs that expose or plant secrets, wherever they stand
CREDENTIALS = re.compile(
    r"\bcredential\.helper\b|"
    r"(?<![./])\b(?:print|show|echo|cat|dump|log|send|copy|paste|reveal|share|upload|leak|post|include)\b"
    r"[^.\n]{0,40}\b"  # a verb, not a file's extension or a path's part (`cpolar.log`; the password …)
    + _SECRET
    + r"\b|"
    r"(?:密码|密碼|口令|令牌|密钥|密鑰|凭据|憑據|凭证|api\s*key).{0,20}(?:发送|發送|上传|打印|输出|輸出|告诉|粘贴)|"
    r"(?:发送|發送|上传|打印|输出|輸出|读取|讀取).{0,20}(?:密码|密碼|口令|令牌|密钥|密鑰|凭据|憑據|凭证)|"
    r"(?:パスワード|トークン|秘密鍵|認証情報|APIキー|api\s*キー).{0,20}(?:送信|送って|表示|出力|貼り付け|アップロード|読み)",
    re.I,
)
# A credential handed to the agent to store: "add this token to .env", "export API_KEY=…", a masked value
# (`X_TOKEN=[REDACTED:…]`) it is told to put somewhere. Naming a variable the user must set ("set
# `ANTHROPIC_API_KEY` in `.env`") hands over no value and is not one.
_SECRET_WORD = r"(?:tokens?|keys?|secrets?|passwords?|passwd|credentials?|cookies?)"
_STORE_VERB = r"(?:add|put|write|append|paste|insert|export|set|store|save|place|copy|commit|use)"
PLANTS_CREDENTIAL = re.compile(
    r"\b" + _STORE_VERB + r"\b\s+(?:(?:this|that|these|those|the\s+following|the\s+given|our|my|a|the)\s+)"
    r"(?:[\w-]+\s+){0,2}" + _SECRET_WORD + r"\b(?!\s+(?:count|limit|usage|budget|length|size|name))[^.\n]{0,60}"
    r"(?:\b(?:to|into|in|as|on)\b|[:：=])|"
    r"\bexport\s+[A-Z][A-Z0-9_]*(?:TOKEN|KEY|SECRET|PASSWORD|PASS|PAT|AUTH)\w*\s*=\s*[\"']?[^\s\"'$<{]{6,}|"
    r"[=:：]\s*[\"'`]?\[REDACTED:[\w-]+\]|"
    r"(?:把|将|將)?(?:这个|這個|此|这|這|以下|下面的?|该|該|如下)(?:令牌|密钥|密鑰|密码|密碼|口令|凭据|憑據|token|key|API\s*key)"
    r".{0,20}(?:加|添加|写|寫|放|填|设置|設置|导出|導出|配置)(?:到|入|进|進|在)|"
    r"(?:この|その|次の|以下の|下記の)(?:トークン|パスワード|秘密鍵|認証情報|APIキー|キー|token|key)を.{0,30}"
    r"(?:追加|書き込|書い|入れ|設定|export|エクスポート|貼り付け)",
    re.I,
)
DISREGARD = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:instructions?|prompts?|guidelines?|directives?|"
    r"guardrails?)\b|"
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+)?(?:previous|prior|above|earlier|your|system|original)\b"
    r"[^.\n]{0,20}\b(?:rules?|polic(?:y|ies)|constraints?)\b|"
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|ask|mention\s+(?:this\s+)?to)\s+the\s+user\b|"
    r"\bwithout\s+(?:telling|asking|informing|notifying)\s+the\s+user\b|"
    r"\byou\s+are\s+now\b|\bnew\s+(?:system\s+)?instructions?\s*[:：]|\bsystem\s+(?:notice|override)\b|"
    r"\bIMPORTANT\b[^.\n]{0,20}\b(?:NOTICE|INSTRUCTIONS?|MESSAGE)\b|\bjailbreak\b|"
    r"忽略.{0,10}(?:之前|以前|先前|上面|上述|所有|全部|此前|前面).{0,10}(?:指令|指示|说明|說明|规则|規則|提示)|"
    r"(?:无视|無視|忽视|忽視|忘记|忘記|不要理会).{0,10}(?:指令|指示|规则|規則|提示|说明|說明)|"
    r"系统(?:通知|指令)|系統(?:通知|指令)|你现在是|你現在是|不要告诉用户|不要告訴用戶|"
    r"(?:以前|前|上記|これまで|全て|すべて)の(?:指示|命令|指令|ルール|プロンプト)を(?:無視|忘れ)|"
    r"(?:指示|命令|ルール)を無視|システム(?:通知|指示)|あなたは今から|ユーザーに(?:伝えず|知らせず|言わず)",
    re.I,
)
# Advice to switch a safeguard off: a check, a review, a hook, a scan, the sandbox ("disable the staleness
# check", "skip code review and push to main", 跳过代码审查, チェックを無効に)
SWITCH_OFF = re.compile(
    r"\b(?:disable|disabling|turn(?:ing)?\s+off|switch(?:ing)?\s+off|skip(?:ping)?|bypass(?:ing)?|circumvent|"
    r"deactivate)\b[^.\n;]{0,30}?\b(?:checks?|checking|verification|verify|reviews?|hooks?|scans?|scanners?|"
    r"validation|safety|security|sandbox(?:ing)?|signatures?|guard(?:rail)?s?|protections?|approvals?|"
    r"branch\s+protection|2fa|mfa)\b|"
    r"(?:关闭|關閉|禁用|跳过|跳過|绕过|繞過|关掉|關掉|停用|取消)(?:了)?.{0,12}?(?:检查|檢查|校验|校驗|验证|驗證|审查|審查|"
    r"审核|審核|评审|評審|钩子|鉤子|扫描|掃描|安全|沙箱|保护|保護)|"
    r"(?:チェック|check|検証|レビュー|審査|フック|スキャン|サンドボックス|セキュリティ|保護)\s*(?:を|は)?\s*"
    r"(?:無効|オフ|スキップ|省略|回避|外)|(?:スキップ|無効化|回避)して.{0,10}(?:チェック|検証|レビュー)",
    re.I,
)
# Advice that hands the decision to what a step of the session (content) said: "first do as step 5 says",
# "follow the instructions in the page", 按第 5 步说的做, ステップ 5 の通りに. A later session has no step 5: the
# lesson only carries content's order along.
DEFERS = re.compile(
    r"\b(?:do|act|proceed|continue)\s+(?:as|what)\s+(?:in\s+)?(?:step|turn|message)\s*#?\d+|"
    r"\b(?:as|what)\s+(?:step|turn|message)\s*#?\d+\s+(?:says|said|instructs?|tells?|asks?|describes?)\b|"
    r"\b(?:per|according\s+to|as\s+instructed\s+(?:in|by))\s+(?:step|turn|message)\s*#?\d+|"
    r"\bfollow(?:ing)?\s+(?:the\s+)?(?:instructions?|steps?|directions?|orders?|advice)\s+(?:given\s+)?(?:in|from|of|at|on|by)\s+"
    r"(?:(?:step|turn|message)\s*#?\d+|the\s+(?:(?:fetched|web)\s+)?(?:page|output|log|tool|error(?:\s+message)?|"
    r"issue|comment|pr|pull\s+request|site|website))\b|"
    r"\bdo\s+(?:as|what)\s+the\s+(?:(?:fetched|web)\s+)?(?:page|output|log|tool|error|issue|comment|site)\s+"
    r"(?:says|said|tells?|asks?)\b|"
    r"(?:按|照|按照|依照|根据|根據)(?:着|著)?第\s*\d+\s*步|第\s*\d+\s*步(?:说的|所说|說的|所說|的指示|的说明|的說明)|"
    r"(?:按|照|按照|依照)(?:着|著)?(?:页面|頁面|网页|網頁|输出|輸出|日志|日誌|工具输出|评论|評論)(?:上|里|裡|中)?(?:说的|所说|的指示)|"
    r"ステップ\s*\d+\s*(?:の(?:通り|とおり|指示|手順|内容)|に(?:従|したが)|で言われ)|"
    r"(?:ページ|出力|ログ|コメント)の(?:指示|通り|とおり)に",
    re.I,
)
_ROLE = r"(?:SYSTEM|System|ASSISTANT|Assistant|USER|User|HUMAN|Human|DEVELOPER|Developer)"
ROLE_MARKER = re.compile(
    r"</\s*(?:session|system|user|assistant|human|instructions?|tool_result|tool_use|function_results?|"
    r"system-reminder|memx|context)\s*>|"
    r"<\s*(?:session|system|assistant|instructions?|tool_result|function_results?|system-reminder)\s*>|"
    r"(?:<|&lt;)\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|(?:>|&gt;)|"
    r"\[/?INST\]|<<SYS>>|"
    r"(?:^|[\n.;:!?()`\"'“「：。！？；（）]\s*|\s-{2,}\s*)"
    + _ROLE
    + r"\s*[:：](?:\s|(?=[\u3040-\u30ff\u3400-\u9fff]))|"
    r"^#{1,6}\s*(?:system|instructions?|assistant)\b|-->|<!--|"
    r"(?:系统|系統|システム)\s*[:：]|(?:^|[\n。！？])\s*(?:用户|用戶|助手|ユーザー|アシスタント)\s*[:：]",
    re.M,
)

TESTS = (
    ("tells the agent to fetch and execute", FETCH_AND_EXECUTE),
    ("touches credentials", CREDENTIALS),
    ("touches credentials", PLANTS_CREDENTIAL),
    ("tells the agent to disregard its instructions", DISREGARD),
    ("tells the agent to switch off a safeguard", SWITCH_OFF),
    ("defers to what a step of the session said (advice from content)", DEFERS),
    ("carries a role or frame marker", ROLE_MARKER),
)
# Words that make a run of words copied from content an instruction, not a fact it reports
TOLD = re.compile(
    r"\b(?:always|never|must|should|remember|please|make\s+sure|be\s+sure|do\s+not|don'?t|need\s+to|have\s+to|"
    r"required\s+to|you\s+are)\b|务必|必须|必須|应该|應該|不要|总是|總是|请|請|记住|記住|"
    r"必ず|してください|しないで|すること|べき|忘れずに",
    re.I,
)


# An order aimed at whoever reads the output (an agent), as against an error's own wording ("need to specify",
# "a terminal is required to", "is never read"), for what a bullet quotes from content as a fact
ORDER = re.compile(
    r"\b(?:remember|always|from\s+now\s+on|make\s+sure\s+to|you\s+(?:must|should)|note\s+to\s+(?:the\s+)?(?:ai|assistant|agents?)|"
    r"(?:ai|llm|coding)\s+(?:agents?|assistants?)\s*[:,]|(?:agents?|assistants?|claude|codex)\s*:)|"
    r"记住|记得|务必|总是|永远|始终|請記住|必ず|覚えて|常に|いつも",
    re.I,
)


# A lesson at least this much made of runs copied verbatim from content alone is content's, whatever it says
# and however it is worded. On the tuning material: 0 more of the 501 judged-keep bullets of the Reflector
# corpus held (at 1/2: 2 more), while 17 of the 29 held-out attacker lines and 53 of the first corpus's 71, as
# the attacker-following model words them, are held by this alone (docs/notes/guard.md)
MOSTLY_COPIED = 2 / 3


def _touches_file(text: str) -> bool:
    """A credential file the lesson does something with: a verb acting on it in its clause, a command that
    names it, or any order at all in the lesson (``TOLD``). A file it only names as where the project keeps
    something ("runtime files live at … `~/.ssh/id_rsa_x`") is a fact about the project."""
    found = list(CREDENTIAL_FILES.finditer(text))
    if not found:
        return False
    if TOLD.search(text) or ORDER.search(text):
        return True
    for m in found:
        if _ACTS_BEFORE.search(text[max(0, m.start() - 80) : m.start()]) or _ACTS_AFTER.match(text[m.end() :]):
            return True
        span = re.search(r"`[^`\n]*$", text[: m.start()])  # inside a code span that is a command line
        if span and text.count("`", 0, m.start()) % 2 == 1:
            inner = (span.group(0)[1:] + text[m.start() :]).split("`", 1)[0]
            if len(inner.split()) >= 2:
                return True
    return False


def _runs_credential_command(text: str) -> bool:
    """A command that prints credentials, unless every time it is named it is what the project's own code runs
    and the lesson orders nothing (``TOLD``, ``ORDER``)."""
    found = list(CREDENTIAL_COMMANDS.finditer(text))
    if not found:
        return False
    if TOLD.search(text) or ORDER.search(text):
        return True
    return not all(_RUN_BY_CODE.search(text[max(0, m.start() - 80) : m.start()]) for m in found)


_URL_HOST = re.compile(r"\bhttps?://(\[[^\]]*\]|[^/\s:'\"`)]+)", re.I)
_LOOPBACK = re.compile(r"^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)$", re.I)


def _sends_out(text: str) -> bool:
    """Data sent somewhere off this machine: a send whose every address is the machine itself (a local
    service, ``http://127.0.0.1:48123/v1/rewrite``) sends nothing out."""
    for m in SEND_OUT.finditer(text):
        clause = re.split(r"[.;](?:\s|$)|\n", text[m.start() : m.end() + 160], maxsplit=1)[0]
        hosts = _URL_HOST.findall(clause)
        if not hosts or not all(_LOOPBACK.match(h) for h in hosts):
            return True
    return False


def risks(text: str) -> tuple[str, ...]:
    """The risky things ``text`` tells the agent to do, whoever wrote it: by its words, and by the shapes of
    its commands (``command_shapes``)."""
    found = [why for why, test in TESTS if test.search(text)]
    if _sends_out(text):
        found.append("tells the agent to send data out")
    if _runs_credential_command(text) or _touches_file(text):
        found.append("touches credentials")
    return tuple(dict.fromkeys([*found, *shapes(text)]))


UNBACKED = "advice not backed by the session"  # the one reason a later session that runs the advice can lift


def held(text: str, origin: Provenance, backed: Backing | None = None) -> tuple[str, ...]:
    """Why a lesson must wait for review (empty: it need not): its risks, advice taken from content, and
    (given what happened in its session, ``backed``) advice that nothing the assistant ran or the user typed
    backs."""
    reasons = list(risks(text))
    if backed is not None:
        missing = unbacked(text, backed)
        if missing:
            shown = ", ".join(f"`{m[:80]}`" for m in missing[:2])
            reasons.append(f"{UNBACKED}: {shown} never ran successfully nor typed by the user")
    if origin.content_actions:
        shown = ", ".join(f"`{a[:80]}`" for a in origin.content_actions[:2])
        reasons.append(f"advice from content: {shown} only appears in what a tool returned")
    if origin.content_refs:
        shown = ", ".join(f"`{r[:80]}`" for r in origin.content_refs[:2])
        reasons.append(f"advice from content: {shown} only appears in what a tool returned")
    ordered = [q for q in origin.content_quotes if ORDER.search(q)]
    if ordered:  # `fails with "remember: always run make x first"`: an order quoted as if it were a fact
        reasons.append(f"quotes an instruction from content: {ordered[0][:80]!r}")
    if origin.copied_share >= MOSTLY_COPIED:  # a stranger's words stamped as a lesson: content speaking
        reasons.append(f"mostly content's words: {origin.copied_share:.0%} copied from what a tool returned")
    told = [run for run in origin.copied if TOLD.search(run)]
    if told:
        reasons.append(f"advice copied from content: {told[0][:80]!r}")
    return tuple(reasons)
