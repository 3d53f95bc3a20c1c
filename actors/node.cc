#include "actors/node.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/device_shard_actor.h"
#include "actors/loader_actor.h"
#include "actors/tokenizer_actor.h"
#include "actors/writer_actor.h"
#include "model/model_weights.h"
#include "model/tokenizer/tokenizer.h"
#include "transport/wire.h"

namespace actex {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string SiteList(const std::vector<Site>& sites) {
  std::string list;
  for (const Site& site : sites) list += (list.empty() ? "" : ",") + site.HookName();
  return list;
}

// The actors of one run, stopped and joined together whatever happens.
class ActorGroup {
 public:
  ~ActorGroup() {
    for (auto& actor : actors_) actor->RequestStop();
  }
  std::expected<void, std::string> Add(std::expected<std::unique_ptr<Actor>, std::string> actor) {
    if (!actor) return std::unexpected(actor.error());
    actors_.push_back(std::move(*actor));
    return {};
  }
  std::vector<std::unique_ptr<Actor>>& actors() { return actors_; }

 private:
  std::vector<std::unique_ptr<Actor>> actors_;
};

void PrintProgress(const MonitorEventMessage& event, bool final_line) {
  std::fprintf(stderr, "\r[actex] docs %lld | tokens %lld | %.0f tok/s | shards %lld | rejected %lld%s",
               static_cast<long long>(event.docs_done), static_cast<long long>(event.tokens_done),
               event.tokens_per_second, static_cast<long long>(event.shards_written),
               static_cast<long long>(event.rejected), final_line ? "\n" : "   ");
  std::fflush(stderr);
}

}  // namespace

std::expected<ExtractionSummary, std::string> RunExtraction(const ExtractOptions& options) {
  const Clock::time_point load_start = Clock::now();
  auto config = LoadModelConfig(options.model_dir);
  if (!config) return std::unexpected(config.error());
  auto plan = PlanExtraction(options, *config);
  if (!plan) return std::unexpected(plan.error());
  auto weights = ModelWeights::Open(options.model_dir);
  if (!weights) return std::unexpected(weights.error());
  std::unique_ptr<Tokenizer> tokenizer;
  if (HasTokenizer(options.model_dir)) {
    auto loaded = LoadTokenizer(options.model_dir);
    if (!loaded) return std::unexpected(loaded.error());
    tokenizer = std::move(*loaded);
  }
  std::vector<ShardSlice> slices;
  for (int rank = 0; rank < options.shards; ++rank) {
    auto slice = PlanShard(*config, rank, options.shards);
    if (!slice) return std::unexpected(slice.error());
    slices.push_back(*slice);
  }

  ExtractionSummary summary;
  summary.host_dir = (std::filesystem::path(options.out_dir) / "host_00").string();
  WriterConfig writer;
  writer.shards.dir = summary.host_dir;
  writer.shards.shard_bytes = options.shard_bytes;
  writer.shards.gzip = options.gzip;
  writer.shards.dtype = plan->dtype;
  for (const Site& site : plan->sites) {
    writer.shards.sites.emplace_back(site.HookName(), site.Width(*config));
  }
  writer.shards.tensor_metadata = {
      {"model", config->name},
      {"sites", SiteList(plan->sites)},
      {"dtype", plan->dtype_name},
      {"tokenizer_sha256", tokenizer ? tokenizer->file_hash() : "none (pre-tokenized corpus)"}};
  writer.shards.run_config = ExtractOptionsToJson(options, *plan);
  writer.activations_endpoint = "inproc://activations";
  writer.rejects_endpoint = "inproc://rejects";
  writer.events_endpoint = "inproc://events";

  zmq::context_t context;
  zmq::socket_t events(context, zmq::socket_type::pull);
  events.set(zmq::sockopt::linger, 0);
  events.bind(writer.events_endpoint);
  summary.load_seconds = SecondsSince(load_start);
  spdlog::info("model {} ({} layers, {} heads) loaded in {:.2f} s; {} device shard(s), {} BLAS "
               "thread(s) each; sites {}",
               config->name, config->layers, config->heads, summary.load_seconds, options.shards,
               plan->blas_threads, SiteList(plan->sites));

  const Clock::time_point extract_start = Clock::now();
  ActorGroup group;
  std::vector<std::string> batch_endpoints;
  RingOptions ring;
  ring.ring = "replica-0";
  for (int rank = 0; rank < options.shards; ++rank) {
    batch_endpoints.push_back("inproc://batches/" + std::to_string(rank));
    ring.endpoints.push_back("inproc://ring/" + std::to_string(rank));
  }
  auto started = group.Add(StartWriter(context, std::move(writer)));
  for (int rank = 0; started && rank < options.shards; ++rank) {
    DeviceShardConfig shard{*weights, slices[rank], plan->sites, plan->blas_threads,
                            batch_endpoints[rank], ring, "inproc://activations"};
    shard.ring.rank = rank;
    started = group.Add(StartDeviceShard(context, std::move(shard)));
  }
  if (started) {
    TokenizerActorConfig tokenizing{std::move(tokenizer), options.model_dir, config->vocab_size,
                                    plan->bos_token_id,
                                    PackerOptions{options.max_seq_len, options.overflow,
                                                  options.batch_tokens},
                                    "inproc://documents", batch_endpoints, "inproc://rejects"};
    started = group.Add(StartTokenizerActor(context, std::move(tokenizing)));
  }
  if (started) {
    LoaderConfig loading{CorpusOptions{options.data, options.text_field, options.max_docs},
                         "inproc://documents", "inproc://rejects"};
    started = group.Add(StartLoader(context, std::move(loading)));
  }
  if (!started) return std::unexpected(started.error());

  // Supervise: the first failure stops every actor; events feed the progress line.
  std::string first_error;
  MonitorEventMessage last_event;
  const bool show_progress = options.show_progress && isatty(STDERR_FILENO);
  std::vector<bool> finished(group.actors().size(), false);
  size_t running = group.actors().size();
  while (running > 0) {
    std::vector<zmq::pollitem_t> items{{events.handle(), 0, ZMQ_POLLIN, 0}};
    for (auto& actor : group.actors()) items.push_back({actor->pipe().handle(), 0, ZMQ_POLLIN, 0});
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(500));
    while (auto event = Receive(events, std::chrono::milliseconds(0))) {
      if (!*event) break;
      if (auto decoded = (*event)->As<MonitorEventMessage>()) {
        last_event = *decoded;
        if (show_progress) PrintProgress(last_event, false);
        if (decoded->kind == "shard_written") spdlog::debug("{}", decoded->message);
      }
    }
    for (size_t i = 0; i < group.actors().size(); ++i) {
      if (finished[i] || !(items[i + 1].revents & ZMQ_POLLIN)) continue;
      finished[i] = true;
      --running;
      auto result = group.actors()[i]->Join();
      if (!result && first_error.empty()) {
        first_error = result.error();
        for (auto& actor : group.actors()) actor->RequestStop();
      }
    }
  }
  if (!first_error.empty()) return std::unexpected(first_error);

  summary.extract_seconds = SecondsSince(extract_start);
  summary.docs = last_event.docs_done;
  summary.tokens = last_event.tokens_done;
  summary.shards = last_event.shards_written;
  summary.rejected = last_event.rejected;
  summary.tokens_per_second =
      summary.extract_seconds > 0 ? summary.tokens / summary.extract_seconds : 0;
  if (show_progress) PrintProgress(last_event, true);
  return summary;
}

}  // namespace actex
