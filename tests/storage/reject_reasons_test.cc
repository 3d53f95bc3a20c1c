// The reasons a folder's rejects.jsonl gives, by kind, for the message of a run
// that rejected too much.
#include "storage/reject_reasons.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_files.h"

namespace actex {
namespace {

TEST(RejectReasonKind, LeavesOutNumbersAndTheDetailAfterAColon) {
  EXPECT_EQ(RejectReasonKind("not valid UTF-8 at byte 17"), "not valid UTF-8 at byte N");
  EXPECT_EQ(RejectReasonKind("token id 300 is outside the model's vocabulary of 16"),
            "token id N is outside the model's vocabulary of N");
  EXPECT_EQ(RejectReasonKind("invalid JSON: syntax error while parsing value at 3"),
            "invalid JSON");
  EXPECT_EQ(RejectReasonKind("line longer than 100 bytes (2000)"), "line longer than N bytes (N)");
  EXPECT_EQ(RejectReasonKind("missing field \"text\""), "missing field \"text\"");
}

TEST(TallyRejectReasons, CountsKindsMostCommonFirstKeepingTheFirstExample) {
  TempDir dir;
  const std::string path = dir.File("rejects.jsonl");
  WriteBytes(path,
             "{\"doc_id\":0,\"file\":\"c\",\"line\":1,\"reason\":\"not valid UTF-8 at byte 0\"}\n"
             "{\"doc_id\":1,\"file\":\"c\",\"line\":2,\"reason\":\"invalid JSON: oops\"}\n"
             "{\"doc_id\":2,\"file\":\"c\",\"line\":3,\"reason\":\"invalid JSON: other\"}\n"
             "not json at all\n"
             "{\"doc_id\":3,\"file\":\"c\",\"line\":4,\"reason\":\"blank line\"}\n"
             "{\"doc_id\":4,\"file\":\"c\",\"line\":5,\"reason\":\"not valid UTF-8 at byte 9\"}\n"
             "{\"doc_id\":5,\"file\":\"c\",\"line\":6,\"reason\":\"invalid JSON: third\"}\n"
             "{\"doc_id\":6,\"file\":\"c\",\"line\":7,\"reason\":\"no tokens\"}\n");
  auto reasons = TallyRejectReasons(path, 3);
  ASSERT_TRUE(reasons.has_value()) << reasons.error();
  EXPECT_EQ(reasons->total, 7);
  ASSERT_EQ(reasons->kinds.size(), 3u);
  EXPECT_EQ(reasons->kinds[0].example, "invalid JSON: oops");
  EXPECT_EQ(reasons->kinds[0].count, 3);
  EXPECT_EQ(reasons->kinds[1].example, "not valid UTF-8 at byte 0");
  EXPECT_EQ(reasons->kinds[1].count, 2);
  EXPECT_EQ(reasons->kinds[2].example, "blank line") << "ties: the kind seen first";

  auto none = TallyRejectReasons(dir.File("absent.jsonl"), 3);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->total, 0);
}

}  // namespace
}  // namespace actex
