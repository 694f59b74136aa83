// Runs a harness over files and folders of inputs, without libFuzzer: the test suite uses
// it to replay each committed corpus (and any crash reproducers added to it) through the
// g++ build, so that a regression shows up in `ctest`, not only in a campaign.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz_input.hpp"

namespace {

int run_file(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", file.c_str());
        return 1;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    size_t inputs = 0;
    int failures = 0;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path path = argv[i];
        if (std::filesystem::is_directory(path)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(path))
                if (entry.is_regular_file()) {
                    failures += run_file(entry.path());
                    ++inputs;
                }
        } else {
            failures += run_file(path);
            ++inputs;
        }
    }
    std::printf("%zu inputs run\n", inputs);
    if (inputs == 0) {
        std::fprintf(stderr, "no inputs: an empty corpus tests nothing\n");
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
