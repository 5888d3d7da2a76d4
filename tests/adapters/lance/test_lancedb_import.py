"""LanceDB imported with its namespace REST client loaded on first use: fewer modules at start, and every
name of the client still there when asked for (each test in a fresh interpreter: imports are per process)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from memx_mcp.adapters.lance.lancedb_import import CLIENT, load
lancedb = load()
models = sorted(n for n in sys.modules if n.startswith(CLIENT + ".models."))
apis = sorted(n for n in sys.modules if n.startswith(CLIENT + ".api."))
import lance_namespace
from lance_namespace_urllib3_client import ApiClient, TableApi, __version__
from lance_namespace_urllib3_client.models import AlterTableAddColumnsRequest, JsonArrowSchema
db = lancedb.connect(sys.argv[1])
table = db.create_table("t", [{"id": 1, "text": "hello"}])
print(json.dumps({
    "models_at_start": len(models), "apis_at_start": len(apis),
    "rows": table.count_rows(), "version": __version__,
    "names": [ApiClient.__name__, TableApi.__name__, AlterTableAddColumnsRequest.__name__, JsonArrowSchema.__name__],
    "reexported": lance_namespace.AlterTableAddColumnsRequest is AlterTableAddColumnsRequest,
}))
"""


def run(code: str, *args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return out


def test_lancedb_starts_without_the_whole_client_and_every_client_name_still_resolves(tmp_path) -> None:  # type: ignore[no-untyped-def]
    everything = run(
        "import json, sys, lancedb; print(json.dumps({'models': sum(n.startswith("
        "'lance_namespace_urllib3_client.models.') for n in sys.modules)}))"
    )
    out = run(PROBE, str(tmp_path / "db"))
    assert out["apis_at_start"] == 0 and 0 < int(out["models_at_start"]) < int(everything["models"])  # type: ignore[call-overload]
    assert out["rows"] == 1 and out["reexported"] is True
    assert out["names"] == ["ApiClient", "TableApi", "AlterTableAddColumnsRequest", "JsonArrowSchema"]
