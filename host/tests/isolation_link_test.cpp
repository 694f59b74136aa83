// The link to an isolated plugin's runner (host/src/isolation): messages larger than the
// shared memory cross in acknowledged chunks, and whatever the runner sends, the host
// either reads a well-formed reply or stops with a ChannelError that says what was wrong.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "isolation/channel.hpp"
#include "isolation/messages.hpp"

namespace arbiter::host::isolation {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

struct Link {
    int fds[2] = {-1, -1};
    std::vector<uint8_t> memory = std::vector<uint8_t>(2 * 4096);
    SharedAreas areas{memory.data(), 4096, 4096};
    Link() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0); }
    ~Link() {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    Clock::time_point soon() const { return Clock::now() + std::chrono::seconds(5); }
};

TEST(IsolationLink, AMessageLargerThanTheSharedMemoryCrossesInChunks) {
    Link link;
    Channel host(link.fds[0], link.areas, Channel::Side::host);
    Channel runner(link.fds[1], link.areas, Channel::Side::runner);
    std::vector<uint8_t> request(3 * 4096 + 17), reply(2 * 4096 + 5);
    for (size_t i = 0; i < request.size(); ++i) request[i] = static_cast<uint8_t>(i * 7);
    for (size_t i = 0; i < reply.size(); ++i) reply[i] = static_cast<uint8_t>(i * 13);
    std::vector<uint8_t> received_by_runner;
    std::thread other([&] {
        auto message = runner.receive(link.soon(), 1 << 20);
        EXPECT_EQ(message.op, Op::batch);
        received_by_runner.assign(message.payload.begin(), message.payload.end());
        runner.send(Op::reply, reply, link.soon());
    });
    host.send(Op::batch, request, link.soon());
    auto answer = host.receive(link.soon(), 1 << 20);
    other.join();
    EXPECT_EQ(received_by_runner, request);
    EXPECT_EQ(answer.op, Op::reply);
    EXPECT_EQ(std::vector<uint8_t>(answer.payload.begin(), answer.payload.end()), reply);
}

TEST(IsolationLink, TheHostReadsACopyThatTheRunnerCannotChangeAfterwards) {
    Link link;
    Channel host(link.fds[0], link.areas, Channel::Side::host);
    Channel runner(link.fds[1], link.areas, Channel::Side::runner);
    const std::vector<uint8_t> reply = {1, 2, 3, 4};
    runner.send(Op::reply, reply, link.soon());
    auto answer = host.receive(link.soon(), 1024);
    std::memset(link.areas.replies().data(), 0xff, 4);  // the runner writes its area again
    EXPECT_EQ(std::vector<uint8_t>(answer.payload.begin(), answer.payload.end()), reply);
}

void send_raw(const Link& link, Frame frame) {
    ASSERT_EQ(::send(link.fds[1], &frame, sizeof frame, 0), static_cast<ssize_t>(sizeof frame));
}

std::string receive_error(Link& link, uint64_t limit = 1 << 20) {
    Channel host(link.fds[0], link.areas, Channel::Side::host);
    try {
        host.receive(Clock::now() + std::chrono::milliseconds(200), limit);
    } catch (const ChannelError& error) {
        return error.what();
    }
    return "";
}

TEST(IsolationLink, FramesThatLieAboutTheirSizesAreRefused) {
    {
        Link link;
        send_raw(link, {100, 0, 1 << 30, 10});
        EXPECT_THAT(receive_error(link), HasSubstr("more than the 1048576 allowed"));
    }
    {
        Link link;
        send_raw(link, {100, 0, 8000, 8000});  // larger than the area
        EXPECT_THAT(receive_error(link), HasSubstr("does not fit its message"));
    }
    {
        Link link;
        send_raw(link, {100, 0, 100, 50});  // says it is the last chunk, but half is missing
        EXPECT_THAT(receive_error(link), HasSubstr("ends at 50 of its 100 bytes"));
    }
    {
        Link link;
        send_raw(link, {100, kMoreChunks, 100, 0});
        EXPECT_THAT(receive_error(link), HasSubstr("an empty chunk"));
    }
    {
        Link link;
        const uint8_t short_frame[5] = {};
        ASSERT_EQ(::send(link.fds[1], short_frame, sizeof short_frame, 0), 5);
        EXPECT_THAT(receive_error(link), HasSubstr("a frame of 5 bytes"));
    }
}

TEST(IsolationLink, SilenceIsATimeoutAndAClosedLinkSaysSo) {
    {
        Link link;
        EXPECT_THAT(receive_error(link), HasSubstr("no answer before the deadline"));
    }
    {
        Link link;
        ::shutdown(link.fds[1], SHUT_WR);
        EXPECT_THAT(receive_error(link), HasSubstr("closed"));
    }
}

TEST(IsolationLink, AForbiddenCallFrameNamesTheCall) {
    Link link;
    send_raw(link, {static_cast<uint32_t>(Op::forbidden_call), 0, 41, 0});
    Channel host(link.fds[0], link.areas, Channel::Side::host);
    try {
        host.receive(link.soon(), 1024);
        FAIL() << "no error";
    } catch (const ChannelError& error) {
        EXPECT_EQ(error.kind(), ChannelError::Kind::forbidden_call);
        EXPECT_EQ(error.detail(), 41);
    }
}

RunnerReply sample_reply() {
    RunnerReply reply;
    reply.call.signals.push_back({7, "movement.speed", 0.5, 0.75, true, "{\"v\":1}"});
    reply.blob = std::vector<uint8_t>{9, 8, 7};
    reply.logs.push_back({2, "[plugin x] hello"});
    reply.metrics.push_back({"x.seen", false, 3.0});
    PluginIdentity identity;
    identity.name = "x";
    identity.abi_major = 1;
    identity.abi_minor = identity.abi_minor_in_use = 1;
    identity.declared_class = ModelClass::behavioural;
    identity.capabilities = ARB_CAP_STATE;
    reply.identity = identity;
    return reply;
}

TEST(IsolationLink, AReplyRoundTrips) {
    const RunnerReply decoded = decode_reply(encode_reply(sample_reply()));
    ASSERT_EQ(decoded.call.signals.size(), 1u);
    EXPECT_EQ(decoded.call.signals[0].code, "movement.speed");
    EXPECT_TRUE(decoded.call.signals[0].tripwire);
    EXPECT_EQ(*decoded.blob, (std::vector<uint8_t>{9, 8, 7}));
    EXPECT_EQ(decoded.logs[0].text, "[plugin x] hello");
    EXPECT_EQ(decoded.metrics[0].value, 3.0);
    EXPECT_EQ(decoded.identity->declared_class, ModelClass::behavioural);
}

std::string decode_error(const std::vector<uint8_t>& bytes) {
    try {
        decode_reply(bytes);
    } catch (const ChannelError& error) {
        return error.what();
    }
    return "";
}

TEST(IsolationLink, EveryCutOfAReplyIsRefusedNotRead) {
    const std::vector<uint8_t> whole = encode_reply(sample_reply());
    for (size_t size = 0; size < whole.size(); ++size) {
        const std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<ptrdiff_t>(size));
        EXPECT_NE(decode_error(cut), "") << "cut at " << size;
    }
    std::vector<uint8_t> longer = whole;
    longer.push_back(0);
    EXPECT_THAT(decode_error(longer), HasSubstr("1 bytes after the end"));
}

TEST(IsolationLink, LiesInsideAReplyAreRefused) {
    {
        MessageWriter out;  // a count of signals no reply of this size can hold
        out.u32(0).text("").u64(1'000'000);
        EXPECT_THAT(decode_error(out.data()), HasSubstr("signals in a reply of"));
    }
    {
        RunnerReply reply = sample_reply();
        reply.identity->capabilities = 1ull << 40;
        EXPECT_THAT(decode_error(encode_reply(reply)), HasSubstr("unknown capability bits"));
    }
    {
        RunnerReply reply = sample_reply();
        reply.identity->abi_major = 2;
        EXPECT_THAT(decode_error(encode_reply(reply)), HasSubstr("ABI 2."));
    }
    {
        RunnerReply reply = sample_reply();
        reply.identity->name = std::string("\xff\xfe", 2);
        EXPECT_THAT(decode_error(encode_reply(reply)), HasSubstr("not UTF-8"));
    }
    {
        RunnerReply reply = sample_reply();
        reply.metrics[0].value = std::numeric_limits<double>::infinity();
        EXPECT_THAT(decode_error(encode_reply(reply)), HasSubstr("not a finite number"));
    }
    {
        RunnerReply reply = sample_reply();
        reply.logs[0].level = 9;
        EXPECT_THAT(decode_error(encode_reply(reply)), HasSubstr("log line of level 9"));
    }
    {
        RunnerReply reply = sample_reply();
        reply.call.signals[0].code = std::string(200, 'a');
        EXPECT_THAT(decode_error(encode_reply(reply)), HasSubstr("a field of 200 bytes"));
    }
}

}  // namespace
}  // namespace arbiter::host::isolation
