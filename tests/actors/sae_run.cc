#include "sae_run.h"

#include <random>

namespace actex {

std::string SaeFixtureDir(const std::string& name) {
  return std::string(ACTEX_FIXTURES_DIR) + "/sae/" + name;
}

std::string PreTokenizedCorpus(int documents) {
  std::mt19937 random(7);
  std::string corpus;
  for (int doc = 0; doc < documents; ++doc) {
    const int tokens = 5 + static_cast<int>(random() % 56);
    corpus += "{\"input_ids\":[";
    for (int i = 0; i < tokens; ++i) corpus += (i ? "," : "") + std::to_string(random() % 512);
    corpus += "]}\n";
  }
  return corpus;
}

std::vector<std::string> SaeExtractArgs(const TempDir& dir, const std::string& sites,
                                        const std::string& sae) {
  return {"extract",
          "--model",
          kTinyModelDir,
          "--data",
          dir.path() + "/c.jsonl",
          "--out",
          dir.path() + "/out",
          "--layers",
          "1",
          "--sites",
          sites,
          "--sae",
          sae,
          "--sae-top-k",
          std::to_string(kSaeTopK),
          "--shards",
          "2",
          "--dtype",
          "float32"};
}

ActexOutcome ExtractWithSae(const TempDir& dir, int documents, const std::string& sites,
                            const std::string& sae) {
  dir.Write("c.jsonl", PreTokenizedCorpus(documents));
  return RunActex(dir.path() + "/run-" + std::to_string(documents) + "-" + sites,
                  SaeExtractArgs(dir, sites, kSaeSite + "=" + SaeFixtureDir(sae)));
}

}  // namespace actex
