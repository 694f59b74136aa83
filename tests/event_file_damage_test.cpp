// Damaged event logs: each kind of damage is reported with its offset, the valid records
// before and after it are still read, and the players are still assessed. Files that
// are not event logs at all are refused with a clear error.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/host.hpp"
#include "support/host_helpers.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::filesystem::path sample_file() {
    return std::filesystem::path(SAMPLES_DIR) / "sample-match.arbev";
}

struct RecordSpan {
    uint64_t offset = 0;
    uint64_t size = 0;  // header and payload
};

// Where each record of an intact event log stands, from its headers.
std::vector<RecordSpan> index_records(const std::vector<uint8_t>& bytes) {
    std::vector<RecordSpan> records;
    uint64_t offset = host::kEventFileHeaderSize;
    while (offset + host::kRecordHeaderSize <= bytes.size()) {
        const uint8_t* length = bytes.data() + offset + 4;
        uint32_t payload = uint32_t(length[0]) | uint32_t(length[1]) << 8 |
                           uint32_t(length[2]) << 16 | uint32_t(length[3]) << 24;
        records.push_back({offset, host::kRecordHeaderSize + payload});
        offset += host::kRecordHeaderSize + payload;
    }
    return records;
}

struct ReadBack {
    std::vector<uint64_t> record_offsets;
    std::vector<host::EventFileItem> damage;  // payload spans are not used after reading
};

ReadBack read_all(const std::vector<uint8_t>& bytes) {
    host::EventFileReader reader(std::span<const uint8_t>(bytes), "damaged.arbev");
    ReadBack out;
    while (auto item = reader.next()) {
        if (item->kind == host::EventFileItem::Kind::record) {
            out.record_offsets.push_back(item->offset);
        } else {
            item->payload = {};
            out.damage.push_back(*item);
        }
    }
    return out;
}

// Every record's offset but those of `skip`, shifted by `shift` from record `shift_from` on.
std::vector<uint64_t> expected_offsets(const std::vector<RecordSpan>& records,
                                       std::vector<size_t> skip, size_t shift_from = SIZE_MAX,
                                       uint64_t shift = 0) {
    std::vector<uint64_t> out;
    for (size_t i = 0; i < records.size(); ++i) {
        if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
        out.push_back(records[i].offset + (i >= shift_from ? shift : 0));
    }
    return out;
}

// Replays an event log (in memory) through a host running the bundled plugin with the
// sample's settings, as `arbiter replay` does.
struct Replay {
    std::vector<host::Assessment> assessments;
    uint64_t refused = 0;
    uint64_t damaged = 0;
};

Replay replay(const std::vector<uint8_t>& bytes, const std::filesystem::path& work_dir) {
    std::string text = host_table(work_dir) + plugin_table("reference", reference_plugin()) +
                       "\n[plugins.reference.config.movement]\nmax_speed = 20.0\ntolerance = "
                       "1.1\nwindow_s = 1.0\n";
    host::Host host(parse(text, work_dir));
    Replay out;
    host::EventFileReader reader(std::span<const uint8_t>(bytes), "damaged.arbev");
    while (auto item = reader.next()) {
        if (item->kind == host::EventFileItem::Kind::damage) {
            ++out.damaged;
        } else if (host.push(item->payload)) {
            ++out.refused;
        }
    }
    host.close();
    out.assessments = host.assessments();
    return out;
}

// The sample's verdict: the two cheaters (mallory = 5, trent = 6) flagged, the four
// honest players clear.
void expect_sample_verdict(const Replay& result) {
    std::map<uint32_t, host::Action> actions;
    for (const auto& a : result.assessments)
        actions[a.player.player] = a.action;
    ASSERT_EQ(actions.size(), 6u);
    for (uint32_t honest = 1; honest <= 4; ++honest)
        EXPECT_EQ(actions[honest], host::Action::clear) << "player " << honest;
    EXPECT_EQ(actions[5], host::Action::flag_for_review) << "mallory";
    EXPECT_EQ(actions[6], host::Action::flag_for_review) << "trent";
}

class DamagedSample : public ::testing::Test {
  protected:
    void SetUp() override {
        original = read_bytes(sample_file());
        records = index_records(original);
        // 1201 records: the joins, then one per tick of a 60 s match.
        ASSERT_EQ(records.size(), 1201u);
        ASSERT_EQ(records.back().offset + records.back().size, original.size());
    }

    TempDir dir;
    std::vector<uint8_t> original;
    std::vector<RecordSpan> records;
    // Tick 100, five seconds in: well before either cheat (15 s and 25 s).
    static constexpr size_t kEarly = 100;
};

TEST_F(DamagedSample, TheIntactSampleReadsWithoutDamage) {
    auto read = read_all(original);
    EXPECT_TRUE(read.damage.empty());
    EXPECT_EQ(read.record_offsets, expected_offsets(records, {}));
    auto result = replay(original, dir.path());
    EXPECT_EQ(result.refused, 0u);
    expect_sample_verdict(result);
}

TEST_F(DamagedSample, FlippedPayloadBytesAreReportedAtTheirRecord) {
    auto bytes = original;
    const RecordSpan& hit = records[kEarly];
    for (uint64_t i = 40; i < 48; ++i)
        bytes[hit.offset + host::kRecordHeaderSize + i] ^= 0xff;

    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 1u);
    EXPECT_EQ(read.damage[0].offset, hit.offset);
    EXPECT_EQ(read.damage[0].skipped, hit.size);
    EXPECT_EQ(read.damage[0].problem, "record payload checksum mismatch");
    EXPECT_EQ(read.record_offsets, expected_offsets(records, {kEarly}));

    auto result = replay(bytes, dir.path());
    EXPECT_EQ(result.damaged, 1u);
    EXPECT_EQ(result.refused, 0u);
    expect_sample_verdict(result);
}

TEST_F(DamagedSample, ATruncatedLastRecordIsReportedAndTheRestIsRead) {
    const RecordSpan& last = records.back();
    std::vector<uint8_t> bytes(
        original.begin(),
        original.begin() + static_cast<long>(last.offset + host::kRecordHeaderSize +
                                             (last.size - host::kRecordHeaderSize) / 2));
    const uint64_t payload = last.size - host::kRecordHeaderSize;

    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 1u);
    EXPECT_EQ(read.damage[0].offset, last.offset);
    EXPECT_EQ(read.damage[0].skipped, bytes.size() - last.offset);
    EXPECT_EQ(read.damage[0].problem, "truncated record: header says " + std::to_string(payload) +
                                          " bytes, the file has " + std::to_string(payload / 2) +
                                          " left");
    EXPECT_EQ(read.record_offsets, expected_offsets(records, {records.size() - 1}));

    // The last record held the MatchEnd; closing the stream ends the match instead.
    auto result = replay(bytes, dir.path());
    EXPECT_EQ(result.damaged, 1u);
    expect_sample_verdict(result);
}

TEST_F(DamagedSample, ATruncatedRecordHeaderIsReported) {
    const RecordSpan& last = records.back();
    std::vector<uint8_t> bytes(original.begin(),
                               original.begin() + static_cast<long>(last.offset + 10));
    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 1u);
    EXPECT_EQ(read.damage[0].offset, last.offset);
    EXPECT_EQ(read.damage[0].skipped, 10u);
    EXPECT_EQ(read.damage[0].problem, "truncated record header: 10 bytes left, a header has 16");
    EXPECT_EQ(read.record_offsets, expected_offsets(records, {records.size() - 1}));
}

TEST_F(DamagedSample, AnOverwrittenRecordMagicIsReportedAtItsRecord) {
    auto bytes = original;
    const RecordSpan& hit = records[kEarly];
    std::memcpy(bytes.data() + hit.offset, "XXXX", 4);

    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 1u);
    EXPECT_EQ(read.damage[0].offset, hit.offset);
    EXPECT_EQ(read.damage[0].skipped, hit.size);
    EXPECT_EQ(read.damage[0].problem, "no record magic \"ARBR\"");
    EXPECT_EQ(read.record_offsets, expected_offsets(records, {kEarly}));

    auto result = replay(bytes, dir.path());
    EXPECT_EQ(result.damaged, 1u);
    expect_sample_verdict(result);
}

TEST_F(DamagedSample, ADamagedLengthIsCaughtByTheHeaderChecksum) {
    auto bytes = original;
    const RecordSpan& hit = records[kEarly];
    // A length that, trusted, would swallow the rest of the file.
    bytes[hit.offset + 6] ^= 0x10;

    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 1u);
    EXPECT_EQ(read.damage[0].offset, hit.offset);
    EXPECT_EQ(read.damage[0].skipped, hit.size);
    EXPECT_EQ(read.damage[0].problem, "record header checksum mismatch");
    EXPECT_EQ(read.record_offsets, expected_offsets(records, {kEarly}));
}

TEST_F(DamagedSample, BytesLostFromARecordCostThatRecordOnly) {
    // A stretch cut out of the middle of a payload: the header's length now reaches into
    // the next record, whose header the reader must still find.
    auto bytes = original;
    const RecordSpan& hit = records[kEarly];
    const uint64_t cut = 24;
    const auto from = bytes.begin() + static_cast<long>(hit.offset + host::kRecordHeaderSize + 8);
    bytes.erase(from, from + static_cast<long>(cut));

    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 1u);
    EXPECT_EQ(read.damage[0].offset, hit.offset);
    EXPECT_EQ(read.damage[0].skipped, hit.size - cut);
    EXPECT_EQ(read.damage[0].problem, "record payload checksum mismatch");
    // Every later record is read, at its new place.
    std::vector<uint64_t> expected;
    for (size_t i = 0; i < records.size(); ++i)
        if (i != kEarly) expected.push_back(records[i].offset - (i > kEarly ? cut : 0));
    EXPECT_EQ(read.record_offsets, expected);
}

TEST_F(DamagedSample, GarbageBetweenTwoRecordsIsSkippedExactly) {
    // Garbage that looks like the start of a record: the magic, then a header whose
    // checksum is wrong, then filler full of 'A's (the byte the reader scans for).
    std::vector<uint8_t> garbage = {'A', 'R', 'B', 'R', 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    garbage.resize(100, 'A');
    auto bytes = original;
    const size_t before = kEarly + 1;  // the garbage goes just before this record
    bytes.insert(bytes.begin() + static_cast<long>(records[before].offset), garbage.begin(),
                 garbage.end());

    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 1u);
    EXPECT_EQ(read.damage[0].offset, records[before].offset);
    EXPECT_EQ(read.damage[0].skipped, garbage.size());
    EXPECT_EQ(read.damage[0].problem, "record header checksum mismatch");
    EXPECT_EQ(read.record_offsets, expected_offsets(records, {}, before, garbage.size()));

    auto result = replay(bytes, dir.path());
    EXPECT_EQ(result.damaged, 1u);
    expect_sample_verdict(result);
}

TEST_F(DamagedSample, SeveralDamagesInOneFileAreEachReportedInOrder) {
    auto bytes = original;
    bytes[records[kEarly].offset + host::kRecordHeaderSize + 50] ^= 0x01;  // one bit of a payload
    std::memcpy(bytes.data() + records[kEarly + 200].offset, "arbr", 4);   // a magic
    bytes.resize(bytes.size() - 3);                                        // the tail

    auto read = read_all(bytes);
    ASSERT_EQ(read.damage.size(), 3u);
    EXPECT_EQ(read.damage[0].offset, records[kEarly].offset);
    EXPECT_EQ(read.damage[1].offset, records[kEarly + 200].offset);
    EXPECT_EQ(read.damage[2].offset, records.back().offset);
    EXPECT_EQ(read.record_offsets,
              expected_offsets(records, {kEarly, kEarly + 200, records.size() - 1}));
}

TEST_F(DamagedSample, AnIntactRecordThatIsNotABatchIsRefusedAndTheRestDelivered) {
    // A writer bug rather than damage: the record is intact, its payload is not a batch.
    const std::string junk = "this payload is not a FlatBuffer";
    std::vector<uint8_t> payload(junk.begin(), junk.end());
    auto header = host::encode_record_header(payload);
    auto bytes = original;
    const auto at = bytes.begin() + static_cast<long>(records[kEarly].offset);
    bytes.insert(at, payload.begin(), payload.end());
    bytes.insert(bytes.begin() + static_cast<long>(records[kEarly].offset), header.begin(),
                 header.end());

    auto read = read_all(bytes);
    EXPECT_TRUE(read.damage.empty());
    EXPECT_EQ(read.record_offsets.size(), records.size() + 1);

    std::string text = host_table(dir / "work") + plugin_table("reference", reference_plugin());
    host::Host host(parse(text, dir.path()));
    host::EventFileReader reader(std::span<const uint8_t>(bytes), "writer-bug.arbev");
    std::vector<std::string> refusals;
    while (auto item = reader.next())
        if (auto problem = host.push(item->payload)) refusals.push_back(*problem);
    ASSERT_EQ(refusals.size(), 1u);
    EXPECT_EQ(refusals[0], "not an event batch: file identifier is not \"ARB1\"");
    EXPECT_EQ(host.counters().refused_batches, 1u);
    EXPECT_EQ(host.counters().batches, records.size());
}

TEST(EventFile, AFileThatIsNotAnEventLogIsRefusedByName) {
    TempDir dir;
    const auto file = dir / "server_config.toml";
    write_text(file, "[host]\nserver_id = \"oops, wrong file\"\n");
    try {
        host::EventFileReader reader(file);
        FAIL() << "a TOML file was read as an event log";
    } catch (const std::runtime_error& error) {
        EXPECT_EQ(
            std::string(error.what()),
            file.string() + ": not an Arbiter event log: it does not begin with \"ARBEVLOG\"");
    }
}

TEST(EventFile, AnEmptyFileIsRefusedByName) {
    TempDir dir;
    const auto file = dir / "empty.arbev";
    write_text(file, "");
    try {
        host::EventFileReader reader(file);
        FAIL() << "an empty file was read as an event log";
    } catch (const std::runtime_error& error) {
        EXPECT_EQ(
            std::string(error.what()),
            file.string() + ": not an Arbiter event log: 0 bytes, shorter than the 16-byte header");
    }
}

TEST(EventFile, AHeaderOnlyFileIsAnEmptyLog) {
    TempDir dir;
    const auto file = dir / "no-records.arbev";
    host::write_event_file(file, {});
    host::EventFileReader reader(file);
    EXPECT_FALSE(reader.next());
}

TEST(EventFile, AMissingFileIsRefusedByName) {
    TempDir dir;
    const auto file = dir / "nowhere.arbev";
    try {
        host::EventFileReader reader(file);
        FAIL() << "a missing file was opened";
    } catch (const std::runtime_error& error) {
        EXPECT_EQ(std::string(error.what()),
                  file.string() + ": cannot open the event file: No such file or directory");
    }
}

TEST(EventFile, AFolderIsRefusedByName) {
    TempDir dir;
    try {
        host::EventFileReader reader(dir.path());
        FAIL() << "a folder was opened as an event log";
    } catch (const std::runtime_error& error) {
        EXPECT_EQ(std::string(error.what()), dir.path().string() + ": not a regular file");
    }
}

TEST(EventFile, ALaterFormatVersionIsRefusedWithBothVersions) {
    TempDir dir;
    const auto file = dir / "future.arbev";
    host::write_event_file(file, {});
    auto bytes = read_bytes(file);
    bytes[8] = 2;
    write_bytes(file, bytes);
    try {
        host::EventFileReader reader(file);
        FAIL() << "a version 2 log was read";
    } catch (const std::runtime_error& error) {
        EXPECT_EQ(std::string(error.what()),
                  file.string() + ": event log format version 2, this host reads version 1");
    }
}

}  // namespace
}  // namespace arbiter::test
