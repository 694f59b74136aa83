#include "relay_feed.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "wire/relay_client.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::relay {

namespace {
using nlohmann::json;
constexpr size_t kMaxStateBytes = 16u << 20;
}  // namespace

RelayFeed::RelayFeed(FeedOptions options) : options_(std::move(options)) {}

RelayFeed::~RelayFeed() = default;

void RelayFeed::report(const std::string& what) const {
    if (!options_.connection.quiet)
        std::fprintf(stderr, "arbiter %s: %s\n", options_.command.c_str(), what.c_str());
}

bool RelayFeed::connect(const std::atomic<bool>& stop) {
    bool told = false;
    while (!stop) {
        try {
            auto client = options_.connection.target.find('/') != std::string::npos
                              ? host::RelayClient::connect_unix(options_.connection.target)
                              : host::RelayClient::connect_tcp(options_.connection.target);
            client.hello(options_.connection.relay, options_.connection.token);
            client_ = std::make_unique<host::RelayClient>(std::move(client));
            if (told) report(fmt::format("connected to {}", options_.connection.target));
            return true;
        } catch (const std::exception& e) {
            if (options_.connection.once) {
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

void RelayFeed::hear_assessment(FeedSource& source, const std::string& payload) {
    host::UntrustedJson heard = host::parse_untrusted_json(payload, 16u << 20);
    if (!heard.ok() || !heard.value.is_object()) return;
    const json& a = heard.value;
    if (options_.connection.json) {
        std::fwrite(payload.data(), 1, payload.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    }
    const std::string player = a.value("account_id", std::string());
    const std::string action = a.value("action", std::string());
    const std::string key =
        fmt::format("{}/{}", a.value("match_id", uint64_t{0}), a.value("player", uint64_t{0}));
    std::string& before = actions_[key];
    if (action != before && !options_.connection.json && !options_.connection.quiet) {
        std::printf("%s: %s (score %.2f)\n", host::showable_name(player).c_str(), action.c_str(),
                    a.value("combined_score", 0.0));
        std::fflush(stdout);
    }
    source.heard(a, before);
    before = action;
}

void RelayFeed::hear_error(const std::string& payload) {
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

void RelayFeed::take_replies(FeedSource& source) {
    auto take = [&](const host::wire::Frame& frame) {
        const std::string payload(frame.payload.begin(), frame.payload.end());
        if (frame.kind == host::wire::FrameKind::assessment) hear_assessment(source, payload);
        if (frame.kind == host::wire::FrameKind::error) hear_error(payload);
    };
    for (const auto& frame : client_->take_received())
        take(frame);
    while (auto frame = client_->read_frame(std::chrono::milliseconds(0)))
        take(*frame);
}

int RelayFeed::run(FeedSource& source, const std::atomic<bool>& stop) {
    try {
        source.restore();
    } catch (const std::exception& e) {
        report(fmt::format("the saved state cannot be read: {}", e.what()));
        return 2;
    }
    if (!connect(stop)) return options_.connection.once ? 2 : 0;
    std::vector<std::vector<uint8_t>> batches;
    while (!stop) {
        try {
            batches.clear();
            if (!source.next(batches)) {
                if (options_.connection.once) {
                    // Everything is sent: a sync, and everything heard before its answer.
                    client_->sync(1);
                    take_replies(source);
                    break;
                }
                take_replies(source);
                source.idle();
                std::this_thread::sleep_for(options_.poll);
                continue;
            }
            for (const auto& batch : batches) {
                client_->send_batch(batch);
                ++counts_.batches;
            }
            source.sent();
            if (!batches.empty()) take_replies(source);
        } catch (const std::exception& e) {
            // The connection failed: start again from the last saved place.
            report(fmt::format("{}; connecting again", e.what()));
            client_.reset();
            if (!connect(stop)) return options_.connection.once ? 2 : 0;
            try {
                source.restore();
            } catch (const std::exception& problem) {
                report(fmt::format("the saved state cannot be read: {}", problem.what()));
                return 2;
            }
            ++counts_.reconnects;
        }
    }
    source.close();
    return 0;
}

bool save_json_atomically(const std::filesystem::path& path, const json& value,
                          std::string& problem) {
    const auto temporary = path.string() + ".new";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << value.dump() << '\n';
        out.flush();
        if (!out) {
            problem = fmt::format("cannot write {}", temporary);
            return false;
        }
    }
    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error) {
        problem = fmt::format("cannot save {}: {}", path.string(), error.message());
        return false;
    }
    return true;
}

std::optional<json> load_json_state(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    // At most one byte past the bound is read: a state file replaced by something huge (or
    // by /dev/zero) is refused by its size, not read whole first.
    std::string text(kMaxStateBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    host::UntrustedJson saved = host::parse_untrusted_json(text, kMaxStateBytes);
    if (!saved.ok()) throw std::runtime_error(fmt::format("{}: {}", path.string(), saved.problem));
    return std::move(saved.value);
}

}  // namespace arbiter::relay
