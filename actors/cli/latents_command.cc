// actex latents OUT --latent L [--site S] [--context C] --tokenizer DIR: one SAE latent's
// strongest examples (OUT/latents.safetensors) as text with the firing token marked,
// read back from the shards, and its density.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/cli/commands.h"
#include "actors/cli/terminal_text.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "storage/job_latents.h"
#include "storage/latent_examples.h"
#include "storage/shard_latents.h"
#include "storage/shuffle_rows.h"

namespace actex {
namespace {

constexpr size_t kMaxLineChars = 4000;

struct LatentsOptions {
  std::string out_dir, site, tokenizer_dir;
  int64_t latent = -1;
  int context = 16;
};

// The tokens of `window` decoded, the one at `firing` between « and ». The marks go
// where the decoded prefix ends when decoding is prefix-stable (SentencePiece drops a
// leading space only at the start), else each part is decoded on its own.
std::expected<std::string, std::string> MarkedText(const Tokenizer& tokenizer,
                                                   const std::vector<int32_t>& window,
                                                   size_t firing) {
  const std::span<const int32_t> ids(window);
  auto before = tokenizer.Decode(ids.first(firing));
  auto through = tokenizer.Decode(ids.first(firing + 1));
  auto all = tokenizer.Decode(ids);
  if (!before || !through || !all) {
    return std::unexpected(!before ? before.error() : !through ? through.error() : all.error());
  }
  if (through->starts_with(*before) && all->starts_with(*through)) {
    return *before + "\u00AB" + through->substr(before->size()) + "\u00BB" +
           all->substr(through->size());
  }
  auto token = tokenizer.Decode(ids.subspan(firing, 1));
  auto after = tokenizer.Decode(ids.subspan(firing + 1));
  if (!token || !after) return std::unexpected(!token ? token.error() : after.error());
  return *before + "\u00AB" + *token + "\u00BB" + *after;
}

// Which SAE site to show: `asked`, or the only one there is.
std::expected<std::string, std::string> ChooseSite(const LatentExamplesBySite& by_site,
                                                   const std::string& asked,
                                                   const std::string& file) {
  std::string names;
  for (const auto& [site, examples] : by_site) names += (names.empty() ? "" : ", ") + site;
  if (asked.empty()) {
    if (by_site.size() == 1) return by_site.begin()->first;
    return std::unexpected(file + " holds " + std::to_string(by_site.size()) + " SAE sites (" +
                           names + "): choose one with --site");
  }
  if (!by_site.contains(asked)) {
    return std::unexpected("no SAE site " + asked + " in " + file +
                           " (its sites: " + (names.empty() ? "none" : names) + ")");
  }
  return asked;
}

// The shards opened so far, by path.
using OpenShards = std::map<std::string, std::unique_ptr<ShardLatents>>;

// The token ids around (doc_id, position), at most `context` either side inside the
// document, and the index of that token among them.
std::expected<std::pair<std::vector<int32_t>, size_t>, std::string> ContextOf(
    const SourceOutput& source, OpenShards& open, int64_t doc_id, int32_t position, int context) {
  for (const SourceShard& listed : source.shards) {
    if (doc_id < listed.first_doc_id || doc_id > listed.last_doc_id) continue;
    auto& shard = open[listed.path];
    if (!shard) {
      auto opened = ShardLatents::Open(listed.path);
      if (!opened) return std::unexpected(opened.error());
      shard = std::move(*opened);
    }
    const int64_t row = shard->RowOf(doc_id, position);
    if (row < 0) continue;
    int64_t begin = row, end = row + 1;
    while (begin > 0 && row - begin < context && shard->doc_id(begin - 1) == doc_id) --begin;
    while (end < shard->tokens() && end - row <= context && shard->doc_id(end) == doc_id) ++end;
    std::vector<int32_t> window;
    for (int64_t r = begin; r < end; ++r) window.push_back(shard->token_id(r));
    return std::pair{std::move(window), static_cast<size_t>(row - begin)};
  }
  return std::unexpected("document " + std::to_string(doc_id) + " position " +
                         std::to_string(position) + " is in no listed shard of " + source.dir +
                         ": were shards removed, or latents.safetensors made from another run?");
}

int RunLatents(const LatentsOptions& options) {
  auto fail = [](const std::string& message) {
    std::cerr << "actex latents: " << message << '\n';
    return 1;
  };
  const std::string file = options.out_dir + "/" + kJobLatentsFile;
  if (!std::filesystem::exists(file)) {
    return fail(file + " is missing: run `actex inspect --latents " + options.out_dir +
                "` first to merge the hosts' latent examples");
  }
  auto by_site = LoadLatentExamples(file);
  if (!by_site) return fail(by_site.error());
  auto site = ChooseSite(*by_site, options.site, file);
  if (!site) return fail(site.error());
  const LatentExamples& examples = by_site->at(*site);
  if (options.latent < 0 || options.latent >= examples.latents()) {
    return fail("latent " + std::to_string(options.latent) + " is out of range: the SAE on " +
                *site + " has " + std::to_string(examples.latents()) + " latents (0.." +
                std::to_string(examples.latents() - 1) + ")");
  }
  auto source = ReadSourceOutput(options.out_dir);
  if (!source) return fail(source.error());
  auto tokenizer = LoadTokenizer(options.tokenizer_dir);
  if (!tokenizer) return fail("--tokenizer: " + tokenizer.error());
  const int64_t fired = examples.fire_count(options.latent);
  std::cout << *site << " latent " << options.latent << ": fired on " << fired << " of "
            << source->tokens << " tokens (density "
            << (source->tokens ? static_cast<double>(fired) / source->tokens : 0.0)
            << "), mean value " << (fired ? examples.value_sum(options.latent) / fired : 0.0)
            << '\n';
  OpenShards open;
  int rank = 0;
  for (const LatentExample& example : examples.ExamplesOf(options.latent)) {
    if (example.doc_id < 0) break;  // unused slots come last
    auto context = ContextOf(*source, open, example.doc_id, example.position, options.context);
    if (!context) return fail(context.error());
    auto text = MarkedText(**tokenizer, context->first, context->second);
    if (!text) return fail("--tokenizer " + options.tokenizer_dir + ": " + text.error());
    std::cout << "#" << ++rank << " value " << example.value << " doc " << example.doc_id
              << " position " << example.position << ": " << TerminalSafe(*text, kMaxLineChars)
              << '\n';
  }
  if (rank == 0) std::cout << "no examples: the latent never fired\n";
  return 0;
}

}  // namespace

CommandRunner AddLatentsCommand(CLI::App& command) {
  auto options = std::make_shared<LatentsOptions>();
  command.add_option("OUT", options->out_dir, "an extraction's output with latents.safetensors")
      ->required();
  command.add_option("--latent", options->latent, "the latent's index")->required();
  command.add_option("--site", options->site, "the SAE's site (needed when there are several)");
  command.add_option("--context", options->context, "tokens shown either side")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.add_option("--tokenizer", options->tokenizer_dir, "the model folder (its tokenizer)")
      ->required();
  command.footer(
      "Prints the latent's density (tokens it fired on / tokens), then each example, strongest "
      "first: its value, document, position and the text around it with the firing token "
      "between \u00AB and \u00BB.\nExit status: 0 printed; 1 refused or failed (the message "
      "says why); 2 a usage error.");
  return [options] { return RunLatents(*options); };
}

}  // namespace actex
