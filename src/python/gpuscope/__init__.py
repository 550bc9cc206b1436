"""gpuscope for Python: GPU traces as pandas DataFrames, reports and diffs as dicts.

    import gpuscope
    t = gpuscope.open("run.gscope")        # any format gpuscope reads (.gscope, Kineto JSON, .json.gz, nsys .sqlite)
    k = t.kernels                          # a pandas DataFrame, one row per kernel
    k.groupby("category").dur.sum()        # dur = end - start, int64 ns
    r = gpuscope.report(t)                 # the gpuscope.report/1 dict (`gpuscope report --json`)
    o = gpuscope.ops(t)                    # the op table (per op and input shapes) as a DataFrame
    d = gpuscope.diff("before.gscope", t)  # the gpuscope.diff/1 dict (`gpuscope diff --json`)
    w = gpuscope.whatif(t, remove=["padding"], scale={"normalization": 0.5})  # `gpuscope whatif --json`

Times are int64 nanoseconds on the trace's clock. Numeric columns are views of
the trace's own memory (read-only; the trace stays alive as long as any of
them); unknown values are pandas' NA; names and enumerations are categoricals
of the values present. Each access to a table gives a new DataFrame over the
same columns, so columns added to it stay in it. The guide: docs/python.md.
"""

from __future__ import annotations

import glob as _glob
import importlib as _importlib
import json as _json
import os as _os
import re as _re
import sys as _sys
import warnings as _warnings

import numpy as _np
import pandas as _pd


def _import_core():
    """The C++ extension, or an ImportError that says which Python it was built for."""
    try:
        return _importlib.import_module("._gpuscope", __name__)
    except ImportError as e:
        here = _os.path.dirname(_os.path.abspath(__file__))
        built = sorted(_os.path.basename(f) for f in _glob.glob(_os.path.join(here, "_gpuscope*.so")))
        this = f"Python {_sys.version_info.major}.{_sys.version_info.minor} ({_sys.executable})"
        if not built:
            why = f"the gpuscope package in {here} has no compiled extension (_gpuscope*.so)"
        else:
            versions = [_re.match(r"_gpuscope\.cpython-(\d)(\d+)", f) for f in built]
            names = ", ".join(f"Python {m[1]}.{m[2]}" for m in versions if m) or "another Python"
            why = f"the gpuscope extension in {here} ({', '.join(built)}) was built for {names}, and this is {this}"
        raise ImportError(
            f"{why}: build gpuscope for this interpreter (`{_sys.executable} -m pip install --no-build-isolation "
            f"--no-index .` in gpuscope's source tree, or CMake with -DPython3_EXECUTABLE={_sys.executable}); see "
            f"docs/python.md. The import error was: {e}", name=__name__, path=here) from e


_core = _import_core()
TraceError = _core.TraceError

__version__ = _core.__version__
__all__ = [
    "open", "report", "ops", "stats", "diff", "whatif", "capture", "Trace", "TraceError", "DamagedTraceWarning",
    "CaptureError", "built_with_capture",
]


def _has_capture_extension():
    from importlib.machinery import EXTENSION_SUFFIXES

    here = _os.path.dirname(_os.path.abspath(__file__))
    return any(_os.path.isfile(_os.path.join(here, "_capture" + suffix)) for suffix in EXTENSION_SUFFIXES)


#: Whether this build has the CUPTI capture (a CUDA build); without it, capture() raises CaptureError.
built_with_capture = _has_capture_extension()

_ENUM_NAMES = {name: list(values) for name, values in _core._enum_names().items()}
_NONE = 0xFFFFFFFF  # the model's "no row" / "no id" (uint32), NA in the DataFrames


class CaptureError(RuntimeError):
    """A capture that could not start or finish; str() says why (no GPU, no driver, CUPTI in use, ...)."""


# ---- Trace -----------------------------------------------------------------------------------------


class Trace:
    """An opened trace: its tables as pandas DataFrames.

    Tables (one row per event, in the trace's order: by track, then start):
    kernels, memcpys, memsets, api_calls, ranges, syncs, counters, memory_events,
    overheads, os_calls.
    Descriptions: devices, processes, tracks (index = the track id the tables'
    `track` column holds), counter_series. `info` is what `gpuscope info --json`
    says about the file.

    Each table is built on first use and kept; every access returns a new
    DataFrame over the same (read-only) columns, so a column added to it, or
    replaced in it, stays in that DataFrame and never changes the trace's.
    """

    __slots__ = ("_core", "_frames", "_strings", "_info")

    def __init__(self, core):
        self._core = core
        self._frames = {}
        self._strings = None
        self._info = None

    @property
    def path(self) -> str:
        """The file the trace was opened from."""
        return self._core.path

    def __repr__(self):
        rows = ", ".join(f"{t} {self._core.rows(t):,}" for t in ("kernels", "memcpys", "api_calls") if self._core.rows(t))
        return f"<gpuscope.Trace {self.path!r}: {rows or 'no GPU work'}>"

    # -- the event tables

    def table(self, name: str) -> _pd.DataFrame:
        """The table `name` (kernels, memcpys, memsets, api_calls, ranges, syncs, counters, memory_events,
        overheads, os_calls), a new DataFrame over the trace's columns."""
        frame = self._frames.get(name)
        if frame is None:
            frame = self._frames[name] = self._build(name)
        return frame.copy(deep=False)

    kernels = property(lambda self: self.table("kernels"), doc="Kernels: start, end, dur, track, device, stream, "
                       "correlation, name, mangled, grid, block, registers, shared memory, graph ids, category, api")
    memcpys = property(lambda self: self.table("memcpys"), doc="Copies: bytes, kind (HtoD, DtoH, ...), src/dst memory")
    memsets = property(lambda self: self.table("memsets"), doc="Memsets: bytes, value, memory kind")
    api_calls = property(lambda self: self.table("api_calls"), doc="CUDA runtime/driver calls: name, domain, cbid, "
                         "status, and the GPU op they launched (op_table, op_row)")
    ranges = property(lambda self: self.table("ranges"), doc="NVTX ranges and marks, imported annotations: name, "
                      "domain, kind, color, payload, sequence and fwd_thread (PyTorch's autograd link), depth")
    syncs = property(lambda self: self.table("syncs"), doc="Host synchronizations: type, device, stream, event")
    counters = property(lambda self: self.table("counters"), doc="Counter samples: time, series, value")
    memory_events = property(lambda self: self.table("memory_events"), doc="Allocations (+bytes) and frees (-bytes): "
                             "time, series (index into counter_series), bytes, address")
    overheads = property(lambda self: self.table("overheads"), doc="The profiler's own time: kind")
    os_calls = property(lambda self: self.table("os_calls"), doc="OS runtime calls (Nsight Systems' OSRT_API: read, "
                        "ioctl, pthread_mutex_lock, ...): name, status (the return value), nesting (0 = outermost)")

    def _build(self, name):
        columns = {}
        for column, array, role in self._core.columns(name):
            if role == "string":
                columns[column] = self._string_categorical(array)
            elif role.startswith("enum:"):
                columns[column] = _present_categorical(array, _ENUM_NAMES[role[5:]])
            elif role in ("row", "id"):
                columns[column] = _nullable(array, array == _NONE)
            elif role == "plus_one":  # the value + 1, 0 for none: one computed array
                columns[column] = _nullable(array - 1, array <= 0)
            else:
                columns[column] = array
            if column == "end" and "start" in columns:
                columns["dur"] = columns["end"] - columns["start"]  # int64 ns (never overflows: docs/format.md)
        # copy=False: pandas keeps each array as its own block, a view of the trace's memory.
        return _pd.DataFrame(columns, copy=False)

    @property
    def strings(self) -> _pd.Index:
        """The whole string table (position = string id)."""
        return _pd.Index(self._string_texts(), dtype=object)

    def _string_texts(self):
        if self._strings is None:
            self._strings = _np.array(self._core.strings(), dtype=object)
        return self._strings

    def _string_categorical(self, ids):
        """A categorical of the texts of string ids: categories are the texts present, sorted."""
        texts = self._string_texts()
        present = _np.zeros(len(texts), dtype=bool)
        present[ids] = True
        used = _np.flatnonzero(present)
        used_texts = _pd.Index(texts[used], dtype=object)
        # Two ids may hold one text (a hand-made file, or invalid UTF-8 replaced): one category.
        categories = used_texts.unique().sort_values()
        code_of_id = _np.full(len(texts), -1, dtype=_np.int32)
        code_of_id[used] = categories.get_indexer(used_texts)
        return _pd.Categorical.from_codes(code_of_id[ids], dtype=_pd.CategoricalDtype(categories))

    # -- descriptions

    @property
    def devices(self) -> _pd.DataFrame:
        """GPUs: id, name, uuid, compute capability, SMs, memory, clocks, limits, peaks (NA = unknown)."""
        return self._described("devices")

    @property
    def processes(self) -> _pd.DataFrame:
        """Processes: pid, name, rank (NA = unknown)."""
        return self._described("processes")

    @property
    def tracks(self) -> _pd.DataFrame:
        """Tracks (index = track id): kind (gpu: device, stream; cpu: pid, tid) and display name."""
        return self._described("tracks")

    @property
    def counter_series(self) -> _pd.DataFrame:
        """Counter series (index = the counters table's `series`): name, device (NA: the host), unit."""
        return self._described("counter_series")

    def _described(self, name):
        frame = self._frames.get(name)
        if frame is None:
            frame = self._frames[name] = _describe(name, _pd.DataFrame(getattr(self._core, name)()))
        return frame.copy(deep=False)

    @property
    def info(self) -> dict:
        """What `gpuscope info --json` says (schema gpuscope.info/1): format, source, devices, rows, stats, ..."""
        if self._info is None:
            self._info = _json.loads(self._core.info_json())
        return self._info

    @property
    def memory_bytes(self) -> int:
        """Heap bytes the C++ trace holds."""
        return self._core.memory_bytes


def _nullable(values, missing):
    """values (a numpy array, kept as it is when integer) with pd.NA where `missing`: a nullable column."""
    missing = _np.asarray(missing, dtype=bool)
    if values.dtype.kind in "iu":
        return _pd.arrays.IntegerArray(values, missing)
    return _pd.arrays.FloatingArray(values.astype("float64"), missing)


def _present_categorical(values, names):
    """A categorical of enumeration values: categories are the names of the values present, in value order."""
    values = _np.asarray(values)
    count = int(values.max()) + 1 if len(values) else 0
    present = _np.bincount(values, minlength=count) > 0 if len(values) else _np.zeros(0, dtype=bool)
    used = _np.flatnonzero(present)
    code_of_value = _np.full(max(count, 1), -1, dtype=_np.int16)
    code_of_value[used] = _np.arange(len(used), dtype=_np.int16)
    # A value this build does not know (a damaged or newer file) is named, never an error.
    categories = [names[v] if v < len(names) else f"invalid({v})" for v in used]
    return _pd.Categorical.from_codes(code_of_value[values], categories=_pd.Index(categories, dtype=object))


def _describe(name, frame):
    """The description tables with pandas' conventions: NA for what the model marks unknown or not applicable."""
    if name == "tracks":
        frame.index.name = "track"
    if not len(frame):
        return frame
    if name == "devices":  # 0 = unknown, for everything but the ordinal, the texts and a minor version
        major = frame["compute_major"].to_numpy()
        for column in frame.columns.difference(["id", "name", "uuid"], sort=False):
            values = frame[column].to_numpy()
            frame[column] = _nullable(values, (major if column == "compute_minor" else values) == 0)
    elif name == "processes":
        frame["rank"] = _nullable(frame["rank"].to_numpy(dtype=_np.int32), frame["rank"].to_numpy() < 0)
    elif name == "tracks":
        gpu = frame["kind"].to_numpy() == "gpu"
        for column, applies in (("device", gpu), ("stream", gpu), ("tid", ~gpu), ("pid", None)):
            values = frame[column].to_numpy(dtype=_np.uint32)
            unknown = values == _NONE
            if applies is not None:
                unknown |= ~applies
            else:  # a GPU track's process: 0 when the source did not say
                unknown |= gpu & (values == 0)
            frame[column] = _nullable(values, unknown)
        frame["kind"] = _present_categorical(_np.where(gpu, 0, 1).astype(_np.uint8), _ENUM_NAMES["track_kind"])
    elif name == "counter_series":
        values = frame["device"].to_numpy(dtype=_np.uint32)
        frame["device"] = _nullable(values, values == _NONE)
    return frame


class DamagedTraceWarning(UserWarning):
    """A trace file was cut short or damaged: what could be read was opened; the message says what was lost."""


def _path(path) -> str:
    """A str path; one with a NUL character is refused (the C library would open the file named by its start)."""
    p = _os.fsdecode(_os.fspath(path))
    if "\0" in p:
        raise ValueError(f"path contains a NUL character: {p!r}")
    return p


def _memory(max_memory) -> int:
    """max_memory as bytes: None (0: the process budget), an int, or a size such as "512M", "4G", "25%"."""
    if max_memory is None:
        return 0
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, str)):
        raise TypeError(f"max_memory must be a size such as '512M' or a number of bytes, not {type(max_memory).__name__}")
    if isinstance(max_memory, int):
        if max_memory <= 0:
            raise ValueError(f"max_memory must be positive, not {max_memory}")
        return max_memory
    return _core._parse_memory_size(max_memory)


def open(path, *, max_memory=None) -> Trace:  # noqa: A001 (the module's verb, as in gpuscope.open)
    """Opens any trace file gpuscope reads, chosen by its content; raises TraceError when it cannot.

    max_memory: the most memory the read may take, as bytes or "512M", "4G", "25%" (default: the environment's
    GPUSCOPE_MAX_MEMORY, else a quarter of physical memory); a file or stream that would need more raises TraceError
    before it is read (docs/robustness.md). A file cut short or damaged opens with what could be read, and a
    DamagedTraceWarning saying what was lost.
    """
    core = _core._open(_path(path), _memory(max_memory))
    if core.damage:
        _warnings.warn(f"{core.path}: {core.damage}", DamagedTraceWarning, stacklevel=2)
    return Trace(core)


# ---- Reports and diffs -----------------------------------------------------------------------------


def _is_saved_report(path):
    try:
        with _os.fdopen(_os.open(path, _os.O_RDONLY), "rb") as f:
            return _core._looks_like_report(f.read(512))
    except OSError:
        return False


def _expand(path, left_out=None):
    """A trace file, or the trace files of a directory (sorted), as `gpuscope report` lists them: what else a
    directory holds (saved reports, FIFOs, devices, link loops, other files) goes to `left_out` with why."""
    files, left = _core._trace_inputs(path)
    if left_out is not None:
        left_out.extend(left)
    return files


def _items(x, left_out=None):
    """Trace objects and paths -> what the C++ side takes (_Trace objects and str paths)."""
    if isinstance(x, Trace):
        return [x._core]
    if isinstance(x, (str, bytes, _os.PathLike)):
        return _expand(_path(x), left_out)
    if isinstance(x, (list, tuple)):
        return [item for part in x for item in _items(part, left_out)]
    raise TypeError(f"expected a gpuscope.Trace, a path or a list of them, not {type(x).__name__}")


def _device(device):
    return -1 if device is None else int(device)


def report(trace_or_paths, *, device=None, top=0, steps=0) -> dict:
    """The gpuscope.report/1 dict (`gpuscope report --json`) of a Trace, a path, or a list of them (one job).

    device: analyse only this GPU; top / steps: hotspots / steps listed (0 = all).
    """
    left_out = []
    items = _items(trace_or_paths, left_out)
    return _json.loads(_core._report(items, _device(device), int(top), int(steps), left_out))


def ops(trace_or_paths, *, by="shapes", device=None) -> _pd.DataFrame:
    """The framework-op table of a Trace, a path, or a list of them (one job), as a DataFrame.

    One row per op name and recorded input shapes and types (by="shapes": the report's `ops`) or per op name
    (by="name": its `op_names`), the heaviest GPU total first, "(no op)" holding the GPU work launched outside every
    op; the columns are the report's keys (docs/report-schema.md). Figures the trace cannot give (FLOPs without
    recorded shapes, roofline figures on an unknown GPU) are NaN, never 0. No framework ops: no rows.
    """
    if by not in ("shapes", "name"):
        raise ValueError(f'by must be "shapes" or "name", not {by!r}')
    r = report(trace_or_paths, device=device)
    rows = r.get("ops" if by == "shapes" else "op_names") or []
    frame = _pd.DataFrame(rows)
    for column in ("flops", "bytes", "achieved_tflops", "achieved_tbps", "intensity", "roofline_fraction"):
        if column in frame:
            frame[column] = frame[column].astype("float64")  # null (unknown) as NaN
    return frame


def stats(trace_or_path, *, reports=None, device=None) -> dict:
    """The nsys-stats-style summary tables of one Trace or path (`gpuscope stats --json`), as DataFrames.

    reports: names ("kernels", "api", "memcpy", "memset", "sync", "ranges", "osrt", "steps", or "all"; nsys' names
    such as "osrt_sum" too); None: the default set. device: the GPU-side tables of this GPU only. Returns {report
    name: DataFrame}, in the order asked, each with the table's columns (docs/cli.md, `gpuscope stats`), its title
    and note in `frame.attrs` (an empty table's note says why it is empty); a value the trace cannot give is NA,
    and integer columns with one are nullable (Int64).
    """
    if isinstance(reports, str):
        reports = [reports]
    j = _json.loads(_core._stats(_items(trace_or_path), [str(r) for r in (reports or [])], _device(device)))
    out = {}
    for r in j["reports"]:
        frame = _pd.DataFrame(r["rows"], columns=r["columns"])
        for column in frame.columns:
            values = [v for v in (row.get(column) for row in r["rows"]) if v is not None]
            if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                frame[column] = _pd.array([row.get(column) for row in r["rows"]], dtype="Int64")
        frame.attrs["title"] = r["title"]
        frame.attrs["note"] = r["note"]
        out[r["report"]] = frame
    return out


def _check_report(d: dict) -> None:
    """A dict given to diff() must be a report as report() returns it: the schema, and the keys diff reads with the
    types they have (the C++ reader checks the rest); raises ValueError naming the first key that is not."""
    if d.get("schema") != "gpuscope.report/1":
        raise ValueError(f"not a gpuscope.report/1 dict: schema is {d.get('schema')!r}")
    expected = {"files": list, "window": dict, "kernel_time_ns": int, "devices": list, "categories": list,
                "hotspots": list, "steps": list, "findings": list}
    for key, kind in expected.items():
        if key not in d:
            raise ValueError(f"not a gpuscope.report/1 dict: no {key!r}")
        if not isinstance(d[key], kind) or isinstance(d[key], bool):
            raise ValueError(f"not a gpuscope.report/1 dict: {key!r} is a {type(d[key]).__name__}, not a {kind.__name__}")
    if d["kernel_time_ns"] < 0:
        raise ValueError(f"not a gpuscope.report/1 dict: 'kernel_time_ns' is negative ({d['kernel_time_ns']})")
    for key in ("devices", "categories", "hotspots", "steps", "findings"):
        for i, item in enumerate(d[key]):
            if not isinstance(item, dict):
                raise ValueError(f"not a gpuscope.report/1 dict: {key}[{i}] is a {type(item).__name__}, not a dict")
    if not all(isinstance(f, str) for f in d["files"]):
        raise ValueError("not a gpuscope.report/1 dict: 'files' holds something other than strings")


_MAX_REPORT_BYTES = 1 << 30


def _trace_error(file, reason):
    """A TraceError raised from Python, with the parts the C++ ones carry."""
    e = TraceError(f"{file}: {reason}")
    e.file, e.reason, e.offset = file, reason, None
    return e


def _side(x):
    """One side of a diff: (items, saved report text, label, what listing directories left out)."""
    if isinstance(x, dict):  # a report dict, as report() returns
        _check_report(x)
        files = x.get("files") or ["report"]
        return [], _json.dumps(x, allow_nan=False), str(files[0]), []
    left_out = []
    if isinstance(x, (str, bytes, _os.PathLike)):
        path = _path(x)
        if _os.path.isfile(path) and _is_saved_report(path):
            with _os.fdopen(_os.open(path, _os.O_RDONLY), "rb") as f:
                if _os.fstat(f.fileno()).st_size > _MAX_REPORT_BYTES:  # as the CLI: no report is that large
                    raise _trace_error(path, "larger than 1 GiB: not a gpuscope report")
                return [], f.read().decode("utf-8", "replace"), path, []
        return _items(path, left_out), "", path, left_out
    if isinstance(x, Trace):
        return [x._core], "", x.path, []
    return _items(x, left_out), "", "", left_out


def diff(before, after, *, top=15, device=None) -> dict:
    """The gpuscope.diff/1 dict (`gpuscope diff --json`): before/after step time, categories, kernels, findings.

    Each side is a Trace, a path (trace, directory of traces, or a report saved with `gpuscope report --json`),
    a list of them, or a dict report() returned.
    """
    a, b = _side(before), _side(after)
    return _json.loads(_core._diff(*a, *b, int(top), _device(device)))


_WHATIF_FLAGS = ("no_input_wait", "no_host_sync", "cuda_graphs", "balance_ranks", "overlap_allreduce", "overlap_update")


def _scale_args(scale):
    """{"normalization": 0.5} or ["normalization=0.5", ("/bn_fw/", 0.5)] -> ["normalization=0.5", ...]."""
    if scale is None:
        return []
    if isinstance(scale, dict):
        scale = list(scale.items())
    elif isinstance(scale, str):
        scale = [scale]
    out = []
    for item in scale:
        if isinstance(item, str):
            out.append(item)
        else:
            what, factor = item
            out.append(f"{what}={float(factor)!r}")
    return out


def whatif(trace, *, remove=(), scale=None, no_input_wait=False, no_host_sync=False, cuda_graphs=False,
           balance_ranks=False, overlap_allreduce=False, overlap_update=False, top=10) -> dict:
    """The gpuscope.whatif/1 dict (`gpuscope whatif --json`) of one trace (a Trace or a path) with changes applied.

    remove: categories or "/REGEX/" (a str or a list); scale: {category or "/REGEX/": factor} (or "CATEGORY=F"
    strings); the flags as in `gpuscope whatif --help`. Measured, replayed (with its error) and predicted step
    time, whether the prediction was simulated, what each change matched and each change alone, the critical
    path. A change that cannot be applied raises ValueError with the CLI's message.
    """
    if isinstance(trace, Trace):
        item = trace._core
    elif isinstance(trace, (str, bytes, _os.PathLike)):
        item = _path(trace)
    else:
        raise TypeError(f"expected one gpuscope.Trace or a path, not {type(trace).__name__}")
    if isinstance(remove, str):
        remove = [remove]
    given = {"no_input_wait": no_input_wait, "no_host_sync": no_host_sync, "cuda_graphs": cuda_graphs,
             "balance_ranks": balance_ranks, "overlap_allreduce": overlap_allreduce, "overlap_update": overlap_update}
    flags = ["--" + name.replace("_", "-") for name in _WHATIF_FLAGS if given[name]]
    return _json.loads(_core._whatif(item, [str(r) for r in remove], _scale_args(scale), flags, int(top)))


# ---- Capture ---------------------------------------------------------------------------------------


def _capture_extension():
    """gpuscope._capture, which links CUPTI: imported only here, so that analysis needs no CUDA."""
    if not built_with_capture:
        raise CaptureError(
            "this gpuscope was built without CUDA support: capture needs a build with the CUDA toolkit and CUPTI "
            "(CMake GPUSCOPE_CUDA=AUTO or ON); nothing was captured")
    try:
        return _importlib.import_module("._capture", __name__)
    except ImportError as e:
        raise CaptureError(
            f"capture needs CUPTI from the CUDA toolkit, which could not be loaded ({e}): install it as CUDA does and "
            "let the loader find it (ldconfig, or its folder in LD_LIBRARY_PATH); see docs/install.md. Reading and "
            "analysing traces needs no CUDA; nothing was captured") from e


class capture:  # noqa: N801 (used as `with gpuscope.capture(...)`, like open())
    """Records what this process's GPUs do into a .gscope file (CUPTI), for the `with` block.

        with gpuscope.capture("train.gscope") as c:
            train_one_epoch()
        t = c.open()               # the trace; c.summary has the counts

    output takes %p (pid), %h (host), %r (rank), %n (first unused number). trace: a subset of
    ["kernel", "memcpy", "api", "nvtx", "sync"] (default all). capture_range: "" (the whole block),
    "cuda-profiler-api" or "nvtx:NAME". Raises CaptureError when the capture cannot start (no GPU, no
    driver, CUPTI used by another profiler, a build without CUDA); the block then does not run.
    """

    def __init__(self, output="gpuscope-%p.gscope", *, trace=None, capture_range="", delay_s=0.0, duration_s=0.0,
                 buffer_kb=4096, pool_mb=256, flush_ms=1000):
        self._options = (_path(output), list(trace or []), capture_range, float(delay_s),
                         float(duration_s), int(buffer_kb), int(pool_mb), int(flush_ms))
        self.output = None  #: the file written (after the start)
        self.summary = None  #: counts after the block: kernels, memcpys, ..., dropped_records, bytes_written

    def __enter__(self):
        started = _capture_extension().start(*self._options)
        if not started["ok"]:
            raise CaptureError(started["message"])
        self.output = started["output"]
        return self

    def __exit__(self, exc_type, exc, tb):
        self.summary = _capture_extension().stop()
        if exc_type is None and not self.summary["ok"]:
            raise CaptureError(self.summary["message"])
        return False

    def open(self) -> Trace:
        """The captured trace (after the block)."""
        if self.output is None:
            raise CaptureError("nothing was captured")
        return open(self.output)
