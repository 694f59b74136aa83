// `arbiter serve` as relays meet it: a real server process, real sockets. A long match
// over each transport (and the same assessments as `arbiter replay`), bad messages, a
// wrong token, a client that leaves mid-message, a sender faster than the host, SIGTERM
// with events in flight, and plugins and the config swapped under load without an
// event lost or seen twice.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/event_file.hpp"
#include "wire/relay_client.hpp"
#include "arbiter/host/wire.hpp"
#include "support/cli.hpp"
#include "support/http_client.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using arbiter::host::RelayClient;
using arbiter::host::wire::FrameKind;
using arbiter::test::connect_loopback;
using arbiter::test::http_exchange;
using arbiter::test::ServerProcess;
using json = nlohmann::json;

constexpr const char* kToken = "test-token-7f3a";

std::vector<std::vector<uint8_t>> records_of(const fs::path& file) {
    std::vector<std::vector<uint8_t>> records;
    arbiter::host::EventFileReader reader(file);
    while (auto item = reader.next())
        if (item->kind == arbiter::host::EventFileItem::Kind::record)
            records.emplace_back(item->payload.begin(), item->payload.end());
    return records;
}

json parse(const arbiter::host::wire::Frame& frame) {
    return json::parse(frame.payload.begin(), frame.payload.end(), nullptr, false);
}

std::vector<std::string> errors_in(const std::vector<arbiter::host::wire::Frame>& frames) {
    std::vector<std::string> errors;
    for (const auto& frame : frames)
        if (frame.kind == FrameKind::error) errors.push_back(parse(frame).value("error", ""));
    return errors;
}

// The last assessment the host sent for each player, by player number.
std::map<uint32_t, json> last_assessments(const std::vector<arbiter::host::wire::Frame>& frames) {
    std::map<uint32_t, json> last;
    for (const auto& frame : frames)
        if (frame.kind == FrameKind::assessment) {
            json assessment = parse(frame);
            last[assessment.value("player", 0u)] = assessment;
        }
    return last;
}

class Serve : public ::testing::Test {
  protected:
    fs::path config_path() const { return dir_ / "server_config.toml"; }
    fs::path relay_socket() const { return dir_ / "relays.sock"; }
    fs::path control_socket() const { return dir_ / "control.sock"; }

    // A config with every transport, the given plugins and any extra [serve] keys.
    std::string config_text(const std::string& plugins, const std::string& serve_extra = "",
                            const std::string& host_extra = "") const {
        // As root (CI), isolated plugins' runners need an unprivileged user to become.
        const std::string runner_user = ::geteuid() == 0 ? "runner_user = \"nobody\"\n" : "";
        return "[host]\nserver_id = \"serve-test\"\nlog_level = \"info\"\n" + runner_user + host_extra +
               "\n[sinks]\nsecurity_log = \"security.jsonl\"\n" + "\n[serve]\nunix_socket = \"" +
               relay_socket().string() + "\"\ntcp_listen = \"127.0.0.1:0\"\ntoken = \"" + kToken +
               "\"\ncontrol_socket = \"" + control_socket().string() +
               "\"\nwatch_settle_ms = 50\n" + serve_extra + "\n" + plugins;
    }
    void write_config(const std::string& text) {
        // Renamed into place, as a deploy tool (or an editor) does.
        arbiter::test::write_text(dir_ / "config.tmp", text);
        fs::rename(dir_ / "config.tmp", config_path());
    }
    static std::string bundled(const std::string& name) {
        return "[plugins." + name + "]\nlibrary = \"" + name + "\"\n";
    }
    static std::string test_plugin(const std::string& key, const std::string& file,
                                   const std::string& config = "") {
        return "[plugins." + key + "]\nlibrary = \"" + (fs::path(TEST_PLUGIN_DIR) / file).string() +
               "\"\n" + (config.empty() ? "" : "[plugins." + key + ".config]\n" + config + "\n");
    }

    // A simulated match through `arbiter simulate`.
    fs::path simulate(const std::string& players, int seconds, int seed = 1) {
        const fs::path out = dir_ / ("match-" + std::to_string(seed) + ".arbev");
        auto result = arbiter::test::run_command(
            {ARBITER_EXE, "simulate", out.string(), "--players", players, "--duration-s",
             std::to_string(seconds), "--seed", std::to_string(seed)},
            dir_.path());
        EXPECT_EQ(result.exit_status, 0) << result.err;
        return out;
    }

    // Sends `records` as sample-relay over the Unix socket and waits until the server has
    // taken them all; what the relay heard.
    std::vector<arbiter::host::wire::Frame> send_as_sample_relay(
        const std::vector<std::vector<uint8_t>>& records) {
        RelayClient relay = RelayClient::connect_unix(relay_socket().string());
        relay.hello("sample-relay", "");
        for (const auto& record : records)
            relay.send_batch(record);
        (void)relay.sync(1);
        return relay.take_received();
    }
    json status() {
        return json::parse(arbiter::test::ctl(control_socket(), {"status", "--json"}, dir_.path()),
                           nullptr, false);
    }

    arbiter::test::TempDir dir_;
};

// Events in the records, as the host counts them (FlatBuffers' vector length).
size_t events_in(const std::vector<std::vector<uint8_t>>& records) {
    size_t events = 0;
    for (const auto& record : records)
        events += flatbuffers::GetRoot<arbiter::fb::EventBatch>(record.data())->events()->size();
    return events;
}

void expect_same_actions_as_replay(const std::map<uint32_t, json>& served, const fs::path& config,
                                   const fs::path& match, const fs::path& work_dir) {
    auto replay = arbiter::test::run_command(
        {ARBITER_EXE, "replay", config.string(), match.string(), "--json"}, work_dir);
    ASSERT_EQ(replay.exit_status, 0) << replay.err;
    size_t players = 0;
    for (const auto& line : arbiter::test::lines_of(replay.out)) {
        json expected = json::parse(line);
        const uint32_t player = expected.value("player", 0u);
        ++players;
        ASSERT_TRUE(served.count(player)) << "no assessment served for player " << player;
        EXPECT_EQ(served.at(player).value("action", ""), expected.value("action", ""))
            << "player " << player;
        EXPECT_NEAR(served.at(player).value("combined_score", 0.0),
                    expected.value("combined_score", 0.0), 1e-9)
            << "player " << player;
    }
    EXPECT_EQ(players, served.size());
    EXPECT_GT(players, 0u);
}

TEST_F(Serve, StreamsALongMatchOverTheUnixSocketAndAssessesItAsReplayDoes) {
    write_config(config_text(bundled("reference") + bundled("lagpool") + bundled("kaladin")));
    const fs::path match = simulate("honest=12,speed_hack=2,teleport=1,reaction_bot=1", 300);
    const auto records = records_of(match);
    ServerProcess server(config_path(), dir_.path());

    // No hello: on the Unix socket a recorded match streams as it is.
    RelayClient relay = RelayClient::connect_unix(relay_socket());
    for (const auto& record : records)
        relay.send_batch(record);
    json synced = json::parse(relay.sync(1));
    EXPECT_EQ(synced.value("batches", 0u), records.size());
    EXPECT_EQ(synced.value("events", 0u), events_in(records));
    EXPECT_EQ(synced.value("refused", 1u), 0u);

    auto frames = relay.take_received();
    EXPECT_TRUE(errors_in(frames).empty());
    // The match ended (MatchEnd), so every player's final assessment came back.
    expect_same_actions_as_replay(last_assessments(frames), config_path(), match, dir_.path());
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
}

// With worker threads, `ctl reload` of a sharded plugin goes shard by shard while the relay
// streams (Host::begin_install): the answer comes once the last shard is across, every
// shard carried its state, and the relay hears what a replay without any reload gives.
TEST_F(Serve, AReloadWithThreadsGoesShardByShardAndChangesNothingTheRelayHears) {
    write_config(config_text(bundled("reference") + bundled("lagpool") + bundled("accounts"),
                             "", "threads = 2\n"));
    const fs::path match = simulate("honest=12,speed_hack=2,teleport=1", 300, 3);
    const auto records = records_of(match);
    ServerProcess server(config_path(), dir_.path());

    RelayClient relay = RelayClient::connect_unix(relay_socket());
    const size_t half = records.size() / 2;
    for (size_t i = 0; i < half; ++i)
        relay.send_batch(records[i]);
    int exit_status = -1;
    const json answer = json::parse(
        arbiter::test::ctl(control_socket(), {"reload", "reference", "--json"}, dir_.path(),
                           &exit_status),
        nullptr, false);
    EXPECT_EQ(exit_status, 0) << answer.dump(2);
    ASSERT_TRUE(answer.is_object()) << server.log();
    ASSERT_EQ(answer.value("reports", json::array()).size(), 1u) << answer.dump(2);
    const json& report = answer["reports"][0];
    EXPECT_TRUE(report.value("ok", false)) << report.dump(2);
    EXPECT_TRUE(report.value("staged", false)) << report.dump(2);
    EXPECT_NE(report.value("state", "").find("in 64 shards)"), std::string::npos)
        << report.dump(2);
    EXPECT_NE(report.value("message", "").find("the stream went on"), std::string::npos)
        << report.dump(2);
    // The unsharded plugin is swapped whole, between two batches.
    const json whole = json::parse(
        arbiter::test::ctl(control_socket(), {"reload", "accounts", "--json"}, dir_.path()),
        nullptr, false);
    ASSERT_TRUE(whole.is_object());
    EXPECT_FALSE(whole["reports"][0].value("staged", true)) << whole.dump(2);

    for (size_t i = half; i < records.size(); ++i)
        relay.send_batch(records[i]);
    json synced = json::parse(relay.sync(1));
    EXPECT_EQ(synced.value("events", 0u), events_in(records));
    EXPECT_EQ(synced.value("refused", 1u), 0u);
    expect_same_actions_as_replay(last_assessments(relay.take_received()), config_path(), match,
                                  dir_.path());
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
}

TEST_F(Serve, StreamsALongMatchOverTcpAfterAHelloWithTheToken) {
    write_config(config_text(bundled("reference") + bundled("lagpool")));
    const fs::path match = simulate("honest=8,speed_hack=2", 300, 2);
    const auto records = records_of(match);
    ServerProcess server(config_path(), dir_.path());
    ASSERT_FALSE(server.tcp_address().empty());
    EXPECT_TRUE(server.tcp_address().starts_with("127.0.0.1:"));

    RelayClient relay = RelayClient::connect_tcp(server.tcp_address());
    json welcome = json::parse(relay.hello("sim-relay", kToken));
    EXPECT_EQ(welcome.value("server_id", ""), "serve-test");
    EXPECT_EQ(welcome.value("protocol", 0), 1);
    for (const auto& record : records)
        relay.send_batch(record);
    json synced = json::parse(relay.sync(7));
    EXPECT_EQ(synced.value("id", 0), 7);
    EXPECT_EQ(synced.value("events", 0u), events_in(records));

    auto served = last_assessments(relay.take_received());
    expect_same_actions_as_replay(served, config_path(), match, dir_.path());
    size_t flagged = 0;
    for (const auto& [player, assessment] : served)
        flagged += assessment.value("action", "") == "FlagForReview";
    EXPECT_EQ(flagged, 2u) << "the two speed hackers, and no honest player";
    EXPECT_TRUE(server.wait_for_log("is relay 'sim-relay'"));
}

TEST_F(Serve, ServesSeveralRelaysAndMatchesAtOnceEachHearingOnlyItsOwn) {
    write_config(config_text(bundled("reference")));
    ServerProcess server(config_path(), dir_.path());
    // Three relays, two over the Unix socket and one over TCP, each with two matches,
    // all streaming at the same time. Player 1 of every match speeds; the rest walk.
    struct Relay {
        std::string name;
        bool tcp;
        std::map<std::pair<uint64_t, uint32_t>, std::string> last_action;
        json synced;
    };
    std::vector<Relay> relays = {
        {"alpha", false, {}, {}}, {"beta", false, {}, {}}, {"gamma", true, {}, {}}};
    std::vector<std::jthread> threads;
    for (auto& relay : relays) {
        threads.emplace_back([&relay, &server, this] {
            RelayClient client = relay.tcp ? RelayClient::connect_tcp(server.tcp_address())
                                           : RelayClient::connect_unix(relay_socket());
            client.hello(relay.name, relay.tcp ? kToken : "");
            arbiter::BatchBuilder match_a(relay.name, 1), match_b(relay.name, 2);
            for (int tick = 0; tick < 400; ++tick) {
                for (auto* builder : {&match_a, &match_b}) {
                    for (uint32_t player = 1; player <= 3; ++player) {
                        const float speed = player == 1 ? 40.0f : 5.0f;
                        builder->add(tick * 50'000 + player, static_cast<uint64_t>(tick), player,
                                     arbiter::build::Position{
                                         .position = {speed * static_cast<float>(tick) * 0.05f,
                                                      static_cast<float>(player), 0}});
                    }
                    if (tick == 399)
                        builder->add(tick * 50'000 + 10, static_cast<uint64_t>(tick), 0,
                                     arbiter::build::MatchEnd{.reason = "finished"});
                    client.send_batch(builder->finish());
                }
            }
            relay.synced = json::parse(client.sync(1));
            for (const auto& frame : client.take_received())
                if (frame.kind == FrameKind::assessment) {
                    json assessment = parse(frame);
                    EXPECT_EQ(assessment.value("relay_id", ""), relay.name)
                        << "another relay's assessment";
                    relay.last_action[{assessment.value("match_id", 0u),
                                       assessment.value("player", 0u)}] =
                        assessment.value("action", "");
                }
        });
    }
    threads.clear();  // joins them
    for (const auto& relay : relays) {
        EXPECT_EQ(relay.synced.value("batches", 0), 800) << relay.name;
        ASSERT_EQ(relay.last_action.size(), 6u)
            << relay.name << ": every player of both matches, at match end";
        for (const auto& [key, action] : relay.last_action)
            EXPECT_EQ(action, key.second == 1 ? "FlagForReview" : "Clear")
                << relay.name << " match " << key.first << " player " << key.second;
    }
    EXPECT_EQ(status()["counters"].value("matches_ended", 0), 6);
}

TEST_F(Serve, EndsAMatchThatFallsSilentAndTellsItsRelay) {
    write_config(
        config_text(test_plugin("echo", "arbiter-test-echo.so"), "idle_match_end_s = 1\n"));
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_unix(relay_socket());
    arbiter::BatchBuilder builder("relay", 5);
    builder.add(1000, 1, 1, arbiter::build::Position{.position = {0, 0, 0}});
    builder.add(1001, 1, 2, arbiter::build::Position{.position = {0, 0, 0}});
    relay.send_batch(builder.finish());
    relay.sync(1);
    // No MatchEnd, and nothing more: after a second the host ends it.
    std::map<uint32_t, std::string> final_action;
    while (final_action.size() < 2) {
        auto frame = relay.read_frame(std::chrono::seconds(10));
        ASSERT_TRUE(frame) << server.log();
        if (frame->kind == FrameKind::assessment && parse(*frame).value("match_id", 0) == 5)
            final_action[parse(*frame).value("player", 0u)] = parse(*frame).value("action", "");
    }
    EXPECT_EQ(final_action[1], "FlagForReview");
    EXPECT_EQ(final_action[2], "Clear");
    EXPECT_TRUE(server.wait_for_log("match relay/5: no batch for 1 s; ending it"));
    EXPECT_EQ(status()["counters"].value("open_matches", 1), 0);
}

// An action raised by a match's very first batch reaches the relay (it was dropped: the
// match had no owner until its first batch was wholly processed).
TEST_F(Serve, AnActionOfAMatchsFirstBatchReachesItsRelay) {
    // On one thread and on three: on one, the batch is wholly processed inside the push.
    for (const char* threads : {"threads = 1\n", "threads = 3\n"}) {
        SCOPED_TRACE(threads);
        write_config(config_text(test_plugin("echo", "arbiter-test-echo.so"), "", threads));
        ServerProcess server(config_path(), dir_.path());
        RelayClient relay = RelayClient::connect_unix(relay_socket());
        arbiter::BatchBuilder builder("relay", 9);
        builder.add(1000, 1, 1, arbiter::build::Position{.position = {0, 0, 0}});
        relay.send_batch(builder.finish());
        relay.sync(1);
        const auto served = last_assessments(relay.take_received());
        ASSERT_TRUE(served.count(1)) << server.log();
        EXPECT_EQ(served.at(1).value("action", ""), "FlagForReview");
        EXPECT_EQ(served.at(1).value("match_id", 0u), 9u);
    }
}

TEST_F(Serve, RefusesAWrongOrMissingTokenAndGoesOnServingTheOthers) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
    ServerProcess server(config_path(), dir_.path());
    arbiter::BatchBuilder builder("relay", 1);
    builder.add(1000, 1, 1, arbiter::build::Position{.position = {0, 0, 0}});
    const auto batch = builder.finish();

    RelayClient good = RelayClient::connect_tcp(server.tcp_address());
    good.hello("relay", kToken);

    RelayClient wrong = RelayClient::connect_tcp(server.tcp_address());
    try {
        wrong.hello("intruder", "guess");
        FAIL() << "a wrong token was accepted";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("wrong token"), std::string::npos) << error.what();
    }
    EXPECT_FALSE(wrong.read_frame(std::chrono::seconds(5)));
    EXPECT_TRUE(wrong.host_hung_up());

    // Batches before any hello: refused and closed, nothing of them processed.
    RelayClient rude = RelayClient::connect_tcp(server.tcp_address());
    rude.send_batch(batch);
    auto refusal = rude.read_frame(std::chrono::seconds(5));
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->kind, FrameKind::error);
    EXPECT_NE(parse(*refusal).value("error", "").find("hello"), std::string::npos);
    EXPECT_TRUE(parse(*refusal).value("closing", false));

    RelayClient empty = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_THROW(empty.hello("no-token"), std::runtime_error);

    good.send_batch(batch);
    EXPECT_EQ(json::parse(good.sync(1)).value("batches", 0), 1);
    EXPECT_EQ(status()["counters"].value("batches", 0), 1);
    EXPECT_NE(server.log().find("wrong token for relay 'intruder'"), std::string::npos);
}

TEST_F(Serve, ReportsEachBadMessageByNameAndGoesOnWithTheNext) {
    write_config(
        config_text(test_plugin("echo", "arbiter-test-echo.so"), "", "max_batch_bytes = 65536\n"));
    ServerProcess server(config_path(), dir_.path());
    arbiter::BatchBuilder builder("relay", 1);
    auto batch = [&](int64_t t) {
        builder.add(t, 1, 1, arbiter::build::Position{.position = {0, 0, 0}});
        return builder.finish();
    };
    auto frame = [](FrameKind kind, std::span<const uint8_t> payload) {
        std::vector<uint8_t> bytes;
        arbiter::host::wire::append_frame(bytes, kind, payload);
        return bytes;
    };

    RelayClient bystander = RelayClient::connect_unix(relay_socket());
    RelayClient relay = RelayClient::connect_unix(relay_socket());
    relay.send_batch(batch(1000));

    auto damaged_header = frame(FrameKind::batch, batch(2000));
    damaged_header[5] ^= 0x40;  // the length, under the header checksum
    relay.send_raw(damaged_header);

    relay.send_batch(batch(3000));

    auto damaged_payload = frame(FrameKind::batch, batch(4000));
    damaged_payload.back() ^= 0x01;
    relay.send_raw(damaged_payload);

    relay.send_raw(frame(FrameKind::batch, std::vector<uint8_t>(100 * 1024, 0x5a)));  // over 64 KiB
    relay.send_raw(frame(FrameKind::batch, std::vector<uint8_t>(64, 0x11)));  // not a FlatBuffer
    std::vector<uint8_t> unknown = frame(FrameKind::batch, batch(5000));
    std::memcpy(unknown.data(), "ARBQ", 4);
    const uint32_t header_crc = arbiter::host::crc32({unknown.data(), 12});
    std::memcpy(unknown.data() + 12, &header_crc, 4);  // a well-formed frame of a kind nobody knows
    relay.send_raw(unknown);
    relay.send_raw(
        frame(FrameKind::welcome, std::vector<uint8_t>{'{', '}'}));  // the host's to send
    relay.send_batch(batch(6000));

    json synced = json::parse(relay.sync(1));
    EXPECT_EQ(synced.value("batches", 0), 3) << "the three good batches, and nothing else";
    EXPECT_EQ(synced.value("refused", 0), 1) << "the one that was not a FlatBuffer";

    // One error each. The network thread finds the framing problems and the event thread
    // the refused batch, so the order between the two kinds is not fixed.
    const auto errors = errors_in(relay.take_received());
    const std::vector<std::string> expected = {
        "frame header checksum mismatch", "payload checksum mismatch",
        "over the limit of 65536 bytes",  "batch refused",
        "unknown frame kind 'ARBQ'",      "host's to send"};
    ASSERT_EQ(errors.size(), expected.size()) << ::testing::PrintToString(errors);
    for (const auto& problem : expected)
        EXPECT_EQ(std::count_if(errors.begin(), errors.end(),
                                [&](const std::string& error) {
                                    return error.find(problem) != std::string::npos;
                                }),
                  1)
            << problem << " in " << ::testing::PrintToString(errors);

    // The other connection heard none of it and works on.
    bystander.send_batch(batch(7000));
    EXPECT_EQ(json::parse(bystander.sync(2)).value("batches", 0), 1);
    EXPECT_TRUE(errors_in(bystander.take_received()).empty());
}

// Each of these once ended the whole process (b9b94b3): an error text that quoted bytes
// that are not UTF-8, a hello member of the wrong type, and a sync nested so deep that
// writing the reply exhausted the stack. Now each is answered and the server serves on.
TEST_F(Serve, SurvivesHostileMessagesBeforeAndAfterTheHello) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
    ServerProcess server(config_path(), dir_.path());
    auto frame = [](FrameKind kind, std::string_view payload) {
        std::vector<uint8_t> bytes;
        arbiter::host::wire::append_frame(bytes, kind, payload);
        return bytes;
    };
    auto first_error = [](RelayClient& client) {
        auto reply = client.read_frame(std::chrono::seconds(10));
        if (!reply || reply->kind != FrameKind::error) return json();
        return parse(*reply);
    };

    // An unknown kind whose magic is not UTF-8, before any hello, over TCP.
    RelayClient binary = RelayClient::connect_tcp(server.tcp_address());
    std::vector<uint8_t> unknown = frame(FrameKind::batch, "{}");
    const uint8_t magic[4] = {0xff, 0xfe, 0x80, 0xc3};
    std::memcpy(unknown.data(), magic, 4);
    const uint32_t header_crc = arbiter::host::crc32({unknown.data(), 12});
    std::memcpy(unknown.data() + 12, &header_crc, 4);
    binary.send_raw(unknown);
    EXPECT_NE(
        first_error(binary).value("error", "").find("unknown frame kind '\\xff\\xfe\\x80\\xc3'"),
        std::string::npos);

    // Hello members of the wrong type, over both transports.
    RelayClient numeric = RelayClient::connect_tcp(server.tcp_address());
    numeric.send_raw(frame(FrameKind::hello, R"({"token": 12345, "relay": "r"})"));
    json refusal = first_error(numeric);
    EXPECT_NE(refusal.value("error", "").find("\"token\" must be a string"), std::string::npos)
        << refusal;
    EXPECT_TRUE(refusal.value("closing", false));
    RelayClient listed = RelayClient::connect_unix(relay_socket());
    listed.send_raw(frame(FrameKind::hello, R"({"relay": ["a", "b"]})"));
    EXPECT_NE(first_error(listed).value("error", "").find("\"relay\" must be a string"),
              std::string::npos);

    // Syncs nested 65,000 deep (over the size cap) and 30,000 deep (within it): answered
    // with the counts, not echoed.
    RelayClient deep = RelayClient::connect_unix(relay_socket());
    deep.hello("deep");
    for (const auto& [depth, problem] : {std::pair{65000, "over the limit of 65536"},
                                         std::pair{30000, "nested deeper than 64 levels"}}) {
        deep.send_raw(frame(FrameKind::sync, std::string(static_cast<size_t>(depth), '[') +
                                                 std::string(static_cast<size_t>(depth), ']')));
        auto answer = deep.read_frame(std::chrono::seconds(10));
        ASSERT_TRUE(answer);
        ASSERT_EQ(answer->kind, FrameKind::sync);
        EXPECT_NE(parse(*answer).value("error", "").find(problem), std::string::npos)
            << parse(*answer);
        EXPECT_EQ(parse(*answer).value("batches", 1), 0);
    }

    // A control line that is not UTF-8 is answered, not dropped.
    const int control = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, control_socket().c_str());
    ASSERT_EQ(::connect(control, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    const std::string line = "st\xff\xfeus\n";
    ASSERT_EQ(::send(control, line.data(), line.size(), 0), static_cast<ssize_t>(line.size()));
    std::string reply;
    char buffer[4096];
    for (ssize_t got; (got = ::recv(control, buffer, sizeof buffer, 0)) > 0;)
        reply.append(buffer, static_cast<size_t>(got));
    ::close(control);
    EXPECT_NE(reply.find("unknown command 'st\\\\xff\\\\xfeus'"), std::string::npos) << reply;

    // Still serving.
    RelayClient after = RelayClient::connect_tcp(server.tcp_address());
    after.hello("after", kToken);
    EXPECT_EQ(json::parse(after.sync(7)).value("batches", 1), 0);
    EXPECT_EQ(status().value("server_id", ""), "serve-test");
}

TEST_F(Serve, TurnsAwayARelayPastTheConnectionLimitAndServesTheRest) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so"), "max_connections = 2\n"));
    ServerProcess server(config_path(), dir_.path());
    RelayClient first = RelayClient::connect_unix(relay_socket());
    first.hello("first");
    RelayClient second = RelayClient::connect_tcp(server.tcp_address());
    second.hello("second", kToken);
    RelayClient third = RelayClient::connect_unix(relay_socket());
    auto refusal = third.read_frame(std::chrono::seconds(5));
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->kind, FrameKind::error);
    EXPECT_NE(parse(*refusal).value("error", "").find("at most 2 relay connections"),
              std::string::npos);
    EXPECT_FALSE(third.read_frame(std::chrono::seconds(5)));
    EXPECT_TRUE(third.host_hung_up());
    // The control socket is not a relay: it still answers, and so do the two relays.
    EXPECT_EQ(status()["connections"].size(), 2u);
    EXPECT_EQ(json::parse(first.sync(1)).value("batches", 1), 0);
    EXPECT_EQ(json::parse(second.sync(2)).value("batches", 1), 0);
}

TEST_F(Serve, ClosesAConnectionThatIsNotAnEventStreamWithTheReason) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
    ServerProcess server(config_path(), dir_.path());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, relay_socket().c_str());
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    const std::string request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    std::string reply;
    char buffer[4096];
    for (ssize_t got; (got = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
        reply.append(buffer, static_cast<size_t>(got));  // ends when the host closes
    ::close(fd);
    EXPECT_NE(reply.find("does not begin with the ARBEVLOG header"), std::string::npos) << reply;
    EXPECT_EQ(status()["counters"].value("batches", 1), 0);  // and the server is still there
}

TEST_F(Serve, AClientThatLeavesMidMessageLosesOnlyThatMessage) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
    const auto records = records_of(simulate("honest=3", 20));
    ASSERT_GT(records.size(), 21u);
    ServerProcess server(config_path(), dir_.path());
    {
        RelayClient relay = RelayClient::connect_unix(relay_socket());
        for (size_t i = 0; i < 20; ++i)
            relay.send_batch(records[i]);
        std::vector<uint8_t> last;
        arbiter::host::wire::append_frame(last, FrameKind::batch, records[20]);
        relay.send_raw(std::span(last).first(last.size() / 2));
    }  // gone, half a frame sent
    ASSERT_TRUE(server.wait_for_log("bytes received and not taken (a frame cut off"))
        << server.log();
    const std::vector<std::vector<uint8_t>> sent(records.begin(), records.begin() + 20);
    json counters = status()["counters"];
    EXPECT_EQ(counters.value("batches", 0u), 20u);
    EXPECT_EQ(counters.value("events", 0u), events_in(sent));
    EXPECT_EQ(counters.value("refused_batches", 1u), 0u);
}

TEST_F(Serve, PushesBackOnSendersFasterThanTheHostAndLosesNothing) {
    // 1 MiB of queue, a plugin that takes 1 ms a batch, and three relays that can each send
    // far faster. Each read takes up to 256 KiB of frames: were the queue's bound checked
    // once per read rather than per frame, three relays would pass it by 768 KiB.
    write_config(config_text(test_plugin("slow", "arbiter-test-slow.so", "delay_us = 1000") +
                                 test_plugin("echo", "arbiter-test-echo.so"),
                             "max_queued_bytes = 1048576\n"));
    ServerProcess server(config_path(), dir_.path());
    constexpr int kRelays = 3;
    constexpr int kBatches = 1000;
    std::vector<std::vector<std::vector<uint8_t>>> streams(kRelays);
    size_t bytes = 0, largest = 0;
    for (int relay = 0; relay < kRelays; ++relay) {
        arbiter::BatchBuilder builder("relay", static_cast<uint64_t>(relay + 1));
        for (int i = 0; i < kBatches; ++i) {
            for (uint32_t player = 1; player <= 20; ++player)
                builder.add(i * 50'000 + player, static_cast<uint64_t>(i), player,
                            arbiter::build::Position{.position = {float(i) * 0.1f, 0, 0}});
            streams[relay].push_back(builder.finish());
            bytes += streams[relay].back().size() + 16;
            largest = std::max(largest, streams[relay].back().size());
        }
    }
    ASSERT_GT(bytes, 2u * 1048576u) << "the stream must be larger than the queue";

    std::vector<json> synced(kRelays);
    std::vector<RelayClient> clients;
    for (int relay = 0; relay < kRelays; ++relay)
        clients.push_back(RelayClient::connect_unix(relay_socket()));
    {
        std::vector<std::jthread> senders;
        for (int relay = 0; relay < kRelays; ++relay)
            senders.emplace_back([&, relay] {
                for (const auto& batch : streams[relay])
                    clients[relay].send_batch(batch);
                synced[relay] = json::parse(clients[relay].sync(1));
            });
    }
    json now = status();  // while the relays are still connected
    for (int relay = 0; relay < kRelays; ++relay) {
        EXPECT_EQ(synced[relay].value("batches", 0u), size_t(kBatches));
        EXPECT_EQ(synced[relay].value("events", 0u), size_t(kBatches) * 20);
    }
    EXPECT_EQ(now["counters"].value("events", 0u), size_t(kRelays * kBatches * 20));
    // The queue never held more than its capacity and one batch.
    EXPECT_GT(now["queue"].value("peak_bytes", 0u), 1048576u * 3 / 4) << "the queue never filled";
    EXPECT_LE(now["queue"].value("peak_bytes", 0u), 1048576u + largest);
    uint64_t held_back = 0;
    for (const auto& connection : now["connections"])
        held_back += connection.value("held_back", 0u);
    EXPECT_GT(held_back, 0u) << "the host never had to push back";
}

TEST_F(Serve, SigtermDrainsEverythingReceivedFlushesTheSinksAndExits) {
    // Slow enough that most of the stream is still queued when SIGTERM comes.
    write_config(config_text(test_plugin("slow", "arbiter-test-slow.so", "delay_us = 2000") +
                             test_plugin("echo", "arbiter-test-echo.so")));
    ServerProcess server(config_path(), dir_.path());
    arbiter::BatchBuilder builder("relay", 1);
    RelayClient relay = RelayClient::connect_unix(relay_socket());
    relay.hello("relay");
    const int batches = 400;
    for (int i = 0; i < batches; ++i) {
        builder.add(i * 50'000, static_cast<uint64_t>(i), 1,
                    arbiter::build::Position{.position = {0, 0, 0}});
        builder.add(i * 50'000 + 1, static_cast<uint64_t>(i), 2,
                    arbiter::build::Position{.position = {0, 0, 0}});
        relay.send_batch(builder.finish());
    }
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
    const std::string log = server.log();
    EXPECT_NE(log.find("drained: 400 batches (800 events) processed, 0 refused"), std::string::npos)
        << log;

    // The security log holds one line for each of echo's 400 signals: nothing queued was lost.
    EXPECT_EQ(arbiter::test::lines_of(arbiter::test::read_text(dir_ / "security.jsonl")).size(),
              400u);
    // And the relay heard the final assessment of both its players before the host left.
    auto served = last_assessments(relay.take_received());
    while (auto frame = relay.read_frame(std::chrono::seconds(2)))
        if (frame->kind == FrameKind::assessment)
            served[parse(*frame).value("player", 0u)] = parse(*frame);
    ASSERT_EQ(served.size(), 2u);
    EXPECT_EQ(served[1].value("action", ""), "FlagForReview");
    EXPECT_EQ(served[2].value("action", ""), "Clear");
    EXPECT_FALSE(fs::exists(relay_socket())) << "the socket file is removed on exit";
}

// SIGTERM while the queue is full and the relay blocked in its write: every frame the
// server received (queued, read and held back for room, or held by the kernel) is processed
// before it exits. Meanwhile a new relay's hello is answered at once: it does not wait for
// room in the queue.
TEST_F(Serve, SigtermDrainsFramesHeldBackByAFullQueue) {
    // The first batch stalls the event thread for 4 s: the queue fills behind it and stays
    // full, and the relay's writes block, until SIGTERM comes.
    write_config(config_text(
        test_plugin("slow", "arbiter-test-slow.so", "delay_us = 0\nfirst_batch_delay_ms = 4000"),
        "max_queued_bytes = 1048576\n"));
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_unix(relay_socket());
    relay.hello("relay");
    std::atomic<int> written{0};  // batches whose every byte the kernel took
    std::jthread sender([&] {
        arbiter::BatchBuilder builder("relay", 1);
        try {
            for (int i = 0; i < 3000; ++i) {  // about 4 MiB: far more than the queue
                for (uint32_t player = 1; player <= 20; ++player)
                    builder.add(i * 50'000 + player, static_cast<uint64_t>(i), player,
                                arbiter::build::Position{.position = {0, 0, 0}});
                relay.send_batch(builder.finish());
                ++written;
            }
        } catch (const std::exception&) {
            // The server left with this write still blocked: expected.
        }
    });
    // Wait until the relay is blocked: the queue is full and the kernel's buffers too.
    for (int last = -1; written != last;) {
        last = written;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ASSERT_LT(written, 3000) << "the relay was never held back";
    RelayClient late = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_NO_THROW(late.hello("late", kToken, std::chrono::milliseconds(1000)));
    const int received = written;  // the one being written may have reached the server whole
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
    const std::string log = server.log();
    const bool all = log.find(fmt::format("drained: {} batches ({} events) processed, 0 refused",
                                          received, received * 20)) != std::string::npos ||
                     log.find(fmt::format("drained: {} batches ({} events) processed, 0 refused",
                                          received + 1, (received + 1) * 20)) != std::string::npos;
    EXPECT_TRUE(all) << received << " batches written\n"
                     << log.substr(log.size() > 3000 ? log.size() - 3000 : 0);
}

// The long-history check of the counter plugin (host/tests/plugins/counter.cpp) fires
// when a player's position updates reach report_at, exactly. Player 1 gets exactly
// report_at updates and player 2 one fewer, streamed while the plugin is swapped v1, v2,
// v1, v2, refused once and reweighted: player 1's signal shows that no update was lost
// and the history carried across every swap; player 2's silence, that none was seen twice.
TEST_F(Serve, SwapsAPluginUnderLoadWithoutLosingOrRepeatingAnEvent) {
    const fs::path deployed = dir_ / "arbiter-counter.so";
    auto deploy = [&](const fs::path& library) {
        fs::copy_file(library, dir_ / "incoming.so", fs::copy_options::overwrite_existing);
        fs::rename(dir_ / "incoming.so", deployed);
    };
    deploy(COUNTER_V1);
    const int report_at = 4000;
    auto plugins = [&](double weight) {
        return test_plugin("slow", "arbiter-test-slow.so", "delay_us = 800") +
               "[plugins.counter]\nlibrary = \"" + deployed.string() +
               "\"\nweight = " + std::to_string(weight) +
               "\n[plugins.counter.config]\nreport_at = " + std::to_string(report_at) + "\n";
    };
    write_config(config_text(plugins(1.0)));
    ServerProcess server(config_path(), dir_.path());

    std::atomic<bool> done{false};
    std::string synced;
    std::jthread relay_thread([&] {
        RelayClient relay = RelayClient::connect_unix(relay_socket());
        arbiter::BatchBuilder builder("relay", 1);
        for (int i = 0; i < report_at; ++i) {
            builder.add(i * 50'000, static_cast<uint64_t>(i), 1,
                        arbiter::build::Position{.position = {0, 0, 0}});
            if (i + 1 < report_at)
                builder.add(i * 50'000 + 1, static_cast<uint64_t>(i), 2,
                            arbiter::build::Position{.position = {0, 0, 0}});
            relay.send_batch(builder.finish());
        }
        try {
            synced = relay.sync(1);
            done = true;
        } catch (const std::exception& error) {
            synced = error.what();
        }
    });

    auto counter_version = [&] {
        const json now = status();  // held: a range-for over status()["plugins"] would dangle
        for (const auto& plugin : now.value("plugins", json::array()))
            if (plugin.value("name", "") == "counter") return plugin.value("version", "");
        return std::string();
    };
    auto wait_for = [&](auto condition) {
        for (int i = 0; i < 600 && !condition(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        return condition();
    };
    uint64_t events_at_first_swap = 0;
    for (const char* library : {COUNTER_V2, COUNTER_V1, COUNTER_V2, COUNTER_V1}) {
        const std::string version = std::string(library) == COUNTER_V2 ? "2.0.0" : "1.0.0";
        deploy(library);
        ASSERT_TRUE(wait_for([&] { return counter_version() == version; }))
            << "running " << counter_version() << ", wanted " << version << "\n"
            << server.log();
        if (events_at_first_swap == 0)
            events_at_first_swap = status()["counters"].value("events", 0u);
    }
    // A broken build: refused, and 1.0.0 runs on.
    arbiter::test::write_text(dir_ / "incoming.so", "this is not an ELF file");
    fs::rename(dir_ / "incoming.so", deployed);
    ASSERT_TRUE(
        server.wait_for_log("plugin 'counter': reload refused, the running generation stays"))
        << server.log();
    EXPECT_EQ(counter_version(), "1.0.0");
    // A config change under load: a new weight.
    write_config(config_text(plugins(2.0)));
    ASSERT_TRUE(
        server.wait_for_log("plugin 'counter': new weight, class, trip-wire or deadline setting applied"))
        << server.log();
    deploy(COUNTER_V1);  // the good build again, so the file on disk is what runs

    relay_thread.join();
    ASSERT_TRUE(done);
    EXPECT_LT(events_at_first_swap, uint64_t(2 * report_at - 1))
        << "the first swap came after the stream ended";
    json counts = json::parse(synced);
    EXPECT_EQ(counts.value("events", 0), 2 * report_at - 1);
    EXPECT_EQ(counts.value("refused", 1), 0);

    json assessments =
        json::parse(arbiter::test::ctl(control_socket(), {"assessments"}, dir_.path()));
    std::map<uint32_t, json> by_player;
    for (const auto& assessment : assessments)
        by_player[assessment.value("player", 0u)] = assessment;
    ASSERT_EQ(by_player.size(), 2u);
    ASSERT_EQ(by_player[1]["signals"].size(), 1u) << by_player[1].dump(2);
    EXPECT_EQ(by_player[1]["signals"][0]["evidence"].value("seen", 0), report_at);
    // Every generation was loaded afresh: a library still resident would count on.
    EXPECT_EQ(by_player[1]["signals"][0]["evidence"].value("instances_created_by_this_library", 0),
              1);
    EXPECT_TRUE(by_player[2]["signals"].empty()) << by_player[2].dump(2);

    const std::string log = server.log();
    EXPECT_NE(log.find("reloaded 1.0.0 -> 2.0.0; state carried"), std::string::npos) << log;
    EXPECT_NE(log.find("reloaded 2.0.0 -> 1.0.0; state carried"), std::string::npos) << log;
    EXPECT_NE(log.find("stream paused"), std::string::npos);
    EXPECT_EQ(log.find("still in memory"), std::string::npos) << "an old version stayed resident";
}

// Issue 17, signed plugins under `serve`: a deploy replaces the library, then its
// minisign signature. The library alone is refused (the old signature does not match it)
// and the running build stays; the signature landing after it reloads the plugin, so the
// pair comes in whichever lands last. minisign is Debian's, as plugin authors use it.
TEST_F(Serve, ASignedDeployIsTakenWhenItsSignatureLands) {
    if (std::system("command -v minisign >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "minisign is not installed (apt-get install minisign): nothing here can "
                        "sign a plugin the way its authors do";
    const fs::path deployed = dir_ / "arbiter-counter.so";
    auto sh = [&](const std::string& command) {
        return std::system(("cd '" + dir_.path().string() + "' && " + command +
                            " >/dev/null 2>&1")
                               .c_str());
    };
    ASSERT_EQ(sh("minisign -G -W -p author.pub -s author.key"), 0);
    auto sign_into_place = [&] {
        // Signed beside the new build, then renamed over the old signature.
        ASSERT_EQ(sh("minisign -S -s author.key -m incoming.so -x incoming.minisig"), 0);
        fs::rename(dir_ / "incoming.minisig", dir_ / "arbiter-counter.so.minisig");
    };
    fs::copy_file(COUNTER_V1, dir_ / "incoming.so");
    sign_into_place();
    fs::rename(dir_ / "incoming.so", deployed);
    const std::string key = [&] {
        std::ifstream in(dir_ / "author.pub");
        std::string comment, line;
        std::getline(in, comment);
        std::getline(in, line);
        return line;
    }();
    write_config(config_text("[signing]\nkeys = { author = \"" + key +
                             "\" }\n[plugins.counter]\nlibrary = \"" + deployed.string() +
                             "\"\nsigned_by = \"author\"\n[plugins.counter.config]\nreport_at = 3\n"));
    ServerProcess server(config_path(), dir_.path());
    auto counter_version = [&] {
        const json now = status();
        for (const auto& plugin : now.value("plugins", json::array()))
            if (plugin.value("name", "") == "counter") return plugin.value("version", "");
        return std::string();
    };
    ASSERT_EQ(counter_version(), "1.0.0") << server.log();

    fs::copy_file(COUNTER_V2, dir_ / "incoming.so", fs::copy_options::overwrite_existing);
    fs::copy_file(dir_ / "incoming.so", dir_ / "unsigned.so");
    fs::rename(dir_ / "unsigned.so", deployed);
    ASSERT_TRUE(server.wait_for_log("does not match the library's bytes")) << server.log();
    EXPECT_EQ(counter_version(), "1.0.0");

    sign_into_place();
    for (int i = 0; i < 400 && counter_version() != "2.0.0"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    EXPECT_EQ(counter_version(), "2.0.0") << server.log();
}

TEST_F(Serve, CtlReportsStatusAndReloadsOnRequest) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_unix(relay_socket());
    relay.hello("status-relay");

    int exit_status = -1;
    const std::string table =
        arbiter::test::ctl(control_socket(), {"status"}, dir_.path(), &exit_status);
    EXPECT_EQ(exit_status, 0);
    EXPECT_NE(table.find("status-relay"), std::string::npos) << table;
    EXPECT_NE(table.find("echo"), std::string::npos) << table;
    // A relay names itself: a name with a terminal escape in it is shown escaped.
    RelayClient painter = RelayClient::connect_unix(relay_socket());
    painter.hello("\x1b[2Jpainter");
    const std::string escaped = arbiter::test::ctl(control_socket(), {"status"}, dir_.path());
    EXPECT_NE(escaped.find("\\x1b[2Jpainter"), std::string::npos) << escaped;
    EXPECT_EQ(escaped.find('\x1b'), std::string::npos) << "a raw escape reached the terminal";

    const std::string reloaded =
        arbiter::test::ctl(control_socket(), {"reload", "echo"}, dir_.path(), &exit_status);
    EXPECT_EQ(exit_status, 0) << reloaded;
    EXPECT_NE(reloaded.find("plugin 'echo': reloaded 1.0.0 -> 1.0.0"), std::string::npos)
        << reloaded;

    const std::string missing =
        arbiter::test::ctl(control_socket(), {"reload", "nosuch"}, dir_.path(), &exit_status);
    EXPECT_EQ(exit_status, 3);
    EXPECT_NE(missing.find("no plugin 'nosuch' is configured"), std::string::npos) << missing;

    const std::string unknown =
        arbiter::test::ctl(control_socket(), {"dance", "--json"}, dir_.path(), &exit_status);
    EXPECT_EQ(exit_status, 3);
    EXPECT_NE(unknown.find("unknown command 'dance'"), std::string::npos) << unknown;
}

TEST_F(Serve, AnInvalidConfigIsRefusedWithItsPositionAndTheOldOneStays) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
    ServerProcess server(config_path(), dir_.path());
    // An unknown key on line 5 of the new file.
    std::string broken = config_text(test_plugin("echo", "arbiter-test-echo.so"));
    broken.insert(broken.find("\n[sinks]"), "\nspeling_mistake = 1\n");
    write_config(broken);
    ASSERT_TRUE(server.wait_for_log("unknown key 'host.speling_mistake'")) << server.log();
    const std::string log = server.log();
    const auto at = log.find("server_config.toml:");
    ASSERT_NE(at, std::string::npos) << log;
    EXPECT_NE(log.find("the config was not applied; the old one stays"), std::string::npos);
    EXPECT_EQ(status()["plugins"].size(), 1u);

    // The operator fixes it in place and adds a plugin.
    arbiter::test::write_text(
        config_path(), config_text(test_plugin("echo", "arbiter-test-echo.so") +
                                   test_plugin("slow", "arbiter-test-slow.so", "delay_us = 0")));
    ASSERT_TRUE(server.wait_for_log("plugin 'slow': added")) << server.log();
    EXPECT_EQ(status()["plugins"].size(), 2u);
    // `ctl reload` re-reads it on request; nothing has changed since, and it says so.
    int exit_status = -1;
    const std::string applied =
        arbiter::test::ctl(control_socket(), {"reload", "--json"}, dir_.path(), &exit_status);
    EXPECT_EQ(exit_status, 0) << applied;
    EXPECT_TRUE(json::parse(applied).value("ok", false)) << applied;
    EXPECT_TRUE(json::parse(applied).value("summary", "").starts_with("nothing changed: "))
        << applied;
}

// A config change that adds a plugin whose creation takes seconds (a large model, say):
// the plugin is made on the loader thread while the relay's batches flow, and the change
// is applied in one short step between two batches.
TEST_F(Serve, AConfigChangeLoadsItsPluginsWhileBatchesFlow) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_unix(relay_socket().string());
    arbiter::BatchBuilder builder("relay", 1);
    builder.add(0, 0, 1, arbiter::build::Position{.position = {0, 0, 0}});
    relay.send_batch(builder.finish());

    write_config(config_text(
        test_plugin("echo", "arbiter-test-echo.so") +
        test_plugin("model", "arbiter-test-slow.so", "delay_us = 0\ncreate_delay_ms = 5000")));
    ASSERT_TRUE(server.wait_for_log("reading it and loading what it adds or changes"))
        << server.log();
    for (int i = 1; i <= 50; ++i) {
        builder.add(i * 50'000, static_cast<uint64_t>(i), 1,
                    arbiter::build::Position{.position = {0, 0, 0}});
        relay.send_batch(builder.finish());
    }
    json synced = json::parse(relay.sync(1));
    EXPECT_EQ(synced.value("batches", 0u), 51u);
    EXPECT_EQ(server.log().find("plugin 'model': added"), std::string::npos)
        << "the stream waited for the new plugin's creation";

    ASSERT_TRUE(server.wait_for_log("plugin 'model': added")) << server.log();
    builder.add(60 * 50'000, 60, 1, arbiter::build::Position{.position = {0, 0, 0}});
    relay.send_batch(builder.finish());
    (void)relay.sync(2);
    const json now = status();  // held: a range-for over status()["plugins"] would dangle
    bool model_called = false;
    for (const auto& plugin : now["plugins"])
        if (plugin.value("name", "") == "model")
            model_called = plugin.value("active", false) && plugin.value("calls", 0u) >= 1;
    EXPECT_TRUE(model_called) << now.dump(2);
}

// Issue 47: `ctl reload` of the config printed nothing when no plugin was added or
// reloaded, and the log said only "changed; applying it". Both say what came of it: each
// plugin of the file and what became of it, or why nothing was applied.
TEST_F(Serve, CtlReloadOfTheConfigSaysWhatWasApplied) {
    // The file is re-read on request only, so that each answer is this request's own.
    const std::string no_watch = "watch = false\n";
    const std::string echo = test_plugin("echo", "arbiter-test-echo.so");
    write_config(config_text(echo, no_watch));
    ServerProcess server(config_path(), dir_.path());
    const std::string file = config_path().string();
    auto reload = [&] {
        return arbiter::test::run_command({ARBITER_EXE, "ctl", control_socket().string(), "reload"},
                                          dir_.path());
    };

    auto same = reload();
    EXPECT_EQ(same.exit_status, 0) << same.err;
    EXPECT_NE(same.out.find(file + ": nothing changed: unchanged echo 1.0.0\n"), std::string::npos)
        << same.out;
    EXPECT_TRUE(server.wait_for_log(file + ": nothing changed: unchanged echo 1.0.0"))
        << server.log();

    write_config(
        config_text(echo + test_plugin("slow", "arbiter-test-slow.so", "delay_us = 0"), no_watch));
    auto added = reload();
    EXPECT_EQ(added.exit_status, 0) << added.err;
    EXPECT_NE(added.out.find(file + ": applied: added slow "), std::string::npos) << added.out;
    EXPECT_NE(added.out.find("; unchanged echo 1.0.0\n"), std::string::npos) << added.out;
    EXPECT_NE(added.out.find("  plugin 'slow': added, version "), std::string::npos) << added.out;
    EXPECT_TRUE(server.wait_for_log(file + ": applied: added slow ")) << server.log();

    // A plugin that cannot be loaded: nothing of the change applies, and the answer says why.
    write_config(config_text(
        echo + "[plugins.ghost]\nlibrary = \"" + (dir_ / "ghost.so").string() + "\"\n", no_watch));
    auto refused = reload();
    EXPECT_EQ(refused.exit_status, 3);
    EXPECT_NE(refused.out.find(file + ": NOT applied, the running config stays: "),
              std::string::npos)
        << refused.out;
    EXPECT_NE(
        refused.out.find("plugin 'ghost' (" + (dir_ / "ghost.so").string() + "): file not found\n"),
        std::string::npos)
        << refused.out;
    EXPECT_TRUE(server.wait_for_log(file + ": NOT applied, the running config stays: "))
        << server.log();
    EXPECT_EQ(status()["plugins"].size(), 2u) << "slow, removed by the refused file, stays";

    // A file with an error: the answer counts the problems and gives each.
    write_config(config_text(echo, no_watch) + "[aggregation]\nreview_treshold = 0.7\n");
    auto broken = reload();
    EXPECT_EQ(broken.exit_status, 3);
    EXPECT_NE(broken.out.find(file + ": NOT applied, the running config stays: 1 problem(s) in "
                                     "the file\n"),
              std::string::npos)
        << broken.out;
    EXPECT_NE(broken.out.find("unknown key 'aggregation.review_treshold'"), std::string::npos)
        << broken.out;

    // Removed, and new thresholds: both named; --json has each plugin's outcome.
    write_config(config_text(echo, no_watch) + "[aggregation]\nmonitor_threshold = 0.25\n");
    auto removed = arbiter::test::run_command(
        {ARBITER_EXE, "ctl", control_socket().string(), "reload", "--json"}, dir_.path());
    EXPECT_EQ(removed.exit_status, 0) << removed.err;
    const json answer = json::parse(removed.out, nullptr, false);
    EXPECT_EQ(answer.value("summary", ""),
              "applied: removed slow; unchanged echo 1.0.0; [aggregation] changed")
        << removed.out;
    ASSERT_EQ(answer["plugins"].size(), 2u) << removed.out;
    EXPECT_EQ(answer["plugins"][0].value("outcome", ""), "unchanged");
    EXPECT_EQ(answer["plugins"][1].value("plugin", ""), "slow");
    EXPECT_EQ(answer["plugins"][1].value("outcome", ""), "removed");

    // Disabled: a change the first time, and said so; the second time, nothing changed.
    write_config(config_text(echo + "enabled = false\n", no_watch) +
                 "[aggregation]\nmonitor_threshold = 0.25\n");
    auto disabled = reload();
    EXPECT_NE(disabled.out.find(file + ": applied: disabled echo; no plugin enabled\n"),
              std::string::npos)
        << disabled.out;
    auto again = reload();
    EXPECT_NE(again.out.find(file + ": nothing changed: disabled echo; no plugin enabled\n"),
              std::string::npos)
        << again.out;
}

// A plugin file rewritten five times while its reload loads is loaded twice, not five
// times: one reload per plugin runs at a time, and what came meanwhile is one more.
TEST_F(Serve, ChangesDuringAReloadAreFoldedIntoOneMore) {
    const fs::path deployed = dir_ / "arbiter-model.so";
    fs::copy_file(fs::path(TEST_PLUGIN_DIR) / "arbiter-test-slow.so", deployed);
    write_config(config_text("[plugins.model]\nlibrary = \"" + deployed.string() +
                             "\"\n[plugins.model.config]\ndelay_us = 0\ncreate_delay_ms = 3000\n"));
    ServerProcess server(config_path(), dir_.path());
    auto redeploy = [&] {
        fs::copy_file(fs::path(TEST_PLUGIN_DIR) / "arbiter-test-slow.so", dir_ / "incoming.so",
                      fs::copy_options::overwrite_existing);
        fs::rename(dir_ / "incoming.so", deployed);
    };
    redeploy();
    ASSERT_TRUE(server.wait_for_log("loading " + deployed.string() + " for a reload"))
        << server.log();
    for (int i = 0; i < 5; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));  // past watch_settle_ms
        redeploy();
    }
    ASSERT_TRUE(server.wait_for_log("plugin 'model': reloaded")) << server.log();
    // The second, for everything that changed during the first.
    for (int i = 0; i < 400; ++i) {
        const std::string log = server.log();
        size_t reloads = 0;
        for (auto at = log.find("plugin 'model': reloaded"); at != std::string::npos;
             at = log.find("plugin 'model': reloaded", at + 1))
            ++reloads;
        if (reloads >= 2) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    const std::string log = server.log();
    size_t loads = 0;
    for (auto at = log.find("for a reload, off the event path"); at != std::string::npos;
         at = log.find("for a reload, off the event path", at + 1))
        ++loads;
    EXPECT_EQ(loads, 2u) << log;
}

TEST_F(Serve, CtlWithoutARunningServerSaysSo) {
    auto result = arbiter::test::run_command(
        {ARBITER_EXE, "ctl", control_socket().string(), "status"}, dir_.path());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_NE(result.err.find("cannot connect to"), std::string::npos) << result.err;
}

TEST_F(Serve, RefusesToStartOnAnAddressItMustNotOrCannotUse) {
    auto serve = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> argv = {ARBITER_EXE, "serve", config_path().string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return arbiter::test::run_command(argv, dir_.path());
    };
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));

    auto remote = serve({"--tcp", "0.0.0.0:0"});
    EXPECT_EQ(remote.exit_status, 2);
    EXPECT_NE(remote.err.find("not a loopback address"), std::string::npos) << remote.err;

    arbiter::test::write_text(dir_ / "not-a-socket", "precious");
    auto file = serve({"--unix", (dir_ / "not-a-socket").string()});
    EXPECT_EQ(file.exit_status, 2);
    EXPECT_NE(file.err.find("exists and is not a socket"), std::string::npos) << file.err;
    EXPECT_EQ(arbiter::test::read_text(dir_ / "not-a-socket"), "precious");

    ServerProcess first(config_path(), dir_.path());
    auto second = serve({"--tcp", "127.0.0.1:0", "--control", (dir_ / "other.sock").string()});
    EXPECT_EQ(second.exit_status, 2);
    EXPECT_NE(second.err.find("another server is already listening"), std::string::npos)
        << second.err;
    EXPECT_EQ(first.stop(SIGTERM), 0);

    // A token file that cannot be read: named, and nothing left listening.
    std::string text = config_text(test_plugin("echo", "arbiter-test-echo.so"));
    text.replace(text.find("token = "),
                 std::string("token = \"").size() + std::string(kToken).size() + 1,
                 "token_file = \"" + (dir_ / "no-such-token").string() + "\"");
    write_config(text);
    auto no_token = serve({});
    EXPECT_EQ(no_token.exit_status, 2);
    EXPECT_NE(no_token.err.find("serve.token_file: token file " +
                                (dir_ / "no-such-token").string() + ": cannot read it"),
              std::string::npos)
        << no_token.err;
    EXPECT_FALSE(fs::exists(relay_socket()));

    // A token file others may read is no secret: refused by name (issue 19), then taken
    // once it is the owner's alone.
    arbiter::test::write_text(dir_ / "no-such-token", std::string(kToken) + "\n");
    fs::permissions(dir_ / "no-such-token", fs::perms::owner_read | fs::perms::owner_write |
                                                fs::perms::group_read | fs::perms::others_read);
    auto readable = serve({});
    EXPECT_EQ(readable.exit_status, 2);
    EXPECT_NE(readable.err.find("others may read it (mode 0644); a secret is for its owner alone"),
              std::string::npos)
        << readable.err;
    fs::permissions(dir_ / "no-such-token", fs::perms::owner_read | fs::perms::owner_write);
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_NO_THROW(relay.hello("ok", kToken));
}

}  // namespace

namespace {

// A hello over TCP from `source`, a loopback address of the test's choosing (127.0.0.2,
// say), as the relay of another machine would send it: "welcome", or the host's error.
std::string hello_from(const std::string& source, const std::string& address,
                       const std::string& token) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0)
        throw std::runtime_error("cannot connect from " + source + " to " + address);
    std::vector<uint8_t> out = arbiter::host::wire::stream_header();
    arbiter::host::wire::append_frame(out, FrameKind::hello,
                                      json{{"relay", "relay"}, {"token", token}}.dump());
    [[maybe_unused]] auto sent = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    timeval timeout{.tv_sec = 20, .tv_usec = 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    arbiter::host::wire::FrameDecoder decoder(1 << 20);
    std::string answer = "no answer";
    uint8_t buffer[4096];
    for (ssize_t got; answer == "no answer" && (got = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) {
        decoder.feed(std::span(buffer, static_cast<size_t>(got)));
        while (auto decoded = decoder.next()) {
            if (!decoded->frame) continue;
            if (decoded->frame->kind == FrameKind::welcome) answer = "welcome";
            if (decoded->frame->kind == FrameKind::error)
                answer = parse(*decoded->frame).value("error", "");
        }
    }
    ::close(fd);
    return answer;
}

// The value of the sample whose line starts with `series ` in an exposition.
std::optional<double> sample(const std::string& exposition, const std::string& series) {
    const auto at = exposition.find("\n" + series + " ");
    if (at == std::string::npos) return std::nullopt;
    return std::stod(exposition.substr(at + series.size() + 2));
}

}  // namespace

// Prometheus scrapes the live server: its counters, each plugin's calls, and what the
// plugins themselves count, all from the stream it just processed. Anything but a GET of
// /metrics is answered with why, and the server serves on.
TEST_F(Serve, ExposesItsMetricsToAPrometheusScrape) {
    write_config(config_text(bundled("reference") + bundled("kaladin"),
                             "metrics_listen = \"127.0.0.1:0\"\nhello_timeout_ms = 300\n"));
    const auto records = records_of(fs::path(SAMPLES_DIR) / "sample-match.arbev");
    ServerProcess server(config_path(), dir_.path());
    ASSERT_TRUE(server.metrics_address().starts_with("127.0.0.1:")) << server.metrics_address();

    RelayClient relay = RelayClient::connect_unix(relay_socket().string());
    relay.hello("sample-relay", "");
    for (const auto& record : records)
        relay.send_batch(record);
    (void)relay.sync(1);

    const std::string response =
        http_exchange(server.metrics_address(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response.substr(0, 200);
    EXPECT_NE(response.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
              std::string::npos);
    const std::string body = response.substr(response.find("\r\n\r\n") + 4);
    EXPECT_EQ(response.find("Content-Length: " + std::to_string(body.size()) + "\r\n") ==
                  std::string::npos,
              false);
    EXPECT_EQ(sample(body, "arbiter_batches_total"), static_cast<double>(records.size()));
    EXPECT_EQ(sample(body, "arbiter_refused_batches_total"), 0.0);
    EXPECT_EQ(sample(body, "arbiter_relay_connections"), 1.0);
    EXPECT_EQ(sample(body, "arbiter_info{server_id=\"serve-test\"}"), 1.0);
    EXPECT_EQ(sample(body, "arbiter_plugin_active{plugin=\"reference\"}"), 1.0);
    EXPECT_GE(sample(body, "arbiter_plugin_calls_total{plugin=\"kaladin\"}").value_or(0),
              static_cast<double>(records.size()));
    EXPECT_EQ(sample(body, "arbiter_plugin_errors_total{plugin=\"reference\"}"), 0.0);
    // kaladin's own gauge, through the host services: one per shard when the server runs
    // threads (labelled shard="N"), one alone on one thread.
    EXPECT_NE(body.find("arbiter_plugin_metric{plugin=\"kaladin\",name=\"tracked_matches\""),
              std::string::npos)
        << body;
    EXPECT_NE(body.find("# TYPE arbiter_batches_total counter\n"), std::string::npos);

    const std::string head =
        http_exchange(server.metrics_address(), "HEAD /metrics HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_TRUE(head.ends_with("\r\n\r\n")) << "HEAD has no body";

    EXPECT_TRUE(http_exchange(server.metrics_address(), "GET / HTTP/1.1\r\n\r\n")
                    .starts_with("HTTP/1.1 404 Not Found\r\n"));
    EXPECT_TRUE(http_exchange(server.metrics_address(), "POST /metrics HTTP/1.1\r\n\r\n")
                    .starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    EXPECT_TRUE(http_exchange(server.metrics_address(), "\xff\xfe junk\r\n\r\n")
                    .starts_with("HTTP/1.1 400 Bad Request\r\n"));
    EXPECT_TRUE(http_exchange(server.metrics_address(),
                              "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a'))
                    .starts_with("HTTP/1.1 431 "));
    // A whole head over 8 KiB that arrives at once is refused too, not only one still coming.
    EXPECT_TRUE(http_exchange(server.metrics_address(),
                              "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n")
                    .starts_with("HTTP/1.1 431 "));
    // A scrape that never finishes its request is let go (serve.hello_timeout_ms).
    EXPECT_TRUE(http_exchange(server.metrics_address(), "GET /metrics HTTP/1.1\r\n")
                    .starts_with("HTTP/1.1 408 Request Timeout\r\n"));

    // The relay was never disturbed.
    json synced = json::parse(relay.sync(2));
    EXPECT_EQ(synced.value("batches", 0u), records.size());
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// Scrapes and control commands are capped like relays: sixteen scrapers that connect and
// say nothing hold their slots only until serve.hello_timeout_ms, the seventeenth is told
// 503 at once, and relays are never kept out by them.
// Issue 17: under `arbiter serve`, an isolated plugin that crashes on every batch is
// restarted, then quarantined; the server, its relay and the bundled plugin go on, the
// relay hears the same assessments as a replay without the bad plugin, and ctl status and
// the metrics say what happened.
TEST_F(Serve, AnIsolatedPluginThatKeepsCrashingIsQuarantinedAndTheServerGoesOn) {
    const std::string bad = test_plugin("bad", "arbiter-test-misbehaves.so",
                                        "mode = \"segfault\"\nat_batch = 50");
    // isolation goes in [plugins.bad], before its config table.
    const std::string isolated_bad =
        bad.substr(0, bad.find("[plugins.bad.config]")) +
        "isolation = \"process\"\nmax_restarts = 1\n" +
        bad.substr(bad.find("[plugins.bad.config]"));
    write_config(config_text(bundled("reference") + isolated_bad,
                             "metrics_listen = \"127.0.0.1:0\"\n"));
    arbiter::test::write_text(dir_ / "alone.toml", "[plugins.reference]\nlibrary = \"reference\"\n");
    const fs::path match = fs::path(SAMPLES_DIR) / "sample-match.arbev";
    const auto records = records_of(match);
    ServerProcess server(config_path(), dir_.path());
    const auto frames = send_as_sample_relay(records);
    EXPECT_TRUE(errors_in(frames).empty());
    expect_same_actions_as_replay(last_assessments(frames), dir_ / "alone.toml", match, dir_.path());

    const json now = status();
    ASSERT_TRUE(now.contains("plugins")) << now.dump();
    const json& entry = now["plugins"][1];
    EXPECT_EQ(entry.value("isolation", ""), "process");
    EXPECT_EQ(entry.value("restarts", 0), 1);
    EXPECT_NE(entry.value("quarantined", "").find("crashed with SIGSEGV"), std::string::npos)
        << entry.dump();
    EXPECT_EQ(now["counters"].value("batches", 0u), records.size());
    const std::string table = arbiter::test::ctl(control_socket(), {"status"}, dir_.path());
    EXPECT_NE(table.find("QUARANTINED: 2 fault(s)"), std::string::npos) << table;
    const std::string response =
        http_exchange(server.metrics_address(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(response.find("arbiter_plugin_quarantined{plugin=\"bad\"} 1"), std::string::npos);
    EXPECT_NE(response.find("arbiter_plugin_restarts_total{plugin=\"bad\"} 1"), std::string::npos);
}

// Issue 39: a plugin past its bounds under `arbiter serve` goes on, throttled, and ctl
// status and the metrics say so; the relay hears its assessments as before.
TEST_F(Serve, APluginPastItsBoundsIsThrottledAndStatusAndMetricsSaySo) {
    const std::string flood = test_plugin("bad", "arbiter-test-misbehaves.so",
                                          "mode = \"strangers\"\nat_batch = 1\ncount = 50");
    write_config(config_text(bundled("reference") + flood, "metrics_listen = \"127.0.0.1:0\"\n"));
    const fs::path match = fs::path(SAMPLES_DIR) / "sample-match.arbev";
    const auto records = records_of(match);
    ServerProcess server(config_path(), dir_.path());
    EXPECT_TRUE(errors_in(send_as_sample_relay(records)).empty());

    const json now = status();
    ASSERT_TRUE(now.contains("plugins")) << now.dump();
    const json& entry = now["plugins"][1];
    EXPECT_EQ(entry["past_bounds"].value("signals_about_strangers", 0u), 50u * records.size());
    const std::string table = arbiter::test::ctl(control_socket(), {"status"}, dir_.path());
    EXPECT_NE(table.find("THROTTLED, dropped: " + std::to_string(50 * records.size()) +
                         " signals about players not in the match"),
              std::string::npos)
        << table;
    const std::string response =
        http_exchange(server.metrics_address(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(response.find("arbiter_plugin_dropped_total{plugin=\"bad\",kind=\"signals_about_"
                            "strangers\"} " +
                            std::to_string(50 * records.size())),
              std::string::npos)
        << response.substr(0, 4000);
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

TEST_F(Serve, IdleScrapersAreCappedAndLetGo) {
    write_config(config_text(bundled("reference"),
                             "metrics_listen = \"127.0.0.1:0\"\nhello_timeout_ms = 1500\n"));
    ServerProcess server(config_path(), dir_.path());
    std::vector<int> idle;
    for (int i = 0; i < 16; ++i)
        idle.push_back(connect_loopback(server.metrics_address()));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all accepted
    const std::string refused =
        http_exchange(server.metrics_address(), "GET /metrics HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(refused.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << refused;
    EXPECT_NE(refused.find("at most 16 scrapes at once"), std::string::npos) << refused;

    RelayClient relay = RelayClient::connect_unix(relay_socket().string());
    EXPECT_NO_THROW(relay.hello("sample-relay", ""));
    EXPECT_NO_THROW((void)relay.sync(1));

    // Past the deadline the idle ones have been answered 408 and closed; a scrape gets in.
    for (int fd : idle) {
        timeval timeout{.tv_sec = 20, .tv_usec = 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        char buffer[512];
        const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
        EXPECT_TRUE(got > 0 &&
                    std::string(buffer, static_cast<size_t>(got)).starts_with("HTTP/1.1 408"));
        ::close(fd);
    }
    EXPECT_TRUE(http_exchange(server.metrics_address(), "GET /metrics HTTP/1.1\r\n\r\n")
                    .starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_NE(server.log().find("turned away: the host answers at most 16 scrapes"),
              std::string::npos);
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// Issue 39: a token could be guessed at ~14,600 tries a second, each try two lines of log.
// Now failed hellos are counted per address and overall in a window: past
// serve.token_failures_per_address an address's hellos are refused unchecked, its right
// token too; past serve.token_failures_overall so are those of every address that has not
// given a right token; an address that is not throttled still gets in. The log shows the
// first failure and then a count.
TEST_F(Serve, TokenGuessingIsThrottledPerAddressAndOverall) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so"),
                             "unix_requires_token = true\ntoken_failures_per_address = 3\n"
                             "token_failures_overall = 4\ntoken_failure_window_ms = 600000\n"));
    ServerProcess server(config_path(), dir_.path());
    const std::string tcp = server.tcp_address();
    ASSERT_EQ(hello_from("127.0.0.1", tcp, kToken), "welcome");

    // Three wrong tokens from one address: each is checked and refused.
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(hello_from("127.0.0.2", tcp, "guess-" + std::to_string(i)),
                  "wrong token for relay 'relay'");
    // From then on even the right one is refused there, unchecked, saying for how long.
    const std::string throttled = hello_from("127.0.0.2", tcp, kToken);
    EXPECT_NE(throttled.find("too many failed hellos from 127.0.0.2 (3 within 600000 ms, "
                             "serve.token_failures_per_address)"),
              std::string::npos)
        << throttled;
    EXPECT_NE(throttled.find("refused unchecked for 600 s more"), std::string::npos) << throttled;

    // A fourth failure from anywhere (the Unix socket is one more address) reaches the
    // overall bound: an address that never gave a right token is refused unchecked ...
    RelayClient local = RelayClient::connect_unix(relay_socket().string());
    EXPECT_THROW(local.hello("relay", "guess-3"), std::runtime_error);
    const std::string overall = hello_from("127.0.0.3", tcp, kToken);
    EXPECT_NE(overall.find("too many failed hellos from all addresses (4 within 600000 ms, "
                           "serve.token_failures_overall)"),
              std::string::npos)
        << overall;
    // ... and one that did, and is under its own bound, still gets in.
    RelayClient known = RelayClient::connect_tcp(tcp);
    EXPECT_NO_THROW(known.hello("relay", kToken));
    EXPECT_EQ(json::parse(known.sync(1)).value("batches", 1), 0);

    // One line for the first failure, then counts (every 10 s, and at the end), not a line
    // a try.
    EXPECT_EQ(server.stop(SIGTERM), 0);
    const std::string log = server.log();
    EXPECT_NE(log.find("wrong token for relay 'relay'; closing it (failed hellos are counted"),
              std::string::npos)
        << log;
    uint64_t failures = 0, unchecked = 0, lines = 0;
    const std::regex tally(
        R"((\d+) hello\(s\) refused in the last \d+ s \([^)]*\), and (\d+) more refused unchecked)");
    for (std::sregex_iterator it(log.begin(), log.end(), tally), end; it != end; ++it, ++lines) {
        failures += std::stoull((*it)[1]);
        unchecked += std::stoull((*it)[2]);
    }
    EXPECT_EQ(failures, 4u) << log;
    EXPECT_EQ(unchecked, 2u) << log;
    EXPECT_LE(lines, 2u) << log;
    // Nor is each of the guesser's connections a line of its own: its first failure is all.
    size_t guesser_lines = 0;
    for (size_t at = 0; (at = log.find("from 127.0.0.2:", at)) != std::string::npos; ++at)
        ++guesser_lines;
    EXPECT_EQ(guesser_lines, 1u) << log;
    EXPECT_NE(log.find("1 address(es) past serve.token_failures_per_address, and all together "
                       "past serve.token_failures_overall"),
              std::string::npos)
        << log;
}

// Issue 39: /metrics was rendered on the event thread, so a plugin with many series of its
// own made every scrape a pause for every relay (400,000 series: 39 MB, a second each).
// Now the event thread takes the host's figures alone and the page is rendered beside it:
// a batch sent after a scrape is processed, and its sync answered, while the scrape has not
// had a byte of its answer yet.
TEST_F(Serve, AScrapeOfManySeriesDoesNotHoldUpTheRelays) {
    // As many names as it makes (max_metric_names bounds them at 256 by default): the point
    // is a page that takes long to render.
    std::string many = test_plugin("many", "arbiter-test-many-metrics.so", "series = 400000");
    many.insert(many.find("[plugins.many.config]"), "max_metric_names = 400000\n");
    write_config(config_text(many, "metrics_listen = \"127.0.0.1:0\"\nhello_timeout_ms = 600000\n"));
    ServerProcess server(config_path(), dir_.path());
    const int scraper = connect_loopback(server.metrics_address());
    RelayClient relay = RelayClient::connect_unix(relay_socket().string());
    relay.hello("relay");
    arbiter::BatchBuilder builder("relay", 1);
    auto batch = [&](int64_t t) {
        builder.add(t, 1, 1, arbiter::build::Position{.position = {0, 0, 0}});
        return builder.finish();
    };
    relay.send_batch(batch(1000));  // the match's first: the plugin makes its series
    EXPECT_EQ(json::parse(relay.sync(1)).value("batches", 0), 1);

    const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(::send(scraper, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    // The request stands in the server's socket before this sync is sent, so the sync's
    // answer means the network thread has read it and queued it: the scrape is taken
    // before the batch that follows, whichever connection a turn of its loop reads first.
    EXPECT_EQ(json::parse(relay.sync(2)).value("batches", 0), 1);
    // The relay's next batch is taken and answered while the scrape is out, its client
    // not yet reading. (Whether the render is still going by then is a race between two
    // speeds, which a test does not judge; what the page says below is the order.)
    relay.send_batch(batch(2000));
    EXPECT_EQ(json::parse(relay.sync(3)).value("batches", 0), 2);

    // The scrape is answered in full all the same, with every series.
    timeval timeout{.tv_sec = 60, .tv_usec = 0};
    ::setsockopt(scraper, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string response;
    std::vector<char> buffer(1 << 20);
    for (ssize_t got; (got = ::recv(scraper, buffer.data(), buffer.size(), 0)) > 0;)
        response.append(buffer.data(), static_cast<size_t>(got));
    ::close(scraper);
    ASSERT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response.substr(0, 200);
    EXPECT_EQ(sample(response, "arbiter_batches_total"), 1.0) << "taken before the second batch";
    EXPECT_EQ(sample(response,
                     "arbiter_plugin_metric_total{plugin=\"many\",name=\"series.399999\"}"),
              1.0);
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// `arbiter send` is a relay in a command: the sample over the Unix socket and over TCP
// with the token from a file or the environment, the same verdicts as replay; a wrong
// token, a target nobody listens on and a duplicate stream are each said and exited on.
TEST_F(Serve, SendStreamsARecordedMatchAndPrintsWhatTheServerAssessed) {
    write_config(config_text(bundled("reference") + bundled("lagpool") + bundled("kaladin")));
    ServerProcess server(config_path(), dir_.path());
    const std::string sample = (fs::path(SAMPLES_DIR) / "sample-match.arbev").string();
    const std::string arbiter = ARBITER_EXE;

    auto sent =
        arbiter::test::run_command({arbiter, "send", sample, relay_socket().string()}, dir_.path());
    EXPECT_EQ(sent.exit_status, 0) << sent.err;
    EXPECT_NE(
        sent.err.find("1201 batches sent; the server processed 1201 (8744 events), refused 0"),
        std::string::npos)
        << sent.err;
    const auto lines = arbiter::test::lines_of(sent.out);
    ASSERT_EQ(lines.size(), 7u) << sent.out;
    for (const char* honest : {"alice", "bob", "carol", "dave"}) {
        bool clear = false;
        for (const auto& line : lines)
            clear = clear || (line.find(honest) != std::string::npos &&
                              line.find(" Clear ") != std::string::npos);
        EXPECT_TRUE(clear) << honest << "\n" << sent.out;
    }
    EXPECT_NE(sent.out.find("mallory      FlagForReview"), std::string::npos) << sent.out;
    EXPECT_NE(sent.out.find("trent        FlagForReview"), std::string::npos) << sent.out;

    // The same stream again: every batch is a duplicate, refused and counted, exit 3.
    auto again =
        arbiter::test::run_command({arbiter, "send", sample, relay_socket().string()}, dir_.path());
    EXPECT_EQ(again.exit_status, 3);
    EXPECT_NE(again.err.find("is a duplicate of the first batch"), std::string::npos) << again.err;
    EXPECT_NE(again.err.find("1181 more refusal(s) not shown"), std::string::npos) << again.err;

    // Over TCP the token comes from a file; a wrong one is refused by the server, by name.
    arbiter::test::write_text(dir_ / "token", std::string(kToken) + "\n");
    arbiter::test::write_text(dir_ / "wrong-token", "nope\n");
    const std::string other = simulate("honest=2", 5, 9).string();
    auto over_tcp =
        arbiter::test::run_command({arbiter, "send", other, server.tcp_address(), "--token-file",
                                    (dir_ / "token").string(), "--json"},
                                   dir_.path());
    EXPECT_EQ(over_tcp.exit_status, 0) << over_tcp.err;
    EXPECT_EQ(arbiter::test::lines_of(over_tcp.out).size(), 2u) << over_tcp.out;
    EXPECT_TRUE(json::parse(arbiter::test::lines_of(over_tcp.out)[0]).contains("signals"));
    auto wrong = arbiter::test::run_command({arbiter, "send", other, server.tcp_address(),
                                             "--token-file", (dir_ / "wrong-token").string()},
                                            dir_.path());
    EXPECT_EQ(wrong.exit_status, 2);
    EXPECT_NE(wrong.err.find("token"), std::string::npos) << wrong.err;

    auto nobody = arbiter::test::run_command(
        {arbiter, "send", sample, (dir_ / "nobody.sock").string()}, dir_.path());
    EXPECT_EQ(nobody.exit_status, 2);
    EXPECT_NE(nobody.err.find("cannot connect"), std::string::npos) << nobody.err;
    auto neither = arbiter::test::run_command({arbiter, "send", sample, "localhost"}, dir_.path());
    EXPECT_EQ(neither.exit_status, 1);
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// Issue 47: with a relay's own token, `send --relay eu1` changed the hello alone, so every
// batch of a recorded match (another relay's) was refused ("a relay sends its own matches
// alone"); and without --relay the hello named the file's relay, which the server logged
// as a wrong or missing token although the token was right.
TEST_F(Serve, SendAsARelayWithItsOwnTokenSendsTheRecordedMatchAsThatRelays) {
    write_config(config_text(bundled("reference") + bundled("lagpool") + bundled("kaladin"),
                             "[serve.relays.eu1]\ntoken = \"eu1-token\"\n"));
    ServerProcess server(config_path(), dir_.path());
    const std::string sample = (fs::path(SAMPLES_DIR) / "sample-match.arbev").string();
    const std::string arbiter = ARBITER_EXE;
    arbiter::test::write_text(dir_ / "eu1.token", "eu1-token\n");

    // The file's relay is sample-relay: the hello names it, and eu1's token is not its.
    auto unnamed = arbiter::test::run_command({arbiter, "send", sample, server.tcp_address(),
                                               "--token-file", (dir_ / "eu1.token").string()},
                                              dir_.path());
    EXPECT_EQ(unnamed.exit_status, 2);
    EXPECT_NE(unnamed.err.find("wrong token for relay 'sample-relay'"), std::string::npos)
        << unnamed.err;
    EXPECT_NE(unnamed.err.find("the hello named relay 'sample-relay' (the relay id of the first "
                               "recorded batch; --relay NAME sends every batch as relay NAME's)"),
              std::string::npos)
        << unnamed.err;
    EXPECT_TRUE(server.wait_for_log(
        "the hello names relay 'sample-relay' but carries the token of relay 'eu1': the token "
        "is right, the name is not"))
        << server.log();
    // The connection's own line, that is: the tally every 10 s still lists kinds of refusal.
    EXPECT_EQ(server.log().find("wrong or missing token; closing it"), std::string::npos)
        << server.log();

    // With --relay every batch goes as eu1's, and the match is assessed as replay does.
    auto sent =
        arbiter::test::run_command({arbiter, "send", sample, server.tcp_address(), "--token-file",
                                    (dir_ / "eu1.token").string(), "--relay", "eu1", "--json"},
                                   dir_.path());
    EXPECT_EQ(sent.exit_status, 0) << sent.err;
    EXPECT_NE(
        sent.err.find("1201 batches sent; the server processed 1201 (8744 events), refused 0"),
        std::string::npos)
        << sent.err;
    EXPECT_NE(sent.err.find("sent the batches of relay 'sample-relay' as relay 'eu1'"),
              std::string::npos)
        << sent.err;
    std::map<uint32_t, json> served;
    for (const auto& line : arbiter::test::lines_of(sent.out)) {
        const json assessment = json::parse(line);
        EXPECT_EQ(assessment.value("relay_id", ""), "eu1") << line;
        served[assessment.value("player", 0u)] = assessment;
    }
    expect_same_actions_as_replay(served, config_path(), sample, dir_.path());

    // An empty name is no relay's.
    auto empty = arbiter::test::run_command(
        {arbiter, "send", sample, server.tcp_address(), "--relay", ""}, dir_.path());
    EXPECT_EQ(empty.exit_status, 1);
    EXPECT_NE(empty.err.find("--relay needs a name"), std::string::npos) << empty.err;
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// Sockets that never say hello cannot keep an honest relay out (issue 19): before its
// hello a TCP connection counts against serve.max_pending_connections, not the relays'
// slots, is closed when no hello comes within serve.hello_timeout_ms, and has nothing
// larger than a hello buffered for it.
TEST_F(Serve, SocketsThatNeverSayHelloCannotKeepARelayOut) {
    write_config(
        config_text(test_plugin("echo", "arbiter-test-echo.so"),
                    "max_connections = 2\nmax_pending_connections = 3\nhello_timeout_ms = 300\n"));
    ServerProcess server(config_path(), dir_.path());
    std::vector<RelayClient> silent;
    for (int i = 0; i < 8; ++i)
        silent.push_back(RelayClient::connect_tcp(server.tcp_address()));
    // Past the third, each new one makes room: the oldest waiting is told why and closed.
    for (size_t i = 0; i + 3 < silent.size(); ++i) {
        auto refusal = silent[i].read_frame(std::chrono::seconds(10));
        ASSERT_TRUE(refusal) << i;
        EXPECT_NE(parse(*refusal)
                      .value("error", "")
                      .find("at most 3 connections waiting for theirs"),
                  std::string::npos)
            << parse(*refusal).dump();
    }
    // The last three wait, then hear that their time is up.
    for (size_t i = silent.size() - 3; i < silent.size(); ++i) {
        auto timeout = silent[i].read_frame(std::chrono::seconds(10));
        ASSERT_TRUE(timeout) << i;
        EXPECT_NE(parse(*timeout).value("error", "").find("no hello within 300 ms"),
                  std::string::npos);
        EXPECT_FALSE(silent[i].read_frame(std::chrono::seconds(10)));
        EXPECT_TRUE(silent[i].host_hung_up());
    }
    // An honest relay gets in, and so does a second; the relays' slots were never taken.
    RelayClient honest = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_NO_THROW(honest.hello("honest", kToken));
    RelayClient second = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_NO_THROW(second.hello("second", kToken));
    // A third authenticated relay finds the slots full, after its hello.
    RelayClient third = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_THROW(third.hello("third", kToken), std::runtime_error);

    // Before the hello, a frame larger than a hello is not buffered: refused and closed.
    RelayClient greedy = RelayClient::connect_tcp(server.tcp_address());
    std::vector<uint8_t> big;
    arbiter::host::wire::append_frame(big, FrameKind::batch, std::vector<uint8_t>(1 << 20, 0x5a));
    big.resize(16 + 1000);  // the header claims 1 MiB; the host must not wait for the rest
    greedy.send_raw(big);
    auto refused = greedy.read_frame(std::chrono::seconds(10));
    ASSERT_TRUE(refused);
    EXPECT_NE(parse(*refused).value("error", "").find("over the limit of 65536 bytes"),
              std::string::npos)
        << parse(*refused).dump();
    EXPECT_EQ(json::parse(honest.sync(1)).value("batches", 1), 0);
}

// Issue 39: sockets that connect and never say hello filled the pending connections, and
// every relay that came after them was turned away, again and again. Now the connection
// that has waited longest for its hello makes room: a relay that says hello as soon as it
// is in gets in, however many silent ones come before it, and the silent ones are told why
// they were let go.
TEST_F(Serve, SilentSocketsMakeRoomForARelayThatSaysHello) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so"),
                             "max_pending_connections = 4\nhello_timeout_ms = 600000\n"));
    ServerProcess server(config_path(), dir_.path());
    std::vector<RelayClient> silent;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 16; ++i)
            silent.push_back(RelayClient::connect_tcp(server.tcp_address()));
        RelayClient honest = RelayClient::connect_tcp(server.tcp_address());
        EXPECT_NO_THROW(honest.hello("relay", kToken)) << "round " << round;
        EXPECT_EQ(json::parse(honest.sync(1)).value("batches", 1), 0);
    }
    // The first silent one was let go with the reason; a late hello of its own is not read.
    auto evicted = silent.front().read_frame(std::chrono::seconds(10));
    ASSERT_TRUE(evicted);
    EXPECT_EQ(evicted->kind, FrameKind::error);
    EXPECT_NE(parse(*evicted).value("error", "").find("the oldest makes room for a new one"),
              std::string::npos)
        << parse(*evicted).dump();
    EXPECT_TRUE(parse(*evicted).value("closing", false));
    EXPECT_THROW(silent.front().hello("late", kToken), std::runtime_error);
    // A flood is logged by count: far fewer lines than connections let go.
    const std::string log = server.log();
    size_t lines = 0;
    for (size_t at = 0; (at = log.find("made room for a newer one", at)) != std::string::npos; ++at)
        ++lines;
    EXPECT_GT(lines, 0u);
    EXPECT_LT(lines, 20u) << log;
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// The same when more silent sockets than the cap are accepted in one go after a relay
// (here all queued while the server is stopped): its hello, already waiting in the kernel,
// is read before it could be let go, and it gets in.
TEST_F(Serve, ARelayWhoseHelloIsWaitingIsReadBeforeItCouldBeLetGo) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so"),
                             "max_pending_connections = 4\nhello_timeout_ms = 600000\n"));
    ServerProcess server(config_path(), dir_.path());
    ASSERT_EQ(::kill(server.pid(), SIGSTOP), 0);
    RelayClient honest = RelayClient::connect_tcp(server.tcp_address());
    std::vector<uint8_t> hello;
    arbiter::host::wire::append_frame(hello, FrameKind::hello,
                                      json{{"relay", "relay"}, {"token", kToken}}.dump());
    honest.send_raw(hello);
    std::vector<RelayClient> silent;
    for (int i = 0; i < 20; ++i)
        silent.push_back(RelayClient::connect_tcp(server.tcp_address()));
    ASSERT_EQ(::kill(server.pid(), SIGCONT), 0);
    auto answer = honest.read_frame(std::chrono::seconds(10));
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->kind, FrameKind::welcome) << parse(*answer).dump();
    EXPECT_EQ(json::parse(honest.sync(1)).value("batches", 1), 0);
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// SIGTERM always ends the server (issue 19). A sink that cannot write (the security log on
// a full disk) used to throw out of the drain, which then never finished: the server
// ignored a second SIGTERM and only SIGKILL stopped it. Now every step of the drain is
// tried, the failure is logged and the exit status says so; and a second SIGTERM during
// a long drain ends the process at once.
TEST_F(Serve, ADrainThatFailsAStepStillEndsAndSaysSo) {
    std::string text = config_text(bundled("reference"));
    text.replace(text.find("security.jsonl"), std::string("security.jsonl").size(), "/dev/full");
    write_config(text);
    const auto records = records_of(fs::path(SAMPLES_DIR) / "sample-match.arbev");
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_unix(relay_socket().string());
    relay.hello("sample-relay", "");
    for (size_t i = 0; i + 1 < records.size(); ++i)  // all but the MatchEnd: the drain ends it
        relay.send_batch(records[i]);
    (void)relay.sync(1);
    EXPECT_EQ(server.stop(SIGTERM), 3);
    const std::string log = server.log();
    EXPECT_NE(log.find("/dev/full: cannot write the security-event log"), std::string::npos) << log;
    EXPECT_NE(log.find("with failures (logged above)"), std::string::npos) << log;
    EXPECT_NE(log.find("serve: stopped"), std::string::npos) << log;
}

TEST_F(Serve, ASecondSigtermDuringTheDrainExitsAtOnce) {
    write_config(config_text(test_plugin("slow", "arbiter-test-slow.so", "delay_us = 1000000")));
    const auto records = records_of(simulate("honest=2", 30));
    ASSERT_GT(records.size(), 40u);
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_unix(relay_socket().string());
    relay.hello("sim-relay", "");
    for (size_t i = 0; i < 40; ++i)  // forty seconds of work for the slow plugin
        relay.send_batch(records[i]);
    ::kill(server.pid(), SIGTERM);
    ASSERT_TRUE(server.wait_for_log("draining what was received"));
    EXPECT_EQ(server.stop(SIGTERM), 128 + SIGTERM);
    EXPECT_NE(server.log().find("again during the drain: exiting now"), std::string::npos)
        << server.log();
}

// The sockets have their modes from the start, never the umask's (issue 19): the relay
// socket 0600 unless serve.unix_socket_mode says otherwise, the control socket 0600.
TEST_F(Serve, SocketsAreCreatedWithTheirModesWhateverTheUmask) {
    auto mode_of = [](const fs::path& path) {
        struct stat info {};
        EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
        return info.st_mode & 07777;
    };
    // The server inherits the widest umask (the config is written before: it must not be
    // writable by others, or the server refuses it).
    auto start_with_umask_0 = [&] {
        const mode_t previous = ::umask(0);
        auto server = std::make_unique<ServerProcess>(config_path(), dir_.path());
        ::umask(previous);
        return server;
    };
    {
        write_config(config_text(test_plugin("echo", "arbiter-test-echo.so")));
        auto server = start_with_umask_0();
        EXPECT_EQ(mode_of(relay_socket()), 0600u);
        EXPECT_EQ(mode_of(control_socket()), 0600u);
        EXPECT_EQ(server->stop(SIGTERM), 0);
    }
    {
        write_config(
            config_text(test_plugin("echo", "arbiter-test-echo.so"), "unix_socket_mode = 0o660\n"));
        auto server = start_with_umask_0();
        EXPECT_EQ(mode_of(relay_socket()), 0660u);
        EXPECT_EQ(mode_of(control_socket()), 0600u);
        EXPECT_EQ(server->stop(SIGTERM), 0);
    }
}

// An ended match's players leave the server once their final assessments are sent, so
// that its memory follows the matches in play, not every match it has seen (issue 19).
TEST_F(Serve, EndedMatchesLeaveTheServerOnceTheirRelayHasTheFinalWord) {
    write_config(config_text(bundled("reference")));
    ServerProcess server(config_path(), dir_.path());
    RelayClient relay = RelayClient::connect_unix(relay_socket().string());
    relay.hello("", "");  // unnamed on the Unix socket: it may feed any relay's matches
    const auto sample = records_of(fs::path(SAMPLES_DIR) / "sample-match.arbev");
    for (const auto& record : sample)
        relay.send_batch(record);  // six players, ends
    arbiter::BatchBuilder open("other-relay", 5);
    open.add(1000, 1, 0, arbiter::build::MatchStart{.game = "g", .map = "m", .rules = "r"});
    for (uint32_t p = 1; p <= 4; ++p)
        open.add(1000, 1, p, arbiter::build::PlayerJoin{});
    relay.send_batch(open.finish());  // four players, still in play
    (void)relay.sync(1);

    const json counters = status()["counters"];
    EXPECT_EQ(counters.value("matches_ended", 0u), 1u);
    EXPECT_EQ(counters.value("open_matches", 0u), 1u);
    EXPECT_EQ(counters.value("tracked_players", 99u), 4u) << counters.dump();
    // The relay heard the ended match's final word for all six.
    EXPECT_EQ(last_assessments(relay.take_received()).size(), 6u);
    // What ctl shows now is the match in play.
    const json all =
        json::parse(arbiter::test::ctl(control_socket(), {"assessments", "--json"}, dir_.path()));
    ASSERT_TRUE(all.is_array());
    EXPECT_EQ(all.size(), 4u);
    // A duplicate of the forgotten match's batches is still refused, never a new match.
    relay.send_batch(sample[5]);
    EXPECT_EQ(json::parse(relay.sync(2)).value("refused", 0u), 1u);
}

// A relay that reads nothing of what it is sent cannot grow the server's memory (issue
// 19): past serve.max_reply_bytes the host stops reading it, and past four times that it
// is closed with the reason, while the other relays are served on.
TEST_F(Serve, ARelayThatReadsNothingIsLetGoBeforeItsRepliesGrowWithoutBound) {
    write_config(
        config_text(test_plugin("echo", "arbiter-test-echo.so"), "max_reply_bytes = 65536\n"));
    ServerProcess server(config_path(), dir_.path());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, relay_socket().c_str());
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    // Matches of 200 players that end at once: each end sends 200 final assessments back.
    std::vector<uint8_t> stream = arbiter::host::wire::stream_header();
    for (uint64_t match = 1; match <= 200; ++match) {
        arbiter::BatchBuilder builder("mute", match);
        builder.add(1000, 1, 0, arbiter::build::MatchStart{.game = "g", .map = "m", .rules = "r"});
        for (uint32_t p = 1; p <= 200; ++p)
            builder.add(1000, 1, p, arbiter::build::PlayerJoin{});
        builder.add(2000, 2, 0, arbiter::build::MatchEnd{});
        arbiter::host::wire::append_frame(stream, FrameKind::batch, builder.finish());
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (size_t sent = 0; sent < stream.size() && std::chrono::steady_clock::now() < give_up;) {
        // Written, never read.
        const ssize_t n =
            ::send(fd, stream.data() + sent, stream.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n <= 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) break;  // the host let go of us
            if (server.log().find("reads nothing of what it is sent") != std::string::npos) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
        }
        sent += static_cast<size_t>(n);
    }
    EXPECT_TRUE(server.wait_for_log("reads nothing of what it is sent")) << server.log();
    ::close(fd);
    // Another relay is served as ever.
    RelayClient other = RelayClient::connect_unix(relay_socket().string());
    EXPECT_EQ(json::parse(other.sync(1)).value("batches", 1), 0);
    EXPECT_EQ(server.stop(SIGTERM), 0);
}

// Relays are principals (issue 19): a relay with a token of its own must give it; a
// connection is held to the relay its hello named, so an intruder with the shared token
// can neither feed another relay's matches nor hear its players' assessments.
TEST_F(Serve, ARelayFeedsAndHearsItsOwnMatchesAlone) {
    write_config(config_text(test_plugin("echo", "arbiter-test-echo.so"),
                             "[serve.relays.eu-1]\ntoken = \"eu-1-token\"\n"));
    ServerProcess server(config_path(), dir_.path());
    auto position_batch = [](const std::string& relay_id, uint64_t sequence) {
        arbiter::BatchBuilder builder(relay_id, 1, sequence);
        builder.add(1000 + static_cast<int64_t>(sequence), 1 + sequence, 1,
                    arbiter::build::Position{.position = {0, 0, 0}});
        return builder.finish();
    };

    // eu-1 has a token of its own: the shared one does not stand in for it.
    RelayClient borrowed = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_THROW(borrowed.hello("eu-1", kToken), std::runtime_error);
    // The operator's log says so, rather than calling a right token wrong.
    EXPECT_TRUE(server.wait_for_log(
        "the hello names relay 'eu-1' and carries the shared token, but relay 'eu-1' has a "
        "token of its own"))
        << server.log();
    RelayClient eu = RelayClient::connect_tcp(server.tcp_address());
    ASSERT_NO_THROW(eu.hello("eu-1", "eu-1-token"));
    // A TCP hello must name its relay.
    RelayClient nameless = RelayClient::connect_tcp(server.tcp_address());
    EXPECT_THROW(nameless.hello("", kToken), std::runtime_error);

    // The intruder has the shared token, and says hello as itself...
    RelayClient intruder = RelayClient::connect_tcp(server.tcp_address());
    ASSERT_NO_THROW(intruder.hello("intruder", kToken));
    eu.send_batch(position_batch("eu-1", 0));
    (void)eu.sync(1);
    // ...then sends a batch of eu-1's match: refused, naming both.
    intruder.send_batch(position_batch("eu-1", 1));
    const json synced = json::parse(intruder.sync(2));
    EXPECT_EQ(synced.value("refused", 0), 1);
    bool named_both = false;
    for (const auto& frame : intruder.take_received())
        if (frame.kind == FrameKind::error)
            named_both =
                parse(frame)
                    .value("error", "")
                    .find("a batch of relay 'eu-1' over the connection of relay 'intruder'") !=
                std::string::npos;
    EXPECT_TRUE(named_both);
    // eu-1's stream goes on to its end, and the final assessments reach eu-1 alone.
    arbiter::BatchBuilder end("eu-1", 1, 1);
    end.add(2000, 3, 1, arbiter::build::Position{.position = {0, 0, 0}});
    end.add(2001, 3, 0, arbiter::build::MatchEnd{});
    eu.send_batch(end.finish());
    EXPECT_EQ(json::parse(eu.sync(3)).value("refused", 1), 0);
    EXPECT_EQ(last_assessments(eu.take_received()).size(), 1u);
    EXPECT_TRUE(last_assessments(intruder.take_received()).empty());
}
