// What the host-level tests share: where the test plugins are, configs that name them,
// batches that the good plugin answers, and a sink that records every signal.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/host.hpp"
#include "arbiter/host/sinks.hpp"

namespace arbiter::test {

// A test plugin built by tests/plugins: arbiter-test-<what>.so.
inline std::filesystem::path test_plugin(std::string_view what) {
    return std::filesystem::path(TEST_PLUGIN_DIR) / ("arbiter-test-" + std::string(what) + ".so");
}

inline std::filesystem::path reference_plugin() {
    return REFERENCE_PLUGIN;
}

// A TOML literal string: no escapes, so a path goes in as it is.
inline std::string toml_literal(const std::filesystem::path& path) {
    return "'" + path.string() + "'";
}

// The line a [host] table needs for isolated plugins where the tests run as root (CI
// does): a root host starts their runners as an unprivileged user, here Debian's nobody.
inline std::string runner_user_line() {
    return ::geteuid() == 0 ? "runner_user = \"nobody\"\n" : "";
}

// The [host] table every test config starts with: the plugin copies go into the
// test's own folder, so that the test can look at them and they leave with it.
inline std::string host_table(const std::filesystem::path& work_dir) {
    return "[host]\nserver_id = \"integration\"\nwork_dir = " + toml_literal(work_dir) + "\n" +
           runner_user_line();
}

inline std::string plugin_table(std::string_view key, const std::filesystem::path& library) {
    return "\n[plugins." + std::string(key) + "]\nlibrary = " + toml_literal(library) + "\n";
}

inline host::ServerConfig parse(const std::string& text, const std::filesystem::path& base_dir) {
    return host::parse_config(text, "server_config.toml", base_dir, {});
}

// Records every signal the host accepted, in order.
class RecordingSink : public host::Sink {
  public:
    void on_signal(const host::SignalRecord& signal) override { signals.push_back(signal); }
    std::vector<host::SignalRecord> signals;

    size_t count(std::string_view plugin, std::string_view code) const {
        size_t n = 0;
        for (const auto& s : signals)
            n += (s.plugin == plugin && s.code == code) ? 1 : 0;
        return n;
    }
};

// One batch of match (relay "test-relay", match 7) in which players 1 to 3 join (first
// batch only) and player 1 moves once: the echo plugin answers it with one signal.
inline std::vector<uint8_t> echo_batch(BatchBuilder& builder, int64_t t_us) {
    if (builder.next_sequence() == 0)
        for (uint32_t player = 1; player <= 3; ++player) {
            build::PlayerJoin join;
            join.account_id = "account-" + std::to_string(player);
            builder.add(t_us, 0, player, join);
        }
    builder.add(t_us + 10, static_cast<uint64_t>(t_us / 50'000), 1,
                build::Position{.position = {static_cast<float>(t_us) * 1e-6f, 0, 0}});
    return builder.finish();
}

// Lines (plugin errors, say) one per line, for a failure message.
inline std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& line : lines)
        text += line + "\n";
    return text;
}

inline constexpr const char* kTestRelay = "test-relay";
inline constexpr uint64_t kTestMatch = 7;

inline std::optional<host::SignalRecord> find_check(const host::Assessment& assessment,
                                                    std::string_view plugin,
                                                    std::string_view code) {
    for (const auto& check : assessment.checks)
        if (check.plugin == plugin && check.code == code) return check;
    return std::nullopt;
}

}  // namespace arbiter::test
