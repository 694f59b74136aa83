#include "wire/batch_relay.hpp"

#include <algorithm>

#include <arbiter/events_generated.h>

namespace arbiter::host {

std::optional<std::vector<uint8_t>> with_relay_id(std::span<const uint8_t> batch,
                                                  std::string_view relay_id) {
    // Read in an aligned copy: the caller's bytes may sit at any offset.
    std::vector<uint8_t> out(batch.begin(), batch.end());
    if (out.size() < sizeof(flatbuffers::uoffset_t)) return std::nullopt;
    // EventBatch hides its Table base; the field is found through the generic table.
    const auto* root = flatbuffers::GetRoot<flatbuffers::Table>(out.data());
    const flatbuffers::voffset_t field = root->GetOptionalFieldOffset(fb::EventBatch::VT_RELAY_ID);
    if (field == 0) return std::nullopt;
    const size_t slot =
        static_cast<size_t>(reinterpret_cast<const uint8_t*>(root) - out.data()) + field;

    // Re-encoding the whole batch would drop what this build's schema does not name; a
    // string at the end, and one offset changed, keep the rest byte for byte. The old id
    // stays behind unreferenced rather than zeroed: another field may share its bytes.
    out.resize((out.size() + 3) & ~size_t{3});  // a string's length is 4-byte aligned
    const size_t string_at = out.size();
    out.resize(string_at + sizeof(flatbuffers::uoffset_t) + relay_id.size() + 1, 0);
    flatbuffers::WriteScalar<flatbuffers::uoffset_t>(
        out.data() + string_at, static_cast<flatbuffers::uoffset_t>(relay_id.size()));
    std::copy(
        relay_id.begin(), relay_id.end(),
        out.begin() + static_cast<std::ptrdiff_t>(string_at + sizeof(flatbuffers::uoffset_t)));
    // Offsets point forward from where they are stored, and the string is past the root.
    flatbuffers::WriteScalar<flatbuffers::uoffset_t>(
        out.data() + slot, static_cast<flatbuffers::uoffset_t>(string_at - slot));
    return out;
}

}  // namespace arbiter::host
