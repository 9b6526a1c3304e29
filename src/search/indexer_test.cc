// The search index: which events make which documents, and the index on each store that keeps
// it, caught up from the log and queried (words, a session, the limit, forks, rewinds, a
// reopen, another indexer meeting this one, hostile queries).
#include "search/indexer.h"

#include <gtest/gtest.h>

#include <tuple>

#include "search/query.h"
#include "store/test_backend.h"

namespace agentstream {
namespace {

Event At(std::uint64_t seq, Payload payload) {
  Event e;
  e.session = SessionId("s");
  e.epoch = Epoch(1);
  e.seq = Seq(seq);
  e.payload = std::move(payload);
  return e;
}

std::vector<std::string> Texts(const DocumentBatch& batch) {
  std::vector<std::string> out;
  for (const SearchDocument& d : batch.documents) out.push_back(d.kind + ":" + d.text);
  return out;
}

TEST(SearchDocuments, DeltasJoinIntoOneMessageAndToolsMakeTheirOwn) {
  const MessageId m("m1");
  const ToolCallId call("c1");
  const std::vector<Event> events = {
      At(1, UserMessage{MessageId("u1"), "cm1", "find the needle", {}}),
      At(2, AssistantMessageStart{m, MessageId("u1")}),
      At(3, AssistantMessageDelta{m, "Looking for the nee"}),
      At(4, ToolCallStart{call, "shell", "grep", boost::json::object{{"cmd", "grep -rn needle"}},
                          std::nullopt}),
      At(5, ToolCallOutput{call, "a.txt: nee", false}),
      At(6, ToolCallOutput{call, "dle\n", false}),
      At(7, ToolCallEnd{call, ToolCallStatus::kCompleted, std::nullopt, false, std::nullopt}),
      At(8, AssistantMessageDelta{m, "dle: found\x01 it"}),
      At(9, AssistantMessageEnd{m, "end_turn"}),
      At(10, Reasoning{MessageId("r1"), "secret thoughts"}),
  };
  const DocumentBatch batch = DocumentsOf(events);
  EXPECT_EQ(batch.through, Seq(10));
  EXPECT_EQ(Texts(batch), (std::vector<std::string>{
                              "user.message:find the needle",
                              "assistant.message:Looking for the needle: found  it",
                              "tool.call:grep\nshell\n{\"cmd\":\"grep -rn needle\"}",
                              "tool.output:a.txt: needle\n",
                          }));
  EXPECT_EQ(batch.documents[1].cursor, (Cursor{Epoch(1), Seq(3)}));
}

TEST(SearchDocuments, AMessageStillStreamingWaitsForTheNextBatchUnlessItBeginsIt) {
  const MessageId m("m1");
  const std::vector<Event> events = {
      At(5, UserMessage{MessageId("u1"), "cm1", "hello", {}}),
      At(6, AssistantMessageDelta{m, "par"}),
      At(7, Notice{NoticeLevel::kInfo, "n"}),
  };
  const DocumentBatch held = DocumentsOf(events);
  EXPECT_EQ(held.through, Seq(5));
  EXPECT_EQ(Texts(held), std::vector<std::string>{"user.message:hello"});
  // The next batch begins with it: taken as it is, so that indexing always moves on.
  const DocumentBatch taken = DocumentsOf({events[1], events[2]});
  EXPECT_EQ(taken.through, Seq(7));
  EXPECT_EQ(Texts(taken), std::vector<std::string>{"assistant.message:par"});
}

TEST(SearchDocuments, TextIsBoundedOnACharacterBoundary) {
  const MessageId m("m1");
  std::vector<Event> events;
  std::uint64_t seq = 0;
  for (int i = 0; i < 3000; ++i) events.push_back(At(++seq, AssistantMessageDelta{m, "é mot "}));
  events.push_back(At(++seq, AssistantMessageEnd{m, "end_turn"}));
  const DocumentBatch batch = DocumentsOf(events);
  ASSERT_EQ(batch.documents.size(), 1u);
  EXPECT_LE(batch.documents[0].text.size(), kMaxDocumentBytes);
  EXPECT_GT(batch.documents[0].text.size(), kMaxDocumentBytes - 8);
}

TEST(SearchQueryWords, SplitsAtPunctuationAndRefusesWhatHasNoWord) {
  EXPECT_EQ(*QueryWords("  Needle-in \"hay\" ; DROP TABLE x; -- * ^ NEAR("),
            (std::vector<std::string>{"Needle", "in", "hay", "DROP", "TABLE", "x", "NEAR"}));
  EXPECT_EQ(*QueryWords("café_au lait"), (std::vector<std::string>{"café_au", "lait"}));
  EXPECT_EQ(QueryWords(" \"*^- ").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(QueryWords("\xff").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(QueryWords(std::string(kMaxQueryBytes + 1, 'a')).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(QueryWords("a b c d e f g h i j k l m n o p q r s")->size(), kMaxQueryWords);
}

// Each store, its search read on one connection and on three at once (search_slices.h).
class SearchIndexTest : public ::testing::TestWithParam<std::tuple<std::string, std::size_t>> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(std::get<0>(GetParam()), std::get<1>(GetParam()));
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
    ASSERT_NE(log().search_index(), nullptr);
  }
  EventLog& log() { return backend_->log(); }
  SearchIndexStore& store() { return *log().search_index(); }

  void Create(const SessionId& id) {
    ASSERT_TRUE(log().CreateSession(id, SessionMeta{"scripted", "/w"}, {}).ok());
  }
  void Append(const SessionId& id, std::vector<Payload> payloads) {
    AppendRequest request;
    request.session = id;
    for (Payload& p : payloads) request.events.push_back(MakeNewEvent(std::move(p)));
    ASSERT_TRUE(log().Append(std::move(request)).ok());
  }
  // A turn: the user's text, then the assistant's in two deltas split inside a word.
  void Turn(const SessionId& id, const std::string& user, const std::string& answer,
            const std::string& message) {
    const std::size_t half = answer.size() / 2;
    Append(id, {UserMessage{MessageId("u" + message), "c" + message, user, {}},
                AssistantMessageStart{MessageId(message), MessageId("u" + message)},
                AssistantMessageDelta{MessageId(message), answer.substr(0, half)},
                AssistantMessageDelta{MessageId(message), answer.substr(half)},
                AssistantMessageEnd{MessageId(message), "end_turn"}});
  }
  void CatchUp(const SessionId& id) {
    Result<Cursor> tail = log().Tail(id);
    ASSERT_TRUE(tail.ok());
    Status indexed = CatchUpSearch(store(), log(), id, *tail);
    ASSERT_TRUE(indexed.ok()) << indexed.ToString();
  }
  std::vector<SearchHit> Find(const std::string& text, std::optional<SessionId> session = {},
                              std::size_t limit = 20) {
    Result<std::vector<std::string>> words = QueryWords(text);
    EXPECT_TRUE(words.ok());
    Result<std::vector<SearchHit>> hits = store().Search(SearchQuery{*words, session, limit});
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<SearchHit>{};
  }

  std::unique_ptr<testing::Backend> backend_;
};

TEST_P(SearchIndexTest, FindsEveryWordNewestFirstWithMarkedSnippets) {
  const SessionId a("ses_a"), b("ses_b");
  Create(a);
  Create(b);
  Turn(a, "please refactor the parser", "The parser is refactored.", "m1");
  Turn(b, "write the parser tests", "Tests for the parser are written.", "m2");
  Turn(a, "and the lexer", "The lexer is done too.", "m3");
  CatchUp(a);
  CatchUp(b);

  std::vector<SearchHit> hits = Find("parser");
  ASSERT_EQ(hits.size(), 4u);
  EXPECT_EQ(hits[0].session, b);  // b's turn was indexed last
  EXPECT_EQ(hits[0].kind, "assistant.message");
  EXPECT_EQ(hits[0].cursor, (Cursor{Epoch(1), Seq(3)}));
  EXPECT_NE(hits[0].snippet.find("\x02parser\x03"), std::string::npos) << hits[0].snippet;
  EXPECT_EQ(hits[1].kind, "user.message");

  // Every word must occur; case does not matter; a session narrows the hits.
  EXPECT_EQ(Find("PARSER refactored").size(), 1u);
  EXPECT_EQ(Find("parser", a).size(), 2u);
  EXPECT_EQ(Find("parser", SessionId("ses_")).size(), 0u);  // a session id is matched whole
  EXPECT_EQ(Find("lexer", b).size(), 0u);
  EXPECT_EQ(Find("nowhere").size(), 0u);
  EXPECT_EQ(Find("parser", std::nullopt, 3).size(), 3u);

  // Query text that is syntax to a store is read as words.
  EXPECT_EQ(Find("\"parser\" OR NEAR(lexer) *").size(), 0u);  // "or", "near" are words too
  EXPECT_EQ(Find("parser\") OR (\"x").size(), 0u);
  EXPECT_EQ(Find("lexer'; DROP TABLE search_state; --").size(), 0u);
  EXPECT_EQ(Find("lexer").size(), 2u);
}

TEST_P(SearchIndexTest, CatchingUpTwiceAddsNothingAndAnotherIndexerIsMetSafely) {
  const SessionId a("ses_a");
  Create(a);
  Turn(a, "alpha", "beta gamma", "m1");
  CatchUp(a);
  CatchUp(a);
  EXPECT_EQ(Find("alpha").size(), 1u);
  // A commit from a stale state is refused and adds nothing.
  Result<std::optional<Cursor>> state = store().LoadSearchState(a);
  ASSERT_TRUE(state.ok() && *state);
  EXPECT_EQ(**state, (Cursor{Epoch(1), Seq(5)}));
  const std::vector<SearchDocument> extra = {
      {Cursor{Epoch(1), Seq(1)}, 0, "user.message", "alpha"}};
  EXPECT_EQ(store().CommitDocuments({a, std::nullopt, Cursor{Epoch(1), Seq(9)}, extra}).code(),
            ErrorCode::kConflict);
  EXPECT_EQ(store()
                .CommitDocuments({a, Cursor{Epoch(1), Seq(4)}, Cursor{Epoch(1), Seq(9)}, extra})
                .code(),
            ErrorCode::kConflict);
  EXPECT_EQ(Find("alpha").size(), 1u);
}

// Commits made together land each as it would alone: one from a stale state writes nothing, nor
// does one whose text the store cannot keep (PostgreSQL's text holds no NUL byte), and the others
// land all the same.
TEST_P(SearchIndexTest, CommitsMadeTogetherLandOrFailEachAlone) {
  const SessionId a("ses_a"), b("ses_b"), c("ses_c"), d("ses_d");
  auto doc = [](std::uint64_t seq, std::string text) {
    return SearchDocument{Cursor{Epoch(1), Seq(seq)}, 1'700'000'000'000, "user.message",
                          std::move(text)};
  };
  auto at = [](std::uint64_t seq) { return Cursor{Epoch(1), Seq(seq)}; };
  ASSERT_TRUE(store().CommitDocuments({b, std::nullopt, at(1), {doc(1, "first")}}).ok());
  const std::vector<DocumentCommit> commits = {
      {a, std::nullopt, at(2), {doc(1, "apple"), doc(2, "apple pie")}},
      {b, std::nullopt, at(2), {doc(2, "apple stale")}},
      {c, std::nullopt, at(1), {doc(1, std::string("apple\0c", 7))}},
      {d, std::nullopt, at(1), {doc(1, "apple tart")}},
  };
  const bool c_kept = testing::CheckFourOutcomes(store().CommitDocumentsTogether(commits));
  EXPECT_EQ(Find("apple", a).size(), 2u);
  EXPECT_EQ(Find("apple", b).size(), 0u);
  EXPECT_EQ(**store().LoadSearchState(b), at(1));
  EXPECT_EQ(store().LoadSearchState(c)->has_value(), c_kept);
  EXPECT_EQ(Find("apple", d).size(), 1u);
}

// Hits are newest first by their events' time, not by when they were indexed: a session indexed
// late (at a daemon's start, say) takes its place among the others.
TEST_P(SearchIndexTest, HitsAreOrderedByTheirEventsTime) {
  const SessionId a("ses_a"), b("ses_b");
  Create(a);
  Create(b);
  auto doc = [](std::uint64_t seq, TimestampMs time) {
    return SearchDocument{Cursor{Epoch(1), Seq(seq)}, time, "user.message", "same words"};
  };
  ASSERT_TRUE(store()
                  .CommitDocuments({b,
                                    std::nullopt,
                                    Cursor{Epoch(1), Seq(3)},
                                    {doc(1, 1'700'000'000'200), doc(2, 1'700'000'000'400),
                                     doc(3, 1'700'000'000'400)}})
                  .ok());
  ASSERT_TRUE(store()
                  .CommitDocuments({a,
                                    std::nullopt,
                                    Cursor{Epoch(1), Seq(2)},
                                    {doc(1, 1'700'000'000'100), doc(2, 1'700'000'000'300)}})
                  .ok());
  std::vector<std::string> order;
  for (const SearchHit& hit : Find("same")) {
    order.push_back(hit.session.str() + "@" + std::to_string(hit.cursor.seq.value()));
    EXPECT_GE(hit.time, 1'700'000'000'100);
  }
  EXPECT_EQ(order,
            (std::vector<std::string>{"ses_b@3", "ses_b@2", "ses_a@2", "ses_b@1", "ses_a@1"}));
  EXPECT_EQ(Find("same")[0].time, 1'700'000'000'400);
}

// Many matches and few take different paths in a store (PostgreSQL picks its plan by how many
// match): both answer newest first, within the limit.
TEST_P(SearchIndexTest, ManyMatchesAndFewAnswerAlike) {
  const SessionId a("ses_a");
  Create(a);
  std::vector<SearchDocument> docs;
  for (std::uint64_t i = 1; i <= 6000; ++i) {
    docs.push_back(SearchDocument{Cursor{Epoch(1), Seq(i)}, 1'700'000'000'000 + TimestampMs(i),
                                  "assistant.message",
                                  i % 1000 == 0 ? "common and rare" : "common words"});
  }
  ASSERT_TRUE(store().CommitDocuments({a, std::nullopt, Cursor{Epoch(1), Seq(6000)}, docs}).ok());
  for (const auto& [word, first, count] :
       {std::tuple{"common", 6000u, 20u}, std::tuple{"rare", 6000u, 6u}}) {
    for (const std::optional<SessionId>& session : {std::optional<SessionId>(), std::optional(a)}) {
      const std::vector<SearchHit> hits = Find(word, session, 20);
      ASSERT_EQ(hits.size(), count) << word;
      EXPECT_EQ(hits.front().cursor.seq, Seq(first)) << word;
      for (std::size_t i = 1; i < hits.size(); ++i)
        EXPECT_GT(hits[i - 1].time, hits[i].time) << word;
    }
  }
  EXPECT_EQ(Find("rare common", std::nullopt, 3).back().cursor.seq, Seq(4000));
  // Many matches, none among the newest documents.
  docs.clear();
  for (std::uint64_t i = 6001; i <= 12000; ++i) {
    docs.push_back(SearchDocument{Cursor{Epoch(1), Seq(i)}, 1'700'000'000'000 + TimestampMs(i),
                                  "assistant.message", "fresh"});
  }
  ASSERT_TRUE(
      store()
          .CommitDocuments({a, Cursor{Epoch(1), Seq(6000)}, Cursor{Epoch(1), Seq(12000)}, docs})
          .ok());
  const std::vector<SearchHit> old = Find("common", a, 20);
  ASSERT_EQ(old.size(), 20u);
  EXPECT_EQ(old.front().cursor.seq, Seq(6000));
  EXPECT_EQ(old.back().cursor.seq, Seq(5981));
}

TEST_P(SearchIndexTest, AStreamingMessageIsIndexedWholeOnceItEnds) {
  const SessionId a("ses_a");
  Create(a);
  Append(a, {UserMessage{MessageId("u1"), "c1", "go", {}},
             AssistantMessageStart{MessageId("m1"), MessageId("u1")},
             AssistantMessageDelta{MessageId("m1"), "stream"}});
  CatchUp(a);
  EXPECT_EQ(Find("go").size(), 1u);
  EXPECT_EQ(Find("stream").size(), 0u);  // still streaming
  Append(a, {AssistantMessageDelta{MessageId("m1"), "ing words"},
             AssistantMessageEnd{MessageId("m1"), "end_turn"}});
  CatchUp(a);
  EXPECT_EQ(Find("streaming words").size(), 1u);
  EXPECT_EQ(Find("stream").size(), 0u);  // whole words only, and no fragment was stored
}

TEST_P(SearchIndexTest, ForksAndRewindsIndexTheirOwnEventsAndAReopenKeepsTheIndex) {
  const SessionId root("ses_root"), child("ses_child");
  Create(root);
  Turn(root, "shared history", "inherited answer", "m1");
  CatchUp(root);
  ASSERT_TRUE(
      log().Fork(root, Cursor{Epoch(1), Seq(5)}, child, SessionMeta{"scripted", "/w"}, {}).ok());
  Turn(child, "fork question", "fork answer", "m2");
  CatchUp(child);
  EXPECT_EQ(Find("fork", child).size(), 2u);
  // The prefix is found where it was recorded: under the parent.
  const std::vector<SearchHit> shared = Find("shared");
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(shared[0].session, root);

  Turn(root, "dropped later", "soon rewound", "m3");
  CatchUp(root);
  ASSERT_TRUE(log().Rewind(root, Cursor{Epoch(1), Seq(5)}, {}).ok());
  Turn(root, "after the rewind", "new epoch text", "m4");
  CatchUp(root);
  const std::vector<SearchHit> fresh = Find("epoch", root);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].cursor.epoch, Epoch(2));
  EXPECT_EQ(fresh[0].cursor.seq, Seq(8));  // after the 5 kept events and the new turn's first 2
  EXPECT_EQ(Find("dropped", root)[0].cursor.epoch, Epoch(1));  // the old epoch's, as recorded

  backend_->Reopen();
  EXPECT_EQ(Find("epoch", root).size(), 1u);
  CatchUp(root);
  EXPECT_EQ(Find("epoch", root).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Stores, SearchIndexTest,
                         ::testing::Combine(::testing::Values("sqlite", "postgres"),
                                            ::testing::Values(std::size_t{1}, std::size_t{3})));

}  // namespace
}  // namespace agentstream
