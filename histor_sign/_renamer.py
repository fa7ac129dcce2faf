"""The detached finisher of a group commit: run as ``python -I -c SOURCE RECORD FD``.

Stdlib only (it runs with ``-I``, importing nothing of ours). The writer hands it a commit
record naming complete, fsynced staged files and the outputs they become, and an open
descriptor of that record on which the writer holds an exclusive ``flock``; the lock is
shared with this process through the inherited descriptor, so it is held until both have
let go. Started in its own session, this process is not ended by a ``kill -9`` of the
writer (nor of the writer's process group): once the first rename may happen, all of them
do. On a failed rename it stops and prints ``{"done": N, "errno": E}`` for the writer to
roll back; on success it fsyncs the directories, removes the record and prints nothing.
"""

import json
import os
import sys


def main() -> int:
    record, fd = sys.argv[1], int(sys.argv[2])
    with open(record, "rb") as fh:
        pairs = json.loads(fh.read(1 << 20))["files"]
    for done, (tmp, target) in enumerate(pairs):
        try:
            os.replace(tmp, target)
        except OSError as exc:
            sys.stdout.write(json.dumps({"done": done, "errno": exc.errno or 0}))
            return 1
    for directory in sorted({os.path.dirname(t) for _, t in pairs}):
        try:
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass
    try:
        os.unlink(record)
    except OSError:
        pass
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
