// Writing matches to event files as they are produced, in bounded memory.
//
// StagedEventFile writes to a temporary file beside the destination and renames it only on
// commit(), so that a command that fails half-way never leaves a half-valid file behind.
// MatchStream cuts one match's events into batches (at a tick's end, or when a batch is
// full) and refuses an event that would break relay-time order, which ingest would refuse.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/event_file.hpp"

namespace arbiter::tools {

// A file written under a temporary name and moved into place by commit(). Destroyed
// without commit(), it removes the temporary file.
class StagedFile {
  public:
    explicit StagedFile(std::filesystem::path destination);
    ~StagedFile();
    StagedFile(const StagedFile&) = delete;
    StagedFile& operator=(const StagedFile&) = delete;

    const std::filesystem::path& temporary() const { return temporary_; }
    const std::filesystem::path& destination() const { return destination_; }
    // Renames the temporary file to the destination; throws std::runtime_error.
    void commit();

  private:
    std::filesystem::path destination_;
    std::filesystem::path temporary_;
    bool committed_ = false;
};

// An event file written under a temporary name (see StagedFile).
class StagedEventFile {
  public:
    explicit StagedEventFile(const std::filesystem::path& destination);
    void write(std::span<const uint8_t> batch);
    // Closes the file and moves it into place; throws std::runtime_error.
    void commit();
    uint64_t batches() const { return batches_; }
    uint64_t bytes() const { return bytes_; }

  private:
    StagedFile staged_;
    std::unique_ptr<host::EventFileWriter> writer_;
    uint64_t batches_ = 0;
    uint64_t bytes_ = host::kEventFileHeaderSize;
};

// One match's events into batches of at most `batch_events` events.
class MatchStream {
  public:
    MatchStream(StagedEventFile& file, std::string relay_id, uint64_t match_id,
                size_t batch_events);

    // Adds one event; throws std::logic_error when it is earlier than the event before
    // it (a bug of the caller: ingest refuses batches out of relay-time order).
    template <class Body>
    void add(int64_t t_us, uint64_t tick, uint32_t player, const Body& body) {
        check_order(t_us);
        builder_.add(t_us, tick, player, body);
        ++events_;
        if (builder_.event_count() >= batch_events_) flush();
    }
    // Ends the batch in hand, if it holds any event.
    void flush();
    uint64_t events() const { return events_; }
    int64_t last_time_us() const { return last_us_; }

  private:
    void check_order(int64_t t_us);

    StagedEventFile& file_;
    BatchBuilder builder_;
    size_t batch_events_;
    uint64_t events_ = 0;
    int64_t last_us_ = INT64_MIN;
};

// Where the truth of a match file lives by default: MATCH.truth.json for MATCH.arbev
// (the .arbev extension replaced), or the path with .truth.json appended.
std::filesystem::path default_truth_path(const std::filesystem::path& match_file);

}  // namespace arbiter::tools
