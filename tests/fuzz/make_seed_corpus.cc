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
#include "tests/fuzz/seed_folder.h"
#include "tests/fuzz/wire_seeds.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// ---- safetensors_open ----

std::string SafetensorsBytes(const std::vector<TensorToWrite>& tensors,
                             const std::map<std::string, std::string>& metadata,
                             const FuzzScratchDir& scratch) {
  const std::string path = scratch.File("seed.safetensors");
  if (auto written = WriteSafetensors(path, tensors, metadata); !written) {
    std::fprintf(stderr, "%s\n", written.error().c_str());
    std::exit(1);
  }
  return ReadFileOrExit(path);
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
    const std::string bytes = ReadFileOrExit(fixtures + "/qwen2-tiny/" + model);
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
      ReadFileOrExit(fixtures + "/tokenizers/bpe-qwen2-style/cases.jsonl").substr(0, 4000);
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
              ReadFileOrExit(fixtures + "/tokenizers/bpe-qwen2-style/tokenizer.json"));
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
