#include "match_builder.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "arbiter/host/ingest.hpp"

namespace arbiter::luanti {

namespace {

using nlohmann::json;

// Luanti's y is up; Arbiter's z is (the convention of the bundled plugins).
fb::Vec3 arbiter_axes(const NodeVec& v) {
    return fb::Vec3(static_cast<float>(v.x), static_cast<float>(v.z), static_cast<float>(v.y));
}

// Where the player looks (schema 1.2): Luanti's yaw as it is, and its pitch negated, since
// get_look_vertical is positive looking down and the schema's pitch is up.
std::optional<fb::Look> look_of_line(const Line& line) {
    if (!line.has_look) return std::nullopt;
    return fb::Look(static_cast<float>(line.yaw), static_cast<float>(-line.pitch));
}

std::vector<uint8_t> bytes_of(const std::string& text) {
    return {text.begin(), text.end()};
}

build::Extension extension(const char* type_name, const json& body) {
    return {.type_name = type_name, .data = bytes_of(body.dump())};
}

}  // namespace

BatchBuilder& MatchBuilder::batch() {
    if (!batch_) batch_.emplace(relay_id_, match_id_, next_sequence_);
    return *batch_;
}

void MatchBuilder::finish(std::vector<std::vector<uint8_t>>& batches) {
    if (!batch_ || batch_->event_count() == 0) return;
    batches.push_back(batch_->finish());
    next_sequence_ = batch_->next_sequence();
    batch_.reset();
}

int64_t MatchBuilder::unix_us_at(int64_t t_us) const {
    // Both terms are inside +-2^53; their sum is kept there too, as ingest requires.
    return std::clamp(started_unix_s_ * 1'000'000 + (t_us - started_t_us_), -host::kMaxRelayTimeUs,
                      host::kMaxRelayTimeUs);
}

void MatchBuilder::end_match(int64_t t_us, const std::string& reason,
                             std::vector<std::vector<uint8_t>>& batches) {
    batch().add(t_us, tick_, 0,
                build::MatchEnd{.reason = reason, .ended_unix_us = unix_us_at(t_us)});
    finish(batches);
    open_ = false;
}

std::optional<std::string> MatchBuilder::take(const Line& line,
                                              std::vector<std::vector<uint8_t>>& batches) {
    if (line.kind == LineKind::start) {
        // A server that died without its end line left its match open: it ends where its
        // last line was.
        if (open_) end_match(last_t_us_, "server restarted", batches);
        open_ = true;
        // Unique per relay: the run's start, to the second, and the microseconds of the
        // server's clock (two runs begun within one second differ there).
        match_id_ = static_cast<uint64_t>(line.unix_s) * 1'000'000 +
                    static_cast<uint64_t>(line.t_us % 1'000'000);
        next_sequence_ = 0;
        tick_ = 0;
        last_t_us_ = line.t_us;
        started_t_us_ = line.t_us;
        started_unix_s_ = line.unix_s;
        next_player_ = 1;
        players_.clear();
        batch().add(line.t_us, 0, 0,
                    build::MatchStart{.game = line.game.empty() ? "minetest" : line.game,
                                      .map = line.world,
                                      .rules = "luanti " + line.version,
                                      .tick_rate_hz = static_cast<float>(1.0 / line.step_s),
                                      .started_unix_us = line.unix_s * 1'000'000});
        return std::nullopt;
    }
    if (!open_) return std::string("no match is open: the run's start line was not read");

    // The mod's lines of one step are written in the order things happened, each with the
    // clock read then; a line behind the one before it (a callback that read the clock
    // before the step's lines were made) is taken at that one's time.
    int64_t t_us = line.t_us;
    if (t_us < last_t_us_) {
        t_us = last_t_us_;
        ++times_held_;
    }

    uint32_t player = 0;
    if (!line.player.empty()) {
        auto it = players_.find(line.player);
        if (line.kind == LineKind::join) {
            if (it == players_.end())
                it = players_.emplace(line.player, Player{.id = next_player_++}).first;
        } else if (it == players_.end()) {
            return fmt::format("player '{}' has no join line in this run", line.player);
        }
        player = it->second.id;
    }
    if (line.kind == LineKind::punch && !players_.contains(line.target))
        return fmt::format("the punched player '{}' has no join line in this run", line.target);

    last_t_us_ = t_us;
    switch (line.kind) {
        case LineKind::step:
            batch().add(t_us, tick_, 0,
                        build::TickBoundary{.tick_lag_us = static_cast<uint32_t>(line.lag_us)});
            tick_ = line.step;
            finish(batches);
            return std::nullopt;
        case LineKind::lost:
            // The steps the mod could not write are batches that never came: the host's
            // sequence ledger sees the gap and the assessments carry it.
            finish(batches);
            next_sequence_ += line.lost_steps;
            return std::nullopt;
        case LineKind::end:
            end_match(t_us, line.reason.empty() ? "finished" : line.reason, batches);
            return std::nullopt;
        default:
            add_line_events(line, t_us, player);
            if (batch_ && batch_->event_count() >= kMaxEventsPerBatch) finish(batches);
            return std::nullopt;
    }
}

void MatchBuilder::add_line_events(const Line& line, int64_t t_us, uint32_t player) {
    BatchBuilder& b = batch();
    switch (line.kind) {
        case LineKind::join:
            b.add(t_us, tick_, player,
                  build::PlayerJoin{.account_id = line.player,
                                    .client_version = fmt::format("protocol {}", line.protocol),
                                    .handshake = "luanti",
                                    .address_hash = line.address_hash,
                                    .rating = 0.0f,
                                    .rating_tier = "",
                                    .reconnect = line.reconnect});
            return;
        case LineKind::leave:
            b.add(t_us, tick_, player,
                  build::PlayerLeave{.reason = line.timed_out ? "timeout" : "quit"});
            return;
        case LineKind::allow: {
            const Allowance& a = line.allowance;
            b.add(t_us, tick_, player,
                  extension("luanti.allowance", json{{"speed", a.speed},
                                                     {"jump", a.jump},
                                                     {"gravity", a.gravity},
                                                     {"fast", a.fast},
                                                     {"fly", a.fly},
                                                     {"noclip", a.noclip},
                                                     {"attached", a.attached}}));
            return;
        }
        case LineKind::pos: {
            const fb::Vec3 at = arbiter_axes(line.position);
            Player& p = players_.find(line.player)->second;
            p.x = at.x();
            p.y = at.y();
            p.z = at.z();
            b.add(t_us, tick_, player,
                  build::Position{.position = at,
                                  .velocity = arbiter_axes(line.velocity),
                                  .on_ground = line.supported,
                                  .server_teleport = line.server_move,
                                  .look = look_of_line(line)});
            if (!line.inside.empty())
                b.add(t_us, tick_, player, extension("luanti.inside", json{{"node", line.inside}}));
            return;
        }
        case LineKind::dig_start:
        case LineKind::dig:
        case LineKind::place:
            b.add(t_us, tick_, player,
                  build::Order{.kind = std::string(name_of(line.kind)),
                               .target = arbiter_axes(line.at)});
            // The time the server says this dig takes: LagPool charges it against the
            // player's dig budget as the engine charges its dig pool. A dig the mod could
            // not time states nothing (a time of 0 would make it free).
            if (line.kind == LineKind::dig && line.dig_time_s)
                b.add(t_us, tick_, player,
                      build::Stat{.stat = "dig_time", .delta = *line.dig_time_s});
            return;
        case LineKind::punch: {
            const Player& attacker = players_.find(line.player)->second;
            const Player& target = players_.find(line.target)->second;
            b.add(t_us, tick_, player,
                  build::Hit{.target_player = target.id,
                             .weapon = line.tool.empty() ? "hand" : line.tool,
                             .attacker_position = fb::Vec3(static_cast<float>(attacker.x),
                                                           static_cast<float>(attacker.y),
                                                           static_cast<float>(attacker.z)),
                             .target_position = fb::Vec3(static_cast<float>(target.x),
                                                         static_cast<float>(target.y),
                                                         static_cast<float>(target.z)),
                             .range_m = static_cast<float>(line.range_m),
                             .damage = static_cast<float>(line.damage)});
            return;
        }
        case LineKind::item:
            b.add(t_us, tick_, player,
                  build::Inventory{.item_id = line.item,
                                   .delta = static_cast<int32_t>(line.delta),
                                   .count_after = static_cast<int32_t>(line.count),
                                   .source = line.source});
            return;
        case LineKind::die:
            b.add(t_us, tick_, player, extension("luanti.die", json{{"reason", line.reason}}));
            return;
        case LineKind::respawn:
            b.add(t_us, tick_, player, extension("luanti.respawn", json::object()));
            return;
        case LineKind::cheat:
            b.add(t_us, tick_, player, extension("luanti.cheat", json{{"type", line.reason}}));
            return;
        case LineKind::start:
        case LineKind::step:
        case LineKind::lost:
        case LineKind::end:
            return;  // handled in take()
    }
}

json MatchBuilder::save() const {
    json players = json::object();
    for (const auto& [name, p] : players_)
        players[name] = json{{"id", p.id}, {"x", p.x}, {"y", p.y}, {"z", p.z}};
    return json{{"relay", relay_id_},
                {"open", open_},
                {"match_id", match_id_},
                {"next_sequence", next_sequence_},
                {"tick", tick_},
                {"last_t_us", last_t_us_},
                {"started_t_us", started_t_us_},
                {"started_unix_s", started_unix_s_},
                {"next_player", next_player_},
                {"players", std::move(players)}};
}

void MatchBuilder::restore(const json& saved) {
    try {
        if (saved.at("relay").get<std::string>() != relay_id_)
            throw std::runtime_error(fmt::format(
                "it was saved for relay '{}', not '{}'", saved.at("relay").get<std::string>(),
                relay_id_));
        MatchBuilder restored(relay_id_);
        restored.open_ = saved.at("open").get<bool>();
        restored.match_id_ = saved.at("match_id").get<uint64_t>();
        restored.next_sequence_ = saved.at("next_sequence").get<uint64_t>();
        restored.tick_ = saved.at("tick").get<uint64_t>();
        restored.last_t_us_ = saved.at("last_t_us").get<int64_t>();
        restored.started_t_us_ = saved.at("started_t_us").get<int64_t>();
        restored.started_unix_s_ = saved.at("started_unix_s").get<int64_t>();
        restored.next_player_ = saved.at("next_player").get<uint32_t>();
        for (const auto& [name, p] : saved.at("players").items()) {
            Player player{.id = p.at("id").get<uint32_t>(),
                          .x = p.at("x").get<double>(),
                          .y = p.at("y").get<double>(),
                          .z = p.at("z").get<double>()};
            if (player.id == 0 || player.id >= restored.next_player_)
                throw std::runtime_error(fmt::format("player '{}' has id {}", name, player.id));
            restored.players_.emplace(name, player);
        }
        *this = std::move(restored);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("the saved match is not one: {}", e.what()));
    }
}

}  // namespace arbiter::luanti
