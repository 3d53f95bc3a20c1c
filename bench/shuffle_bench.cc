// actex shuffle's speed: writes an extraction-shaped output (bfloat16, two sites of
// width 896, whole documents of 256 tokens) with ShardWriter, shuffles it in a child
// process with a small --memory, and prints MB/s of activations and the child's
// peak RSS, next to copying the same bytes twice (the shuffle reads and writes
// everything twice) measured in the same run.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "storage/activation_shuffle.h"
#include "storage/shard_writer.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

void WriteOutput(const std::string& dir, int64_t bytes) {
  actex::ShardWriterOptions options;
  options.dir = dir + "/host_00";
  options.shard_bytes = 256 << 20;
  options.dtype = actex::OutputDtype::kBF16;
  options.sites = {{"blocks.10.hook_resid_post", 896}, {"blocks.20.hook_resid_post", 896}};
  options.run_config = {{"host_id", 0}, {"num_hosts", 1}};
  auto writer = actex::ShardWriter::Open(options);
  if (!writer) throw std::runtime_error(writer.error());
  const int tokens = 256;
  std::vector<int32_t> ids(tokens), positions(tokens);
  std::vector<std::vector<float>> sites(2, std::vector<float>(tokens * 896));
  std::mt19937 random(1);
  std::normal_distribution<float> normal;
  for (auto& site : sites) {
    for (float& value : site) value = normal(random);
  }
  const int64_t per_doc = tokens * 896 * 2 * 2;
  for (int64_t doc = 0; doc * per_doc < bytes; ++doc) {
    for (int t = 0; t < tokens; ++t) {
      ids[t] = static_cast<int32_t>((doc * 31 + t) % 151000);
      positions[t] = t;
    }
    sites[0][doc % (tokens * 896)] += 1.0f;  // documents differ
    actex::DocumentActivations document{
        doc, ids, positions, {actex::SiteRows(sites[0]), actex::SiteRows(sites[1])}};
    if (auto added = (*writer)->Add(document); !added) throw std::runtime_error(added.error());
    // Chunks of one document (the writer's default ChunkRule).
    if (auto ended = (*writer)->EndChunk(doc, 1); !ended) throw std::runtime_error(ended.error());
  }
  if (auto done = (*writer)->Finish(); !done) throw std::runtime_error(done.error());
}

// Seconds to read every file of `from` and write it to `to` twice.
double CopyTwice(const std::string& from, const std::string& to) {
  const auto start = Clock::now();
  std::vector<char> buffer(1 << 20);
  for (int pass = 0; pass < 2; ++pass) {
    fs::create_directories(to);
    for (const auto& entry : fs::directory_iterator(from)) {
      int in = ::open(entry.path().c_str(), O_RDONLY);
      int out = ::open((to + "/" + entry.path().filename().string()).c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
      for (ssize_t got; (got = ::read(in, buffer.data(), buffer.size())) > 0;) {
        if (::write(out, buffer.data(), static_cast<size_t>(got)) != got) std::abort();
      }
      ::fsync(out);
      ::close(in);
      ::close(out);
    }
    fs::remove_all(to);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"actex shuffle throughput and peak memory"};
  std::string dir = "/tmp/actex-bench/shuffle";
  std::string size = "1GB", memory = "256MB";
  int64_t rows_per_file = 65536;
  app.add_option("--dir", dir, "scratch folder (removed at the end)")->capture_default_str();
  app.add_option("--size", size, "activation bytes to shuffle")->capture_default_str();
  app.add_option("--memory", memory, "the shuffle's --memory")->capture_default_str();
  app.add_option("--rows-per-file", rows_per_file,
                 "the shuffle's --rows-per-file (small: many files a bucket)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const int64_t bytes = actex::ParseByteSize(size).value();
  fs::remove_all(dir);
  WriteOutput(dir + "/out", bytes);
  int64_t source_bytes = 0;
  for (const auto& entry : fs::directory_iterator(dir + "/out/host_00")) {
    source_bytes += static_cast<int64_t>(entry.file_size());
  }
  const double copy_seconds = CopyTwice(dir + "/out/host_00", dir + "/copy");

  const auto start = Clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    actex::ShuffleOptions options;
    options.source_dir = dir + "/out";
    options.out_dir = dir + "/shuffled";
    options.memory_bytes = actex::ParseByteSize(memory).value();
    options.rows_per_file = rows_per_file;
    options.log = [start](const std::string& line) {
      std::fprintf(stderr, "%7.2f s  %s\n",
                   std::chrono::duration<double>(Clock::now() - start).count(), line.c_str());
    };
    auto result = actex::ShuffleActivations(options);
    if (!result) std::cerr << result.error().message << "\n";
    ::_exit(result ? 0 : 1);
  }
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  const double mb = static_cast<double>(source_bytes) / 1e6;
  std::printf("cpu: %s\n", CpuModel().c_str());
  std::printf("source: %.0f MB (bf16, 2 sites x 896), --memory %s, --rows-per-file %lld\n", mb,
              memory.c_str(), static_cast<long long>(rows_per_file));
  std::printf("shuffle: %.2f s, %.0f MB/s, peak RSS %.1f MB\n", seconds, mb / seconds,
              static_cast<double>(usage.ru_maxrss) / 1024.0);
  std::printf("copy twice (read+write+fsync x2): %.2f s, %.0f MB/s; shuffle/copy speed %.2f\n",
              copy_seconds, mb / copy_seconds, copy_seconds / seconds);
  fs::remove_all(dir);
  return 0;
}
