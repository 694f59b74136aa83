// Runs a program (no shell, so no quoting) and collects its exit status and output.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace arbiter::test {

struct CommandResult {
    int exit_status = -1;  // -1 when it did not exit normally (a signal)
    std::string out;
    std::string err;
};

// Runs argv[0] with the arguments that follow, in `work_dir`; its output goes through
// files in work_dir, which must be a folder the test owns.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::filesystem::path& work_dir);

// `text` split into lines, without their line feeds.
std::vector<std::string> lines_of(const std::string& text);

// `line` split at runs of spaces.
std::vector<std::string> words_of(const std::string& line);

}  // namespace arbiter::test
