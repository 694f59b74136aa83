// `arbiter ddnet-bridge`: a DDNet server's teehistorian followed live into `arbiter serve`
// as a relay (docs/games/ddnet.md). Given the server's teehistorian folder, it follows the
// newest file as the server writes it, and the next one when the server begins another (a
// map change, a restart); given one file, that file. Each file is a match, each tick a
// batch (teehistorian_events.hpp).
//
// Restarting loses nothing and counts nothing twice, as the Luanti bridge: at the start of
// a tick (every batch before it finished) the bridge may save its place (the file, the
// offset, the reader's and the match's state) to its state file; started again it reads
// on from there and makes the same batches, with the same sequence numbers, and the host
// drops those it had. The relay side is adapters/common/relay_feed.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "relay_feed.hpp"
#include "teehistorian_events.hpp"
#include "teehistorian_file.hpp"

namespace arbiter::ddnet {

struct DdnetBridgeOptions {
    std::filesystem::path source;  // the teehistorian folder, or one .teehistorian file
    // The relay's name defaults to "ddnet-" and the name of the server's folder; `once`
    // sends what is written, waits for the answers, and ends.
    relay::Connection connection;
    std::filesystem::path state;  // default: state_path(source)
    std::chrono::milliseconds poll{20};  // a tick is 20 ms
    std::chrono::milliseconds save_every{1000};
};

struct DdnetBridgeCounts {
    uint64_t records = 0, damaged = 0, batches = 0, already_delivered = 0;
    uint64_t files = 0;  // the files read from
    uint64_t reconnects = 0;
};

class DdnetBridge final : private relay::FeedSource {
  public:
    explicit DdnetBridge(DdnetBridgeOptions options);
    ~DdnetBridge() override;
    // Runs until `stop` or, with `once`, until what is written is sent and answered.
    // Returns 0; 2 when the server cannot be reached (with `once`) or the saved state is
    // unreadable; 3 when some of a file was damaged (reported by offset, the rest sent).
    int run(const std::atomic<bool>& stop);
    const DdnetBridgeCounts& counts() const { return counts_; }

    // Where the bridge keeps its place by default: in the folder it follows
    // (.arbiter-ddnet-bridge.json), or beside the file (FILE.arbiter-ddnet-bridge.json).
    static std::filesystem::path state_path(const std::filesystem::path& source);
    static std::string default_relay(const std::filesystem::path& source);

  private:
    // The place of a tick's start: what is saved.
    struct Place {
        std::string file;  // the file's name, "" before any
        uint64_t offset = 0;
        ThState reader;
        ThBuilderState match;
        bool operator==(const Place&) const = default;
    };

    void restore() override;
    bool next(std::vector<std::vector<uint8_t>>& batches) override;
    void sent() override;
    void idle() override;
    void close() override { save(); }

    bool follows_folder() const;
    // The newest teehistorian file of the folder (by modification time), if any.
    std::optional<std::filesystem::path> newest() const;
    static Place fresh(const std::string& file);  // the start of a file
    void open(const Place& place);
    void save();
    void take_problems();
    void report(const std::string& what) const;

    DdnetBridgeOptions options_;
    std::unique_ptr<relay::RelayFeed> feed_;
    std::unique_ptr<ThFileReader> file_;
    ThMatchBuilder builder_;
    Place boundary_;  // the last tick start reached
    Place saved_;     // the last place saved
    std::chrono::steady_clock::time_point saved_at_{};
    bool abandoned_ = false;  // the server has begun a newer file: this one is complete
    bool told_bad_header_ = false;
    std::set<std::string> followed_;               // the files read from, this run
    std::optional<std::filesystem::path> listed_;  // the newest file when last looked
    std::optional<std::chrono::steady_clock::time_point> listed_at_;
    DdnetBridgeCounts counts_;
};

}  // namespace arbiter::ddnet
