#include "capture/recording_policy.h"

namespace gpuscope::capture {

namespace {
RecordingPolicy::Clock::duration seconds(double s) {
  return std::chrono::duration_cast<RecordingPolicy::Clock::duration>(std::chrono::duration<double>(s));
}
}  // namespace

RecordingPolicy::RecordingPolicy(CaptureRange::Kind kind, double delay_s, double duration_s, Clock::time_point started)
    : kind_(kind), delay_(seconds(delay_s)), duration_(seconds(duration_s)), started_(started) {}

// Also notices a duration that ran out while no range was open: recording
// must not begin again then, not even until the next poll.
bool RecordingPolicy::may_begin(Clock::time_point now) {
  if (!expired_ && ever_recorded_ && duration_ > Clock::duration::zero() && now - recording_since_ >= duration_)
    expired_ = true;
  return !expired_ && !recording_ && now >= started_ + delay_;
}

RecordingPolicy::Action RecordingPolicy::on_tick(Clock::time_point now) {
  if (recording_ && duration_ > Clock::duration::zero() && now - recording_since_ >= duration_) {
    recording_ = false;
    expired_ = true;
    return Action::end;
  }
  const bool wanted = kind_ == CaptureRange::Kind::whole_run || open_ranges_ > 0;
  const bool can = may_begin(now);  // first: it also ends a duration that ran out between ranges
  return wanted && can ? Action::begin : Action::none;
}

RecordingPolicy::Action RecordingPolicy::on_range_begin(Clock::time_point now) {
  ++open_ranges_;
  return kind_ != CaptureRange::Kind::whole_run && may_begin(now) ? Action::begin : Action::none;
}

RecordingPolicy::Action RecordingPolicy::on_range_end(Clock::time_point) {
  if (open_ranges_ == 0) return Action::none;  // an end without a begin (a stop before any start)
  if (--open_ranges_ > 0 || !recording_ || kind_ == CaptureRange::Kind::whole_run) return Action::none;
  recording_ = false;
  return Action::end;
}

void RecordingPolicy::begun(Clock::time_point now) {
  recording_ = true;
  if (!ever_recorded_) {
    ever_recorded_ = true;
    recording_since_ = now;
  }
}

RecordingPolicy::Action RecordingPolicy::stop() {
  expired_ = true;
  if (!recording_) return Action::none;
  recording_ = false;
  return Action::end;
}

}  // namespace gpuscope::capture
