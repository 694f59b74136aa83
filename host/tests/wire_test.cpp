// The serve protocol's framing: frames come out whole however the bytes are split, and
// each kind of damage is reported and passed over without losing the frames after it.
#include <string>

#include <gtest/gtest.h>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/wire.hpp"

namespace {

using namespace arbiter::host::wire;

std::vector<uint8_t> bytes_of(const std::string& text) {
    return {text.begin(), text.end()};
}

std::vector<uint8_t> stream(const std::vector<std::pair<FrameKind, std::string>>& frames) {
    std::vector<uint8_t> out = stream_header();
    for (const auto& [kind, payload] : frames)
        append_frame(out, kind, payload);
    return out;
}

// Everything the decoder yields for `bytes` fed in pieces of `piece` bytes.
std::vector<Decoded> decode(const std::vector<uint8_t>& bytes, size_t piece,
                            uint32_t max_payload = 1024) {
    FrameDecoder decoder(max_payload);
    std::vector<Decoded> out;
    for (size_t at = 0; at < bytes.size(); at += piece) {
        decoder.feed(std::span(bytes).subspan(at, std::min(piece, bytes.size() - at)));
        while (auto decoded = decoder.next())
            out.push_back(std::move(*decoded));
    }
    return out;
}

std::string text_of(const Decoded& decoded) {
    return decoded.frame ? std::string(decoded.frame->payload.begin(), decoded.frame->payload.end())
                         : "";
}

TEST(Wire, FramesComeOutWholeHoweverTheBytesAreSplit) {
    const auto bytes = stream({{FrameKind::hello, "{\"relay\":\"r\"}"},
                               {FrameKind::batch, "batch-one"},
                               {FrameKind::sync, "{\"id\":1}"},
                               {FrameKind::batch, ""}});
    for (size_t piece : {size_t{1}, size_t{3}, size_t{16}, size_t{17}, bytes.size()}) {
        auto decoded = decode(bytes, piece);
        ASSERT_EQ(decoded.size(), 4u) << "pieces of " << piece;
        EXPECT_EQ(decoded[0].frame->kind, FrameKind::hello);
        EXPECT_EQ(text_of(decoded[1]), "batch-one");
        EXPECT_EQ(decoded[1].frame->offset, 16u + 16u + 13u);
        EXPECT_EQ(decoded[2].frame->kind, FrameKind::sync);
        EXPECT_EQ(decoded[3].frame->kind, FrameKind::batch);
        EXPECT_TRUE(decoded[3].frame->payload.empty());
    }
}

TEST(Wire, AnEventFileIsAValidStream) {
    // The same header and record layout: a recorded match streams unchanged.
    std::vector<uint8_t> file = stream_header();
    const auto payload = bytes_of("a batch");
    const auto header = arbiter::host::encode_record_header(payload);
    file.insert(file.end(), header.begin(), header.end());
    file.insert(file.end(), payload.begin(), payload.end());
    auto decoded = decode(file, 5);
    ASSERT_EQ(decoded.size(), 1u);
    EXPECT_EQ(decoded[0].frame->kind, FrameKind::batch);
    EXPECT_EQ(text_of(decoded[0]), "a batch");
}

TEST(Wire, SomethingElseIsFatalFromTheFirstBytes) {
    auto decoded = decode(bytes_of("GET / HTTP/1.1\r\nHost: example\r\n\r\n"), 7);
    ASSERT_EQ(decoded.size(), 1u);
    EXPECT_TRUE(decoded[0].fatal);
    EXPECT_NE(decoded[0].problem.find("ARBEVLOG"), std::string::npos);

    auto future = stream({});
    future[8] = 2;
    decoded = decode(future, 16);
    ASSERT_EQ(decoded.size(), 1u);
    EXPECT_TRUE(decoded[0].fatal);
    EXPECT_NE(decoded[0].problem.find("version 2 is not supported"), std::string::npos);
}

TEST(Wire, ADamagedHeaderIsReportedOnceAndTheNextFrameIsFound) {
    auto bytes = stream(
        {{FrameKind::batch, "first"}, {FrameKind::batch, "second"}, {FrameKind::batch, "third"}});
    bytes[16 + 16 + 5 + 6] ^= 0x10;  // the second frame's length
    for (size_t piece : {size_t{1}, size_t{9}, bytes.size()}) {
        auto decoded = decode(bytes, piece);
        ASSERT_EQ(decoded.size(), 3u) << "pieces of " << piece;
        EXPECT_EQ(text_of(decoded[0]), "first");
        EXPECT_NE(decoded[1].problem.find("frame header checksum mismatch"), std::string::npos);
        EXPECT_EQ(decoded[1].offset, 16u + 21u);
        EXPECT_EQ(text_of(decoded[2]), "third");
    }
}

TEST(Wire, AnOversizedFrameIsPassedOverWithoutBeingHeld) {
    const std::string big(5000, 'x');
    const auto bytes = stream({{FrameKind::batch, big}, {FrameKind::batch, "after"}});
    FrameDecoder decoder(1024);
    std::vector<Decoded> out;
    size_t most_pending = 0;
    for (size_t at = 0; at < bytes.size(); at += 100) {
        decoder.feed(std::span(bytes).subspan(at, std::min<size_t>(100, bytes.size() - at)));
        while (auto decoded = decoder.next())
            out.push_back(std::move(*decoded));
        most_pending = std::max(most_pending, decoder.pending_bytes());
    }
    ASSERT_EQ(out.size(), 2u);
    EXPECT_NE(out[0].problem.find("a message of 5000 bytes is over the limit of 1024 bytes"),
              std::string::npos);
    EXPECT_EQ(text_of(out[1]), "after");
    EXPECT_LE(most_pending, 100u + 16u) << "the decoder held the oversized payload";
}

TEST(Wire, BadPayloadsAndUnknownKindsAreDroppedAlone) {
    auto bytes = stream({{FrameKind::batch, "damaged"}, {FrameKind::batch, "fine"}});
    bytes[16 + 16] ^= 0x01;  // the first payload
    std::vector<uint8_t> unknown = stream({{FrameKind::batch, "mystery"}});
    std::copy_n("ARBZ", 4, unknown.begin() + 16);
    const uint32_t crc = arbiter::host::crc32({unknown.data() + 16, 12});
    for (int i = 0; i < 4; ++i)
        unknown[16 + 12 + i] = static_cast<uint8_t>(crc >> (8 * i));
    bytes.insert(bytes.end(), unknown.begin() + 16, unknown.end());
    append_frame(bytes, FrameKind::sync, std::string("{}"));

    auto decoded = decode(bytes, 4);
    ASSERT_EQ(decoded.size(), 4u);
    EXPECT_NE(decoded[0].problem.find("payload checksum mismatch"), std::string::npos);
    EXPECT_EQ(text_of(decoded[1]), "fine");
    EXPECT_NE(decoded[2].problem.find("unknown frame kind 'ARBZ'"), std::string::npos);
    EXPECT_EQ(decoded[3].frame->kind, FrameKind::sync);
}

TEST(Wire, PendingBytesTellOfAFrameLeftUnfinished) {
    auto bytes = stream({{FrameKind::batch, "complete"}, {FrameKind::batch, "cut short"}});
    bytes.resize(bytes.size() - 4);
    FrameDecoder decoder(1024);
    decoder.feed(bytes);
    ASSERT_TRUE(decoder.next());
    EXPECT_FALSE(decoder.next());
    EXPECT_EQ(decoder.pending_bytes(), 16u + 9u - 4u);
}

TEST(Wire, EveryKindHasItsOwnMagic) {
    for (FrameKind kind : {FrameKind::hello, FrameKind::batch, FrameKind::sync, FrameKind::welcome,
                           FrameKind::assessment, FrameKind::error}) {
        const char* magic = magic_of(kind);
        auto back =
            kind_of(std::span<const uint8_t, 4>(reinterpret_cast<const uint8_t*>(magic), 4));
        ASSERT_TRUE(back);
        EXPECT_EQ(*back, kind);
    }
    EXPECT_STREQ(magic_of(FrameKind::batch), "ARBR");  // the event file's record magic
}

}  // namespace
