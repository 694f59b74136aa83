#include "lines.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::luanti {

namespace {

using nlohmann::json;

struct Refused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

constexpr std::array<std::pair<LineKind, std::string_view>, 16> kKinds{{
    {LineKind::start, "start"},
    {LineKind::join, "join"},
    {LineKind::leave, "leave"},
    {LineKind::allow, "allow"},
    {LineKind::pos, "pos"},
    {LineKind::dig_start, "dig_start"},
    {LineKind::dig, "dig"},
    {LineKind::place, "place"},
    {LineKind::punch, "punch"},
    {LineKind::item, "item"},
    {LineKind::die, "die"},
    {LineKind::respawn, "respawn"},
    {LineKind::cheat, "cheat"},
    {LineKind::step, "step"},
    {LineKind::lost, "lost"},
    {LineKind::end, "end"},
}};

// Relay times must fit a double exactly (ingest refuses past +-2^53 us).
constexpr double kMaxTime = 9007199254740992.0;
// Luanti's world is +-31,000 nodes; positions past this are no position.
constexpr double kMaxCoordinate = 1e6;

// The fields of one line's object, each taken with its type checked.
class Fields {
  public:
    explicit Fields(const json& object) : object_(object) {}

    const json* find(const char* key) const {
        auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }
    double number(const char* key, double low, double high) const {
        const json* value = find(key);
        if (!value) throw Refused(fmt::format("\"{}\" is missing", key));
        return checked_number(key, *value, low, high);
    }
    double number_or(const char* key, double fallback, double low, double high) const {
        const json* value = find(key);
        return value ? checked_number(key, *value, low, high) : fallback;
    }
    int64_t integer(const char* key, double low, double high) const {
        const double value = number(key, low, high);
        if (value != std::floor(value))
            throw Refused(fmt::format("\"{}\" must be a whole number", key));
        return static_cast<int64_t>(value);
    }
    int64_t integer_or(const char* key, int64_t fallback, double low, double high) const {
        return find(key) ? integer(key, low, high) : fallback;
    }
    bool boolean_or(const char* key, bool fallback) const {
        const json* value = find(key);
        if (!value) return fallback;
        if (!value->is_boolean()) throw Refused(fmt::format("\"{}\" must be true or false", key));
        return value->get<bool>();
    }
    std::string text(const char* key, size_t max_bytes) const {
        const json* value = find(key);
        if (!value) throw Refused(fmt::format("\"{}\" is missing", key));
        return checked_text(key, *value, max_bytes);
    }
    std::string text_or(const char* key, size_t max_bytes) const {
        const json* value = find(key);
        return value ? checked_text(key, *value, max_bytes) : std::string();
    }
    NodeVec vec(const char* x, const char* y, const char* z) const {
        return {number(x, -kMaxCoordinate, kMaxCoordinate),
                number(y, -kMaxCoordinate, kMaxCoordinate),
                number(z, -kMaxCoordinate, kMaxCoordinate)};
    }

  private:
    static double checked_number(const char* key, const json& value, double low, double high) {
        if (!value.is_number()) throw Refused(fmt::format("\"{}\" must be a number", key));
        const double number = value.get<double>();
        if (!std::isfinite(number) || number < low || number > high)
            throw Refused(fmt::format("\"{}\" is {}, outside {} to {}", key, number, low, high));
        return number;
    }
    static std::string checked_text(const char* key, const json& value, size_t max_bytes) {
        if (!value.is_string()) throw Refused(fmt::format("\"{}\" must be a string", key));
        std::string text = value.get<std::string>();
        if (text.size() > max_bytes)
            throw Refused(fmt::format("\"{}\" is longer than {} bytes", key, max_bytes));
        return text;
    }
    const json& object_;
};

// Luanti's own rule for player names (a name is 1 to 20 of A-Z a-z 0-9 _ -): the bridge
// refuses anything else, so that a name cannot carry text into a log, a page or a chat line.
std::string player_name(const Fields& fields, const char* key) {
    std::string name = fields.text(key, 20);
    if (name.empty()) throw Refused(fmt::format("\"{}\" is empty", key));
    for (const char c : name) {
        const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                             (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!allowed)
            throw Refused(fmt::format("\"{}\" is not a Luanti player name", key));
    }
    return name;
}

constexpr size_t kMaxItemName = 256;

LineKind kind_of(const std::string& name) {
    for (const auto& [kind, text] : kKinds)
        if (text == name) return kind;
    throw Refused(fmt::format("unknown line kind \"{}\"", host::showable_name(name)));
}

void read_body(Line& line, const Fields& f) {
    switch (line.kind) {
        case LineKind::start:
            line.session = f.text_or("session", 128);
            line.game = f.text_or("game", 64);
            line.world = f.text_or("world", 256);
            line.version = f.text_or("version", 64);
            // To 2096: the run's wall clock in microseconds stays inside ingest's +-2^53.
            line.unix_s = f.integer("unix", 0, 4e9);
            line.step_s = f.number_or("step_s", 0.09, 0.001, 10.0);
            return;
        case LineKind::join: {
            line.player = player_name(f, "p");
            const std::string addr = f.text_or("addr", 16);
            for (const char c : addr)
                if (!std::isxdigit(static_cast<unsigned char>(c)))
                    throw Refused("\"addr\" must be a hexadecimal hash");
            line.address_hash = addr.empty() ? 0 : std::stoull(addr, nullptr, 16);
            line.protocol = f.integer_or("proto", 0, 0, 1e6);
            line.reconnect = f.boolean_or("reconnect", false);
            return;
        }
        case LineKind::leave:
            line.player = player_name(f, "p");
            line.timed_out = f.boolean_or("timeout", false);
            return;
        case LineKind::allow:
            line.player = player_name(f, "p");
            // Luanti takes any physics factor; past 1000 none means anything any more.
            line.allowance.speed = f.number_or("speed", 1, 0, 1000);
            line.allowance.jump = f.number_or("jump", 1, 0, 1000);
            line.allowance.gravity = f.number_or("gravity", 1, -1000, 1000);
            line.allowance.fast = f.boolean_or("fast", false);
            line.allowance.fly = f.boolean_or("fly", false);
            line.allowance.noclip = f.boolean_or("noclip", false);
            line.allowance.attached = f.boolean_or("attached", false);
            return;
        case LineKind::pos: {
            line.player = player_name(f, "p");
            line.position = f.vec("x", "y", "z");
            line.velocity = {f.number_or("vx", 0, -kMaxCoordinate, kMaxCoordinate),
                             f.number_or("vy", 0, -kMaxCoordinate, kMaxCoordinate),
                             f.number_or("vz", 0, -kMaxCoordinate, kMaxCoordinate)};
            line.yaw = f.number_or("yaw", 0, -100, 100);
            line.pitch = f.number_or("pitch", 0, -100, 100);
            line.has_look = f.find("yaw") && !f.find("yaw")->is_null() && f.find("pitch") &&
                            !f.find("pitch")->is_null();
            line.controls = static_cast<uint32_t>(f.integer_or("ctl", 0, 0, 65535));
            if (const json* ground = f.find("ground"); ground && !ground->is_null()) {
                if (!ground->is_boolean()) throw Refused("\"ground\" must be true, false or null");
                line.supported = ground->get<bool>();
            }
            line.inside = f.text_or("inside", kMaxItemName);
            line.server_move = f.boolean_or("server", false);
            return;
        }
        case LineKind::dig_start:
        case LineKind::dig:
        case LineKind::place:
            line.player = player_name(f, "p");
            line.node = f.text("node", kMaxItemName);
            line.at = f.vec("x", "y", "z");
            line.tool = f.text_or("tool", kMaxItemName);
            // Luanti's dig times are seconds; a day is past any tool.
            if (line.kind == LineKind::dig && f.find("time"))
                line.dig_time_s = f.number("time", 0, 86400);
            return;
        case LineKind::punch:
            line.player = player_name(f, "p");
            line.target = player_name(f, "target");
            line.tool = f.text_or("tool", kMaxItemName);
            line.range_m = f.number("range", 0, kMaxCoordinate);
            line.damage = f.number_or("damage", 0, -1e9, 1e9);
            return;
        case LineKind::item:
            line.player = player_name(f, "p");
            line.item = f.text("item", kMaxItemName);
            // Stacks are counted in 16 bits; a whole inventory fits 32.
            line.delta = f.integer("delta", -2147483647.0, 2147483647.0);
            line.count = f.integer("count", 0, 2147483647.0);
            line.source = f.text_or("source", 64);
            return;
        case LineKind::die:
        case LineKind::cheat:
            line.player = player_name(f, "p");
            line.reason = f.text_or(line.kind == LineKind::cheat ? "type" : "reason", 64);
            return;
        case LineKind::respawn:
            line.player = player_name(f, "p");
            return;
        case LineKind::step:
            line.step = static_cast<uint64_t>(f.integer("n", 0, kMaxTime));
            line.lag_us = f.integer_or("lag_us", 0, 0, 4294967295.0);
            return;
        case LineKind::lost:
            line.lost_steps = static_cast<uint64_t>(f.integer("steps", 1, 1e12));
            return;
        case LineKind::end:
            line.reason = f.text_or("reason", 64);
            return;
    }
}

}  // namespace

std::string_view name_of(LineKind kind) {
    for (const auto& [k, text] : kKinds)
        if (k == kind) return text;
    return "?";
}

ParsedLine parse_line(std::string_view text) {
    if (text.size() > kMaxLineBytes)
        return fmt::format("the line is longer than {} bytes", kMaxLineBytes);
    // Objects of flat fields only: anything nested deeper is no line of the mod's.
    host::UntrustedJson parsed = host::parse_untrusted_json(text, kMaxLineBytes, 2);
    if (!parsed.ok()) return parsed.problem;
    if (!parsed.value.is_object()) return std::string("the line is not a JSON object");
    try {
        const Fields fields(parsed.value);
        Line line;
        line.kind = kind_of(fields.text("k", 32));
        line.t_us = fields.integer("t", 0, kMaxTime);
        read_body(line, fields);
        return line;
    } catch (const Refused& refused) {
        return std::string(refused.what());
    } catch (const std::exception& e) {
        return fmt::format("unreadable: {}", e.what());
    }
}

}  // namespace arbiter::luanti
