// The search index of every store (search_index.h) read on one connection and on several at once
// (search_slices.h): the same hits in the same order, within the same limit, however the
// documents fall into the index's parts and whichever part the newest ones are in.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "store/search_slices.h"
#include "store/test_backend.h"

namespace agentstream {
namespace {

constexpr TimestampMs kBase = 1'700'000'000'000;

std::string Describe(const SearchHit& hit) {
  return hit.session.str() + "@" + std::to_string(hit.cursor.seq.value()) + "/" +
         std::to_string(hit.time);
}

std::vector<std::string> Describe(const std::vector<SearchHit>& hits) {
  std::vector<std::string> out;
  for (const SearchHit& hit : hits) out.push_back(Describe(hit));
  return out;
}

class SlicedSearchTest : public ::testing::TestWithParam<std::tuple<std::string, std::size_t>> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(std::get<0>(GetParam()), std::get<1>(GetParam()));
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
    ASSERT_NE(backend_->log().search_index(), nullptr);
  }
  SearchIndexStore& store() { return *backend_->log().search_index(); }

  // Documents seq 1..n of `session` (its state moves from nullopt to n), the i-th at time
  // kBase + time(i) holding text(i).
  template <class Time, class Text>
  void Commit(const SessionId& session, std::uint64_t n, Time time, Text text) {
    std::vector<SearchDocument> docs;
    for (std::uint64_t i = 1; i <= n; ++i)
      docs.push_back({Cursor{Epoch(1), Seq(i)}, kBase + time(i), "user.message", text(i)});
    ASSERT_TRUE(
        store().CommitDocuments({session, std::nullopt, Cursor{Epoch(1), Seq(n)}, docs}).ok());
  }
  std::vector<SearchHit> Find(std::vector<std::string> words, std::optional<SessionId> session,
                              std::size_t limit) {
    Result<std::vector<SearchHit>> hits =
        store().Search(SearchQuery{std::move(words), std::move(session), limit});
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<SearchHit>{};
  }

  std::unique_ptr<testing::Backend> backend_;
};

// 400 documents, one a millisecond, so that they fall into every part of the index: every limit
// answers the newest ones in order, none twice and none skipped.
TEST_P(SlicedSearchTest, EveryLimitAnswersTheNewestInOrderAcrossTheParts) {
  const SessionId a("ses_a");
  Commit(
      a, 400, [](std::uint64_t i) { return TimestampMs(i); },
      [](std::uint64_t i) { return i % 2 == 0 ? "even word" : "odd word"; });
  for (const std::size_t limit : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{20},
                                  std::size_t{199}, kMaxSearchHits}) {
    const std::vector<SearchHit> hits = Find({"word"}, std::nullopt, limit);
    ASSERT_EQ(hits.size(), limit);
    for (std::size_t i = 0; i < hits.size(); ++i) {
      EXPECT_EQ(hits[i].cursor.seq, Seq(400 - i)) << "limit " << limit << ", hit " << i;
      EXPECT_EQ(hits[i].time, kBase + TimestampMs(400 - i));
    }
    const std::vector<SearchHit> even = Find({"even"}, a, limit);
    ASSERT_EQ(even.size(), std::min<std::size_t>(limit, 200));
    for (std::size_t i = 0; i < even.size(); ++i) EXPECT_EQ(even[i].cursor.seq, Seq(400 - 2 * i));
  }
  // Two words, each in half the documents, never together: nothing, from every part.
  EXPECT_TRUE(Find({"even", "odd"}, std::nullopt, 20).empty());
}

// Matches only among the oldest documents, then only in one millisecond (so in one part on
// SQLite), then a limit the newest part alone could fill.
TEST_P(SlicedSearchTest, HitsOnlyAmongTheOldestOrInOnePartAreFound) {
  const SessionId a("ses_a");
  Commit(
      a, 300, [](std::uint64_t i) { return TimestampMs(i); },
      [](std::uint64_t i) { return i <= 3 ? "ancient text" : "recent text"; });
  EXPECT_EQ(Describe(Find({"ancient"}, std::nullopt, 20)),
            (std::vector<std::string>{"ses_a@3/" + std::to_string(kBase + 3),
                                      "ses_a@2/" + std::to_string(kBase + 2),
                                      "ses_a@1/" + std::to_string(kBase + 1)}));
  // Ten documents of one millisecond, newer than the rest: in the order they were added, the last
  // first, each once.
  const SessionId b("ses_b");
  Commit(
      b, 10, [](std::uint64_t) { return TimestampMs(1000); },
      [](std::uint64_t) { return "burst text"; });
  const std::vector<SearchHit> text = Find({"text"}, std::nullopt, 12);
  ASSERT_EQ(text.size(), 12u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(text[i].session, b);
    EXPECT_EQ(text[i].cursor.seq, Seq(10 - i));
  }
  EXPECT_EQ(Describe(text[10]), "ses_a@300/" + std::to_string(kBase + 300));
  EXPECT_EQ(Describe(text[11]), "ses_a@299/" + std::to_string(kBase + 299));
}

// Two sessions interleaved in time: the session filter keeps exactly one's hits, in order.
TEST_P(SlicedSearchTest, ASessionFilterKeepsItsOwnHitsFromEveryPart) {
  const SessionId a("ses_a"), b("ses_b"), ab("ses_a_b");
  Commit(
      a, 100, [](std::uint64_t i) { return TimestampMs(3 * i); },
      [](std::uint64_t) { return "shared words"; });
  Commit(
      b, 100, [](std::uint64_t i) { return TimestampMs(3 * i + 1); },
      [](std::uint64_t) { return "shared words"; });
  Commit(
      ab, 100, [](std::uint64_t i) { return TimestampMs(3 * i + 2); },
      [](std::uint64_t) { return "shared words"; });
  for (const SessionId& session : {a, b, ab}) {
    const std::vector<SearchHit> hits = Find({"shared", "words"}, session, 30);
    ASSERT_EQ(hits.size(), 30u);
    for (std::size_t i = 0; i < hits.size(); ++i) {
      EXPECT_EQ(hits[i].session, session);
      EXPECT_EQ(hits[i].cursor.seq, Seq(100 - i));
    }
  }
  const std::vector<SearchHit> all = Find({"shared"}, std::nullopt, 6);
  EXPECT_EQ(Describe(all), (std::vector<std::string>{
                               "ses_a_b@100/" + std::to_string(kBase + 302),
                               "ses_b@100/" + std::to_string(kBase + 301),
                               "ses_a@100/" + std::to_string(kBase + 300),
                               "ses_a_b@99/" + std::to_string(kBase + 299),
                               "ses_b@99/" + std::to_string(kBase + 298),
                               "ses_a@99/" + std::to_string(kBase + 297),
                           }));
}

INSTANTIATE_TEST_SUITE_P(Stores, SlicedSearchTest,
                         ::testing::Combine(::testing::Values("sqlite", "postgres"),
                                            ::testing::Values(std::size_t{1}, std::size_t{2},
                                                              std::size_t{3}, kSearchPartitions)));

// A stored document as the model sees it.
struct ModelDocument {
  SessionId session;
  std::uint64_t seq = 0;
  TimestampMs time = 0;
  std::set<std::string> words;
  std::size_t added = 0;  // the order documents were added in
};

// The hits a query should have: every word, the session, newest first (later added first within
// one millisecond), at most `limit`.
std::vector<std::string> Expected(const std::vector<ModelDocument>& docs,
                                  const std::vector<std::string>& words,
                                  const std::optional<SessionId>& session, std::size_t limit) {
  std::vector<const ModelDocument*> found;
  for (const ModelDocument& d : docs) {
    if (session && d.session != *session) continue;
    if (std::all_of(words.begin(), words.end(),
                    [&](const std::string& w) { return d.words.count(w) > 0; }))
      found.push_back(&d);
  }
  std::sort(found.begin(), found.end(), [](const ModelDocument* x, const ModelDocument* y) {
    return std::tie(x->time, x->added) > std::tie(y->time, y->added);
  });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < found.size() && i < limit; ++i) {
    out.push_back(found[i]->session.str() + "@" + std::to_string(found[i]->seq) + "/" +
                  std::to_string(found[i]->time));
  }
  return out;
}

class SlicedSearchProperty : public ::testing::TestWithParam<std::string> {};

// Random documents (few words, few sessions, many sharing a millisecond) added to one store read
// on one connection and to another read on kSearchPartitions at once: random queries answer the
// same hits, snippets included, and the hits a model of the index says.
TEST_P(SlicedSearchProperty, OneConnectionAndSeveralAnswerAlike) {
  std::unique_ptr<testing::Backend> one = testing::MakeBackend(GetParam(), 1);
  if (!one) GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
  std::unique_ptr<testing::Backend> many = testing::MakeBackend(GetParam(), kSearchPartitions);
  const std::vector<std::string> vocabulary = {"alpha", "beta", "gamma", "delta", "omega"};
  std::vector<ModelDocument> model;
  int round = 0;
  const bool passed = rc::check("sliced search equals one connection's and the model's", [&] {
    // A fresh session per round; the documents of earlier rounds stay and are searched too.
    const SessionId session("ses_" + std::to_string(round++));
    const auto n = *rc::gen::inRange<std::uint64_t>(1, 40);
    const TimestampMs start = kBase + *rc::gen::inRange<TimestampMs>(0, 200);
    std::vector<SearchDocument> docs;
    for (std::uint64_t i = 1; i <= n; ++i) {
      ModelDocument d{session, i, start + *rc::gen::inRange<TimestampMs>(0, 30), {}, model.size()};
      std::string text;
      for (const std::string& w : vocabulary) {
        if (*rc::gen::inRange(0, 3) == 0) {
          d.words.insert(w);
          text += w + " ";
        }
      }
      text += "filler";
      docs.push_back({Cursor{Epoch(1), Seq(i)}, d.time, "tool.output", text});
      model.push_back(std::move(d));
    }
    for (testing::Backend* b : {one.get(), many.get()}) {
      RC_ASSERT(b->log()
                    .search_index()
                    ->CommitDocuments({session, std::nullopt, Cursor{Epoch(1), Seq(n)}, docs})
                    .ok());
    }
    for (int q = 0; q < 4; ++q) {
      std::vector<std::string> words = {*rc::gen::elementOf(vocabulary)};
      if (*rc::gen::arbitrary<bool>()) words.push_back(*rc::gen::elementOf(vocabulary));
      std::optional<SessionId> in;
      if (*rc::gen::inRange(0, 3) == 0)
        in = SessionId("ses_" + std::to_string(*rc::gen::inRange(0, round)));
      const auto limit = *rc::gen::inRange<std::size_t>(1, 40);
      const SearchQuery query{words, in, limit};
      Result<std::vector<SearchHit>> a = one->log().search_index()->Search(query);
      Result<std::vector<SearchHit>> b = many->log().search_index()->Search(query);
      RC_ASSERT(a.ok() && b.ok());
      RC_ASSERT(*a == *b);
      RC_ASSERT(Describe(*a) == Expected(model, words, in, limit));
    }
  });
  EXPECT_TRUE(passed);
}

INSTANTIATE_TEST_SUITE_P(Stores, SlicedSearchProperty, ::testing::Values("sqlite", "postgres"));

// The merge itself: the newest `limit` of every slice's hits, whichever slice holds them.
TEST(MergeNewestFirst, KeepsTheNewestOfAllSlices) {
  auto hit = [](std::int64_t time, std::int64_t order) {
    return store_internal::RankedHit{
        {time, order},
        SearchHit{SessionId("s"), Cursor{Epoch(1), Seq(order)}, time, "user.message", ""}};
  };
  std::vector<std::vector<store_internal::RankedHit>> slices = {
      {hit(9, 1), hit(5, 2)}, {}, {hit(9, 3), hit(1, 4), hit(7, 5)}};
  const std::vector<SearchHit> merged = store_internal::MergeNewestFirst(slices, 4);
  std::vector<std::uint64_t> seqs;
  for (const SearchHit& h : merged) seqs.push_back(h.cursor.seq.value());
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{3, 1, 5, 2}));
  EXPECT_TRUE(store_internal::MergeNewestFirst(slices, 0).empty());
  EXPECT_EQ(store_internal::MergeNewestFirst(slices, 50).size(), 5u);
}

TEST(SearchSlices, EveryPartIsReadByExactlyOneSlice) {
  for (std::size_t slices = 1; slices <= kSearchPartitions; ++slices) {
    std::vector<int> reads(kSearchPartitions, 0);
    for (std::size_t slice = 0; slice < slices; ++slice) {
      const std::vector<std::size_t> parts = store_internal::PartsOfSlice(slice, slices);
      EXPECT_FALSE(parts.empty());
      for (const std::size_t p : parts) ++reads[p];
    }
    EXPECT_EQ(reads, std::vector<int>(kSearchPartitions, 1)) << slices << " slices";
  }
  EXPECT_EQ(store_internal::BoundSearchSlices(9, 4), kSearchPartitions);
  EXPECT_EQ(store_internal::BoundSearchSlices(3, 2), 2u);
  EXPECT_GE(store_internal::BoundSearchSlices(0, 4), 1u);
}

}  // namespace
}  // namespace agentstream
