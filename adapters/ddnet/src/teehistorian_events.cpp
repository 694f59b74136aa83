#include "teehistorian_events.hpp"

#include <cmath>
#include <ctime>
#include <stdexcept>

#include "arbiter/host/ingest.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "varint.hpp"

namespace arbiter::ddnet {

namespace {

using nlohmann::json;

constexpr int64_t kTickUs = 20000;       // DDNet's 50 ticks a second
constexpr double kUnitsPerMetre = 32.0;  // one tile
// As the demo import (demo_import.cpp says why): DDNet's physics moves a tee at most about
// 1.5 tiles a tick; further than 3 tiles a tick plus 2 tiles is the server's own move.
constexpr double kMaxUnitsPerTick = 96.0;
constexpr double kTeleportSlackUnits = 64.0;
constexpr int32_t kAimMotionTicks = 4;
// The 0.6 protocol's client messages that carry a name (datasrc/network.py's order).
constexpr int32_t kClStartInfo = 20;
constexpr int32_t kClChangeInfo = 21;

fb::Vec3 to_metres(double x, double y) {
    return fb::Vec3(static_cast<float>(x / kUnitsPerMetre), 0.0f,
                    static_cast<float>(-y / kUnitsPerMetre));
}

int64_t time_us(int32_t tick) {
    return int64_t{tick} * kTickUs;
}

// "2026-11-28T04:49:44+0000" (str_timestamp_ex's "%Y-%m-%dT%H:%M:%S%z") as Unix µs.
int64_t unix_us_of(const std::string& text) {
    std::tm tm{};
    int offset_sign = 1, offset_h = 0, offset_m = 0;
    char sign = '+';
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%2d%2d", &tm.tm_year, &tm.tm_mon,
                    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &sign, &offset_h,
                    &offset_m) != 9)
        return 0;
    if (sign == '-') offset_sign = -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const time_t utc = timegm(&tm);
    if (utc == static_cast<time_t>(-1)) return 0;
    const int64_t seconds = int64_t{utc} - offset_sign * (offset_h * 3600 + offset_m * 60);
    // Ingest keeps every time within +-2^53 µs (year 2255): a start past it is not known.
    if (seconds < 0 || seconds > host::kMaxRelayTimeUs / 1'000'000) return 0;
    return seconds * 1'000'000;
}

// A match id from the game's UUID: its first six bytes, unique per game in practice and
// well inside the integers every JSON reader keeps exact.
uint64_t match_id_of(const std::string& uuid_text) {
    uint64_t id = 0;
    int digits = 0;
    for (char c : uuid_text) {
        if (c == '-') continue;
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return 1;
        id = id << 4 | static_cast<uint64_t>(v);
        if (++digits == 12) break;
    }
    return digits == 12 && id != 0 ? id : 1;
}

uint64_t connection_id_of(const ThUuid& uuid) {
    uint64_t id = 0;
    for (int i = 0; i < 6; ++i)
        id = id << 8 | uuid[static_cast<size_t>(i)];
    return id;
}

std::vector<uint8_t> bytes_of(const std::string& text) {
    return {text.begin(), text.end()};
}

}  // namespace

std::optional<std::string> th_message_name(std::span<const uint8_t> message, bool& change) {
    size_t pos = 0;
    const auto id = read_varint(message, pos);
    if (!id || (*id & 1) != 0) return std::nullopt;  // a system message
    const int32_t type = *id >> 1;
    if (type != kClStartInfo && type != kClChangeInfo) return std::nullopt;
    change = type == kClChangeInfo;
    // The name: the string that follows, up to its NUL (DDNet limits names to 16 bytes).
    for (size_t end = pos; end < message.size() && end - pos <= 64; ++end)
        if (message[end] == 0)
            return std::string(reinterpret_cast<const char*>(message.data() + pos), end - pos);
    return std::nullopt;
}

BatchBuilder& ThMatchBuilder::batch() {
    if (!batch_) batch_.emplace(relay_id_, state_.match_id, state_.next_sequence);
    return *batch_;
}

void ThMatchBuilder::finish(std::vector<std::vector<uint8_t>>& batches) {
    if (!batch_ || batch_->event_count() == 0) return;
    batches.push_back(batch_->finish());
    state_.next_sequence = batch_->next_sequence();
    ++state_.counts.batches;
    batch_.reset();
}

template <class Body>
void ThMatchBuilder::add(int32_t tick, uint32_t player, const Body& body,
                         std::vector<std::vector<uint8_t>>& batches) {
    batch().add(time_us(tick), static_cast<uint64_t>(std::max(tick, 0)), player, body);
    ++state_.counts.events;
    if (batch_->event_count() >= kThMaxEventsPerBatch) finish(batches);
}

void ThMatchBuilder::start(const ThHeader& header, std::vector<std::vector<uint8_t>>& batches) {
    if (state_.open) end("a new file began", batches);
    std::string map, game_type, uuid, start_time, version;
    host::UntrustedJson parsed = host::parse_untrusted_json(header.json, kThMaxHeaderBytes);
    if (parsed.ok() && parsed.value.is_object()) {
        auto text = [&](const char* key) {
            const auto it = parsed.value.find(key);
            return it != parsed.value.end() && it->is_string() ? it->get<std::string>()
                                                               : std::string();
        };
        map = text("map_name");
        game_type = text("game_type");
        uuid = text("game_uuid");
        start_time = text("start_time");
        version = text("server_version");
    }
    const ThEventCounts counts = state_.counts;
    state_ = ThBuilderState{};
    state_.counts = counts;
    state_.open = true;
    state_.match_id = match_id_of(uuid);
    batch_.reset();
    // The match starts at the first tick the file holds: written with its first record.
    state_.map = host::to_valid_utf8(map);
    state_.rules = host::to_valid_utf8("teehistorian " + (game_type.empty() ? "?" : game_type) +
                                       (version.empty() ? "" : ", server " + version));
    state_.started_unix_us = unix_us_of(start_time);
}

void ThMatchBuilder::end_tick(std::vector<std::vector<uint8_t>>& batches) {
    finish(batches);
}

void ThMatchBuilder::end(const std::string& reason, std::vector<std::vector<uint8_t>>& batches) {
    if (!state_.open) return;
    const int32_t tick = std::max(state_.tick, 0);
    if (state_.tick < 0) write_start(tick, batches);
    for (int32_t cid = 0; cid < kThMaxClients; ++cid)
        if (state_.seats[static_cast<size_t>(cid)].player != 0)
            leave(cid, tick, "match ended", batches);
    add(tick, 0, build::MatchEnd{.reason = reason}, batches);
    finish(batches);
    state_.open = false;
}

void ThMatchBuilder::write_start(int32_t tick, std::vector<std::vector<uint8_t>>& batches) {
    state_.tick = tick;
    add(tick, 0,
        build::MatchStart{.game = "ddnet",
                          .map = state_.map,
                          .rules = state_.rules,
                          .rated = false,
                          .tick_rate_hz = 50.0f,
                          .started_unix_us = state_.started_unix_us},
        batches);
}

uint32_t ThMatchBuilder::ensure_player(int32_t cid, int32_t tick,
                                       std::vector<std::vector<uint8_t>>& batches) {
    auto& seat = state_.seats[static_cast<size_t>(cid)];
    seat.connected = true;
    if (seat.player != 0) return seat.player;
    if (seat.name.empty()) seat.name = "client" + std::to_string(cid);
    const std::string account =
        seat.auth_name.empty() ? seat.name : seat.name + "@" + seat.auth_name;
    auto [known, added] = state_.ids.emplace(account, static_cast<uint32_t>(state_.ids.size() + 1));
    seat.player = known->second;
    if (added) ++state_.counts.players;
    add(tick, seat.player,
        build::PlayerJoin{.account_id = host::to_valid_utf8(account),
                          .client_version = host::to_valid_utf8(seat.client_version),
                          .handshake = seat.sixup ? "ddnet-0.7" : "ddnet-0.6",
                          .connection_id = seat.connection_id,
                          .address_hash = 0,
                          .rating = 0.0f,
                          .rating_tier = "",
                          .reconnect = !added},
        batches);
    return seat.player;
}

void ThMatchBuilder::leave(int32_t cid, int32_t tick, const std::string& reason,
                           std::vector<std::vector<uint8_t>>& batches) {
    auto& seat = state_.seats[static_cast<size_t>(cid)];
    if (seat.player != 0)
        add(tick, seat.player, build::PlayerLeave{.reason = host::to_valid_utf8(reason)}, batches);
    seat.player = 0;
    seat.positioned = false;
    seat.has_input = false;
    seat.last_aim_tick = -1;
}

void ThMatchBuilder::name_client(int32_t cid, const std::string& name, int32_t tick,
                                 std::vector<std::vector<uint8_t>>& batches) {
    auto& seat = state_.seats[static_cast<size_t>(cid)];
    if (name.empty() || (seat.player != 0 && name == seat.name)) return;
    if (seat.player != 0) {
        // A rename: the account is the name, so it is another account from here.
        const bool positioned = seat.positioned;
        const int32_t x = seat.x, y = seat.y, pos_tick = seat.pos_tick;
        leave(cid, tick, "renamed", batches);
        seat.positioned = positioned;
        seat.x = x;
        seat.y = y;
        seat.pos_tick = pos_tick;
    }
    seat.name = name;
    ensure_player(cid, tick, batches);
}

void ThMatchBuilder::position(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches) {
    auto& seat = state_.seats[static_cast<size_t>(r.cid)];
    if (r.kind == ThKind::player_old) {
        seat.positioned = false;  // dead, or out of the game: its next tee spawns anew
        return;
    }
    if (!r.position_known) {
        seat.positioned = false;  // after damage: where it is comes with its next spawn
        return;
    }
    const uint32_t player = ensure_player(r.cid, r.tick, batches);
    bool teleport = r.kind == ThKind::player_new || !seat.positioned;
    fb::Vec3 velocity(0, 0, 0);
    if (!teleport) {
        const double ticks = std::max(1, r.tick - seat.pos_tick);
        const double dx = double(r.x) - seat.x, dy = double(r.y) - seat.y;
        teleport = std::hypot(dx, dy) > kMaxUnitsPerTick * ticks + kTeleportSlackUnits;
        if (!teleport) {
            const double to_m_per_s = 50.0 / kUnitsPerMetre / ticks;
            velocity = fb::Vec3(static_cast<float>(dx * to_m_per_s), 0.0f,
                                static_cast<float>(-dy * to_m_per_s));
        }
    }
    // Where the tee aims (schema 1.2): its latest input's target, relative to the tee, in
    // game units, once an input has been seen.
    std::optional<fb::AimPoint> aim;
    if (seat.has_input)
        aim = fb::AimPoint(static_cast<float>(seat.input.target_x),
                           static_cast<float>(seat.input.target_y), true);
    add(r.tick, player,
        build::Position{.position = to_metres(r.x, r.y),
                        .velocity = velocity,
                        .on_ground = std::nullopt,
                        .ground_height = std::nullopt,
                        .server_teleport = teleport,
                        .aim = aim},
        batches);
    ++state_.counts.positions;
    if (teleport) ++state_.counts.server_teleports;
    seat.positioned = true;
    seat.x = r.x;
    seat.y = r.y;
    seat.pos_tick = r.tick;
}

void ThMatchBuilder::input(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches) {
    auto& seat = state_.seats[static_cast<size_t>(r.cid)];
    const uint32_t player = ensure_player(r.cid, r.tick, batches);
    // The first input of a connection, and the first after damage, is where comparing
    // starts: what it holds was not a change anyone saw happen.
    const bool compare = seat.has_input && r.kind == ThKind::input_diff && r.input_known;
    const ThInput before = seat.input;
    seat.input = r.input;
    seat.has_input = true;
    if (!compare) return;
    const ThInput& now = r.input;
    // The target is relative to the tee: where it aims is its position plus the target.
    const fb::Vec3 target = to_metres(double(seat.x) + now.target_x, double(seat.y) + now.target_y);
    auto order = [&](const char* kind, bool repeat) {
        add(r.tick, player,
            build::Order{.kind = kind,
                         .target_player = 0,
                         .target = target,
                         .repeat = repeat,
                         .claimed_tick = std::nullopt,
                         .client_time_us = std::nullopt,
                         .response_to = 0,
                         .aim = fb::AimPoint(static_cast<float>(now.target_x),
                                             static_cast<float>(now.target_y), true)},
            batches);
        ++state_.counts.orders;
    };
    if (now.direction != before.direction) order("direction", false);
    if (now.jump != 0 && before.jump == 0) order("jump", false);
    if (now.hook != 0 && before.hook == 0) order("hook", false);
    // The 0.6 fire input counts presses and releases: odd while the button is down.
    if (now.fire != before.fire && (now.fire & 1) != 0) order("fire", false);
    if ((now.wanted_weapon != before.wanted_weapon && now.wanted_weapon != 0) ||
        now.next_weapon != before.next_weapon || now.prev_weapon != before.prev_weapon)
        order("weapon", false);
    if (now.target_x != before.target_x || now.target_y != before.target_y) {
        order("aim", seat.last_aim_tick >= 0 && r.tick - seat.last_aim_tick <= kAimMotionTicks);
        seat.last_aim_tick = r.tick;
    }
}

void ThMatchBuilder::message(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches) {
    ++state_.counts.messages;
    auto& seat = state_.seats[static_cast<size_t>(r.cid)];
    seat.connected = true;
    if (seat.sixup) return;  // 0.7's message ids are not 0.6's
    bool change = false;
    if (auto name = th_message_name(r.data, change)) name_client(r.cid, *name, r.tick, batches);
}

void ThMatchBuilder::extra(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches) {
    auto seat_of = [&]() -> ThBuilderState::Seat& {
        return state_.seats[static_cast<size_t>(r.cid)];
    };
    switch (r.ex) {
        case ThEx::joinver7:
            seat_of().sixup = true;
            break;
        case ThEx::joinver6:
            seat_of().sixup = false;
            break;
        case ThEx::ddnetver:
            seat_of().connection_id = connection_id_of(r.uuid);
            seat_of().client_version = r.text;
            break;
        case ThEx::ddnetver_old:
            seat_of().client_version = "ddnet " + std::to_string(r.value);
            break;
        case ThEx::player_name:
            // DDNet 17 writes the name itself.
            name_client(r.cid, r.text, r.tick, batches);
            break;
        case ThEx::auth_init:
        case ThEx::auth_login:
        case ThEx::auth_logout: {
            auto& seat = seat_of();
            seat.auth_name = r.ex == ThEx::auth_logout ? std::string() : r.text;
            seat.auth_level = r.ex == ThEx::auth_logout ? 0 : r.level;
            if (seat.player != 0) {
                const json body{{"level", seat.auth_level},
                                {"auth_name", host::to_valid_utf8(seat.auth_name)}};
                add(r.tick, seat.player,
                    build::Extension{.type_name = "ddnet.auth", .data = bytes_of(body.dump())},
                    batches);
            }
            break;
        }
        case ThEx::unknown:
            ++state_.counts.unknown_extras;
            break;
        default:
            break;  // teams, saves, practice, finishes: nothing a check reads yet
    }
}

void ThMatchBuilder::take(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches) {
    if (!state_.open) return;
    if (ends_tick(r)) finish(batches);
    if (state_.tick < 0) write_start(r.tick, batches);
    state_.tick = r.tick;
    switch (r.kind) {
        case ThKind::player_diff:
        case ThKind::player_new:
        case ThKind::player_old:
            position(r, batches);
            break;
        case ThKind::input_diff:
        case ThKind::input_new:
            input(r, batches);
            break;
        case ThKind::message:
            message(r, batches);
            break;
        case ThKind::join: {
            auto& seat = state_.seats[static_cast<size_t>(r.cid)];
            // A client id given again without a drop between: the one before is gone.
            if (seat.player != 0) leave(r.cid, r.tick, "replaced", batches);
            const bool sixup = seat.sixup;
            seat = ThBuilderState::Seat{};
            seat.sixup = sixup;  // its JOINVER record comes just before the JOIN
            seat.connected = true;
            break;
        }
        case ThKind::drop: {
            leave(r.cid, r.tick, r.text.empty() ? "left" : r.text, batches);
            state_.seats[static_cast<size_t>(r.cid)] = ThBuilderState::Seat{};
            break;
        }
        case ThKind::console_command:
            ++state_.counts.console_commands;
            break;
        case ThKind::ex:
            extra(r, batches);
            break;
        case ThKind::tick_skip:
            break;
        case ThKind::finish:
            end("finished", batches);
            break;
    }
}

// --- the saved form ------------------------------------------------------------------

namespace {

json input_to_json(const ThInput& input) {
    json out = json::array();
    for (int i = 0; i < ThInput::kFields; ++i)
        out.push_back(input.at(i));
    return out;
}

ThInput input_from_json(const json& in) {
    if (!in.is_array() || in.size() != ThInput::kFields)
        throw std::runtime_error("an input is not 10 integers");
    ThInput out;
    for (int i = 0; i < ThInput::kFields; ++i)
        out.at(i) = in.at(static_cast<size_t>(i)).get<int32_t>();
    return out;
}

int32_t cid_from_json(const json& in) {
    const int32_t cid = in.get<int32_t>();
    if (cid < 0 || cid >= kThMaxClients) throw std::runtime_error("a client id out of range");
    return cid;
}

}  // namespace

json th_state_to_json(const ThState& s) {
    json seats = json::array();
    for (int32_t cid = 0; cid < kThMaxClients; ++cid) {
        const auto& seat = s.seats[static_cast<size_t>(cid)];
        if (seat == ThState::Seat{}) continue;
        seats.push_back({{"cid", cid},
                         {"alive", seat.alive},
                         {"known", seat.known},
                         {"x", seat.x},
                         {"y", seat.y},
                         {"has_input", seat.has_input},
                         {"input_known", seat.input_known},
                         {"input", input_to_json(seat.input)}});
    }
    return {{"header_read", s.header_read},
            {"finished", s.finished},
            {"tick", s.tick},
            {"last_player_cid", s.last_player_cid},
            {"seats", seats}};
}

ThState th_state_from_json(const json& in) {
    try {
        ThState s;
        s.header_read = in.at("header_read").get<bool>();
        s.finished = in.at("finished").get<bool>();
        s.tick = in.at("tick").get<int32_t>();
        s.last_player_cid = in.at("last_player_cid").get<int32_t>();
        for (const auto& seat : in.at("seats")) {
            auto& out = s.seats[static_cast<size_t>(cid_from_json(seat.at("cid")))];
            out.alive = seat.at("alive").get<bool>();
            out.known = seat.at("known").get<bool>();
            out.x = seat.at("x").get<int32_t>();
            out.y = seat.at("y").get<int32_t>();
            out.has_input = seat.at("has_input").get<bool>();
            out.input_known = seat.at("input_known").get<bool>();
            out.input = input_from_json(seat.at("input"));
        }
        return s;
    } catch (const json::exception& e) {
        throw std::runtime_error(std::string("the reader's state: ") + e.what());
    }
}

json th_builder_to_json(const ThBuilderState& s) {
    json seats = json::array();
    for (int32_t cid = 0; cid < kThMaxClients; ++cid) {
        const auto& seat = s.seats[static_cast<size_t>(cid)];
        if (seat == ThBuilderState::Seat{}) continue;
        seats.push_back({{"cid", cid},
                         {"connected", seat.connected},
                         {"sixup", seat.sixup},
                         {"player", seat.player},
                         {"name", seat.name},
                         {"auth_name", seat.auth_name},
                         {"client_version", seat.client_version},
                         {"auth_level", seat.auth_level},
                         {"connection_id", seat.connection_id},
                         {"positioned", seat.positioned},
                         {"x", seat.x},
                         {"y", seat.y},
                         {"pos_tick", seat.pos_tick},
                         {"has_input", seat.has_input},
                         {"input", input_to_json(seat.input)},
                         {"last_aim_tick", seat.last_aim_tick}});
    }
    const ThEventCounts& c = s.counts;
    return {{"open", s.open},
            {"match_id", s.match_id},
            {"next_sequence", s.next_sequence},
            {"tick", s.tick},
            {"map", s.map},
            {"rules", s.rules},
            {"started_unix_us", s.started_unix_us},
            {"seats", seats},
            {"ids", s.ids},
            {"counts",
             {c.events, c.players, c.positions, c.server_teleports, c.orders, c.messages,
              c.console_commands, c.unknown_extras, c.batches}}};
}

ThBuilderState th_builder_from_json(const json& in) {
    try {
        ThBuilderState s;
        s.open = in.at("open").get<bool>();
        s.match_id = in.at("match_id").get<uint64_t>();
        s.next_sequence = in.at("next_sequence").get<uint64_t>();
        s.tick = in.at("tick").get<int32_t>();
        s.map = in.at("map").get<std::string>();
        s.rules = in.at("rules").get<std::string>();
        s.started_unix_us = in.at("started_unix_us").get<int64_t>();
        for (const auto& seat : in.at("seats")) {
            auto& out = s.seats[static_cast<size_t>(cid_from_json(seat.at("cid")))];
            out.connected = seat.at("connected").get<bool>();
            out.sixup = seat.at("sixup").get<bool>();
            out.player = seat.at("player").get<uint32_t>();
            out.name = seat.at("name").get<std::string>();
            out.auth_name = seat.at("auth_name").get<std::string>();
            out.client_version = seat.at("client_version").get<std::string>();
            out.auth_level = seat.at("auth_level").get<int32_t>();
            out.connection_id = seat.at("connection_id").get<uint64_t>();
            out.positioned = seat.at("positioned").get<bool>();
            out.x = seat.at("x").get<int32_t>();
            out.y = seat.at("y").get<int32_t>();
            out.pos_tick = seat.at("pos_tick").get<int32_t>();
            out.has_input = seat.at("has_input").get<bool>();
            out.input = input_from_json(seat.at("input"));
            out.last_aim_tick = seat.at("last_aim_tick").get<int32_t>();
        }
        s.ids = in.at("ids").get<std::map<std::string, uint32_t>>();
        const auto& c = in.at("counts");
        if (!c.is_array() || c.size() != 9)
            throw std::runtime_error("the counts are not 9 integers");
        ThEventCounts& o = s.counts;
        uint64_t* fields[] = {&o.events,           &o.players,        &o.positions,
                              &o.server_teleports, &o.orders,         &o.messages,
                              &o.console_commands, &o.unknown_extras, &o.batches};
        for (size_t i = 0; i < 9; ++i)
            *fields[i] = c.at(i).get<uint64_t>();
        return s;
    } catch (const json::exception& e) {
        throw std::runtime_error(std::string("the match's state: ") + e.what());
    }
}

}  // namespace arbiter::ddnet
