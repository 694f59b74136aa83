// The one line that makes KaladinAnalyzer a plugin: the SDK generates the C glue.
#include "kaladin_analyzer.hpp"

ARBITER_PLUGIN(arbiter::kaladin::KaladinAnalyzer);
