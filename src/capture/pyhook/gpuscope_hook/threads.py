"""Python threads: their Linux thread ids and names, sent to the host file once."""

import threading


class ThreadNames:
    def __init__(self, host_file):
        self._file = host_file
        self._idents = None  # the thread idents the map below was made for
        self._native = {}  # Python thread ident -> Linux thread id
        self._pending = {}  # Linux thread id -> name, not written yet
        self._sent = {}  # Linux thread id -> name written

    def native_ids(self):
        """Python thread ident -> Linux thread id, for the threads Python knows.
        Remembers their names, so a thread that ends before the next write
        still gets its name."""
        active = threading._active
        idents = frozenset(active)
        if idents != self._idents:
            self._idents = idents
            self._native = {}
            for ident, t in list(active.items()):
                tid = t.native_id or 0
                self._native[ident] = tid
                if tid and self._sent.get(tid) != t.name:
                    self._pending[tid] = t.name
        return self._native

    def write_new_names(self):
        self._idents = None  # names may have changed
        self.native_ids()
        pending, self._pending = self._pending, {}
        tids, names = [], []
        for tid, name in pending.items():
            if self._sent.get(tid) != name:
                self._sent[tid] = name
                tids.append(tid)
                names.append(self._file.string(name))
        if tids:
            self._file.write("threads", tid=tids, name=names)
