#include "providers/subscribers.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace agentstream::providers {
namespace {

using turn::ProviderError;
using turn::ProviderEvent;

ProviderEvent E(const std::string& code) { return ProviderError{code, "", false}; }
std::string Code(const ProviderEvent& e) { return std::get<ProviderError>(e).code; }

TEST(SubscriberListTest, DeliversInOrderToEverySubscriber) {
  auto list = std::make_shared<SubscriberList>();
  std::vector<std::string> a, b;
  EventSubscription sa = list->Add([&](const ProviderEvent& e) { a.push_back(Code(e)); });
  EventSubscription sb = list->Add([&](const ProviderEvent& e) { b.push_back(Code(e)); });
  list->Publish(E("1"));
  list->Publish(E("2"));
  EXPECT_EQ(a, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(b, a);
}

TEST(SubscriberListTest, ReentrantPublishIsQueuedNotNested) {
  auto list = std::make_shared<SubscriberList>();
  std::vector<std::string> seen;
  int depth = 0, max_depth = 0;
  EventSubscription s = list->Add([&](const ProviderEvent& e) {
    max_depth = std::max(max_depth, ++depth);
    seen.push_back(Code(e));
    if (Code(e) == "1") list->Publish(E("3"));  // published from inside a callback
    --depth;
  });
  EventSubscription t = list->Add([&](const ProviderEvent& e) { seen.push_back("t" + Code(e)); });
  list->Publish(E("1"));
  EXPECT_EQ(max_depth, 1);
  // "1" reaches both subscribers before "3" reaches anyone: provider order is kept.
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "t1", "3", "t3"}));
}

TEST(SubscriberListTest, ThrowingSubscriberIsIsolated) {
  auto list = std::make_shared<SubscriberList>();
  std::vector<std::string> seen;
  EventSubscription bad = list->Add([](const ProviderEvent&) { throw std::runtime_error("boom"); });
  EventSubscription good = list->Add([&](const ProviderEvent& e) { seen.push_back(Code(e)); });
  list->Publish(E("1"));
  list->Publish(E("2"));
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(list->subscriber_errors(), 2u);
}

TEST(SubscriberListTest, UnsubscribeAndCloseStopDelivery) {
  auto list = std::make_shared<SubscriberList>();
  int a = 0, b = 0;
  EventSubscription sa = list->Add([&](const ProviderEvent&) { ++a; });
  EventSubscription sb;
  sb = list->Add([&](const ProviderEvent&) {
    ++b;
    sb.Cancel();  // a subscriber may unsubscribe itself while being called
  });
  list->Publish(E("1"));
  list->Publish(E("2"));
  EXPECT_EQ(a, 2);
  EXPECT_EQ(b, 1);
  sa.Cancel();
  list->Publish(E("3"));
  EXPECT_EQ(a, 2);
  EventSubscription sc = list->Add([&](const ProviderEvent&) { ++a; });
  list->Close();
  list->Publish(E("4"));
  EXPECT_EQ(a, 2);
  EXPECT_EQ(list->size(), 0u);
  EventSubscription after = list->Add([&](const ProviderEvent&) { ++a; });  // closed: a no-op
  list->Publish(E("5"));
  EXPECT_EQ(a, 2);
}

TEST(SubscriberListTest, SubscriptionMayOutliveTheList) {
  EventSubscription s;
  {
    auto list = std::make_shared<SubscriberList>();
    s = list->Add([](const ProviderEvent&) {});
  }
  s.Cancel();  // must not touch the destroyed list
  SUCCEED();
}

}  // namespace
}  // namespace agentstream::providers
