// Lost input never convicts a player: 4 KB, 16 KB or 64 KB of the sample match zeroed at
// any offset, replayed through the bundled plugins with the sample's config, flags none
// of the four honest players, and each of them is told which batches were lost.
//
// What a zeroed window does depends only on which records it touches (a record is lost
// whole when any byte of it is damaged, and the reader resynchronises at the next intact
// one), so the sweep replays one window per distinct set of touched records, at the first
// and at the last offset that gives that set: every offset of the file is covered, with a
// few thousand replays instead of 800,000. The suite replays every 20th set (a quick slice
// spread over the whole file); ARBITER_SWEEP_STRIDE=1 replays them all, which is what
// `scripts/lost-input-sweep.sh` runs.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/config.hpp"
#include "arbiter/host/event_file.hpp"
#include "arbiter/host/host.hpp"
#include "support/host_helpers.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

std::filesystem::path sample_dir() {
    return std::filesystem::path(SAMPLES_DIR);
}

// Where each record of the intact sample begins.
std::vector<uint64_t> record_starts(const std::vector<uint8_t>& bytes) {
    host::EventFileReader reader(std::span<const uint8_t>(bytes), "sample-match.arbev");
    std::vector<uint64_t> starts;
    while (auto item = reader.next()) {
        EXPECT_EQ(item->kind, host::EventFileItem::Kind::record) << "the sample is intact";
        starts.push_back(item->offset);
    }
    return starts;
}

// The records a window [offset, offset + size) touches, as the file header (touched or
// not) and the first and last record index touched (first > last: none).
using Touched = std::tuple<bool, size_t, size_t>;

Touched touched_by(const std::vector<uint64_t>& starts, uint64_t offset, uint64_t size) {
    const uint64_t end = offset + size;  // exclusive
    const bool header = offset < starts.front();
    // The first record whose end is past offset, the last whose start is before end.
    auto first = std::upper_bound(starts.begin(), starts.end(), offset);
    size_t first_index =
        first == starts.begin() ? 0 : static_cast<size_t>(first - starts.begin()) - 1;
    auto last = std::lower_bound(starts.begin(), starts.end(), end);
    if (last == starts.begin()) return {header, 1, 0};
    const size_t last_index = static_cast<size_t>(last - starts.begin()) - 1;
    return {header, first_index, last_index};
}

struct Window {
    uint64_t offset = 0;
    Touched touched;
};

// One window at the first and one at the last offset of each distinct set of touched
// records, in file order.
std::vector<Window> distinct_windows(const std::vector<uint64_t>& starts, uint64_t file_size,
                                     uint64_t size) {
    std::vector<Window> windows;
    for (uint64_t offset = 0; offset + size <= file_size; ++offset) {
        const Touched touched = touched_by(starts, offset, size);
        if (!windows.empty() && windows.back().touched == touched) {
            // Same set as the window before: keep only the first and the last offset.
            if (windows.size() >= 2 && windows[windows.size() - 2].touched == touched)
                windows.back().offset = offset;
            else
                windows.push_back({offset, touched});
            continue;
        }
        windows.push_back({offset, touched});
    }
    return windows;
}

struct Outcome {
    std::map<uint32_t, host::Assessment> players;
    bool unreadable = false;
};

Outcome replay(const std::vector<uint8_t>& bytes, const host::ServerConfig& config) {
    Outcome out;
    host::Host host(config);
    std::unique_ptr<host::EventFileReader> reader;
    try {
        reader = std::make_unique<host::EventFileReader>(std::span<const uint8_t>(bytes),
                                                         "zeroed.arbev");
    } catch (const std::exception&) {
        out.unreadable = true;  // the file header itself was zeroed: nothing to judge
        return out;
    }
    while (auto item = reader->next()) {
        if (item->kind == host::EventFileItem::Kind::record)
            (void)host.push(item->payload);
        else
            host.input_damaged(host::damage_text("zeroed.arbev", *item));  // as `replay` does
    }
    host.close();
    for (auto& assessment : host.assessments())
        out.players[assessment.player.player] = std::move(assessment);
    return out;
}

size_t stride() {
    const char* text = std::getenv("ARBITER_SWEEP_STRIDE");
    const long value = text ? std::strtol(text, nullptr, 10) : 20;
    return value > 0 ? static_cast<size_t>(value) : 1;
}

class LostInputSweep : public ::testing::TestWithParam<uint64_t> {};

TEST_P(LostInputSweep, NoHonestPlayerIsFlaggedAndEachIsToldWhatWasLost) {
    const uint64_t size = GetParam();
    TempDir dir;
    host::ConfigLoadOptions options;
    options.bundled_plugin_dir = BUNDLED_PLUGIN_DIR;
    host::ServerConfig config = host::load_config(sample_dir() / "server_config.toml", options);
    config.host.work_dir = (dir / "work").string();
    // Each replay logs its gap as a warning; thousands of them say nothing here.
    const auto level = spdlog::get_level();
    spdlog::set_level(spdlog::level::off);

    const std::vector<uint8_t> original = read_bytes(sample_dir() / "sample-match.arbev");
    const std::vector<uint64_t> starts = record_starts(original);
    ASSERT_EQ(starts.size(), 1201u);
    const std::vector<Window> windows = distinct_windows(starts, original.size(), size);

    size_t replayed = 0, unreadable = 0, told = 0;
    const size_t step = stride();
    for (size_t i = 0; i < windows.size(); i += step) {
        const Window& window = windows[i];
        std::vector<uint8_t> bytes = original;
        std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(window.offset), size, uint8_t{0});
        const Outcome outcome = replay(bytes, config);
        ++replayed;
        if (outcome.unreadable) {
            ++unreadable;
            continue;
        }
        const auto [header, first, last] = window.touched;
        (void)header;
        for (uint32_t honest = 1; honest <= 4; ++honest) {
            const auto found = outcome.players.find(honest);
            if (found == outcome.players.end()) continue;  // their join was in the zeroed part
            const host::Assessment& assessment = found->second;
            EXPECT_NE(assessment.action, host::Action::flag_for_review)
                << "player " << honest << " with " << size << " bytes zeroed at offset "
                << window.offset << " (records " << first << " to " << last << ")";
            // Every lost stretch is known and said: a gap by the batch after it, the end of
            // the match by the damage before it.
            EXPECT_FALSE(assessment.lost_input.empty())
                << "player " << honest << ", offset " << window.offset;
            told += assessment.lost_input.empty() ? 0 : 1;
            if (last + 1 == starts.size() && !assessment.lost_input.empty()) {
                EXPECT_TRUE(assessment.lost_input.back().through_end)
                    << "player " << honest << ", offset " << window.offset;
            }
        }
        if (::testing::Test::HasFailure()) break;  // one window's failures are enough to read
    }
    std::printf(
        "%llu bytes zeroed: %zu distinct windows, %zu replayed (every %zu), %zu with the "
        "file header gone, %zu honest assessments told of the loss\n",
        static_cast<unsigned long long>(size), windows.size(), replayed, step, unreadable, told);
    spdlog::set_level(level);
}

INSTANTIATE_TEST_SUITE_P(Sizes, LostInputSweep, ::testing::Values(4096u, 16384u, 65536u),
                         [](const auto& size) {
                             return std::to_string(size.param / 1024) + "KiB";
                         });

}  // namespace
}  // namespace arbiter::test
