"""
The lit tool server: imports mlc once, then runs each tool call of a lit run in a fork.

lit.cfg starts it with a socket path and a pipe on its stdin; it stops when lit closes the
pipe (lit exited, however it exited). Each call (see client.py) is served by two forks: a
watcher, which waits for the tool and sends its exit status back, and the tool itself,
which takes over the client's streams, folder, environment and arguments and runs the
console script's `main` as the installed script would. Nothing a tool does outlives its
fork, so calls cannot see each other's state.
"""

import atexit
import importlib
import json
import os
import select
import shutil
import signal
import socket
import struct
import sys
import traceback
from importlib.metadata import entry_points

TOOLS = {
    entry.name: entry.value
    for entry in entry_points(group="console_scripts")
    if entry.value.startswith("mlc.tools.")
}


def preload() -> None:
    """Import what the tools reach, without calling anything that reads the environment."""
    import mlc  # noqa: F401  (the whole public API: compiler, frontends, backends)
    from mlc import registry

    for value in TOOLS.values():
        importlib.import_module(value.partition(":")[0])
    factories = {**registry.MLC_PASSES, **registry.MLC_DIALECTS}
    for factory in factories.values():
        factory()


def receive(connection: socket.socket) -> tuple[dict, list[int]]:
    header, fds, _, _ = socket.recv_fds(connection, 4, 3)
    (size,) = struct.unpack("!I", header)
    body = b""
    while len(body) < size:
        chunk = connection.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the client went away")
        body += chunk
    return json.loads(body), fds


def run_tool(request: dict, fds: list[int]) -> None:
    """In the tool's fork: become the process the client would have started. Never returns."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    module, _, function = TOOLS[request["tool"]].partition(":")
    sys.argv = [request["tool"], *request["argv"]]
    try:
        code = getattr(importlib.import_module(module), function)()
    except SystemExit as stop:
        code = stop.code
    except BaseException:  # as an uncaught exception ends the installed script
        traceback.print_exc()
        code = 1
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1
    os._exit(code or 0)


def serve_call(connection: socket.socket) -> None:
    """In the watcher's fork: start the tool, wait for it, report its status. Never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    status = 1
    try:
        request, fds = receive(connection)
        pid = os.fork()
        if pid == 0:
            connection.close()
            try:
                run_tool(request, fds)
            finally:
                os._exit(70)  # the server's own code failed before the tool ran
        for fd in fds:
            os.close(fd)
        _, wait_status = os.waitpid(pid, 0)
        status = os.waitstatus_to_exitcode(wait_status)
    finally:
        try:
            connection.sendall(struct.pack("!i", status))
        finally:
            os._exit(0)


def main() -> None:
    address = sys.argv[1]
    preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(128)
    print("ready", flush=True)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # watchers are reaped by the kernel
    try:
        while True:
            ready, _, _ = select.select([listener, sys.stdin], [], [])
            if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
                return  # lit closed the pipe
            if listener in ready:
                connection, _ = listener.accept()
                if os.fork() == 0:
                    listener.close()
                    serve_call(connection)
                connection.close()
    finally:
        shutil.rmtree(os.path.dirname(address), ignore_errors=True)


if __name__ == "__main__":
    main()
