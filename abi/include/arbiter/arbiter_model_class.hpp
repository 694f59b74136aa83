// The model classes of arbiter_plugin.h (ARB_CLASS_*) as one C++ type: the class a plugin
// declares through the SDK and the one the host weighs it by (the operator may override it;
// the two-model rule counts them) are the same enum, not two that must be kept in step.
#pragma once

#include <cstdint>

#include <arbiter/arbiter_plugin.h>

namespace arbiter {

enum class ModelClass : uint32_t {
    validation = ARB_CLASS_VALIDATION,
    behavioural = ARB_CLASS_BEHAVIOURAL,
    statistical = ARB_CLASS_STATISTICAL,
};

}  // namespace arbiter
