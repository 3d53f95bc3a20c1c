// The loader of a leased job against its messages alone: a real corpus in; lease
// requests, Documents to each replica's tokenizer and Rejects and ListNow to the
// writer out; grants and the writer's echoes in, over real inproc sockets. The host
// (host 1) writes one replica and holds a shard of host 0's replica, as host 1 of
// `--mesh data=2,model=3` with two shards per host does.

#include <gtest/gtest.h>

#include "actors/loader_actor.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"
#include "transport/wire.h"

namespace actex {
namespace {

constexpr auto kLeasedLoaderPatience = std::chrono::seconds(10);
constexpr int64_t kChunkDocs = 300;  // more than a pipeline's queue holds

// What one pipeline received up to and including its EndOfStream.
struct Received {
  std::vector<int64_t> doc_ids;
  std::vector<std::pair<int64_t, int64_t>> chunk_ends;  // (chunk, documents)
  std::vector<int64_t> listed_now;                      // ListNow's chunks_sent
  std::vector<int64_t> rejected_ids;
  std::vector<CorpusProgressMessage> progress;  // how far the own chunks' reader got
  std::optional<EndOfStreamMessage> end;
};

// Reads `socket` until a message of type `until` came, or the EndOfStream.
void ReadUntil(zmq::socket_t& socket, Received& into, MessageType until) {
  while (true) {
    auto message = Receive(socket, kLeasedLoaderPatience);
    ASSERT_TRUE(message && *message) << "nothing within " << kLeasedLoaderPatience.count() << " s";
    const ReceivedMessage& got = **message;
    switch (got.type) {
      case MessageType::kDocument:
        into.doc_ids.push_back(got.As<DocumentMessage>()->doc_id);
        break;
      case MessageType::kReject:
        into.rejected_ids.push_back(got.As<RejectMessage>()->doc_id);
        break;
      case MessageType::kCorpusProgress:
        into.progress.push_back(*got.As<CorpusProgressMessage>());
        break;
      case MessageType::kListNow:
        into.listed_now.push_back(got.As<ListNowMessage>()->chunks_sent);
        break;
      case MessageType::kChunkEnd: {
        auto end = got.As<ChunkEndMessage>();
        into.chunk_ends.emplace_back(end->chunk, end->documents);
        break;
      }
      case MessageType::kEndOfStream:
        into.end = *got.As<EndOfStreamMessage>();
        return;
      default:
        FAIL() << "unexpected " << MessageTypeName(got.type);
    }
    if (got.type == until) return;
  }
}

std::vector<int64_t> Ids(int64_t first, int64_t end, int64_t rejected) {
  std::vector<int64_t> ids;
  for (int64_t id = first; id < end; ++id) {
    if (id != rejected) ids.push_back(id);
  }
  return ids;
}

class LeasedLoaderTest : public ::testing::Test {
 protected:
  // Four chunks of kChunkDocs documents; the sixth line of each is not JSON.
  std::expected<void, std::string> Start() {
    std::string lines;
    for (int64_t doc = 0; doc < 4 * kChunkDocs; ++doc) {
      lines +=
          doc % kChunkDocs == 5 ? "not json\n" : "{\"text\": \"d" + std::to_string(doc) + "\"}\n";
    }
    LoaderConfig config;
    config.corpus.inputs = {dir_.Write("corpus.jsonl", lines)};
    config.chunks = *ChunkRule::Of(kChunkDocs);
    for (int i = 0; i < 2; ++i) {
      const std::string endpoint = "inproc://leased-documents/" + std::to_string(i);
      pipelines_[i].set(zmq::sockopt::rcvhwm, 1);  // the loader's own queue bounds it
      pipelines_[i].bind(endpoint);
      config.document_endpoints.push_back(endpoint);
    }
    rejects_.bind("inproc://leased-rejects");
    config.rejects_endpoint = "inproc://leased-rejects";
    requests_.bind("inproc://leased-requests");
    config.leasing = LoaderConfig::Leasing{.requests_endpoint = "inproc://leased-requests",
                                           .inbox_endpoint = "inproc://leased-inbox",
                                           .host = 1,
                                           .grant_holders = {0, 1}};
    auto loader = StartLoader(context_, std::move(config));
    if (!loader) return std::unexpected(loader.error());
    loader_ = std::move(*loader);
    inbox_.connect("inproc://leased-inbox");
    return {};
  }

  LeaseRequestMessage NextRequest() {
    auto message = Receive(requests_, kLeasedLoaderPatience);
    EXPECT_TRUE(message && *message) << "no lease request";
    if (!message || !*message) return {};
    return *(*message)->As<LeaseRequestMessage>();
  }

  void Grant(uint64_t request, int64_t chunk, bool finished, int holder) {
    ASSERT_TRUE(Send(inbox_, LeaseGrantMessage{request, chunk, finished, holder}));
  }

  TempDir dir_;
  zmq::context_t context_;
  zmq::socket_t pipelines_[2] = {{context_, zmq::socket_type::pull},
                                 {context_, zmq::socket_type::pull}};
  zmq::socket_t rejects_{context_, zmq::socket_type::pull};
  zmq::socket_t requests_{context_, zmq::socket_type::pull};
  zmq::socket_t inbox_{context_, zmq::socket_type::push};
  std::unique_ptr<Actor> loader_;
};

// Pipeline 0 reads host 0's grants, pipeline 1 this host's own. Nobody reads
// pipeline 0 until the end, yet pipeline 1 gets its whole chunk: a full queue holds
// up only its own replica.
TEST_F(LeasedLoaderTest, EachPipelineReadsItsHoldersChunksAndAFullOneStarvesNoOther) {
  ASSERT_TRUE(Start());
  EXPECT_EQ(NextRequest().request, 1u);
  Grant(/*request=*/7, /*chunk=*/0, false, /*holder=*/0);  // a copy of host 0's grant
  Grant(1, 1, false, 1);
  EXPECT_EQ(NextRequest().request, 2u) << "one chunk on its way: it asks for a second";
  Received own;
  ReadUntil(pipelines_[1], own, MessageType::kChunkEnd);
  EXPECT_EQ(own.doc_ids, Ids(300, 600, 305));
  EXPECT_EQ(own.chunk_ends, (std::vector<std::pair<int64_t, int64_t>>{{1, 300}}));

  // None is free for now: once its chunk went through the writer, it is listed.
  Grant(2, -1, false, 1);
  ASSERT_TRUE(Send(inbox_, ChunkEndMessage{1, 300}));
  Received writer;
  ReadUntil(rejects_, writer, MessageType::kListNow);
  Grant(2, -1, true, 1);
  Grant(8, 2, false, 0);
  Grant(9, -1, true, 0);
  Received followed;
  ReadUntil(pipelines_[0], followed, MessageType::kEndOfStream);
  ReadUntil(pipelines_[1], own, MessageType::kEndOfStream);
  ReadUntil(rejects_, writer, MessageType::kEndOfStream);
  EXPECT_EQ(writer.rejected_ids, std::vector<int64_t>{305}) << "host 0 lists line 5";
  // The own reader passed chunk 0 to read chunk 1: the writer estimates the corpus
  // from that.
  ASSERT_EQ(writer.progress.size(), 1u);
  EXPECT_GE(writer.progress[0].next_doc_id, 600);
  EXPECT_GT(writer.progress[0].jsonl_bytes, 0);
  EXPECT_FALSE(writer.progress[0].finished);
  EXPECT_EQ(writer.listed_now, std::vector<int64_t>{1});
  ASSERT_TRUE(writer.end);
  EXPECT_EQ(writer.end->rejected, 1);
  EXPECT_FALSE(writer.end->drained);
  std::vector<int64_t> expected = Ids(0, 300, 5);
  for (int64_t id : Ids(600, 900, 605)) expected.push_back(id);
  EXPECT_EQ(followed.doc_ids, expected);
  EXPECT_EQ(followed.chunk_ends, (std::vector<std::pair<int64_t, int64_t>>{{0, 300}, {2, 300}}));
  ASSERT_TRUE(followed.end && own.end);
  EXPECT_EQ(followed.end->documents, 598);
  EXPECT_EQ(own.end->documents, 299);
  EXPECT_TRUE(loader_->Join());
}

TEST_F(LeasedLoaderTest, AGrantOfAHostWhoseReplicaIsNotHereFailsTheLoaderNamingIt) {
  ASSERT_TRUE(Start());
  EXPECT_EQ(NextRequest().request, 1u);
  Grant(1, 0, false, /*holder=*/4);
  auto joined = loader_->Join();
  ASSERT_FALSE(joined);
  EXPECT_NE(joined.error().find("host 4"), std::string::npos) << joined.error();
}

// The reader that met the corpus's end tells the writer its exact size, so the
// monitor shows the job's total without a ~.
TEST_F(LeasedLoaderTest, TheOwnReaderAtTheCorpusEndTellsItsExactSize) {
  ASSERT_TRUE(Start());
  EXPECT_EQ(NextRequest().request, 1u);
  Grant(1, 3, false, 1);  // the last chunk
  Received own;
  ReadUntil(pipelines_[1], own, MessageType::kChunkEnd);
  Received writer;
  ReadUntil(rejects_, writer, MessageType::kCorpusProgress);
  ASSERT_EQ(writer.progress.size(), 1u);
  EXPECT_TRUE(writer.progress[0].finished);
  EXPECT_EQ(writer.progress[0].next_doc_id, 4 * kChunkDocs);
  EXPECT_EQ(writer.rejected_ids, std::vector<int64_t>{905});
  EXPECT_EQ(NextRequest().request, 2u);
  Grant(2, -1, true, 1);
  Grant(7, -1, true, 0);
  Received followed;
  ReadUntil(pipelines_[0], followed, MessageType::kEndOfStream);
  ReadUntil(pipelines_[1], own, MessageType::kEndOfStream);
  ReadUntil(rejects_, writer, MessageType::kEndOfStream);
  EXPECT_TRUE(loader_->Join());
}

}  // namespace
}  // namespace actex
