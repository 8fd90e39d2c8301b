"""The first process inside a sandbox: set the rlimits, drop root, run the command as a
child and report how it ended on the status pipe.

Run as ``python -I -S _assay_launcher.py CONFIG_JSON COMMAND [ARGS...]`` (standard library
only; never imported by assay). CONFIG_JSON holds ``status_fd``, ``rlimits`` (name ->
[soft, hard]) and, when the sandbox is started by root, the ``uid``/``gid`` to switch
to. Status lines: ``started`` once the command's process exists (anything failing
before that is the sandbox's fault, not the command's), then ``status N`` with the raw
wait status. The status pipe is close-on-exec, so the command never holds it.
"""

from __future__ import annotations

import json
import os
import resource
import sys


def main() -> int:
    config = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    fd = int(config["status_fd"])
    os.set_inheritable(fd, False)
    for name, (soft, hard) in config["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))
    uid = config.get("uid")
    if uid is not None:
        os.setgroups([])
        os.setgid(int(config["gid"]))
        os.setuid(int(uid))
    pid = os.fork()
    if pid == 0:
        os.close(fd)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"sandbox: cannot run {argv[0]!r}: {exc.strerror}\n".encode())
        os._exit(127)
    os.write(fd, b"started\n")
    _, status = os.waitpid(pid, 0)
    os.write(fd, f"status {status}\n".encode())
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
