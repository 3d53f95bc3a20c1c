#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/cli/commands.h"
#include "model/tokenizer/tokenizer_folder.h"

namespace actex {
namespace {

struct TokenizeFlags {
  std::string tokenizer_dir;
  std::string text;
  std::string text_field = "text";
};

void PrintIds(const std::vector<int32_t>& ids) {
  std::cout << nlohmann::json{{"ids", ids}}.dump() << '\n';
}

// Reads JSONL from stdin; a bad line is reported with its number and skipped, and
// the exit code says whether any line failed.
int TokenizeStdin(const Tokenizer& tokenizer, const std::string& field) {
  int failed = 0;
  std::string line;
  for (int64_t number = 1; std::getline(std::cin, line); ++number) {
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object() || !record.contains(field) ||
        !record[field].is_string()) {
      spdlog::error("stdin line {}: expected a JSON object with a string field \"{}\"", number,
                    field);
      ++failed;
      continue;
    }
    auto ids = tokenizer.Encode(record[field].get<std::string>());
    if (!ids) {
      spdlog::error("stdin line {}: {}", number, ids.error());
      ++failed;
      continue;
    }
    PrintIds(*ids);
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

CommandRunner AddTokenizeCommand(CLI::App& command) {
  auto flags = std::make_shared<TokenizeFlags>();
  command.add_option("--tokenizer", flags->tokenizer_dir,
                     "folder with tokenizer.json or tokenizer.model")
      ->required()
      ->check(CLI::ExistingDirectory);
  CLI::Option* text = command.add_option("--text", flags->text, "text to tokenize (else stdin)");
  command.add_option("--text-field", flags->text_field, "JSON field read from stdin lines");
  return [flags, text] {
    auto tokenizer = LoadTokenizer(flags->tokenizer_dir);
    if (!tokenizer) {
      spdlog::error("{}", tokenizer.error());
      return 1;
    }
    if (text->count() == 0) return TokenizeStdin(**tokenizer, flags->text_field);
    auto ids = (*tokenizer)->Encode(flags->text);
    if (!ids) {
      spdlog::error("--text: {}", ids.error());
      return 1;
    }
    PrintIds(*ids);
    return 0;
  };
}

}  // namespace actex
