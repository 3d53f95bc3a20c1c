// The CPU side of an extraction, one stage at a time, in process: corpus reading,
// tokenization (on 1..--threads threads, the tokenizer actor's DocumentEncoder), the
// sequence packer and the writer's work for one 896-wide bfloat16 site (assembling
// documents, statistics, rounding, spill, shard file with its CRC, metadata.json), to
// tmpfs and to the disk, next to what the disk itself takes. Every figure in tokens/s,
// to hold against a GPU forward's rate (bench/README.md).
//
//   build/bench/bench_pipeline_stages [--threads N] [--docs N] [--writer-tokens N]
//       [--writer-sites N] [--spill-threads N] [--shard-mb N] [--shm-dir DIR] [--disk-dir DIR]

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "actors/document_encoder.h"
#include "actors/sequence_packer.h"
#include "bench/bench_corpora.h"
#include "bench/stopwatch.h"
#include "bench/writer_stage.h"
#include "model/kernels/cpu_isa.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "storage/corpus_reader.h"
#include "storage/file_io.h"

namespace actex {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "bench_pipeline_stages: %s\n", message.c_str());
  std::exit(1);
}

// Every document of `path` as the loader reads it.
std::vector<DocumentMessage> ReadAll(const std::string& path, double* seconds, int64_t* bytes) {
  const auto start = BenchClock::now();
  auto reader = CorpusReader::Open({.inputs = {path}});
  if (!reader) Die(reader.error());
  std::vector<DocumentMessage> documents;
  *bytes = 0;
  while (true) {
    auto record = (*reader)->Next();
    if (!record) Die(record.error());
    if (!*record) break;
    DocumentMessage& document = documents.emplace_back();
    document.doc_id = (*record)->doc_id;
    document.text = std::move((*record)->text);
    *bytes += static_cast<int64_t>(document.text.size());
  }
  *seconds = SecondsSince(start);
  return documents;
}

void ReportReading(const std::string& format, const std::string& path, int kept_tokens) {
  double seconds = 0;
  int64_t bytes = 0;
  const auto documents = ReadAll(path, &seconds, &bytes);
  const double docs_per_second = documents.size() / seconds;
  std::printf(
      "  read %-7s 1 thread : %9.0f documents/s  %7.1f MB/s of text  = %10.0f tokens/s at "
      "%d tokens a document\n",
      format.c_str(), docs_per_second, bytes / seconds / 1e6, docs_per_second * kept_tokens,
      kept_tokens);
}

// Documents of `words` words drawn Zipf-like from 30000 made-up words (syllables, some
// capitalised, with punctuation and numbers): far more distinct pieces than the
// English-like corpus's 75 words, so the tokenizer's piece cache misses as it does on
// real text.
std::vector<DocumentMessage> VariedDocuments(int count, int words) {
  static const char* kSyllables[] = {"ka",  "tor", "en",  "mi",  "sul", "ra",  "ve", "lon",
                                     "qui", "dra", "po",  "ist", "an",  "bre", "ch", "ou",
                                     "zy",  "th",  "ing", "ex",  "um",  "gli", "sp", "ear"};
  constexpr int kSyllableCount = sizeof(kSyllables) / sizeof(kSyllables[0]);
  std::mt19937_64 random(11);
  std::vector<std::string> vocabulary(30000);
  for (std::string& word : vocabulary) {
    const int syllables = 1 + static_cast<int>(random() % 4);
    for (int s = 0; s < syllables; ++s) word += kSyllables[random() % kSyllableCount];
  }
  std::vector<double> weights(vocabulary.size());
  for (size_t rank = 0; rank < weights.size(); ++rank) weights[rank] = 1.0 / (rank + 1.0);
  std::discrete_distribution<size_t> zipf(weights.begin(), weights.end());
  std::vector<DocumentMessage> documents(count);
  for (int doc = 0; doc < count; ++doc) {
    std::string& text = documents[doc].text;
    documents[doc].doc_id = doc;
    for (int w = 0; w < words; ++w) {
      std::string word = vocabulary[zipf(random)];
      if (random() % 12 == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
      if (random() % 40 == 0) word = std::to_string(random() % 100000);
      text += word;
      text += random() % 10 == 0 ? ". " : random() % 9 == 0 ? ", " : " ";
    }
  }
  return documents;
}

// The tokenizer actor's encoding on `threads` threads, in its windows of 16 documents a
// thread; returns tokens produced per second and sets the documents per second.
double TokenizeRate(const std::string& tokenizer_dir, int vocab,
                    const std::vector<DocumentMessage>& documents, int threads,
                    double* docs_per_second) {
  std::vector<std::unique_ptr<Tokenizer>> tokenizers;
  for (int t = 0; t < threads; ++t) {
    auto loaded = LoadTokenizer(tokenizer_dir);
    if (!loaded) Die(loaded.error());
    tokenizers.push_back(std::move(*loaded));
  }
  DocumentEncoder encoder(std::move(tokenizers), {.vocab_size = vocab});
  const size_t window = 16 * static_cast<size_t>(threads);
  int64_t tokens = 0;
  const auto start = BenchClock::now();
  for (size_t begin = 0; begin < documents.size(); begin += window) {
    const std::span<const DocumentMessage> part(documents.data() + begin,
                                                std::min(window, documents.size() - begin));
    for (const EncodedDocument& encoded : encoder.Encode(part)) {
      if (!encoded.reject.empty()) Die("tokenizer rejected a document: " + encoded.reject);
      tokens += static_cast<int64_t>(encoded.tokens.size());
    }
  }
  const double seconds = SecondsSince(start);
  *docs_per_second = documents.size() / seconds;
  return tokens / seconds;
}

// The packer (and the batch's msgpack encoding, as the actor sends it) over `documents`
// documents of `document_tokens` ids.
double PackRate(int documents, int document_tokens, int64_t batch_tokens, int max_seq_len) {
  std::vector<int32_t> ids(document_tokens);
  for (int i = 0; i < document_tokens; ++i) ids[i] = (i * 7919) % 151936;
  SequencePacker packer({.max_seq_len = max_seq_len, .batch_tokens = batch_tokens});
  int64_t tokens = 0, bytes = 0;
  const auto start = BenchClock::now();
  for (int doc = 0; doc < documents; ++doc) {
    for (TokenBatchMessage& batch : packer.Add(doc, ids)) {
      msgpack::sbuffer body;
      msgpack::pack(body, batch);
      bytes += static_cast<int64_t>(body.size());
      tokens += static_cast<int64_t>(batch.token_ids.size());
    }
  }
  if (bytes == 0) Die("the packer sent no batch");
  return tokens / SecondsSince(start);
}

int Main(int argc, char** argv) {
  CLI::App app{"the CPU side's stages of an extraction, each alone, in tokens/s"};
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int docs = 2000, max_seq_len = 256, repeats = 3;
  int64_t writer_tokens = 131072, batch_tokens = 8192;
  int writer_sites = 1, shard_mb = 256;
  int spill_threads = 0;  // 0: one a site, up to the hardware threads
  std::string work = "/tmp/actex-stages", shm_dir = "/dev/shm/actex-stages-writer",
              disk_dir = "/tmp/actex-stages/writer";
  app.add_option("--threads", threads, "tokenizer threads up to (1, 2, 4, ... N)")
      ->capture_default_str();
  app.add_option("--docs", docs, "text documents (~960 tokens each)")->capture_default_str();
  app.add_option("--max-seq-len", max_seq_len, "tokens a document keeps")->capture_default_str();
  app.add_option("--batch-tokens", batch_tokens, "tokens a batch")->capture_default_str();
  app.add_option("--writer-tokens", writer_tokens, "tokens the writer writes per target")
      ->capture_default_str();
  app.add_option("--writer-sites", writer_sites,
                 "896-wide bf16 sites the writer stores (the first is written in place, the "
                 "others copied behind it)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--spill-threads", spill_threads,
                 "threads spilling the sites (at most one a site), against one in the same run; "
                 "0: one a site, up to the hardware threads")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_option("--shard-mb", shard_mb, "the writer's shard size in MiB")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--repeats", repeats, "runs of each tokenizer and writer figure (the best shown)")
      ->capture_default_str();
  app.add_option("--dir", work, "the corpora's folder")->capture_default_str();
  app.add_option("--shm-dir", shm_dir, "the writer's tmpfs folder")->capture_default_str();
  app.add_option("--disk-dir", disk_dir, "the writer's disk folder")->capture_default_str();
  std::string tokenizer_dir =
      std::string(ACTEX_SOURCE_DIR) + "/tests/fixtures/tokenizers/bpe-qwen2-style";
  app.add_option("--tokenizer", tokenizer_dir, "a folder with a Qwen2-style tokenizer.json")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf("CPU: %s, %u hardware threads\n", CpuModelName().c_str(),
              std::thread::hardware_concurrency());
  std::filesystem::create_directories(work);
  const std::string jsonl = work + "/text.jsonl", parquet = work + "/text.parquet";
  if (auto written = WriteTextCorpus(jsonl, docs); !written) Die(written.error());
  if (auto written = WriteTextParquet(parquet, docs); !written) Die(written.error());

  std::printf("corpus: %d English-like documents of ~960 tokens, %d kept\n", docs, max_seq_len);
  ReportReading("jsonl", jsonl, max_seq_len);
  ReportReading("parquet", parquet, max_seq_len);

  double read_seconds = 0;
  int64_t read_bytes = 0;
  const auto documents = ReadAll(jsonl, &read_seconds, &read_bytes);
  const auto varied = VariedDocuments(docs, 600);
  for (const auto& [corpus, texts] :
       {std::pair{"english-like", &documents}, std::pair{"varied", &varied}}) {
    for (int t = 1; t <= threads; t = t < threads && t * 2 > threads ? threads : t * 2) {
      double docs_per_second = 0, rate = 0;
      for (int r = 0; r < repeats; ++r) {
        double docs_this_run = 0;
        const double this_run = TokenizeRate(tokenizer_dir, 151936, *texts, t, &docs_this_run);
        if (this_run > rate) std::tie(rate, docs_per_second) = std::pair{this_run, docs_this_run};
      }
      std::printf(
          "  tokenize %-12s %2d thread(s): %10.0f tokens/s produced, %8.0f documents/s = "
          "%10.0f tokens/s at %d tokens a document\n",
          corpus, t, rate, docs_per_second, docs_per_second * max_seq_len, max_seq_len);
    }
  }
  std::printf(
      "  pack + msgpack 1 thread: %10.0f tokens/s (documents of %d tokens, batches of "
      "%lld)\n",
      PackRate(20000, max_seq_len, batch_tokens, max_seq_len), max_seq_len,
      static_cast<long long>(batch_tokens));

  const std::vector<float> batch = ResidActivations(batch_tokens);
  ReportWriterParts(batch, batch_tokens);
  const double bytes_per_token = double{kResidWidth} * sizeof(uint16_t) * writer_sites;
  // Each seal on the writer's thread, then on a thread of its own, then the sites
  // spilled by --spill-threads as well (as the writer actor runs it), alternated so that
  // all meet the same machine.
  const int spillers = std::min(
      spill_threads > 0 ? spill_threads : static_cast<int>(std::thread::hardware_concurrency()),
      writer_sites);
  std::vector<std::pair<std::string, WriterRun>> runs = {
      {"sealed in turn, 1 spill thread ", {.seal_in_background = false}},
      {"sealed beside,  1 spill thread ", {.seal_in_background = true}}};
  if (spillers > 1) {
    runs.push_back({"sealed beside, " + std::to_string(spillers) + " spill threads",
                    {.seal_in_background = true, .spill_threads = spillers}});
  }
  for (auto& [label, run] : runs) {
    run.sites = writer_sites;
    run.shard_bytes = int64_t{shard_mb} << 20;
  }
  for (const auto& [where, dir] : {std::pair{"tmpfs", shm_dir}, std::pair{"disk", disk_dir}}) {
    std::vector<double> rates(runs.size(), 0);
    double disk = 0;
    for (int r = 0; r < repeats; ++r) {
      for (size_t i = 0; i < runs.size(); ++i) {
        auto rate = WriteRate(dir, batch, batch_tokens, writer_tokens, max_seq_len, runs[i].second);
        if (!rate) Die(rate.error());
        rates[i] = std::max(rates[i], *rate);
      }
      auto folder_rate = DiskMegabytesPerSecond(dir, writer_tokens * bytes_per_token);
      if (!folder_rate) Die(folder_rate.error());
      disk = std::max(disk, *folder_rate);
    }
    std::filesystem::remove_all(dir);
    for (size_t i = 0; i < runs.size(); ++i) {
      std::printf(
          "  writer to %-5s %d site(s), %d MiB shards %s: %10.0f tokens/s (%.0f MB/s of "
          "bf16); the folder takes %.0f MB/s = %.0f tokens/s written once (%s)\n",
          where, writer_sites, shard_mb, runs[i].first.c_str(), rates[i],
          rates[i] * bytes_per_token / 1e6, disk, disk * 1e6 / bytes_per_token, dir.c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace actex

int main(int argc, char** argv) { return actex::Main(argc, argv); }
