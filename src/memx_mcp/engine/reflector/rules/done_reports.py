"""What an assistant reports as done, in the two shapes summaries take in any language: a table of issues
with the correction made for each ("| Issue | Status | Correção |"), and the list under "What was done:" /
"O que foi feito:" / "実施内容:" of a message that says the problem is solved or the work complete. Each
row or item is a lesson only when it says more than a step of the task: a row whose status is OK, an item
that names code and either gives its reason ("…ため", "because", "porque") or comes under a "problem
solved" heading. Verification items ("Verificações finais", "検証結果") are not fixes."""

from __future__ import annotations

import re

from ....text.clip import shorten

# a cell or heading saying the thing is done (emoji are often replaced by "[OK]" in exports)
_OK = re.compile(r"\[OK\]|✅|✓|\bOK\b|\bfixed\b|\bdone\b|resolvid[oa]|corrigid[oa]|已修复|已解决|解決済|修正済", re.I)
_ISSUE_COL = re.compile(r"^(?:issue|problem|problema|erro|error|bug|test|teste|falha|问题|問題|エラー)s?$", re.I)
_FIX_COL = re.compile(
    r"^(?:fix|correction|correção|correcao|corrección|solução|solucao|solución|solution|resolução|change|"
    r"修正|修复|解决|解決|対策|对策|変更)$",
    re.I,
)
_STATUS_COL = re.compile(r"^(?:status|estado|状态|状態|result|resultado)$", re.I)

_SOLVED = re.compile(
    r"(?:problem|problema|issue|bug|erro|error)s?\s+(?:resolvid[oa]s?|resolved|fixed|solved|corrigid[oa]s?)|"
    r"(?:resolved|fixed|solved)!|问题已?解决|已修复|解決しました|修正しました|完了しました|完了です|"
    r"concluíd[oa] com sucesso|completed successfully",
    re.I,
)
_DONE_LABEL = re.compile(
    r"^\W*(?:o que foi feito|what (?:was|I) (?:done|did|changed)|what changed|changes made|lo que se hizo|"
    r"做了什么|修改内容|实施内容|実施内容|実施した内容|対応内容|対応した内容|変更内容)\W*$",
    re.I,
)
_ITEM = re.compile(r"^\s*\d+\.\s+(?:\*\*(?P<title>.+?)\*\*(?P<rest>.*)|(?P<plain>.+))$")
_SUB = re.compile(r"^\s+[-*]\s+(?P<text>.+)$")
_VERIFY = re.compile(r"verifica|verify|validat|检查|验证|検証|確認|estado|status|result", re.I)
_REASON = re.compile(r"ため|ので|because|since|so that|porque|pois|para que|因为|由于|以免", re.I)
_PROBLEM_HEADING = re.compile(
    r"(?:problem|problema|issue|bug|erro|error)s?\s+(?:resolvid[oa]s?|resolved|fixed|solved|corrigid[oa]s?)|"
    r"(?:fixed|resolved) the (?:\w+ )?errors?|(?:エラー|错误|报错|問題)を?(?:修正|解決|修复)(?:しました|了)|"
    r"问题已?解决|已修复|解決しました",
    re.I,
)
# a row must name something: code, an identifier (snake_case, dotted), or a value that changed
_NAMES = re.compile(r"`|\w[_.]\w|\d")
_MARK = re.compile(r"\[(?:OK|EMOJI|ERRO|WARN|TIMER)\]\s*")


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*").strip() for c in line.strip().strip("|").split("|")]


def fix_table_rows(text: str) -> list[str]:
    """'<issue>: fixed by <correction>' for each OK row of a table with an issue and a correction column."""
    out: list[str] = []
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if (
            not line.lstrip().startswith("|")
            or n + 1 >= len(lines)
            or not re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[n + 1])
        ):
            continue
        head = _cells(line)
        issue = next((i for i, c in enumerate(head) if _ISSUE_COL.match(c)), -1)
        fix = next((i for i, c in enumerate(head) if _FIX_COL.match(c)), -1)
        status = next((i for i, c in enumerate(head) if _STATUS_COL.match(c)), -1)
        if issue < 0 or fix < 0:
            continue
        for row in lines[n + 2 :]:
            if not row.lstrip().startswith("|"):
                break
            cells = _cells(row)
            if len(cells) != len(head) or not cells[issue] or not cells[fix]:
                continue
            if status >= 0 and not _OK.search(cells[status]):
                continue
            if not _NAMES.search(cells[issue] + " " + cells[fix]):
                continue  # "Warning detecção idioma: Keywords + word boundaries" says nothing checkable
            out.append(f"{shorten(cells[issue], 120)}: fixed by {shorten(cells[fix], 200).rstrip('.。')}.")
    return out


def done_items(text: str) -> list[str]:
    """The items under "What was done:" in a message that says the work is done, as one bullet: the
    message's first line (what was achieved) and each item that names code, with its details."""
    if not _SOLVED.search(text):
        return []
    problem = bool(_PROBLEM_HEADING.search(text))
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    context = shorten(_MARK.sub("", first).strip("# *").rstrip("。.!！:："), 120)
    told: list[str] = []
    lines = text.splitlines()
    inside = False
    for n, line in enumerate(lines):
        plain = _MARK.sub("", line).strip("# *").strip()
        if _DONE_LABEL.match(plain):
            inside = True
            continue
        if not inside:
            continue
        if line.startswith("#"):
            break  # the next section ("Estado Atual", "Next steps")
        item = _ITEM.match(line)
        if not item:
            continue
        title = (item.group("title") or item.group("plain") or "").strip().rstrip(":：")
        own = " ".join([title, (item.group("rest") or "").strip()]).strip()
        details = (
            [(item.group("rest") or "").strip()] if item.group("title") and (item.group("rest") or "").strip() else []
        )
        if item.group("title"):
            for sub in lines[n + 1 : n + 4]:
                m = _SUB.match(sub)
                if not m:
                    break
                details.append(m.group("text").strip())
        said = " ".join([own, *details])
        if _VERIFY.search(title) or "`" not in said or said.count("`") % 2:
            continue
        if not item.group("title") and "`" not in own:
            continue  # a plain item whose code is only in its sub-points is a one-off edit, not the lesson
        if not problem and not _REASON.search(said):
            continue  # a step of the task ("スキーマ作成"), not something learned
        told.append(shorten(f"{title} — {'; '.join(details[:2])}" if details else title, 160).rstrip(".。"))
    if not told:
        return []
    return [f"{context}: {'; '.join(told[:4])}."]
