// Writes the committed seed corpora under tests/fuzz/corpus/<target>/ from real
// encoders and the fixtures, so the fuzzers start from well-formed inputs and the
// edge cases the issue names (wrong types, wrong version, truncation, oversized
// headers), and the wire fuzzer's dictionary. Run after a format changes:
//   build/fuzz/make_seed_corpus tests/fuzz/corpus
// It replaces each target's generated files (named gen_*) and leaves others, such
// as inputs saved from findings (named after the bug), alone.

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/safetensors.h"
#include "tests/fuzz/fuzz_scratch_dir.h"
#include "tests/fuzz/wire_dictionary.h"
#include "tests/transport/raw_frames.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using test_support::PackedBody;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One target's folder: removes its old generated seeds, then writes new ones.
class SeedFolder {
 public:
  SeedFolder(const fs::path& root, const std::string& target) : dir_(root / target) {
    fs::create_directories(dir_);
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().filename().string().starts_with("gen_")) fs::remove(entry.path());
    }
  }
  void Write(const std::string& name, std::string_view bytes) {
    std::ofstream out(dir_ / ("gen_" + name), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", (dir_ / name).c_str());
      std::exit(1);
    }
    ++count_;
  }
  ~SeedFolder() { std::printf("%s: %d seeds\n", dir_.c_str(), count_); }

 private:
  fs::path dir_;
  int count_ = 0;
};

// ---- wire_receive ----

// Encodes with the real Send and captures the frames as a receiver sees them.
class WireCapture {
 public:
  WireCapture() {
    in_.bind("inproc://seed-capture");
    out_.connect("inproc://seed-capture");
  }
  template <typename T>
  std::string Encode(const T& message, std::vector<zmq::message_t> payloads = {}) {
    if (auto sent = Send(out_, message, std::move(payloads)); !sent) {
      std::fprintf(stderr, "%s\n", sent.error().c_str());
      std::exit(1);
    }
    std::vector<std::string> frames;
    bool more = true;
    while (more) {
      zmq::message_t frame;
      (void)in_.recv(frame);
      more = frame.more();
      frames.emplace_back(static_cast<const char*>(frame.data()), frame.size());
    }
    return Join(frames);
  }
  static std::string Join(const std::vector<std::string>& frames) {
    std::string joined;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (frames[i].find(kFuzzFrameDelimiter) != std::string::npos) {
        std::fprintf(stderr, "a seed frame holds the frame delimiter; change its values\n");
        std::exit(1);
      }
      if (i > 0) joined += kFuzzFrameDelimiter;
      joined += frames[i];
    }
    return joined;
  }

 private:
  zmq::context_t context_;
  zmq::socket_t out_{context_, zmq::socket_type::pair};
  zmq::socket_t in_{context_, zmq::socket_type::pair};
};

// The wire fuzzer's dictionary, beside the corpora: ../dict/wire_receive.dict.
void WriteWireDictionary(const fs::path& root) {
  const fs::path path = root.parent_path() / "dict" / "wire_receive.dict";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << WireDictionary();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::printf("%s written\n", path.c_str());
}

void WriteWireSeeds(const fs::path& root) {
  SeedFolder seeds(root, "wire_receive");
  WireCapture wire;
  const std::vector<SequenceInfo> sequences = {{7, 0, 3, false}, {8, 0, 2, true}};
  seeds.Write("document",
              wire.Encode(DocumentMessage{7, false, "Hello world", {}, "corpus.jsonl", 8}));
  seeds.Write("document_pretokenized",
              wire.Encode(DocumentMessage{9, true, "", {39, 303, 374}, "corpus.jsonl.gz", 10}));
  seeds.Write("token_batch", wire.Encode(TokenBatchMessage{3, sequences, {1, 2, 3, 4, 5}}));
  std::vector<zmq::message_t> sites;
  sites.push_back(PayloadFrame(std::vector<float>(10, 1.5f)));
  sites.push_back(PayloadFrame(std::vector<float>(5, -2.0f)));
  seeds.Write(
      "activation_batch",
      wire.Encode(
          ActivationBatchMessage{
              3, sequences, {1, 2, 3, 4, 5}, {"blocks.0.hook_resid_post", "hook_embed"}, {2, 1}},
          std::move(sites)));
  seeds.Write("end_of_stream", wire.Encode(EndOfStreamMessage{100, 3, 12}));
  seeds.Write("reject", wire.Encode(RejectMessage{4, "corpus.jsonl", 5, "blank line"}));
  seeds.Write("monitor_event", wire.Encode(MonitorEventMessage{.kind = "progress",
                                                               .host_id = 1,
                                                               .unix_seconds = 1.7e9,
                                                               .docs_done = 10,
                                                               .tokens_done = 512,
                                                               .tokens_per_second = 250.5,
                                                               .shards_written = 1,
                                                               .message = "shard_000001"}));
  std::vector<zmq::message_t> chunk;
  chunk.push_back(PayloadFrame(std::vector<float>{0.25f, 0.5f, 0.75f}));
  seeds.Write("collective_chunk",
              wire.Encode(CollectiveChunkMessage{"replica-0", 1, 2, 1, 0}, std::move(chunk)));
  seeds.Write("hello", wire.Encode(HelloMessage{1,
                                                2,
                                                "actex 0.1.0",
                                                {{"--layers", "20,21"}, {"model files", "ab12"}},
                                                {{"ring/0/1", "tcp://10.0.0.2:4000"}}}));
  seeds.Write("welcome", wire.Encode(WelcomeMessage{{{"ring/0/1", "tcp://10.0.0.2:4000"}}}));
  seeds.Write("abort", wire.Encode(AbortMessage{"host 1 lost: no message for 60 s"}));
  seeds.Write("barrier", wire.Encode(BarrierMessage{"ready"}));
  seeds.Write("barrier_release", wire.Encode(BarrierReleaseMessage{"done"}));
  seeds.Write("heartbeat", wire.Encode(HeartbeatMessage{-1, 42}));
  seeds.Write("failure", wire.Encode(FailureMessage{2, "disk full"}));
  seeds.Write("ring_bound", wire.Encode(RingBoundMessage{"replica-0", 1, "tcp://10.0.0.2:4001"}));
  seeds.Write("ring_table",
              wire.Encode(RingTableMessage{"replica-0", {"inproc://ring/0/0", "tcp://h:1"}}));
  seeds.Write("upload_request",
              wire.Encode(UploadRequestMessage{"shard_000001.safetensors", 4096, "1a2b3c4d"}));
  seeds.Write("corpus_progress", wire.Encode(CorpusProgressMessage{120, 80, 65536, false}));
  seeds.Write("chunk_end", wire.Encode(ChunkEndMessage{3, 64, "9f86d081"}));
  seeds.Write("list_now", wire.Encode(ListNowMessage{5}));
  seeds.Write("lease_request", wire.Encode(LeaseRequestMessage{7, 40}));
  seeds.Write("lease_grant", wire.Encode(LeaseGrantMessage{7, 12, false, 1}));
  seeds.Write("chunks_listed", wire.Encode(ChunksListedMessage{{3, 4, 12}}));
  seeds.Write("listing_intent", wire.Encode(ListingIntentMessage{8, {3, 4}}));
  seeds.Write("listing_ack", wire.Encode(ListingAckMessage{8, false, "chunk 4 is host 2's"}));
  seeds.Write("standby_update",
              wire.Encode(StandbyUpdateMessage{.first = 1,
                                               .records = {"granted 12 host-1", "listed 3 host-0"},
                                               .hosts = {0, 1, 2},
                                               .released_barriers = {"ready"},
                                               .joined = {{HelloMessage{0, 3}, "10.0.0.1:5000"}},
                                               .max_hosts = 3}));
  seeds.Write("standby_confirm", wire.Encode(StandbyConfirmMessage{2, true}));
  seeds.Write("reattach", wire.Encode(ReattachMessage{2, {12, 13}, {3}}));
  seeds.Write("hand_over", wire.Encode(HandOverMessage{"host 0 received SIGTERM"}));

  // Malformed: each is one of PROTOCOL.md section 7's refusals.
  constexpr auto kDocument = static_cast<uint64_t>(MessageType::kDocument);
  constexpr auto kTokenBatch = static_cast<uint64_t>(MessageType::kTokenBatch);
  constexpr auto kEndOfStream = static_cast<uint64_t>(MessageType::kEndOfStream);
  constexpr auto kCollectiveChunk = static_cast<uint64_t>(MessageType::kCollectiveChunk);
  const std::string end_body = PackedBody(EndOfStreamMessage{1, 2, 3});
  seeds.Write("envelope_only", PackEnvelope(kSchemaVersion, kEndOfStream));
  seeds.Write("schema_version_next",
              WireCapture::Join({PackEnvelope(kSchemaVersion + 1, kEndOfStream), end_body}));
  seeds.Write("unknown_type", WireCapture::Join({PackEnvelope(kSchemaVersion, 99), end_body}));
  seeds.Write("envelope_not_map",
              WireCapture::Join(
                  {PackedBody(std::vector<uint64_t>{kSchemaVersion, kEndOfStream}), end_body}));
  seeds.Write("body_of_other_type",
              WireCapture::Join({PackEnvelope(kSchemaVersion, kDocument), end_body}));
  seeds.Write("body_truncated", WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream),
                                                   end_body.substr(0, end_body.size() - 2)}));
  seeds.Write("body_trailing_bytes",
              WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream), end_body + "\x01"}));
  // A field of the wrong msgpack type: "documents" as a string.
  msgpack::sbuffer wrong;
  msgpack::packer<msgpack::sbuffer> packer(wrong);
  packer.pack_map(3);
  packer.pack(std::string_view("documents"));
  packer.pack(std::string_view("many"));
  packer.pack(std::string_view("rejected"));
  packer.pack(0);
  packer.pack(std::string_view("batches"));
  packer.pack(-1);
  seeds.Write("field_of_wrong_type", WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream),
                                                        std::string(wrong.data(), wrong.size())}));
  // A header claiming 2^32-1 array elements in five bytes.
  seeds.Write("huge_array_header", WireCapture::Join({PackEnvelope(kSchemaVersion, kTokenBatch),
                                                      std::string("\xdd\xff\xff\xff\xff", 5)}));
  seeds.Write("deep_nesting", WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream),
                                                 std::string(40, '\x91') + std::string("\x01")}));
  seeds.Write("odd_float_payload",
              WireCapture::Join({PackEnvelope(kSchemaVersion, kCollectiveChunk),
                                 PackedBody(CollectiveChunkMessage{"r", 1, 0, 0, 0}),
                                 std::string("\x01\x02\x03", 3)}));
}

// ---- safetensors_open ----

std::string SafetensorsBytes(const std::vector<TensorToWrite>& tensors,
                             const std::map<std::string, std::string>& metadata,
                             const FuzzScratchDir& scratch) {
  const std::string path = scratch.File("seed.safetensors");
  if (auto written = WriteSafetensors(path, tensors, metadata); !written) {
    std::fprintf(stderr, "%s\n", written.error().c_str());
    std::exit(1);
  }
  return ReadFile(path);
}

TensorToWrite Filled(std::string name, std::string dtype, std::vector<int64_t> shape) {
  return TensorToWrite{std::move(name), std::move(dtype), std::move(shape),
                       [](std::span<uint8_t> bytes) {
                         for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 37 + 11);
                       }};
}

void WriteSafetensorsSeeds(const fs::path& root, const std::string& fixtures) {
  SeedFolder seeds(root, "safetensors_open");
  FuzzScratchDir scratch;
  seeds.Write("model", SafetensorsBytes({Filled("model.embed_tokens.weight", "F32", {4, 2}),
                                         Filled("model.norm.weight", "BF16", {2}),
                                         Filled("model.layers.0.mlp.up_proj.weight", "F16", {2, 2}),
                                         Filled("empty", "I64", {0, 3})},
                                        {{"format", "pt"}}, scratch));
  seeds.Write("shard",
              SafetensorsBytes({Filled("blocks.0.hook_resid_post", "BF16", {3, 2}),
                                Filled("token_ids", "I32", {3}), Filled("doc_ids", "I64", {3}),
                                Filled("positions", "I32", {3})},
                               {{"format", "pt"}, {"sites", "blocks.0.hook_resid_post"}}, scratch));
  seeds.Write("every_dtype",
              SafetensorsBytes({Filled("a", "F64", {1}), Filled("b", "U8", {3}),
                                Filled("c", "BOOL", {2}), Filled("d", "F8_E4M3", {1}),
                                Filled("e", "U16", {1}), Filled("f", "I8", {1, 1, 1})},
                               {}, scratch));
  seeds.Write("no_tensors", SafetensorsBytes({}, {}, scratch));
  // The fixture model's real header without its data: refused as truncated, but
  // the names, shapes and offsets are the real ones.
  for (const char* model : {"model.safetensors", "model-bf16/model.safetensors"}) {
    const std::string bytes = ReadFile(fixtures + "/qwen2-tiny/" + model);
    uint64_t header_bytes = 0;
    std::memcpy(&header_bytes, bytes.data(), 8);
    seeds.Write(std::string("fixture_header_") + (model[5] == '-' ? "bf16" : "f32"),
                bytes.substr(0, 8 + header_bytes));
  }
}

// ---- corpus_reader ----

std::string Gzip(std::string_view bytes) {
  z_stream stream{};
  deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

void WriteCorpusSeeds(const fs::path& root, const std::string& fixtures) {
  SeedFolder seeds(root, "corpus_reader");
  // One line per documented outcome (storage/README.md "Corpus").
  const std::string mixed =
      "{\"text\": \"Hello world\"}\n"
      "{\"input_ids\": [39, 303, 374]}\n"
      "\n"
      "  \t\r\n"
      "{\"text\": \"caf\\u00e9 \xe6\x9d\xb1\xe4\xba\xac\", \"meta\": {\"k\": [1, 2.5, null]}}\r\n"
      "{\"text\": \"x\"\n"
      "[1, 2, 3]\n"
      "{\"title\": \"no text\"}\n"
      "{\"text\": 5}\n"
      "{\"text\": \"\"}\n"
      "{\"input_ids\": [1, -2]}\n"
      "{\"input_ids\": []}\n"
      "{\"input_ids\": [1.5]}\n"
      "{\"text\": \"ab\xc0\x80\"}\n"
      "{\"text\": \"" +
      std::string(300, 'q') +
      "\"}\n"
      "{\"text\": \"last line without a newline\"}";
  seeds.Write("mixed.jsonl", mixed);
  seeds.Write("mixed.jsonl.gz", Gzip(mixed));
  const std::string gzipped = Gzip(mixed);
  seeds.Write("truncated.jsonl.gz", gzipped.substr(0, gzipped.size() / 2));
  seeds.Write("two_members.jsonl.gz", Gzip(mixed.substr(0, 100)) + Gzip(mixed.substr(100)));
  seeds.Write("gzip_then_garbage.jsonl.gz", gzipped + "{\"text\": \"after\"}\n");
  seeds.Write("empty", "");
  seeds.Write("only_newlines", "\n\n\n");
  // Real text, as the tokenizer fixture's cases hold it (one JSON object per line).
  const std::string cases =
      ReadFile(fixtures + "/tokenizers/bpe-qwen2-style/cases.jsonl").substr(0, 4000);
  seeds.Write("tokenizer_cases.jsonl", cases.substr(0, cases.rfind('\n') + 1));
}

// ---- tokenizer_encode ----

void WriteTokenizerEncodeSeeds(const fs::path& root, const std::string& fixtures) {
  SeedFolder seeds(root, "tokenizer_encode");
  std::ifstream cases(fixtures + "/tokenizers/bpe-qwen2-style/cases.jsonl");
  std::string line;
  int index = 0;
  while (std::getline(cases, line)) {
    const std::string text = nlohmann::json::parse(line).at("text").get<std::string>();
    if (text.size() > 4096) continue;  // the run's -max_len
    char name[32];
    std::snprintf(name, sizeof(name), "case_%02d", index++);
    seeds.Write(name, text);
  }
  seeds.Write("not_utf8", "ab\xc0\x80 \xed\xa0\x80 \xff");
}

// ---- tokenizer_json ----

// A small but complete Qwen2-layout tokenizer.json: the 256 byte symbols, a few
// merges, added tokens of both kinds. `variant` switches the optional features.
std::string SmallTokenizerJson(int variant) {
  using Json = nlohmann::json;
  Json vocab = Json::object();
  // GPT-2 byte alphabet: printable Latin-1 bytes map to themselves, others to 256+.
  int extra = 256;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable =
        (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE);
    const int code_point = printable ? byte : extra++;
    std::string symbol;
    if (code_point < 0x80) {
      symbol.push_back(static_cast<char>(code_point));
    } else {
      symbol.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
      symbol.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    }
    if (variant == 2 && byte >= 0x80) continue;  // leaves bytes to fallback / unk
    vocab[symbol] = byte;
  }
  int next_id = 256;
  Json merges = Json::array();
  for (const auto& [left, right] : std::vector<std::pair<std::string, std::string>>{
           {"\xc4\xa0", "t"}, {"h", "e"}, {"\xc4\xa0t", "he"}, {"l", "l"}, {"ll", "o"}}) {
    vocab[left + right] = next_id++;
    if (variant == 1) {
      merges.push_back(Json::array({left, right}));
    } else {
      merges.push_back(left + " " + right);
    }
  }
  Json model = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", ""},
                {"end_of_word_suffix", ""},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"vocab", vocab},
                {"merges", merges}};
  if (variant == 2) {
    model["vocab"]["<unk>"] = next_id++;
    model["unk_token"] = "<unk>";
    model["fuse_unk"] = true;
    model["byte_fallback"] = true;
    model["vocab"]["<0xC3>"] = next_id++;
    model["vocab"]["<0x82>"] = next_id++;
  }
  if (variant == 3) model["ignore_merges"] = true;
  Json normalizer =
      variant == 1 ? Json{{"type", "Sequence"}, {"normalizers", Json::array({{{"type", "NFKC"}}})}}
                   : Json{{"type", "NFC"}};
  Json split = {{"type", "Split"},
                {"pattern", {{"Regex", "\\s+|\\p{L}+|\\p{N}|[^\\s\\p{L}\\p{N}]+"}}},
                {"behavior", "Isolated"},
                {"invert", false}};
  Json byte_level = {{"type", "ByteLevel"},
                     {"add_prefix_space", false},
                     {"trim_offsets", false},
                     {"use_regex", variant == 3}};
  Json tokenizer = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens",
       Json::array({{{"id", next_id}, {"content", "<|endoftext|>"}, {"normalized", false}},
                    {{"id", next_id + 1}, {"content", "<|im_start|>"}, {"normalized", true}}})},
      {"normalizer", normalizer},
      {"pre_tokenizer",
       {{"type", "Sequence"}, {"pretokenizers", Json::array({split, byte_level})}}},
      {"model", model}};
  return tokenizer.dump(1);
}

void WriteTokenizerJsonSeeds(const fs::path& root, const std::string& fixtures) {
  SeedFolder seeds(root, "tokenizer_json");
  seeds.Write("fixture_qwen2_style",
              ReadFile(fixtures + "/tokenizers/bpe-qwen2-style/tokenizer.json"));
  for (int variant = 0; variant < 4; ++variant) {
    seeds.Write("small_" + std::to_string(variant), SmallTokenizerJson(variant));
  }
}

}  // namespace
}  // namespace actex

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s tests/fuzz/corpus\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root(argv[1]);
  const std::string fixtures = ACTEX_FIXTURES_DIR;
  actex::WriteWireSeeds(root);
  actex::WriteWireDictionary(root);
  actex::WriteSafetensorsSeeds(root, fixtures);
  actex::WriteCorpusSeeds(root, fixtures);
  actex::WriteTokenizerEncodeSeeds(root, fixtures);
  actex::WriteTokenizerJsonSeeds(root, fixtures);
  return 0;
}
