// The one line that makes LuantiAnalyzer a plugin: the SDK generates the C glue.
#include "luanti_analyzer.hpp"

ARBITER_PLUGIN(arbiter::luanti::LuantiAnalyzer);
