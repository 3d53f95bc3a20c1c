// actex verify OUT: re-reads an extraction's output and checks it against its
// metadata.json files and its corpus.
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/cli/commands.h"
#include "actors/mesh_plan.h"
#include "storage/output_verifier.h"
#include "storage/shuffled_output.h"
#include "storage/shuffled_verifier.h"

namespace actex {
namespace {

struct VerifyFlags {
  std::string out_dir;
  std::vector<std::string> data;
  std::string source;  // of a shuffle
  bool allow_incomplete = false;
};

// An integer of the run config, `fallback` when absent (outputs of single-host
// runs may predate the mesh fields).
std::expected<int, std::string> ConfigInt(const nlohmann::json& config, const char* key,
                                          int fallback) {
  auto found = config.find(key);
  if (found == config.end()) return fallback;
  if (!found->is_number_integer()) {
    return std::unexpected(std::string("config \"") + key + "\" is not an integer");
  }
  return found->get<int>();
}

// How the job that wrote a folder dealt documents, from its config: the mesh of
// that job (--mesh, --num-hosts, --shards-per-host as "shards", --machine-id,
// --total-machines, --chunk-docs), so the rule is MeshPlan's own and cannot drift
// from it. With chunk c = doc_id / chunk_docs, a document belongs to machine
// c % total_machines; the folder of host h holds the replica whose model rank 0 sits
// on h. An output written before chunks existed has no "chunk_docs": it dealt single
// documents, chunks of one.
std::expected<FolderRole, std::string> RoleFromConfig(const nlohmann::json& config) {
  auto mesh = config.find("mesh");
  if (mesh != config.end() && !mesh->is_string()) {
    return std::unexpected(std::string("config \"mesh\" is not a string"));
  }
  const std::string mesh_text = mesh != config.end() ? mesh->get<std::string>() : "1d";
  auto hosts = ConfigInt(config, "num_hosts", 1);
  auto shards = ConfigInt(config, "shards", 1);
  auto host = ConfigInt(config, "host_id", 0);
  auto machine = ConfigInt(config, "machine_id", 0);
  auto machines = ConfigInt(config, "total_machines", 1);
  auto chunk_docs = ConfigInt(config, "chunk_docs", 1);
  for (const auto* value : {&hosts, &shards, &host, &machine, &machines, &chunk_docs}) {
    if (!*value) return std::unexpected(value->error());
  }
  auto plan = PlanMesh(mesh_text, *hosts, *shards, *machine, *machines, *chunk_docs);
  if (!plan) return std::unexpected("config describes no valid job: " + plan.error());
  int replica = -1;
  for (int r = 0; r < plan->data; ++r) {
    if (plan->WriterHost(r) == *host) replica = r;
  }
  // An added host of a leased job (an id from num_hosts up to --max-hosts) writes a
  // replica beyond the ones the job started with.
  if (replica < 0 && plan->Leased() && *host >= *hosts) replica = plan->ReplicasOnHost(*host)[0];
  if (replica < 0) {
    return std::unexpected("host_id " + std::to_string(*host) + " writes no replica under mesh " +
                           plan->Describe() + " with " + std::to_string(*hosts) + " hosts");
  }
  FolderRole role;
  role.job = *machines > 1
                 ? "machine " + std::to_string(*machine) + " of " + std::to_string(*machines)
                 : "the job";
  for (int m = 0; *machines > 1 && m < *machines; ++m) {
    role.all_jobs.push_back("machine " + std::to_string(m) + " of " + std::to_string(*machines));
  }
  role.name = plan->HostFolder(*host);
  for (int r = 0; r < plan->data; ++r)
    role.job_folders.push_back(plan->HostFolder(plan->WriterHost(r)));
  role.job_owns = [plan = *plan](int64_t doc_id) { return plan.OwnsDocument(doc_id); };
  // With leases a folder holds whatever chunks its host was granted: which folder
  // holds a document is not fixed, only that one of the job's does. A job of one
  // host has one folder.
  role.leased = plan->Leased();
  role.owns = role.job_owns;
  return role;
}

void PrintFinding(const char* kind, const VerifyFinding& finding) {
  std::cout << kind << ": " << (finding.file.empty() ? "" : finding.file + ": ") << finding.problem
            << '\n';
}

// `actex verify SHUFFLED`: every source row exactly once, values equal.
int VerifyShuffledCommand(const VerifyFlags& flags) {
  auto check = VerifyShuffled(flags.out_dir, flags.source);
  if (!check) {
    std::cerr << "actex verify: " << check.error() << '\n';
    return 2;
  }
  for (const std::string& fault : check->faults) std::cout << "fault: " << fault << '\n';
  std::cout << check->Summary() << '\n';
  if (check->faults.empty()) {
    std::cout << "OK\n";
    return 0;
  }
  std::cout << "FAILED: " << check->faults.size() << " faults\n";
  return 1;
}

}  // namespace

CommandRunner AddVerifyCommand(CLI::App& command) {
  auto flags = std::make_shared<VerifyFlags>();
  // Required, so that a greedy --data list leaves OUT to it ("--data a.jsonl OUT").
  command.add_option("OUT", flags->out_dir, "an extraction's output folder (or one host folder)")
      ->required();
  // Unknown arguments are refused by the runner rather than by CLI11, so that the
  // message names the argument and points at `actex verify --help`.
  command.allow_extras();
  command.add_option("--data", flags->data,
                     "the corpus files or globs, in the run's order, when they are no longer "
                     "where the run's metadata.json says");
  command.add_option("--source", flags->source,
                     "for a shuffle's output: its source folder, when it moved since");
  command.add_flag("--allow-incomplete", flags->allow_incomplete,
                   "check an unfinished run: \"complete\": false is not a fault and documents it "
                   "has not reached are counted as not yet written");
  command.footer(
      "Re-reads every listed shard (size, crc32, safetensors header, tensors, doc ids) and "
      "checks that every corpus document is written or rejected exactly once over all host "
      "folders. A shuffle's output (actex shuffle) is checked row by row against its source.\n"
      "Exit status: 0 no fault, 1 a fault was found (in a shard, a shuffled file or a "
      "metadata.json), 2 usage error or the check cannot run (OUT missing; a shuffle's source "
      "missing, unreadable or changed: give --source).");
  return [flags, &command] {
    if (!command.remaining().empty()) {
      std::cerr << "actex verify: unexpected argument " << command.remaining().front()
                << "; see actex verify --help\n";
      return 2;
    }
    std::error_code error;
    if (!std::filesystem::is_directory(flags->out_dir, error)) {
      std::cerr << "actex verify: OUT " << flags->out_dir << " is not a directory\n";
      return 2;
    }
    if (IsShuffledOutput(flags->out_dir)) return VerifyShuffledCommand(*flags);
    VerifyOptions options;
    options.out_dir = flags->out_dir;
    options.data = flags->data;
    options.allow_incomplete = flags->allow_incomplete;
    options.role = RoleFromConfig;
    auto report = VerifyOutput(options);
    if (!report) {
      std::cerr << "actex verify: " << report.error() << '\n';
      return 2;
    }
    for (const FolderSummary& folder : report->folders) {
      std::cout << folder.label << ": " << (folder.complete ? "complete" : "incomplete") << ", "
                << folder.shards << " shards, " << folder.docs << " documents, " << folder.tokens
                << " tokens, " << folder.bytes << " bytes, " << folder.rejected << " rejected";
      if (folder.uploaded_deleted > 0) {
        std::cout << ", " << folder.uploaded_deleted
                  << " shards uploaded and deleted locally (not re-read)";
      }
      std::cout << '\n';
    }
    if (!report->corpus_read.empty()) std::cout << report->corpus_read << '\n';
    for (const VerifyFinding& warning : report->warnings) PrintFinding("warning", warning);
    for (const VerifyFinding& fault : report->faults) PrintFinding("fault", fault);
    std::cout << report->Summary() << '\n';
    if (report->clean()) {
      std::cout << "OK" << (report->warnings.empty() ? "" : " (see the warnings above)") << '\n';
      return 0;
    }
    std::cout << "FAILED: " << report->faults.size() << " faults\n";
    return 1;
  };
}

}  // namespace actex
