// The loader actor against its messages alone: a real corpus in; Documents to each
// replica's tokenizer and Rejects to the writer out, over real inproc sockets.

#include "actors/loader_actor.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "extraction_reader.h"
#include "tests/support/test_files.h"
#include "transport/wire.h"

namespace actex {
namespace {

constexpr auto kLoaderPatience = std::chrono::seconds(10);

// Every message one socket receives up to and including an EndOfStream.
struct Stream {
  std::vector<ReceivedMessage> messages;
  std::vector<CorpusProgressMessage> progress;          // the writer's stream only
  std::vector<std::pair<int64_t, int64_t>> chunk_ends;  // (chunk, documents), a replica's only
  std::vector<int64_t> ids_when_chunks_ended;           // documents sent before each ChunkEnd
  EndOfStreamMessage end;
};

Stream Drain(zmq::socket_t& socket) {
  Stream stream;
  while (true) {
    auto message = Receive(socket, kLoaderPatience);
    EXPECT_TRUE(message && *message) << "no EndOfStream";
    if (!message || !*message) return stream;
    if ((*message)->type == MessageType::kEndOfStream) {
      stream.end = *(*message)->As<EndOfStreamMessage>();
      return stream;
    }
    if ((*message)->type == MessageType::kCorpusProgress) {
      stream.progress.push_back(*(*message)->As<CorpusProgressMessage>());
      continue;
    }
    if ((*message)->type == MessageType::kChunkEnd) {
      auto chunk_end = (*message)->As<ChunkEndMessage>();
      stream.chunk_ends.emplace_back(chunk_end->chunk, chunk_end->documents);
      stream.ids_when_chunks_ended.push_back(static_cast<int64_t>(stream.messages.size()));
      continue;
    }
    stream.messages.push_back(std::move(**message));
  }
}

template <typename T>
std::vector<int64_t> DocIds(const Stream& stream) {
  std::vector<int64_t> ids;
  for (const ReceivedMessage& message : stream.messages) ids.push_back(message.As<T>()->doc_id);
  return ids;
}

class LoaderActorTest : public ::testing::Test {
 protected:
  // Binds the sinks (two replica pipelines and the writer's rejects), then starts the
  // loader on `config`.
  std::expected<void, std::string> Start(LoaderConfig config) {
    for (int i = 0; i < 2; ++i) {
      const std::string endpoint = "inproc://test-documents/" + std::to_string(i);
      pipelines_[i].bind(endpoint);
      config.document_endpoints.push_back(endpoint);
    }
    rejects_.bind("inproc://test-rejects");
    config.rejects_endpoint = "inproc://test-rejects";
    auto loader = StartLoader(context_, std::move(config));
    if (!loader) return std::unexpected(loader.error());
    loader_ = std::move(*loader);
    return {};
  }

  TempDir dir_;
  zmq::context_t context_;
  zmq::socket_t pipelines_[2] = {{context_, zmq::socket_type::pull},
                                 {context_, zmq::socket_type::pull}};
  zmq::socket_t rejects_{context_, zmq::socket_type::pull};
  std::unique_ptr<Actor> loader_;
};

TEST_F(LoaderActorTest, DealsEveryDocumentToTheReplicaItsIdNamesAndEndsEveryStream) {
  LoaderConfig config;
  config.corpus.inputs = {dir_.Write("a.jsonl", "{\"text\": \"zero\"}\n{\"text\": \"one\"}\n"),
                          dir_.Write("b.jsonl",
                                     "{\"input_ids\": [5, 6]}\n{\"text\": \"three\"}\n"
                                     "{\"text\": \"four\"}\n")};
  config.route = [](int64_t doc_id) { return doc_id == 4 ? -1 : static_cast<int>(doc_id % 2); };
  ASSERT_TRUE(Start(std::move(config)));
  Stream even = Drain(pipelines_[0]);
  Stream odd = Drain(pipelines_[1]);
  EXPECT_EQ(DocIds<DocumentMessage>(even), (std::vector<int64_t>{0, 2}));  // 4: nobody here
  EXPECT_EQ(DocIds<DocumentMessage>(odd), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(even.end.documents, 2);
  EXPECT_EQ(odd.end.documents, 2);
  using Ends = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(even.chunk_ends, (Ends{{0, 1}, {2, 1}}));  // chunks of one document each
  EXPECT_EQ(odd.chunk_ends, (Ends{{1, 1}, {3, 1}}));
  auto pretokenized = even.messages[1].As<DocumentMessage>();
  EXPECT_TRUE(pretokenized->pretokenized);
  EXPECT_EQ(pretokenized->input_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(pretokenized->line, 1);  // its line in b.jsonl
  EXPECT_EQ(odd.messages[1].As<DocumentMessage>()->text, "three");
  EXPECT_TRUE(Drain(rejects_).messages.empty());
  EXPECT_TRUE(loader_->Join());
}

TEST_F(LoaderActorTest, EndsEachChunkAsSoonAsALaterDocumentShowsOrTheCorpusEnds) {
  std::string lines;
  for (int doc = 0; doc < 8; ++doc) {
    lines += doc == 1 ? "not json\n" : "{\"text\": \"d" + std::to_string(doc) + "\"}\n";
  }
  LoaderConfig config;
  config.corpus.inputs = {dir_.Write("a.jsonl", lines)};
  config.chunks = *ChunkRule::Of(3);
  config.route = [](int64_t doc_id) { return static_cast<int>(doc_id / 3 % 2); };
  ASSERT_TRUE(Start(std::move(config)));
  Stream first = Drain(pipelines_[0]);
  Stream second = Drain(pipelines_[1]);
  using Ends = std::vector<std::pair<int64_t, int64_t>>;
  // Chunk 0 lost document 1 to a reject and still has 3; chunk 2 is cut by the end.
  EXPECT_EQ(first.chunk_ends, (Ends{{0, 3}, {2, 2}}));
  EXPECT_EQ(DocIds<DocumentMessage>(first), (std::vector<int64_t>{0, 2, 6, 7}));
  EXPECT_EQ(first.ids_when_chunks_ended, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(second.chunk_ends, (Ends{{1, 3}}));
  EXPECT_EQ(DocIds<RejectMessage>(Drain(rejects_)), (std::vector<int64_t>{1}));
  EXPECT_TRUE(loader_->Join());
}

// A drain ends the streams between chunks: every chunk begun is sent whole and
// ended, and the streams end marked drained, long before the corpus does.
TEST_F(LoaderActorTest, ADrainFinishesTheChunksBegunAndEndsTheStreamsDrained) {
  std::string lines;
  for (int doc = 0; doc < 5000; ++doc) lines += "{\"text\": \"d" + std::to_string(doc) + "\"}\n";
  LoaderConfig config;
  config.corpus.inputs = {dir_.Write("a.jsonl", lines)};
  config.chunks = *ChunkRule::Of(7);
  ASSERT_TRUE(Start(std::move(config)));
  // The queues (the loader's and this socket's) hold the loader back; drain it there.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  loader_->RequestDrain();
  Stream stream = Drain(pipelines_[0]);
  EXPECT_TRUE(stream.end.drained);
  ASSERT_FALSE(stream.chunk_ends.empty());
  EXPECT_LT(stream.messages.size(), 4000u);  // stopped well before the corpus ends
  EXPECT_EQ(stream.ids_when_chunks_ended.back(), static_cast<int64_t>(stream.messages.size()))
      << "documents after the last chunk's end";
  for (auto [chunk, documents] : stream.chunk_ends) EXPECT_EQ(documents, 7) << chunk;
  EXPECT_EQ(stream.messages.size(), stream.chunk_ends.size() * 7);
  EXPECT_TRUE(Drain(pipelines_[1]).end.drained);
  EXPECT_TRUE(Drain(rejects_).end.drained);
  EXPECT_TRUE(loader_->Join());
}

TEST_F(LoaderActorTest, RejectedLinesGoToTheWriterOnlyWhenTheJobOwnsThem) {
  LoaderConfig config;
  config.corpus.inputs = {dir_.Write(
      "c.jsonl", "not json\n{\"text\": \"fine\"}\n{\"other\": 1}\n{\"text\": \"fine too\"}\n")};
  config.route = [](int64_t doc_id) { return doc_id == 2 ? -1 : 0; };  // 2 is another job's
  ASSERT_TRUE(Start(std::move(config)));
  Stream documents = Drain(pipelines_[0]);
  EXPECT_EQ(DocIds<DocumentMessage>(documents), (std::vector<int64_t>{1, 3}));
  Stream rejects = Drain(rejects_);
  ASSERT_EQ(DocIds<RejectMessage>(rejects), (std::vector<int64_t>{0}));
  auto reject = rejects.messages[0].As<RejectMessage>();
  EXPECT_EQ(reject->line, 1);
  EXPECT_NE(reject->file.find("c.jsonl"), std::string::npos);
  EXPECT_FALSE(reject->reason.empty());
  EXPECT_EQ(rejects.end.rejected, 1);
  EXPECT_TRUE(rejects.end.corpus_error.empty());
  EXPECT_TRUE(loader_->Join());
}

// A cut gzip stream is an error (nothing after the cut can be numbered); a damaged
// Parquet page is not (its rows are rejects, tests/storage/parquet_damage_test.cc).
TEST_F(LoaderActorTest, ACutGzipStreamEndsTheStreamsWithTheCorpusErrorAfterItsReadableLines) {
  std::string lines;
  for (int i = 0; i < 400; ++i) {
    lines += "{\"text\": \"doc " + std::to_string(i * 7919 % 100003) + "\"}\n";
  }
  const std::string path = dir_.path() + "/cut.jsonl.gz";
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, lines.data(), static_cast<unsigned>(lines.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  LoaderConfig config;
  config.corpus.inputs = {path};
  ASSERT_TRUE(Start(std::move(config)));
  Stream documents = Drain(pipelines_[0]);
  Stream rejects = Drain(rejects_);
  // The lines before the cut, each once, in order.
  std::vector<int64_t> ids = DocIds<DocumentMessage>(documents);
  for (int64_t id : DocIds<RejectMessage>(rejects)) ids.push_back(id);
  std::ranges::sort(ids);
  EXPECT_GE(ids.size(), 1u);
  EXPECT_LT(ids.size(), 400u);
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], static_cast<int64_t>(i));
  // The chunk the damage cut short is not ended: it is never listed.
  if (!documents.chunk_ends.empty()) {
    EXPECT_LT(documents.chunk_ends.back().first, ids.back());
  }
  EXPECT_NE(rejects.end.corpus_error.find("cut.jsonl.gz"), std::string::npos)
      << rejects.end.corpus_error;
  EXPECT_TRUE(loader_->Join());  // the writer fails the run, after writing those lines
}

TEST_F(LoaderActorTest, AMissingInputFailsTheStartNamingTheFile) {
  LoaderConfig config;
  config.corpus.inputs = {dir_.path() + "/absent.jsonl"};
  auto started = Start(std::move(config));
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().find("absent.jsonl"), std::string::npos) << started.error();
}

// The writer hears how far the JSONL has been read after its first line (a total
// from the first seconds), each time the bytes read doubled, then every
// progress_every_bytes, and exactly where the corpus ended, before the stream's end.
TEST_F(LoaderActorTest, TellsTheWriterHowFarTheCorpusWasRead) {
  std::string lines;
  for (int doc = 0; doc < 20; ++doc) {
    lines += "{\"text\": \"document " + std::string(doc < 10 ? "00" : "0") + std::to_string(doc) +
             "\"}\n";
  }
  ASSERT_EQ(lines.size(), 500u);  // 25 bytes a line
  LoaderConfig config;
  config.corpus.inputs = {dir_.Write("a.jsonl", lines)};
  config.progress_every_bytes = 150;
  ASSERT_TRUE(Start(std::move(config)));
  Drain(pipelines_[0]);
  Drain(pipelines_[1]);
  const Stream writer = Drain(rejects_);
  std::vector<int64_t> bytes, docs;
  for (const CorpusProgressMessage& progress : writer.progress) {
    bytes.push_back(progress.jsonl_bytes);
    docs.push_back(progress.next_doc_id);
    EXPECT_EQ(progress.jsonl_docs, progress.next_doc_id);
    EXPECT_EQ(progress.finished, &progress == &writer.progress.back());
  }
  // Doubling up to 200, then 150 bytes apart; the last line's, then the end's.
  EXPECT_EQ(bytes, (std::vector<int64_t>{25, 50, 100, 200, 350, 500, 500}));
  EXPECT_EQ(docs, (std::vector<int64_t>{1, 2, 4, 8, 14, 20, 20}));
}

}  // namespace
}  // namespace actex
