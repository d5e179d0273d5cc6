"""End-to-end: the packaged VS Code extension in a real VS Code, driven by headless Chromium.

What runs: ``vscode-extension/scripts/setup-code-server.sh`` installs Node 24 and code-server
4.139.1 (= VS Code 1.139.1) from npm into a cache (``$STEADYHAND_CACHE`` or ``<repo>/.cache``;
once, about 2 minutes); ``scripts/build-vsix.sh --host`` builds the ``.vsix`` for this platform with
the Python server bundled; the test installs it together with the test-driver extension
(``vscode-extension/e2e/driver``) into a fresh profile, starts code-server on a free loopback
port and opens the workspace page in headless Chromium (playwright-core driving Debian's
/usr/bin/chromium). On start-up the driver runs the scenario through the real VS Code API and
writes ``result.json``; each test below asserts one behaviour on it.

Tool calls go through ``vscode.lm.invokeTool``, the path Copilot agent mode uses; this build
invokes tools outside a chat request. Should a build refuse, the driver calls the same handler
through the extension's exported API (``api.invokeTool``) and records why (``via``,
``lmError``).

Without Chromium, npm, or the code-server install the tests skip with the reason; under CI=true
they fail instead. STEADYHAND_VSIX tests a prebuilt .vsix; STEADYHAND_SCREENSHOT_DIR keeps the
screenshots.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from steadyhand.protocol.commands import EDIT, READ, WRITE

pytestmark = pytest.mark.timeout(1800)

REPO = Path(__file__).resolve().parents[3]
EXT = REPO / "vscode-extension"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
IN_CI = os.environ.get("CI", "").lower() == "true"

APP_PY = '''"""A tiny app."""

TIMEOUT = 30


def greet(name):
    return "Hello, " + name


if __name__ == "__main__":
    print(greet("world"))
'''

CONFIG_JSON = """{
  "name": "demo",
  "retries": 3,
  "verbose": true
}
"""


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true and the VS Code end-to-end test cannot run: {reason}")
    pytest.skip(reason)


def _run(
    cmd: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env=env, timeout=timeout, text=True, capture_output=True, check=False
    )


def _tail(text: str, n: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _server_python() -> str:
    """A base interpreter (not the test venv), so the server must come from the bundled wheels."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def _make_workspace(ws: Path) -> None:
    (ws / "src").mkdir(parents=True)
    (ws / "hello.txt").write_text("Hello, world\nsecond line\n")
    (ws / "src" / "app.py").write_text(APP_PY)
    (ws / "config.json").write_text(CONFIG_JSON)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if sys.platform != "linux":
        _unavailable("the code-server end-to-end test runs on Linux only")
    if not Path(CHROMIUM).exists():
        _unavailable(
            "Chromium is not installed (apt-get install -y --no-install-recommends chromium)"
        )
    if not shutil.which("npm") or not shutil.which("node"):
        _unavailable("node and npm are needed to build the extension and install code-server")

    tmp = tmp_path_factory.mktemp("vscode-e2e")
    env = dict(os.environ)

    # 1. Node 24 + code-server (cached).
    setup = _run(["bash", str(EXT / "scripts" / "setup-code-server.sh")], env=env, timeout=1200)
    if setup.returncode != 0:
        _unavailable(
            "installing Node 24 + code-server failed (needs the npm registry and "
            f"libkrb5-dev):\n{_tail(setup.stderr)}"
        )
    launcher = setup.stdout.strip().splitlines()[-1]

    # 2. The packaged extension.
    vsix_env = os.environ.get("STEADYHAND_VSIX")
    if vsix_env:
        vsix = Path(vsix_env)
    else:
        vsix = tmp / "steadyhand.vsix"
        build = _run(
            ["bash", str(EXT / "scripts" / "build-vsix.sh"), "--host", str(vsix)],
            env={**env, "PYTHON": sys.executable},
            timeout=900,
        )
        assert build.returncode == 0, f"build-vsix.sh failed:\n{_tail(build.stderr, 60)}"
    driver_vsix = tmp / "driver.vsix"
    pack = _run(
        [
            str(EXT / "node_modules" / ".bin" / "vsce"),
            "package",
            "--no-dependencies",
            "--out",
            str(driver_vsix),
        ],
        cwd=EXT / "e2e" / "driver",
        env=env,
        timeout=300,
    )
    assert pack.returncode == 0, f"packaging the driver failed:\n{_tail(pack.stdout + pack.stderr)}"

    # 3. A fresh profile and workspace.
    home = tmp / "home"
    user_data = tmp / "user-data"
    ext_dir = tmp / "extensions"
    out = tmp / "out"
    ws = tmp / "workspace"
    for d in (home, user_data / "User", ext_dir, out):
        d.mkdir(parents=True)
    _make_workspace(ws)
    settings = {
        "steadyhand.tools.confirmWrites": False,
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "extensions.autoUpdate": False,
        "extensions.autoCheckUpdates": False,
        "telemetry.telemetryLevel": "off",
        "files.autoSave": "off",
        "editor.formatOnSave": False,
        "window.zoomLevel": 0,
    }
    (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
    # `steadyhand.server.python` has machine scope: code-server's window is a remote one, which
    # reads such settings from the remote machine's settings only.
    (user_data / "Machine").mkdir(parents=True)
    (user_data / "Machine" / "settings.json").write_text(
        json.dumps({"steadyhand.server.python": _server_python()}, indent=2)
    )
    cs_env = {
        **env,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "STEADYHAND_E2E_DIR": str(out),
        # the MCP agent of the ``mcp`` step: the official SDK's client, from this venv
        "STEADYHAND_E2E_PYTHON": sys.executable,
        "STEADYHAND_E2E_MCP_CLIENT": str(Path(__file__).with_name("mcp_client.py")),
    }
    for k in ("PYTHONPATH", "VIRTUAL_ENV"):
        cs_env.pop(k, None)
    profile = ["--user-data-dir", str(user_data), "--extensions-dir", str(ext_dir)]
    inst = _run(
        [
            launcher,
            *profile,
            "--install-extension",
            str(vsix),
            "--install-extension",
            str(driver_vsix),
        ],
        env=cs_env,
        timeout=300,
    )
    assert inst.returncode == 0, f"--install-extension failed:\n{_tail(inst.stdout + inst.stderr)}"

    # 4. code-server + headless Chromium.
    port = _free_port()
    log = (tmp / "code-server.log").open("w")
    server = subprocess.Popen(
        [
            launcher,
            *profile,
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--auth",
            "none",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--reconnection-grace-time",
            "10",
            str(ws),
        ],
        env=cs_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    browser_out = ""
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        "code-server did not answer /healthz:\n"
                        + _tail((tmp / "code-server.log").read_text())
                    )
                time.sleep(0.5)
        browser = _run(
            [
                "node",
                str(EXT / "e2e" / "browser.mjs"),
                f"http://127.0.0.1:{port}/?folder={ws}",
                str(out),
                "420",
            ],
            env={**env, "CHROMIUM": CHROMIUM},
            timeout=480,
        )
        browser_out = browser.stdout + browser.stderr
    finally:
        _kill_group(server)
        log.close()

    result_file = out / "result.json"
    partial = out / "result.json.tmp"
    if not result_file.exists():
        partial_text = partial.read_text() if partial.exists() else "(no partial result)"
        pytest.fail(
            "the driver wrote no result.json\nbrowser:\n"
            + _tail(browser_out)
            + "\npartial result:\n"
            + partial_text[-4000:]
            + "\ncode-server log:\n"
            + _tail((tmp / "code-server.log").read_text(), 60)
        )
    result: dict[str, Any] = json.loads(result_file.read_text())
    result["_dirs"] = {"out": str(out), "workspace": str(ws), "tmp": str(tmp)}
    shots = os.environ.get("STEADYHAND_SCREENSHOT_DIR")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        for png in out.glob("*.png"):
            shutil.copy(png, Path(shots) / png.name)
    return result


def _step(scenario: dict[str, Any], name: str) -> dict[str, Any]:
    step = scenario["steps"].get(name)
    assert step is not None, f"the driver did not reach step {name}: {scenario.get('errors')}"
    assert "exception" not in step, f"step {name} raised:\n{step['exception']}"
    return step  # type: ignore[no-any-return]


def test_server_starts_from_bundled_package(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "activate")
    status = s["status"]
    assert status["state"] == "running", status
    assert status["serverName"] and "steadyhand" in status["serverName"].lower(), status
    # The server package was imported from the private environment made from bundled/wheels.
    assert status["sitePackages"], status
    assert status["sitePackages"].startswith(s["globalStorage"]), (status, s["globalStorage"])
    # The interpreter of the machine-scoped setting, not a fallback found on PATH.
    assert status["python"] == _server_python(), status
    assert sorted(s["registered"]) == [EDIT, READ, WRITE]
    assert {READ, EDIT, WRITE} <= set(status["commands"])
    assert sorted(s["tools"]) == [
        "steadyhand_delete_file",
        "steadyhand_edit_file",
        "steadyhand_edit_notebook",
        "steadyhand_move_file",
        "steadyhand_multi_edit_file",
        "steadyhand_read_file",
        "steadyhand_write_file",
    ]


def test_read_through_vscode_command(scenario: dict[str, Any]) -> None:
    r = _step(scenario, "commandRead")["result"]
    assert r["ok"] is True, r
    assert "     1\tHello, world" in r["message"], r["message"]
    assert r["path"].endswith("hello.txt")


def test_lm_tool_edit_lands_in_buffer_as_one_undo_step_and_reaches_disk(
    scenario: dict[str, Any],
) -> None:
    s = _step(scenario, "toolEditOpenBuffer")
    print("tool invoked via", s["via"], "lm error:", s.get("lmError"))
    assert not s["text"].startswith("Error"), s["text"]
    assert s["dirtyBefore"] is False
    assert s["bufferHasEdit"], s
    assert s["diskHasEdit"], "the edit did not reach disk"
    assert s["dirtyAfterEdit"] is False, "a clean document must be saved after the agent's edit"
    assert s["undoRestoresOriginal"], f"one undo did not restore the original:\n{s['afterUndo']}"
    assert s["redoRestoresEdit"]


def test_user_typing_makes_agent_edit_stale_and_stays_intact(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "staleAndUnsaved")
    assert s["typed"], "the simulated typing did not reach the buffer"
    st = s["afterStale"]
    assert st["text"].startswith("Error (stale)"), st["text"]
    assert st["bufferKeepsTyping"] and st["bufferUnchangedByAgent"], st
    assert st["dirty"] is True
    assert st["diskUnchanged"], "the refused edit must not touch the disk"


def test_accepted_edit_does_not_save_unsaved_user_changes(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "staleAndUnsaved")["afterRetry"]
    assert not s["text"].startswith("Error"), s["text"]
    assert s["bufferHasAgentEdit"] and s["bufferKeepsTyping"], s
    assert s["dirty"] is True, "the document must stay unsaved (it held the user's typing)"
    assert not s["diskHasTyping"], f"the user's unsaved typing was saved:\n{s['diskText']}"


def test_write_creates_file_in_new_folder(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "writeNewFolder")
    assert not s["text"].startswith("Error"), s["text"]
    assert s["exists"], s
    assert s["content"] == "# Report\n\nWritten by the agent.\n"
    assert "File created successfully" in s["text"], s["text"]


def test_json_syntax_error_reported_in_edit_result(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "jsonDiagnostics")
    assert not s["text"].startswith("Error"), s["text"]
    errors = [d for d in s["diagnostics"] if d["severity"] == 0]
    assert errors, f"VS Code reported no JSON error: {s['diagnostics']}"
    assert "new error" in s["text"], s["text"]
    for d in errors:
        assert d["message"] in s["text"], (d, s["text"])


def test_file_changed_behind_agent_is_reported(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "fileChanged")
    assert s["event"] is not None, f"no steadyhand/fileChanged notification: {s['all']}"
    assert s["editAfterExternalChange"]["ok"] is False
    assert s["editAfterExternalChange"]["error"] == "stale", s["editAfterExternalChange"]


def test_notebook_tools_multi_edit_and_dry_run(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "moreTools")
    assert "File created successfully" in s["nbWrite"], s["nbWrite"]
    # No raw-JSON text document of the notebook, which would reach the server as its buffer.
    assert s["nbTextDocAfterWrite"] is False and s["nbTextDocAfterEdit"] is False, s
    assert 'id="c1"' in s["nbRead"], s["nbRead"]
    assert not s["nbEdit"].startswith("Error"), s["nbEdit"]
    assert '"x = 2\\n"' in s["nbDisk"], s["nbDisk"]
    assert not s["dryRun"].startswith("Error"), s["dryRun"]
    assert s["afterDryRun"] == "alpha\nbeta\ngamma\n", "a dry run changed the file"
    assert not s["multi"].startswith("Error"), s["multi"]
    assert s["notesDisk"] == "one\nbeta\nthree\n", s["notesDisk"]


def test_notebook_with_unsaved_cells_is_never_written_behind_the_editor(
    scenario: dict[str, Any],
) -> None:
    s = _step(scenario, "notebookEditor")
    assert s["userEdit"] is True and s["dirty"] is True, s
    assert s["read"]["ok"] is True, s
    refused = s["refused"]
    assert refused["ok"] is False and refused["error"] == "edit_rejected", refused
    assert "unsaved changes" in refused["message"] and "save or revert" in refused["message"]
    assert s["toolRefused"].startswith("Error (edit_rejected)"), s["toolRefused"]
    # a dry run changes nothing, so it reaches the server (which sends edits of a notebook to
    # the notebook tool)
    assert s["dryRun"]["error"] == "wrong_tool", s["dryRun"]
    # the file and the user's unsaved cell are as they were
    assert s["unchanged"] is True and s["stillDirty"] is True, s
    assert s["cellsWhileDirty"] == ["a = 1\n", "b = 2"], s["cellsWhileDirty"]
    # once reverted, the change reaches the disk and the notebook editor shows it
    assert s["clean"] is True, s
    assert s["accepted"]["ok"] is True, s["accepted"]
    assert '"a = 10\\n"' in s["diskAfter"], s["diskAfter"]
    assert s["shown"] is True, s["cellsAfter"]


def test_restart_while_the_client_starts_ends_running(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "restartDuringStart")
    assert s["clientStarting"], f"the second restart did not come during a start: {s}"
    assert s["settled"], s
    assert s["running"] and s["status"]["state"] == "running", s
    assert s["read"]["ok"] is True, s["read"]


def test_changed_setting_reaches_the_running_server(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "settingsChange")
    assert s["before"]["ok"] is True and s["before"]["num_lines"] == 5, s["before"]
    assert s["after"]["ok"] is True, s["after"]
    # steadyhand.defaultReadLines = 2, sent through workspace/didChangeConfiguration.
    assert s["after"]["num_lines"] == 2, s["after"]
    assert s["restored"]["num_lines"] == 5, s["restored"]


def test_status_counts_agent_edits(scenario: dict[str, Any]) -> None:
    status = _step(scenario, "final")["status"]
    assert status["editCount"] >= 4, status
    assert not scenario["errors"], scenario["errors"]


def test_an_agent_over_mcp_edits_the_open_buffer_and_never_saves_the_typing(
    scenario: dict[str, Any],
) -> None:
    s = _step(scenario, "mcp")
    connect = s["connect"]
    assert connect["host"] == "command", connect
    assert connect["launcher"].endswith("/bin/steadyhand"), connect
    assert connect["text"].endswith(" mcp") and connect["launcher"] in connect["text"], connect
    assert s["agent"]["error"] is None, s["agent"]
    seen = s["seen"]
    assert seen and "error" not in seen, (seen, s["agent"])
    assert "Attached to " in seen["instructions"], seen
    read, edit = seen["read"], seen["edit"]
    assert read["ok"] and read["source"] == "buffer" and read["unsaved"] is True, read
    assert "typed, not saved" in read["message"], read
    assert edit["ok"] and edit["via"] == "workspaceEdit" and edit["on_disk"] is False, edit
    after = s["after"]
    assert after["buffer"] == "alpha\nBETA\ntyped, not saved\n", after
    assert after["dirty"] is True and after["disk"] == "alpha\nbeta\n", after
    # the activity view got both calls, marked as coming over MCP from the SDK's client
    assert [e["command"] for e in s["events"]] == [READ, EDIT], s
    assert all(e["client"] for e in s["events"]), s["events"]


def test_vscode_renamefile_keeps_a_dirty_document_unsaved_under_its_new_name(
    scenario: dict[str, Any],
) -> None:
    # What the extension's `renameKeepsUnsaved` capability relies on, with no Steadyhand in between.
    s = _step(scenario, "moveUnsaved")["vscodeRename"]
    assert s["dirtyBefore"] is True and s["applied"] is True, s
    assert s["newOpen"] and s["keepsTyping"] and s["newDirty"] is True, s
    assert s["newDisk"] == "probe: saved line\n", s
    assert not s["oldExists"] and not s["oldDocOpen"], s


def test_moving_an_open_file_carries_the_unsaved_typing_to_the_new_tab_unsaved(
    scenario: dict[str, Any],
) -> None:
    s = _step(scenario, "moveUnsaved")
    assert s["dirtyBefore"] is True, s
    assert not s["text"].startswith("Error"), s["text"]
    after = s["after"]
    assert after["newOpen"] and after["newTab"], after
    assert after["keepsTyping"], after
    assert after["newDirty"] is True, "the moved document must stay unsaved"
    # the disk holds the saved bytes under the new name, none of the typing
    assert after["newDisk"] == "notes: saved by the user\nsecond saved line\n", after
    assert not after["oldExists"] and not after["oldDocOpen"] and not after["oldTab"], after


def test_crashed_server_is_restarted(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "crashRestart")
    assert s["killed"], "the driver found no server process to kill"
    assert s["restarted"], s
    assert s["restartsAfter"] == s["restartsBefore"] + 1, s
    assert s["state"] == "running"
    assert s["read"]["ok"] is True, s["read"]


def test_command_called_while_the_server_restarts_waits_for_it(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "crashRestart")
    assert s["noticed"], f"the extension did not notice the killed server: {s}"
    assert s["stateAtCall"] == "starting", s
    assert s["readDuringRestart"].get("ok") is True, s["readDuringRestart"]


def test_unusable_python_gives_one_notification_with_setting_button(
    scenario: dict[str, Any],
) -> None:
    s = _step(scenario, "badPython")
    status = s["failed"]
    assert status["state"] == "failed", status
    assert "steadyhand.server.python" in status["error"], status
    assert s["toasts"] is not None, "the browser did not report the notifications"
    ours = [t for t in s["toasts"] if "Steadyhand" in t]
    assert len(ours) == 1, s["toasts"]
    assert "/nonexistent/python3" in ours[0] and "Open Setting" in ours[0], ours[0]
    assert s["readWhileFailed"]["error"] == "server_not_running", s["readWhileFailed"]
    assert "Restart Server" in s["readWhileFailed"]["message"], s["readWhileFailed"]
    assert s["readMs"] < 5000, "a call to a server that failed must fail at once"
    # The VS Code command as well: a result, not "command not found".
    command = s["commandWhileFailed"]
    assert command.get("error") == "server_not_running", command
    assert "Restart Server" in command["message"], command
    assert s["commandMs"] < 5000, "a command call to a server that failed must fail at once"
    assert s["runningAgain"], "the server did not come back after the setting was fixed"


def test_agent_change_opens_in_the_diff_editor_with_its_two_sides(
    scenario: dict[str, Any],
) -> None:
    s = _step(scenario, "reviewChanges")
    assert s["first"]["ok"] and s["second"]["ok"], (s["first"], s["second"])
    assert len(s["ids"]) == 2, s["ids"]
    assert s["shown"]["ok"] is True, s["shown"]
    assert s["isDiff"], f"the active tab is not a diff editor: {s['tabLabel']}"
    assert s["leftScheme"] == "steadyhand-change"
    # the earlier change: the original text on the left, what it left on the right
    assert s["left"] == s["original"], s["left"]
    assert s["right"] == s["expectedAfter"], s["right"]
    assert "review.py" in s["tabLabel"] and "edit" in s["tabLabel"], s["tabLabel"]


def test_take_back_restores_the_buffer_keeping_the_later_change(
    scenario: dict[str, Any],
) -> None:
    s = _step(scenario, "reviewChanges")
    taken = s["takenBack"]
    assert taken["ok"] is True and taken["type"] == "revert", taken
    assert taken["via"] == "workspaceEdit", taken
    expected = s["original"].replace("line_8 = 8", "eighth = 8")
    assert s["afterTakeBack"] == expected, s["afterTakeBack"]
    assert s["diskAfterTakeBack"] == expected, "the clean buffer was not saved after the take-back"
    conflict = s["conflict"]
    assert conflict["ok"] is False and conflict["error"] == "conflict", conflict
    assert "line 4" in conflict["message"], conflict["message"]
    assert s["conflictUnchanged"], "a refused take-back changed the buffer"


def test_gutter_marks_follow_the_agents_lines(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "reviewChanges")
    assert s["marksAfterEdits"] == [1, 7], s["marksAfterEdits"]
    # the take-back puts line 2 back: not an agent's line any more
    assert s["marksAfterTakeBack"] == [7], s["marksAfterTakeBack"]
    # the user typed on line 8
    assert s["marksAfterTyping"] == [], s["marksAfterTyping"]


def test_take_back_anyway_is_offered_only_where_force_applies(scenario: dict[str, Any]) -> None:
    s = _step(scenario, "reviewChanges")
    stale = s["stale"]
    assert stale["ok"] is False and stale["error"] == "stale" and stale["can_force"] is True, stale
    assert s["keptTyping"], "a refused take-back changed the buffer"
    assert s["staleToasts"] is not None and s["conflictToasts"] is not None, s
    offered = [t for t in s["staleToasts"] if "Take back anyway" in t]
    assert len(offered) == 1 and "force" in offered[0], s["staleToasts"]
    # a conflict is shown with its message and no way to force it
    shown = [t for t in s["conflictToasts"] if "cannot be taken back on its own" in t]
    assert shown, s["conflictToasts"]
    assert not any("Take back anyway" in t for t in s["conflictToasts"]), s["conflictToasts"]


def test_a_warm_start_answers_the_first_command_and_its_time_is_published(
    scenario: dict[str, Any],
) -> None:
    """The cold start a user meets in VS Code: activation, and a restart of the server with
    its environment in place to the first answered command. The figures are written to
    bench/results/vscode-start.json for docs/performance.md (no timing is asserted here)."""
    s = _step(scenario, "warmStart")
    assert s["read"].get("ok") is True, s["read"]
    activated = _step(scenario, "activate")
    figures = {
        "activate_ms": activated["activateMs"],
        "first_ready_ms": activated["readyMs"],
        "warm_restart_to_first_answer_ms": s["restartToFirstAnswerMs"],
        "vscode": activated.get("vscodeVersion"),
    }
    out = REPO / "bench" / "results" / "vscode-start.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=1) + "\n")
