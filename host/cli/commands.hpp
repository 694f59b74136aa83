// The commands of `arbiter`, one per file, and what they share.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/config.hpp"
#include "arbiter/host/host.hpp"
#include "arbiter/tools/human_rhythm.hpp"
#include "arbiter/tools/simulate.hpp"
#include "options.hpp"

namespace arbiter::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitInput = 2;
inline constexpr int kExitPartial = 3;

int run_replay(const std::vector<std::string>& args);
int run_plugins(const std::vector<std::string>& args);
int run_check_plugin(const std::vector<std::string>& args);
// Recorded matches for everyone (tools/, docs/recorded-matches.md).
int run_simulate(const std::vector<std::string>& args);
int run_import(const std::vector<std::string>& args);
int run_evaluate(const std::vector<std::string>& args);
// The false-positive soak: simulate and evaluate, a match at a time (tools/ soak.hpp).
int run_soak(const std::vector<std::string>& args);
// Population baselines for the plugins that compute them (host/src/core/baseline.cpp).
int run_baseline(const std::vector<std::string>& args);
// The live host (arbiter/host/server.hpp) and its control client.
int run_serve(const std::vector<std::string>& args);
int run_ctl(const std::vector<std::string>& args);
// A recorded match streamed to a running server, as a relay would (host/cli/send.cpp).
int run_send(const std::vector<std::string>& args);
// The reviewer's side of the store: queue, dossier, verdicts, export (host/cli/review.cpp).
int run_review(const std::vector<std::string>& args);
// A Luanti world's Arbiter mod followed live into a running server (adapters/luanti/).
int run_luanti_bridge(const std::vector<std::string>& args);
// A DDNet server's teehistorian followed live into a running server (adapters/ddnet/).
int run_ddnet_bridge(const std::vector<std::string>& args);
// `arbiter import` for osu! replays: the arguments after "import". Returns the exit status
// (0 done, 1 usage, 2 nothing written, 3 written with replays refused).
int run_osr_import(const std::vector<std::string>& args);
// True when `arbiter import` is given replays: an input ending in .osr or a folder.
bool is_osr_import(const std::vector<std::string>& args);

// Sets up logging to stderr at a level ("info", "warn", ...). An unknown level is a usage
// error, said on stderr (false): spdlog would read it as "off" and hide every error.
[[nodiscard]] bool setup_logging(const std::string& level);
// Loads a config, printing every problem to stderr; nullopt when it cannot be used.
std::optional<host::ServerConfig> load_config_or_report(const std::string& path);
bool has_enabled_plugin(const host::ServerConfig& config);
// A plugin refused at load leaves its checks out of every assessment: said again last,
// after the table, where it cannot scroll away unseen.
void warn_refused_plugins(const host::Host& host, const char* command);
// A config that enables no plugin would report every player Clear and exit 0 as if all
// were well: says so on stderr and returns true, for the commands that judge players.
bool report_if_no_plugin(const host::ServerConfig& config, const char* command);
// The one startup policy of the commands that run a host: the host with the store when the
// config has one ([store], [correlation]). Null when it cannot start ("arbiter COMMAND:
// cannot start the host: why") or, with `whole_config`, when a plugin was refused and
// [host] partial_start does not allow running without it ("arbiter COMMAND: why"): a
// command that judges players does not judge them without a check the operator named.
std::unique_ptr<host::Host> start_host(host::ServerConfig config, const char* command,
                                       bool whole_config = true);
// The human rhythm that shapes simulated honest players' inputs: "builtin", a named trace
// file, or (none named) ../shared/data/human-traces, else the built-in table, said on
// stderr. A named file that cannot be read is said on stderr: nullopt.
// What is wrong with `name` as the relay a hello names, as "--relay ..."; "" when nothing
// is. The serve protocol takes at most 64 bytes of UTF-8: said before connecting, not by
// the server's refusal.
std::string relay_name_problem(const std::string& name);

// A relay's token: the first line of `token_file`, else ARBITER_TOKEN, else none ("");
// a token on the command line would show in every process listing. nullopt when the file
// cannot be read (said on stderr).
std::optional<std::string> read_relay_token(const std::optional<std::string>& token_file,
                                            const char* command);

std::optional<tools::HumanRhythm> load_human_rhythm(const std::optional<std::string>& named,
                                                    const char* command);
// PROFILE=COUNT,... for `option` (--players of simulate, --mix of soak), into `target`; a
// mistake is named by that option.
ValueReader player_mix_reader(std::string option, std::vector<tools::PlayerMix>& target);


}  // namespace arbiter::cli
