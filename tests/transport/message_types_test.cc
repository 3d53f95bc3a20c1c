#include "transport/message_types.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace actex {
namespace {

TEST(MessageTypes, AllMessageTypesNamesEveryIdTheWireKnowsOnce) {
  std::set<uint64_t> described;
  for (uint64_t id = 0; id <= UINT16_MAX; ++id) {
    if (DescribeMessageType(id)) described.insert(id);
  }
  std::set<uint64_t> listed;
  for (const MessageType type : IdsOf(AllMessageTypes{}))
    listed.insert(static_cast<uint64_t>(type));
  EXPECT_EQ(listed.size(), AllMessageTypes::kSize) << "a struct is listed twice";
  EXPECT_EQ(listed, described);
}

TEST(MessageTypes, AnIdOutsideTheSchemaIsUnknown) {
  EXPECT_FALSE(DescribeMessageType(0).has_value());
  EXPECT_FALSE(DescribeMessageType(uint64_t{UINT16_MAX} + 1).has_value());
  EXPECT_STREQ(MessageTypeName(static_cast<MessageType>(99)), "unknown");
  EXPECT_STREQ(MessageTypeName(MessageType::kLeaseGrant), "LeaseGrant");
}

}  // namespace
}  // namespace actex
