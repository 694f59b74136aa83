#include "run_events.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>

#include <gtest/gtest.h>

#include "arbiter/host/event_file.hpp"

namespace arbiter::kaladin::test {

std::map<MatchPlayer, PlayerSignals> run_file(const std::filesystem::path& events,
                                              const std::vector<uint8_t>& baseline) {
    std::map<MatchPlayer, PlayerSignals> out;
    std::map<uint64_t, std::string> games;
    testing::Harness<KaladinAnalyzer> harness(ConfigValue::table({}), baseline);
    if (!harness.ok()) {
        ADD_FAILURE() << harness.error();
        return out;
    }
    host::EventFileReader reader(events);
    while (auto item = reader.next()) {
        if (item->kind != host::EventFileItem::Kind::record) {
            ADD_FAILURE() << events << ": damaged: " << item->problem;
            continue;
        }
        auto batch = Batch::verified(item->payload);
        if (!batch) {
            ADD_FAILURE() << events << ": a record is not an EventBatch";
            continue;
        }
        const uint64_t match = batch->match_id();
        bool ends = false;
        for (const fb::Event* event : batch->events()) {
            if (auto* start = event->body_as_MatchStart())
                games[match] =
                    std::string(str(start->game())) + " / " + std::string(str(start->map()));
            if (event->player() != 0) out[{match, event->player()}].game = games[match];
            ends = ends || event->body_type() == fb::EventBody::MatchEnd;
        }
        for (auto& s : harness.feed(item->payload))
            out[{match, s.player}].signals.push_back(std::move(s));
        if (ends)
            for (auto& s : harness.end_match(std::string(batch->relay_id()), match))
                out[{match, s.player}].signals.push_back(std::move(s));
    }
    return out;
}

int run_command(const std::string& command, std::string& output) {
    output.clear();
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return -1;
    std::array<char, 4096> buffer;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
        output.append(buffer.data(), n);
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::filesystem::path work_dir(const std::string& name) {
    // ctest runs tests in parallel, one process each: a folder per test and process, or
    // one test's set-up deletes the files of another that is running.
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string owner =
        test ? std::string(test->test_suite_name()) + "." + test->name() : "no-test";
    const auto dir = std::filesystem::path(KALADIN_WORK_DIR) /
                     (name + "-" + owner + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace arbiter::kaladin::test
