// What the tools' tests share: a temporary folder, files, running `arbiter`, and reading
// an event file back as a flat list of events.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <arbiter/events_generated.h>

#include "arbiter/tools/human_rhythm.hpp"

namespace arbiter::tools::test {

class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
    // The names of the files in the folder, sorted.
    std::vector<std::string> files() const;

  private:
    std::filesystem::path path_;
};

std::string read_text(const std::filesystem::path& file);
void write_text(const std::filesystem::path& file, std::string_view text);

// The batches of an event file, each checked by the host's ingest (a failure is a test
// failure naming the record).
struct MatchFile {
    std::vector<std::vector<uint8_t>> batches;
    std::vector<const fb::Event*> events;  // every event, in file order
    std::vector<const fb::EventBatch*> roots;
};
MatchFile read_match(const std::filesystem::path& file);

struct CommandResult {
    int exit_status = -1;
    std::string out, err;
};
// Runs `arbiter` with the arguments, in `work_dir`.
CommandResult run_arbiter(const std::vector<std::string>& args,
                          const std::filesystem::path& work_dir);

// The human traces, when ../shared is there; else an empty path.
std::filesystem::path dev_actions_csv();
// The rhythm model of the traces when they are there, else the built-in one.
HumanRhythm test_rhythm();

}  // namespace arbiter::tools::test
