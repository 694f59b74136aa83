// The serve work queue's bounds (serve/work_queue.hpp): bytes counted at push with their
// peak kept, urgent items taken first, and a file watcher's repeated reload request not
// queued twice while the first still waits.
#include <gtest/gtest.h>

#include "serve/work_queue.hpp"

namespace {

using arbiter::host::serve::Work;
using arbiter::host::serve::WorkQueue;
using namespace std::chrono_literals;

Work batch(size_t bytes) {
    Work work;
    work.kind = Work::Kind::batch;
    work.payload.assign(bytes, 0);
    return work;
}

Work reload(const std::string& plugin, uint64_t connection = 0) {
    Work work;
    work.kind = Work::Kind::reload;
    work.text = plugin;
    work.connection = connection;
    return work;
}

TEST(WorkQueue, CountsBytesAtPushAndKeepsTheirPeak) {
    WorkQueue queue(1000);
    queue.push(batch(600));
    EXPECT_TRUE(queue.has_room());
    queue.push(batch(600));
    EXPECT_FALSE(queue.has_room());
    EXPECT_EQ(queue.queued_bytes(), 1200u);
    ASSERT_TRUE(queue.pop(0ms));
    EXPECT_EQ(queue.queued_bytes(), 600u);
    EXPECT_TRUE(queue.has_room());
    EXPECT_EQ(queue.peak_bytes(), 1200u);
}

TEST(WorkQueue, TakesUrgentItemsFirstWithoutCountingThem) {
    WorkQueue queue(10);
    queue.push(batch(50));
    queue.push_urgent(reload("a"));
    EXPECT_EQ(queue.queued_bytes(), 50u);
    auto first = queue.pop(0ms);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->kind, Work::Kind::reload);
    EXPECT_EQ(queue.pop(0ms)->kind, Work::Kind::batch);
    EXPECT_FALSE(queue.pop(0ms));
}

TEST(WorkQueue, AWatchersRepeatedRequestWaitsOnceButAnOperatorsIsAlwaysQueued) {
    WorkQueue queue(10);
    for (int i = 0; i < 100; ++i) {
        queue.push_urgent(reload("kaladin"));
        Work config;
        config.kind = Work::Kind::config_changed;
        queue.push_urgent(std::move(config));
    }
    queue.push_urgent(reload("lagpool"));
    EXPECT_EQ(queue.urgent_items(), 3u) << "one reload per plugin and one config change";
    // `arbiter ctl reload` is answered on its own connection: never folded into another.
    queue.push_urgent(reload("kaladin", 7));
    queue.push_urgent(reload("kaladin", 8));
    EXPECT_EQ(queue.urgent_items(), 5u);
    // Once taken, the same change is a new request again.
    ASSERT_EQ(queue.pop(0ms)->text, "kaladin");
    queue.push_urgent(reload("kaladin"));
    EXPECT_EQ(queue.urgent_items(), 5u);
}

}  // namespace
