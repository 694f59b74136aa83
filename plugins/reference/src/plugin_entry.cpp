// The one line that makes ReferenceAnalyzer a plugin: the SDK generates the C glue.
#include "reference_analyzer.hpp"

ARBITER_PLUGIN(arbiter::reference::ReferenceAnalyzer);
