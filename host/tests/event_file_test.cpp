// The event log format: round trip, and every kind of damage reported at its offset
// with the records around it still read.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/host/event_file.hpp"

namespace {

using arbiter::host::EventFileItem;
using arbiter::host::EventFileReader;

std::vector<uint8_t> record(const std::vector<uint8_t>& payload) {
    auto out = arbiter::host::encode_record_header(payload);
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

std::vector<uint8_t> file_of(const std::vector<std::vector<uint8_t>>& payloads) {
    std::vector<uint8_t> file(arbiter::host::kEventFileHeaderSize, 0);
    std::memcpy(file.data(), arbiter::host::kEventFileMagic, 8);
    file[8] = 1;
    for (const auto& p : payloads) {
        auto r = record(p);
        file.insert(file.end(), r.begin(), r.end());
    }
    return file;
}

std::vector<uint8_t> payload(uint8_t fill, size_t size) {
    return std::vector<uint8_t>(size, fill);
}

std::vector<EventFileItem> read_all(EventFileReader& reader) {
    std::vector<EventFileItem> items;
    while (auto item = reader.next())
        items.push_back(*item);
    return items;
}

size_t record_offset(size_t index, size_t payload_size) {
    return arbiter::host::kEventFileHeaderSize +
           index * (arbiter::host::kRecordHeaderSize + payload_size);
}

TEST(EventFile, Crc32IsTheStandardOne) {
    const char* text = "123456789";
    EXPECT_EQ(arbiter::host::crc32({reinterpret_cast<const uint8_t*>(text), 9}), 0xCBF43926u);
}

TEST(EventFile, WriteThenReadRoundTrips) {
    auto path = std::filesystem::temp_directory_path() / "arbiter-event-file-test.arbev";
    arbiter::host::write_event_file(path, {payload(1, 10), payload(2, 0), payload(3, 300)});
    EventFileReader reader(path);
    auto items = read_all(reader);
    ASSERT_EQ(items.size(), 3u);
    for (const auto& item : items)
        EXPECT_EQ(item.kind, EventFileItem::Kind::record);
    EXPECT_EQ(items[0].payload.size(), 10u);
    EXPECT_EQ(items[1].payload.size(), 0u);
    EXPECT_EQ(items[2].payload[299], 3);
    EXPECT_EQ(items[0].offset, 16u);
    std::filesystem::remove(path);
}

TEST(EventFile, FlippedPayloadByteIsReportedAndTheNextRecordIsRead) {
    auto file = file_of({payload(1, 40), payload(2, 40), payload(3, 40)});
    file[record_offset(1, 40) + 16 + 5] ^= 0x01;
    EventFileReader reader(file, "test");
    auto items = read_all(reader);
    ASSERT_EQ(items.size(), 3u);
    EXPECT_EQ(items[0].kind, EventFileItem::Kind::record);
    EXPECT_EQ(items[1].kind, EventFileItem::Kind::damage);
    EXPECT_EQ(items[1].offset, record_offset(1, 40));
    EXPECT_EQ(items[1].problem, "record payload checksum mismatch");
    EXPECT_EQ(items[1].skipped, 56u);
    EXPECT_EQ(items[2].kind, EventFileItem::Kind::record);
    EXPECT_EQ(items[2].payload[0], 3);
}

TEST(EventFile, DamagedLengthIsCaughtByTheHeaderChecksum) {
    auto file = file_of({payload(1, 40), payload(2, 40)});
    file[record_offset(0, 40) + 4] = 0xff;  // the length of record 0
    EventFileReader reader(file, "test");
    auto items = read_all(reader);
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].problem, "record header checksum mismatch");
    EXPECT_EQ(items[1].payload[0], 2);
}

TEST(EventFile, GarbageBetweenRecordsIsSkipped) {
    auto file = file_of({payload(1, 20)});
    std::vector<uint8_t> garbage = {'A', 'R', 'B', 'x', 'A', 'R', 'B', 'R', 0, 0,
                                    0,   0,   9,   9,   9,   9,   9,   9,   9};
    file.insert(file.end(), garbage.begin(), garbage.end());
    auto last = record(payload(2, 20));
    file.insert(file.end(), last.begin(), last.end());
    EventFileReader reader(file, "test");
    auto items = read_all(reader);
    ASSERT_EQ(items.size(), 3u);
    EXPECT_EQ(items[1].kind, EventFileItem::Kind::damage);
    EXPECT_EQ(items[1].problem, "no record magic \"ARBR\"");
    EXPECT_EQ(items[1].skipped, garbage.size());
    EXPECT_EQ(items[2].payload[0], 2);
}

TEST(EventFile, TruncatedLastRecordIsReported) {
    auto file = file_of({payload(1, 20), payload(2, 20)});
    file.resize(file.size() - 7);
    EventFileReader reader(file, "test");
    auto items = read_all(reader);
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].kind, EventFileItem::Kind::record);
    EXPECT_EQ(items[1].kind, EventFileItem::Kind::damage);
    EXPECT_EQ(items[1].problem, "truncated record: header says 20 bytes, the file has 13 left");

    auto header_only = file_of({payload(1, 20)});
    header_only.resize(header_only.size() - 30);
    EventFileReader short_reader(header_only, "test");
    auto short_items = read_all(short_reader);
    ASSERT_EQ(short_items.size(), 1u);
    EXPECT_NE(short_items[0].problem.find("truncated record header"), std::string::npos);
}

TEST(EventFile, OversizedRecordIsRefusedBeforeReading) {
    auto file = file_of({payload(1, 100), payload(2, 10)});
    EventFileReader reader(file, "test", 50);
    auto items = read_all(reader);
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].problem, "record of 100 bytes exceeds the cap of 50");
    EXPECT_EQ(items[1].payload[0], 2);
}

TEST(EventFile, NotAnEventLogIsRefusedWithTheReason) {
    std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r',
                                 'l', 'd', ' ', 't', 'e', 'x', 't', '!'};
    EXPECT_THROW(
        {
            try {
                EventFileReader reader(text, "notes.txt");
            } catch (const std::runtime_error& error) {
                EXPECT_STREQ(
                    error.what(),
                    "notes.txt: not an Arbiter event log: it does not begin with \"ARBEVLOG\"");
                throw;
            }
        },
        std::runtime_error);
    std::vector<uint8_t> empty;
    EXPECT_THROW(EventFileReader(empty, "empty"), std::runtime_error);
    auto newer = file_of({});
    newer[8] = 9;
    EXPECT_THROW(EventFileReader(newer, "newer"), std::runtime_error);
    EXPECT_THROW(EventFileReader(std::filesystem::path("/nonexistent.arbev")), std::runtime_error);
    EXPECT_THROW(EventFileReader(std::filesystem::path("/tmp")), std::runtime_error);
}

TEST(EventFile, WriterRefusesAnUnwritablePath) {
    EXPECT_THROW(arbiter::host::EventFileWriter("/nonexistent-dir/x.arbev"), std::runtime_error);
}

}  // namespace

namespace {

// A record header that checks out, claiming `length` bytes whose checksum is wrong.
std::vector<uint8_t> lying_header(uint32_t length) {
    std::vector<uint8_t> claimed(length, 0x5a);
    auto header = arbiter::host::encode_record_header(claimed);
    header[8] ^= 0xff;  // the payload checksum, which the header checksum does not cover...
    const uint32_t header_crc = arbiter::host::crc32({header.data(), 12});
    std::memcpy(header.data() + 12, &header_crc, 4);  // ...and the header checksum redone
    return header;
}

}  // namespace

TEST(EventFile, RangeCrcAgreesWithTheDirectChecksumOnEveryStretch) {
    std::vector<uint8_t> bytes(5000);
    uint32_t state = 12345;
    for (auto& byte : bytes)
        byte = static_cast<uint8_t>((state = state * 1103515245u + 12345u) >> 24);
    arbiter::host::RangeCrc ranges(bytes);
    // In reading order, forgetting behind as the reader does.
    for (uint64_t begin = 0; begin < bytes.size(); begin += 97) {
        ranges.forget_before(begin);
        for (uint64_t end : {begin, begin + 1, begin + 63, begin + 64, begin + 129, begin + 700,
                             begin + 3000, uint64_t{bytes.size()}}) {
            if (end > bytes.size()) continue;
            EXPECT_EQ(ranges.of(begin, end),
                      arbiter::host::crc32({bytes.data() + begin, end - begin}))
                << begin << ".." << end;
        }
    }
}

// On b9b94b3 each plausible header had its whole claimed payload checksummed from
// scratch: 1 MB of them took 82 s. Recovery now does work in proportion to the file.
TEST(EventFile, RecoveryFromHeadersEveryFewBytesIsLinear) {
    std::vector<uint8_t> file = file_of({});
    const auto header = lying_header(60000);
    while (file.size() < 256 * 1024)
        file.insert(file.end(), header.begin(), header.end());  // each inside the last's payload
    const auto good = record(payload(0x11, 300));
    file.insert(file.end(), good.begin(), good.end());

    EventFileReader reader(file, "hostile");
    const auto items = read_all(reader);
    ASSERT_FALSE(items.empty());
    EXPECT_EQ(items.front().kind, EventFileItem::Kind::damage);
    EXPECT_EQ(items.front().offset, arbiter::host::kEventFileHeaderSize);
    ASSERT_EQ(items.back().kind, EventFileItem::Kind::record) << "the good record is found";
    EXPECT_EQ(items.back().payload.size(), 300u);
    EXPECT_EQ(items.size(), 2u) << "one damage report for the whole stretch";
    EXPECT_LE(reader.bytes_checksummed(), 8 * file.size());
}
