/* A shared library that exports something, but not arbiter_plugin_entry: an ordinary
 * library dropped into the plugins folder by mistake. */
#include <stdint.h>

int32_t some_other_library_function(int32_t value) {
    return value + 1;
}
