// gpuscope's nn.Module forward hooks in C (docs/capture.md, "Module calls").
//
// The extension module _module_hooks, which the startup hook
// (gpuscope_hook/torch_ops.py, ModulePaths) loads by path and registers as
// PyTorch's global forward pre- and post-hook in place of its Python closures,
// with exactly their semantics: the first call on a thread with no open call
// calls `on_top` (the flush point); a module's path string id comes from a
// cache keyed by id(module) and checked against a weak reference (a reused id
// is not misnamed); on a miss Python's `path_of(module, parent, parent_sid)`
// names it. Each thread keeps its open calls and its finished ones (start,
// end, string id; CLOCK_REALTIME ns, time.time_ns's clock); take() returns all
// threads' finished calls as range columns. A post-hook pops open calls until
// it finds its module: the others' forward raised (counted, taken with the
// rows). Any error stops the hooks and goes to `failed(exception)`; nothing is
// raised into the program.
//
// It uses only Python's limited API (3.10, stable ABI): one build serves every
// CPython from 3.10 that has the GIL. Every function runs with the GIL held (the
// hooks are called by Python; take/forked/configure from the hook's code), which
// guards all state here; only a thread's exit flag is written without it.
//
// [SECTION] State
// [SECTION] The hooks
// [SECTION] Taking the rows, fork
// [SECTION] The module

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <unordered_map>
#include <vector>

namespace {

// [SECTION] State

struct Call {
  PyObject* module;  // a strong reference while the call is open
  int64_t sid;
  int64_t t0;
};

struct Row {
  int64_t t0, t1, sid;
};

struct Thread {
  std::vector<Call> calls;  // open calls, innermost last
  std::vector<Row> rows;    // finished calls not yet taken
  int64_t tid = 0;          // Linux thread id
  std::atomic<bool> exited{false};
};

struct CacheEntry {
  PyObject* ref;  // weak reference to the module
  int64_t sid;
};

struct State {
  PyObject* on_top = nullptr;   // called with no argument
  PyObject* path_of = nullptr;  // (module, parent or None, parent's sid) -> sid
  PyObject* failed = nullptr;   // (exception) -> anything
  bool stopped = true;
  int64_t unfinished = 0;  // calls whose forward raised, since the last take
  std::vector<Thread*> threads;
  std::unordered_map<uintptr_t, CacheEntry> paths;
};

State g;

// The thread's calls; its exit marks them for the next take() to free (no GIL there).
struct ThreadSlot {
  Thread* thread = nullptr;
  ~ThreadSlot() {
    if (thread != nullptr) thread->exited.store(true, std::memory_order_release);
  }
};

thread_local ThreadSlot t_slot;

int64_t linux_tid() { return static_cast<int64_t>(syscall(SYS_gettid)); }

Thread* current_thread() {
  Thread* t = t_slot.thread;
  if (t == nullptr) {
    t = new Thread();
    t->tid = linux_tid();
    g.threads.push_back(t);
    t_slot.thread = t;
  }
  return t;
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void release_calls(std::vector<Call>& calls) {
  std::vector<Call> gone;
  gone.swap(calls);
  for (const Call& c : gone) Py_DECREF(c.module);
}

void clear_paths() {
  std::unordered_map<uintptr_t, CacheEntry> gone;
  gone.swap(g.paths);
  for (auto& [id, e] : gone) Py_DECREF(e.ref);
}

// Stops the hooks and hands the pending exception (or a MemoryError) to `failed`.
void fail() {
  g.stopped = true;
  if (!PyErr_Occurred()) PyErr_NoMemory();
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (g.failed != nullptr && value != nullptr) {
    PyObject* r = PyObject_CallFunctionObjArgs(g.failed, value, nullptr);
    Py_XDECREF(r);
    PyErr_Clear();
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
}

// [SECTION] The hooks

// The string id of `module`'s path: cached, else named by Python from the calling module's.
bool path_sid(Thread* t, PyObject* module, int64_t* sid) {
  auto key = reinterpret_cast<uintptr_t>(module);
  auto hit = g.paths.find(key);
  if (hit != g.paths.end() && PyWeakref_GetObject(hit->second.ref) == module) {
    *sid = hit->second.sid;
    return true;
  }
  PyObject* parent = Py_None;
  int64_t parent_sid = 0;
  if (!t->calls.empty()) {
    parent = t->calls.back().module;
    parent_sid = t->calls.back().sid;
  }
  Py_INCREF(parent);
  PyObject* psid = PyLong_FromLongLong(parent_sid);
  PyObject* r = psid == nullptr ? nullptr : PyObject_CallFunctionObjArgs(g.path_of, module, parent, psid, nullptr);
  Py_DECREF(parent);
  Py_XDECREF(psid);
  if (r == nullptr) return false;
  *sid = PyLong_AsLongLong(r);
  Py_DECREF(r);
  if (*sid == -1 && PyErr_Occurred()) return false;
  PyObject* ref = PyWeakref_NewRef(module, nullptr);
  if (ref == nullptr) return false;
  auto& entry = g.paths[key];  // looked up again: path_of ran Python code
  Py_XDECREF(entry.ref);
  entry.ref = ref;
  entry.sid = *sid;
  return true;
}

bool pre_call(PyObject* module) {
  Thread* t = current_thread();
  if (t->calls.empty()) {
    PyObject* r = PyObject_CallNoArgs(g.on_top);
    if (r == nullptr) return false;
    Py_DECREF(r);
    if (g.stopped) return true;
  }
  int64_t sid;
  if (!path_sid(t, module, &sid)) return false;
  Py_INCREF(module);
  t->calls.push_back(Call{module, sid, now_ns()});
  return true;
}

void post_call(PyObject* module) {
  int64_t t1 = now_ns();
  Thread* t = current_thread();
  while (!t->calls.empty()) {
    Call c = t->calls.back();
    t->calls.pop_back();
    bool found = c.module == module;
    if (found) {
      t->rows.push_back(Row{c.t0, t1, c.sid});
    } else {
      ++g.unfinished;  // its forward raised
    }
    Py_DECREF(c.module);  // last: it may run Python code
    if (found) return;
  }
}

PyObject* pre_hook(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (g.stopped || nargs < 1) Py_RETURN_NONE;
  try {
    if (!pre_call(args[0])) fail();
  } catch (const std::bad_alloc&) {
    fail();
  }
  Py_RETURN_NONE;
}

PyObject* post_hook(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (g.stopped || nargs < 1) Py_RETURN_NONE;
  try {
    post_call(args[0]);
  } catch (const std::bad_alloc&) {
    fail();
  }
  Py_RETURN_NONE;
}

// [SECTION] Taking the rows, fork

bool append_int(PyObject* list, int64_t v) {
  PyObject* x = PyLong_FromLongLong(v);
  if (x == nullptr) return false;
  int rc = PyList_Append(list, x);
  Py_DECREF(x);
  return rc == 0;
}

bool take_rows(PyObject* cols[4], Thread* t) {
  std::vector<Row> rows;
  rows.swap(t->rows);  // taken first: the appends may run Python code
  for (const Row& r : rows) {
    if (!append_int(cols[0], r.t0) || !append_int(cols[1], r.t1) || !append_int(cols[2], t->tid) ||
        !append_int(cols[3], r.sid))
      return false;
  }
  return true;
}

// (start, end, tid, name, unfinished): the calls finished since the last take.
PyObject* take(PyObject*, PyObject*) {
  PyObject* cols[4] = {PyList_New(0), PyList_New(0), PyList_New(0), PyList_New(0)};
  bool ok = cols[0] && cols[1] && cols[2] && cols[3];
  std::vector<Thread*> alive, gone;
  for (Thread* t : g.threads) {
    if (ok) ok = take_rows(cols, t);
    bool exited = t->exited.load(std::memory_order_acquire);
    (exited && t->rows.empty() ? gone : alive).push_back(t);
  }
  g.threads.swap(alive);
  for (Thread* t : gone) {
    release_calls(t->calls);
    delete t;
  }
  PyObject* result = nullptr;
  if (ok) {
    result = Py_BuildValue("(OOOOL)", cols[0], cols[1], cols[2], cols[3], static_cast<long long>(g.unfinished));
    if (result != nullptr) g.unfinished = 0;
  }
  for (PyObject* c : cols) Py_XDECREF(c);
  return result;
}

// In a forked child: the parent's string ids, open calls and other threads are gone.
PyObject* forked(PyObject*, PyObject*) {
  std::vector<Thread*> others;
  others.swap(g.threads);
  Thread* me = t_slot.thread;
  std::vector<Call> mine;
  if (me != nullptr) {
    me->tid = linux_tid();
    me->rows.clear();
    mine.swap(me->calls);
    g.threads.push_back(me);
  }
  g.unfinished = 0;
  clear_paths();
  release_calls(mine);
  for (Thread* t : others) {
    if (t == me) continue;
    release_calls(t->calls);
    delete t;
  }
  Py_RETURN_NONE;
}

// configure(on_top, path_of, failed): starts the hooks afresh.
PyObject* configure(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "configure(on_top, path_of, failed)");
    return nullptr;
  }
  PyObject** slots[3] = {&g.on_top, &g.path_of, &g.failed};
  for (int i = 0; i < 3; ++i) {
    PyObject* old = *slots[i];
    Py_INCREF(args[i]);
    *slots[i] = args[i];
    Py_XDECREF(old);
  }
  g.unfinished = 0;
  std::vector<Call> open;  // earlier hooks' calls and rows are not this recording's
  for (Thread* t : g.threads) {
    t->rows.clear();
    for (const Call& c : t->calls) open.push_back(c);
    t->calls.clear();
  }
  clear_paths();
  release_calls(open);
  g.stopped = false;
  Py_RETURN_NONE;
}

PyObject* stop(PyObject*, PyObject*) {
  g.stopped = true;
  Py_RETURN_NONE;
}

// [SECTION] The module

PyMethodDef methods[] = {
    {"pre", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(pre_hook)), METH_FASTCALL,
     "The global forward pre-hook: pre(module, inputs)."},
    {"post", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(post_hook)), METH_FASTCALL,
     "The global forward hook: post(module, inputs, output)."},
    {"configure", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(configure)), METH_FASTCALL,
     "configure(on_top, path_of, failed): starts recording afresh."},
    {"take", take, METH_NOARGS, "(start, end, tid, name, unfinished) of the calls finished since the last take."},
    {"forked", forked, METH_NOARGS, "In a forked child: drops the parent's paths, calls and threads."},
    {"stop", stop, METH_NOARGS, "The hooks do nothing from now on."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_module_hooks",
    "gpuscope's nn.Module forward hooks in C.",
    -1,
    methods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* PyInit__module_hooks() {
  return PyModule_Create(&module_def);
}
