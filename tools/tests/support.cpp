#include "support.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <gtest/gtest.h>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/ingest.hpp"

namespace arbiter::tools::test {

TempDir::TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "arbiter-tools-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data()))
        throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    path_ = buffer.data();
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> TempDir::files() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_))
        names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

std::string read_text(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_text(const std::filesystem::path& file, std::string_view text) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file.string());
}

MatchFile read_match(const std::filesystem::path& file) {
    MatchFile match;
    host::EventFileReader reader(file);
    while (auto item = reader.next()) {
        if (item->kind == host::EventFileItem::Kind::damage) {
            ADD_FAILURE() << file << ": damage at offset " << item->offset << ": " << item->problem;
            continue;
        }
        auto result = host::ingest_batch(item->payload, 16u * 1024u * 1024u);
        if (!result.ok) {
            ADD_FAILURE() << file << ": record at offset " << item->offset
                          << " refused by ingest: " << result.problem;
            continue;
        }
        match.batches.push_back(std::move(result.batch.bytes));
    }
    for (const auto& bytes : match.batches) {
        const auto* root = flatbuffers::GetRoot<fb::EventBatch>(bytes.data());
        match.roots.push_back(root);
        if (root->events())
            for (const fb::Event* event : *root->events())
                match.events.push_back(event);
    }
    return match;
}

CommandResult run_arbiter(const std::vector<std::string>& args,
                          const std::filesystem::path& work_dir) {
    CommandResult result;
    const auto out_path = work_dir / ".stdout", err_path = work_dir / ".stderr";
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        if (::chdir(work_dir.c_str()) != 0) ::_exit(127);
        int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0) ::_exit(127);
        ::dup2(out, 1);
        ::dup2(err, 2);
        std::vector<std::string> argv_strings = {ARBITER_EXE};
        argv_strings.insert(argv_strings.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& arg : argv_strings)
            argv.push_back(arg.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_text(out_path);
    result.err = read_text(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return result;
}

std::filesystem::path dev_actions_csv() {
    std::filesystem::path csv = DEV_ACTIONS_CSV;
    std::error_code ignored;
    return std::filesystem::exists(csv, ignored) ? csv : std::filesystem::path();
}

HumanRhythm test_rhythm() {
    // ARBITER_TOOLS_TEST_RHYTHM=builtin runs the tests as on a machine without ../shared.
    if (const char* forced = std::getenv("ARBITER_TOOLS_TEST_RHYTHM");
        forced && std::string(forced) == "builtin")
        return HumanRhythm::builtin();
    auto csv = dev_actions_csv();
    return csv.empty() ? HumanRhythm::builtin() : HumanRhythm::from_file(csv);
}

}  // namespace arbiter::tools::test
