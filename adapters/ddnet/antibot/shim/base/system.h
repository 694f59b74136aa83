// Stands in for DDNet's src/base/system.h, which the vendored antibot_data.h includes for
// int64_t alone.
#ifndef BASE_SYSTEM_H
#define BASE_SYSTEM_H

#include <cstdint>

#endif  // BASE_SYSTEM_H
