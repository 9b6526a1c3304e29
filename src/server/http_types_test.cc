#include "server/http_types.h"

#include <gtest/gtest.h>

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace agentstream::server {
namespace {

TEST(HttpTypesTest, FramingOtherThanChunkedIsRefused) {
  EXPECT_EQ(CheckFraming(std::nullopt, 11), std::nullopt);
  EXPECT_EQ(CheckFraming("chunked", 11), std::nullopt);
  EXPECT_EQ(CheckFraming(" Chunked ", 11), std::nullopt);
  EXPECT_EQ(CheckFraming("xchunked", 11)->status, 400);  // an unknown coding: length unknown
  EXPECT_EQ(CheckFraming("chunked, gzip", 11)->status, 400);
  EXPECT_EQ(CheckFraming("", 11)->status, 400);
  EXPECT_EQ(CheckFraming("chunked, chunked", 11)->status, 400);
  EXPECT_EQ(CheckFraming("gzip, chunked", 11)->status, 501);
  EXPECT_EQ(CheckFraming("chunked", 10)->status, 400);
}

TEST(HttpTypesTest, ABooleanQueryParameterIsExactlyTrueFalseOneOrZero) {
  const std::map<std::string, std::string> query = {{"a", "true"}, {"b", "1"},    {"c", "false"},
                                                    {"d", "0"},    {"e", "TRUE"}, {"f", "yes"},
                                                    {"g", "on"},   {"h", ""},     {"i", " true"}};
  EXPECT_EQ(*QueryFlag(query, "a"), true);
  EXPECT_EQ(*QueryFlag(query, "b"), true);
  EXPECT_EQ(*QueryFlag(query, "c"), false);
  EXPECT_EQ(*QueryFlag(query, "d"), false);
  EXPECT_EQ(*QueryFlag(query, "absent"), false);
  for (const char* name : {"e", "f", "g", "h", "i"}) {
    const Result<bool> flag = QueryFlag(query, name);
    EXPECT_EQ(flag.status().code(), ErrorCode::kInvalidArgument) << name;
    EXPECT_EQ(flag.status().message(),
              std::string(name) + " must be true, false, 1 or 0, got \"" + query.at(name) + "\"");
  }
}

TEST(HttpTypesTest, ParsesTargets) {
  std::string path;
  std::map<std::string, std::string> query;
  ASSERT_TRUE(ParseTarget("/v1/agents/a%20b/events?offset=1%3A2&live=sse&x", &path, &query));
  EXPECT_EQ(path, "/v1/agents/a b/events");
  EXPECT_EQ(query.at("offset"), "1:2");
  EXPECT_EQ(query.at("live"), "sse");
  EXPECT_EQ(query.at("x"), "");
  EXPECT_FALSE(ParseTarget("/bad%2", &path, &query));
  EXPECT_FALSE(ParseTarget("/nul%00", &path, &query));
  EXPECT_FALSE(ParseTarget("relative", &path, &query));
  // Decoded control characters would end a header that echoes the path (Location, ETag).
  EXPECT_FALSE(ParseTarget("/v1/stream/a%0d%0aSet-Cookie:%20x=1", &path, &query));
  EXPECT_FALSE(ParseTarget("/a%7f", &path, &query));
  EXPECT_FALSE(ParseTarget("/a%09b", &path, &query));
  EXPECT_TRUE(ParseTarget("/a?x=%0a", &path, &query));  // a query value may hold one
  EXPECT_TRUE(IsSafeHeaderValue("http://127.0.0.1:7600/v1/stream/a b"));
  EXPECT_FALSE(IsSafeHeaderValue("a\r\nSet-Cookie: x"));
  EXPECT_FALSE(IsSafeHeaderValue(std::string_view("a\0b", 3)));
  EXPECT_EQ(PathSegments("/v1//agents/x/"), (std::vector<std::string>{"v1", "agents", "x"}));
}

// The bytes an answer puts on the wire: its head, then its body when it carries one.
std::string Wire(const AnswerHead& head, std::span<const FieldView> fields, std::string_view body) {
  auto answer = SerializeAnswer(head, fields, body.size());
  return answer.with_body ? answer.head + std::string(body) : answer.head;
}

TEST(SerializeAnswerTest, WritesTheStatusLineFieldsAndLengthBeforeTheBody) {
  const FieldView fields[] = {{"Server", "agentstream"}, {"content-type", "text/plain"}};
  EXPECT_EQ(Wire(AnswerHead{200, "OK", 11, false, true}, fields, "hello"),
            "HTTP/1.1 200 OK\r\nServer: agentstream\r\ncontent-type: text/plain\r\n"
            "Content-Length: 5\r\n\r\nhello");
}

TEST(SerializeAnswerTest, ALaterFieldReplacesAnEarlierOneOfTheSameName) {
  const FieldView fields[] = {{"A", "1"}, {"b", "2"}, {"a", "3"}, {"B", "bad\r\nX: y"}};
  EXPECT_EQ(Wire(AnswerHead{200, "OK", 11, false, true}, fields, ""),
            "HTTP/1.1 200 OK\r\nb: 2\r\na: 3\r\nContent-Length: 0\r\n\r\n");
}

TEST(SerializeAnswerTest, UnsafeValuesBadNamesAndFramingFieldsAreLeftOut) {
  const FieldView fields[] = {{"x", "split\r\nSet-Cookie: a"},
                              {"y", std::string_view("nul\0", 4)},
                              {"bad name", "v"},
                              {"bad:name", "v"},
                              {"(bad)", "v"},
                              {"bad/name@", "v"},
                              {"b\u00E4d", "v"},
                              {"", "v"},
                              {"Content-Length", "99"},
                              {"transfer-encoding", "chunked"},
                              {"Connection", "upgrade"},
                              {"ok", "1"},
                              {"Z9!#$%&'*+-.^_`|~", "2"}};
  EXPECT_EQ(Wire(AnswerHead{201, "Created", 11, false, true}, fields, "ab"),
            "HTTP/1.1 201 Created\r\nok: 1\r\nZ9!#$%&'*+-.^_`|~: 2\r\nContent-Length: "
            "2\r\n\r\nab");
}

TEST(SerializeAnswerTest, NoBodyFor204Or304AndNoneButALengthOfZeroForHead) {
  EXPECT_EQ(Wire(AnswerHead{204, "No Content", 11, false, true}, {}, "ignored"),
            "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(Wire(AnswerHead{304, "Not Modified", 11, false, true}, {}, ""),
            "HTTP/1.1 304 Not Modified\r\n\r\n");
  EXPECT_EQ(Wire(AnswerHead{200, "OK", 11, true, true}, {}, "body"),
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
}

TEST(SerializeAnswerTest, ConnectionSaysWhatTheVersionDoesNotSayByItself) {
  EXPECT_EQ(Wire(AnswerHead{200, "OK", 11, false, false}, {}, ""),
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(Wire(AnswerHead{200, "OK", 10, false, true}, {}, ""),
            "HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(Wire(AnswerHead{200, "OK", 10, false, false}, {}, ""),
            "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n");
}

}  // namespace
}  // namespace agentstream::server
