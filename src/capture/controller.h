// The session controller: one capture per process, driven either by the
// in-process API (gpuscope/capture.h, implemented in controller.cpp) or by
// the injection library (CUDA calls InitializeInjection inside cuInit).
//
// It owns the process-wide pieces (buffer pool, CUPTI subscription, the
// collector of the running session) and the policies around them: when
// recording runs (delay, duration, capture ranges), periodic and forced
// flushes, and what happens at exit, on a fatal signal and after fork.
//
//  * exit(): an atexit handler stops the session (bounded wait) so the file
//    is finished.
//  * SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGABRT (injected mode, only where the
//    program left the default action): the file is finished, then the signal
//    is raised again with its default action.
//  * fork() without exec: the child is inert (its CUPTI buffer requests are
//    declined, its exit touches nothing); the parent carries on.
#pragma once

#include "gpuscope/capture.h"

namespace gpuscope::capture {

// Injected mode: options from GPUSCOPE_CAPTURE_* (options.h), a report for
// `gpuscope capture` in GPUSCOPE_CAPTURE_REPORT_DIR, signal handling, and
// "gpuscope:" lines on stderr when no report directory is given. Runs once
// per process; never throws.
void start_injected() noexcept;

}  // namespace gpuscope::capture
