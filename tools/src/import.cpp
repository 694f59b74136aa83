#include "arbiter/tools/import.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/simulate.hpp"
#include "arbiter/tools/truth.hpp"
#include "scheduler.hpp"

namespace arbiter::tools {

namespace {

constexpr const char* kHonest = "honest";

// A row's look and aim (schema 1.2), for each event the row becomes. The yaw is taken
// modulo 2 pi, in double, before it becomes a float: a large yaw keeps its precision.
std::optional<fb::Look> row_look(const TraceRow& row) {
    if (!row.yaw) return std::nullopt;
    constexpr double kTwoPi = 6.283185307179586;
    return fb::Look(static_cast<float>(std::remainder(*row.yaw, kTwoPi)),
                    static_cast<float>(*row.pitch));
}

std::optional<fb::AimPoint> row_aim(const TraceRow& row) {
    if (!row.aim_x) return std::nullopt;
    return fb::AimPoint(static_cast<float>(*row.aim_x), static_cast<float>(*row.aim_y),
                        row.aim_relative.value_or(false));
}

struct ImportedPlayer {
    std::string name;
    std::string profile;        // "" until a row gives one
    uint64_t profile_line = 0;  // the row that gave it
};

struct ImportedMatch {
    std::string source, game;
    std::vector<const TraceRow*> rows;
    std::vector<ImportedPlayer> players;  // id = index + 1
    std::map<std::string, uint32_t, std::less<>> ids;

    uint32_t id_of(const std::string& name) {
        auto [it, added] = ids.emplace(name, static_cast<uint32_t>(players.size() + 1));
        if (added) players.push_back({name, "", 0});
        return it->second;
    }
};

// Groups the rows into matches and checks what only a match can tell: a player's profile
// is the same on every row. Returns the matches; rows refused here go into `problems`.
std::vector<ImportedMatch> group(const std::vector<TraceRow>& rows,
                                 std::vector<RowProblem>& problems) {
    std::vector<ImportedMatch> matches;
    std::map<std::pair<std::string_view, std::string_view>, size_t> index;
    for (const TraceRow& row : rows) {
        auto [it, added] = index.emplace(
            std::pair{std::string_view(row.source), std::string_view(row.game)}, matches.size());
        if (added) {
            matches.emplace_back();
            matches.back().source = row.source;
            matches.back().game = row.game;
        }
        ImportedMatch& match = matches[it->second];
        ImportedPlayer& player = match.players[match.id_of(row.player) - 1];
        if (row.profile) {
            if (player.profile.empty()) {
                player.profile = *row.profile;
                player.profile_line = row.line;
            } else if (player.profile != *row.profile) {
                problems.push_back({row.line, "profile '" + *row.profile + "' of player '" +
                                                  row.player + "' differs from '" + player.profile +
                                                  "' given on line " +
                                                  std::to_string(player.profile_line)});
                continue;
            }
        }
        if (row.target_player) match.id_of(*row.target_player);
        match.rows.push_back(&row);
    }
    return matches;
}

}  // namespace

void check_options(const ImportOptions& o) {
    if (!(o.tick_rate_hz >= 0.5) || o.tick_rate_hz > 1000)
        throw std::invalid_argument("--tick-rate must be from 0.5 to 1000 Hz");
    if (o.batch_events == 0 || o.batch_events > kMaxBatchEvents)
        throw std::invalid_argument("--batch-events must be from 1 to " +
                                    std::to_string(kMaxBatchEvents));
    if (o.relay_id.empty()) throw std::invalid_argument("--relay must not be empty");
}

ImportReport import_traces(const std::filesystem::path& in, const std::filesystem::path& out,
                           const ImportOptions& options) {
    check_options(options);
    ImportReport report;
    TraceReadResult read = read_trace_rows(in, options.format, options.on_bad_row);
    report.rows_seen = read.rows_seen;
    report.problems = std::move(read.problems);
    if (read.fatal || (options.on_bad_row == OnBadRow::stop && !report.problems.empty()))
        return report;

    std::vector<ImportedMatch> matches = group(read.rows, report.problems);
    std::stable_sort(report.problems.begin(), report.problems.end(),
                     [](const RowProblem& a, const RowProblem& b) { return a.line < b.line; });
    if (options.on_bad_row == OnBadRow::stop && !report.problems.empty()) return report;
    report.rows_skipped = report.problems.size();
    for (const ImportedMatch& match : matches)
        report.rows_imported += match.rows.size();
    if (report.rows_imported == 0) {
        report.problems.push_back({0, "no valid rows: nothing to import"});
        return report;
    }

    const sim::TickClock clock(options.tick_rate_hz);
    StagedEventFile file(out);
    Truth labels;
    labels.generator = {{"command", "import"}, {"input", in.filename().string()}};
    uint64_t match_id = 0;
    host::ProgressStretch progress(options.progress, "import", report.rows_imported,
                                   host::ProgressUnit::events);
    uint64_t rows_written = 0;
    for (ImportedMatch& match : matches) {
        if (match.rows.empty()) continue;
        progress.update(rows_written);
        rows_written += match.rows.size();
        ++match_id;
        // Rows may come in any order: the relay's clock orders a match.
        std::stable_sort(
            match.rows.begin(), match.rows.end(),
            [](const TraceRow* a, const TraceRow* b) { return a->t_seconds < b->t_seconds; });
        auto time_of = [](const TraceRow& row) { return std::llround(row.t_seconds * 1e6); };
        auto tick_of = [&](const TraceRow& row) {
            return row.tick.value_or(clock.tick_of(time_of(row)));
        };
        const TraceRow& first = *match.rows.front();
        const TraceRow& last = *match.rows.back();

        MatchStream stream(file, options.relay_id, match_id, options.batch_events);
        stream.add(time_of(first), tick_of(first), 0,
                   build::MatchStart{.game = host::to_valid_utf8(match.source),
                                     .map = host::to_valid_utf8(match.game),
                                     .rules = "imported",
                                     .rated = false,
                                     .tick_rate_hz = static_cast<float>(options.tick_rate_hz),
                                     .started_unix_us = 0});
        for (uint32_t id = 1; id <= match.players.size(); ++id)
            stream.add(
                time_of(first), tick_of(first), id,
                build::PlayerJoin{.account_id = host::to_valid_utf8(match.players[id - 1].name),
                                  .client_version = "",
                                  .handshake = "import",
                                  .connection_id = id,
                                  .address_hash = 0,
                                  .rating = 0.0f,
                                  .rating_tier = "",
                                  .reconnect = false});
        for (const TraceRow* row : match.rows) {
            const uint32_t player = match.ids.find(row->player)->second;
            const int64_t t_us = time_of(*row);
            const uint64_t tick = tick_of(*row);
            if (row->x) {
                stream.add(
                    t_us, tick, player,
                    build::Position{.position = fb::Vec3(static_cast<float>(*row->x),
                                                         static_cast<float>(*row->y),
                                                         static_cast<float>(row->z.value_or(0.0))),
                                    .look = row_look(*row),
                                    .aim = row_aim(*row)});
                ++report.positions;
            }
            if (row->action_kind == "position") continue;
            build::Order order;
            order.kind = host::to_valid_utf8(row->action_kind);
            if (row->target_player)
                order.target_player = match.ids.find(*row->target_player)->second;
            if (row->target_x)
                order.target =
                    fb::Vec3(static_cast<float>(*row->target_x), static_cast<float>(*row->target_y),
                             static_cast<float>(row->target_z.value_or(0.0)));
            order.repeat = row->repeat.value_or(row->action_kind == "command_repeat");
            order.claimed_tick = row->claimed_tick;
            order.look = row_look(*row);
            order.aim = row_aim(*row);
            stream.add(t_us, tick, player, order);
            ++report.orders;
        }
        stream.add(time_of(last), tick_of(last), 0, build::MatchEnd{.reason = "finished"});
        stream.flush();
        report.events += stream.events();

        TruthMatch truth;
        truth.relay_id = options.relay_id;
        truth.match_id = match_id;
        truth.source = match.source;
        truth.game = match.game;
        for (uint32_t id = 1; id <= match.players.size(); ++id) {
            const ImportedPlayer& p = match.players[id - 1];
            const std::string profile = p.profile.empty() ? kHonest : p.profile;
            truth.players.push_back({id, p.name, profile, profile != kHonest, {}});
        }
        report.players += match.players.size();
        labels.matches.push_back(std::move(truth));
    }
    report.matches = match_id;
    report.batches = file.batches();
    if (!options.labels.empty()) write_truth(options.labels, labels);
    file.commit();
    report.written = true;
    return report;
}

}  // namespace arbiter::tools
