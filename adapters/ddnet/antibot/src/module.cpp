#include "module.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <utility>

#include "text.hpp"

namespace arbiter::ddnet::antibot {

namespace {

constexpr int kTickRateHz = 50;  // SERVER_TICK_SPEED
constexpr int64_t kTickUs = 1'000'000 / kTickRateHz;
constexpr float kUnitsPerMetre = 32.0f;  // one tile
// The furthest DDNet's physics moves a tee in one tick, in game units, with a margin (the
// velocity ramp caps running near 48 units a tick, the ninja's dash is 50): a longer move
// is a teleporter or a tune zone, the server's doing. As the demo importer.
constexpr float kMaxUnitsPerTick = 96.0f;
// An aim change within this many ticks of the one before continues the same motion.
constexpr int kAimMotionTicks = 4;
// A tee that stands still is still reported once a second, so that a plugin's window of
// positions never waits long.
constexpr int kPositionKeepAliveTicks = kTickRateHz;
constexpr size_t kMaxReasonBytes = 128;
constexpr size_t kMaxNameBytes = 16;  // MAX_NAME_LENGTH, the round data's m_aName
constexpr size_t kMaxQueuedHostLines = 256;
// Inputs a client may have in flight: the server keeps 200, a client sends one or two a
// tick a few ticks ahead; more than this are inputs the game will never take.
constexpr size_t kMaxQueuedInputs = 32;

fb::Vec3 to_metres(float x, float y) {
    return fb::Vec3(x / kUnitsPerMetre, 0.0f, -y / kUnitsPerMetre);
}

// What the server shows for a slot whose client has not entered the game.
bool is_real_name(const std::string& name) {
    return !name.empty() && name != "(connecting)" && name != "(invalid)";
}

const char* action_name(uint32_t action) {
    switch (action) {
        case ARBITER_ACTION_CLEAR:
            return "Clear";
        case ARBITER_ACTION_MONITOR:
            return "Monitor";
        case ARBITER_ACTION_FLAG_FOR_REVIEW:
            return "FlagForReview";
        case ARBITER_ACTION_SHADOW_RESTRICT:
            return "ShadowRestrict";
        default:
            return "?";
    }
}

// The host's log lines, process-wide (arbiter_host_set_log_callback is). With `[host]
// threads` above 1 a plugin's line arrives on a worker thread, where the server's console
// must not be called: lines are queued here and handed to the console on the server's
// thread, at the next engine tick.
struct HostLog {
    std::mutex mutex;
    std::deque<std::string> lines;
    uint64_t dropped = 0;
};
HostLog& host_log() {
    static HostLog log;
    return log;
}

void on_host_log(void*, int32_t level, const char* message) {
    static constexpr const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};
    const char* name = level >= 0 && level <= 4 ? kLevels[level] : "?";
    HostLog& log = host_log();
    std::lock_guard lock(log.mutex);
    if (log.lines.size() >= kMaxQueuedHostLines) {
        ++log.dropped;
        return;
    }
    log.lines.push_back(std::string("arbiter host [") + name +
                        "]: " + bounded_c_string(message, 1024));
}

void on_host_action(void* user_data, const arbiter_assessment* assessment) {
    if (user_data && assessment) static_cast<Module*>(user_data)->handle_assessment(*assessment);
}

}  // namespace

struct Module::Seat {
    bool connected = false;
    bool sixup = false;
    uint32_t player = 0;  // 0: not joined in this match
    std::string name;     // as the server showed it when the player joined
    // Inputs read from the client's messages, not yet taken by the game, with the tick
    // the server will apply each at (its intended tick, at least the next one).
    std::deque<std::pair<int, PlayerInput>> queued;
    std::optional<PlayerInput> received;  // the last input whose tick has come
    std::optional<PlayerInput> last_input;
    bool last_input_full = false;
    int last_aim_tick = -1;
    // The tee as last seen, and as last reported.
    bool seen = false, respawned = true;
    int seen_tick = -1, spawn_tick = -1;
    float x = 0, y = 0;
    int reported_tick = -1;
    float reported[4] = {};
};

ModuleSettings settings_from_environment(const std::string& default_config,
                                         std::vector<std::string>& problems) {
    ModuleSettings s;
    const char* config = std::getenv("ARBITER_ANTIBOT_CONFIG");
    s.config_path = config && *config ? config : default_config;
    if (const char* relay = std::getenv("ARBITER_ANTIBOT_RELAY"); relay && *relay) {
        const std::string value = bounded_c_string(relay, 65);
        if (value.size() > 64 || to_valid_utf8(value) != value)
            problems.push_back(
                "ARBITER_ANTIBOT_RELAY must be 1 to 64 printable characters; using \"" +
                s.relay_id + "\"");
        else
            s.relay_id = value;
    }
    if (const char* ticks = std::getenv("ARBITER_ANTIBOT_BATCH_TICKS"); ticks && *ticks) {
        char* end = nullptr;
        const long value = std::strtol(ticks, &end, 10);
        if (*end != '\0' || value < 1 || value > kTickRateHz)
            problems.push_back("ARBITER_ANTIBOT_BATCH_TICKS must be 1 to 50; using " +
                               std::to_string(s.batch_ticks));
        else
            s.batch_ticks = static_cast<int>(value);
    }
    if (const char* report = std::getenv("ARBITER_ANTIBOT_REPORT"); report && *report) {
        const std::string value = bounded_c_string(report, 16);
        if (value == "flag")
            s.report_action = ARBITER_ACTION_FLAG_FOR_REVIEW;
        else if (value == "monitor")
            s.report_action = ARBITER_ACTION_MONITOR;
        else
            problems.push_back("ARBITER_ANTIBOT_REPORT must be flag or monitor; using flag");
    }
    return s;
}

Module::Module(ModuleSettings settings, ServerCallbacks callbacks)
    : settings_(std::move(settings)), server_(std::move(callbacks)) {
    for (int i = 0; i < kMaxClients; ++i)
        seats_.push_back(std::make_unique<Seat>());
    arbiter_host_set_log_callback(on_host_log, nullptr);
    arbiter_host* host = nullptr;
    const arbiter_status status = arbiter_host_create(settings_.config_path.c_str(), &host);
    if (status != ARBITER_OK) {
        log("arbiter: cannot start the host from " + settings_.config_path + ": " +
            (host ? arbiter_host_last_error(host) : "no detail") + "; the module stays idle");
        if (host && *arbiter_host_plugin_errors(host))
            log(std::string("arbiter: refused plugins: ") + arbiter_host_plugin_errors(host));
        arbiter_host_destroy(host);
        drain_host_log();
        return;
    }
    host_ = host;
    if (*arbiter_host_plugin_errors(host_))
        log(std::string("arbiter: refused plugins: ") + arbiter_host_plugin_errors(host_));
    arbiter_host_set_action_callback(host_, on_host_action, this);
    drain_host_log();
    log("arbiter: antibot module running, config " + settings_.config_path + ", relay " +
        settings_.relay_id + ", a batch every " + std::to_string(settings_.batch_ticks) +
        " tick(s)");
}

Module::~Module() {
    detach_server();
    if (host_) {
        if (match_open_) end_match("server stopped");
        arbiter_host_destroy(host_);
        host_ = nullptr;
    }
    drain_host_log();
    arbiter_host_set_log_callback(nullptr, nullptr);
}

void Module::detach_server() {
    server_ = ServerCallbacks{};
}

void Module::log(const std::string& line) {
    if (server_.log)
        server_.log(line);
    else
        std::fprintf(stderr, "%s\n", line.c_str());
}

void Module::drain_host_log() {
    std::deque<std::string> lines;
    uint64_t dropped = 0;
    {
        HostLog& hl = host_log();
        std::lock_guard lock(hl.mutex);
        lines.swap(hl.lines);
        std::swap(dropped, hl.dropped);
    }
    for (const std::string& line : lines)
        log(line);
    if (dropped)
        log("arbiter: " + std::to_string(dropped) + " host log line(s) dropped (too many at once)");
}

Module::Seat* Module::seat(int client_id) {
    if (client_id < 0 || client_id >= kMaxClients) return nullptr;
    return seats_[static_cast<size_t>(client_id)].get();
}

int64_t Module::time_us(int tick) const {
    return first_tick_ < 0 || tick <= first_tick_
               ? 0
               : static_cast<int64_t>(tick - first_tick_) * kTickUs;
}

template <class Body>
void Module::add(int tick, uint32_t player, const Body& body) {
    // A tick never goes back within a round; should the server's, relay time stays put.
    last_tick_ = std::max(last_tick_, tick);
    batch_->add(time_us(last_tick_), static_cast<uint64_t>(last_tick_), player, body);
    ++figures_.events;
}

void Module::ensure_match() {
    if (match_open_ || !host_ || !round_) return;
    const int tick = round_->tick();
    if (tick <= 0) return;  // the round data is not filled yet
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    // Unique across rounds and restarts of the server: the round's start in milliseconds.
    match_id_ =
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
    batch_ = std::make_unique<BatchBuilder>(settings_.relay_id, match_id_, 0);
    first_tick_ = last_tick_ = last_push_tick_ = tick;
    match_open_ = true;
    players_.clear();
    add(tick, 0,
        build::MatchStart{
            .game = "ddnet",
            .map = "",  // ABI 5 gives the map's tiles, not its name
            .rules = "antibot",
            .rated = false,
            .tick_rate_hz = static_cast<float>(kTickRateHz),
            .started_unix_us = std::chrono::duration_cast<std::chrono::microseconds>(now).count()});
}

void Module::ensure_joined(int client_id, Seat& s, const CharacterView& view) {
    if (s.player != 0 || !is_real_name(view.name)) return;
    ensure_match();
    if (!match_open_) return;
    // A slot with a name is a client in the game, whether or not the engine's join was
    // seen (a map change keeps the clients and starts a new round).
    s.connected = true;
    s.name = view.name;
    const std::string account = to_valid_utf8(view.name);
    auto [it, added] = players_.emplace(account, static_cast<uint32_t>(players_.size() + 1));
    s.player = it->second;
    add(round_->tick(), s.player,
        build::PlayerJoin{.account_id = account,
                          .client_version = "",
                          .handshake = s.sixup ? "ddnet-antibot-0.7" : "ddnet-antibot-0.6",
                          .connection_id = static_cast<uint64_t>(client_id),
                          .address_hash = 0,
                          .rating = 0.0f,
                          .rating_tier = "",
                          .reconnect = !added});
}

void Module::round_start(const RoundView* round) {
    if (match_open_) end_match("round restarted");
    round_ = round;
    // The clients stay; their players are this match's to number again.
    for (auto& s : seats_) {
        s->player = 0;
        s->queued.clear();
        s->received.reset();
        s->last_input.reset();
        s->last_aim_tick = -1;
        s->seen = false;
        s->respawned = true;
        s->reported_tick = -1;
    }
}

void Module::round_end() {
    if (match_open_) end_match("round ended");
    round_ = nullptr;
    // What the round cost and gave, in the server's log for the operator.
    log(dump());
}

void Module::end_match(const char* reason) {
    if (!match_open_) return;
    add(last_tick_, 0, build::MatchEnd{.reason = reason});
    push_pending();
    match_open_ = false;
    batch_.reset();
    for (auto& s : seats_)
        s->player = 0;
}

void Module::client_join(int client_id, bool sixup) {
    Seat* s = seat(client_id);
    if (!s) return;
    if (s->player != 0 && match_open_)
        add(round_ ? round_->tick() : last_tick_, s->player,
            build::PlayerLeave{.reason = "replaced"});
    *s = Seat{};
    s->connected = true;
    s->sixup = sixup;
}

void Module::client_drop(int client_id, const char* reason) {
    Seat* s = seat(client_id);
    if (!s) return;
    if (s->player != 0 && match_open_) {
        std::string text = to_valid_utf8(bounded_c_string(reason, kMaxReasonBytes));
        add(round_ ? round_->tick() : last_tick_, s->player,
            build::PlayerLeave{.reason = text.empty() ? "dropped" : text});
    }
    *s = Seat{};
}

void Module::client_message(int client_id, std::span<const uint8_t> chunk) {
    Seat* s = seat(client_id);
    if (!s || !host_ || !round_) return;
    auto input = read_input_message(chunk, s->sixup);
    if (!input) return;
    // The server does the same before the game sees the input: aiming at the tee itself
    // is not allowed.
    if (input->target_x == 0 && input->target_y == 0) input->target_y = -1;
    // 16.4's server keeps the input for its intended tick, or the next tick when that has
    // passed (ProcessClientPacket), and hands it to the game just before that tick.
    const int now = round_->tick();
    const int apply_at = input->intended_tick > now ? input->intended_tick : now + 1;
    if (s->queued.size() >= kMaxQueuedInputs) s->queued.pop_front();
    s->queued.emplace_back(apply_at, *input);
    ++figures_.inputs_read;
}

void Module::direct_input(int client_id) {
    Seat* s = seat(client_id);
    if (!s || !round_ || !host_) return;
    const auto view = round_->character(client_id);
    // Only a tee takes inputs; one whose position is not a number has none.
    if (!view || !view->alive) return;
    ensure_joined(client_id, *s, *view);
    if (s->player == 0) return;
    const int tick = round_->tick();

    // 16.4 calls this just before tick + 1, once for each input meant for that tick, or
    // once with the last input it received again when none came. Inputs meant for
    // earlier ticks were received by the game without being taken (no tee then, or the
    // player was chatting): the last of them is what it would take again.
    while (!s->queued.empty() && s->queued.front().first <= tick) {
        s->received = s->queued.front().second;
        s->queued.pop_front();
    }
    if (!s->queued.empty() && s->queued.front().first == tick + 1) {
        s->received = s->queued.front().second;
        s->queued.pop_front();
    }
    PlayerInput input;
    // The game's own copy of the aim says whether this is the input it took.
    const bool full = s->received && s->received->target_x == view->target_x &&
                      s->received->target_y == view->target_y;
    if (full) {
        input = *s->received;
    } else {
        // An input whose message was not read (or not matched): only its aim is known.
        input = s->last_input.value_or(PlayerInput{});
        input.target_x = view->target_x;
        input.target_y = view->target_y;
        ++figures_.inputs_unmatched;
    }
    if (!s->last_input) {  // the first input seen: what changes is measured from here
        s->last_input = input;
        s->last_input_full = full;
        return;
    }
    const PlayerInput& last = *s->last_input;
    const fb::Vec3 target = to_metres(view->x + static_cast<float>(input.target_x),
                                      view->y + static_cast<float>(input.target_y));
    auto order = [&](const char* kind, bool repeat) {
        add(tick, s->player,
            build::Order{.kind = kind,
                         .target_player = 0,
                         .target = target,
                         .repeat = repeat,
                         .claimed_tick = std::nullopt,
                         .client_time_us = std::nullopt,
                         .response_to = 0});
        ++figures_.orders;
    };
    if (full && s->last_input_full) {
        if (input.direction != last.direction) order("direction", false);
        if ((input.jump & 1) && !(last.jump & 1)) order("jump", false);
        if ((input.hook & 1) && !(last.hook & 1)) order("hook", false);
        if (count_presses(last.fire, input.fire) > 0) order("fire", false);
        if ((input.wanted_weapon != last.wanted_weapon && input.wanted_weapon != 0) ||
            count_presses(last.next_weapon, input.next_weapon) > 0 ||
            count_presses(last.prev_weapon, input.prev_weapon) > 0)
            order("weapon", false);
    }
    if (input.target_x != last.target_x || input.target_y != last.target_y) {
        order("aim", s->last_aim_tick >= 0 && tick - s->last_aim_tick <= kAimMotionTicks);
        s->last_aim_tick = tick;
    }
    s->last_input = input;
    s->last_input_full = full;
}

void Module::spawn(int client_id) {
    if (Seat* s = seat(client_id)) s->respawned = true;
}

void Module::character_tick(int client_id) {
    Seat* s = seat(client_id);
    if (!s || !round_ || !host_) return;
    const auto view = round_->character(client_id);
    if (!view || !view->alive) return;
    ensure_joined(client_id, *s, *view);
    if (s->player == 0) return;
    const int tick = round_->tick();
    if (s->seen && s->seen_tick == tick) return;  // this tick's state is taken

    bool teleport = !s->seen || s->respawned || view->spawn_tick != s->spawn_tick;
    if (!teleport) {
        const float ticks = static_cast<float>(std::max(tick - s->seen_tick, 1));
        teleport = std::hypot(view->x - s->x, view->y - s->y) > kMaxUnitsPerTick * ticks;
    }
    s->seen = true;
    s->respawned = false;
    s->seen_tick = tick;
    s->spawn_tick = view->spawn_tick;
    s->x = view->x;
    s->y = view->y;

    const float now[4] = {view->x, view->y, view->vel_x, view->vel_y};
    const bool changed = now[0] != s->reported[0] || now[1] != s->reported[1] ||
                         now[2] != s->reported[2] || now[3] != s->reported[3];
    if (!teleport && !changed && s->reported_tick >= 0 &&
        tick - s->reported_tick < kPositionKeepAliveTicks)
        return;
    std::copy(std::begin(now), std::end(now), s->reported);
    s->reported_tick = tick;
    // Velocity: units per tick into metres per second.
    const float to_m_per_s = static_cast<float>(kTickRateHz) / kUnitsPerMetre;
    add(tick, s->player,
        build::Position{
            .position = to_metres(view->x, view->y),
            .velocity = fb::Vec3(view->vel_x * to_m_per_s, 0.0f, -view->vel_y * to_m_per_s),
            .on_ground = std::nullopt,
            .ground_height = std::nullopt,
            .server_teleport = teleport});
    ++figures_.positions;
}

void Module::engine_tick() {
    if (!host_) return;
    drain_host_log();
    if (!round_) return;
    const int tick = round_->tick();
    ensure_match();
    if (!match_open_) return;
    // Players who never spawn (spectators) join by their name too; once a tick is enough.
    if (tick != last_engine_tick_) {
        last_engine_tick_ = tick;
        for (int id = 0; id < kMaxClients; ++id) {
            Seat& s = *seats_[static_cast<size_t>(id)];
            if (s.player != 0 || !s.connected) continue;
            if (const auto view = round_->character(id)) ensure_joined(id, s, *view);
        }
    }
    if (tick - last_push_tick_ >= settings_.batch_ticks) {
        last_push_tick_ = tick;
        push_pending();
    }
}

void Module::push_pending() {
    if (!batch_ || !host_ || batch_->event_count() == 0) return;
    const std::vector<uint8_t> bytes = batch_->finish();
    ++figures_.batches;
    if (arbiter_host_push(host_, bytes.data(), bytes.size()) != ARBITER_OK) {
        ++figures_.refused;
        // A refused batch is a fault of this module, not of a player: said, but not once
        // a tick for ever.
        if (figures_.refused <= 5 || figures_.refused % 1000 == 0)
            log("arbiter: batch " + std::to_string(figures_.batches) + " refused (" +
                std::to_string(figures_.refused) + " so far): " + arbiter_host_last_error(host_));
    }
    drain_host_log();
}

void Module::handle_assessment(const arbiter_assessment& a) {
    const std::string account = bounded_c_string(a.account_id, 256);
    char score[16];
    std::snprintf(score, sizeof score, "%.2f", a.combined_score);
    std::string message =
        std::string("arbiter: ") + action_name(a.action) + " (score " + score + ")";
    int client_id = -1;
    if (match_open_ && a.match_id == match_id_) {
        for (int id = 0; id < kMaxClients; ++id)
            if (seats_[static_cast<size_t>(id)]->player == a.player) client_id = id;
    }
    if (a.action >= static_cast<uint32_t>(settings_.report_action) && client_id >= 0 &&
        server_.report) {
        // The server prints "<client id>: <message>"; the name is in the message too, since
        // the slot may be someone else's by the time a person reads it.
        server_.report(client_id, message + " for " + account);
        ++figures_.reports;
    } else {
        log(message + " for " + account +
            (client_id >= 0 ? " (client " + std::to_string(client_id) + ")" : "") + ", match " +
            std::to_string(a.match_id) + " player " + std::to_string(a.player));
        if (a.action == ARBITER_ACTION_MONITOR) ++figures_.monitor_lines;
    }
}

std::string Module::dump() const {
    size_t seated = 0;
    for (const auto& s : seats_)
        if (s->player != 0) ++seated;
    const double mean_us = figures_.calls
                               ? std::chrono::duration<double, std::micro>(figures_.busy).count() /
                                     double(figures_.calls)
                               : 0.0;
    char mean[32];
    std::snprintf(mean, sizeof mean, "%.2f", mean_us);
    return std::string("arbiter: host ") + (host_ ? "running" : "idle") + ", relay " +
           settings_.relay_id + ", match " + (match_open_ ? std::to_string(match_id_) : "none") +
           ", " + std::to_string(seated) + " player(s) in it; " + std::to_string(figures_.batches) +
           " batches (" + std::to_string(figures_.refused) + " refused), " +
           std::to_string(figures_.events) + " events (" + std::to_string(figures_.positions) +
           " positions, " + std::to_string(figures_.orders) + " orders), " +
           std::to_string(figures_.inputs_read) + " input messages read (" +
           std::to_string(figures_.inputs_unmatched) + " inputs taken by aim alone), " +
           std::to_string(figures_.reports) + " reports; " + mean + " us per call over " +
           std::to_string(figures_.calls) + " calls";
}

void Module::account_call(std::chrono::nanoseconds elapsed) {
    figures_.busy += elapsed;
    ++figures_.calls;
}

}  // namespace arbiter::ddnet::antibot
