"""gpuscope's host half of a capture, inside a captured Python process.

Started by the sitecustomize beside this package when `gpuscope capture` runs
a Python program (the environment below is set for that program only):

  GPUSCOPE_CAPTURE_HOST_DIR       where each process writes <pid>.host (required)
  GPUSCOPE_CAPTURE_FRAMEWORK      ops,shapes,modules,stacks (a subset; default ops,shapes,modules) or none
  GPUSCOPE_CAPTURE_HOST_SAMPLING  samples per second of every thread's stack, or off
  GPUSCOPE_CAPTURE_FLUSH_MS       how often recorded data is written (default 1000)
  GPUSCOPE_CAPTURE_TORCH_OBSERVER off: PyTorch's profiler records ops even where the native observer
                                  was built for the program's torch (native_ops.py)
  GPUSCOPE_CAPTURE_MODULE_HOOKS   off: Python nn.Module hooks even where the C ones were built
                                  (torch_ops.py, ModulePaths); or the path of the C hooks' library

Nothing here may raise into the program: every failure becomes a note in the
host file ("framework view unavailable: <reason>"), which the capture shows.
"""

import atexit
import os
import sys
import threading
import time

from .host_file import FORMAT, HostFile
from .sampler import Sampler
from .threads import ThreadNames

FRAMEWORK_ITEMS = ("ops", "shapes", "modules", "stacks")
DEFAULT_FRAMEWORK = "ops,shapes,modules"  # stacks cost much more (docs/PERFORMANCE.md)

_session = None


class Stats:
    """Counters sent as increments (so a killed process loses only its last ones)."""

    def __init__(self):
        self._pending = {}
        self._lock = threading.Lock()

    def add(self, key, n):
        with self._lock:
            self._pending[key] = self._pending.get(key, 0) + n

    def take(self):
        with self._lock:
            out, self._pending = self._pending, {}
        return out


class Notes:
    """Words for the trace's properties (what ran, what did not and why)."""

    def __init__(self):
        self._pending = {}

    def set(self, key, value):
        self._pending[key] = value

    def take(self):
        out, self._pending = self._pending, {}
        return out


def _parse_options(env):
    framework = env.get("GPUSCOPE_CAPTURE_FRAMEWORK", DEFAULT_FRAMEWORK).strip()
    items = set() if framework in ("", "none") else {x.strip() for x in framework.split(",")}
    hz = env.get("GPUSCOPE_CAPTURE_HOST_SAMPLING", "1000").strip()
    try:
        hz = 0.0 if hz == "off" else float(hz)
    except ValueError:
        hz = 0.0
    try:
        flush_s = max(0.05, float(env.get("GPUSCOPE_CAPTURE_FLUSH_MS", "1000")) / 1000.0)
    except ValueError:
        flush_s = 1.0
    return items, hz, flush_s


class Session:
    def __init__(self, directory, items, hz, flush_s):
        self.directory, self.items, self.hz, self.flush_s = directory, items, hz, flush_s
        self.recorder = None
        self._recorder_note = ""  # which records ops, and why (property capture.framework.recorder)
        self.modules = None
        self._noted_stacks = False
        self._modules_flushed_ns = time.monotonic_ns()
        self._closed = False
        self._open()

    # ---- per process (again in a forked child) ----------------------------------------------------

    def _open(self, forked_from=0):
        self._forked_from = forked_from
        self.file = HostFile(self.directory, os.getpid())
        self.stats, self.notes = Stats(), Notes()
        self.threads = ThreadNames(self.file)
        try:
            with open("/proc/self/cmdline", "rb") as f:
                argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        except OSError:
            argv = list(sys.argv)
        self.file.write("process", format=FORMAT, pid=os.getpid(), ppid=os.getppid(), forked_from=forked_from,
                        argv=argv, rank=_rank(), python=sys.version.split()[0], start_ns=time.time_ns(),
                        framework=sorted(self.items), host_sampling_hz=self.hz)
        self.sampler = None
        if self.hz > 0:
            self.sampler = Sampler(self.file, self.hz, self.flush_s, self.threads)
            self.sampler.start()
            self.notes.set("capture.host_sampling", "%g Hz, Python stacks of every thread" % self.hz)
        else:
            self.notes.set("capture.host_sampling", "off")

    def start(self):
        if self.items:
            if "torch" in sys.modules:
                self._torch_imported(sys.modules["torch"])
            else:
                _watch_import("torch", self._torch_imported)
        else:
            self.notes.set("capture.framework", "off")
        atexit.register(self.close)
        os.register_at_fork(before=self._before_fork, after_in_parent=self._after_fork_parent,
                            after_in_child=self._after_fork_child)
        self._write_meta()

    # ---- torch ------------------------------------------------------------------------------------

    def _torch_imported(self, torch):
        try:
            self._start_torch(torch)
        except Exception as e:
            self.notes.set("capture.framework", "unavailable: %r" % (e,))
        self._write_meta()

    def _start_torch(self, torch):
        from . import torch_ops

        why = torch_ops.supported(torch)
        if why:
            self.notes.set("capture.framework", "unavailable: " + why)
            return
        if "ops" in self.items:
            self.recorder = self._op_recorder(torch)
            _patch_program_profiler(torch, self.recorder)
            if self.recorder.uses_profiler and self._cuda_build_waiting(torch):
                self.notes.set("capture.framework", "waiting for CUDA to start")
            else:
                self.recorder.start()
            atexit.register(self._flush_torch_at_exit)
        if "modules" in self.items:
            self.modules = torch_ops.ModulePaths(torch, self.file, self.stats, self.notes, self._top_level_module_call)
        if self.recorder is None or self.recorder.active or not self._cuda_build_waiting(torch):
            self._note_framework(torch)

    def _op_recorder(self, torch):
        """The native observer where it was built for this torch, else PyTorch's profiler; the
        property capture.framework.recorder says which and why."""
        from . import native_ops, torch_ops

        lib, why = native_ops.load(torch, self.items)
        if lib is not None:
            self._recorder_note = "native observer (built for torch %s)" % torch.__version__
            self.notes.set("capture.framework.recorder", self._recorder_note)
            return native_ops.NativeRecorder(lib, torch, self.file, self.stats, self.notes, "shapes" in self.items)
        self._recorder_note = "torch profiler: " + why
        self.notes.set("capture.framework.recorder", self._recorder_note)
        return torch_ops.OpRecorder(torch, self.file, self.stats, self.notes, "shapes" in self.items,
                                    "stacks" in self.items, "modules" in self.items)

    def _note_framework(self, torch):
        r = self.recorder
        what = [x for x in FRAMEWORK_ITEMS if x in self.items and (x != "stacks" or (r is not None and r.with_stacks))]
        where = ""
        if r is not None:
            if not r.active:
                return  # the recorder said why
            where = r.where()
        self.notes.set("capture.framework", "pytorch %s: %s%s" % (torch.__version__, ",".join(what), where))
        self._noted_stacks = r is not None and r.with_stacks

    @staticmethod
    def _cuda_build_waiting(torch):
        # With CUDA, PyTorch's profiler starts its own CUPTI client when it is
        # first enabled; before CUDA starts, it would take CUPTI from gpuscope's
        # capture, which CUDA starts in cuInit. So on CUDA builds under
        # gpuscope's injection, ops are recorded from the first top-level
        # module call, after CUDA has started (see _start_cuda).
        if not getattr(torch.version, "cuda", None) or not os.environ.get("CUDA_INJECTION64_PATH"):
            return False
        try:
            return not torch.cuda.is_initialized()
        except Exception:
            return True

    @staticmethod
    def _start_cuda(torch):
        # By a program's first module call CUDA is usually up; where not (a CPU
        # model on a CUDA build), asking whether it is available initializes the
        # driver — as the program's first CUDA call would —, so gpuscope's CUPTI
        # client is the first.
        try:
            torch.cuda.is_available()
        except Exception:
            pass

    def _top_level_module_call(self):
        # The flush point: Python code on the recorder's thread, between steps.
        # ModulePaths catches what this raises.
        r = self.recorder
        if r is None:  # module calls alone: written every flush interval
            now = time.monotonic_ns()
            if now - self._modules_flushed_ns >= self.flush_s * 1e9:
                self._modules_flushed_ns = now
                self._flush_modules()
                self._write_meta()
            return
        if not r.active:
            torch = sys.modules["torch"]
            if r.not_started():
                if r.uses_profiler and self._cuda_build_waiting(torch):
                    self._start_cuda(torch)
                if r.start(stacks=True):
                    self._note_framework(torch)
                    self._write_meta()
            return
        if not r.on_this_thread():
            return
        upgrade = r.wants_stacks() and not r.with_stacks  # started where the Python tracer cannot be
        if upgrade or time.monotonic_ns() - r.last_flush_ns >= self.flush_s * 1e9:
            self._flush_torch(resume=True)

    def _flush_torch(self, resume=True):
        r = self.recorder
        if r is not None and r.active and r.on_this_thread():
            r.flush(resume, stacks=True)
            if r.active and r.with_stacks != self._noted_stacks:
                self._note_framework(sys.modules["torch"])
        self._flush_modules()
        self._write_meta()

    def _flush_modules(self):
        if self.modules is None:
            return
        start, end, tid, name = self.modules.take()
        if start:
            self.file.write("ranges", start=start, end=end, tid=tid, name=name, cat=[2] * len(start))
            self.stats.add("capture.framework.module_calls", len(start))

    def _flush_torch_at_exit(self):
        r = self.recorder
        if r is not None and r.active and not r.on_this_thread():
            self.notes.set("capture.framework.exit", "ops since the last flush point not written: PyTorch's profiler "
                                                     "ran on a thread other than the one that exited")
        try:
            self._flush_torch(resume=False)
        except Exception as e:
            self.notes.set("capture.framework.exit", "ops since the last flush point lost: %r" % (e,))

    def _write_meta(self):
        stats, notes = self.stats.take(), self.notes.take()
        if stats or notes:
            self.file.write("meta", stats=stats, notes=notes)

    # ---- fork -------------------------------------------------------------------------------------

    def _before_fork(self):
        # PyTorch's profiler stops over a fork; the native observer goes on recording the other threads
        # (the child drops what it inherits).
        r = self.recorder
        try:
            self._flush_torch(resume=r is not None and not r.uses_profiler)
        except Exception:
            pass

    def _after_fork_parent(self):
        # Inside os.fork: without the Python tracer (the next flush point adds it back).
        r = self.recorder
        if r is not None and not r.active and r.on_this_thread() and not r.paused_by_program:
            _quietly(lambda: r.start(stacks=False))

    def _after_fork_child(self):
        # A forked child (a DataLoader worker) records into its own file, as
        # its own process; the merge puts it beside its parent.
        try:
            parent = os.getppid()
            # Python learns the forked thread's new Linux id only later
            # (multiprocessing sets it when its child starts).
            me = threading.current_thread()
            if hasattr(me, "_set_native_id"):
                me._set_native_id()
            self._open(forked_from=parent)
            if self.recorder is not None:
                self.recorder = self.recorder.forked(self.file, self.stats, self.notes)
                self.notes.set("capture.framework.recorder", self._recorder_note)
                if self.recorder.start(stacks=False):
                    self._note_framework(sys.modules["torch"])
            if self.modules is not None:
                self.modules.forked(self.file, self.stats, self.notes)
            mp_util = sys.modules.get("multiprocessing.util")
            if mp_util is not None:
                # multiprocessing's children leave through os._exit after its
                # finalizers, not atexit; it clears the finalizers a child
                # inherits, then runs its after-fork functions.
                mp_util.register_after_fork(self, _finalize_at_exit)
            self._write_meta()
        except Exception as e:
            sys.stderr.write("gpuscope: host capture of forked process %d failed: %r\n" % (os.getpid(), e))

    # ---- exit -------------------------------------------------------------------------------------

    def _note_multiprocessing_parent(self):
        # A child multiprocessing started with spawn or forkserver (not a fork,
        # which _after_fork_child knows) joins its parent's file like a forked one.
        mp = sys.modules.get("multiprocessing.process")
        parent = mp.parent_process() if mp is not None and hasattr(mp, "parent_process") else None
        if parent is not None and parent.pid and parent.pid != self._forked_from:
            self.file.write("parent", pid=parent.pid)

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            self._flush_torch(resume=False)
            self._note_multiprocessing_parent()
            if self.sampler is not None:
                self.sampler.stop()
            self.threads.write_new_names()
            self._write_meta()
            self.file.write("end")
        except Exception as e:  # the file then has no end: the merge counts it unfinished
            sys.stderr.write("gpuscope: host capture of process %d ended badly: %r\n" % (os.getpid(), e))
        finally:
            self.file.close()


def _rank():
    for name in ("OMPI_COMM_WORLD_RANK", "RANK", "SLURM_PROCID", "PMI_RANK"):
        v = os.environ.get(name, "")
        if v.isdigit():
            return int(v)
    return -1


def _finalize_at_exit(session):
    import multiprocessing.util

    multiprocessing.util.Finalize(None, session.close, exitpriority=0)


def _watch_import(name, callback):
    """Calls callback(module) once `import name` has finished, on the importing thread."""
    import importlib.abc

    class Watcher(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = None
            for finder in list(sys.meta_path):  # as the import system would, without us
                find = getattr(finder, "find_spec", None)
                spec = find(fullname, path, target) if find is not None else None
                if spec is not None:
                    break
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                callback(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Watcher())


def _quietly(f):
    """Runs f; a failure of ours never reaches the program (it is said on stderr)."""
    try:
        f()
    except Exception as e:
        sys.stderr.write("gpuscope: host capture: %r\n" % (e,))


def _patch_program_profiler(torch, recorder):
    """The program's own torch.profiler / autograd.profiler wins on our thread."""
    a = torch._C._autograd

    def starting(original):
        def enable(*args, **kwargs):
            _quietly(recorder.program_profiler_starting)
            try:
                return original(*args, **kwargs)
            except BaseException:
                _quietly(recorder.program_profiler_stopped)
                raise

        return enable

    def stopping(original):
        def disable(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            finally:
                _quietly(recorder.program_profiler_stopped)

        return disable

    wrapped = {}
    for n in ("_enable_profiler", "_enable_profiler_legacy"):
        if hasattr(a, n):
            wrapped[n] = starting(getattr(a, n))
    for n in ("_disable_profiler", "_disable_profiler_legacy"):
        if hasattr(a, n):
            wrapped[n] = stopping(getattr(a, n))
    for module_name in ("torch.autograd", "torch.autograd.profiler", "torch.autograd.profiler_legacy"):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for n, f in wrapped.items():
            if hasattr(module, n):
                setattr(module, n, f)


def install():
    global _session
    directory = os.environ.get("GPUSCOPE_CAPTURE_HOST_DIR")
    if not directory or _session is not None:
        return
    items, hz, flush_s = _parse_options(os.environ)
    _session = Session(directory, items, hz, flush_s)
    _session.start()
