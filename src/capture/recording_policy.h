// RecordingPolicy: when a capture session records, as a pure state machine
// over time and events, so delay, duration and capture ranges are tested
// without CUPTI or a GPU. The controller asks it and does what it says
// (enable or disable CUPTI's activity kinds), under one lock.
//
//  * whole run: recording begins once the delay has passed;
//  * capture ranges (cudaProfilerStart/Stop, NVTX ranges): recording runs
//    while at least one range is open and the delay has passed (a range
//    opened during the delay begins recording when it ends);
//  * duration: recording ends for good that long after it first began (also
//    when that moment falls between two capture ranges);
//  * a failed begin ends recording for good (no retry at every poll);
//  * stop() ends it for good.
#pragma once

#include <chrono>

#include "capture/options.h"

namespace gpuscope::capture {

class RecordingPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Action { none, begin, end };

  RecordingPolicy() = default;
  RecordingPolicy(CaptureRange::Kind kind, double delay_s, double duration_s, Clock::time_point started);

  Action on_tick(Clock::time_point now);
  Action on_range_begin(Clock::time_point now);
  Action on_range_end(Clock::time_point now);
  // What the controller did with a `begin`.
  void begun(Clock::time_point now);
  void begin_failed() { expired_ = true; }
  // Ends recording for good; returns `end` if it was recording.
  Action stop();

  bool recording() const { return recording_; }
  bool ever_recorded() const { return ever_recorded_; }
  bool expired() const { return expired_; }
  int open_ranges() const { return open_ranges_; }

 private:
  bool may_begin(Clock::time_point now);

  CaptureRange::Kind kind_ = CaptureRange::Kind::whole_run;
  Clock::duration delay_{}, duration_{};
  Clock::time_point started_{}, recording_since_{};
  bool recording_ = false, ever_recorded_ = false, expired_ = false;
  int open_ranges_ = 0;
};

}  // namespace gpuscope::capture
