"""PyTorch's view of the program: ops with shapes, modules, Python stacks.

Where gpuscope's native observer was built for the program's torch, it records
the ops instead (native_ops.py, same rows, far cheaper); this is the path for
every other torch, for stacks, and with GPUSCOPE_CAPTURE_TORCH_OBSERVER=off.

Ops are recorded by PyTorch's own profiler collection (the RecordFunction
observers Kineto uses) with CPU activity only, on the thread that imported
torch and the threads it hands work to (autograd's). Nothing is added to the
program: the profiler is enabled when torch has been imported, and its results
are taken (disable, read the event tree, enable again) at a flush point every
flush interval — the start of a top-level nn.Module call on that thread —,
before a fork and at exit. Reading the results is the costly part (PyTorch's
post-processing, then a few pybind attribute reads per op; docs/PERFORMANCE.md);
it happens at those points, not while ops run, so the loop below reads as
little of each event as it can.

- ops: PyTorch's cpu_op events (aten ops, autograd's backward functions) with
  input shapes and dtypes (Kineto's "Input Dims" / "Input type" text), and the
  record_function ranges (Optimizer.step#…, enumerate(DataLoader)#…) as
  user annotations, and PyTorch's autograd link: each op's sequence number
  (a forward op and the backward ops of the node it created share it) and a
  backward op's forward thread (PyTorch's number, as Kineto's "Fwd thread
  id"; the event tree has no such field, so when some op is an autograd
  node's call it comes from the result's flat event list, by correlation id);
- stacks (opt-in, costly): the profiler's Python tracer; the Python frames
  enclosing each op (the innermost MAX_OP_STACK) become python_function
  ranges, deduplicated by being ranges: one per call, however many ops ran
  in it;
- modules: global nn.Module forward hooks time every module call and name it
  by its path from the root ("nn.Module: model.layer1.0.conv1"); the hooks are
  written in C (src/capture/module_hooks, built with Python's limited API)
  where that library was built and loads, else they are Python closures; the
  property capture.framework.module_hooks says which ran and why.

The program's own profiler wins: when it enables one on our thread, ours
pauses (what it recorded is written first) and resumes when it stops.
"""

import json
import os
import sys
import threading
import time
import weakref

from .host_file import CPU_OP, PYTHON_FUNCTION, USER_ANNOTATION

_time_ns = time.time_ns  # CLOCK_REALTIME ns: the C hooks read the same clock

ENV_MODULE_HOOKS = "GPUSCOPE_CAPTURE_MODULE_HOOKS"  # off, or the path of the C hooks' library to use
MODULE_HOOKS = "_module_hooks.abi3.so"  # in module_hooks/ beside this package

MAX_OP_STACK = 32  # Python frames kept above each op
FLUSH_OVERHEAD = "gpuscope: taking PyTorch's ops"  # the overhead row of a flush
_MARK = "gpuscope#thread "  # a range naming the Linux id of the profiler's thread

# Ops whose shapes say nothing the op table uses (views, aliases, allocations):
# reading an op's shapes is the costliest part of taking the results, and these
# are about half of all ops.
SHAPELESS_OPS = frozenset(
    "aten::" + n for n in (
        "empty", "empty_strided", "empty_like", "as_strided", "as_strided_", "view", "_reshape_alias", "reshape",
        "t", "transpose", "expand", "resolve_conj", "resolve_neg", "detach", "detach_", "lift_fresh", "unsqueeze",
        "squeeze", "permute", "select", "slice", "alias", "_unsafe_view", "flatten", "numpy_T", "result_type"))

# Kineto's names of dtypes ("Input type"), for torch versions that give torch.dtype.
_KINETO_DTYPES = {
    "torch.float32": "float",
    "torch.float64": "double",
    "torch.float16": "c10::Half",
    "torch.bfloat16": "c10::BFloat16",
    "torch.int64": "long int",
    "torch.int32": "int",
    "torch.int16": "short int",
    "torch.int8": "signed char",
    "torch.uint8": "unsigned char",
    "torch.bool": "bool",
    "torch.complex64": "c10::complex<float>",
    "torch.complex128": "c10::complex<double>",
}


def supported(torch):
    """None if this torch has what the recorder uses, else why not (words)."""
    try:
        version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2] if p.isdigit())
    except Exception:
        version = ()
    if len(version) < 2 or version < (1, 13):
        return "torch %s is older than 1.13" % torch.__version__
    a = getattr(torch._C, "_autograd", None)
    p = getattr(torch._C, "_profiler", None)
    for owner, names in ((a, ("_prepare_profiler", "_enable_profiler", "_disable_profiler")),
                         (p, ("ProfilerConfig", "ProfilerState", "ProfilerActivity", "_ExperimentalConfig",
                              "_EventType"))):
        for n in names:
            if owner is None or not hasattr(owner, n):
                return "torch %s has no torch._C %s" % (torch.__version__, n)
    return None


def _dims_text(inputs):
    """Kineto's "Input Dims" and "Input type" texts of an op's inputs (both torch APIs)."""
    shapes = getattr(inputs, "shapes", None)
    if shapes is not None:  # 1.13 / 2.0: _Inputs
        return str(shapes).replace(" ", ""), _json_strings(inputs.dtypes)
    dims, types = [], []
    for x in inputs:  # 2.1+: a list of TensorMetadata, lists, scalars, None
        sizes = getattr(x, "sizes", None)
        if sizes is not None:
            dims.append(list(sizes))
            d = str(x.dtype)
            types.append(_KINETO_DTYPES.get(d, d))
        elif isinstance(x, list):
            dims.append([])
            types.append("TensorList")
        elif x is None:
            dims.append([])
            types.append("")
        else:
            dims.append([])
            types.append("Scalar")
    return str(dims).replace(" ", ""), _json_strings(types)


def _json_strings(names):
    """A list of dtype names as compact JSON (faster than json.dumps; names hold no quote or backslash)."""
    text = '["' + '","'.join(names) + '"]' if names else "[]"
    if '\\' in text or text.count('"') != 2 * len(names):
        return json.dumps(names, separators=(",", ":"))
    return text


class OpRecorder:
    """The profiler session on one thread; see the module's comment."""

    uses_profiler = True  # its start takes CUPTI on CUDA builds (see Session._cuda_build_waiting)

    def __init__(self, torch, host_file, stats, notes, shapes, stacks, skip_module_calls):
        self._torch = torch
        self._file = host_file
        self._stats = stats
        self._notes = notes
        a, p = torch._C._autograd, torch._C._profiler
        self._a, self._p = a, p
        self._shapes, self._stacks = shapes, stacks
        self._skip_module_calls = skip_module_calls
        self._thread = None  # threading ident of the profiler's thread
        self._native = 0
        self._active = False
        self.with_stacks = False
        self._stacks_failed = None  # why the Python tracer was given up
        self._paused_by_program = False
        self._tid_of = {}  # profiler thread number -> Linux thread id
        self.last_flush_ns = time.monotonic_ns()
        self._user_scope = p.RecordScope.USER_SCOPE if hasattr(p, "RecordScope") else None
        self._backward_scope = p.RecordScope.BACKWARD_FUNCTION if hasattr(p, "RecordScope") else None

    def forked(self, host_file, stats, notes):
        """The recorder of a forked child: same settings, its own file, not started."""
        return OpRecorder(self._torch, host_file, stats, notes, self._shapes, self._stacks, self._skip_module_calls)

    # ---- the session ----------------------------------------------------------------------

    def on_this_thread(self):
        return self._thread == threading.get_ident()

    def not_started(self):
        return self._thread is None

    def wants_stacks(self):
        return self._stacks and self._stacks_failed is None

    def where(self):
        return " on thread %d" % self._native

    @property
    def paused_by_program(self):
        return self._paused_by_program

    @property
    def active(self):
        return self._active

    def start(self, stacks=False):
        """Enables the profiler on this thread. False (and a note) when it cannot.

        `stacks` turns on PyTorch's Python tracer, which only works when it is
        enabled from Python code (1.13 asserts at the next disable when it was
        enabled inside a C call, such as os.fork's hooks): the callers ask for
        it only at a top-level module call.
        """
        a, p = self._a, self._p
        stacks = stacks and self._stacks and self._stacks_failed is None
        if stacks and sys.getprofile() is not None:
            stacks = False  # the program (or a tool) profiles Python itself: leave it alone
            self._stacks_failed = "sys.setprofile"
            self._notes.set("capture.framework.stacks", "off: the program has its own sys.setprofile function")
        try:
            config = p.ProfilerConfig(p.ProfilerState.KINETO, self._shapes, False, stacks, False, False,
                                      p._ExperimentalConfig())
            activities = {p.ProfilerActivity.CPU}
            a._prepare_profiler(config, activities)
            a._enable_profiler(config, activities)
        except Exception as e:
            self._notes.set("capture.framework", "unavailable: torch %s: %s" % (self._torch.__version__, e))
            return False
        self._thread = threading.get_ident()
        self._native = threading.get_native_id()
        self._active = True
        self.with_stacks = stacks
        self._mark_thread()
        return True

    def _mark_thread(self):
        # A range whose name carries this thread's Linux id tells which of the
        # profiler's thread numbers is this thread.
        ops = self._torch.ops.profiler
        name = _MARK + str(self._native)
        try:
            if hasattr(ops, "_record_function_enter_new"):  # 2.x
                ops._record_function_exit._RecordFunction(ops._record_function_enter_new(name, None))
            else:  # 1.13
                ops._record_function_exit(ops._record_function_enter(name, None))
        except Exception:
            pass  # its ops then go where the merge places unnamed threads

    def flush(self, resume=True, stacks=False):
        """Takes what the profiler recorded and writes it; enables it again if `resume`."""
        if not self._active or not self.on_this_thread():
            return
        t0, cpu0, wall0 = time.monotonic_ns(), time.thread_time_ns(), time.time_ns()
        self._active = False
        try:
            result = self._a._disable_profiler()
        except Exception as e:
            # What it recorded since the last flush is lost; without the Python
            # tracer (what fails in practice) the profiler goes on.
            self._stats.add("capture.framework.lost_flushes", 1)
            if self.with_stacks:
                self._stacks_failed = str(e)
                self._notes.set("capture.framework.stacks", "off: PyTorch's Python tracer failed: %s" % e)
            else:
                self._notes.set("capture.framework", "stopped: torch %s: %s" % (self._torch.__version__, e))
                return
            result = None
        if result is not None:
            try:
                self._write(result.experimental_event_tree(), result)
            except Exception as e:
                self._stats.add("capture.framework.flush_errors", 1)
                self._notes.set("capture.framework.flush_error", repr(e))
            del result
        self._stats.add("capture.framework.flush_ns", time.monotonic_ns() - t0)
        self._stats.add("capture.framework.flush_cpu_ns", time.thread_time_ns() - cpu0)
        # The program stood still meanwhile: the trace shows it as gpuscope's overhead.
        self._file.write("overheads", start=[wall0], end=[time.time_ns()], tid=[self._native],
                         kind=[self._file.string(FLUSH_OVERHEAD)])
        self._stats.add("capture.framework.flushes", 1)
        self.last_flush_ns = time.monotonic_ns()
        if resume:
            self.start(stacks)

    # ---- the program's own profiler -------------------------------------------------------------

    def program_profiler_starting(self):
        """Called before the program enables a profiler: ours stops on that thread."""
        if self._active and self.on_this_thread():
            self.flush(resume=False)
            self._paused_by_program = True
            self._stats.add("capture.framework.paused", 1)
            self._notes.set("capture.framework.program_profiler",
                            "the program ran torch.profiler itself; gpuscope recorded no ops on its thread "
                            "while it ran (it won)")

    def program_profiler_stopped(self):
        if self._paused_by_program and self.on_this_thread():
            self._paused_by_program = False
            self.start(stacks=True)

    # ---- from the event tree to rows ------------------------------------------------------------

    def _write(self, roots, result):
        rows = _Rows(self._file.string, self._shapes)
        pycalls = self._walk(roots, rows)
        if rows.sequenced and rows.backward:
            rows.forward_threads(result.events())
        kept = 0
        for e, keep in pycalls:
            t0, t1 = e.start_time_ns, e.end_time_ns
            if keep and t1 >= t0:
                rows.add(t0, t1, e.start_tid, e.name, PYTHON_FUNCTION)
                kept += 1
        # Linux ids of the profiler's threads; negative: not known (the merge places them).
        tid_of = self._tid_of
        rows.tid[:] = [tid_of.get(t, -t) for t in rows.tid]
        if rows.open_ops:
            self._stats.add("capture.framework.ops_unfinished", rows.open_ops)
        if rows.start:
            self._file.write("ranges", **rows.columns())
            self._stats.add("capture.framework.ops", len(rows.start) - kept)

    def _walk(self, roots, rows):
        """Adds the tree's ops to `rows`; returns its Python calls as [event, kept] (kept: encloses an op)."""
        p = self._p
        torch_op, py_call = p._ExtraFields_TorchOp, p._ExtraFields_PyCall
        user_scope, backward_scope = self._user_scope, self._backward_scope
        pycalls = []
        path = []  # the Python calls above the node being visited
        stack = [(e, 0, False) for e in reversed(roots)]
        skip_module_calls = self._skip_module_calls
        while stack:
            e, depth, under_op = stack.pop()
            del path[depth:]
            x = e.extra_fields
            kind = type(x)
            if kind is torch_op:
                n = e.name
                if n.startswith(_MARK):
                    self._learn_thread(e, n)
                    continue  # and its children: the mark's own allocation
                # Only record_function ranges are user scope: aten ops need no look. Autograd's node
                # calls (ConvolutionBackward0) are backward scope: only then are forward threads read.
                if n.startswith("aten::"):
                    cat = CPU_OP
                else:
                    scope = x.scope
                    cat = USER_ANNOTATION if scope == user_scope else CPU_OP
                    rows.backward = rows.backward or scope == backward_scope
                rows.add_op(e, n, x, cat)
                if not under_op and path:
                    for entry in path[-MAX_OP_STACK:]:
                        entry[1] = True
                under_op = True
            elif kind is py_call and not (skip_module_calls and x.module is not None):
                entry = [e, False]
                path.append(entry)
                pycalls.append(entry)
            d = len(path)
            for c in reversed(e.children):
                stack.append((c, d, under_op))
        return pycalls

    def _learn_thread(self, e, name):
        try:
            self._tid_of[e.start_tid] = int(name[len(_MARK):])
        except ValueError:
            pass


class _Rows:
    """The columns of a 'ranges' chunk."""

    def __init__(self, string, shapes):
        self._string = string
        self._shapes = shapes
        self._dims_ids = {}
        self.start, self.end, self.tid, self.name, self.cat, self.dims, self.types = [], [], [], [], [], [], []
        self.seq, self.fwd = [], []
        self.sequenced = []  # (row, correlation id) of the ops with a sequence number
        self.backward = False  # some op is an autograd node's call
        self.open_ops = 0

    def add(self, t0, t1, tid, name, cat, dims=0, types=0, seq=-1):
        self.start.append(t0)
        self.end.append(t1)
        self.tid.append(tid)
        self.name.append(self._string(name))
        self.cat.append(cat)
        self.dims.append(dims)
        self.types.append(types)
        self.seq.append(seq)
        self.fwd.append(0)

    def forward_threads(self, events):
        """Each sequenced op's forward thread (0 on forward ops), from the result's KinetoEvents."""
        fwd_of = {e.correlation_id(): f for e in events if (f := e.fwd_thread_id())}
        for row, corr in self.sequenced:
            self.fwd[row] = fwd_of.get(corr, 0)

    def add_op(self, e, name, x, cat):
        t0, t1 = e.start_time_ns, e.end_time_ns
        if t1 < t0:
            self.open_ops += 1  # still running when the profiler stopped
            return
        dims = types = 0
        if self._shapes and name not in SHAPELESS_OPS:
            key = _dims_text(x.inputs)
            ids = self._dims_ids.get(key)
            if ids is None:
                ids = self._dims_ids[key] = (self._string(key[0]), self._string(key[1]))
            dims, types = ids
        seq = x.sequence_number
        if seq >= 0:
            self.sequenced.append((len(self.start), e.correlation_id))
        self.add(t0, t1, e.start_tid, name, cat, dims, types, seq)

    def columns(self):
        cols = dict(start=self.start, end=self.end, tid=self.tid, name=self.name, cat=self.cat)
        if self._shapes:
            cols.update(dims=self.dims, types=self.types)
        if self.sequenced:
            cols.update(seq=self.seq, fwd=self.fwd)
        return cols


class _ThreadCalls(threading.local):
    """One thread's open module calls and its finished ones (start, end, string id)."""

    def __init__(self, owner):
        self.calls = []
        self.rows = []
        self.tid = threading.get_native_id()
        owner._register(self.rows, self.tid)


class ModulePaths:
    """nn.Module calls as ranges named by the module's path ("nn.Module: model.layer1.0.conv1").

    The hooks run on every module call, so they do little: the C hooks
    (load_module_hooks) where they load, else Python closures (`_hooks`) with
    the same semantics: one thread-local read, one dict lookup for the path, a
    clock read and one list append each; the finished calls wait in the
    thread's own list (appends and the taker's `del rows[:n]` are each atomic
    under the GIL, so no lock). Either way Python names a module only on its
    first call (`_name`)."""

    def __init__(self, torch, host_file, stats, notes, on_top_level_call, env=os.environ):
        self._file = host_file
        self._stats = stats
        self._notes = notes
        self._paths = {}  # id(module) -> (weakref, string id)
        self._on_top_level_call = on_top_level_call
        self._names_by_sid = {}
        self._torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        self._lock = threading.Lock()
        self._threads = []  # (rows, native thread id, weakref to the thread)
        self._tls = _ThreadCalls(self)
        self._native, why = load_module_hooks(env)
        if self._native is not None:
            try:
                self._native.configure(on_top_level_call, self._name, self._failed)
                pre, post = self._native.pre, self._native.post
                self.hooks_note = "C hooks (%s)" % self._native.__file__
            except Exception as e:
                self._native, why = None, "the C hooks do not start: %r" % (e,)
        if self._native is None:
            pre, post = self._hooks()
            self.hooks_note = "Python hooks: " + why
        notes.set("capture.framework.module_hooks", self.hooks_note)
        m = torch.nn.modules.module
        self._handles = [m.register_module_forward_pre_hook(pre), m.register_module_forward_hook(post)]

    def forked(self, host_file, stats, notes):
        """In a forked child: string ids and open calls belonged to the parent's file."""
        with self._lock:
            self._file, self._stats, self._notes = host_file, stats, notes
            # The hooks hold these: emptied in place. This thread is the
            # child's only one, with an id of its own.
            self._paths.clear()
            self._names_by_sid = {}
            self._tls.calls.clear()
            self._tls.rows.clear()
            self._threads = [(self._tls.rows, threading.get_native_id(), weakref.ref(threading.current_thread()))]
            if self._native is not None:
                self._native.forked()
        notes.set("capture.framework.module_hooks", self.hooks_note)

    def remove(self):
        if self._native is not None:
            self._native.stop()
        for h in self._handles:
            h.remove()
        self._handles = []

    def _register(self, rows, tid):
        with self._lock:
            self._threads.append((rows, tid, weakref.ref(threading.current_thread())))

    def _hooks(self):
        """The two Python hooks, as closures over what they read (no attribute lookups per call)."""
        tls, paths, on_top, path_of, failed = self._tls, self._paths, self._on_top_level_call, self._path, self._failed
        time_ns = _time_ns

        def pre(module, inputs):
            try:
                calls = tls.calls
                if not calls:
                    on_top()
                hit = paths.get(id(module))
                sid = hit[1] if hit is not None and hit[0]() is module else path_of(module, calls)
                calls.append((module, sid, time_ns()))
            except Exception as e:  # never into the program: stop recording modules, say why
                failed(e)

        def post(module, inputs, output):
            try:
                t1 = time_ns()
                calls = tls.calls
                while calls:
                    m, sid, t0 = calls.pop()
                    if m is module:
                        tls.rows.append((t0, t1, sid))
                        return
                    self._stats.add("capture.framework.modules_unfinished", 1)  # its forward raised
            except Exception as e:
                failed(e)

        return pre, post

    def _failed(self, e):
        self.remove()
        self._notes.set("capture.framework.modules", "stopped: %r" % (e,))

    def _path(self, module, calls):
        """A module first called (or whose id was reused): its path, from the calling module's."""
        parent, parent_sid = (calls[-1][0], calls[-1][1]) if calls else (None, 0)
        sid = self._name(module, parent, parent_sid)
        self._paths[id(module)] = (weakref.ref(module), sid)
        return sid

    def _name(self, module, parent, parent_sid):
        """The string id of a module's path, from its calling module's (None: a top-level call);
        the C hooks call it on a cache miss."""
        path = None
        if parent is not None:
            parent_path = self._file_path(parent_sid)
            for n, child in parent._modules.items():
                if child is module:
                    path = parent_path + "." + n
                    break
            else:
                for n, child in parent.named_modules():
                    if child is module and n:
                        path = parent_path + "." + n
                        break
        if path is None:
            path = _root_name(module, self._torch_dir)
        sid = self._file.string("nn.Module: " + path)
        self._names_by_sid[sid] = path
        return sid

    def _file_path(self, sid):
        return self._names_by_sid.get(sid, "?")

    def take(self):
        """The module calls finished since the last take, as range columns."""
        if self._native is not None:
            start, end, tid, name, unfinished = self._native.take()
            if unfinished:
                self._stats.add("capture.framework.modules_unfinished", unfinished)
            return start, end, tid, name
        start, end, tid, name = [], [], [], []
        with self._lock:
            alive = []
            for rows, thread_id, thread in self._threads:
                n = len(rows)
                taken = rows[:n]
                del rows[:n]  # calls finished meanwhile stay for the next take
                for t0, t1, sid in taken:
                    start.append(t0)
                    end.append(t1)
                    tid.append(thread_id)
                    name.append(sid)
                t = thread()
                if rows or (t is not None and t.is_alive()):
                    alive.append((rows, thread_id, thread))
            self._threads = alive
        return start, end, tid, name


def load_module_hooks(env=os.environ):
    """(the C hooks' extension module, None) where it loads into this Python, else (None, why not)."""
    choice = env.get(ENV_MODULE_HOOKS, "").strip()
    if choice == "off":
        return None, "%s=off" % ENV_MODULE_HOOKS
    if sys.implementation.name != "cpython" or sys.version_info < (3, 10):
        return None, "%s %d.%d has no stable ABI 3.10" % (sys.implementation.name, *sys.version_info[:2])
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    if is_gil_enabled is not None and not is_gil_enabled():
        return None, "a free-threaded Python"
    path = choice or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_hooks",
                                  MODULE_HOOKS)
    if not os.path.exists(path):
        return None, "the C hooks were not built (no %s)" % path
    try:
        import importlib.machinery
        import importlib.util

        name = __package__ + "._module_hooks"
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, path, loader=loader))
        loader.exec_module(module)
        for f in ("configure", "pre", "post", "take", "forked", "stop"):
            getattr(module, f)
    except Exception as e:
        return None, "the C hooks %s do not load: %r" % (path, e)
    return module, None


def _root_name(module, torch_dir):
    """The name the program calls a top-level module by: the variable in the
    calling frame (or an attribute of its `self`) that holds it, else its class.
    The calling frame is the first outside torch and this file (the Python
    hooks' frames are here; the C hooks have none)."""
    here = _root_name.__code__.co_filename
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename == here or frame.f_code.co_filename.startswith(torch_dir)):
        frame = frame.f_back
    if frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for k, v in scope.items():
                if v is module and not k.startswith("_"):
                    return k
        owner = frame.f_locals.get("self")
        if owner is not None:
            for k, v in getattr(owner, "__dict__", {}).items():
                if v is module:
                    return k
    return type(module).__name__
