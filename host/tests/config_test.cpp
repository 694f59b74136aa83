// server_config.toml: values, defaults, and an error with file:line:column for every
// way a config can be wrong.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <flatbuffers/flexbuffers.h>

#include "arbiter/host/config.hpp"
#include "support/temp_dir.hpp"

namespace {

using arbiter::host::ConfigError;
using arbiter::host::ModelClass;
using arbiter::host::parse_config;

arbiter::host::ServerConfig parse(const std::string& text) {
    arbiter::host::ConfigLoadOptions options;
    options.bundled_plugin_dir = "/opt/arbiter/plugins";
    return parse_config(text, "server_config.toml", "/etc/arbiter", options);
}

// The problems a config yields, or an empty list.
std::vector<std::string> problems_of(const std::string& text) {
    try {
        parse(text);
    } catch (const ConfigError& error) {
        return error.problems();
    }
    return {};
}

bool mentions(const std::vector<std::string>& problems, const std::string& needle) {
    for (const auto& p : problems)
        if (p.find(needle) != std::string::npos) return true;
    return false;
}

TEST(Config, EmptyConfigGivesTheDefaults) {
    auto config = parse("");
    EXPECT_DOUBLE_EQ(config.aggregation.monitor_threshold, 0.3);
    EXPECT_DOUBLE_EQ(config.aggregation.review_threshold, 0.7);
    EXPECT_FALSE(config.aggregation.enforcement);
    EXPECT_TRUE(config.aggregation.validation_alone_reaches_review);
    EXPECT_EQ(config.aggregation.second_class_required,
              (std::vector<ModelClass>{ModelClass::behavioural, ModelClass::statistical}));
    EXPECT_TRUE(config.plugins.empty());
}

TEST(Config, ReadsEverySection) {
    auto config = parse(R"(
[host]
server_id = "eu-1"
work_dir = "work"
log_level = "debug"
max_batch_bytes = 2048

[aggregation]
monitor_threshold = 0.2
review_threshold = 0.6
restrict_threshold = 0.9
enforcement = true
validation_alone_reaches_review = false
second_class_required = ["behavioural"]
tripwires_reach_review = false

[sinks]
security_log = "events.jsonl"
report_threshold = 0.5

[plugins.reference]
library = "reference"
weight = 0.5
class = "statistical"

[plugins.private]
library = "private/anti-aim.so"
enabled = false
baseline = "/var/lib/arbiter/aim.baseline"
tripwires = true
)");
    EXPECT_EQ(config.host.server_id, "eu-1");
    EXPECT_EQ(config.host.work_dir, "/etc/arbiter/work");
    EXPECT_EQ(config.host.max_batch_bytes, 2048u);
    EXPECT_TRUE(config.aggregation.enforcement);
    EXPECT_FALSE(config.aggregation.validation_alone_reaches_review);
    EXPECT_EQ(config.aggregation.second_class_required,
              std::vector<ModelClass>{ModelClass::behavioural});
    EXPECT_EQ(config.sinks.security_log, "/etc/arbiter/events.jsonl");
    ASSERT_EQ(config.plugins.size(), 2u);
    const auto& reference = config.plugins[0];
    EXPECT_EQ(reference.name, "reference");
    EXPECT_TRUE(reference.bundled);
    EXPECT_TRUE(reference.tripwires);  // bundled plugins may raise trip-wires by default
    EXPECT_EQ(reference.library, "/opt/arbiter/plugins/arbiter-reference.so");
    EXPECT_EQ(reference.model_class, ModelClass::statistical);
    EXPECT_DOUBLE_EQ(reference.weight, 0.5);
    const auto& other = config.plugins[1];
    EXPECT_FALSE(other.bundled);
    EXPECT_TRUE(other.tripwires);
    EXPECT_FALSE(other.enabled);
    EXPECT_EQ(other.library, "/etc/arbiter/private/anti-aim.so");
    EXPECT_EQ(other.baseline, "/var/lib/arbiter/aim.baseline");
}

TEST(Config, OperatorPluginsMayNotRaiseTripwiresUnlessAllowed) {
    auto config = parse("[plugins.x]\nlibrary = \"./x.so\"\n");
    EXPECT_FALSE(config.plugins[0].tripwires);
}

// [signing] keys are minisign public keys by name; a plugin names the ones that may have
// signed it (signed_by, a name or a list), or [signing] require asks it of every plugin.
// The signature file is LIBRARY.minisig unless `signature` says otherwise.
TEST(Config, SigningKeysAndWhoMaySignAPlugin) {
    const std::string keys =
        "[signing]\nkeys = { author = \"RWTe6hBAfIk27z+5RivFGC4V8Snr4t+DSQhdPx5QmLoBpXmFc0wjTTfP\","
        " other = \"RWRlZgGKomM35SzfuKmEyKkymwNZIEOmIRxzLhdPmj9ap+Y8ayl6HVHA\" }\n";
    auto config = parse(keys +
                        "[plugins.p]\nlibrary = \"x.so\"\nsigned_by = \"author\"\n"
                        "[plugins.q]\nlibrary = \"y.so\"\nsigned_by = [\"author\", \"other\"]\n"
                        "signature = \"sigs/y.minisig\"\n[plugins.r]\nlibrary = \"z.so\"\n");
    ASSERT_EQ(config.signing.keys.size(), 2u);
    ASSERT_EQ(config.plugins.size(), 3u);
    ASSERT_EQ(config.plugins[0].signers.size(), 1u);
    EXPECT_EQ(config.plugins[0].signers[0].name, "author");
    EXPECT_EQ(config.plugins[0].signature, "/etc/arbiter/x.so.minisig");
    EXPECT_EQ(config.plugins[1].signers.size(), 2u);
    EXPECT_EQ(config.plugins[1].signature, "/etc/arbiter/sigs/y.minisig");
    EXPECT_TRUE(config.plugins[2].signers.empty()) << "nothing asks it to be signed";
    EXPECT_FALSE(config.plugins[0].makes_what(config.plugins[1]));

    auto required = parse(keys + "require = true\n[plugins.r]\nlibrary = \"z.so\"\n");
    EXPECT_EQ(required.plugins[0].signers.size(), 2u) << "any listed key";
    EXPECT_EQ(required.plugins[0].signature, "/etc/arbiter/z.so.minisig");
}

TEST(Config, SigningMistakesAreEachNamed) {
    const std::string key = "\"RWTe6hBAfIk27z+5RivFGC4V8Snr4t+DSQhdPx5QmLoBpXmFc0wjTTfP\"";
    EXPECT_TRUE(mentions(problems_of("[signing]\nkeys = { a = \"RWTe\" }\n"),
                         "2:14: signing.keys.a: expected a minisign public key"));
    EXPECT_TRUE(mentions(problems_of("[signing]\nkeys = { a = 5 }\n"),
                         "signing.keys.a: expected a minisign public key (\"RW...\"), got an integer"));
    EXPECT_TRUE(mentions(problems_of("[signing]\nrequire = true\n"),
                         "signing: require is true, but [signing] keys lists no key"));
    EXPECT_TRUE(mentions(problems_of("[signing]\nkeys = { a = " + key +
                                     " }\n[plugins.p]\nlibrary = \"x.so\"\nsigned_by = \"b\"\n"),
                         "plugins.p.signed_by: no key 'b' in [signing] keys (it lists a)"));
    EXPECT_TRUE(mentions(problems_of("[plugins.p]\nlibrary = \"x.so\"\nsigned_by = \"b\"\n"),
                         "no key 'b' in [signing] keys (it lists none)"));
    EXPECT_TRUE(mentions(problems_of("[plugins.p]\nlibrary = \"x.so\"\nsigned_by = 3\n"),
                         "plugins.p.signed_by: expected a key's name or an array of them"));
    EXPECT_TRUE(mentions(problems_of("[plugins.p]\nlibrary = \"x.so\"\nsigned_by = [3]\n"),
                         "plugins.p.signed_by: expected the names of [signing] keys"));
    EXPECT_TRUE(mentions(
        problems_of("[plugins.p]\nlibrary = \"x.so\"\nsignature = \"x.minisig\"\n"),
        "plugins.p.signature: a signature file, but no key to check it with"));
    EXPECT_TRUE(mentions(problems_of("[signing]\nkeyz = {}\n"), "unknown key 'signing.keyz'"));
}

// A pinned hash is 64 hexadecimal digits, in either case (sha256sum prints lower case).
TEST(Config, APluginsPinnedHashIsSixtyFourHexDigits) {
    const std::string upper(64, 'A');
    auto config = parse("[plugins.p]\nlibrary = \"x.so\"\nsha256 = \"" + upper + "\"\n");
    EXPECT_EQ(config.plugins[0].sha256, std::string(64, 'a'));
    for (const std::string& bad :
         {std::string("abc"), std::string(63, 'a'), std::string(64, 'g'), std::string(65, 'a')}) {
        const auto problems =
            problems_of("[plugins.p]\nlibrary = \"x.so\"\nsha256 = \"" + bad + "\"\n");
        EXPECT_TRUE(mentions(
            problems,
            "3:10: plugins.p.sha256: expected the library's SHA-256: 64 hexadecimal digits"))
            << bad;
    }
    EXPECT_TRUE(
        mentions(problems_of("[plugins.p]\nlibrary = \"x.so\"\nsha256 = 5\n"), "plugins.p.sha256"));
}

TEST(Config, PluginTableBecomesAFlexBuffersMapWithPositions) {
    auto config = parse(R"([plugins.reference]
library = "reference"
[plugins.reference.config]
max_speed = 25
ratio = 1.5
strict = true
name = "arena"
tiers = ["gold", 3]
when = 2026-11-21T10:00:00Z
[plugins.reference.config.weapons.rifle]
range = 300.0
)");
    const auto& plugin = config.plugins[0];
    auto root = flexbuffers::GetRoot(plugin.config.data(), plugin.config.size()).AsMap();
    EXPECT_TRUE(root["max_speed"].IsInt());
    EXPECT_EQ(root["max_speed"].AsInt64(), 25);
    EXPECT_TRUE(root["ratio"].IsFloat());
    EXPECT_TRUE(root["strict"].AsBool());
    EXPECT_EQ(root["name"].AsString().str(), "arena");
    EXPECT_EQ(root["tiers"].AsVector().size(), 2u);
    EXPECT_TRUE(root["when"].IsString());
    EXPECT_DOUBLE_EQ(root["weapons"].AsMap()["rifle"].AsMap()["range"].AsDouble(), 300.0);
    // The host can point at a key the plugin complains about, or at its nearest parent.
    EXPECT_EQ(plugin.locate("max_speed").str(), "server_config.toml:4:1");
    EXPECT_EQ(plugin.locate("weapons.rifle.range").str(), "server_config.toml:11:1");
    EXPECT_EQ(plugin.locate("weapons.rifle.unknown").line, 10u);
    EXPECT_EQ(plugin.locate("tiers[1]").line, 8u);
    EXPECT_EQ(plugin.locate("no.such.key").str(), plugin.position.str());
}

TEST(Config, SyntaxErrorGivesFileLineColumn) {
    auto problems = problems_of("[aggregation]\nreview_threshold = = 0.7\n");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].rfind("server_config.toml:2:", 0), 0u) << problems[0];
}

// Issue 47: a missing closing quote came out as toml++'s "unescaped control characters
// other than TAB (U+0009) are explicitly prohibited" (the line feed) or "encountered
// end-of-file". It is named as what it is, still at the position toml++ stopped.
TEST(Config, AStringWithoutItsClosingQuoteIsNamedAsSuch) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"[host]\nserver_id = \"abc\nlog_level = \"info\"\n",
         "server_config.toml:2:17: the string that begins at column 13 is not closed: its "
         "closing \" is missing before the end of the line"},
        {"[host]\nserver_id = \"abc\r\n",
         "server_config.toml:2:17: the string that begins at "
         "column 13 is not closed"},
        {"[host]\nserver_id = \"abc",
         "server_config.toml:2:17: the string that begins at column "
         "13 is not closed: its closing \" is missing before the "
         "end of the file"},
        {"[host]\nserver_id = 'abc\n",
         "server_config.toml:2:17: the string that begins at column "
         "13 is not closed: its closing ' is missing"},
        {"[host]\nserver_id = \"\"\"abc\n",
         "the multi-line string that begins at line 2, column "
         "13 is not closed: its closing \"\"\" is missing "
         "before the end of the file"},
        // A Windows path: the last quote is escaped, part of the string.
        {"[plugins.x]\nlibrary = \"C:\\\\plugins\\\"\n",
         "server_config.toml:2:25: the string that begins at column 11 is not closed: its "
         "closing \" is missing before the end of the line (the \\\" at column 23 is an "
         "escaped quote"},
        // In a key: a table header's quoted name.
        {"[plugins.\"x]\nlibrary = \"reference\"\n",
         "server_config.toml:1:13: the string that begins at column 10 is not closed"},
    };
    for (const auto& [text, expected] : cases) {
        const auto problems = problems_of(text);
        ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(text);
        EXPECT_NE(problems[0].find(expected), std::string::npos)
            << ::testing::PrintToString(text) << "\n"
            << problems[0];
        EXPECT_EQ(problems[0].find("control character"), std::string::npos) << problems[0];
    }
    // A string that is closed keeps toml++'s own word for what is wrong in it.
    const auto control = problems_of(
        "[host]\nserver_id = \"a\x01"
        "b\"\n");
    ASSERT_EQ(control.size(), 1u);
    EXPECT_NE(control[0].find("server_config.toml:2:15: "), std::string::npos) << control[0];
    EXPECT_EQ(control[0].find("not closed"), std::string::npos) << control[0];
}

TEST(Config, WrongTypeNamesKeyAndPosition) {
    auto problems = problems_of("[aggregation]\nreview_threshold = \"high\"\n");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(
        problems[0],
        "server_config.toml:2:20: aggregation.review_threshold: expected a number, got a string");
}

TEST(Config, OutOfRangeValuesAreRefused) {
    auto problems = problems_of(
        "[aggregation]\nmonitor_threshold = 1.5\n[plugins.a]\nlibrary = \"a\"\nweight = -1\n");
    EXPECT_TRUE(mentions(problems,
                         "server_config.toml:2:21: aggregation.monitor_threshold: expected a "
                         "number from 0 to 1, got 1.5"));
    EXPECT_TRUE(mentions(problems, "plugins.a.weight: expected a number from 0 to 100, got -1"));
    EXPECT_TRUE(mentions(problems_of("[plugins.a]\nlibrary = \"a\"\ndeadline_ms = 0\n"),
                         "plugins.a.deadline_ms: expected an integer from 1 to 600000, got 0"));
    EXPECT_EQ(parse("[plugins.a]\nlibrary = \"a\"\ndeadline_ms = 250\n").plugins[0].deadline_ms,
              250u);
    EXPECT_EQ(parse("[plugins.a]\nlibrary = \"a\"\n").plugins[0].deadline_ms, 1000u);
}

TEST(Config, ThreadsAreReadWithTheirLimitsAndLeftUnsetByDefault) {
    EXPECT_FALSE(parse("").host.threads.has_value());
    EXPECT_EQ(parse("[host]\nthreads = 0\n").host.threads, 0u);
    EXPECT_EQ(parse("[host]\nthreads = 7\n").host.threads, 7u);
    EXPECT_TRUE(mentions(problems_of("[host]\nthreads = -1\n"),
                         "host.threads: expected an integer from 0 to 256, got -1"));
    EXPECT_TRUE(mentions(problems_of("[host]\nthreads = 9223372036854775807\n"),
                         "host.threads: expected an integer from 0 to 256"));
    EXPECT_TRUE(mentions(problems_of("[host]\nthreads = \"4\"\n"),
                         "host.threads: expected an integer, got a string"));
    EXPECT_GE(arbiter::host::HostSettings::default_threads(), 1u);
}

TEST(Config, IsolationIsReadWithItsLimitsAndRefusedWhereItDoesNotApply) {
    const auto isolated = parse(
        "[host]\nplugin_runner = \"bin/runner\"\n[plugins.a]\nlibrary = \"a\"\nisolation = "
        "\"process\"\nmemory_mb = 512\ncpu_seconds = 60\ncheckpoint_batches = 10\n"
        "checkpoint_seconds = 5\nmax_restarts = 0\nrestart_window_s = 30\n");
    const auto& a = isolated.plugins[0].isolation;
    EXPECT_TRUE(a.process);
    EXPECT_EQ(a.memory_mb, 512u);
    EXPECT_EQ(a.cpu_seconds, 60u);
    EXPECT_EQ(a.checkpoint_batches, 10u);
    EXPECT_EQ(a.checkpoint_seconds, 5u);
    EXPECT_EQ(a.max_restarts, 0u);
    EXPECT_EQ(a.restart_window_s, 30u);
    EXPECT_TRUE(isolated.host.plugin_runner.ends_with("bin/runner"));
    const auto defaults = parse("[plugins.a]\nlibrary = \"a\"\n").plugins[0].isolation;
    EXPECT_FALSE(defaults.process);
    EXPECT_EQ(defaults.memory_mb, 1024u);
    EXPECT_EQ(defaults.max_restarts, 3u);

    EXPECT_TRUE(mentions(problems_of("[plugins.a]\nlibrary = \"a\"\nisolation = \"sandbox\"\n"),
                         "plugins.a.isolation: expected \"none\" (in the host's process) or "
                         "\"process\" (in a confined child process), got \"sandbox\""));
    EXPECT_TRUE(mentions(problems_of("[plugins.a]\nlibrary = \"a\"\nisolation = true\n"),
                         "plugins.a.isolation: expected a string, got a boolean"));
    EXPECT_TRUE(mentions(problems_of("[plugins.a]\nlibrary = \"a\"\nmemory_mb = 512\n"),
                         "plugins.a.memory_mb: applies to an isolated plugin only"));
    EXPECT_TRUE(mentions(
        problems_of("[plugins.a]\nlibrary = \"a\"\nisolation = \"process\"\nmemory_mb = 1\n"),
        "plugins.a.memory_mb: expected an integer from 64 to 1048576, got 1"));
    EXPECT_TRUE(mentions(problems_of("[plugins.a]\nlibrary = \"a\"\nisolation = "
                                     "\"process\"\ncheckpoint_batches = -5\n"),
                         "plugins.a.checkpoint_batches: expected an integer from 1 to"));
    // A change of isolation makes another instance: a reload, not a reweight.
    auto other = isolated.plugins[0];
    other.isolation.memory_mb = 256;
    EXPECT_FALSE(isolated.plugins[0].makes_what(other));
}

TEST(Config, UnknownKeysAreReportedEverywhere) {
    auto problems = problems_of(R"(
[agregation]
[host]
server = "x"
[plugins.a]
library = "a"
wieght = 2
)");
    EXPECT_TRUE(mentions(problems, "server_config.toml:2:2: unknown key 'agregation'"));
    EXPECT_TRUE(mentions(problems, "server_config.toml:4:1: unknown key 'host.server'"));
    EXPECT_TRUE(mentions(problems, "server_config.toml:7:1: unknown key 'plugins.a.wieght'"));
}

TEST(Config, EveryProblemIsReportedAtOnce) {
    auto problems = problems_of(
        "[aggregation]\nmonitor_threshold = 2\nreview_threshold = \"x\"\nenforcement = 1\n");
    EXPECT_EQ(problems.size(), 3u);
}

TEST(Config, ThresholdsMustBeOrdered) {
    auto problems = problems_of("[aggregation]\nmonitor_threshold = 0.8\nreview_threshold = 0.5\n");
    EXPECT_TRUE(mentions(problems, "monitor_threshold must not exceed review_threshold"));
}

TEST(Config, PluginProblems) {
    EXPECT_TRUE(
        mentions(problems_of("[plugins.a]\nweight = 1\n"), "plugins.a: 'library' is required"));
    EXPECT_TRUE(
        mentions(problems_of("[plugins]\na = 3\n"), "plugins.a: expected a table, got an integer"));
    EXPECT_TRUE(mentions(problems_of("[plugins.Bad_Name]\nlibrary = \"x\"\n"), "lower-case"));
    EXPECT_TRUE(mentions(problems_of("[plugins.host]\nlibrary = \"x\"\n"),
                         "plugins.host: 'host' is reserved for the host's own metrics"));
    EXPECT_TRUE(mentions(problems_of("[plugins.a]\nlibrary = \"a\"\nclass = \"psychic\"\n"),
                         "expected \"validation\", \"behavioural\" or \"statistical\""));
    EXPECT_TRUE(mentions(problems_of("[aggregation]\nsecond_class_required = [\"nope\"]\n"),
                         "aggregation.second_class_required"));
    EXPECT_TRUE(mentions(problems_of("[host]\nlog_level = \"loud\"\n"), "expected one of trace"));
}

// Why load_config refused `file`, or "" when it loaded it.
std::string refusal_of(const std::filesystem::path& file) {
    try {
        arbiter::host::load_config(file);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

TEST(Config, AFileFarLargerThanAnyConfigIsRefusedUnread) {
    const std::string zero = refusal_of("/dev/zero");
    EXPECT_NE(zero.find("config file /dev/zero: not a regular file"), std::string::npos)
        << (zero.empty() ? "/dev/zero was read as a config" : zero);
    const arbiter::test::TempDir dir;  // mode 0700: the trust checks see only what the test sets
    const auto big = dir / "server_config.toml";
    std::ofstream(big) << "# " << std::string(17u << 20, 'x') << "\n";
    const std::string too_big = refusal_of(big);
    EXPECT_NE(too_big.find("over the 16777216 bytes a config file may have"), std::string::npos)
        << (too_big.empty() ? "a 17 MiB config was read" : too_big);
}

// Whoever may write the config decides which libraries the host loads.
TEST(Config, AConfigOthersMayWriteIsRefusedWithTheReason) {
    using std::filesystem::perm_options;
    using std::filesystem::perms;
    const arbiter::test::TempDir dir;
    const auto file = dir / "server_config.toml";
    std::ofstream(file) << "[host]\nserver_id = \"a\"\n";
    EXPECT_EQ(arbiter::host::load_config(file).host.server_id, "a");
    std::filesystem::permissions(file, perms::others_write, perm_options::add);
    const std::string writable = refusal_of(file);
    EXPECT_NE(writable.find("others may write it (mode 0646)"), std::string::npos)
        << (writable.empty() ? "a world-writable config was read" : writable);
    std::filesystem::permissions(file, perms::others_write, perm_options::remove);
    std::filesystem::permissions(dir.path(), perms::others_write, perm_options::add);
    const std::string in_writable = refusal_of(file);
    EXPECT_NE(in_writable.find("others may write its folder"), std::string::npos)
        << (in_writable.empty() ? "a config in a world-writable folder was read" : in_writable);
}

TEST(Config, MissingFileIsAClearError) {
    EXPECT_NE(
        refusal_of("/nonexistent/server_config.toml")
            .find("config file /nonexistent/server_config.toml: cannot read it: No such file"),
        std::string::npos);
}

TEST(Config, LoadResolvesPathsAgainstTheFilesFolder) {
    auto dir = std::filesystem::temp_directory_path() / "arbiter-config-test";
    std::filesystem::create_directories(dir);
    {
        std::ofstream out(dir / "server_config.toml");
        out << "[plugins.p]\nlibrary = \"libs/p.so\"\n";
    }
    auto config = arbiter::host::load_config(dir / "server_config.toml");
    EXPECT_EQ(config.plugins[0].library, dir / "libs" / "p.so");
    std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

TEST(Config, ServeSettingsResolvePathsAgainstTheConfigFolder) {
    auto config = parse(
        "[serve]\nunix_socket = \"run/relays.sock\"\ncontrol_socket = "
        "\"/run/arbiter/control.sock\"\n"
        "tcp_listen = \"127.0.0.1:7878\"\ntoken_file = \"token\"\nmax_queued_bytes = 2097152\n"
        "watch = false\nidle_match_end_s = 0\n");
    EXPECT_EQ(config.serve.unix_socket, "/etc/arbiter/run/relays.sock");
    EXPECT_EQ(config.serve.control_socket, "/run/arbiter/control.sock");
    EXPECT_EQ(config.serve.tcp_listen, "127.0.0.1:7878");
    EXPECT_EQ(config.serve.token_file, "/etc/arbiter/token");
    EXPECT_EQ(config.serve.max_queued_bytes, 2097152u);
    EXPECT_FALSE(config.serve.watch);
    EXPECT_EQ(config.serve.idle_match_end_s, 0u);
    EXPECT_FALSE(config.serve.tcp_allow_remote);  // loopback unless the operator says otherwise
}

TEST(Config, ServeOverTcpNeedsAToken) {
    auto problems = problems_of("[serve]\ntcp_listen = \"127.0.0.1:7878\"\n");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_TRUE(mentions(
        problems, "server_config.toml:2:14: serve.tcp_listen: relays over TCP must give a token"))
        << problems[0];
}

TEST(Config, ServeMistakesAreNamedByKey) {
    auto problems = problems_of(
        "[serve]\ntcp_listen = \"7878\"\ntoken = \"a\"\ntoken_file = \"b\"\nmax_queued_bytes = 10\n"
        "unix_sockett = \"x\"\nunix_socket = \"/" +
        std::string(120, 'a') + "\"\n");
    EXPECT_TRUE(mentions(problems, "serve.tcp_listen: expected \"address:port\""));
    EXPECT_TRUE(mentions(problems, "give token or token_file, not both"));
    EXPECT_TRUE(mentions(problems, "serve.max_queued_bytes"));
    EXPECT_TRUE(
        mentions(problems, "unknown key 'serve.unix_sockett' (did you mean 'unix_socket'?)"));
    EXPECT_TRUE(
        mentions(problems_of("[serve]\nunix_socket_mode = 0o1777\n"), "serve.unix_socket_mode"));
    EXPECT_TRUE(mentions(problems_of("[serve]\nmetrics_listen = \"9464\"\n"),
                         "serve.metrics_listen: expected \"address:port\""));
    EXPECT_TRUE(
        mentions(problems, "serve.unix_socket: a Unix socket path can be at most 107 bytes"));
}

TEST(Config, TheReviewPageNeedsAnAddressATokenFileAndAStore) {
    EXPECT_TRUE(mentions(problems_of("[serve]\nreview_listen = \"8088\"\n"
                                     "review_token_file = \"t\"\n[store]\npath = \"a.db\"\n"),
                         "serve.review_listen: expected \"address:port\""));
    EXPECT_TRUE(mentions(
        problems_of("[serve]\nreview_listen = \"127.0.0.1:8088\"\n[store]\npath = \"a.db\"\n"),
        "serve.review_listen: the review page needs a login token"));
    EXPECT_TRUE(mentions(problems_of("[serve]\nreview_listen = \"127.0.0.1:8088\"\n"
                                     "review_token_file = \"t\"\n"),
                         "serve.review_listen: the review page works from the store"));
    EXPECT_TRUE(mentions(problems_of("[serve]\nreview_allow_remote = \"yes\"\n"),
                         "serve.review_allow_remote"));
}

}  // namespace

// FlexBuffers keys end at a NUL: on b9b94b3 this key reached the plugin as max_speed.
TEST(Config, APluginKeyWithAnEscapedNulIsRefusedNotShortened) {
    const auto problems = problems_of(
        "[plugins.reference]\nlibrary = \"reference\"\n[plugins.reference.config]\n"
        "\"max_speed\\u0000junk\" = 1.0\n");
    ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
    EXPECT_NE(problems[0].find("server_config.toml:4:1: max_speed\\x00junk: a key in a plugin's "
                               "table may not contain a NUL"),
              std::string::npos)
        << problems[0];
}

// toml++ 3.3 reaches __builtin_unreachable on these (upstream issues 190 and 295). Each
// is refused with its position before toml++ reads it; on b9b94b3 they were undefined
// behaviour (the asan preset's UBSan stops at the first).
TEST(Config, TextThatWouldCrashTomlPlusPlusIsRefusedWithItsPosition) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"s = \"\"\"\\\n\xc2\xa7\"\"\"\n",
         "server_config.toml:2:1: a non-ASCII character first "
         "after a line-ending backslash"},
        {"s = \"\"\"\\   \n  \n   \xd0\x96 text\"\"\"\n", "server_config.toml:3:4:"},
        {"\xcc\xaa", "server_config.toml:1:1: a non-ASCII character outside a string"},
        {"[host]\nserver_id = \"a\"\xc3\xa9\n", "server_config.toml:2:16: a non-ASCII"},
        {"s = \"\"\"\\\xc3\xa9\"\"\"", "server_config.toml:1:9: a backslash before a non-ASCII"},
        {"x = 1\n\xff = 2\n", "server_config.toml:2:1: byte 0xff is not UTF-8"},
    };
    for (const auto& [text, expected] : cases) {
        const auto problems = problems_of(text);
        ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(text);
        EXPECT_NE(problems[0].find(expected), std::string::npos) << problems[0];
    }
}

// Where valid TOML holds non-ASCII text (strings, quoted keys, comments, multi-line
// strings away from a line-ending backslash) it is read as before.
TEST(Config, NonAsciiTextInStringsKeysAndCommentsIsRead) {
    const auto config = parse(
        "# Serveur de l'été, Ж, ✓\n[host]\nserver_id = \"café-Ж-✓\"\n"
        "[plugins.reference]\nlibrary = \"reference\"\n[plugins.reference.config]\n"
        "\"clé\" = 1\nnote = '''été\n§ \\ ok'''\nmore = \"\"\"Ж\\n\\\n  x§\"\"\"\n");
    EXPECT_EQ(config.host.server_id, "café-Ж-✓");
    auto root =
        flexbuffers::GetRoot(config.plugins[0].config.data(), config.plugins[0].config.size())
            .AsMap();
    EXPECT_EQ(root["clé"].AsInt64(), 1);
    EXPECT_EQ(root["note"].AsString().str(), "été\n§ \\ ok");
    EXPECT_EQ(root["more"].AsString().str(), "Ж\nx§");
}
