// JSON mode: appends flattened and minified, elements joined back into arrays, prefixes.
#include "streams/json_mode.h"

#include <gtest/gtest.h>

namespace agentstream::streams {
namespace {

TEST(JsonModeTest, FlattensArraysAndMinifies) {
  EXPECT_EQ(*ProcessJsonAppend(R"([1, {"a": "b c"}, [2]])", false), R"(1,{"a":"b c"},[2],)");
  EXPECT_EQ(*ProcessJsonAppend(R"( {"x" : 1} )", false), R"({"x":1},)");
  EXPECT_EQ(*ProcessJsonAppend("[]", true), "");
  EXPECT_FALSE(ProcessJsonAppend("[]", false).ok());
  EXPECT_FALSE(ProcessJsonAppend("{bad", false).ok());
  std::string out = "[";
  AppendJsonElements("1,2,", &out);
  AppendJsonElements(R"("a,]",)", &out);
  EXPECT_EQ(out + "]", R"([1,2,"a,]"])");
  EXPECT_EQ(*JsonPrefix(R"({"a":[1,2]},3,)", 1), R"({"a":[1,2]},)");
  EXPECT_FALSE(JsonPrefix("1,", 2).ok());
}

}  // namespace
}  // namespace agentstream::streams
