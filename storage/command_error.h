#ifndef ACTEX_STORAGE_COMMAND_ERROR_H_
#define ACTEX_STORAGE_COMMAND_ERROR_H_

#include <expected>
#include <string>
#include <utility>

namespace actex {

// Why a command that writes a folder from an output (`actex shuffle`, `actex export`)
// did not finish, in the two kinds its exit status tells apart (2 and 1). Callers tell
// them apart by `kind`, never by the message, which names the cause (flag, file, OS
// error) and what to do.
struct CommandError {
  enum class Kind {
    // Refused before anything was written: a bad parameter, a refused --to (empty, the
    // root, the source, inside it or holding it, or holding what another run wrote), a
    // source that is not an output the command reads, or sites not in it. The same
    // command cannot succeed.
    kRefused,
    // Stopped part way (disk full, a damaged shard, an I/O error): what was written
    // stays valid and the same command continues.
    kStopped,
  };
  Kind kind = Kind::kStopped;
  std::string message;

  static std::unexpected<CommandError> Refused(std::string message) {
    return std::unexpected(CommandError{Kind::kRefused, std::move(message)});
  }
  static std::unexpected<CommandError> Stopped(std::string message) {
    return std::unexpected(CommandError{Kind::kStopped, std::move(message)});
  }
};

}  // namespace actex

#endif  // ACTEX_STORAGE_COMMAND_ERROR_H_
