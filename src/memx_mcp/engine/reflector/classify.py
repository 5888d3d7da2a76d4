"""Classification (Section × KnowledgeType), the instructivity score and metadata extraction.

Rules over the text, in English, Chinese and Japanese; the Reflector's LLM path may overrule them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...domain.models import KnowledgeType, Section

_SECTION_CUES: tuple[tuple[Section, re.Pattern[str]], ...] = (
    (
        Section.PREFERENCES,
        re.compile(r"\b(?:prefers?|preferred|i like|i want|style|convention)\b|喜欢|偏好|好み|好き", re.I),
    ),
    (
        Section.DEBUGGING,
        re.compile(
            r"\b(?:error|exception|traceback|fails?|failed|failing|bug|crash(?:es)?|debug|fix(?:ed)?|stack ?trace|"
            r"timeout|segfault)\b|\b\w+Error\b|错误|报错|异常|失败|エラー|例外|失敗|バグ",
            re.I,
        ),
    ),
    (
        Section.WORKFLOW,
        re.compile(
            r"\b(?:deploy|release|ci|pipeline|workflow|branch|merge|review|commit|rebase|pull request|pr)\b|"
            r"部署|发布|流程|デプロイ|リリース",
            re.I,
        ),
    ),
    (
        Section.ARCHITECTURE,
        re.compile(
            r"\b(?:architecture|module|layer|design|service|schema|database|api|interface|component)\b|架构|模块|"
            r"設計|アーキテクチャ",
            re.I,
        ),
    ),
    (
        Section.TOOLS,
        re.compile(
            r"\b(?:install|library|package|plugin|extension|tool|cli|version)\b|安装|工具|インストール|ツール",
            re.I,
        ),
    ),
    (
        Section.COMMANDS,
        re.compile(r"`[^`]+`|\$ \w|\b(?:run|command|flag|option)\b|--?\w|命令|运行|コマンド|実行", re.I),
    ),
    (Section.PATTERNS, re.compile(r"\b(?:pattern|idiom|approach|technique)\b|模式|パターン", re.I)),
)

_PITFALL = re.compile(
    r"\b(?:avoid|don't|do not|never|careful|beware|pitfall|gotcha|must not|breaks?|otherwise|caution|warning)\b|"
    r"不要|避免|注意|小心|しないで|注意|避け|ダメ",
    re.I,
)
_PREFERENCE = re.compile(r"\b(?:prefers?|preferred|i like|i want|rather than)\b|喜欢|偏好|好み", re.I)
_TRICK = re.compile(r"\b(?:trick|tip|shortcut|faster|instead of|quickly|hack)\b|技巧|更快|コツ|速く", re.I)
_METHOD = re.compile(
    r"(?:^|[:;.→]\s*)(?:use|run|install|set|add|call|create|configure|pass|enable|disable|start|open|check|"
    r"when)\b|"
    r"\b(?:to \w+, |how to|steps?)\b|使用|运行|设置|使う|実行|設定",
    re.I,
)

_IMPERATIVE = re.compile(
    r"(?:^|[:;.→]\s*)(?:use|run|install|set|add|call|create|configure|pass|enable|disable|avoid|never|always|"
    r"don't|do not|prefer|check|make|keep|put|remove|restart|when|before|after)\b",
    re.I,
)
# A word-run pattern starts only where a run starts (\b, a lookbehind): tried from every character of a
# 100,000-character token, it read the rest of the token each time (150 s for one classification).
_CODE = re.compile(r"`[^`]+`|(?:^|\s)--?[A-Za-z][\w-]*|\b\w+\(\)|\b\w+\.\w+\(|\$ \w")
_PATH = re.compile(
    r"(?:\.{0,2}/)?(?<![\w.\-])[\w.\-]+/[\w.\-/]+|\b\w+\.(?:py|js|ts|json|toml|ya?ml|ini|cfg|md|rs|go|ex|exs|sh)\b"
)
_NUMBERISH = re.compile(r"\b\d+(?:\.\d+)*\b")
_CAUSE = re.compile(
    r"\b(?:because|since|so that|due to|caused by|otherwise|which means|therefore|→|->)\b|→|->|因为|所以|导致|"
    r"ので|ため|から|原因",
    re.I,
)

KNOWN_TOOLS = frozenset(
    """apt brew bun cargo celery composer conda curl deno django docker docker-compose elixir eslint fastapi
    flask gcc gh git go gradle helm iex jest kubectl lancedb make maven mix mypy mysql nginx node npm npx
    pip pipx pnpm poetry postgres postgresql prettier psql pytest python react redis ruff rustc sqlite
    terraform tox tsc uv uvx vite vitest webpack yarn""".split()
)
_ENTITY = re.compile(r"\b(?:[A-Z][a-z0-9]+){2,}\b|\b\w+(?:Error|Exception)\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
_WORD = re.compile(r"[\w.+\-]+")
_HASHTAG = re.compile(r"(?<![\w&])#([A-Za-z][\w\-]{1,40})")


@dataclass(frozen=True)
class Classification:
    section: Section
    knowledge_type: KnowledgeType


def classify(text: str) -> Classification:
    section = next((s for s, cue in _SECTION_CUES if cue.search(text)), Section.GENERAL)
    if _PREFERENCE.search(text):
        ktype = KnowledgeType.PREFERENCE
    elif _PITFALL.search(text):
        ktype = KnowledgeType.PITFALL
    elif _TRICK.search(text):
        ktype = KnowledgeType.TRICK
    elif _METHOD.search(text.strip()):
        ktype = KnowledgeType.METHOD
    else:
        ktype = KnowledgeType.KNOWLEDGE
    return Classification(section, ktype)


@dataclass(frozen=True)
class InstructivityScore:
    score: float
    reasons: tuple[str, ...]


def instructivity(text: str, confidence: float) -> InstructivityScore:
    """0–100: the detecting rule's confidence (up to 40), specificity and actionability (code, paths,
    numbers, an imperative: up to 40), an explicit cause → effect (15), a sensible length (5)."""
    stripped = text.strip()
    parts: list[tuple[str, float]] = [(f"confidence {confidence:.2f}", 40.0 * max(0.0, min(1.0, confidence)))]
    if _CODE.search(stripped):
        parts.append(("command or code", 15.0))
    if _PATH.search(stripped):
        parts.append(("path or file", 8.0))
    if _NUMBERISH.search(stripped):
        parts.append(("number or version", 7.0))
    if _IMPERATIVE.search(stripped):
        parts.append(("imperative", 10.0))
    if _CAUSE.search(stripped):
        parts.append(("cause and effect", 15.0))
    if 30 <= len(stripped) <= 400:
        parts.append(("concise", 5.0))
    elif len(stripped) < 15:
        parts.append(("too short", -15.0))
    score = max(0.0, min(100.0, sum(v for _, v in parts)))
    return InstructivityScore(round(score, 1), tuple(name for name, _ in parts))


@dataclass(frozen=True)
class Metadata:
    tools: tuple[str, ...]
    entities: tuple[str, ...]
    tags: tuple[str, ...]


def extract_metadata(text: str) -> Metadata:
    words = [w.strip(".-").lower() for w in _WORD.findall(text)]
    tools = tuple(dict.fromkeys(w for w in words if w in KNOWN_TOOLS))
    for m in re.finditer(r"\b([a-z][\w\-]*-[a-z][\w\-]*)\b", text):  # hyphenated package names
        if any(m.group(1).startswith(t + "-") for t in KNOWN_TOOLS):
            tools = (*tools, m.group(1).lower()) if m.group(1).lower() not in tools else tools
    entities = tuple(dict.fromkeys(_ENTITY.findall(text)))
    tags = tuple(dict.fromkeys(t.lower() for t in _HASHTAG.findall(text)))
    return Metadata(tools=tools, entities=entities, tags=tags)
