#include "bridge.hpp"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::luanti {

namespace {

using nlohmann::json;

constexpr int kStateVersion = 1;
// The flags file is begun again past this size (the mod reads it from its start then).
constexpr uintmax_t kMaxFlagsBytes = 1u << 20;

std::string default_relay(const std::filesystem::path& world) {
    std::string name = world.filename().string();
    if (name.empty()) name = world.parent_path().filename().string();
    // Relay names are at most 64 bytes of UTF-8 (the serve protocol's hello).
    return host::to_valid_utf8("luanti-" + name, 64);
}

}  // namespace

std::filesystem::path Bridge::state_path(const std::filesystem::path& world) {
    return world / "arbiter" / "bridge-state.json";
}

std::filesystem::path Bridge::flags_path(const std::filesystem::path& world) {
    return world / "arbiter" / "flags.jsonl";
}

Bridge::Bridge(BridgeOptions options)
    : options_(std::move(options)),
      builder_(options_.connection.relay.empty() ? default_relay(options_.world) : options_.connection.relay) {}

Bridge::~Bridge() = default;

void Bridge::report(const std::string& what) const {
    if (!options_.connection.quiet) std::fprintf(stderr, "arbiter luanti-bridge: %s\n", what.c_str());
}

void Bridge::restore() {
    builder_ = MatchBuilder(builder_.relay_id());
    saved_place_ = {};
    const auto path = state_path(options_.world);
    if (auto saved = relay::load_json_state(path)) {
        try {
            if (saved->at("version").get<int>() != kStateVersion)
                throw std::runtime_error("written by another version of the bridge");
            saved_place_ = {saved->at("segment").get<uint64_t>(),
                            saved->at("offset").get<uint64_t>()};
            builder_.restore(saved->at("match"));
            flagged_.clear();
            for (const auto& key : saved->at("flagged"))
                flagged_.insert(key.get<std::string>());
        } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
        }
    }
    follower_ =
        std::make_unique<SegmentFollower>(options_.world / "arbiter" / "events", saved_place_);
    boundary_place_ = saved_place_;
    boundary_match_ = builder_.save();
    step_sent_t_us_.reset();
}

void Bridge::save_state() {
    const SegmentPlace place = boundary_place_;
    const json state{{"version", kStateVersion},
                     {"segment", place.segment},
                     {"offset", place.offset},
                     {"match", boundary_match_},
                     {"flagged", flagged_}};
    std::string problem;
    if (!relay::save_json_atomically(state_path(options_.world), state, problem)) {
        report(problem + ": the place is not saved");
        return;
    }
    saved_place_ = place;
    saved_at_ = std::chrono::steady_clock::now();
    // Only now is a wholly sent segment no longer needed to start again.
    std::error_code error;
    for (const auto& segment : follower_->segments_before(saved_place_))
        std::filesystem::remove(segment, error);
}

void Bridge::time_step(int64_t server_t_us) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    const int64_t delay_us = int64_t{now.tv_sec} * 1'000'000 + now.tv_nsec / 1000 - server_t_us;
    // A step read long after it was written (a bridge catching up) or a server on another
    // machine says nothing of the live delay.
    if (delay_us < 0 || delay_us > 10'000'000) return;
    ++counts_.steps_timed;
    counts_.delay_sum_us += delay_us;
    counts_.delay_max_us = std::max(counts_.delay_max_us, delay_us);
}

void Bridge::heard(const json& a, const std::string&) {
    const std::string key =
        fmt::format("{}/{}", a.value("match_id", uint64_t{0}), a.value("player", uint64_t{0}));
    if (a.value("action", std::string()) == "FlagForReview" && flagged_.insert(key).second) {
        std::string reasons;
        if (const auto it = a.find("reasons"); it != a.end() && it->is_array())
            for (const auto& reason : *it)
                if (reason.is_string())
                    reasons += (reasons.empty() ? "" : ", ") + reason.get<std::string>();
        flag(a.value("account_id", std::string()), reasons);
    }
}

void Bridge::flag(const std::string& player, const std::string& reasons) {
    const auto path = flags_path(options_.world);
    std::error_code error;
    if (std::filesystem::file_size(path, error) > kMaxFlagsBytes && !error)
        std::filesystem::remove(path, error);
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << json{{"player", player}, {"action", "FlagForReview"}, {"reasons", reasons}}.dump()
        << '\n';
    ++counts_.flags;
}

void Bridge::idle() {
    if (std::chrono::steady_clock::now() - saved_at_ >= options_.save_every &&
        boundary_place_ != saved_place_)
        save_state();
}

void Bridge::sent() {
    if (step_sent_t_us_) time_step(*step_sent_t_us_);
    step_sent_t_us_.reset();
}

void Bridge::refuse(const FollowedLine& line, const std::string& why) {
    ++counts_.refused;
    report(fmt::format("segment {} at byte {}: {}; skipped", line.at.segment, line.at.offset,
                       why));
}

bool Bridge::next(std::vector<std::vector<uint8_t>>& batches) {
    std::optional<FollowedLine> followed = follower_->next();
    if (!followed) return false;
    ++counts_.lines;
    if (!followed->problem.empty()) {
        refuse(*followed, followed->problem);
    } else {
        ParsedLine parsed = parse_line(followed->text);
        if (const auto* problem = std::get_if<std::string>(&parsed)) {
            refuse(*followed, *problem);
        } else {
            const Line& line = std::get<Line>(parsed);
            if (auto refused = builder_.take(line, batches)) refuse(*followed, *refused);
            if (line.kind == LineKind::step && !batches.empty()) step_sent_t_us_ = line.t_us;
        }
    }
    if (builder_.between_batches()) {
        boundary_place_ = followed->after;
        boundary_match_ = builder_.save();
    }
    return true;
}

int Bridge::run(const std::atomic<bool>& stop) {
    relay::Connection connection = options_.connection;
    connection.relay = builder_.relay_id();
    feed_ = std::make_unique<relay::RelayFeed>(relay::FeedOptions{
        .command = "luanti-bridge",
        .connection = std::move(connection),
        .poll = options_.poll,
    });
    const int status = feed_->run(*this, stop);
    counts_.batches = feed_->counts().batches;
    counts_.already_delivered = feed_->counts().already_delivered;
    counts_.reconnects = feed_->counts().reconnects;
    if (status != 0) return status;
    return counts_.refused > 0 ? 3 : 0;
}

}  // namespace arbiter::luanti
