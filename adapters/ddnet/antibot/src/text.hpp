// Text the server hands the module (player names, drop reasons) into the strings an event
// carries: read only up to a bound (the server's own buffer size), cut at the first NUL,
// and made valid UTF-8 (FlatBuffers strings must be, and ingest refuses a batch whose
// strings are not). A name is what a client chose: it can hold any bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace arbiter::ddnet::antibot {

// The text at `text` up to its NUL or `max_bytes`, whichever comes first; "" for NULL.
std::string bounded_c_string(const char* text, size_t max_bytes);

// `bytes` as host::to_valid_utf8 cleans it (U+FFFD for each byte that is not UTF-8, as the
// teehistorian and demo imports do), with every control character replaced by '?'.
std::string to_valid_utf8(std::string_view bytes);

}  // namespace arbiter::ddnet::antibot
