// The tokenizer actor against its messages alone: Documents in, the same TokenBatches to
// every shard of the replica and Rejects to the writer out, over real inproc sockets.

#include "actors/tokenizer_actor.h"

#include <gtest/gtest.h>

#include "actors/sequence_packer.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "transport/wire.h"

namespace actex {
namespace {

constexpr auto kTokenizerPatience = std::chrono::seconds(10);

DocumentMessage Pretokenized(int64_t doc_id, std::vector<int32_t> ids) {
  DocumentMessage document;
  document.doc_id = doc_id;
  document.pretokenized = true;
  document.input_ids = std::move(ids);
  document.file = "corpus.jsonl";
  document.line = doc_id + 1;
  return document;
}

// The actor's neighbours: the loader's PUSH, a PULL per device shard, the writer's
// rejects PULL. The sinks bind first, as the shards and the writer do in a node.
class TokenizerActorTest : public ::testing::Test {
 protected:
  void Start(TokenizerActorConfig config, int shards = 2) {
    for (int i = 0; i < shards; ++i) {
      const std::string endpoint = "inproc://test-batches/" + std::to_string(i);
      shards_.emplace_back(context_, zmq::socket_type::pull);
      shards_.back().bind(endpoint);
      config.shard_endpoints.push_back(endpoint);
    }
    rejects_.bind("inproc://test-rejects");
    config.rejects_endpoint = "inproc://test-rejects";
    config.documents_endpoint = "inproc://test-documents";
    if (config.vocab_size == 0) config.vocab_size = 100;
    auto actor = StartTokenizerActor(context_, std::move(config));
    ASSERT_TRUE(actor) << actor.error();
    actor_ = std::move(*actor);
    documents_.connect("inproc://test-documents");
  }

  void SendDocument(const DocumentMessage& document) { ASSERT_TRUE(Send(documents_, document)); }
  void SendEnd(int64_t rejected_upstream = 0) {
    ASSERT_TRUE(Send(documents_, EndOfStreamMessage{0, rejected_upstream, 0, ""}));
  }

  void SendChunkEnd(int64_t chunk, int64_t documents) {
    ASSERT_TRUE(Send(documents_, ChunkEndMessage{chunk, documents}));
  }

  // Everything one shard receives up to and including its EndOfStream; each ChunkEnd
  // is noted in `chunk_ends` as the number of batches that came before it.
  std::pair<std::vector<TokenBatchMessage>, EndOfStreamMessage> DrainShard(
      int shard, std::vector<size_t>* chunk_ends = nullptr) {
    std::vector<TokenBatchMessage> batches;
    while (true) {
      auto message = Receive(shards_[shard], kTokenizerPatience);
      EXPECT_TRUE(message && *message) << "shard " << shard << " heard nothing";
      if (!message || !*message) return {batches, {}};
      if ((*message)->type == MessageType::kEndOfStream) {
        return {batches, *(*message)->As<EndOfStreamMessage>()};
      }
      if ((*message)->type == MessageType::kChunkEnd) {
        if (chunk_ends != nullptr) chunk_ends->push_back(batches.size());
        continue;
      }
      auto batch = (*message)->As<TokenBatchMessage>();
      EXPECT_TRUE(batch) << batch.error();
      if (batch) batches.push_back(*batch);
    }
  }

  zmq::context_t context_;
  std::vector<zmq::socket_t> shards_;
  zmq::socket_t rejects_{context_, zmq::socket_type::pull};
  zmq::socket_t documents_{context_, zmq::socket_type::push};
  std::unique_ptr<Actor> actor_;
};

std::vector<int32_t> Lengths(const TokenBatchMessage& batch) {
  std::vector<int32_t> lengths;
  for (const SequenceInfo& sequence : batch.sequences) lengths.push_back(sequence.length);
  return lengths;
}

TEST_F(TokenizerActorTest, EveryShardReceivesTheSameBatchesPackedInDocumentOrder) {
  TokenizerActorConfig config;
  config.packing = {.max_seq_len = 8, .batch_tokens = 8};
  Start(std::move(config));
  SendDocument(Pretokenized(0, {1, 2, 3}));
  SendDocument(Pretokenized(1, {4, 5, 6, 7}));
  SendDocument(Pretokenized(2, {8, 9, 10, 11, 12}));  // does not fit beside the first two
  SendEnd();
  auto [first, first_end] = DrainShard(0);
  auto [second, second_end] = DrainShard(1);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(Lengths(first[0]), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(first[0].token_ids, (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(Lengths(first[1]), (std::vector<int32_t>{5}));
  EXPECT_EQ(first[1].sequences[0].doc_id, 2);
  ASSERT_EQ(second.size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(second[i].batch_id, first[i].batch_id);
    EXPECT_EQ(second[i].token_ids, first[i].token_ids);
  }
  EXPECT_EQ(first_end.documents, 3);
  EXPECT_EQ(first_end.batches, 2);
  EXPECT_EQ(second_end.batches, 2);
  EXPECT_TRUE(actor_->Join());
}

// A chunk's end sends its last batch, however full, and then goes on to every shard.
TEST_F(TokenizerActorTest, AChunkEndFlushesItsLastBatchAndGoesToEveryShard) {
  TokenizerActorConfig config;
  config.packing = {.max_seq_len = 8, .batch_tokens = 8};
  Start(std::move(config));
  SendDocument(Pretokenized(0, {1, 2}));
  SendChunkEnd(0, 2);                     // document 1 was rejected upstream
  SendDocument(Pretokenized(2, {3, 4}));  // would have fit beside document 0
  SendChunkEnd(1, 2);
  SendEnd();
  for (int shard = 0; shard < 2; ++shard) {
    std::vector<size_t> chunk_ends;
    auto [batches, end] = DrainShard(shard, &chunk_ends);
    ASSERT_EQ(batches.size(), 2u);
    EXPECT_EQ(batches[0].token_ids, (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(batches[1].token_ids, (std::vector<int32_t>{3, 4}));
    EXPECT_EQ(chunk_ends, (std::vector<size_t>{1, 2}));
  }
  EXPECT_TRUE(actor_->Join());
}

// SIGTERM: the node asks the tokenizer to drain. It finishes the chunk in progress,
// ends every stream marked drained, and reads past the rest until the loader's end.
TEST_F(TokenizerActorTest, ADrainEndsEveryStreamAfterTheChunkInProgress) {
  TokenizerActorConfig config;
  config.packing = {.max_seq_len = 8, .batch_tokens = 8};
  Start(std::move(config));
  SendDocument(Pretokenized(0, {1, 2, 3}));
  SendDocument(Pretokenized(1, {4, 5, 6, 7}));
  SendDocument(Pretokenized(2, {8, 9, 10, 11, 12}));  // sends the first batch, waits packed
  auto first = Receive(shards_[0], kTokenizerPatience);
  ASSERT_TRUE(first && *first);
  actor_->RequestDrain();
  SendChunkEnd(0, 3);
  SendDocument(Pretokenized(3, {13}));  // the next chunk: left for a later run
  SendChunkEnd(1, 1);
  SendEnd();
  std::vector<size_t> chunk_ends;
  auto [rest, end] = DrainShard(0, &chunk_ends);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].token_ids, (std::vector<int32_t>{8, 9, 10, 11, 12}));
  EXPECT_EQ(chunk_ends, (std::vector<size_t>{1}));
  EXPECT_TRUE(end.drained);
  EXPECT_EQ(end.batches, 2);
  auto [second, second_end] = DrainShard(1);
  EXPECT_EQ(second.size(), 2u);
  EXPECT_TRUE(second_end.drained);
  auto rejects_end = Receive(rejects_, kTokenizerPatience);
  ASSERT_TRUE(rejects_end && *rejects_end);
  ASSERT_EQ((*rejects_end)->type, MessageType::kEndOfStream);
  EXPECT_TRUE((*rejects_end)->As<EndOfStreamMessage>()->drained);
  EXPECT_TRUE(actor_->Join());
}

TEST_F(TokenizerActorTest, ADrainBetweenChunksEndsTheStreamsAtOnce) {
  TokenizerActorConfig config;
  config.packing = {.max_seq_len = 8, .batch_tokens = 8};
  Start(std::move(config), 1);
  SendDocument(Pretokenized(0, {1, 2}));
  SendChunkEnd(0, 1);
  auto batch = Receive(shards_[0], kTokenizerPatience);
  ASSERT_TRUE(batch && *batch);
  auto chunk_end = Receive(shards_[0], kTokenizerPatience);
  ASSERT_TRUE(chunk_end && *chunk_end);
  EXPECT_EQ((*chunk_end)->type, MessageType::kChunkEnd);
  actor_->RequestDrain();
  auto [rest, end] = DrainShard(0);  // before the loader sends anything more
  EXPECT_TRUE(rest.empty());
  EXPECT_TRUE(end.drained);
  SendDocument(Pretokenized(1, {3}));
  SendEnd();
  EXPECT_TRUE(actor_->Join());
}

TEST_F(TokenizerActorTest, IdsOutsideTheVocabularyAreRejectedNamingTheIdAndCounted) {
  TokenizerActorConfig config;
  config.vocab_size = 50;
  config.packing = {.max_seq_len = 8, .batch_tokens = 8};
  Start(std::move(config), 1);
  SendDocument(Pretokenized(0, {1, 2}));
  SendDocument(Pretokenized(1, {3, 50}));
  SendDocument(Pretokenized(2, {}));
  SendEnd(/*rejected_upstream=*/4);
  auto [batches, end] = DrainShard(0);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].token_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(end.documents, 1);
  EXPECT_EQ(end.rejected, 4 + 2);  // the loader's and its own

  auto reject = Receive(rejects_, kTokenizerPatience);
  ASSERT_TRUE(reject && *reject);
  auto out_of_vocabulary = (*reject)->As<RejectMessage>();
  ASSERT_TRUE(out_of_vocabulary);
  EXPECT_EQ(out_of_vocabulary->doc_id, 1);
  EXPECT_EQ(out_of_vocabulary->line, 2);
  EXPECT_NE(out_of_vocabulary->reason.find("token id 50"), std::string::npos)
      << out_of_vocabulary->reason;
  reject = Receive(rejects_, kTokenizerPatience);
  ASSERT_TRUE(reject && *reject);
  EXPECT_EQ((*reject)->As<RejectMessage>()->reason, "no tokens");
  reject = Receive(rejects_, kTokenizerPatience);
  ASSERT_TRUE(reject && *reject);
  auto rejects_end = (*reject)->As<EndOfStreamMessage>();
  ASSERT_TRUE(rejects_end);
  EXPECT_EQ(rejects_end->rejected, 2);
  EXPECT_TRUE(actor_->Join());
}

TEST_F(TokenizerActorTest, TextIsTokenizedAsTheTokenizerDoesAfterTheBos) {
  const std::string dir = std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/bpe-qwen2-style";
  auto tokenizer = LoadTokenizer(dir);
  ASSERT_TRUE(tokenizer) << tokenizer.error();
  auto expected = (*tokenizer)->Encode("Hello, world! 123");
  ASSERT_TRUE(expected) << expected.error();

  TokenizerActorConfig config;
  config.tokenizers.push_back(std::move(*tokenizer));
  config.vocab_size = 3259;
  config.bos_token_id = 3256;
  config.packing = {.max_seq_len = 64, .batch_tokens = 64};
  Start(std::move(config), 1);
  DocumentMessage text;
  text.doc_id = 0;
  text.text = "Hello, world! 123";
  SendDocument(text);
  SendDocument(Pretokenized(1, {7, 8}));  // bos_on_pretokenized is off: taken as given
  SendEnd();
  auto [batches, end] = DrainShard(0);
  ASSERT_EQ(batches.size(), 1u);
  std::vector<int32_t> want = {3256};
  want.insert(want.end(), expected->begin(), expected->end());
  want.insert(want.end(), {7, 8});
  EXPECT_EQ(batches[0].token_ids, want);
  EXPECT_TRUE(actor_->Join());
}

// Text of a few to a few hundred words, so that documents take the threads unequal times.
std::string TextOfDocument(int64_t doc_id) {
  static const char* kWords[] = {"the", "energy",   "of",  "students",    "photosynthesis",
                                 "was", "research", "and", "temperature", "42",
                                 "in",  "community"};
  std::string text = "Document " + std::to_string(doc_id) + ":";
  for (int64_t w = 0; w < 3 + (doc_id * 37) % 300; ++w) text += std::string(" ") + kWords[w % 12];
  return text;
}

// Several tokenizing threads: every shard gets exactly the batches, chunk ends and
// rejects one thread in document order gives (each document once, in order).
TEST_F(TokenizerActorTest, SeveralTokenizerThreadsSendWhatOneThreadInOrderSends) {
  const std::string dir = std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/bpe-qwen2-style";
  auto reference = LoadTokenizer(dir);
  ASSERT_TRUE(reference) << reference.error();
  TokenizerActorConfig config;
  for (int thread = 0; thread < 4; ++thread) {
    auto loaded = LoadTokenizer(dir);
    ASSERT_TRUE(loaded) << loaded.error();
    config.tokenizers.push_back(std::move(*loaded));
  }
  config.vocab_size = 3259;
  config.bos_token_id = 3256;
  const PackerOptions packing = {.max_seq_len = 96, .batch_tokens = 256};
  config.packing = packing;
  Start(std::move(config), 2);

  constexpr int64_t kDocuments = 300, kChunkDocs = 25;
  SequencePacker packer(packing);
  std::vector<TokenBatchMessage> want;
  std::vector<size_t> want_chunk_ends;
  std::vector<int64_t> want_rejected;
  for (int64_t doc_id = 0; doc_id < kDocuments; ++doc_id) {
    if (doc_id % 7 == 3) {  // an id beyond the vocabulary: rejected in its place
      SendDocument(Pretokenized(doc_id, {5, 3259}));
      want_rejected.push_back(doc_id);
    } else {
      DocumentMessage text;
      text.doc_id = doc_id;
      text.text = TextOfDocument(doc_id);
      SendDocument(text);
      auto ids = (*reference)->Encode(text.text);
      ASSERT_TRUE(ids) << ids.error();
      std::vector<int32_t> tokens = {3256};
      tokens.insert(tokens.end(), ids->begin(), ids->end());
      for (TokenBatchMessage& batch : packer.Add(doc_id, tokens)) want.push_back(std::move(batch));
    }
    if ((doc_id + 1) % kChunkDocs == 0) {
      SendChunkEnd(doc_id / kChunkDocs, kChunkDocs);
      if (auto batch = packer.Flush()) want.push_back(std::move(*batch));
      want_chunk_ends.push_back(want.size());
    }
  }
  SendEnd();
  for (int shard = 0; shard < 2; ++shard) {
    std::vector<size_t> chunk_ends;
    auto [batches, end] = DrainShard(shard, &chunk_ends);
    ASSERT_EQ(batches.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(batches[i].batch_id, want[i].batch_id);
      EXPECT_EQ(batches[i].token_ids, want[i].token_ids) << "batch " << i;
      EXPECT_EQ(Lengths(batches[i]), Lengths(want[i])) << "batch " << i;
      for (size_t q = 0; q < want[i].sequences.size(); ++q) {
        EXPECT_EQ(batches[i].sequences[q].doc_id, want[i].sequences[q].doc_id);
      }
    }
    EXPECT_EQ(chunk_ends, want_chunk_ends);
    EXPECT_EQ(end.documents, kDocuments - static_cast<int64_t>(want_rejected.size()));
  }
  std::vector<int64_t> rejected;
  while (true) {
    auto message = Receive(rejects_, kTokenizerPatience);
    ASSERT_TRUE(message && *message);
    if ((*message)->type == MessageType::kEndOfStream) break;
    rejected.push_back((*message)->As<RejectMessage>()->doc_id);
  }
  EXPECT_EQ(rejected, want_rejected);
  EXPECT_TRUE(actor_->Join());
}

// A message the loader never sends, first or behind documents, ends the actor with an
// error naming it (rather than being taken for a document or read again forever).
class UnexpectedMessageTest : public TokenizerActorTest,
                              public ::testing::WithParamInterface<bool> {};

TEST_P(UnexpectedMessageTest, FailsTheActorNamingItsType) {
  TokenizerActorConfig config;
  config.packing = {.max_seq_len = 8, .batch_tokens = 8};
  Start(std::move(config), 1);
  if (GetParam()) SendDocument(Pretokenized(0, {1, 2}));
  ASSERT_TRUE(Send(documents_, RejectMessage{1, "corpus.jsonl", 2, "odd"}));
  auto joined = actor_->Join();
  ASSERT_FALSE(joined);
  EXPECT_NE(joined.error().find("from the loader: expected message type"), std::string::npos)
      << joined.error();
}

INSTANTIATE_TEST_SUITE_P(FirstOrBehindDocuments, UnexpectedMessageTest, ::testing::Bool());

TEST_F(TokenizerActorTest, TextWithoutATokenizerFailsNamingTheModelFolder) {
  TokenizerActorConfig config;
  config.model_dir = "/models/no-tokenizer";
  Start(std::move(config), 1);
  DocumentMessage text;
  text.doc_id = 0;
  text.text = "words";
  text.file = "corpus.jsonl";
  text.line = 1;
  SendDocument(text);
  auto joined = actor_->Join();
  ASSERT_FALSE(joined);
  EXPECT_NE(joined.error().find("/models/no-tokenizer has no tokenizer.json"), std::string::npos)
      << joined.error();
}

}  // namespace
}  // namespace actex
