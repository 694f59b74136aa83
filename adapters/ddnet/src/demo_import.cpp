#include "demo_import.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <variant>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/simulate.hpp"

namespace arbiter::ddnet {

namespace {

constexpr double kTickRateHz = 50.0;  // DDNet's server tick rate (SERVER_TICK_SPEED)
constexpr int64_t kTickUs = 20000;
constexpr double kUnitsPerMetre = 32.0;  // one tile
// The furthest DDNet's physics moves a tee in one tick, in game units, with a margin.
// Horizontal movement is slowed by the velocity ramp (default tuning: start 550 units/s,
// range 2000, curvature 1.4), which caps it near 2,400 units/s, 48 a tick; the ninja's
// dash moves 50 a tick; falling is not ramped but gains 0.5 units/tick² of gravity, and
// speed-up tiles and tune zones change all of it. 96 units (3 tiles) a tick, plus 2 tiles
// for the rounding of dead-reckoning ticks, is beyond any of them: a longer move between
// two states the server computed is a teleporter (or a tune zone, or a rescue), the
// server's own doing. docs/games/ddnet.md gives what the real demos measure.
constexpr double kMaxUnitsPerTick = 96.0;
constexpr double kTeleportSlackUnits = 64.0;
// An aim change within this many ticks of the one before continues the same motion.
constexpr int64_t kAimMotionTicks = 4;

fb::Vec3 to_metres(double x, double y) {
    return fb::Vec3(static_cast<float>(x / kUnitsPerMetre), 0.0f,
                    static_cast<float>(-y / kUnitsPerMetre));
}

// The aim target of a character: its own target (DDNet's item) or a tile along its angle.
fb::Vec3 aim_target(const CharacterItem& c) {
    double dx = 0, dy = 0;
    if (c.target_x && c.target_y && (*c.target_x != 0 || *c.target_y != 0)) {
        dx = *c.target_x;
        dy = *c.target_y;
    } else {
        const double angle = c.angle / 256.0;
        dx = std::cos(angle) * kUnitsPerMetre;
        dy = std::sin(angle) * kUnitsPerMetre;
    }
    return to_metres(c.x + dx, c.y + dy);
}

// Where the character aims (schema 1.2), in the game's own frame (y down): DDNet's own
// target, relative to the tee in game units, where the snapshot has it. A 0.6 character
// has only its angle (1/256 radian): the aim point is then put kAngleAimUnits along it,
// relative too. Its direction is the player's; its distance is not (docs/aim.md). Not a
// look: a 2-D aim's angle swings as fast as the cursor passes the tee, which no view
// does, so the checks of a view's turning would read the game, not the hand.
constexpr double kAngleAimUnits = 256.0;  // 8 tiles
fb::AimPoint aim_point(const CharacterItem& c) {
    if (c.target_x && c.target_y && (*c.target_x != 0 || *c.target_y != 0))
        return fb::AimPoint(static_cast<float>(*c.target_x), static_cast<float>(*c.target_y), true);
    const double angle = c.angle / 256.0;
    return fb::AimPoint(static_cast<float>(std::cos(angle) * kAngleAimUnits),
                        static_cast<float>(std::sin(angle) * kAngleAimUnits), true);
}

bool aim_moved(const CharacterItem& a, const CharacterItem& b) {
    return a.angle != b.angle || a.target_x != b.target_x || a.target_y != b.target_y;
}

// One event of a snapshot, before the snapshot's events are put in tick order.
struct Pending {
    int64_t tick = 0;
    uint32_t player = 0;
    std::variant<build::PlayerJoin, build::PlayerLeave, build::Position, build::Order> body;
};

// A client slot of the server (a client id) and what was last seen of it.
struct Seat {
    uint32_t player = 0;  // 0: nobody named in this slot
    std::string name;
    int32_t last_seen_tick = -1;         // the snapshot that last showed its character
    std::optional<CharacterItem> state;  // the last state taken
    int64_t last_aim_tick = -1;
    bool killed = false;  // a kill message since the state was taken
};

class Importer final : public DemoVisitor {
  public:
    Importer(tools::StagedEventFile& file, const DemoImportOptions& options,
             DemoImportReport& report, host::ProgressStretch& progress)
        : stream_(file, options.relay_id, options.match_id, options.batch_events),
          report_(report),
          progress_(progress) {}

    void on_header(const DemoHeader& header) override { header_ = header; }
    void on_snapshot(const DemoSnapshot& snapshot) override;
    void on_message(const DemoMessage& message) override {
        if (!message.kill) return;
        auto it = seats_.find(message.kill->victim);
        if (it != seats_.end()) it->second.killed = true;
    }
    void on_gap(uint64_t, uint64_t) override {
        // Nothing seen across a gap continues: every character is new again after it.
        for (auto& [id, seat] : seats_)
            seat.last_seen_tick = -1;
        previous_tick_ = -1;
    }
    void finish();

  private:
    void start(int32_t tick);
    void seat_players(const DemoSnapshot& snapshot, std::vector<Pending>& out);
    void take_state(Seat& seat, const CharacterItem& c, int32_t snapshot_tick,
                    std::vector<Pending>& out);
    int64_t time_us(int64_t tick) const { return (tick - first_tick_) * kTickUs; }

    tools::MatchStream stream_;
    DemoImportReport& report_;
    host::ProgressStretch& progress_;
    DemoHeader header_;
    bool started_ = false;
    int64_t first_tick_ = 0, last_tick_ = 0;
    int32_t previous_tick_ = -1;  // the snapshot before
    int64_t last_us_ = 0;
    std::map<int32_t, Seat> seats_;
    std::map<std::string, uint32_t> ids_;  // player ids by name
};

void Importer::start(int32_t tick) {
    started_ = true;
    first_tick_ = tick;
    stream_.add(0, static_cast<uint64_t>(tick), 0,
                build::MatchStart{.game = "ddnet",
                                  .map = host::to_valid_utf8(header_.map_name),
                                  .rules = "demo",
                                  .rated = false,
                                  .tick_rate_hz = static_cast<float>(kTickRateHz),
                                  .started_unix_us = 0});
}

void Importer::on_snapshot(const DemoSnapshot& snapshot) {
    if (!started_) start(snapshot.tick);
    progress_.update(snapshot.offset);
    std::vector<Pending> events;
    seat_players(snapshot, events);
    for (const CharacterItem& c : snapshot.characters) {
        auto it = seats_.find(c.client_id);
        if (it == seats_.end() || it->second.player == 0) {
            ++report_.characters_without_player;
            continue;
        }
        take_state(it->second, c, snapshot.tick, events);
    }
    // A snapshot's states were computed at their own ticks, up to the snapshot's: in tick
    // order, never before an event already written (a state first seen late, as a tee
    // that comes into view, is placed at the snapshot's time).
    std::stable_sort(events.begin(), events.end(),
                     [](const Pending& a, const Pending& b) { return a.tick < b.tick; });
    for (Pending& e : events) {
        const int64_t t_us = std::max(last_us_, time_us(e.tick));
        const int64_t tick = first_tick_ + t_us / kTickUs;
        last_us_ = t_us;
        std::visit(
            [&](const auto& body) {
                stream_.add(t_us, static_cast<uint64_t>(tick), e.player, body);
            },
            e.body);
    }
    previous_tick_ = snapshot.tick;
    last_tick_ = snapshot.tick;
}

void Importer::seat_players(const DemoSnapshot& snapshot, std::vector<Pending>& out) {
    std::map<int32_t, const ClientInfoItem*> named;
    for (const ClientInfoItem& c : snapshot.clients)
        named[c.client_id] = &c;
    // Gone, or someone else in the slot: the player there leaves.
    for (auto& [id, seat] : seats_) {
        auto it = named.find(id);
        if (seat.player != 0 && (it == named.end() || it->second->name != seat.name)) {
            out.push_back({snapshot.tick, seat.player, build::PlayerLeave{.reason = "left"}});
            seat = Seat{};
        }
    }
    for (const auto& [id, info] : named) {
        Seat& seat = seats_[id];
        if (seat.player != 0) continue;
        auto [known, added] = ids_.emplace(info->name, static_cast<uint32_t>(ids_.size() + 1));
        seat.player = known->second;
        seat.name = info->name;
        out.push_back({snapshot.tick, seat.player,
                       build::PlayerJoin{.account_id = host::to_valid_utf8(info->name),
                                         .client_version = "",
                                         .handshake = "ddnet-demo",
                                         .connection_id = static_cast<uint64_t>(id),
                                         .address_hash = 0,
                                         .rating = 0.0f,
                                         .rating_tier = "",
                                         .reconnect = !added}});
        if (added) ++report_.players;
    }
}

void Importer::take_state(Seat& seat, const CharacterItem& c, int32_t snapshot_tick,
                          std::vector<Pending>& out) {
    const bool appears = seat.last_seen_tick < 0 || seat.last_seen_tick != previous_tick_;
    seat.last_seen_tick = snapshot_tick;
    if (!appears && seat.state && seat.state->tick == c.tick) return;  // nothing new computed
    // The tick the server computed this state at; 0 (no dead reckoning) or a tick not
    // yet reached is the snapshot's own.
    const int64_t tick = c.tick > 0 && c.tick <= snapshot_tick ? c.tick : snapshot_tick;

    bool teleport = appears || seat.killed || !seat.state;
    if (!teleport) {
        const CharacterItem& last = *seat.state;
        const int64_t last_tick =
            last.tick > 0 && last.tick <= tick ? last.tick : std::max<int64_t>(tick - 2, 0);
        const double ticks = static_cast<double>(std::max<int64_t>(tick - last_tick, 1));
        const double moved = std::hypot(double(c.x) - last.x, double(c.y) - last.y);
        teleport = moved > kMaxUnitsPerTick * ticks + kTeleportSlackUnits;
    }
    const double to_m_per_s = kTickRateHz / 256.0 / kUnitsPerMetre;
    const fb::AimPoint aim = aim_point(c);
    out.push_back(
        {tick, seat.player,
         build::Position{.position = to_metres(c.x, c.y),
                         .velocity = fb::Vec3(static_cast<float>(c.vel_x * to_m_per_s), 0.0f,
                                              static_cast<float>(-c.vel_y * to_m_per_s)),
                         .on_ground = std::nullopt,
                         .ground_height = std::nullopt,
                         .server_teleport = teleport,
                         .aim = aim}});
    ++report_.positions;
    if (teleport) ++report_.server_teleports;

    if (!appears && seat.state && !seat.killed) {
        const CharacterItem& last = *seat.state;
        auto order = [&](const char* kind, bool repeat) {
            out.push_back({tick, seat.player,
                           build::Order{.kind = kind,
                                        .target_player = 0,
                                        .target = aim_target(c),
                                        .repeat = repeat,
                                        .claimed_tick = std::nullopt,
                                        .client_time_us = std::nullopt,
                                        .response_to = 0,
                                        .aim = aim}});
            ++report_.orders;
        };
        if (c.direction != last.direction) order("direction", false);
        if ((c.jumped & ~last.jumped) != 0) order("jump", false);
        if (last.hook_state <= 0 && c.hook_state >= 1) order("hook", false);
        if (c.full && last.full && c.attack_tick != last.attack_tick) order("fire", false);
        if (c.full && last.full && c.weapon != last.weapon) order("weapon", false);
        if (aim_moved(last, c)) {
            order("aim", seat.last_aim_tick >= 0 && tick - seat.last_aim_tick <= kAimMotionTicks);
            seat.last_aim_tick = tick;
        }
    }
    seat.state = c;
    seat.killed = false;
}

void Importer::finish() {
    if (!started_) return;
    const int64_t end_us = std::max(last_us_, time_us(last_tick_));
    stream_.add(end_us, static_cast<uint64_t>(last_tick_), 0,
                build::MatchEnd{.reason = "finished"});
    stream_.flush();
    report_.events = stream_.events();
}

}  // namespace

bool looks_like_demo(const std::filesystem::path& path) {
    if (path.extension() == ".demo") return true;
    std::ifstream in(path, std::ios::binary);
    uint8_t head[7] = {};
    if (!in.read(reinterpret_cast<char*>(head), sizeof head)) return false;
    return is_demo_magic(head);
}

DemoImportReport import_demo(const std::filesystem::path& in, const std::filesystem::path& out,
                             const DemoImportOptions& options) {
    if (options.batch_events == 0 || options.batch_events > tools::kMaxBatchEvents)
        throw std::invalid_argument("--batch-events must be from 1 to " +
                                    std::to_string(tools::kMaxBatchEvents));
    if (options.relay_id.empty()) throw std::invalid_argument("--relay must not be empty");
    DemoImportReport report;
    std::error_code ignored;
    const uint64_t size = std::filesystem::file_size(in, ignored);
    tools::StagedEventFile file(out);
    {
        host::ProgressStretch progress(options.progress, "import", ignored ? 0 : size,
                                       host::ProgressUnit::bytes);
        Importer importer(file, options, report, progress);
        report.read = read_demo_file(in, importer);
        if (!report.read.header_ok) return report;
        importer.finish();
    }
    if (report.events == 0) {
        report.read.problems.push_back({0, "no snapshot could be read: nothing to import"});
        return report;
    }
    report.batches = file.batches();
    file.commit();
    report.written = true;
    return report;
}

}  // namespace arbiter::ddnet
