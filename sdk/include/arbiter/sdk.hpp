// Everything a plugin author includes: `#include <arbiter/sdk.hpp>`.
#pragma once

#include <arbiter/arbiter_plugin.h>
#include <arbiter/sdk/analyzer.hpp>
#include <arbiter/sdk/config.hpp>
#include <arbiter/sdk/events.hpp>
#include <arbiter/sdk/evidence.hpp>
#include <arbiter/sdk/key_order.hpp>
#include <arbiter/sdk/look_ahead.hpp>
#include <arbiter/sdk/plugin.hpp>
#include <arbiter/sdk/ring.hpp>
#include <arbiter/sdk/signals.hpp>
#include <arbiter/sdk/state.hpp>
