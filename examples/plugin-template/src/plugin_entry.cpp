// The one line that makes OrderRate a plugin: the SDK generates the entry symbol and
// every C trampoline, and turns any exception into a status code and a last error.
#include "order_rate.hpp"

ARBITER_PLUGIN(order_rate::OrderRate);
