#include "actors/cli/inspect_latents.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "storage/job_latents.h"

namespace actex {
namespace {

constexpr int64_t kDensestShown = 10;

// One SAE's summary: latents that fired and never did, then the densest.
void PrintSae(const std::string& site, const LatentExamples& examples, int64_t tokens) {
  std::vector<int64_t> order(static_cast<size_t>(examples.latents()));
  std::iota(order.begin(), order.end(), 0);
  // Densest first, ties by latent id: the listing is as reproducible as the file.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return examples.fire_count(a) > examples.fire_count(b);
  });
  const int64_t dead = std::count_if(
      order.begin(), order.end(), [&](int64_t latent) { return examples.fire_count(latent) == 0; });
  std::cout << site << ": " << examples.latents() << " latents, " << examples.examples()
            << " examples each, over " << tokens << " tokens: " << examples.latents() - dead
            << " fired, " << dead << " dead (never fired)\n  densest:\n";
  for (int64_t rank = 0; rank < std::min(kDensestShown, examples.latents() - dead); ++rank) {
    const int64_t latent = order[static_cast<size_t>(rank)];
    const int64_t fired = examples.fire_count(latent);
    const LatentExample strongest = examples.ExamplesOf(latent).front();
    std::cout << "    latent " << latent << ": fired on " << fired << " tokens ("
              << 100.0 * static_cast<double>(fired) /
                     static_cast<double>(std::max<int64_t>(tokens, 1))
              << "%), mean value " << examples.value_sum(latent) / static_cast<double>(fired)
              << ", strongest " << strongest.value << " at doc " << strongest.doc_id << " position "
              << strongest.position << '\n';
  }
}

}  // namespace

int InspectLatents(const std::string& out_dir, const std::vector<std::filesystem::path>& hosts) {
  std::vector<std::string> dirs;
  for (const auto& host : hosts) dirs.push_back(host.string());
  auto job = WriteJobLatents(out_dir, dirs);
  if (!job) {
    spdlog::error("{}", job.error());
    return 2;
  }
  const std::string path = (std::filesystem::path(out_dir) / kJobLatentsFile).string();
  std::cout << "wrote " << path << ": " << job->files << " examples files merged\n";
  for (const auto& [site, examples] : job->by_site) PrintSae(site, examples, job->tokens);
  return 0;
}

}  // namespace actex
