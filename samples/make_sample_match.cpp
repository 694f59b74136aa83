// Writes samples/sample-match.arbev, the recorded match the README's main command
// replays: the events of sample_match.hpp, one batch per relay tick. A test checks that
// the committed file is exactly what this program writes.
#include <cstdio>
#include <exception>

#include "arbiter/host/event_file.hpp"
#include "sample_match.hpp"

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "sample-match.arbev";
    try {
        auto batches = arbiter::samples::encode(arbiter::samples::sample_match_events());
        arbiter::host::write_event_file(path, batches);
        std::printf("wrote %zu batches to %s\n", batches.size(), path);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
    return 0;
}
