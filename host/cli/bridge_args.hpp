// What every game bridge (`luanti-bridge`, `ddnet-bridge`) takes on its command line, read
// once: what to follow, the server to send to, and how to speak to it. Each bridge adds
// only its own options and its check of what to follow.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "relay_feed.hpp"

namespace arbiter::cli {

struct BridgeArgs {
    std::string source;  // what the bridge follows (a world, a folder, a file)
    // The relay "" for the bridge's default; the token from --token-file or ARBITER_TOKEN,
    // "" for none.
    relay::Connection connection;
    std::map<std::string, std::string> values;  // the bridge's own options that take a value
};

// Reads `args`: --relay NAME, --token-file FILE, --once, --json, --quiet, the options named
// in `own_options` (each with a value), then exactly two positionals (what to follow, the
// server). A usage problem is said on stderr as "arbiter COMMAND: what" with `usage`, and
// `status` says how to exit (kExitUsage, or kExitInput for a token file that cannot be
// read); nullopt then. A relay name is at most 64 bytes of UTF-8, as the hello takes it.
std::optional<BridgeArgs> parse_bridge_args(const std::vector<std::string>& args,
                                            const char* command, const char* usage,
                                            const std::vector<std::string>& own_options,
                                            const char* positionals_wanted, int& status);

// SIGTERM and SIGINT set the flag this returns (the bridge stops between two lines and
// saves its place); SIGPIPE is ignored (a server gone is an error of the send, not a kill).
const std::atomic<bool>& stop_on_signals();

}  // namespace arbiter::cli
