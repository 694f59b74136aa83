// The Luanti bridge's reader on any text: each line as the mod would write it, parsed and
// taken into a match, the match's batches checked as ingest checks a relay's, and the
// builder's saved state read back halfway (what a restarted bridge does).
#include <string>
#include <vector>

#include "arbiter/host/ingest.hpp"
#include "fuzz_input.hpp"
#include "lines.hpp"
#include "match_builder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text = arbiter::fuzz::as_text(data, size);
    arbiter::luanti::MatchBuilder builder("fuzz");
    std::vector<std::vector<uint8_t>> batches;
    size_t line_number = 0;
    for (size_t start = 0; start <= text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const auto parsed = arbiter::luanti::parse_line(text.substr(start, end - start));
        if (const auto* line = std::get_if<arbiter::luanti::Line>(&parsed))
            (void)builder.take(*line, batches);
        if (++line_number % 8 == 0) {
            arbiter::luanti::MatchBuilder again("fuzz");
            again.restore(builder.save());
            builder = std::move(again);
        }
        start = end + 1;
    }
    // Every batch the bridge would send is one the host takes in.
    for (const auto& batch : batches) {
        if (!arbiter::host::ingest_batch(batch, 64u << 20).ok) __builtin_trap();
    }
    return 0;
}
