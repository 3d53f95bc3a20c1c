// The writer actor against its messages alone: ActivationBatches and Rejects in, over
// real inproc sockets; shards, rejects.jsonl, metadata.json and monitor events out.

#include "actors/writer_actor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "extraction_reader.h"
#include "storage/shard_listing.h"
#include "tests/support/test_files.h"
#include "transport/wire.h"

namespace actex {
namespace {

constexpr auto kWriterPatience = std::chrono::seconds(10);
constexpr int kWidth = 2;  // one site, blocks.0.hook_resid_post

// A batch of `sequences` whose site rows are 100 * doc_id + token position.
std::pair<ActivationBatchMessage, std::vector<zmq::message_t>> Batch(
    int64_t batch_id, std::vector<SequenceInfo> sequences) {
  ActivationBatchMessage batch;
  batch.batch_id = batch_id;
  batch.sequences = sequences;
  batch.site_names = {"blocks.0.hook_resid_post"};
  batch.site_widths = {kWidth};
  std::vector<float> site;  // [tokens, kWidth]
  for (const SequenceInfo& sequence : sequences) {
    for (int32_t t = 0; t < sequence.length; ++t) {
      const int32_t position = sequence.doc_offset + t;
      batch.token_ids.push_back(position + 1);
      site.insert(site.end(), kWidth, static_cast<float>(100 * sequence.doc_id + position));
    }
  }
  std::vector<zmq::message_t> frames;
  frames.push_back(PayloadFrame(std::move(site)));
  return {std::move(batch), std::move(frames)};
}

class WriterActorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    events_.bind("inproc://test-events");
    WriterConfig config;
    config.shards.dir = out_.path() + "/host_00";
    config.shards.sites = {{"blocks.0.hook_resid_post", kWidth}};
    config.shards.shard_bytes = 64;  // a shard per chunk
    config.shards.chunks = *ChunkRule::Of(2);
    config.shards.run_config = {{"chunk_docs", 2}};  // as a node writes it
    config.activations_endpoint = "inproc://test-activations";
    config.rejects_endpoint = "inproc://test-rejects";
    config.events_endpoint = "inproc://test-events";
    config.docs_total = 4;
    Adjust(config);
    auto writer = StartWriter(context_, std::move(config));
    ASSERT_TRUE(writer) << writer.error();
    writer_ = std::move(*writer);
    activations_.connect("inproc://test-activations");
    rejects_.connect("inproc://test-rejects");
  }

  // What a test's fixture changes in the writer's config before it starts.
  virtual void Adjust(WriterConfig& /*config*/) {}

  void SendBatch(int64_t batch_id, std::vector<SequenceInfo> sequences) {
    auto [batch, frames] = Batch(batch_id, std::move(sequences));
    ASSERT_TRUE(Send(activations_, batch, std::move(frames)));
  }
  // Chunks of two documents: chunk c holds documents 2c and 2c + 1.
  void EndChunk(int64_t chunk) { ASSERT_TRUE(Send(activations_, ChunkEndMessage{chunk, 2})); }
  // The loader's and the tokenizer's reject streams end; the loader's may carry the
  // corpus error.
  void EndRejects(const std::string& corpus_error = "") {
    ASSERT_TRUE(Send(rejects_, EndOfStreamMessage{0, 0, 0, corpus_error}));
    ASSERT_TRUE(Send(rejects_, EndOfStreamMessage{}));
  }
  // Ends the activations and both reject streams, waits for the writer to finish, and
  // reads back what it wrote.
  std::map<int64_t, DocumentRows> FinishAndRead() {
    EXPECT_TRUE(Send(activations_, EndOfStreamMessage{}));
    EndRejects();
    EXPECT_TRUE(writer_->Join());
    return ReadHostFolder(out_.path() + "/host_00");
  }
  nlohmann::json Metadata() {
    std::ifstream file(out_.path() + "/host_00/metadata.json");
    return nlohmann::json::parse(file);
  }
  std::vector<MonitorEventMessage> Events() {
    std::vector<MonitorEventMessage> events;
    while (auto event = Receive(events_, std::chrono::milliseconds(100))) {
      if (!*event) break;
      events.push_back(*(*event)->As<MonitorEventMessage>());
    }
    return events;
  }
  // The next event of `kind`, skipping the others; an empty event after kWriterPatience.
  MonitorEventMessage NextEvent(const std::string& kind) {
    while (true) {
      auto event = Receive(events_, kWriterPatience);
      EXPECT_TRUE(event && *event) << "no " << kind << " event";
      if (!event || !*event) return {};
      MonitorEventMessage message = *(*event)->As<MonitorEventMessage>();
      if (message.kind == kind) return message;
    }
  }
  std::vector<std::string> EventKinds() {
    std::vector<std::string> kinds;
    for (const MonitorEventMessage& event : Events()) kinds.push_back(event.kind);
    return kinds;
  }

  TempDir out_;
  zmq::context_t context_;
  zmq::socket_t events_{context_, zmq::socket_type::pull};
  zmq::socket_t activations_{context_, zmq::socket_type::push};
  zmq::socket_t rejects_{context_, zmq::socket_type::push};
  std::unique_ptr<Actor> writer_;
};

TEST_F(WriterActorTest, WritesWholeDocumentsAcrossBatchesAndListsRejects) {
  SendBatch(0, {{0, 0, 3, true}, {1, 0, 2, false}});  // document 1 goes on in batch 1
  SendBatch(1, {{1, 2, 2, true}});
  EndChunk(0);
  ASSERT_TRUE(Send(rejects_, RejectMessage{2, "corpus.jsonl", 3, "not JSON"}));
  SendBatch(2, {{3, 0, 1, true}});
  EndChunk(1);
  auto documents = FinishAndRead();
  ASSERT_EQ(documents.size(), 3u);
  const DocumentRows& split = documents.at(1);
  EXPECT_EQ(split.positions, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(split.token_ids, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(split.sites.at("blocks.0.hook_resid_post"),
            (std::vector<float>{100, 100, 101, 101, 102, 102, 103, 103}));
  EXPECT_EQ(documents.at(3).sites.at("blocks.0.hook_resid_post"), (std::vector<float>{300, 300}));
  EXPECT_EQ(RejectedIds(out_.path()), (std::multiset<int64_t>{2}));
  const nlohmann::json metadata = Metadata();
  EXPECT_TRUE(metadata.at("complete").get<bool>()) << metadata.dump();
  ASSERT_EQ(metadata.at("shards").size(), 2u);
  EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[0, 2]]"));
  EXPECT_EQ(metadata["shards"][1]["chunks"], nlohmann::json::parse("[[1, 2]]"));
  const std::vector<std::string> kinds = EventKinds();
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front(), "started");
  EXPECT_EQ(kinds.back(), "finished");
}

// A shard may take an hour to fill: the monitors hear of the first documents computed
// at once, though none is listed yet, and at the end every one computed is listed.
TEST_F(WriterActorTest, TellsItsFirstComputedDocumentsBeforeAnyIsListed) {
  SendBatch(0, {{0, 0, 3, true}, {1, 0, 2, false}});  // document 1 is not whole yet
  const MonitorEventMessage progress = NextEvent("progress");
  EXPECT_EQ(progress.docs_computed, 1);
  EXPECT_EQ(progress.tokens_computed, 3);
  EXPECT_EQ(progress.docs_done, 0);
  EXPECT_EQ(progress.shards_written, 0);
  SendBatch(1, {{1, 2, 2, true}});
  EndChunk(0);
  FinishAndRead();
  const std::vector<MonitorEventMessage> rest = Events();
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.back().kind, "finished");
  EXPECT_EQ(rest.back().docs_computed, 2);
  EXPECT_EQ(rest.back().docs_done, 2);
  EXPECT_EQ(rest.back().tokens_computed, 7);
  EXPECT_EQ(rest.back().tokens_done, 7);
}

TEST_F(WriterActorTest, ACorpusErrorKeepsTheWholeChunksBeforeItAndThenFails) {
  SendBatch(0, {{0, 0, 2, true}, {1, 0, 2, true}});
  EndChunk(0);
  SendBatch(1, {{2, 0, 2, true}});  // chunk 1 never ends: the damage came first
  ASSERT_TRUE(Send(activations_, EndOfStreamMessage{}));
  EndRejects("b.parquet: row group 3 page 2: snappy data is corrupt");
  auto joined = writer_->Join();
  ASSERT_FALSE(joined);
  EXPECT_NE(joined.error().find("snappy data is corrupt"), std::string::npos) << joined.error();
  auto documents = ReadHostFolder(out_.path() + "/host_00");
  EXPECT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents.count(2), 0u);
  EXPECT_FALSE(Metadata().at("complete").get<bool>());
}

TEST_F(WriterActorTest, AStreamEndingInsideASplitDocumentFailsWithoutListingIt) {
  SendBatch(0, {{0, 0, 2, true}, {1, 0, 2, false}});
  ASSERT_TRUE(Send(activations_, EndOfStreamMessage{}));
  EndRejects();
  auto joined = writer_->Join();
  ASSERT_FALSE(joined);
  EXPECT_NE(joined.error().find("inside a split document"), std::string::npos) << joined.error();
  EXPECT_EQ(ReadHostFolder(out_.path() + "/host_00").count(1), 0u);
}

// SIGTERM: the tokenizer's drained ends are the last the writer hears (the loader's
// may never come). It lists every chunk that ended, drops one it has only part of,
// and leaves the output marked incomplete for a resume.
TEST_F(WriterActorTest, ADrainedStreamListsTheChunksThatEndedAndLeavesTheOutputIncomplete) {
  SendBatch(0, {{0, 0, 2, true}, {1, 0, 2, true}});
  EndChunk(0);
  SendBatch(1, {{2, 0, 2, false}});  // document 2 goes on in a batch that never comes
  EndOfStreamMessage drained;
  drained.drained = true;
  ASSERT_TRUE(Send(rejects_, drained));
  ASSERT_TRUE(Send(activations_, drained));
  ASSERT_TRUE(writer_->Join());
  auto documents = ReadHostFolder(out_.path() + "/host_00");
  EXPECT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents.count(2), 0u);
  EXPECT_FALSE(Metadata().at("complete").get<bool>());
  EXPECT_EQ(EventKinds().back(), "drained");
}

// The pipeline stopped where it was (a drain that outlasted its timeout, a lost
// host): no stream ends, and the writer, asked to drain, lists the chunks that
// ended among what came.
TEST_F(WriterActorTest, ADrainRequestListsTheChunksThatEndedAmongWhatCame) {
  SendBatch(0, {{0, 0, 2, true}, {1, 0, 2, true}});
  EndChunk(0);
  ASSERT_TRUE(Send(rejects_, RejectMessage{2, "corpus.jsonl", 3, "not JSON"}));
  SendBatch(1, {{3, 0, 2, true}});  // chunk 1 has not ended
  writer_->RequestDrain();          // after everything above is queued: a send enqueues
  ASSERT_TRUE(writer_->Join());
  auto documents = ReadHostFolder(out_.path() + "/host_00");
  EXPECT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents.count(3), 0u);
  const nlohmann::json metadata = Metadata();
  EXPECT_FALSE(metadata.at("complete").get<bool>());
  EXPECT_EQ(metadata.at("totals").at("docs"), 2);
  EXPECT_EQ(ListedChunks(metadata), (std::map<int64_t, int64_t>{{0, 2}}));
  EXPECT_EQ(EventKinds().back(), "drained");
}

TEST_F(WriterActorTest, WaitsForEveryRejectStreamBeforeFinishing) {
  SendBatch(0, {{0, 0, 1, true}});
  EndChunk(0);
  ASSERT_TRUE(Send(activations_, EndOfStreamMessage{}));
  ASSERT_TRUE(Send(rejects_, EndOfStreamMessage{}));  // the tokenizer's has not ended
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(std::filesystem::exists(out_.path() + "/host_00/metadata.json") &&
               Metadata().at("complete").get<bool>());
  ASSERT_TRUE(Send(rejects_, RejectMessage{1, "corpus.jsonl", 2, "late"}));
  ASSERT_TRUE(Send(rejects_, EndOfStreamMessage{}));
  ASSERT_TRUE(writer_->Join());
  EXPECT_EQ(RejectedIds(out_.path()), (std::multiset<int64_t>{1}));
  EXPECT_TRUE(Metadata().at("complete").get<bool>());
}

// A mixture-of-experts run: beside the float site, expert ids [tokens, 2] as I32,
// sent as an int32 frame.
class WriterWithExpertIdsTest : public WriterActorTest {
  void Adjust(WriterConfig& config) override {
    config.shards.sites.push_back({"blocks.0.mlp.hook_expert_indices", 2, true});
  }
};

TEST_F(WriterWithExpertIdsTest, WritesExpertIdsAsI32WithTheirDocumentsRows) {
  // Expert ids 10 * doc_id + position and 63 - position, so each row is its own.
  auto send = [this](int64_t batch_id, std::vector<SequenceInfo> sequences) {
    auto [batch, frames] = Batch(batch_id, sequences);
    std::vector<int32_t> ids;  // [tokens, 2]
    for (const SequenceInfo& sequence : sequences) {
      for (int32_t t = 0; t < sequence.length; ++t) {
        const int32_t position = sequence.doc_offset + t;
        ids.insert(ids.end(),
                   {static_cast<int32_t>(10 * sequence.doc_id) + position, 63 - position});
      }
    }
    batch.site_names.push_back("blocks.0.mlp.hook_expert_indices");
    batch.site_widths.push_back(2);
    frames.push_back(PayloadFrame(std::move(ids)));
    ASSERT_TRUE(Send(activations_, batch, std::move(frames)));
  };
  send(0, {{0, 0, 1, true}, {1, 0, 2, false}});  // document 1 goes on in batch 1
  send(1, {{1, 2, 1, true}});
  EndChunk(0);
  auto documents = FinishAndRead();
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents.at(0).integer_sites.at("blocks.0.mlp.hook_expert_indices"),
            (std::vector<int32_t>{0, 63}));
  EXPECT_EQ(documents.at(1).integer_sites.at("blocks.0.mlp.hook_expert_indices"),
            (std::vector<int32_t>{10, 63, 11, 62, 12, 61}));
  EXPECT_EQ(Metadata()["sites"][1]["dtype"], "I32");
}

// A JSONL corpus: no total up front, so the writer reports what the loader's
// CorpusProgress implies (here: ten times the documents read), marked as an
// estimate until the last progress makes it exact.
class WriterEstimateTest : public WriterActorTest {
  void Adjust(WriterConfig& config) override {
    config.docs_total = -1;
    config.docs_total_from_progress = [](const CorpusProgressMessage& progress) {
      return progress.finished ? progress.next_doc_id : 10 * progress.next_doc_id;
    };
  }
};

TEST_F(WriterEstimateTest, ReportsTheEstimatedTotalThenTheExactOne) {
  // The writer reads all queued progress before a batch, so each step waits for the
  // shard its batch closes (documents of 10 tokens fill a 64-byte shard each).
  auto next_shard_event = [this]() {
    while (true) {
      auto event = Receive(events_, kWriterPatience);
      EXPECT_TRUE(event && *event) << "no shard_written event";
      if (!event || !*event) return MonitorEventMessage{};
      auto message = (*event)->As<MonitorEventMessage>();
      if (message->kind == "started") {
        EXPECT_EQ(message->docs_total, -1);
      }
      if (message->kind == "shard_written") return *message;
    }
  };
  ASSERT_TRUE(Send(rejects_, CorpusProgressMessage{1, 1, 400, false}));
  SendBatch(0, {{0, 0, 10, true}});
  // The first total is told at once, before a shard is written.
  const MonitorEventMessage first_total = NextEvent("progress");
  EXPECT_EQ(first_total.docs_total, 10);
  EXPECT_EQ(first_total.shards_written, 0);
  EndChunk(0);
  MonitorEventMessage event = next_shard_event();
  EXPECT_EQ(event.docs_total, 10);
  EXPECT_TRUE(event.docs_total_estimated);
  ASSERT_TRUE(Send(rejects_, CorpusProgressMessage{2, 2, 800, false}));
  SendBatch(1, {{2, 0, 10, true}});
  EndChunk(1);
  event = next_shard_event();
  EXPECT_EQ(event.docs_total, 20);
  EXPECT_TRUE(event.docs_total_estimated);
  ASSERT_TRUE(Send(rejects_, CorpusProgressMessage{2, 2, 1000, true}));
  ASSERT_TRUE(Send(activations_, EndOfStreamMessage{}));
  EndRejects();
  ASSERT_TRUE(writer_->Join());
  const std::vector<MonitorEventMessage> rest = Events();
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.back().kind, "finished");
  EXPECT_EQ(rest.back().docs_total, 2);
  EXPECT_FALSE(rest.back().docs_total_estimated);
}

}  // namespace
}  // namespace actex
