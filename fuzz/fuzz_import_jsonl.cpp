// arbiter import's JSON Lines reader on any text, skipping bad rows as --skip-bad-rows does.
#include "arbiter/tools/trace_rows.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)arbiter::tools::parse_trace_rows(arbiter::fuzz::as_text(data, size),
                                           arbiter::tools::TraceFormat::jsonl,
                                           arbiter::tools::OnBadRow::skip);
    return 0;
}
