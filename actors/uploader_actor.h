#ifndef ACTEX_ACTORS_UPLOADER_ACTOR_H_
#define ACTEX_ACTORS_UPLOADER_ACTOR_H_

#include <expected>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actors/upload_command.h"
#include "storage/shard_writer.h"
#include "transport/actor.h"

namespace actex {

struct UploaderConfig {
  UploadOptions upload;  // upload.command is not empty
  std::string host_dir;  // OUT/host_NN
  int host_id = 0;
  std::string requests_endpoint;  // binds a PULL: UploadRequest* EndOfStream (the writer)
  std::string events_endpoint;    // connects a PUSH: MonitorEvent ("uploaded", "upload_failed")
  // Shards an earlier run listed, to upload first: those the ledger already vouches
  // for are skipped (or, newly with --delete-after-upload, just deleted).
  std::vector<ListedShard> earlier_shards;
};

// Uploads every shard the writer lists, and metadata.json, by running the upload
// command once per file, one file at a time, with retries and doubling back-off.
// After a command succeeded the file is recorded in uploads.jsonl (fsynced) and only
// then, with --delete-after-upload, deleted. A file whose attempts all fail is kept,
// reported with an "upload_failed" event and left for a rerun, which uploads every
// listed shard the ledger does not vouch for.
//
// metadata.json is uploaded as a snapshot (metadata.upload.tmp, so the writer may
// replace the original meanwhile) whenever no shard is waiting, and once more at the
// end, but only when every shard it lists is uploaded: a remote metadata.json never
// lists a shard the remote does not have.
//
// Ends after the writer's EndOfStream once the final metadata.json is handled, or
// when stopped (a command running then is killed; a rerun uploads that file again).
// Its only errors are a ledger it cannot write or read (disk full, a damaged line).
std::expected<std::unique_ptr<Actor>, std::string> StartUploader(zmq::context_t& context,
                                                                 UploaderConfig config);

// After the uploader ended: an error naming every file of `host_dir` that is not
// uploaded as it now is (see FilesNotUploaded), kept locally for a rerun.
std::expected<void, std::string> ExpectEverythingUploaded(const std::string& host_dir);

}  // namespace actex

#endif  // ACTEX_ACTORS_UPLOADER_ACTOR_H_
