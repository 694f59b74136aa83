#include "snapshot.hpp"

#include <array>
#include <unordered_set>

namespace arbiter::ddnet {

namespace {

// Bytes of a snapshot's header (data size, item count) and of an item's key.
constexpr size_t kHeaderBytes = 8;
constexpr size_t kKeyBytes = 4;

int32_t make_key(int32_t type, int32_t id) {
    return static_cast<int32_t>((static_cast<uint32_t>(type) << 16) | static_cast<uint32_t>(id));
}

}  // namespace

const SnapItem* Snapshot::find_key(int32_t key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second];
}

const SnapItem* Snapshot::find(int32_t type, int32_t id) const {
    return find_key(make_key(type, id));
}

bool Snapshot::add(SnapItem item) {
    if (items_.size() >= kMaxSnapshotItems) return false;
    if (item.type < 0 || item.type > kMaxItemType || item.id < 0 || item.id > kMaxItemId)
        return false;
    const size_t grows = 4 + kKeyBytes + item.data.size() * 4;  // its offset, key and data
    if (bytes() + grows > kMaxSnapshotBytes) return false;
    if (!index_.emplace(item.key(), items_.size()).second) return false;
    data_bytes_ += kKeyBytes + item.data.size() * 4;
    items_.push_back(std::move(item));
    return true;
}

size_t Snapshot::bytes() const {
    return kHeaderBytes + items_.size() * 4 + data_bytes_;
}

std::variant<Snapshot, std::string> parse_snapshot(std::span<const int32_t> ints) {
    if (ints.size() < 2) return std::string("snapshot shorter than its header");
    const int64_t data_size = ints[0];
    const int64_t count = ints[1];
    if (count < 0 || count > static_cast<int64_t>(kMaxSnapshotItems))
        return "snapshot of " + std::to_string(count) + " items (at most 1024)";
    const int64_t actual = static_cast<int64_t>(ints.size()) * 4;
    if (data_size < 0 || actual > static_cast<int64_t>(kMaxSnapshotBytes) ||
        actual != static_cast<int64_t>(kHeaderBytes) + count * 4 + data_size)
        return "snapshot of " + std::to_string(actual) + " bytes says " + std::to_string(count) +
               " items and " + std::to_string(data_size) + " bytes of data";
    const std::span<const int32_t> offsets = ints.subspan(2, static_cast<size_t>(count));
    const std::span<const int32_t> data = ints.subspan(2 + static_cast<size_t>(count));
    Snapshot snapshot;
    for (size_t i = 0; i < offsets.size(); ++i) {
        const int64_t start = offsets[i];
        const int64_t end = i + 1 < offsets.size() ? offsets[i + 1] : data_size;
        if (start < 0 || start % 4 != 0 || end - start < static_cast<int64_t>(kKeyBytes) ||
            end > data_size || end % 4 != 0)
            return "snapshot item " + std::to_string(i) + " at bad offset " + std::to_string(start);
        const auto first = static_cast<size_t>(start / 4);
        const auto last = static_cast<size_t>(end / 4);
        const int32_t key = data[first];
        SnapItem item;
        item.type = key >> 16;
        item.id = key & 0xffff;
        item.data.assign(data.begin() + static_cast<ptrdiff_t>(first + 1),
                         data.begin() + static_cast<ptrdiff_t>(last));
        if (!snapshot.add(std::move(item)))
            return "snapshot item " + std::to_string(i) + " has a bad or repeated key " +
                   std::to_string(key);
    }
    return snapshot;
}

std::vector<int32_t> serialize_snapshot(const Snapshot& snapshot) {
    std::vector<int32_t> out;
    const auto& items = snapshot.items();
    std::vector<int32_t> data;
    std::vector<int32_t> offsets;
    for (const SnapItem& item : items) {
        offsets.push_back(static_cast<int32_t>(data.size() * 4));
        data.push_back(item.key());
        data.insert(data.end(), item.data.begin(), item.data.end());
    }
    out.push_back(static_cast<int32_t>(data.size() * 4));
    out.push_back(static_cast<int32_t>(items.size()));
    out.insert(out.end(), offsets.begin(), offsets.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

int32_t static_item_size(int32_t type) {
    // Integers per item of the 0.6 protocol's object types, in the order of DDNet's
    // datasrc/network.py (type 0 is the UUID type map, whose size every delta carries):
    // PlayerInput, Projectile, Laser, Pickup, Flag, GameInfo, GameData, CharacterCore,
    // Character, PlayerInfo, ClientInfo, SpectatorInfo, then the events Common,
    // Explosion, Spawn, HammerHit, Death, SoundGlobal, SoundWorld, DamageInd. A reader
    // with another table misreads every delta, so the demo tests check real demos.
    static constexpr std::array<int32_t, 21> kSizes = {0,  10, 6, 5, 4, 3, 8, 4, 15, 22, 5,
                                                       17, 3,  2, 2, 2, 2, 3, 3, 3,  3};
    if (type < 0 || type >= static_cast<int32_t>(kSizes.size())) return 0;
    return kSizes[static_cast<size_t>(type)];
}

std::variant<Snapshot, std::string> apply_delta(const Snapshot& from,
                                                std::span<const int32_t> delta) {
    if (delta.size() < 3) return std::string("delta shorter than its header");
    const int64_t deleted = delta[0];
    const int64_t updated = delta[1];
    if (deleted < 0 || updated < 0) return std::string("delta with a negative count");
    size_t pos = 3;
    if (deleted > static_cast<int64_t>(delta.size() - pos))
        return "delta deletes " + std::to_string(deleted) + " items past its end";
    std::unordered_set<int32_t> gone(delta.begin() + 3,
                                     delta.begin() + 3 + static_cast<ptrdiff_t>(deleted));
    pos += static_cast<size_t>(deleted);

    Snapshot to;
    for (const SnapItem& item : from.items())
        if (!gone.contains(item.key()) && !to.add(item))
            return std::string("delta makes a snapshot past the format's limits");
    Snapshot result;
    // Build the result in order: kept items, then updated or new ones in delta order.
    std::unordered_map<int32_t, SnapItem> changed;
    std::vector<int32_t> order;
    for (int64_t n = 0; n < updated; ++n) {
        if (delta.size() - pos < 2) return std::string("delta ends inside an item header");
        const int32_t type = delta[pos++];
        const int32_t id = delta[pos++];
        if (type < 0 || type > kMaxItemType) return "delta item of type " + std::to_string(type);
        if (id < 0 || id > kMaxItemId) return "delta item of id " + std::to_string(id);
        int64_t size = static_item_size(type);
        if (size == 0) {
            if (pos >= delta.size()) return std::string("delta ends before an item size");
            size = delta[pos++];
            if (size < 0) return "delta item of size " + std::to_string(size);
        }
        if (size > static_cast<int64_t>(delta.size() - pos))
            return "delta item of " + std::to_string(size) + " integers past its end";
        const std::span<const int32_t> values = delta.subspan(pos, static_cast<size_t>(size));
        pos += static_cast<size_t>(size);
        const int32_t key = make_key(type, id);
        const SnapItem* before = from.find_key(key);
        auto it = changed.find(key);
        if (it == changed.end()) {
            const SnapItem* kept = to.find_key(key);
            if (kept && kept->data.size() != values.size())
                return "delta changes the size of item " + std::to_string(type) + ":" +
                       std::to_string(id);
            it = changed.emplace(key, SnapItem{type, id, {}}).first;
            order.push_back(key);
        } else if (it->second.data.size() != values.size()) {
            return "delta changes the size of item " + std::to_string(type) + ":" +
                   std::to_string(id);
        }
        SnapItem& out = it->second;
        out.data.assign(values.begin(), values.end());
        if (before) {
            if (before->data.size() != values.size())
                return "delta changes the size of item " + std::to_string(type) + ":" +
                       std::to_string(id);
            // Differences wrap around, as the format computes them in unsigned arithmetic.
            for (size_t i = 0; i < values.size(); ++i)
                out.data[i] = static_cast<int32_t>(static_cast<uint32_t>(before->data[i]) +
                                                   static_cast<uint32_t>(values[i]));
        }
    }
    for (const SnapItem& item : to.items()) {
        auto it = changed.find(item.key());
        if (!result.add(it == changed.end() ? item : it->second))
            return std::string("delta makes a snapshot past the format's limits");
    }
    for (int32_t key : order) {
        if (to.find_key(key)) continue;  // already placed where it was
        if (!result.add(std::move(changed[key])))
            return std::string("delta makes a snapshot past the format's limits");
    }
    return result;
}

std::vector<int32_t> make_delta(const Snapshot& from, const Snapshot& to) {
    std::vector<int32_t> deleted;
    for (const SnapItem& item : from.items())
        if (!to.find_key(item.key())) deleted.push_back(item.key());
    std::vector<int32_t> updates;
    int32_t count = 0;
    for (const SnapItem& item : to.items()) {
        const SnapItem* before = from.find_key(item.key());
        std::vector<int32_t> values = item.data;
        if (before && before->data.size() == item.data.size()) {
            bool any = false;
            for (size_t i = 0; i < values.size(); ++i) {
                values[i] = static_cast<int32_t>(static_cast<uint32_t>(item.data[i]) -
                                                 static_cast<uint32_t>(before->data[i]));
                any = any || values[i] != 0;
            }
            if (!any) continue;
        }
        updates.push_back(item.type);
        updates.push_back(item.id);
        if (static_item_size(item.type) == 0)
            updates.push_back(static_cast<int32_t>(item.data.size()));
        updates.insert(updates.end(), values.begin(), values.end());
        ++count;
    }
    std::vector<int32_t> out = {static_cast<int32_t>(deleted.size()), count, 0};
    out.insert(out.end(), deleted.begin(), deleted.end());
    out.insert(out.end(), updates.begin(), updates.end());
    return out;
}

}  // namespace arbiter::ddnet
