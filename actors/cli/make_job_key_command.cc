// actex make-job-key FILE: writes a new job key, the secret every host of a job
// reads with --job-key-file (transport/job_security.h).
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "actors/cli/commands.h"
#include "transport/job_security.h"

namespace actex {

CommandRunner AddMakeJobKeyCommand(CLI::App& command) {
  auto path = std::make_shared<std::string>();
  command.add_option("FILE", *path, "where to write the key (mode 0600; never replaced)")
      ->required();
  command.footer(
      "Copy FILE to every host of the job (keeping it private) and give each node "
      "--job-key-file FILE: only holders of the key can join, and all tcp traffic is "
      "encrypted.");
  return [path] {
    if (auto written = JobSecurity::WriteNewKeyFile(*path); !written) {
      spdlog::error("{}", written.error());
      return 1;
    }
    auto security = JobSecurity::FromKeyFile(*path);
    if (!security) {
      spdlog::error("{}", security.error());
      return 1;
    }
    spdlog::info("wrote job key {} to {}", (*security)->key_id(), *path);
    return 0;
  };
}

}  // namespace actex
