#!/usr/bin/env -S python3 -S -E
"""
A stand-in for `mlc-opt`, `mlc-run` and `mlc-translate` inside lit: it hands its command
line, environment, working folder and standard streams to the tool server (server.py),
which runs the real tool in a fork of a process that has already imported mlc, and exits
as the tool did. Python and xDSL start-up is most of a lit test's time; this pays it once.

Without a server (`MLC_TOOL_SERVER` unset, or nobody listening) it runs the real tool.
"""

import json
import os
import signal
import socket
import struct
import sys

TOOL = os.path.basename(sys.argv[0])


def run_real_tool() -> None:
    """Replace this process with the installed tool, found beside the interpreter."""
    real = os.path.join(os.path.dirname(sys.executable), TOOL)
    os.execv(real, [real, *sys.argv[1:]])


def main() -> None:
    address = os.environ.get("MLC_TOOL_SERVER")
    if not address:
        run_real_tool()
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(address)
    except OSError:
        run_real_tool()
    request = json.dumps(
        {"tool": TOOL, "argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    ).encode()
    socket.send_fds(connection, [struct.pack("!I", len(request))], [0, 1, 2])
    connection.sendall(request)
    reply = b""
    while len(reply) < 4:
        chunk = connection.recv(4 - len(reply))
        if not chunk:
            sys.stderr.write(f"{TOOL}: error: the lit tool server went away\n")
            sys.exit(1)
        reply += chunk
    (status,) = struct.unpack("!i", reply)
    if status < 0:  # killed by a signal: die of the same one, as the tool did
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main()
