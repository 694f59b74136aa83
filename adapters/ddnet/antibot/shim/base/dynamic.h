// Stands in for DDNet's src/base/dynamic.h, which the vendored antibot_interface.h
// includes: on Linux both macros are empty in DDNet too; the module's exports are made
// visible by its own build (default visibility), not by this macro.
#ifndef BASE_DYNAMIC_H
#define BASE_DYNAMIC_H

#define DYNAMIC_EXPORT __attribute__((visibility("default")))
#define DYNAMIC_IMPORT

#endif  // BASE_DYNAMIC_H
