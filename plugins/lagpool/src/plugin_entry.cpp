// The one line that makes LagpoolAnalyzer a plugin: the SDK generates the C glue.
#include "lagpool_analyzer.hpp"

ARBITER_PLUGIN(arbiter::lagpool::LagpoolAnalyzer);
