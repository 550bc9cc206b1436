// Forward and backward GPU time per nn.Module: backward ops linked to their
// forward ops by PyTorch's sequence number, on hand-written traces.
#include <gtest/gtest.h>

#include <string>

#include "analysis/analyze.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

constexpr std::uint32_t kForward = 1, kAutograd = 2;  // OS thread ids
constexpr std::uint32_t kForwardNumber = 1;           // PyTorch's number of the forward thread

const ModuleTime* module(const ModuleSplit& s, std::string_view name) {
  for (const ModuleTime& m : s.modules)
    if (m.name == name) return &m;
  return nullptr;
}

// Thread 1 runs model.fc's forward: aten::linear (sequence 7) launches a
// 10 µs kernel. Thread 2, autograd's, runs its backward: evaluate_function:
// AddmmBackward0 (sequence 7, forward thread 1) ⊃ AddmmBackward0 ⊃ aten::mm
// (no number), which launches a 30 µs kernel. With `sequenced` false, the
// same trace without sequence numbers.
Trace linked_trace(bool sequenced, std::int64_t backward_sequence = 7) {
  TraceFactory f;
  f.device(0);
  f.range("nn.Module: model.fc", 0, 100'000, kForward, RangeKind::annotation, "python_function");
  if (sequenced) {
    f.autograd_op("aten::linear", 10'000, 50'000, 7, 0, kForward);
    f.autograd_op("autograd::engine::evaluate_function: AddmmBackward0", 200'000, 300'000, backward_sequence,
                  kForwardNumber, kAutograd);
    f.autograd_op("AddmmBackward0", 205'000, 295'000, backward_sequence, kForwardNumber, kAutograd);
  } else {
    f.cpu_op("aten::linear", 10'000, 50'000, "", "", kForward);
    f.cpu_op("autograd::engine::evaluate_function: AddmmBackward0", 200'000, 300'000, "", "", kAutograd);
    f.cpu_op("AddmmBackward0", 205'000, 295'000, "", "", kAutograd);
  }
  f.cpu_op("aten::mm", 210'000, 250'000, "", "", kAutograd);
  f.kernel(0, 7, "forward_gemm", 30'000, 40'000, 20'000, 1'000, 1000, kForward);
  f.kernel(0, 7, "backward_gemm", 230'000, 260'000, 220'000, 1'000, 1000, kAutograd);
  return f.build();
}

TEST(ModuleSplit, BackwardOpOnAnotherThreadLinksToItsForwardOpsModule) {
  const ModuleSplit s = analyze(linked_trace(true)).module_split;
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.backward_ops, 1u);  // the outermost one: evaluate_function
  EXPECT_EQ(s.linked, 1u);
  EXPECT_EQ(s.unlinked, 0u);
  EXPECT_EQ(s.backward_gpu_ns, 30'000);
  EXPECT_EQ(s.unlinked_gpu_ns, 0);
  ASSERT_EQ(s.modules.size(), 1u);
  const ModuleTime* fc = module(s, "model.fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->forward_gpu_ns, 10'000);
  EXPECT_EQ(fc->backward_gpu_ns, 30'000);
  EXPECT_EQ(fc->backward_ops, 1u);
}

TEST(ModuleSplit, WithoutSequenceNumbersTheSplitIsUnknownNotGuessed) {
  const ModuleSplit s = analyze(linked_trace(false)).module_split;
  EXPECT_FALSE(s.known);
  EXPECT_EQ(s.backward_ops, 0u);
  EXPECT_TRUE(s.modules.empty());  // not from the names (AddmmBackward0 ↔ aten::addmm)
}

TEST(ModuleSplit, BackwardOpWhoseForwardOpIsNotInTheTraceStaysUnlinked) {
  const ModuleSplit s = analyze(linked_trace(true, 8)).module_split;
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.backward_ops, 1u);
  EXPECT_EQ(s.linked, 0u);
  EXPECT_EQ(s.unlinked, 1u);
  EXPECT_EQ(s.backward_gpu_ns, 30'000);
  EXPECT_EQ(s.unlinked_gpu_ns, 30'000);
  const ModuleTime* fc = module(s, "model.fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->forward_gpu_ns, 10'000);
  EXPECT_EQ(fc->backward_gpu_ns, 0);
}

// Forward ops of one number on two threads (each thread counts on its own):
// which one the backward op's forward thread names is not known from the OS
// thread ids, so the op is not linked.
TEST(ModuleSplit, ForwardOpsOfOneNumberOnTwoThreadsLeaveTheBackwardOpUnlinked) {
  TraceFactory f;
  f.device(0);
  f.range("nn.Module: a", 0, 100'000, 1, RangeKind::annotation, "python_function");
  f.range("nn.Module: b", 0, 100'000, 3, RangeKind::annotation, "python_function");
  f.autograd_op("aten::linear", 10'000, 50'000, 7, 0, 1);
  f.autograd_op("aten::linear", 10'000, 50'000, 7, 0, 3);
  f.autograd_op("autograd::engine::evaluate_function: AddmmBackward0", 200'000, 300'000, 7, 1, 2);
  f.kernel(0, 7, "backward_gemm", 230'000, 260'000, 220'000, 1'000, 1000, 2);
  const ModuleSplit s = analyze(f.build()).module_split;
  EXPECT_EQ(s.linked, 0u);
  EXPECT_EQ(s.unlinked, 1u);
  EXPECT_EQ(s.unlinked_gpu_ns, 30'000);
}

// Of the forward ops of one number on its thread, the one that started last
// created the node (Kineto's rule): its module is the backward op's.
TEST(ModuleSplit, TheLastForwardOpOfTheNumberGivesTheModule) {
  TraceFactory f;
  f.device(0);
  f.range("nn.Module: model", 0, 100'000, 1, RangeKind::annotation, "python_function");
  f.range("nn.Module: model.head", 40'000, 90'000, 1, RangeKind::annotation, "python_function");
  f.autograd_op("aten::t", 10'000, 20'000, 7, 0, 1);      // in model
  f.autograd_op("aten::addmm", 50'000, 60'000, 7, 0, 1);  // in model.head, last
  f.autograd_op("AddmmBackward0", 200'000, 300'000, 7, 1, 2);
  f.kernel(0, 7, "backward_gemm", 230'000, 260'000, 220'000, 1'000, 1000, 2);
  const ModuleSplit s = analyze(f.build()).module_split;
  EXPECT_EQ(s.linked, 1u);
  const ModuleTime* head = module(s, "model.head");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->backward_gpu_ns, 30'000);
  EXPECT_EQ(module(s, "model"), nullptr);  // no time there
}

// AccumulateGrad adds a leaf's gradient (and runs the hooks on it: DDP's
// all-reduce): autograd's node range, no forward thread, no forward op. Its
// work is the backward pass's, not linked to a module, never the forward's.
TEST(ModuleSplit, AccumulateGradIsBackwardWorkWithNoForwardOp) {
  TraceFactory f;
  f.device(0);
  f.range("nn.Module: model.fc", 0, 100'000, kForward, RangeKind::annotation, "python_function");
  f.autograd_op("aten::linear", 10'000, 50'000, 7, 0, kForward);
  f.kernel(0, 7, "forward_gemm", 30'000, 40'000, 20'000, 1'000, 1000, kForward);
  f.cpu_op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 200'000, 300'000, "", "", kAutograd);
  f.cpu_op("nccl:all_reduce", 210'000, 250'000, "", "", kAutograd);
  f.kernel(0, 9, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 230'000, 280'000, 220'000, 1'000, 1000, kAutograd);
  const ModuleSplit s = analyze(f.build()).module_split;
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.backward_ops, 1u);
  EXPECT_EQ(s.unlinked, 1u);
  EXPECT_EQ(s.backward_gpu_ns, 50'000);
  EXPECT_EQ(s.unlinked_gpu_ns, 50'000);
  const ModuleTime* fc = module(s, "model.fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->forward_gpu_ns, 10'000);
  EXPECT_EQ(module(s, "(no module)"), nullptr);  // the all-reduce is not forward time
}

// Activation checkpointing: the backward op of a checkpointed block runs its
// forward again (forward ops, numbered, no forward thread, inside it) before
// the gradients. That GPU time is backward time, and said to be recomputation.
TEST(ModuleSplit, ForwardOpsInsideABackwardOpAreRecomputation) {
  TraceFactory f;
  f.device(0);
  f.range("nn.Module: model.block", 0, 100'000, kForward, RangeKind::annotation, "python_function");
  f.autograd_op("aten::relu", 10'000, 50'000, 7, 0, kForward);
  f.kernel(0, 7, "relu_kernel", 30'000, 40'000, 20'000, 1'000, 1000, kForward);
  f.autograd_op("autograd::engine::evaluate_function: ReluBackward0", 200'000, 400'000, 7, kForwardNumber, kAutograd);
  f.autograd_op("aten::conv2d", 210'000, 260'000, 3, 0, kAutograd);  // the recomputed forward
  f.kernel(0, 7, "conv_fwd", 240'000, 265'000, 230'000, 1'000, 1000, kAutograd);
  f.cpu_op("aten::threshold_backward", 300'000, 350'000, "", "", kAutograd);
  f.kernel(0, 7, "relu_bwd", 330'000, 340'000, 320'000, 1'000, 1000, kAutograd);
  const ModuleSplit s = analyze(f.build()).module_split;
  EXPECT_EQ(s.linked, 1u);
  EXPECT_EQ(s.backward_gpu_ns, 35'000);
  EXPECT_EQ(s.recomputed_gpu_ns, 25'000);
  EXPECT_EQ(s.recomputed_ops, 1u);
  const ModuleTime* block = module(s, "model.block");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->backward_gpu_ns, 35'000);
}

}  // namespace
}  // namespace gpuscope
