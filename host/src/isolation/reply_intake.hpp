// What the host takes of an isolated plugin's reply: the runner shares its address space
// with the plugin, so nothing it says is taken on trust. Its log lines are tagged as the
// plugin's and escaped, its metrics are the plugin's own names only, and its signals are
// checked again as if the plugin had emitted them in the host; all of it within the
// plugin's bounds (plugin_bounds.hpp), exactly as for a plugin in the host's process.
#pragma once

#include <string>

#include "arbiter/host/analyzer_instance.hpp"
#include "arbiter/host/host_services.hpp"
#include "arbiter/host/plugin_bounds.hpp"
#include "isolation/messages.hpp"

namespace arbiter::host::isolation {

// The call's result as dispatch sees it; logs and metrics go to the host's log and
// `metrics` (which may be null) on the way.
CallResult take_in_reply(RunnerReply&& reply, const std::string& label, PluginBounds& bounds,
                         Metrics* metrics);

}  // namespace arbiter::host::isolation
