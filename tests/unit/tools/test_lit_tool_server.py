"""
The lit tool server (tests/filecheck/tool_server/) must be invisible: a tool call served
from a fork exits, prints and fails exactly as the installed tool does, or the lit suite
would pass where the real tools fail.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SERVER_DIR = Path(__file__).parents[2] / "filecheck" / "tool_server"
VALID = "func.func @f() {\n  func.return\n}\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    address = tmp_path_factory.mktemp("server") / "socket"
    process = subprocess.Popen(
        [sys.executable, SERVER_DIR / "server.py", address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdout.readline() == b"ready\n"
    yield address
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    process.stdout.close()
    assert not address.exists(), "the server leaves its socket behind"


def call(tool, args, address, stdin="", cwd=None, **env):
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    environment.pop("MLC_TOOL_SERVER", None)
    if address is not None:
        environment["MLC_TOOL_SERVER"] = str(address)
    return subprocess.run(
        [SERVER_DIR / "bin" / tool, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**environment, **env},
    )


def test_a_served_call_reads_stdin_and_writes_stdout(server):
    done = call("mlc-opt", ["-", "-p", "cse"], server, stdin=VALID)
    assert (done.returncode, done.stderr) == (0, "")
    assert "func.func @f()" in done.stdout


def test_a_served_call_runs_in_the_callers_folder_with_its_environment(server, tmp_path):
    (tmp_path / "in.mlir").write_text(VALID)
    plugin = tmp_path / "plugin.py"
    plugin.write_text("raise RuntimeError('plugin ran')\n")
    done = call("mlc-opt", ["in.mlir", "-p", "cse"], server, cwd=tmp_path, MLC_PLUGINS=plugin)
    assert done.returncode == 1
    assert done.stderr == (
        f"mlc-opt: error: cannot load pass plugin '{plugin}': RuntimeError: plugin ran\n"
    )


def test_a_served_call_reports_errors_and_exit_codes(server):
    bad_flag = call("mlc-translate", ["--mlir-to-llvmir", "--bogus"], server)
    assert bad_flag.returncode == 2
    assert bad_flag.stderr.endswith("mlc-translate: error: unrecognized arguments: --bogus\n")
    bad_input = call("mlc-opt", ["-"], server, stdin="func.func @f( {")
    assert bad_input.returncode == 1
    assert bad_input.stderr.startswith("<stdin>:1:15: error:")


def test_a_tool_killed_by_a_signal_kills_the_client_alike(server, tmp_path):
    plugin = tmp_path / "crash.py"
    plugin.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    done = call("mlc-opt", ["-", "-p", "cse"], server, stdin=VALID, MLC_PLUGINS=plugin)
    assert done.returncode == -signal.SIGSEGV


def test_without_a_server_the_installed_tool_runs(tmp_path):
    done = call("mlc-opt", ["-", "-p", "cse"], tmp_path / "nobody-listens", stdin=VALID)
    assert (done.returncode, done.stderr) == (0, "")
    assert "func.func @f()" in done.stdout
