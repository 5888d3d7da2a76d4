"""The five rules over plain prose, in English, Chinese and Japanese, for transcripts without tool
structure (and for what a person writes in any transcript). Each pattern needs a concrete anchor: an
error text, a fix verb, two values, a tool name; chatter matches none."""

from __future__ import annotations

import re

from ....text.clip import shorten
from ....text.sentences import split_sentences
from ..shell.commands import is_question
from ..transcripts.transcript import Step, Transcript
from .done_reports import done_items, fix_table_rows
from .records import fix_records, told
from .structural import CONFIDENCE, Candidate

_ERROR = re.compile(
    r"\b\w*(?:Error|Exception)\b|\berror\b|\bfailed\b|\bfails\b|traceback|\bcrash\w*|doesn't exist|does not exist|"
    r"\bundefined\b|\bnot found\b|\bmissing\b|\bbroken\b|报错|错误|异常|失败|不存在|エラー|例外|失敗|落ちる|存在しない",
    re.I,
)
_FIX = re.compile(
    r"\bfixed (?:it|this|that)?\s*by\b|\bthe fix (?:is|was)\b|\bsolved (?:it|this)?\s*by\b|\bresolved (?:it )?by\b|"
    r"\bworks now\b|\bturned out\b|\bthe solution (?:is|was)\b|\bfixed by\b|"
    r"解决了|解决方法|解决办法|修复了|原来是|就好了|搞定了|解決しました|解決した|直りました|直った|修正しました|原因は",
    re.I,
)
_RETRY = re.compile(
    r"\btried\b.{3,120}?\b(?:neither|none|nothing|didn't|did not|no luck|still)\b.{0,160}?"
    r"\b(?:finally|in the end|eventually|then|what worked|only)\b.{3,160}?\b(?:worked|fixed|solved|did it|succeeded)\b|"
    r"试了.{1,60}?(?:都不行|没用|不行|失败).{0,80}?(?:最后|后来|终于).{1,80}?(?:成功|解决|可以了|好了)|"
    r"試し.{1,60}?(?:ダメ|駄目|失敗|うまくいかな).{0,80}?(?:最後|結局|ようやく|やっと).{1,80}?(?:解決|成功|うまくいった|動いた)",
    re.I | re.S,
)
_CONFIG = re.compile(
    r"\b(?:changed|set|raised|lowered|bumped|increased|decreased|moved)\s+`?(?P<key>[\w.-]{2,60})`?\s+from\s+"
    r"`?(?P<old>[\w.:/-]+)`?\s+to\s+`?(?P<new>[\w.:/-]+)`?|"
    r"(?:把|将)\s*`?(?P<zkey>[\w.-]{2,60})`?\s*从\s*`?(?P<zold>[\w.:/-]+)`?\s*(?:改成|改为|调到|调成|换成)\s*`?(?P<znew>[\w.:/-]+)`?|"
    r"`?(?P<jkey>[\w.-]{2,60})`?\s*を\s*`?(?P<jold>[\w.:/-]+)`?\s*から\s*`?(?P<jnew>[\w.:/-]+)`?\s*に(?:変更|変え|増や|減ら|上げ|下げ)",
    re.I,
)
_NEW_TOOL = re.compile(
    r"\bfirst time (?:using|with|trying)\s+`?(?P<a>[\w.@/-]{2,40})`?|"
    r"\b(?:switched|migrated|moved) (?:from [\w.-]+ )?to\s+`?(?P<b>[\w.@/-]{2,40})`?|"
    r"\bstarted using\s+`?(?P<c>[\w.@/-]{2,40})`?|"
    r"(?:第一次|首次)(?:用|使用)\s*`?(?P<d>[\w.@/-]{2,40})`?|换成了?\s*`?(?P<e>[\w.@/-]{2,40})`?|"
    r"初めて\s*`?(?P<f>[\w.@/-]{2,40})`?\s*を?使|`?(?P<g>[\w.@/-]{2,40})`?\s*に乗り換え",
    re.I,
)
_REPEAT = re.compile(
    r"\bevery time (?:I|we)\b|\beach time (?:I|we)\b|\bI keep having to\b|\bover and over\b|"
    r"\bby hand (?:on|after|before) every\b|"
    r"\bon every (?:deploy|build|release|run|commit)\b|每次都要|每次都得|每次.{1,20}都(?:要|得)|毎回",
    re.I,
)


_NOT_DONE = re.compile(r"\b(?:be|to|will|would|should|could|must|can|may|might|if)\s+$", re.I)
_ABOUT_ME = re.compile(r"\b(?:my|our)\s+$|我的$|私の$|僕の$", re.I)


def _sentences(text: str) -> list[str]:
    return split_sentences(text)


def _statements(text: str) -> list[str]:
    """The sentences that state something: a question ("is it fixed?", "搞定了吗") states nothing."""
    return [s for s in _sentences(text) if not is_question(s)]


def _first(pattern: re.Pattern[str], text: str) -> str:
    for s in _statements(text):
        if pattern.search(s) and not s.count("`") % 2:  # an odd backtick: a fragment cut inside code
            return shorten(s, 300)
    return ""


_ANCHOR = re.compile(
    r"`[^`]+`|[\w.-]+\.[A-Za-z]{1,5}\b|\b[A-Za-z_]+[A-Z_]\w*\b|\b\w+(?:Error|Exception)\b|--?\w[\w-]+|/\w+"
)


def _concrete(sentence: str) -> bool:
    """A fix sentence names something (a command, a file, an identifier, an error class) or says enough:
    "fixed the linter errors" alone teaches nothing."""
    if sentence.count("`") % 2 or sentence.rstrip().endswith((":", "：")):
        return False  # a fragment cut inside code, or a heading announcing a list
    return bool(_ANCHOR.search(sentence)) or len(sentence) >= 60


def _steps_for_prose(t: Transcript) -> list[Step]:
    if t.format == "claude-code":  # the assistant's narration there is covered by the structural rules
        return [s for s in t.steps if s.role == "user"]
    return [s for s in t.steps if s.role in ("user", "assistant")]


# A rule the person states for the project: "always/never/don't …", "use X instead of Y", "from now on …",
# "不要/必须/以后 …", "…しないで/必ず …". It must name something (a command, a file, a flag), so "don't stop
# until the to-dos are done" or "do NOT edit the plan file" (instructions for this one task) are not rules.
_DIRECTIVE = re.compile(
    r"^(?:please\s+)?(?:always|never|don't|do not|make sure (?:to|you)|from now on|remember to|avoid)\b|"
    r"\b(?:should always|must always|must never|should never|instead of|rather than)\b|"
    r"^(?:请)?(?:不要|别再?|永远不要|一定要|必须|务必|以后|总是)|(?:しないで|使わないで|必ず|禁止|ではなく|今後)",
    re.I,
)


# Someone telling what happens to them ("when I open X instead of Y I get …") reports a problem; a rule
# in the middle of such a sentence ("instead of", "rather than") is then part of the report, not a rule
_REPORT = re.compile(r"^when I\b|\b(?:I am|I'm|I keep|I get|I got|I see|I saw|I was|it keeps|we get|we got)\b", re.I)


def _states_a_rule(sentence: str) -> bool:
    directive = _DIRECTIVE.search(sentence)
    if directive is None:
        return False
    return directive.start() == 0 or not _REPORT.search(sentence)


# What a rule must name: code in backticks, a file name, a path, a flag, an @file mention (a shouted
# "DO NOT" or a word like "to-dos" names nothing)
_NAMED = re.compile(r"`[^`]+`|(?<![\w@])[\w.-]+\.[a-z]{1,5}\b|(?<!\w)--?[a-z][\w-]+|\w/\w|@[\w.-]+\.\w+")


def convention_candidates(t: Transcript) -> list[Candidate]:
    found: list[Candidate] = []
    for step in t.steps:
        if step.role != "user" or len(step.text) > 2000:  # a pasted log or plan is not the person speaking
            continue
        for sentence in _statements(step.text):
            s = sentence.strip(" -*•>")
            if 12 <= len(s) <= 250 and _states_a_rule(s) and _NAMED.search(s) and not s.count("`") % 2:
                facts = {"sentence": shorten(s, 250)}
                found.append(
                    Candidate(
                        "ConventionRule",
                        CONFIDENCE["ConventionRule"],
                        step.index,
                        step.turn,
                        f"ConventionRule:{s[:80]}",
                        facts,
                        step.text[:3000],
                    )
                )
    return found


def prose_candidates(t: Transcript) -> list[Candidate]:
    steps = _steps_for_prose(t)
    found: list[Candidate] = []

    def add(rule: str, step: Step, key: str, facts: dict[str, str], confidence: float | None = None) -> None:
        found.append(
            Candidate(
                rule, confidence or CONFIDENCE[rule], step.index, step.turn, f"{rule}:{key}", facts, step.text[:3000]
            )
        )

    for n, step in enumerate(steps):
        text = step.text
        records = fix_records(text)
        for symptom, cause, fix in records[:10]:
            add("ErrorFixRule", step, f"record:{fix[:60]}", {"story": told(symptom, cause, fix), "error": ""})
        reports = (fix_table_rows(text) + done_items(text)) if step.role == "assistant" and not records else []
        for story in reports[:8]:
            add("ErrorFixRule", step, f"done:{story[:60]}", {"story": story, "error": ""})
        if records or reports:
            continue
        retry = _RETRY.search(text)
        story = _first(_RETRY, text) if retry else ""
        if retry and story:
            add("RetrySuccessRule", step, retry.group(0)[:80], {"story": story})
            continue
        fixes = [s for s in _statements(text) if _FIX.search(s) and _ERROR.search(s) and _concrete(s)]
        for sentence in fixes[:8]:  # a summary may list several errors with their fixes
            add("ErrorFixRule", step, sentence[:80], {"error": "", "fix": shorten(sentence, 300)})
        if fixes:
            continue
        fix = _first(_FIX, text)
        if fix and len(text) <= 400 and n > 0:  # a short "fixed it by …" answering an error just before
            error = _first(_ERROR, steps[n - 1].text)
            if error:
                add("ErrorFixRule", step, fix[:80], {"error": shorten(error, 200), "fix": fix})
                continue
        config = _CONFIG.search(" ".join(_statements(text)))
        if config:
            g = config.groupdict()
            key = g["key"] or g["zkey"] or g["jkey"]
            old, new = g["old"] or g["zold"] or g["jold"], g["new"] or g["znew"] or g["jnew"]
            if old != new:
                add(
                    "ConfigChangeRule",
                    step,
                    key,
                    {"sentence": _first(_CONFIG, text), "key": key, "old": old, "new": new},
                )
                continue
        said = " ".join(_statements(text))
        tool = _NEW_TOOL.search(said)
        if tool and next(v for v in tool.groupdict().values() if v).startswith(("/", ".", "~")):
            tool = None  # "moved to /backup" is a place, not a tool
        if tool and _ABOUT_ME.search(said[: tool.start()][-12:]):
            tool = None  # "This is my first time using cc": a greeting about the person, not about a tool
        if tool and _NOT_DONE.search(said[: tool.start()][-16:]):
            tool = None  # "they must be migrated to ESM": advice about what might be needed, not a switch made
        if tool:
            name = next(v for v in tool.groupdict().values() if v)
            add("NewToolRule", step, name.lower(), {"sentence": _first(_NEW_TOOL, text), "program": name})
            continue
        sentence = _first(_REPEAT, text)
        if sentence:
            add("RepetitiveOpRule", step, sentence[:80], {"sentence": sentence}, 0.55)
    return found
