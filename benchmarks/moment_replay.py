"""Replay of the moment of need on real sessions of one project: does a lesson of the earlier sessions come
back right when a later session meets the same error or edits the same file, and how often does something
come back that was not relevant?

Data: the five Claude Code sessions of marot/spotter in ``data/transcripts/`` (one Elixir project, one
developer, Feb 11–12 2026), in time order. For each later session, a fresh store is built from every
session before it (the Reflector in rules mode, into the project's scope; there are no recorded model
answers for these sessions, so session mode is not measured here), then the later session's tool calls are
replayed in order through ``run_tool_hook`` as Claude Code sends them: ``PostToolUseFailure`` for a failed
command, ``PostToolUse`` for a successful one, ``PreToolUse`` for an edit.

Labels (``data/moment_labels.jsonl``) were written by reading the sessions before memx ran on any of them:
for each failed command and each first edit of a file, whether an earlier lesson applies. Tune part:
sessions ae4a77f8 and fa812bfe (the floors were set on it); held out: 4d5611e5, measured once.

Counted per part: moments where a lesson applied and something was handed back (hit rate = hits / moments
that had a lesson), handed back where no lesson applied (noise, at labelled failures and edits and at every
successful command), and what was handed back, printed for reading.

    python benchmarks/moment_replay.py [--project spotter|chkit] [--part tune|heldout|all] [--sweep] [--show]
        [--client NAME]

``--project chkit``: a second project, 32 real Claude Code sessions of obsessiondb/chkit (TypeScript/Bun
monorepo, one developer in many Conductor workspaces, Feb 15–24 2026; ``data/chkit/``, MIT, user and assistant
records only, redacted, zstd). Four later sessions are replayed, each with a store from every session that
ended before it started (no overlap in time): 2717e50c, 92354ed8, bb4f4bed, 2c2371e1. Their 16 failed
commands were labelled (``data/moment_labels_chkit.jsonl``) by reading the sessions before memx ran on any of
them; nothing was tuned on chkit (the floors were set on spotter's tune part), so all four are held out and
measured once. Its edits were not labelled one by one: anything handed back at an edit counts as noise.

``--client codex|gemini|cursor`` replays the same calls written as that client's hooks send them (Codex:
``apply_patch`` before an edit, ``PostToolUse`` with the exec output; Gemini CLI and Cursor: no context
before an edit, so their reads of the file are sent instead, and a warning at a read counts for that file's
edit label). The data are Claude Code sessions either way: this checks each client's path on real events,
it is no measurement of those clients' sessions.

``--sweep`` (tune part only) runs the use case in-process at several floors instead of through the hook.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DATA = HERE / "data"
SESSIONS = [  # time order (first timestamp of each file)
    "258c7280-ae70-4798-800f-63464d01a85d",
    "8463c716-a2ea-4c14-9efa-87158ebd9f20",
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
    "4d5611e5-241a-462a-8d15-5122611a9569",
]
SCOPE = "project:spotter"
FLOOR = "all"  # the rules without a model at their strict default floor learn nothing from these sessions
ROOT = "/home/USER/projects/spotter-worktrees/spotter"
TRANSCRIPTS = DATA / "transcripts"
SUFFIX = ".jsonl"
LABELS = DATA / "moment_labels.jsonl"
CHKIT = [json.loads(x)["session"] for x in (DATA / "chkit" / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
CHKIT_REPLAYED = ["2717e50c", "92354ed8", "bb4f4bed", "2c2371e1"]  # each starts after every earlier one ended


@dataclass
class Call:
    line: int
    payload: dict[str, Any]
    kind: str  # failure | success | edit
    what: str


def relative(path: str) -> str:
    if SCOPE == "project:chkit":  # one developer's many Conductor workspaces and two checkouts
        for marker in ("/conductor/workspaces/chkit/", "/conductor/workspaces/chx/"):
            if marker in path:
                return path.split(marker)[-1].split("/", 1)[-1]
        for marker in ("/Workspace/chkit/", "/Workspace/chx/"):
            if marker in path:
                return path.split(marker)[-1]
        return path
    return path.split("/spotter-worktrees/")[-1].split("/", 1)[-1]


def transcript(session: str) -> tuple[Path, str]:
    from memx_mcp.usecases.reflect import read_transcript

    path = TRANSCRIPTS / f"{session}{SUFFIX}"
    return path, read_transcript(path)  # plain or zstd


def calls(session: str) -> list[Call]:
    """The session's tool calls in order, as Claude Code's hooks would have sent them (main thread only)."""
    uses: dict[str, tuple[str, dict[str, Any]]] = {}
    out: list[Call] = []
    base = {"session_id": session, "cwd": ROOT, "transcript_path": f"{ROOT}/{session}.jsonl"}
    for n, line in enumerate(transcript(session)[1].splitlines(), 1):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        content = (record.get("message") or {}).get("content")
        if record.get("isSidechain") or not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_use":
                name, tool_input = str(part.get("name")), dict(part.get("input") or {})
                uses[str(part.get("id"))] = (name, tool_input)
                if name == "Read" and tool_input.get("file_path"):
                    rel = relative(str(tool_input["file_path"]))
                    payload = {**base, "hook_event_name": "PostToolUse", "tool_name": "Read"}
                    payload["tool_input"] = {"file_path": f"{ROOT}/{rel}"}
                    out.append(Call(n, payload, "read", rel))
                if name in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
                    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
                    payload = {**base, "hook_event_name": "PreToolUse", "tool_name": name, "tool_input": tool_input}
                    payload["tool_input"] = {**tool_input, "file_path": f"{ROOT}/{relative(path)}"}
                    out.append(Call(n, payload, "edit", relative(path)))
            elif part.get("type") == "tool_result" and uses.get(str(part.get("tool_use_id")), ("",))[0] == "Bash":
                _, tool_input = uses[str(part.get("tool_use_id"))]
                text = part.get("content")
                if isinstance(text, list):
                    text = "\n".join(str(x.get("text", "")) for x in text if isinstance(x, dict))
                command = str(tool_input.get("command", ""))
                if part.get("is_error"):
                    payload = {**base, "hook_event_name": "PostToolUseFailure", "error": str(text)}
                    kind = "failure"
                else:
                    payload = {**base, "hook_event_name": "PostToolUse", "tool_response": {"stdout": str(text)}}
                    kind = "success"
                payload.update(tool_name="Bash", tool_input={"command": command})
                out.append(Call(n, payload, kind, command[:100]))
    return out


def as_client(call: Call, client: str) -> dict[str, Any] | None:
    """``call`` as ``client``'s hook would send it; None for a call that client's memx hooks do not receive
    (Claude Code and Codex: no reads; Gemini CLI and Cursor: no before-edit context, reads instead)."""
    p = call.payload
    command = str(p.get("tool_input", {}).get("command", ""))
    if client == "claude-code":
        return None if call.kind == "read" else p
    if client == "codex":
        if call.kind == "read":
            return None
        if call.kind == "edit":
            patch = f"*** Begin Patch\n*** Update File: {call.what}\n@@\n*** End Patch"
            return {**p, "tool_name": "apply_patch", "tool_input": {"command": patch}}
        code = 1 if call.kind == "failure" else 0
        output = str(p.get("error") or p.get("tool_response", {}).get("stdout", ""))
        response = f"Process exited with code {code}\nOutput:\n{output}"
        return {**p, "hook_event_name": "PostToolUse", "tool_response": response}
    if call.kind == "edit":
        return None  # neither can add context before an edit
    path = f"{ROOT}/{call.what}"
    if client == "gemini":
        if call.kind == "read":
            return {**p, "hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": {"file_path": path}}
        output = str(p.get("error") or p.get("tool_response", {}).get("stdout", ""))
        llm = f"Output: {output}\nExit Code: {1 if call.kind == 'failure' else 0}"
        return {
            **p,
            "hook_event_name": "AfterTool",
            "tool_name": "run_shell_command",
            "tool_response": {"llmContent": llm},
        }
    base = {"conversation_id": p["session_id"], "workspace_roots": [ROOT]}
    if call.kind == "read":
        return {**base, "hook_event_name": "postToolUse", "tool_name": "Read", "tool_input": {"path": path}}
    if call.kind == "failure":
        failure = {"tool_name": "Shell", "tool_input": {"command": command}, "error_message": str(p.get("error"))}
        return {**base, "hook_event_name": "postToolUseFailure", **failure}
    output = json.dumps({"output": p.get("tool_response", {}).get("stdout", ""), "exitCode": 0})
    return {
        **base,
        "hook_event_name": "postToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": command},
        "tool_output": output,
    }


def labels() -> dict[tuple[str, str, str], dict[str, Any]]:
    """Labels by (session, kind, what): a failure by its line, an edit by its file."""
    found = {}
    for line in LABELS.read_text(encoding="utf-8").splitlines():
        label = json.loads(line)
        key = str(label["line"]) if label["kind"] == "failure" else label["what"]
        found[(label["session"], label["kind"], key)] = label
    return found


def store_before(session: str) -> Any:
    """A fresh data folder whose store holds what the Reflector (rules) learned from every earlier session."""
    from memx_mcp.compose import open_memory
    from memx_mcp.config import Settings

    home = Path(tempfile.mkdtemp(prefix="memx-moment-"))
    os.environ.update(MEMX_SCOPE=SCOPE, MEMX_LLM_BACKEND="none")  # the warm helper reads its settings so
    models = HERE / ".work" / "models"
    if models.is_dir():
        (home / "models").symlink_to(models.resolve())
    settings = Settings(home=home, scope=SCOPE, llm_backend="none", reflector_mode="rules", rules_floor=FLOOR)
    memory = open_memory(settings, cwd=home)
    memory.deps.embedder.get(120.0)
    for earlier in SESSIONS[: SESSIONS.index(session)]:
        path, text = transcript(earlier)
        memory.reflect(text, path=path, scope=SCOPE)
    return memory


def answer_text(client: str, answer: str) -> str:
    """What a client adds to the model's context from memx's answer."""
    data = json.loads(answer) if answer else {}
    if client == "cursor":
        return str(data.get("additional_context", ""))
    return str(data.get("hookSpecificOutput", {}).get("additionalContext", ""))


def replay(session: str, memory: Any, through_hook: bool, client: str = "claude-code") -> list[tuple[Call, str]]:
    from memx_mcp.hooks.tool_payloads import read_event, run_tool_hook

    out = []
    for call in calls(session):
        payload = as_client(call, client)
        if payload is None:
            continue
        if through_hook:
            text = answer_text(client, run_tool_hook(client, payload, memory.settings, wait=10.0))
        else:
            event = read_event(client, payload)
            text = memory.moment(event) if event is not None else ""
        out.append((call, text))
    return out


def score(session: str, replayed: list[tuple[Call, str]], show: bool) -> Counter[str]:
    known = labels()
    counts: Counter[str] = Counter()
    hit_keys: set[tuple[str, str, str]] = set()
    for call, text in replayed:
        kind = "edit" if call.kind == "read" else call.kind  # a warning at a read serves the file's edit
        key = (session, kind, str(call.line) if call.kind == "failure" else call.what)
        label = known.get(key)
        applies = bool(label and label["applies"])
        if call.kind != "success" and label is None and call.kind == "failure":
            raise SystemExit(f"no label for {key}")
        if text:
            counts["handed back"] += 1
            if applies and key not in hit_keys:
                hit_keys.add(key)
            elif not applies:
                counts[f"noise at {call.kind}"] += 1
            if show:
                print(f"  [{'lesson applies' if applies else 'NO lesson'}] {call.kind} L{call.line} {call.what!r}")
                print("    " + "\n    ".join(text.splitlines()[2:-1]))
    moments = [k for k, v in known.items() if k[0] == session and v["applies"]]
    counts["moments with a lesson"] += len(moments)
    counts["hits"] += len(hit_keys)
    for k in moments:
        counts[f"moments ({k[1]})"] += 1
        counts[f"hits ({k[1]})"] += k in hit_keys
    counts["failures replayed"] += sum(c.kind == "failure" for c, _ in replayed)
    counts["edits replayed"] += sum(c.kind == "edit" for c, _ in replayed)
    counts["successes replayed"] += sum(c.kind == "success" for c, _ in replayed)
    counts["reads replayed"] += sum(c.kind == "read" for c, _ in replayed)
    return counts


def report(name: str, counts: Counter[str]) -> None:
    noise = sum(v for k, v in counts.items() if k.startswith("noise"))
    moments = counts["moments with a lesson"]
    rate = f"{counts['hits']}/{moments} = {counts['hits'] / moments:.2f}" if moments else "n/a"
    print(
        f"{name}: hit rate {rate} (failures {counts['hits (failure)']}/{counts['moments (failure)']}, "
        f"edits {counts['hits (edit)']}/{counts['moments (edit)']}); noise {noise} of {counts['handed back']} "
        f"handed back (at failures {counts['noise at failure']}, edits {counts['noise at edit']}, successful "
        f"commands {counts['noise at success']}, reads {counts['noise at read']}); replayed "
        f"{counts['failures replayed']} failures, {counts['edits replayed']} edits, {counts['reads replayed']} reads, "
        f"{counts['successes replayed']} successful commands"
    )


def stop_helper(memory: Any) -> None:
    state = memory.settings.home / "run" / "hook-helper.json"
    try:
        pid = json.loads(state.read_text()).get("pid")
        if pid:
            os.kill(int(pid), signal.SIGTERM)
    except (OSError, ValueError):
        pass


PARTS = {"tune": SESSIONS[2:4], "heldout": SESSIONS[4:]}


def use_chkit() -> None:
    global SESSIONS, SCOPE, ROOT, TRANSCRIPTS, SUFFIX, LABELS
    SESSIONS = CHKIT
    SCOPE, ROOT = "project:chkit", "/home/USER/projects/chkit"
    TRANSCRIPTS, SUFFIX, LABELS = DATA / "chkit", ".jsonl.zst", DATA / "moment_labels_chkit.jsonl"
    replayed = [s for s in SESSIONS if s[:8] in CHKIT_REPLAYED]
    PARTS.clear()
    PARTS.update(tune=[], heldout=replayed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", choices=["spotter", "chkit"], default="spotter")
    parser.add_argument("--part", choices=["tune", "heldout", "all"], default="tune")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--client", choices=["claude-code", "codex", "gemini", "cursor"], default="claude-code")
    args = parser.parse_args()
    from memx_mcp.usecases import moment

    if args.project == "chkit":
        if args.sweep or args.part == "tune":
            raise SystemExit("chkit has no tune part: nothing is tuned on it")
        use_chkit()

    parts = ["tune", "heldout"] if args.part == "all" else [args.part]
    for part in parts:
        total: Counter[str] = Counter()
        sweeps: dict[tuple[float, float], Counter[str]] = {}
        for session in PARTS[part]:
            memory = store_before(session)
            try:
                if args.sweep:
                    for fix in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
                        for file in (0.5, 0.7, 0.9):
                            moment.FIX_FLOOR, moment.FILE_FLOOR = fix, file
                            shutil.rmtree(memory.settings.home / "run" / "moments", ignore_errors=True)
                            sweeps.setdefault((fix, file), Counter()).update(
                                score(session, replay(session, memory, False), False)
                            )
                else:
                    print(f"{part} session {session[:8]} (store from {SESSIONS.index(session)} earlier sessions)")
                    total.update(score(session, replay(session, memory, True, args.client), args.show))
            finally:
                stop_helper(memory)
                shutil.rmtree(memory.settings.home, ignore_errors=True)
        if args.sweep:
            for (fix, file), counts in sorted(sweeps.items()):
                report(f"{part} FIX_FLOOR={fix} FILE_FLOOR={file}", counts)
        else:
            report(f"{part} ({args.client}, through the hook)", total)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
