#include "bridge.hpp"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/relay_client.hpp"
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
    return host::to_valid_utf8(("luanti-" + name).substr(0, 64));
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
      builder_(options_.relay.empty() ? default_relay(options_.world) : options_.relay) {}

Bridge::~Bridge() = default;

void Bridge::report(const std::string& what) const {
    if (!options_.quiet) std::fprintf(stderr, "arbiter luanti-bridge: %s\n", what.c_str());
}

void Bridge::load_state() {
    builder_ = MatchBuilder(builder_.relay_id());
    saved_place_ = {};
    const auto path = state_path(options_.world);
    std::ifstream in(path, std::ios::binary);
    if (in) {
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        host::UntrustedJson saved = host::parse_untrusted_json(text, 16u << 20);
        if (!saved.ok()) throw std::runtime_error(fmt::format("{}: {}", path.string(), saved.problem));
        try {
            if (saved.value.at("version").get<int>() != kStateVersion)
                throw std::runtime_error("written by another version of the bridge");
            saved_place_ = {saved.value.at("segment").get<uint64_t>(),
                            saved.value.at("offset").get<uint64_t>()};
            builder_.restore(saved.value.at("match"));
            flagged_.clear();
            for (const auto& key : saved.value.at("flagged")) flagged_.insert(key.get<std::string>());
        } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
        }
    }
    follower_ = std::make_unique<SegmentFollower>(options_.world / "arbiter" / "events",
                                                  saved_place_);
}

void Bridge::save_state() {
    const SegmentPlace place = follower_->place();
    const json state{{"version", kStateVersion},
                     {"segment", place.segment},
                     {"offset", place.offset},
                     {"match", builder_.save()},
                     {"flagged", flagged_}};
    const auto path = state_path(options_.world);
    const auto temporary = path.string() + ".new";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << state.dump() << '\n';
        if (!out) {
            report(fmt::format("cannot write {}: the place is not saved", temporary));
            return;
        }
    }
    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error) {
        report(fmt::format("cannot save {}: {}", path.string(), error.message()));
        return;
    }
    saved_place_ = place;
    saved_at_ = std::chrono::steady_clock::now();
    // Only now is a wholly sent segment no longer needed to start again.
    for (const auto& segment : follower_->segments_before(saved_place_))
        std::filesystem::remove(segment, error);
}

bool Bridge::connect(const std::atomic<bool>& stop) {
    bool told = false;
    while (!stop) {
        try {
            auto client = options_.target.find('/') != std::string::npos
                              ? host::RelayClient::connect_unix(options_.target)
                              : host::RelayClient::connect_tcp(options_.target);
            client.hello(builder_.relay_id(), options_.token);
            client_ = std::make_unique<host::RelayClient>(std::move(client));
            if (told) report(fmt::format("connected to {}", options_.target));
            return true;
        } catch (const std::exception& e) {
            if (options_.once) {
                report(e.what());
                return false;
            }
            if (!told) report(fmt::format("{}; trying again every second", e.what()));
            told = true;
            std::this_thread::sleep_for(std::chrono::seconds(1));
        }
    }
    return false;
}

void Bridge::send(const std::vector<uint8_t>& batch) {
    client_->send_batch(batch);
    ++counts_.batches;
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

void Bridge::hear_assessment(const std::string& payload) {
    host::UntrustedJson heard = host::parse_untrusted_json(payload, 16u << 20);
    if (!heard.ok() || !heard.value.is_object()) return;
    const json& a = heard.value;
    if (options_.json) {
        std::fwrite(payload.data(), 1, payload.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    }
    const std::string player = a.value("account_id", std::string());
    const std::string action = a.value("action", std::string());
    const std::string key = fmt::format("{}/{}", a.value("match_id", uint64_t{0}),
                                        a.value("player", uint64_t{0}));
    std::string& before = actions_[key];
    if (action != before && !options_.json && !options_.quiet)
        std::printf("%s: %s (score %.2f)\n", host::showable_name(player).c_str(), action.c_str(),
                    a.value("combined_score", 0.0));
    if (action == "FlagForReview" && flagged_.insert(key).second) {
        std::string reasons;
        if (const auto it = a.find("reasons"); it != a.end() && it->is_array())
            for (const auto& reason : *it)
                if (reason.is_string())
                    reasons += (reasons.empty() ? "" : ", ") + reason.get<std::string>();
        flag(player, reasons);
    }
    before = action;
}

void Bridge::hear_error(const std::string& payload) {
    host::UntrustedJson heard = host::parse_untrusted_json(payload, 1u << 20);
    const std::string error = heard.ok() && heard.value.is_object()
                                  ? heard.value.value("error", std::string("?"))
                                  : std::string("?");
    // After a restart the batches sent before the state was saved go again: the host
    // drops them and says so. That is the design working, not a problem.
    if (error.find("already delivered") != std::string::npos) {
        ++counts_.already_delivered;
        return;
    }
    report(fmt::format("the server: {}", host::showable_name(error, 400)));
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

void Bridge::take_replies() {
    for (const auto& frame : client_->take_received()) {
        const std::string payload(frame.payload.begin(), frame.payload.end());
        if (frame.kind == host::wire::FrameKind::assessment) hear_assessment(payload);
        if (frame.kind == host::wire::FrameKind::error) hear_error(payload);
    }
    while (auto frame = client_->read_frame(std::chrono::milliseconds(0))) {
        const std::string payload(frame->payload.begin(), frame->payload.end());
        if (frame->kind == host::wire::FrameKind::assessment) hear_assessment(payload);
        if (frame->kind == host::wire::FrameKind::error) hear_error(payload);
    }
}

bool Bridge::drain() {
    client_->sync(1);
    take_replies();
    return true;
}

void Bridge::rewind() {
    load_state();
    ++counts_.reconnects;
}

int Bridge::run(const std::atomic<bool>& stop) {
    try {
        load_state();
    } catch (const std::exception& e) {
        report(fmt::format("the saved state cannot be read: {}", e.what()));
        return 2;
    }
    if (!connect(stop)) return options_.once ? 2 : 0;
    std::vector<std::vector<uint8_t>> batches;
    while (!stop) {
        try {
            std::optional<FollowedLine> followed = follower_->next();
            if (!followed) {
                if (options_.once) {
                    drain();
                    break;
                }
                take_replies();
                if (std::chrono::steady_clock::now() - saved_at_ >= options_.save_every &&
                    follower_->place() != saved_place_)
                    save_state();
                std::this_thread::sleep_for(options_.poll);
                continue;
            }
            ++counts_.lines;
            const auto where = fmt::format("segment {} at byte {}", followed->at.segment,
                                           followed->at.offset);
            if (!followed->problem.empty()) {
                ++counts_.refused;
                report(fmt::format("{}: {}; skipped", where, followed->problem));
                continue;
            }
            ParsedLine parsed = parse_line(followed->text);
            if (const auto* problem = std::get_if<std::string>(&parsed)) {
                ++counts_.refused;
                report(fmt::format("{}: {}; skipped", where, *problem));
                continue;
            }
            batches.clear();
            if (auto refused = builder_.take(std::get<Line>(parsed), batches)) {
                ++counts_.refused;
                report(fmt::format("{}: {}; skipped", where, *refused));
            }
            for (const auto& batch : batches) send(batch);
            if (std::get<Line>(parsed).kind == LineKind::step && !batches.empty())
                time_step(std::get<Line>(parsed).t_us);
            if (!batches.empty()) take_replies();
        } catch (const std::exception& e) {
            // The connection failed: start again from the last saved place.
            report(fmt::format("{}; connecting again", e.what()));
            client_.reset();
            if (!connect(stop)) return options_.once ? 2 : 0;
            try {
                rewind();
            } catch (const std::exception& problem) {
                report(fmt::format("the saved state cannot be read: {}", problem.what()));
                return 2;
            }
        }
    }
    save_state();
    return counts_.refused > 0 ? 3 : 0;
}

}  // namespace arbiter::luanti
