// What a host's output says about the model beyond the run's flags: the layers that
// have routing sites (config.sparse_layers in metadata.json).
#include "actors/host_output.h"

#include <gtest/gtest.h>

#include "model/model_config.h"

namespace actex {
namespace {

TEST(SparseLayers, AreTheLayersWithARouterAndNoneForADenseModel) {
  ModelConfig config;
  config.layers = 4;
  EXPECT_TRUE(SparseLayers(config).empty());
  // qwen2_moe with mlp_only_layers [2]: layer 2 is a dense MLP without a router.
  config.moe.experts = 8;
  config.moe.top_k = 2;
  config.moe.layer_sparse = {true, true, false, true};
  EXPECT_EQ(SparseLayers(config), (std::vector<int>{0, 1, 3}));
}

}  // namespace
}  // namespace actex
