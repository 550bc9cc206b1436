"""Host sampling: the Python stack of every thread of the process, at a fixed rate.

A daemon thread wakes `hz` times a second, reads every other thread's current
frame (sys._current_frames) and records (time, thread, stack). A stack is the
thread's frames, outermost first, at most MAX_DEPTH of the innermost, each
"file(line): function", joined by ";" and interned once, so a sample costs a
few integers. Samples wait in a bounded buffer that the thread writes out
every flush interval; what does not fit is dropped and counted.

The sampler needs the GIL to read frames: while another thread runs Python
code without releasing it, a sample waits for Python's switch interval
(5 ms by default). Such late samples keep their real time; ticks that passed
meanwhile are not made up but counted (capture.host.samples.missed).
"""

import sys
import threading
import time

MAX_DEPTH = 64


class Sampler:
    def __init__(self, host_file, hz, flush_s, threads):
        self._file = host_file
        self._period_ns = int(1e9 / hz)
        self._flush_ns = int(flush_s * 1e9)
        self._threads = threads  # ThreadNames
        self._capacity = max(1024, int(hz * flush_s * 8))  # 8 busy threads per interval
        self._time, self._tid, self._stack = [], [], []
        self._stack_ids = {}  # (code, line, …) tuple -> string id
        self._frame_names = {}  # (code, line) -> "file(line): function"
        self.taken = self.dropped = self.missed = 0
        # The sampler thread's own CPU time (sampling and writing: the overhead
        # numbers), read at each write: a thread CPU clock read is a system call,
        # which per sample would cost as much as a third of the sample.
        self.cost_ns = 0
        self._cpu_at_write = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpuscope-sampler", daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        self._write()

    def _run(self):
        self._cpu_at_write = time.thread_time_ns()
        try:
            self._loop()
        except Exception as e:  # sampling stops; the program goes on
            self._file.write("meta", stats={}, notes={"capture.host_sampling.stopped": repr(e)})
        self._account_cpu()  # stop() writes the rest

    def _account_cpu(self):
        now = time.thread_time_ns()
        self.cost_ns += now - self._cpu_at_write
        self._cpu_at_write = now

    def _loop(self):
        me = threading.get_ident()
        next_tick = time.monotonic_ns()
        next_flush = next_tick + self._flush_ns
        period = self._period_ns
        wait = self._stop.wait
        while True:
            now = time.monotonic_ns()
            if now < next_tick:
                if wait((next_tick - now) / 1e9):
                    return
                now = time.monotonic_ns()
            behind = (now - next_tick) // period
            if behind > 0:
                self.missed += behind
                next_tick += behind * period
            next_tick += period
            self._sample(me)
            if now >= next_flush:
                self._write()
                next_flush = now + self._flush_ns

    def _sample(self, me):
        wall = time.time_ns()
        frames = sys._current_frames()
        # This thread's own frame would make a cycle (this frame -> the dict ->
        # this frame) that keeps every sampled frame, and the program's objects
        # they hold, alive until the garbage collector runs.
        frames.pop(me, None)
        native = self._threads.native_ids()
        n = len(self._time)
        for ident, frame in frames.items():
            if n >= self._capacity:
                self.dropped += 1
                continue
            self._time.append(wall)
            self._tid.append(native.get(ident, 0))
            self._stack.append(self._stack_id(frame))
            n += 1
            self.taken += 1
        frame = frames = None

    def _stack_id(self, frame):
        key = []
        depth = 0
        while frame is not None and depth < MAX_DEPTH:
            key.append(frame.f_code)
            key.append(frame.f_lineno)
            frame = frame.f_back
            depth += 1
        key = tuple(key)
        sid = self._stack_ids.get(key)
        if sid is None:
            names = []
            for i in range(len(key) - 2, -1, -2):  # outermost first
                names.append(self._frame_name(key[i], key[i + 1]))
            sid = self._stack_ids[key] = self._file.string(";".join(names))
        return sid

    def _frame_name(self, code, line):
        name = self._frame_names.get((code, line))
        if name is None:
            name = self._frame_names[(code, line)] = "%s(%d): %s" % (code.co_filename, line or 0, code.co_name)
        return name

    def _write(self):
        if threading.current_thread() is self._thread:
            self._account_cpu()
        counts = {"capture.host.samples.taken": self.taken, "capture.host.samples.dropped": self.dropped,
                  "capture.host.samples.missed": self.missed, "capture.host.samples.cost_ns": self.cost_ns}
        self.taken = self.dropped = self.missed = self.cost_ns = 0
        counts = {k: n for k, n in counts.items() if n}
        if self._time:
            t, tid, st = self._time, self._tid, self._stack
            self._time, self._tid, self._stack = [], [], []
            self._threads.write_new_names()
            self._file.write("samples", time=t, tid=tid, stack=st)
        if counts:
            self._file.write("meta", stats=counts, notes={})
