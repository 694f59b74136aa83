// Where libarbiter-host.so's log lines go. The library never writes to stdout, which
// belongs to the program that embeds it: lines go to stderr, or to the callback the
// program sets (arbiter_host_set_log_callback). Logging is process-wide, like spdlog's
// registry inside the library: the level is that of the host created or reconfigured last.
#pragma once

#include <string>

#include "arbiter/arbiter_host.h"

namespace arbiter::host::embed {

// Makes the library's logger the one described above; idempotent, cheap after the first call.
void install_logger();
// NULL callback: back to stderr.
void set_log_callback(arbiter_log_callback callback, void* user_data);
// One of kLogLevelsText (config.hpp); anything else is ignored (the config checked it).
void set_log_level(const std::string& level);

}  // namespace arbiter::host::embed
