// The relay side of a game bridge, written once for every game: connect to `arbiter serve`
// (trying again every second), say hello as the relay, send the batches a game's source
// makes, hear the assessments and errors that come back, and, when the connection fails,
// connect again and go back to the source's last saved place. A source saves its place
// with everything its batches depend on, so that what it makes again from there is the
// same batches with the same sequence numbers; the host's sequence ledger drops those it
// had ("already delivered"), so nothing is lost or counted twice.
//
// Used by `arbiter luanti-bridge` (adapters/luanti/bridge) and `arbiter ddnet-bridge`
// (adapters/ddnet/src/teehistorian_bridge.*).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace arbiter::host {
class RelayClient;
}

namespace arbiter::relay {

// Where a bridge sends and how: what `arbiter X-bridge` reads from its command line
// (parse_bridge_args), held as it is by the bridge's options and its feed.
struct Connection {
    std::string target;  // a Unix socket path (has a '/') or ADDRESS:PORT
    std::string relay;   // the relay's name in the hello ("" before the bridge's default)
    std::string token;   // the hello's token, where the server needs one
    bool once = false;   // send what is there, wait for the answers, and end
    bool json = false;   // every assessment as a JSON line on stdout
    bool quiet = false;
};

struct FeedOptions {
    std::string command;  // the command's name in messages: "luanti-bridge"
    Connection connection;
    std::chrono::milliseconds poll{50};  // how often a source with nothing new is asked again
};

struct FeedCounts {
    uint64_t batches = 0, already_delivered = 0, reconnects = 0;
};

// What a bridge reads from its game.
class FeedSource {
  public:
    virtual ~FeedSource() = default;
    // Back to the last saved place: at the start, and after the connection failed (what was
    // made since goes again). Throws std::runtime_error when the saved state is unreadable.
    virtual void restore() = 0;
    // Reads on and appends the batches made; false when the game has written nothing new.
    virtual bool next(std::vector<std::vector<uint8_t>>& batches) = 0;
    // The batches of the last next() are sent.
    virtual void sent() {}
    // Nothing new for now: a moment to save the place, when it is due.
    virtual void idle() {}
    // The feed ends (stopped, or `once` done): save the place.
    virtual void close() = 0;
    // An assessment the server sent (already printed); `before` is the player's action
    // heard before it ("" for none).
    virtual void heard(const nlohmann::json& assessment, const std::string& before) {
        (void)assessment;
        (void)before;
    }
};

class RelayFeed {
  public:
    explicit RelayFeed(FeedOptions options);
    ~RelayFeed();
    // Runs `source` into the server until `stop`, or with `once` until what the source has
    // is sent and answered. Returns 0, or 2 when the server cannot be reached (with `once`)
    // or the saved state cannot be read.
    int run(FeedSource& source, const std::atomic<bool>& stop);
    const FeedCounts& counts() const { return counts_; }
    // A line on stderr, "arbiter COMMAND: what", unless quiet.
    void report(const std::string& what) const;

  private:
    bool connect(const std::atomic<bool>& stop);
    void take_replies(FeedSource& source);
    void hear_assessment(FeedSource& source, const std::string& payload);
    void hear_error(const std::string& payload);

    FeedOptions options_;
    std::unique_ptr<host::RelayClient> client_;
    std::map<std::string, std::string> actions_;  // "match/player" -> the last action heard
    FeedCounts counts_;
};

// Writes `value` to `path` whole or not at all (a temporary file renamed over it). False,
// with the reason in `problem`, when it cannot.
bool save_json_atomically(const std::filesystem::path& path, const nlohmann::json& value,
                          std::string& problem);
// A state file saved by save_json_atomically: nothing when there is none; throws
// std::runtime_error naming the file when it is not JSON.
std::optional<nlohmann::json> load_json_state(const std::filesystem::path& path);

}  // namespace arbiter::relay
