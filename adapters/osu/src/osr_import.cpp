#include "osr_import.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <queue>
#include <set>
#include <stdexcept>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/parse.hpp"
#include "arbiter/tools/simulate.hpp"
#include "arbiter/tools/truth.hpp"
#include "snaps.hpp"

namespace arbiter::osu {

// osu!'s mod acronyms, in its own order.
std::string mods_text(uint32_t mods) {
    static const std::pair<uint32_t, const char*> names[] = {
        {1u << 0, "NF"},  {1u << 1, "EZ"},  {1u << 2, "TD"},  {1u << 3, "HD"},  {1u << 4, "HR"},
        {1u << 5, "SD"},  {1u << 6, "DT"},  {1u << 7, "RX"},  {1u << 8, "HT"},  {1u << 9, "NC"},
        {1u << 10, "FL"}, {1u << 11, "AT"}, {1u << 12, "SO"}, {1u << 13, "AP"}, {1u << 14, "PF"},
        {1u << 23, "TP"}, {1u << 29, "V2"}};
    std::string out;
    for (const auto& [bit, name] : names)
        if (mods & bit) out += name;
    return out.empty() ? "NM" : out;
}

namespace {

constexpr double kTickRateHz = 1000.0;  // osu! frame times are whole milliseconds
constexpr int32_t kLeftKeys = kKeyM1, kRightKeys = kKeyM2;  // K1 sets M1, K2 sets M2


// One cursor frame to import, at its replay time.
struct Step {
    int64_t time_ms = 0;  // relay time, from the replay's first cursor frame
    double x = 0, y = 0;
    int32_t presses = 0;  // the keys newly pressed (left 1, right 2)
};

struct Loaded {
    OsrReplayReport* report = nullptr;
    std::vector<Step> steps;
};

// The frames osu!'s own player plays (LegacyScoreDecoder: no placeholders, no frame of a
// negative delta), in relay time from the first, never going back.
std::vector<Step> steps_of(const OsrReplay& replay, OsrReplayReport& report) {
    std::vector<Step> steps;
    steps.reserve(replay.frames.size());
    bool started = false;
    int64_t origin = 0, last = 0;
    int32_t held = 0;
    for (const OsrFrame& f : replay.frames) {
        if (f.placeholder || f.delta_ms < 0) {
            ++report.left_out;
            continue;
        }
        if (!started) {
            started = true;
            origin = f.time_ms;
            report.first_time_ms = f.time_ms;
        }
        int64_t t = f.time_ms - origin;
        if (t < last) {
            t = last;
            ++report.held_back;
        }
        last = t;
        const int32_t keys = f.keys & (kLeftKeys | kRightKeys);
        steps.push_back({t, f.x, f.y, keys & ~held});
        held = keys;
        report.last_time_ms = f.time_ms;
    }
    return steps;
}

std::vector<std::string> split_csv_line(const std::string& line) {
    // The labels file is plain: no quoting (file names with commas are not supported).
    std::vector<std::string> out;
    size_t at = 0;
    while (true) {
        const size_t comma = line.find(',', at);
        out.push_back(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return out;
}

}  // namespace

std::vector<OsrInput> list_replays(const std::vector<std::filesystem::path>& paths) {
    std::vector<OsrInput> out;
    for (const auto& path : paths) {
        std::error_code error;
        if (std::filesystem::is_directory(path, error)) {
            std::vector<OsrInput> found;
            for (auto it = std::filesystem::recursive_directory_iterator(path, error);
                 !error && it != std::filesystem::recursive_directory_iterator();
                 it.increment(error)) {
                if (it->is_regular_file(error) && looks_like_osr(it->path()))
                    found.push_back({it->path(), it->path().lexically_relative(path).string()});
            }
            if (error)
                throw std::runtime_error("cannot list " + path.string() + ": " + error.message());
            std::sort(found.begin(), found.end(),
                      [](const OsrInput& a, const OsrInput& b) { return a.name < b.name; });
            if (found.empty()) throw std::runtime_error(path.string() + " holds no .osr file");
            out.insert(out.end(), found.begin(), found.end());
        } else if (std::filesystem::exists(path, error)) {
            out.push_back({path, path.string()});
        } else {
            throw std::runtime_error(path.string() + " does not exist");
        }
    }
    // A name is a player's account and its label's key: two replays of one name would be
    // one account in two places (the same file named twice, or two folders alike).
    std::map<std::string, const OsrInput*> named;
    for (const OsrInput& input : out) {
        auto [it, added] = named.emplace(input.name, &input);
        if (!added)
            throw std::runtime_error("two replays are named '" + input.name + "' (" +
                                     it->second->path.string() + " and " + input.path.string() +
                                     "): give each once, or import the folders apart");
    }
    return out;
}

std::map<std::string, std::pair<std::string, bool>> read_labels_csv(
    const std::filesystem::path& csv) {
    std::ifstream in(csv);
    if (!in) throw std::runtime_error("cannot read " + csv.string());
    std::map<std::string, std::pair<std::string, bool>> labels;
    std::string line;
    size_t number = 0;
    int file_col = -1, label_col = -1, kind_col = -1;
    auto fail = [&](const std::string& what) {
        throw std::runtime_error(csv.string() + ":" + std::to_string(number) + ": " + what);
    };
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const auto fields = split_csv_line(line);
        if (file_col < 0) {
            for (size_t i = 0; i < fields.size(); ++i) {
                if (fields[i] == "file") file_col = static_cast<int>(i);
                if (fields[i] == "label") label_col = static_cast<int>(i);
                if (fields[i] == "kind") kind_col = static_cast<int>(i);
            }
            if (file_col < 0 || label_col < 0 || kind_col < 0)
                fail("the header must name the columns file, label and kind");
            continue;
        }
        const size_t need = static_cast<size_t>(std::max({file_col, label_col, kind_col})) + 1;
        if (fields.size() < need)
            fail("has " + std::to_string(fields.size()) + " field(s), the header more");
        const std::string& kind = fields[static_cast<size_t>(kind_col)];
        if (kind != "honest" && kind != "cheat")
            fail("kind '" + host::to_valid_utf8(kind, 64) + "' is neither honest nor cheat");
        const std::string& label = fields[static_cast<size_t>(label_col)];
        if (label.empty()) fail("the label is empty");
        const std::string& file = fields[static_cast<size_t>(file_col)];
        if (!labels.emplace(file, std::pair{label, kind == "cheat"}).second)
            fail("'" + host::to_valid_utf8(file, 200) + "' is labelled twice");
    }
    if (file_col < 0) fail("no header line");
    return labels;
}

OsrImportReport import_replays(const std::vector<OsrInput>& inputs,
                               const std::filesystem::path& out, const OsrImportOptions& options) {
    if (options.batch_events == 0 || options.batch_events > tools::kMaxBatchEvents)
        throw std::invalid_argument("--batch-events must be from 1 to " +
                                    std::to_string(tools::kMaxBatchEvents));
    if (options.relay_id.empty()) throw std::invalid_argument("--relay must not be empty");
    if (inputs.empty()) throw std::invalid_argument("no replay to import");
    std::map<std::string, std::pair<std::string, bool>> labels;
    if (!options.labels_csv.empty()) labels = read_labels_csv(options.labels_csv);

    OsrImportReport report;
    report.replays.resize(inputs.size());
    std::vector<Loaded> loaded;
    std::set<std::string> beatmaps;
    const bool several = inputs.size() > 1;
    {
        uint64_t total = 0, done = 0;
        for (const OsrInput& input : inputs) {
            std::error_code ignored;
            const uint64_t size = std::filesystem::file_size(input.path, ignored);
            total += ignored ? 0 : size;
        }
        host::ProgressStretch progress(options.progress, "import", total,
                                       host::ProgressUnit::bytes);
        for (size_t i = 0; i < inputs.size(); ++i) {
            std::error_code ignored;
            const uint64_t size = std::filesystem::file_size(inputs[i].path, ignored);
            done += ignored ? 0 : size;
            progress.update(done);
            OsrReplayReport& r = report.replays[i];
            r.name = inputs[i].name;
            OsrReplay replay;
            try {
                replay = read_osr_file(inputs[i].path);
                if (replay.header.mode != GameMode::standard)
                    throw OsrError(0, false,
                                   std::string("a ") + to_string(replay.header.mode) +
                                       " replay: only osu! standard's cursor is an aim");
            } catch (const OsrError& error) {
                r.problem = error.what();
                ++report.refused;
                if (!options.skip_bad_replays) return report;
                continue;
            }
            r.frames = replay.frames.size();
            r.version = replay.header.version;
            r.mods = replay.header.mods;
            r.player_name = host::to_valid_utf8(replay.header.player_name.value_or(""));
            for (const Snap& snap : find_snaps(replay.frames))
                r.snap_times_ms.push_back(snap.time_ms);
            auto steps = steps_of(replay, r);
            if (steps.empty()) {
                r.problem = "no cursor frame to import";
                ++report.refused;
                if (!options.skip_bad_replays) return report;
                continue;
            }
            if (!labels.empty()) {
                auto it = labels.find(r.name);
                if (it == labels.end())
                    throw std::runtime_error(options.labels_csv.string() + " has no line for '" +
                                             r.name + "'");
                r.label = it->second.first;
                r.cheater = it->second.second;
            }
            beatmaps.insert(replay.header.beatmap_md5.value_or(""));
            loaded.push_back({&r, std::move(steps)});
        }
    }
    if (loaded.empty()) return report;

    // Players in the inputs' order; accounts unique within the match.
    uint32_t next = 1;
    for (Loaded& l : loaded) {
        OsrReplayReport& r = *l.report;
        r.player = next++;
        r.account = several || r.player_name.empty() ? host::to_valid_utf8(r.name, 256)
                                                     : host::to_valid_utf8(r.player_name, 256);
    }

    tools::StagedEventFile file(out);
    tools::MatchStream stream(file, options.relay_id, options.match_id, options.batch_events);
    stream.add(
        0, 0, 0,
        build::MatchStart{
            .game = "osu",
            .map = beatmaps.size() == 1 ? host::to_valid_utf8(*beatmaps.begin()) : std::string(),
            .rules = "replay",
            .rated = false,
            .tick_rate_hz = static_cast<float>(kTickRateHz),
            .started_unix_us = 0});
    for (const Loaded& l : loaded) {
        const OsrReplayReport& r = *l.report;
        stream.add(0, 0, r.player,
                   build::PlayerJoin{.account_id = r.account,
                                     .client_version = std::to_string(r.version),
                                     .handshake = "osr " + mods_text(r.mods),
                                     .connection_id = r.player,
                                     .address_hash = 0,
                                     .rating = 0.0f,
                                     .rating_tier = "",
                                     .reconnect = false});
    }
    // Every replay's frames in relay-time order (a replay's own order kept within a time),
    // each replay's leave after its last frame.
    struct Next {
        int64_t t;
        size_t replay, step;
        bool operator>(const Next& o) const {
            return t != o.t ? t > o.t : (replay != o.replay ? replay > o.replay : step > o.step);
        }
    };
    std::priority_queue<Next, std::vector<Next>, std::greater<Next>> queue;
    for (size_t i = 0; i < loaded.size(); ++i)
        queue.push({loaded[i].steps.front().time_ms, i, 0});
    int64_t end_ms = 0;
    while (!queue.empty()) {
        const Next n = queue.top();
        queue.pop();
        Loaded& l = loaded[n.replay];
        OsrReplayReport& r = *l.report;
        const int64_t t_us = n.t * 1000;
        const auto tick = static_cast<uint64_t>(n.t);
        if (n.step == l.steps.size()) {
            stream.add(t_us, tick, r.player, build::PlayerLeave{.reason = "finished"});
            continue;
        }
        const Step& s = l.steps[n.step];
        // The cursor: a point of the playfield (schema 1.2's aim, not relative).
        const fb::AimPoint cursor(static_cast<float>(s.x), static_cast<float>(s.y), false);
        stream.add(t_us, tick, r.player,
                   build::Position{.position = fb::Vec3(0, 0, 0),
                                   .velocity = fb::Vec3(0, 0, 0),
                                   .on_ground = std::nullopt,
                                   .ground_height = std::nullopt,
                                   .server_teleport = false,
                                   .look = std::nullopt,
                                   .aim = cursor});
        ++r.positions;
        for (int32_t key : {kLeftKeys, kRightKeys}) {
            if ((s.presses & key) == 0) continue;
            stream.add(t_us, tick, r.player,
                       build::Order{.kind = "key_press",
                                    .target_player = 0,
                                    .target = fb::Vec3(static_cast<float>(s.x),
                                                       static_cast<float>(s.y), 0.0f),
                                    .repeat = false,
                                    .claimed_tick = std::nullopt,
                                    .client_time_us = std::nullopt,
                                    .response_to = 0,
                                    .look = std::nullopt,
                                    .aim = cursor});
            ++r.presses;
        }
        end_ms = std::max(end_ms, n.t);
        const size_t following = n.step + 1;
        queue.push(
            {following < l.steps.size() ? l.steps[following].time_ms : n.t, n.replay, following});
    }
    stream.add(end_ms * 1000, static_cast<uint64_t>(end_ms), 0,
               build::MatchEnd{
                   .reason = "finished", .claimed_length_us = std::nullopt, .ended_unix_us = 0});
    stream.flush();

    tools::Truth truth;
    truth.generator = {{"command", "import"}, {"input", "osu! replays"}};
    tools::TruthMatch match{options.relay_id, options.match_id, "osu", "replays", {}};
    for (const Loaded& l : loaded) {
        const OsrReplayReport& r = *l.report;
        match.players.push_back({r.player,
                                 r.account,
                                 r.label,
                                 r.cheater,
                                 {{"frames", static_cast<double>(r.frames)},
                                  {"presses", static_cast<double>(r.presses)},
                                  {"mods", static_cast<double>(r.mods)}}});
        ++report.players;
        report.positions += r.positions;
        report.orders += r.presses;
    }
    truth.matches.push_back(std::move(match));
    report.events = stream.events();
    report.batches = file.batches();
    if (!options.labels_out.empty()) tools::write_truth(options.labels_out, truth);
    file.commit();
    report.written = true;
    return report;
}

}  // namespace arbiter::osu
