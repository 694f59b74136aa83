// `arbiter send EVENTS.arbev... TARGET`: streams recorded matches to a running
// `arbiter serve` as a relay would, and prints the assessments it hears back. For trying a
// server, a deploy or a config without writing a client.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/ingest.hpp"
#include "arbiter/host/progress.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "wire/batch_relay.hpp"
#include "wire/relay_client.hpp"

namespace arbiter::cli {

namespace {

using nlohmann::json;

constexpr const char* kUsage =
    "usage: arbiter send EVENTS.arbev... SOCKET|ADDRESS:PORT [--relay NAME] [--token-file FILE]\n"
    "                    [--json] [--quiet]\n"
    "       (a TARGET with a '/' is a Unix socket; over TCP the token comes from --token-file\n"
    "       or the ARBITER_TOKEN environment variable; --relay sends every batch as NAME's,\n"
    "       by default the relay of the first batch)\n";

struct SendOptions {
    std::vector<std::filesystem::path> files;
    std::string target;
    std::optional<std::string> relay;  // sent as (each batch rewritten); none: as recorded
    std::optional<std::string> token_file;
    bool json = false;
    bool quiet = false;
};

std::optional<SendOptions> parse(const std::vector<std::string>& args) {
    SendOptions command;
    OptionReader options("send", kUsage);
    options.flag("--json", command.json);
    options.flag("--quiet", command.quiet);
    options.nonempty("--relay", command.relay);
    options.text("--token-file", command.token_file);
    if (!options.read(args)) return std::nullopt;
    if (command.relay)
        if (const std::string problem = relay_name_problem(*command.relay); !problem.empty())
            return options.fail(problem);
    std::vector<std::string> positional = options.positional();
    if (positional.size() < 2) return options.fail("one or more event files and a target, please");
    command.target = positional.back();
    positional.pop_back();
    command.files.assign(positional.begin(), positional.end());
    return command;
}

// The relay the recorded batches belong to: the server holds a connection to the name
// its hello gives, so by default send says hello as the relay of the first batch.
std::string relay_of_first_batch(const std::vector<std::filesystem::path>& files) {
    for (const auto& file : files) {
        try {
            host::EventFileReader reader(file);
            while (auto item = reader.next()) {
                if (item->kind != host::EventFileItem::Kind::record) continue;
                auto ingested = host::ingest_batch(item->payload, host::kMaxRecordPayload);
                if (ingested.ok) return ingested.batch.relay_id;
            }
        } catch (const std::exception&) {
            // Unreadable: reported when it is sent.
        }
    }
    return "arbiter-send";
}

// A recorded batch as relay `name`'s, for --relay; nullopt: send it as recorded. A batch
// ingest refuses goes as recorded, so that the server names what is wrong with it.
std::optional<std::vector<uint8_t>> as_relay(std::span<const uint8_t> payload,
                                             const std::string& name,
                                             std::set<std::string>& renamed) {
    const auto ingested = host::ingest_batch(payload, host::kMaxRecordPayload);
    if (!ingested.ok || ingested.batch.relay_id == name) return std::nullopt;
    auto rewritten = host::with_relay_id(payload, name);
    if (rewritten) renamed.insert(ingested.batch.relay_id);
    return rewritten;
}

struct Tally {
    uint64_t sent = 0, damaged = 0, refused = 0, unreadable = 0;
};

// At most this many refusals are printed; the rest are counted.
constexpr uint64_t kRefusalsShown = 20;

void print_errors(const std::vector<host::wire::Frame>& frames, Tally& tally) {
    for (const auto& frame : frames) {
        if (frame.kind != host::wire::FrameKind::error) continue;
        if (++tally.refused > kRefusalsShown) continue;
        const json error = json::parse(frame.payload, nullptr, false);
        const std::string text =
            error.is_object() && error.contains("error") && error["error"].is_string()
                ? error["error"].get<std::string>()
                : std::string("(an unreadable error frame)");
        std::fprintf(stderr, "arbiter send: the server refused: %s\n",
                     host::escape_for_message(text, 400).c_str());
    }
    if (tally.refused > kRefusalsShown)
        std::fprintf(stderr, "arbiter send: %llu more refusal(s) not shown\n",
                     static_cast<unsigned long long>(tally.refused - kRefusalsShown));
}

}  // namespace

int run_send(const std::vector<std::string>& args) {
    auto options = parse(args);
    if (!options) return kExitUsage;
    auto token = read_relay_token(options->token_file, "send");
    if (!token) return kExitInput;
    const bool unix_socket = options->target.find('/') != std::string::npos;
    if (!unix_socket && options->target.rfind(':') == std::string::npos) {
        std::fprintf(stderr,
                     "arbiter send: '%s' is neither a socket path (with a '/') nor ADDRESS:PORT\n",
                     options->target.c_str());
        return kExitUsage;
    }

    std::optional<host::RelayClient> relay;
    const std::string name =
        options->relay ? *options->relay : relay_of_first_batch(options->files);
    try {
        relay = unix_socket ? host::RelayClient::connect_unix(options->target)
                            : host::RelayClient::connect_tcp(options->target);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter send: %s\n", error.what());
        return kExitInput;
    }
    try {
        relay->hello(name, *token);
    } catch (const std::exception& error) {
        // A relay's own token under the file's relay id is refused as a wrong token: say
        // which name the hello gave, and where it came from.
        std::fprintf(stderr, "arbiter send: %s\narbiter send: the hello named relay '%s' (%s)\n",
                     error.what(), host::escape_for_message(name, 64).c_str(),
                     options->relay ? "--relay"
                                    : "the relay id of the first recorded batch; --relay NAME "
                                      "sends every batch as relay NAME's");
        return kExitInput;
    }

    Tally tally;
    std::set<std::string> renamed;  // the recorded relays whose batches went as --relay's
    std::vector<host::wire::Frame> heard;
    std::optional<json> synced;
    bool cut_short = false;  // the server went away (it stopped, say) before the sync's answer
    try {
        auto progress = host::progress_on_stderr(options->quiet);
        host::FileSetProgress reading(*progress, "send", options->files);
        for (size_t index = 0; index < options->files.size(); ++index) {
            const auto& file = options->files[index];
            std::unique_ptr<host::EventFileReader> reader;
            try {
                reader = std::make_unique<host::EventFileReader>(file);
            } catch (const std::exception& error) {
                progress->clear_line();
                std::fprintf(stderr, "arbiter send: %s\n", error.what());
                ++tally.unreadable;
                continue;
            }
            while (auto item = reader->next()) {
                reading.at(index, item->offset);
                if (item->kind == host::EventFileItem::Kind::damage) {
                    // The server learns of the loss from the gap in the batch sequence.
                    ++tally.damaged;
                    progress->clear_line();
                    std::fprintf(stderr, "%s: offset %llu: %s; not sent\n", file.c_str(),
                                 static_cast<unsigned long long>(item->offset),
                                 item->problem.c_str());
                    continue;
                }
                const auto rewritten = options->relay
                                           ? as_relay(item->payload, *options->relay, renamed)
                                           : std::nullopt;
                relay->send_batch(rewritten ? std::span<const uint8_t>(*rewritten) : item->payload);
                ++tally.sent;
            }
        }
        // Once the sync is answered, every batch before it has been processed.
        synced = json::parse(relay->sync(1), nullptr, false);
    } catch (const std::exception& error) {
        // What the server sent before it went is still shown below.
        std::fprintf(stderr, "arbiter send: %s; what it sent before is shown\n", error.what());
        cut_short = true;
    }
    heard = relay->take_received();
    for (const auto& recorded : renamed)
        std::fprintf(stderr,
                     "arbiter send: sent the batches of relay '%s' as relay '%s' (--relay)\n",
                     host::escape_for_message(recorded, 64).c_str(),
                     host::escape_for_message(name, 64).c_str());
    if (synced && synced->is_object())
        std::fprintf(stderr,
                     "arbiter send: %llu batches sent; the server processed %llu (%llu events), "
                     "refused %llu\n",
                     static_cast<unsigned long long>(tally.sent),
                     static_cast<unsigned long long>(synced->value("batches", uint64_t{0})),
                     static_cast<unsigned long long>(synced->value("events", uint64_t{0})),
                     static_cast<unsigned long long>(synced->value("refused", uint64_t{0})));
    print_errors(heard, tally);

    // The last word on each player: assessments come as actions rise and when matches end.
    // What the server sent is read defensively: a frame that is not an assessment as
    // expected is counted and left out, never the end of this process.
    struct Row {
        std::string account, action, text;
        double score = 0;
    };
    std::map<std::tuple<std::string, uint64_t, uint32_t>, Row> last;
    uint64_t unreadable_assessments = 0;
    for (const auto& frame : heard) {
        if (frame.kind != host::wire::FrameKind::assessment) continue;
        try {
            const json a = json::parse(frame.payload);
            auto key =
                std::make_tuple(a.at("relay_id").get<std::string>(),
                                a.at("match_id").get<uint64_t>(), a.at("player").get<uint32_t>());
            last[std::move(key)] = Row{a.value("account_id", ""), a.at("action").get<std::string>(),
                                       a.dump(-1, ' ', false, json::error_handler_t::replace),
                                       a.at("combined_score").get<double>()};
        } catch (const std::exception&) {
            ++unreadable_assessments;
        }
    }
    if (unreadable_assessments)
        std::fprintf(stderr,
                     "arbiter send: %llu assessment frame(s) from the server could not be read\n",
                     static_cast<unsigned long long>(unreadable_assessments));
    if (options->json) {
        for (const auto& [key, row] : last)
            std::cout << row.text << '\n';
    } else {
        std::cout << fmt::format("{:<12} {:>6} {:>6}  {:<12} {:<14} {:>5}\n", "relay", "match",
                                 "player", "account", "action", "score");
        for (const auto& [key, row] : last)
            std::cout << fmt::format("{:<12} {:>6} {:>6}  {:<12} {:<14} {:>5.2f}\n",
                                     host::showable_name(std::get<0>(key), 24),
                                     std::get<1>(key), std::get<2>(key),
                                     host::showable_name(row.account, 24),
                                     host::escape_for_message(row.action, 20), row.score);
    }
    std::cout.flush();
    if (tally.unreadable == options->files.size()) return kExitInput;
    return tally.damaged || tally.refused || tally.unreadable || unreadable_assessments || cut_short
               ? kExitPartial
               : kExitOk;
}

}  // namespace arbiter::cli
