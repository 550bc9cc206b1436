// Collectives as the framework named them, and their call sites: each
// communication kernel with the collective kind and message size its
// launching ops say (nccl:all_reduce, record_param_comms and its arguments,
// c10d::…, NCCL's NVTX ranges; the kernel's name only where none says), its
// step and its place in the step; Profile::collective_sites compares each
// site with itself across steps (docs/metrics.md, "Collective sites").
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/detail/context.h"

namespace gpuscope::detail {

// One communication kernel and what the trace says of its collective.
struct CollectiveCall {
  RowIndex kernel = kNoRow;
  std::uint32_t device = 0;
  TimeNs start = 0, end = 0;
  std::uint8_t kind = 0;         // collective_kind_name(): the annotation's, else the kernel name's
  std::uint64_t bytes = 0;       // message bytes; 0: not said
  RowIndex annotation = kNoRow;  // the range that named the kind; kNoRow: the kernel's name did
  std::int32_t step = -1;        // Step::index of the step of its device it starts in; -1: none
  std::int32_t ordinal = -1;     // its place among its step's calls of the same kind and size; -1: no step
  RowIndex optimizer = kNoRow;   // the optimizer's step op its launch is inside (Optimizer.step#…); kNoRow: none
};

// The communication kernels of the GPUs `device` selects (kNoDevice: all),
// by device, then start, then end; not yet placed in steps.
std::vector<CollectiveCall> collective_calls(const Trace& t, std::uint32_t device);

// Sets each call's step (of its device, in `steps`: the trace's own clock)
// and its ordinal there. `calls` as collective_calls() orders them.
void place_in_steps(std::vector<CollectiveCall>& calls, const std::vector<Step>& steps);

// The kind an annotation's name says (nccl:all_reduce, c10d::allgather_,
// ncclAllReduce, CollectiveReduceV2, all-reduce.3), or that of Kineto's
// "Collective name" when `collective_args` (RangeTable::collective) has one:
// -1 when it is no communication annotation, 0 when it is one of no known
// kind (record_param_comms without arguments, a barrier).
int annotation_kind(std::string_view name, std::string_view collective_args = {});

// The message bytes Kineto's collective arguments give (the larger of "In msg
// nelems" and "Out msg nelems" × the size of "dtype"), or the first tensor of
// an op's recorded inputs ("Input Dims" × "Input type"); 0 when unknown.
std::uint64_t collective_args_bytes(std::string_view collective_args);
std::uint64_t input_bytes(std::string_view input_dims, std::string_view input_types);

// The sites pooled by call site across GPUs and ranks (kind, size, place in
// the step), by kind (Profile::collective_summary).
CollectiveSummary summarize_sites(const std::vector<CollectiveSite>& sites);

// passes/collectives.cpp: Profile::collective_sites and collective_summary of one trace (rank
// rt.rank), from its communication kernels placed in `steps` (the trace's
// own clock, before the rank's shift); a call's exposed time is its part of
// the device pass's `exposed_comm`.
void collective_pass(const RankedTrace& rt, const AnalysisOptions& opt, const std::vector<Step>& steps,
                     const ExposedCommunication& exposed_comm, Profile* p);

}  // namespace gpuscope::detail
