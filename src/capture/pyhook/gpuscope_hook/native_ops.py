"""PyTorch's ops through gpuscope's native observer (src/capture/torch_observer).

A small library built against one PyTorch registers a global RecordFunction
callback that writes each finished op as a fixed-size row into its thread's
buffer; at a flush point the hook takes them all in bulk, already formatted as
the columns of a "ranges" chunk, so no Python runs per op (docs/capture.md,
"The native observer"). The rows are those torch_ops.OpRecorder takes from
PyTorch's profiler: the same ops, names, scopes, input shapes and dtypes,
sequence numbers and forward threads.

It is used only when it was built for the torch the program imported (the
library lies in torch_observer/torch-<torch.__version__>/ beside this package,
and says which version and C++ ABI it was built with); otherwise, or when
GPUSCOPE_CAPTURE_TORCH_OBSERVER=off, or with stacks (which need PyTorch's
Python tracer), the hook uses the profiler and says why.
"""

import ctypes
import os
import threading
import time

from .torch_ops import FLUSH_OVERHEAD, SHAPELESS_OPS

ENV = "GPUSCOPE_CAPTURE_TORCH_OBSERVER"  # off, or the path of a library to use
ENV_MAX_ROWS = "GPUSCOPE_CAPTURE_MAX_BUFFERED_OPS"
INTERFACE = 2
MAX_BUFFERED_OPS = 1 << 20  # rows held between flush points (56 bytes each), beyond which ops are dropped
LIBRARY = "libgpuscope_torch_observer.so"


def observer_dir():
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch_observer")


def load(torch, items, env=os.environ):
    """(the library, None) when the native observer can record this torch's ops, else (None, why)."""
    choice = env.get(ENV, "").strip()
    if choice == "off":
        return None, "%s=off" % ENV
    if "stacks" in items:
        return None, "stacks need PyTorch's Python tracer"
    version = torch.__version__
    if choice:
        path = choice
    else:
        path = os.path.join(observer_dir(), "torch-" + version, LIBRARY)
        if not os.path.exists(path):
            try:
                built = sorted(d[len("torch-"):] for d in os.listdir(observer_dir()) if d.startswith("torch-"))
            except OSError:
                built = []
            return None, "no native observer built for torch %s (built for: %s)" % (
                version, ", ".join(built) if built else "none")
    try:
        lib = ctypes.CDLL(path)
        lib.gpuscope_observer_interface.restype, lib.gpuscope_observer_interface.argtypes = ctypes.c_int, []
        if lib.gpuscope_observer_interface() != INTERFACE:  # before the rest, which another one may lack
            return None, "the native observer %s is of another gpuscope" % path
        _declare(lib)
    except (OSError, AttributeError) as e:
        return None, "the native observer %s does not load: %s" % (path, e)
    built_for = lib.gpuscope_observer_torch_version().decode("utf-8", "replace")
    if built_for != version:
        return None, "the native observer was built for torch %s, the program imported %s" % (built_for, version)
    abi = getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", None)
    if abi is not None and int(abi) != lib.gpuscope_observer_cxx11_abi():
        return None, "the native observer was built with another C++ ABI than torch %s" % version
    return lib, None


def _declare(lib):
    i64, size_p = ctypes.c_int64, ctypes.POINTER(ctypes.c_size_t)
    for name, res, args in (
            ("gpuscope_observer_interface", ctypes.c_int, []),
            ("gpuscope_observer_torch_version", ctypes.c_char_p, []),
            ("gpuscope_observer_cxx11_abi", ctypes.c_int, []),
            ("gpuscope_observer_start", ctypes.c_int, [ctypes.c_int, ctypes.c_char_p, i64, ctypes.c_char_p,
                                                        ctypes.c_size_t]),
            ("gpuscope_observer_stop", None, []),
            ("gpuscope_observer_collect", i64, [ctypes.POINTER(i64)]),
            ("gpuscope_observer_new_strings", ctypes.c_void_p, [i64, size_p]),
            ("gpuscope_observer_string_ids", None, [ctypes.POINTER(i64), i64]),
            ("gpuscope_observer_format_next", ctypes.c_void_p, [size_p]),
            ("gpuscope_observer_dropped", i64, []),
            ("gpuscope_observer_errors", i64, [])):
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def max_rows(env=os.environ):
    try:
        return max(1, int(env.get(ENV_MAX_ROWS, MAX_BUFFERED_OPS)))
    except ValueError:
        return MAX_BUFFERED_OPS


class NativeRecorder:
    """The native observer in this process; the interface of torch_ops.OpRecorder."""

    uses_profiler = False  # touches no CUPTI: starts when torch is imported, on CUDA builds too
    with_stacks = False
    paused_by_program = False

    def __init__(self, lib, torch, host_file, stats, notes, shapes):
        self._lib = lib
        self._torch = torch
        self._file = host_file
        self._stats = stats
        self._notes = notes
        self._shapes = shapes
        self._started = False
        self._active = False
        self._lock = threading.Lock()  # one flush at a time, from whichever thread reaches a flush point
        self.last_flush_ns = time.monotonic_ns()

    def forked(self, host_file, stats, notes):
        """The recorder of a forked child (the library dropped the parent's rows in the fork)."""
        return NativeRecorder(self._lib, self._torch, host_file, stats, notes, self._shapes)

    def on_this_thread(self):
        return True  # every thread's ops are recorded; any can take them

    def not_started(self):
        return not self._started

    def wants_stacks(self):
        return False

    def where(self):
        return " on every thread (native observer)"

    @property
    def active(self):
        return self._active

    def start(self, stacks=False):
        error = ctypes.create_string_buffer(512)
        shapeless = "\n".join(sorted(SHAPELESS_OPS)).encode()
        if self._lib.gpuscope_observer_start(int(self._shapes), shapeless, max_rows(), error, len(error)) != 0:
            self._notes.set("capture.framework", "unavailable: torch %s: the native observer: %s" % (
                self._torch.__version__, error.value.decode("utf-8", "replace")))
            return False
        self._started = self._active = True
        return True

    def flush(self, resume=True, stacks=False):
        """Writes the ops recorded since the last flush; stops recording unless `resume`."""
        if not self._active:
            return
        with self._lock:
            t0, cpu0, wall0 = time.monotonic_ns(), time.thread_time_ns(), time.time_ns()
            if not resume:
                self._lib.gpuscope_observer_stop()
                self._active = False
            try:
                self._take()
            except Exception as e:
                self._stats.add("capture.framework.flush_errors", 1)
                self._notes.set("capture.framework.flush_error", repr(e))
            self._stats.add("capture.framework.flush_ns", time.monotonic_ns() - t0)
            self._stats.add("capture.framework.flush_cpu_ns", time.thread_time_ns() - cpu0)
            self._file.write("overheads", start=[wall0], end=[time.time_ns()], tid=[threading.get_native_id()],
                             kind=[self._file.string(FLUSH_OVERHEAD)])
            self._stats.add("capture.framework.flushes", 1)
            self.last_flush_ns = time.monotonic_ns()

    def _take(self):
        lib = self._lib
        new = ctypes.c_int64()
        rows = lib.gpuscope_observer_collect(ctypes.byref(new))
        if new.value:
            size = ctypes.c_size_t()
            blob = ctypes.string_at(lib.gpuscope_observer_new_strings(new.value, ctypes.byref(size)), size.value)
            texts = blob.split(b"\0")[:new.value]
            ids = (ctypes.c_int64 * len(texts))(*[self._file.string(t.decode("utf-8", "replace")) for t in texts])
            lib.gpuscope_observer_string_ids(ids, len(texts))
        for key, n in (("capture.framework.ops_dropped", lib.gpuscope_observer_dropped()),
                       ("capture.framework.observer_errors", lib.gpuscope_observer_errors())):
            if n:
                self._stats.add(key, n)
        if rows:
            self._file.write_raw("ranges", self._formatted())
            self._stats.add("capture.framework.ops", rows)

    def _formatted(self):
        """The taken rows' columns text, in parts of at most ~256 KiB: views of the library's one buffer, each
        valid until the next is asked for (written, not copied: no memory in proportion to the rows)."""
        size = ctypes.c_size_t()
        while True:
            address = self._lib.gpuscope_observer_format_next(ctypes.byref(size))
            if not size.value:
                return
            yield memoryview((ctypes.c_char * size.value).from_address(address)).cast("B")

    # ---- the program's own profiler: both record, neither disturbs the other ------------------------

    def program_profiler_starting(self):
        self._notes.set("capture.framework.program_profiler",
                        "the program ran torch.profiler itself; gpuscope's native observer kept recording beside it")

    def program_profiler_stopped(self):
        pass
