#include "core/replay_file.hpp"

#include <algorithm>
#include <memory>

#include "arbiter/host/event_file.hpp"

namespace arbiter::host {

FileTally replay_file(const std::filesystem::path& path, Host& host,
                      const std::function<void(const FileProblem&)>& problem,
                      const std::function<void(uint64_t offset)>& at) {
    FileTally tally;
    auto tell = [&](FileProblem found) {
        if (problem) problem(found);
    };
    std::unique_ptr<EventFileReader> reader;
    try {
        const uint64_t cap =
            std::min<uint64_t>(host.config().host.max_batch_bytes, kMaxRecordPayload);
        reader = std::make_unique<EventFileReader>(path, static_cast<uint32_t>(cap));
    } catch (const std::exception& error) {
        tally.unreadable = true;
        tell({FileProblem::Kind::unreadable, 0, 0, error.what()});
        return tally;
    }
    const std::string name = path.string();
    while (auto item = reader->next()) {
        if (at) at(item->offset);
        if (item->kind == EventFileItem::Kind::damage) {
            ++tally.damaged;
            host.input_damaged(damage_text(name, *item));
            tell({FileProblem::Kind::damaged, item->offset, item->skipped, item->problem});
            continue;
        }
        ++tally.records;
        if (auto refused = host.push(item->payload)) {
            ++tally.refused;
            tell({FileProblem::Kind::refused, item->offset, 0, *refused});
        }
    }
    return tally;
}

}  // namespace arbiter::host
