// The NVTX range names the trainer gives its layers (net.h): one per layer,
// named after its parameters, forward and backward, unique; and the very list
// the GPU check expects in a capture's op table (tests/gpu/workload_layers.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "workloads/resnet/net.h"

namespace gpuscope::resnet {
namespace {

TEST(LayerRanges, OnePerLayerForwardAndBackward) {
  const NetSpec net = build_net(NetConfig{});
  const std::vector<std::string> names = layer_range_names(net);
  const std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size()) << "a range name repeats";
  // 20 convolutions, 20 batch norms, 8 blocks, avgpool, fc, loss; each but the loss backward too.
  EXPECT_EQ(names.size(), 2u * (20 + 20 + 8 + 2) + 1);
  for (const char* n : {"stem.conv", "stem.bn", "stage1.block0", "stage1.block0.conv1", "stage1.block0.bn1",
                        "stage2.block0.proj", "stage2.block0.bn_proj", "stage4.block1.bn2", "avgpool", "fc", "loss",
                        "stem.conv.backward", "stage1.block0.conv1.backward", "stage2.block0.bn_proj.backward",
                        "stage4.block1.backward", "fc.backward", "avgpool.backward"})
    EXPECT_TRUE(unique.contains(n)) << n;
  EXPECT_FALSE(unique.contains("loss.backward"));
  EXPECT_FALSE(unique.contains("stage1.block0.proj")) << "stage 1 has no projection";
}

TEST(LayerRanges, AreTheLayersParameterNames) {
  // A convolution's range is its weight's name without ".weight", a batch
  // norm's its gamma's without ".gamma": the op table and the parameter list agree.
  const NetSpec net = build_net(NetConfig{});
  auto prefix = [&](int param, const char* suffix) {
    const std::string& n = net.params[param].name;
    EXPECT_TRUE(n.ends_with(suffix)) << n;
    return n.substr(0, n.size() - std::string(suffix).size());
  };
  EXPECT_EQ(net.stem.name, prefix(net.stem.weight, ".weight"));
  EXPECT_EQ(net.stem_bn.name, prefix(net.stem_bn.gamma, ".gamma"));
  for (const BlockSpec& b : net.blocks) {
    for (const ConvSpec* c : {&b.conv1, &b.conv2}) EXPECT_EQ(c->name, prefix(c->weight, ".weight"));
    for (const BnSpec* n : {&b.bn1, &b.bn2}) EXPECT_EQ(n->name, prefix(n->gamma, ".gamma"));
    EXPECT_TRUE(b.conv1.name.starts_with(b.name + ".")) << b.conv1.name;
    if (b.projection) {
      EXPECT_EQ(b.proj.name, prefix(b.proj.weight, ".weight"));
    }
  }
  EXPECT_EQ(backward_range_name("stage3.block1.bn2"), "stage3.block1.bn2.backward");
  EXPECT_EQ(tensor_range_name("optimizer", net.params[net.fc_weight]), "optimizer.fc.weight");
  EXPECT_EQ(bucket_range_name("all-reduce", 0), "all-reduce.stage1");
  EXPECT_EQ(bucket_range_name("optimizer", 3), "optimizer.stage4");
}

TEST(LayerRanges, TheGpuCheckExpectsExactlyThese) {
  const std::string file = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/gpu/workload_layers.txt";
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << file;
  std::vector<std::string> listed;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') listed.push_back(line);
  std::vector<std::string> names = layer_range_names(build_net(NetConfig{}));
  std::sort(names.begin(), names.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, names) << file << " differs from layer_range_names(): regenerate it from net.cpp's names";
}

}  // namespace
}  // namespace gpuscope::resnet
