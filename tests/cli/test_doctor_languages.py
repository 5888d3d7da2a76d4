"""`memx doctor` and `memx install` offer the multilingual model (the multilingual USE) when most of what the store holds is Chinese
or Japanese and the running model is MiniLM: a real store, through the `memx` script."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from ..helpers import env_for, script

CHINESE = [
    "部署前必须先运行数据库迁移脚本，否则服务启动会失败",
    "测试环境的缓存每天凌晨两点自动清空",
    "日志文件超过一百兆时会自动压缩并归档",
]
JAPANESE = ["本番環境へのデプロイは金曜日の午後には行わないこと"]
ENGLISH = [
    "Run the database migrations before deploying, or the service fails to start",
    "The staging cache is cleared every night at two",
    "Log files over 100 MB are compressed and archived",
]
SWITCH = "pip install 'memx-mcp[multilingual]', then set MEMX_MODEL_NAME=google/universal-sentence-encoder-multilingual-3-onnx-quantized"


def _memx(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**env_for(tmp_path / "data"), "HOME": str(home), "USERPROFILE": str(home)}
    return subprocess.run(
        [*script("memx"), *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False
    )


def _store(tmp_path: Path, texts: list[str]) -> None:
    records = tmp_path / "bullets.jsonl"
    records.write_text("".join(json.dumps({"content": t}, ensure_ascii=False) + "\n" for t in texts))
    done = _memx(tmp_path, "import", str(records))
    assert done.returncode == 0, done.stderr


def _languages(tmp_path: Path) -> dict[str, Any]:
    done = _memx(tmp_path, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    return checks["languages"]


def test_doctor_offers_the_multilingual_model_for_a_store_mostly_in_chinese_and_japanese(tmp_path: Path) -> None:
    _store(tmp_path, [*CHINESE, *JAPANESE, ENGLISH[0]])
    found = _languages(tmp_path)
    assert found["status"] == "WARN", found
    assert "4 of 5 active bullets (80%) mostly Chinese or Japanese" in found["detail"]
    assert "sentence-transformers/all-MiniLM-L6-v2" in found["detail"]
    assert SWITCH in found["fix"] and "memx reindex" in found["fix"]


def test_doctor_offers_nothing_for_a_store_mostly_in_english(tmp_path: Path) -> None:
    _store(tmp_path, [*ENGLISH, CHINESE[0]])
    found = _languages(tmp_path)
    assert found["status"] == "OK", found
    assert "1 of 4 active bullets (25%) mostly Chinese or Japanese" in found["detail"]
    assert found["fix"] == ""


def test_install_offers_the_multilingual_model_where_the_store_is_mostly_chinese(tmp_path: Path) -> None:
    _store(tmp_path, CHINESE)
    done = _memx(tmp_path, "install", "cursor")
    assert done.returncode == 0, done.stderr
    assert "3 of 3 active bullets (100%) mostly Chinese or Japanese" in done.stdout
    assert SWITCH in done.stdout


def test_install_offers_nothing_where_the_store_is_english_or_absent(tmp_path: Path) -> None:
    first = _memx(tmp_path, "install", "cursor")  # no store yet: none is opened
    assert first.returncode == 0, first.stderr
    assert "languages" not in first.stdout and not (tmp_path / "data" / "store").exists()
    _store(tmp_path, ENGLISH)
    again = _memx(tmp_path, "install", "cursor")
    assert again.returncode == 0, again.stderr
    assert "languages" not in again.stdout and "multilingual" not in again.stdout
