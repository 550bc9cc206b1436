"""The per-process host file the hook writes and `gpuscope capture` merges.

One file per process, `<dir>/<pid>.host`: lines of compact JSON, each a
self-contained chunk appended with one write() (the native observer's rows
with a few, under the file's lock; docs/capture.md, "The host file"). A
string is sent once, in the `strings` list of the first chunk that uses it;
rows name strings by their index (0 is the empty string). A process killed
mid-write leaves at most its last line cut, which the reader counts and
skips.
"""

import json
import os
import threading

FORMAT = 1

# Range categories (the trace's range domains).
CPU_OP, USER_ANNOTATION, PYTHON_FUNCTION = 0, 1, 2


class HostFile:
    def __init__(self, directory, pid):
        self.path = os.path.join(directory, "%d.host" % pid)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        self._lock = threading.Lock()
        self._ids = {"": 0}
        self._new = []  # strings not yet written
        self.failed = None  # why writing stopped (disk full, …), once it has

    def string(self, s):
        """The id of `s` (sent with the next chunk when new)."""
        i = self._ids.get(s)
        if i is not None:
            return i
        with self._lock:  # ids are positions in the order strings are sent
            i = self._ids.get(s)
            if i is None:
                i = self._ids[s] = len(self._ids)
                self._new.append(s)
            return i

    def write(self, kind, /, **columns):
        """Appends one chunk. Strings interned before the call go with it."""
        with self._lock:
            if self.failed is not None:
                return False
            chunk = {"k": kind}
            if self._new:
                chunk["strings"] = self._new
                self._new = []
            chunk.update(columns)
            return self._append(json.dumps(chunk, separators=(",", ":"), ensure_ascii=False).encode(
                "utf-8", "surrogatepass") + b"\n")

    def write_raw(self, kind, parts):
        """Appends one chunk whose fields after `k` and `strings` are given as JSON text
        (`,"start":[…],…`) in parts (bytes-like, each written before the next is taken), as the native
        observer formats its rows. The line is written in several write()s, all under the lock."""
        with self._lock:
            if self.failed is not None:
                return False
            head = '{"k":' + json.dumps(kind)
            if self._new:
                head += ',"strings":' + json.dumps(self._new, separators=(",", ":"), ensure_ascii=False)
                self._new = []
            if not self._append(head.encode("utf-8", "surrogatepass")):
                return False
            for part in parts:
                if not self._append(part):
                    return False
            return self._append(b"}\n")

    def _append(self, line):
        """Writes one line, or a part of one (under the lock); False, and writing stops, on an error."""
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as e:
            self.failed = str(e)
            return False
        return True

    def close(self):
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
                self.failed = self.failed or "closed"
