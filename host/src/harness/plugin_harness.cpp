#include "arbiter/host/plugin_harness.hpp"

#include "arbiter/host/config.hpp"
#include "arbiter/host/event_file.hpp"
#include "core/replay_file.hpp"

namespace arbiter::host {

class PluginHarness::Recorder : public Sink {
public:
    void on_signal(const SignalRecord& signal) override { signals.push_back(signal); }
    std::vector<SignalRecord> signals;
};

namespace {
// A TOML basic string holding a path.
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}
}  // namespace

PluginHarness::PluginHarness(const std::filesystem::path& library, const std::string& plugin_config,
                             const std::string& extra_config)
    : recorder_(std::make_shared<Recorder>()) {
    std::string text = extra_config + "\n[plugins.plugin]\nlibrary = " +
                       quoted(std::filesystem::absolute(library).string()) + "\ntripwires = true\n" +
                       "[plugins.plugin.config]\n" + plugin_config + "\n";
    try {
        ServerConfig config = parse_config(text, "harness-config.toml", std::filesystem::current_path());
        host_ = std::make_unique<Host>(std::move(config));
        host_->add_sink(recorder_);
        auto refusals = host_->plugin_errors();
        if (!refusals.empty()) error_ = refusals.front();
    } catch (const std::exception& error) {
        error_ = error.what();
    }
}

PluginHarness::~PluginHarness() = default;

std::optional<std::string> PluginHarness::push(std::span<const uint8_t> batch) {
    if (!host_) return error_;
    return host_->push(batch);
}

std::vector<std::string> PluginHarness::replay(const std::filesystem::path& event_file) {
    if (!host_) return {error_};
    // The loop `arbiter replay` runs: a damaged stretch is told to the host as there, so
    // that a test judges a damaged file as the operator's host will.
    std::vector<std::string> problems;
    replay_file(event_file, *host_, [&](const FileProblem& problem) {
        problems.push_back(problem.kind == FileProblem::Kind::unreadable
                               ? problem.text
                               : "offset " + std::to_string(problem.offset) + ": " + problem.text);
    });
    return problems;
}

void PluginHarness::close() {
    if (host_) host_->close();
}

const std::vector<SignalRecord>& PluginHarness::signals() const { return recorder_->signals; }

std::vector<Assessment> PluginHarness::assessments() const {
    return host_ ? host_->assessments() : std::vector<Assessment>{};
}

std::optional<Action> PluginHarness::action_of(const std::string& relay_id, uint64_t match_id,
                                               uint32_t player) const {
    if (!host_) return std::nullopt;
    auto assessment = host_->assessment({relay_id, match_id, player});
    if (!assessment) return std::nullopt;
    return assessment->action;
}

}  // namespace arbiter::host
