#include "actors/uploader_actor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "actors/actor_io.h"
#include "base/unix_time.h"
#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/host_folder_files.h"
#include "storage/upload_ledger.h"
#include "transport/interrupted.h"
#include "transport/schema.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSnapshotSuffix = ".upload.tmp";
constexpr auto kStopCheck = std::chrono::milliseconds(100);

enum class Attempted { kUploaded, kFailed, kStopped };

class Uploader {
 public:
  Uploader(ActorContext& actor, const UploaderConfig& config)
      : actor_(actor), config_(config), host_name_(fs::path(config.host_dir).filename()) {}

  std::expected<void, std::string> Run() {
    auto records = UploadLedger::Read(config_.host_dir);
    if (!records) return std::unexpected(records.error());
    records_ = std::move(*records);
    auto ledger = UploadLedger::Open(config_.host_dir);
    if (!ledger) return std::unexpected(ledger.error());
    ledger_ = std::move(*ledger);
    zmq::socket_t requests = MakePipelineSocket(actor_.context(), zmq::socket_type::pull, 0);
    RetryInterrupted([&] { requests.bind(config_.requests_endpoint); });
    events_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, 1000);
    events_.set(zmq::sockopt::sndtimeo, 0);
    RetryInterrupted([&] { events_.connect(config_.events_endpoint); });
    actor_.SignalReady();

    std::deque<ListedShard> queue(config_.earlier_shards.begin(), config_.earlier_shards.end());
    bool writer_done = false;
    bool listing_uploaded = true;  // no shard was uploaded since metadata.json last was
    while (true) {
      while (true) {  // everything already waiting
        auto message = Receive(requests, std::chrono::milliseconds(0));
        if (!message) return std::unexpected(message.error().message);
        if (!*message) break;
        if (auto taken = Take(**message, &queue, &writer_done); !taken) return taken;
      }
      if (!queue.empty()) {
        const ListedShard shard = queue.front();
        queue.pop_front();
        auto done = UploadShard(shard);
        if (!done) return std::unexpected(done.error());
        if (*done == Attempted::kStopped) return {};
        listing_uploaded = false;
        continue;
      }
      if (!listing_uploaded || writer_done) {
        // Nothing waits: the remote catches up with the listing.
        auto done = UploadMetadata(/*final=*/writer_done);
        if (!done) return std::unexpected(done.error());
        if (*done == Attempted::kStopped || writer_done) return {};
        listing_uploaded = true;
        continue;
      }
      auto message = ReceiveUnlessStopped(actor_, requests);
      if (!message) return EndActor(message.error());
      if (auto taken = Take(*message, &queue, &writer_done); !taken) return taken;
    }
  }

 private:
  std::expected<void, std::string> Take(ReceivedMessage& message, std::deque<ListedShard>* queue,
                                        bool* writer_done) {
    if (message.type == MessageType::kEndOfStream) {
      *writer_done = true;
      return {};
    }
    auto request = message.As<UploadRequestMessage>();
    if (!request) return std::unexpected("from the writer: " + request.error());
    queue->push_back({request->file, request->bytes, request->crc32});
    return {};
  }

  bool Vouched(const std::string& file, int64_t bytes, const std::string& crc32) const {
    return UploadVouched(records_, file, bytes, crc32);
  }

  std::expected<Attempted, std::string> UploadShard(const ListedShard& shard) {
    const fs::path path = fs::path(config_.host_dir) / shard.file;
    std::error_code error;
    const bool present = fs::exists(path, error);
    if (Vouched(shard.file, shard.bytes, shard.crc32)) {
      // Uploaded by an earlier run; a rerun that adds --delete-after-upload frees it now.
      if (!present || !config_.upload.delete_after_upload) return Attempted::kUploaded;
      return Record(shard.file, shard.bytes, shard.crc32, path);
    }
    if (!present) {
      Report("upload_failed", shard.file +
                                  ": listed but missing, and uploads.jsonl does not "
                                  "vouch for an upload of it");
      return Attempted::kFailed;
    }
    const Attempted attempted = Attempt(shard.file, path.string(), config_.upload.retries);
    if (attempted != Attempted::kUploaded) return attempted;
    return Record(shard.file, shard.bytes, shard.crc32, path);
  }

  // The ledger line first, then the deletion: a crash between them leaves an uploaded
  // file on disk, never a deleted file the ledger does not know.
  std::expected<Attempted, std::string> Record(const std::string& file, int64_t bytes,
                                               const std::string& crc32, const fs::path& path) {
    // The listing and the rejects stay: a rerun reads them.
    const bool remove = config_.upload.delete_after_upload && file.starts_with("shard_");
    UploadRecord record{file, bytes, crc32, remove, UnixSeconds()};
    if (auto appended = ledger_->Append(record); !appended) {
      return std::unexpected(appended.error());
    }
    records_[file] = record;
    if (remove) {
      std::error_code error;
      if (!fs::remove(path, error) && error) {
        spdlog::warn("{}: uploaded but could not delete the local copy: {}", path.string(),
                     error.message());
      }
    }
    Report("uploaded", file);
    return Attempted::kUploaded;
  }

  // rejects.jsonl, then metadata.json, each as it is now, if the ledger does not
  // already vouch for exactly these bytes. metadata.json goes last and only when every
  // shard it lists is uploaded.
  std::expected<Attempted, std::string> UploadMetadata(bool final) {
    const fs::path folder(config_.host_dir);
    std::error_code error;
    if (fs::exists(folder / kRejectsFile, error)) {
      auto rejects = ReadWholeFile((folder / kRejectsFile).string());
      if (!rejects) return Failed(final, kRejectsFile, rejects.error());
      auto uploaded = UploadSnapshot(kRejectsFile, *rejects, final);
      if (!uploaded || *uploaded != Attempted::kUploaded) return uploaded;
    }
    auto contents = ReadWholeFile((folder / kMetadataFile).string());
    if (!contents) return Failed(final, kMetadataFile, contents.error());
    auto pending = ListedShardsNotUploaded(
        nlohmann::json::parse(*contents, nullptr, /*allow_exceptions=*/false), records_);
    if (!pending) return Failed(final, kMetadataFile, "cannot be read: " + pending.error());
    if (!pending->empty()) {
      return Failed(final, kMetadataFile, "not uploaded while " + pending->front() + " is not");
    }
    return UploadSnapshot(kMetadataFile, *contents, final);
  }

  // Only the end of the run reports a listing that cannot go up yet: mid-run, the
  // next shard brings another chance.
  Attempted Failed(bool final, const std::string& name, const std::string& why) {
    if (final) Report("upload_failed", name + ": " + why);
    return Attempted::kFailed;
  }

  // Uploads `contents` (what `name` held when read) from a snapshot file, since the
  // writer may replace or extend the original meanwhile.
  std::expected<Attempted, std::string> UploadSnapshot(const std::string& name,
                                                       const std::string& contents, bool final) {
    const std::string crc = Crc32Hex(contents);
    const int64_t bytes = static_cast<int64_t>(contents.size());
    if (Vouched(name, bytes, crc)) return Attempted::kUploaded;
    const fs::path snapshot = fs::path(config_.host_dir) / (name + kSnapshotSuffix);
    // A short snapshot (disk full) must never be uploaded as if it were the file.
    if (auto written = WriteFileAtomically(snapshot.string(), contents, nullptr); !written) {
      spdlog::error("{}", written.error());
      return Failed(final, name, written.error());
    }
    // Mid-run snapshots get one attempt: the next shard brings another chance.
    const Attempted attempted =
        Attempt(name, snapshot.string(), final ? config_.upload.retries : 0);
    std::error_code error;
    fs::remove(snapshot, error);
    if (attempted != Attempted::kUploaded) return attempted;
    return Record(name, bytes, crc, snapshot);
  }

  // Runs the command up to 1 + retries times. A last failure is reported.
  Attempted Attempt(const std::string& name, const std::string& path, int retries) {
    const std::string command =
        ExpandUploadTemplate(config_.upload.command, fs::absolute(path).string(), name, host_name_);
    const auto timeout =
        std::chrono::milliseconds(static_cast<int64_t>(config_.upload.timeout_seconds * 1000));
    double backoff = config_.upload.backoff_seconds;
    for (int attempt = 0; attempt <= retries; ++attempt) {
      auto outcome = RunShellCommand(command, timeout, [this] { return actor_.StopRequested(); });
      if (outcome && outcome->succeeded) return Attempted::kUploaded;
      if (outcome && outcome->stopped) return Attempted::kStopped;
      const std::string why = outcome ? outcome->Describe() : outcome.error();
      if (attempt == retries) {
        spdlog::error("{}/{}: upload failed {} time(s), kept here: {}", config_.host_dir, name,
                      attempt + 1, why);
        Report("upload_failed", name + ": " + why);
        return Attempted::kFailed;
      }
      spdlog::warn("{}/{}: upload attempt {} of {} failed ({}); retrying in {:.1f} s",
                   config_.host_dir, name, attempt + 1, retries + 1, why, backoff);
      if (!SleepUnlessStopped(backoff)) return Attempted::kStopped;
      backoff = std::min(backoff * 2, kMaxBackoffSeconds);
    }
    return Attempted::kFailed;
  }

  bool SleepUnlessStopped(double seconds) {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    while (std::chrono::steady_clock::now() < until) {
      if (actor_.StopRequested()) return false;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          kStopCheck, until - std::chrono::steady_clock::now()));
    }
    return !actor_.StopRequested();
  }

  void Report(const std::string& kind, const std::string& message) {
    MonitorEventMessage event;
    event.kind = kind;
    event.host_id = config_.host_id;
    event.unix_seconds = UnixSeconds();
    event.message = message;
    (void)Send(events_, event);  // advisory, like every event; never blocks
  }

  ActorContext& actor_;
  const UploaderConfig& config_;
  const std::string host_name_;
  std::map<std::string, UploadRecord> records_;
  std::unique_ptr<UploadLedger> ledger_;
  zmq::socket_t events_;
};

}  // namespace

std::expected<std::unique_ptr<Actor>, std::string> StartUploader(zmq::context_t& context,
                                                                 UploaderConfig config) {
  return Actor::Start(context, "uploader", [config = std::move(config)](ActorContext& actor) {
    return Uploader(actor, config).Run();
  });
}

std::expected<void, std::string> ExpectEverythingUploaded(const std::string& host_dir) {
  auto missing = FilesNotUploaded(host_dir);
  if (!missing) return std::unexpected(missing.error());
  if (missing->empty()) return {};
  std::string names;
  for (const std::string& name : *missing) names += (names.empty() ? "" : ", ") + name;
  return std::unexpected("the extraction is done, but " + std::to_string(missing->size()) +
                         " file(s) of " + host_dir + " are not uploaded (" + names +
                         "); they are kept there (the log above says why the upload command "
                         "failed); run the same command again to upload them");
}

}  // namespace actex
