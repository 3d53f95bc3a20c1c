// Leases against a slow host: a job of two hosts on 127.0.0.1, host 1 made three
// times slower than host 0 (stopped two thirds of every 60 ms with SIGSTOP/SIGCONT,
// as a machine with a third of the cores would be), against the same job of two
// equal hosts measured in the same run. With fixed shares host 1 would need three
// times as long as the equal job; with leases it takes about a quarter of the chunks
// and the job ideally takes 2 / (1 + 1/3) = 1.5 x the equal job. Prints the wall
// times, the slow host's share, and the job's wall time over that ideal (the target
// is at most 1.15), with the CPU model and ISA.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/cli/local_cluster.h"
#include "model/kernels/cpu_isa.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  std::string actex;
  int documents = 40000;
  int chunk_docs = 64;
  int tokens_per_document = 64;
  double slowdown = 3;
};

pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int WaitFor(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int64_t DocumentsIn(const std::string& folder) {
  std::ifstream file(folder + "/metadata.json");
  auto metadata = nlohmann::json::parse(file, nullptr, false);
  if (metadata.is_discarded()) return -1;
  return metadata["totals"].value("docs", int64_t{-1});
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  flags.actex =
      std::filesystem::canonical("/proc/self/exe").parent_path().string() + "/../actors/actex";
  CLI::App app("leases against a host three times slower");
  app.add_option("--actex", flags.actex, "the actex executable")->capture_default_str();
  app.add_option("--documents", flags.documents)->capture_default_str();
  app.add_option("--tokens-per-document", flags.tokens_per_document)->capture_default_str();
  app.add_option("--chunk-docs", flags.chunk_docs)->capture_default_str();
  app.add_option("--slowdown", flags.slowdown, "how many times slower host 1 is")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  char pattern[] = "/tmp/actex-lease-bench-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string corpus = dir + "/corpus.jsonl";
  {
    std::ofstream out(corpus);
    for (int doc = 0; doc < flags.documents; ++doc) {
      out << "{\"input_ids\": [";
      for (int token = 0; token < flags.tokens_per_document; ++token) {
        out << (token ? "," : "") << 1 + (doc * 31 + token * 7) % 500;
      }
      out << "]}\n";
    }
  }
  const std::vector<std::string> common = {
      "--model",        std::string(ACTEX_SOURCE_DIR) + "/tests/fixtures/qwen2-tiny",
      "--data",         corpus,
      "--layers",       "0,1",
      "--chunk-docs",   std::to_string(flags.chunk_docs),
      "--blas-threads", "1"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), common.begin(), common.end());
    return args;
  };

  // One job of two hosts; host 1 runs `running` of every `period` when slowed.
  struct JobRun {
    double seconds = 0;
    int64_t docs[2] = {0, 0};
  };
  auto run_job = [&](const std::string& name, double slowdown) -> std::optional<JobRun> {
    const auto port = actex::FindFreePortTriple();
    if (!port) {
      std::fprintf(stderr, "job %s: %s\n", name.c_str(), port.error().c_str());
      return std::nullopt;
    }
    std::vector<pid_t> nodes;
    const auto started = Clock::now();
    for (int host = 0; host < 2; ++host) {
      nodes.push_back(
          Spawn(with({flags.actex, "node", "--coordinator", "127.0.0.1:" + std::to_string(*port),
                      "--host-id", std::to_string(host), "--num-hosts", "2", "--mesh", "2d",
                      "--out", dir + "/" + name}),
                dir + "/" + name + std::to_string(host) + ".log"));
    }
    const auto period = std::chrono::milliseconds(60);
    const auto running = std::chrono::duration_cast<std::chrono::milliseconds>(period / slowdown);
    int status0 = -2;
    while (true) {
      int status = 0;
      if (waitpid(nodes[0], &status, WNOHANG) == nodes[0]) {
        status0 = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        break;
      }
      std::this_thread::sleep_for(running);
      if (running == period) continue;
      kill(nodes[1], SIGSTOP);
      std::this_thread::sleep_for(period - running);
      kill(nodes[1], SIGCONT);
    }
    kill(nodes[1], SIGCONT);
    const int status1 = WaitFor(nodes[1]);
    JobRun run;
    run.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (status0 != 0 || status1 != 0) {
      std::fprintf(stderr, "job %s failed (%d, %d); see %s/%s*.log\n", name.c_str(), status0,
                   status1, dir.c_str(), name.c_str());
      return std::nullopt;
    }
    for (int host = 0; host < 2; ++host) {
      run.docs[host] = DocumentsIn(dir + "/" + name + "/host_0" + std::to_string(host));
    }
    return run;
  };
  const auto equal = run_job("equal", 1);
  const auto slowed = run_job("slowed", flags.slowdown);
  if (!equal || !slowed) return 1;
  // Host 1 with 1/slowdown of host 0's capacity: the pair has (1 + 1/slowdown) / 2 of
  // the equal pair's capacity. Fixed shares would make host 1 take `slowdown` times as
  // long as in the equal job.
  const double ideal = equal->seconds * 2 / (1 + 1 / flags.slowdown);
  const double slow_share =
      static_cast<double>(slowed->docs[1]) / static_cast<double>(slowed->docs[0] + slowed->docs[1]);
  std::printf("machine: %s, %s; OPENBLAS_CORETYPE=%s\n", actex::CpuModelName().c_str(),
              actex::IsaName(actex::DetectedIsa()),
              std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset");
  std::printf("%d documents of %d tokens, chunks of %d, two hosts on 127.0.0.1\n", flags.documents,
              flags.tokens_per_document, flags.chunk_docs);
  std::printf("equal hosts: %.2f s (host 1 wrote %lld of %d documents)\n", equal->seconds,
              static_cast<long long>(equal->docs[1]), flags.documents);
  std::printf(
      "host 1 %.1fx slower: %.2f s; host 1 wrote %.3f of the documents (%.3f would "
      "match its speed); fixed shares would take about %.2f s\n",
      flags.slowdown, slowed->seconds, slow_share, 1 / (1 + flags.slowdown),
      equal->seconds * flags.slowdown);
  std::printf("job / ideal (%.2f s): %.3f (target <= 1.15)\n", ideal, slowed->seconds / ideal);
  const bool met = slowed->seconds / ideal <= 1.15;
  std::filesystem::remove_all(dir);
  return met ? 0 : 3;
}
