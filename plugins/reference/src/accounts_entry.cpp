// The one line that makes AccountsAnalyzer a plugin of its own: the SDK generates the C glue.
#include "accounts_analyzer.hpp"

ARBITER_PLUGIN(arbiter::reference::AccountsAnalyzer);
