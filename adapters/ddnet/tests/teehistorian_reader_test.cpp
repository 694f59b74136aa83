// The teehistorian reader: every record kind DDNet 16.4 writes (and the extra records of
// later versions), its ticks, a file read as it grows, a file DDNet's own server wrote,
// and every way a file can be bad: not one, cut short, damaged, each unsound record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iterator>

#include "teehistorian_events.hpp"
#include "teehistorian_file.hpp"
#include "teehistorian_reader.hpp"
#include "teehistorian_writer.hpp"

namespace arbiter::ddnet {
namespace {

using test::put_int;
using test::put_string;
using test::put_uuid;
using test::ThWriter;

struct ReadAll {
    std::vector<ThRecord> records;
    std::vector<ThProblem> problems;
    ThStatus last = ThStatus::record;
    TeehistorianReader reader;
};

ReadAll read_all(const std::vector<uint8_t>& bytes, bool at_end = true) {
    ReadAll out;
    ThRecord record;
    for (;;) {
        const uint64_t at = out.reader.offset();
        out.last = out.reader.read(std::span(bytes).subspan(std::min<uint64_t>(at, bytes.size())),
                                   record, at_end);
        for (auto& p : out.reader.take_problems())
            out.problems.push_back(p);
        if (out.last != ThStatus::record) break;
        out.records.push_back(record);
    }
    return out;
}

ThInput an_input(int32_t direction, int32_t tx, int32_t ty, int32_t jump = 0, int32_t fire = 0,
                 int32_t hook = 0) {
    ThInput in;
    in.direction = direction;
    in.target_x = tx;
    in.target_y = ty;
    in.jump = jump;
    in.fire = fire;
    in.hook = hook;
    in.player_flags = 1;
    in.wanted_weapon = 1;
    return in;
}

std::vector<uint8_t> payload(std::initializer_list<int32_t> ints, const std::string& text = "",
                             bool with_text = false) {
    std::vector<uint8_t> out;
    for (int32_t v : ints)
        put_int(out, v);
    if (with_text) put_string(out, text);
    return out;
}

// A file of every base record kind, ticks 1 to 60.
std::vector<uint8_t> every_kind() {
    ThWriter w;
    w.begin_tick(1);
    w.join(0);
    w.message(0, test::start_info("alice"));
    w.begin_tick(2);
    w.player(0, 320, 640);               // player_new, explicit tick (nothing before)
    w.input(0, 7, an_input(0, 100, 0));  // input_new
    w.begin_tick(3);
    w.player(0, 330, 640);                 // player_diff, implicit tick (cid 0 <= 0)
    w.input(0, 7, an_input(1, 100, -20));  // input_diff
    w.begin_tick(50);
    w.player(0, 340, 641);  // after a gap: TICK_SKIP 46
    w.console(-1, 1, "say", {"hello", "world"});
    w.begin_tick(51);
    w.dead(0);  // player_old, implicit
    w.drop(0, "timeout");
    w.begin_tick(60);
    w.finish();
    return w.bytes();
}

TEST(TeehistorianReader, EveryRecordKindIsReadWithItsTick) {
    const auto file = read_all(every_kind());
    ASSERT_TRUE(file.problems.empty()) << file.problems.front().what;
    EXPECT_EQ(file.last, ThStatus::finished);
    std::vector<std::pair<std::string, int32_t>> got;
    for (const auto& r : file.records)
        got.emplace_back(std::string(th_kind_name(r.kind)) +
                             (r.kind == ThKind::ex ? std::string(":") + th_ex_name(r.ex) : ""),
                         r.tick);
    const std::vector<std::pair<std::string, int32_t>> want = {
        {"tick_skip", 1},    {"ex:teehistorian-joinver6@ddnet.tw", 1},
        {"join", 1},         {"message", 1},
        {"tick_skip", 2},    {"player_new", 2},
        {"input_new", 2},    {"player_diff", 3},
        {"input_diff", 3},   {"tick_skip", 50},
        {"player_diff", 50}, {"console_command", 50},
        {"player_old", 51},  {"drop", 51},
        {"finish", 51}};
    EXPECT_EQ(got, want);
    const auto& r = file.records;
    EXPECT_EQ(r[5].cid, 0);
    EXPECT_EQ(r[5].x, 320);
    EXPECT_EQ(r[5].y, 640);
    EXPECT_EQ(r[7].dx, 10);
    EXPECT_EQ(r[7].x, 330);
    EXPECT_EQ(r[10].x, 340);
    EXPECT_EQ(r[10].y, 641);
    EXPECT_EQ(r[9].dt, 46);
    EXPECT_EQ(r[6].input, an_input(0, 100, 0));
    EXPECT_EQ(r[8].input, an_input(1, 100, -20));
    EXPECT_EQ(r[8].input_before, an_input(0, 100, 0));
    EXPECT_EQ(r[3].data, test::start_info("alice"));
    EXPECT_EQ(r[11].cid, -1);
    EXPECT_EQ(r[11].flag_mask, 1);
    EXPECT_EQ(r[11].text, "say");
    EXPECT_EQ(r[11].args, (std::vector<std::string>{"hello", "world"}));
    EXPECT_EQ(r[13].text, "timeout");
    EXPECT_TRUE(file.reader.state().finished);
    EXPECT_NE(file.reader.header().json.find("Kobra 3 Solo"), std::string::npos);
}

TEST(TeehistorianReader, ImplicitTicksFollowTheClientIdsOfPositions) {
    ThWriter w;
    for (int32_t tick = 1; tick <= 4; ++tick) {
        w.begin_tick(tick);
        w.player(2, tick * 10, 0);
        w.player(5, tick * 10, 5);
    }
    w.begin_tick(5);
    w.player(7, 1, 1);  // a higher id than any before: an explicit tick
    w.finish();
    const auto file = read_all(w.bytes());
    ASSERT_TRUE(file.problems.empty());
    std::vector<int32_t> ticks;
    for (const auto& r : file.records)
        if (r.kind != ThKind::finish) ticks.push_back(r.tick);
    EXPECT_EQ(ticks, (std::vector<int32_t>{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
    EXPECT_EQ(file.records[8].kind, ThKind::tick_skip);
    EXPECT_EQ(file.records[8].dt, 0);
}

TEST(TeehistorianReader, EveryExtraRecordIsReadAndAnUnknownOneIsSkippedByItsLength) {
    ThUuid save_id{};
    save_id.fill(0x5a);
    ThWriter w;
    w.begin_tick(1);
    w.join(3, true);  // a 0.7 client
    auto with_uuid = [&](std::initializer_list<int32_t> before, const ThUuid& id,
                         std::initializer_list<int32_t> after, const std::string& text) {
        std::vector<uint8_t> out = payload(before);
        put_uuid(out, id);
        for (int32_t v : after)
            put_int(out, v);
        put_string(out, text);
        return out;
    };
    w.extra(th_uuid_of(ThEx::ddnetver), with_uuid({3}, save_id, {16040}, "DDNet 16.4"));
    w.extra(th_uuid_of(ThEx::ddnetver_old), payload({3, 15000}));
    w.extra(th_uuid_of(ThEx::auth_init), payload({3, 2}, "admin", true));
    w.extra(th_uuid_of(ThEx::auth_login), payload({3, 1}, "mod", true));
    w.extra(th_uuid_of(ThEx::auth_logout), payload({3}));
    w.extra(th_uuid_of(ThEx::player_swap), payload({3, 4}));
    w.extra(th_uuid_of(ThEx::save_success), with_uuid({9}, save_id, {}, "save text"));
    w.extra(th_uuid_of(ThEx::save_failure), payload({9}));
    w.extra(th_uuid_of(ThEx::load_success), with_uuid({9}, save_id, {}, "load text"));
    w.extra(th_uuid_of(ThEx::load_failure), payload({9}));
    w.extra(th_uuid_of(ThEx::player_team), payload({3, 9}));
    w.extra(th_uuid_of(ThEx::team_practice), payload({9, 1}));
    w.extra(th_uuid_of(ThEx::player_ready), payload({3}));
    w.extra(th_uuid_of(ThEx::player_rejoin), payload({3}));
    w.extra(th_uuid_of(ThEx::player_name), payload({3}, "renamed", true));
    w.extra(th_uuid_of(ThEx::player_finish), payload({3, 1234}));
    w.extra(th_uuid_of(ThEx::team_finish), payload({9, 4321}));
    w.extra(th_uuid_of(ThEx::antibot), {1, 2, 3});
    w.extra(th_uuid_of(ThEx::test), {});
    ThUuid other{};
    other.fill(0x11);
    w.extra(other, {9, 9, 9, 9, 9});  // a record of a later DDNet: skipped by its length
    w.begin_tick(2);
    w.player(3, 5, 5);  // read after it: the length was right
    w.finish();
    const auto file = read_all(w.bytes());
    ASSERT_TRUE(file.problems.empty()) << file.problems.front().what;
    std::vector<ThRecord> ex;
    for (const auto& r : file.records)
        if (r.kind == ThKind::ex) ex.push_back(r);
    ASSERT_EQ(ex.size(), 21u);
    EXPECT_EQ(ex[0].ex, ThEx::joinver7);
    EXPECT_EQ(ex[0].cid, 3);
    EXPECT_EQ(ex[1].ex, ThEx::ddnetver);
    EXPECT_EQ(ex[1].uuid, save_id);
    EXPECT_EQ(ex[1].value, 16040);
    EXPECT_EQ(ex[1].text, "DDNet 16.4");
    EXPECT_EQ(ex[2].ex, ThEx::ddnetver_old);
    EXPECT_EQ(ex[2].value, 15000);
    EXPECT_EQ(ex[3].ex, ThEx::auth_init);
    EXPECT_EQ(ex[3].level, 2);
    EXPECT_EQ(ex[3].text, "admin");
    EXPECT_EQ(ex[4].ex, ThEx::auth_login);
    EXPECT_EQ(ex[4].text, "mod");
    EXPECT_EQ(ex[5].ex, ThEx::auth_logout);
    EXPECT_EQ(ex[6].ex, ThEx::player_swap);
    EXPECT_EQ(ex[6].cid2, 4);
    EXPECT_EQ(ex[7].ex, ThEx::save_success);
    EXPECT_EQ(ex[7].team, 9);
    EXPECT_EQ(ex[7].uuid, save_id);
    EXPECT_EQ(ex[7].text, "save text");
    EXPECT_EQ(ex[8].ex, ThEx::save_failure);
    EXPECT_EQ(ex[9].ex, ThEx::load_success);
    EXPECT_EQ(ex[9].text, "load text");
    EXPECT_EQ(ex[10].ex, ThEx::load_failure);
    EXPECT_EQ(ex[11].ex, ThEx::player_team);
    EXPECT_EQ(ex[11].team, 9);
    EXPECT_EQ(ex[12].ex, ThEx::team_practice);
    EXPECT_EQ(ex[12].value, 1);
    EXPECT_EQ(ex[13].ex, ThEx::player_ready);
    EXPECT_EQ(ex[14].ex, ThEx::player_rejoin);
    EXPECT_EQ(ex[15].ex, ThEx::player_name);
    EXPECT_EQ(ex[15].text, "renamed");
    EXPECT_EQ(ex[16].ex, ThEx::player_finish);
    EXPECT_EQ(ex[16].value, 1234);
    EXPECT_EQ(ex[17].ex, ThEx::team_finish);
    EXPECT_EQ(ex[17].value, 4321);
    EXPECT_EQ(ex[18].ex, ThEx::antibot);
    EXPECT_EQ(ex[18].data, (std::vector<uint8_t>{1, 2, 3}));
    EXPECT_EQ(ex[19].ex, ThEx::test);
    EXPECT_EQ(ex[20].ex, ThEx::unknown);
    EXPECT_EQ(ex[20].uuid, other);
    EXPECT_EQ(ex[20].data.size(), 5u);
    EXPECT_EQ(file.records.back().kind, ThKind::finish);
}

TEST(TeehistorianReader, AFileReadAsItGrowsGivesTheSameRecords) {
    const auto bytes = every_kind();
    const auto whole = read_all(bytes);
    // Byte by byte, as a live file grows: each call sees what is there and waits at a cut.
    TeehistorianReader reader;
    std::vector<ThRecord> records;
    ThRecord record;
    for (size_t have = 0; have <= bytes.size(); ++have) {
        const std::span<const uint8_t> written(bytes.data(), have);
        while (reader.read(written.subspan(std::min<uint64_t>(reader.offset(), have)), record) ==
               ThStatus::record)
            records.push_back(record);
        EXPECT_TRUE(reader.take_problems().empty()) << "at " << have;
    }
    ASSERT_EQ(records.size(), whole.records.size());
    for (size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(records[i].kind, whole.records[i].kind) << i;
        EXPECT_EQ(records[i].tick, whole.records[i].tick) << i;
        EXPECT_EQ(records[i].offset, whole.records[i].offset) << i;
    }
}

TEST(TeehistorianReader, AReaderResumedAtATickStartReadsOnTheSame) {
    const auto bytes = every_kind();
    const auto whole = read_all(bytes);
    TeehistorianReader first;
    ThRecord record;
    // Read up to the record that begins tick 50.
    while (first.read(std::span(bytes).subspan(first.offset()), record) == ThStatus::record &&
           record.tick < 50) {
    }
    // The saved form of the state, back and forth, as the bridge keeps it.
    const ThState saved = th_state_from_json(th_state_to_json(first.tick_start_state()));
    EXPECT_EQ(saved, first.tick_start_state());
    TeehistorianReader again(first.tick_start_offset(), saved);
    std::vector<ThRecord> rest;
    while (again.read(std::span(bytes).subspan(again.offset()), record) == ThStatus::record)
        rest.push_back(record);
    ASSERT_EQ(rest.size(), 6u);  // tick_skip of tick 50 to the finish
    EXPECT_EQ(rest.front().kind, ThKind::tick_skip);
    EXPECT_EQ(rest.front().tick, 50);
    EXPECT_EQ(rest[1].x, 340);
    EXPECT_EQ(rest.back().kind, ThKind::finish);
}

TEST(TeehistorianReader, AFileThatIsNotATeehistorianIsRefusedSayingWhy) {
    {
        std::vector<uint8_t> bytes(64, 'x');
        const auto file = read_all(bytes);
        EXPECT_EQ(file.last, ThStatus::bad_header);
        EXPECT_NE(file.reader.header_problem().find("no teehistorian marker"), std::string::npos);
    }
    {
        std::vector<uint8_t> bytes(kTeehistorianUuid.begin(), kTeehistorianUuid.begin() + 10);
        EXPECT_EQ(read_all(bytes, false).last, ThStatus::need_more);  // live: more may come
        EXPECT_EQ(read_all(bytes, true).last, ThStatus::bad_header);
    }
    {
        std::vector<uint8_t> bytes(kTeehistorianUuid.begin(), kTeehistorianUuid.end());
        const std::string json = R"({"comment":"cut)";
        bytes.insert(bytes.end(), json.begin(), json.end());
        EXPECT_EQ(read_all(bytes, false).last, ThStatus::need_more);
        const auto file = read_all(bytes, true);
        EXPECT_EQ(file.last, ThStatus::bad_header);
        EXPECT_NE(file.reader.header_problem().find("ends inside its header"), std::string::npos);
    }
    {
        std::vector<uint8_t> bytes(kTeehistorianUuid.begin(), kTeehistorianUuid.end());
        bytes.resize(bytes.size() + kThMaxHeaderBytes + 10, '{');
        const auto file = read_all(bytes, false);
        EXPECT_EQ(file.last, ThStatus::bad_header);
        EXPECT_NE(file.reader.header_problem().find("longer than 1 MiB"), std::string::npos);
    }
}

TEST(TeehistorianReader, ACutOffTailWaitsLiveAndIsReportedByOffsetWhenTheFileIsWhole) {
    auto bytes = every_kind();
    bytes.pop_back();  // the FINISH
    const auto whole = read_all(bytes);
    // Cut inside the console command: live, the reader waits there.
    const size_t cut = static_cast<size_t>(whole.records[11].offset) + 3;
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut));
    const auto live = read_all(part, false);
    EXPECT_EQ(live.last, ThStatus::need_more);
    EXPECT_TRUE(live.problems.empty());
    EXPECT_EQ(live.records.size(), 11u);
    EXPECT_EQ(live.reader.offset(), whole.records[11].offset);
    const auto ended = read_all(part, true);
    ASSERT_EQ(ended.problems.size(), 1u);
    EXPECT_EQ(ended.problems[0].offset, whole.records[11].offset);
    EXPECT_NE(ended.problems[0].what.find("truncated tail"), std::string::npos);
    EXPECT_EQ(ended.records.size(), 11u);
}

TEST(TeehistorianReader, DamageIsReportedByOffsetAndTheRestIsRead) {
    // Two tees running for 200 ticks; 64 bytes in the middle zeroed.
    ThWriter w;
    w.begin_tick(1);
    for (int32_t tick = 1; tick <= 200; ++tick) {
        if (tick > 1) w.begin_tick(tick);
        w.player(0, 100 + tick * 3, 200);
        w.player(1, 500 - tick * 2, 200 + (tick % 7));
        w.input(0, 1, an_input(tick / 20 % 2, 50, tick % 30));
    }
    w.finish();
    auto bytes = w.bytes();
    const auto clean = read_all(bytes);
    ASSERT_TRUE(clean.problems.empty());
    const size_t at = bytes.size() / 2;
    std::fill(bytes.begin() + static_cast<ptrdiff_t>(at),
              bytes.begin() + static_cast<ptrdiff_t>(at + 64), 0);
    const auto damaged = read_all(bytes);
    ASSERT_EQ(damaged.problems.size(), 1u);
    EXPECT_GE(damaged.problems[0].offset, at - 40);
    EXPECT_LE(damaged.problems[0].offset, at);
    EXPECT_NE(damaged.problems[0].what.find("damaged"), std::string::npos);
    EXPECT_EQ(damaged.last, ThStatus::finished);
    EXPECT_GT(damaged.records.size(), clean.records.size() * 8 / 10);
    // After the damage the tees' positions are relative to moves that were lost.
    bool unknown_after = false;
    for (const auto& r : damaged.records)
        if (r.offset > at && r.kind == ThKind::player_diff) unknown_after |= !r.position_known;
    EXPECT_TRUE(unknown_after);
    EXPECT_GT(damaged.reader.skipped_bytes(), 0u);
}

TEST(TeehistorianReader, ADamagedTailOfAWholeFileIsSkippedToItsEnd) {
    auto bytes = every_kind();
    bytes.pop_back();
    const size_t at = bytes.size();
    for (int i = 0; i < 5; ++i)
        bytes.push_back(0x7f);  // -64: no such record kind
    const auto file = read_all(bytes, true);
    ASSERT_EQ(file.problems.size(), 1u);
    EXPECT_EQ(file.problems[0].offset, at);
    EXPECT_NE(file.problems[0].what.find("no record kind"), std::string::npos);
    EXPECT_EQ(file.reader.offset(), bytes.size());
    // Live, the reader waits to see whether sound records follow.
    EXPECT_TRUE(read_all(bytes, false).problems.empty());
}

// Each record the writer never writes, right after a sound start, is damage at its offset.
struct BadRecord {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* problem;
};

std::vector<uint8_t> ints(std::initializer_list<int32_t> values) {
    return payload(values);
}

std::vector<uint8_t> joined(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::vector<uint8_t> ex_record(const ThUuid& uuid, const std::vector<uint8_t>& data, int32_t size) {
    std::vector<uint8_t> out = ints({-11});
    put_uuid(out, uuid);
    put_int(out, size);
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

class BadRecords : public ::testing::TestWithParam<BadRecord> {};

TEST_P(BadRecords, AreReportedAtTheirOffset) {
    ThWriter w;
    w.begin_tick(1);
    w.player(0, 10, 10);
    auto bytes = w.bytes();
    const size_t at = bytes.size();
    bytes.insert(bytes.end(), GetParam().bytes.begin(), GetParam().bytes.end());
    const auto file = read_all(bytes, true);
    ASSERT_FALSE(file.problems.empty()) << GetParam().name;
    EXPECT_EQ(file.problems[0].offset, at) << GetParam().name;
    EXPECT_NE(file.problems[0].what.find(GetParam().problem), std::string::npos)
        << GetParam().name << ": " << file.problems[0].what;
}

std::vector<BadRecord> bad_records() {
    ThUuid unknown{};
    unknown.fill(3);
    std::string long_text(kThMaxStringBytes + 5, 'a');
    std::vector<uint8_t> long_drop = ints({-9, 0});
    long_drop.insert(long_drop.end(), long_text.begin(), long_text.end());
    return {
        {"client id 64", ints({64, 1, 1}), "client id 64 is out of range"},
        {"a move of nothing", ints({0, 0, 0}), "does not move"},
        {"new player id -1", ints({-3, -1, 0, 0}), "client id -1 is out of range"},
        {"negative tick skip", ints({-2, -5}), "tick skip -5"},
        {"input of id 70", ints({-6, 70, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "client id 70"},
        {"input difference of nothing", ints({-5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
         "changes nothing"},
        {"message too long", ints({-7, 0, kThMaxMessageBytes + 1}), "message size"},
        {"negative message size", ints({-7, 0, -1}), "message size"},
        {"unknown kind", ints({-12}), "no record kind -12"},
        {"console command of id 64", joined(ints({-10, 64, 0}), {'x', 0, 0}), "client id 64"},
        {"console command with 65 arguments",
         joined(ints({-10, 0, 0}), joined({'x', 0}, ints({65}))), "argument count 65"},
        {"a string without end", long_drop, "a string longer than"},
        {"extra record too long", ex_record(unknown, {}, kThMaxExBytes + 1), "extra record size"},
        {"extra record of negative size", ex_record(unknown, {}, -3), "extra record size"},
        {"a known extra record holding too much",
         ex_record(th_uuid_of(ThEx::player_ready), {0, 0}, 2), "holds what that record cannot"},
        {"a known extra record holding a bad id",
         ex_record(th_uuid_of(ThEx::joinver6), {0x40 | 5}, 1), "holds what that record cannot"},
    };
}

// Two tick skips of a year each would pass an int32_t: the second is damage, reported at
// its offset, and no record's tick is negative.
TEST(TeehistorianReader, ATickSkipPastTheLastTickIsDamage) {
    ThWriter w;
    w.begin_tick(1);
    w.player(0, 10, 10);
    auto bytes = w.bytes();
    const auto year = ints({-2, kThMaxTickSkip});
    bytes.insert(bytes.end(), year.begin(), year.end());
    const size_t second = bytes.size();
    bytes.insert(bytes.end(), year.begin(), year.end());
    const auto file = read_all(bytes, true);
    ASSERT_FALSE(file.problems.empty());
    EXPECT_EQ(file.problems[0].offset, second);
    EXPECT_NE(file.problems[0].what.find("past the last tick"), std::string::npos)
        << file.problems[0].what;
    for (const auto& record : file.records) EXPECT_GE(record.tick, 0);
}

INSTANTIATE_TEST_SUITE_P(Each, BadRecords, ::testing::ValuesIn(bad_records()),
                         [](const auto& each) {
                             std::string name;
                             for (char c : std::string(each.param.name))
                                 name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             return name;
                         });

TEST(TeehistorianReader, AFileOnDiskIsReadAsItGrows) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("arbiter-th-" + std::to_string(::getpid()) + ".teehistorian");
    const auto bytes = every_kind();
    // Cut inside the input of tick 2: the header and the records before it are there.
    const auto cut = static_cast<std::streamsize>(read_all(bytes).records[6].offset + 2);
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bytes.data()), cut);
    }
    ThFileReader file(path);
    ThRecord record;
    size_t read = 0;
    while (file.next(record, false) == ThStatus::record)
        ++read;
    const size_t first_part = read;
    {
        std::ofstream out(path, std::ios::binary | std::ios::app);
        out.write(reinterpret_cast<const char*>(bytes.data()) + cut,
                  static_cast<std::streamsize>(bytes.size()) - cut);
    }
    while (file.next(record, false) == ThStatus::record)
        ++read;
    EXPECT_EQ(first_part, 6u);
    EXPECT_EQ(read, read_all(bytes).records.size());
    EXPECT_THROW(ThFileReader(path, bytes.size() + 1), std::runtime_error);
    std::filesystem::remove(path);
    EXPECT_THROW(ThFileReader(path.string() + ".none"), std::runtime_error);
}

// A file DDNet 16.4's own server wrote: four bots of adapters/ddnet/bots for 25 s.
TEST(TeehistorianReader, AFileOfDdnetsOwnServerReadsWhole) {
    std::ifstream in(DDNET_TEEHISTORIAN_SAMPLE, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_EQ(bytes.size(), 27417u);
    const auto file = read_all(bytes);
    EXPECT_TRUE(file.problems.empty());
    EXPECT_EQ(file.last, ThStatus::finished);
    EXPECT_EQ(file.records.size(), 4639u);
    EXPECT_EQ(file.reader.offset(), bytes.size());
    size_t joins = 0, drops = 0, diffs = 0;
    for (const auto& r : file.records) {
        joins += r.kind == ThKind::join;
        drops += r.kind == ThKind::drop;
        diffs += r.kind == ThKind::input_diff;
    }
    EXPECT_EQ(joins, 4u);
    EXPECT_EQ(drops, 4u);
    EXPECT_EQ(diffs, 1108u);
    EXPECT_EQ(file.records.front().tick, 246);
    EXPECT_EQ(file.reader.state().tick, 1532);
}

}  // namespace
}  // namespace arbiter::ddnet
