#include "teehistorian_import.hpp"

#include <fstream>
#include <stdexcept>

#include "arbiter/tools/match_writer.hpp"
#include "teehistorian_file.hpp"

namespace arbiter::ddnet {

bool looks_like_teehistorian(const std::filesystem::path& path) {
    if (path.extension() == ".teehistorian") return true;
    std::ifstream in(path, std::ios::binary);
    ThUuid head{};
    if (!in.read(reinterpret_cast<char*>(head.data()), head.size())) return false;
    return head == kTeehistorianUuid;
}

ThImportReport import_teehistorian(const std::filesystem::path& in,
                                   const std::filesystem::path& out,
                                   const ThImportOptions& options) {
    if (options.relay_id.empty()) throw std::invalid_argument("--relay must not be empty");
    ThImportReport report;
    std::error_code ignored;
    const uint64_t size = std::filesystem::file_size(in, ignored);
    ThFileReader file(in);
    tools::StagedEventFile staged(out);
    ThMatchBuilder builder(options.relay_id);
    std::vector<std::vector<uint8_t>> batches;
    auto write = [&]() {
        for (const auto& batch : batches)
            staged.write(batch);
        batches.clear();
    };
    {
        host::ProgressStretch progress(options.progress, "import", ignored ? 0 : size,
                                       host::ProgressUnit::bytes);
        ThRecord record;
        for (;;) {
            const ThStatus status = file.next(record, true);
            if (status == ThStatus::bad_header) {
                report.header_problem = file.reader().header_problem();
                return report;
            }
            if (!report.header_ok && file.reader().state().header_read) {
                report.header_ok = true;
                report.header_json = file.reader().header().json;
                builder.start(file.reader().header(), batches);
            }
            if (status != ThStatus::record) break;
            ++report.records;
            if (report.first_tick < 0) report.first_tick = record.tick;
            report.last_tick = record.tick;
            builder.take(record, batches);
            if (record.kind == ThKind::finish) report.finished = true;
            write();
            if (report.records % 4096 == 0) progress.update(file.reader().offset());
        }
        for (auto& problem : file.reader().take_problems())
            report.problems.push_back(std::move(problem));
        // A file the server did not finish (it crashed, or is still writing) ends here.
        builder.end(report.finished ? "finished" : "the file ends without the server's finish",
                    batches);
        write();
    }
    report.bytes = file.reader().offset();
    report.counts = builder.state().counts;
    report.batches = staged.batches();
    if (report.counts.events == 0) {
        report.problems.push_back({0, "no record could be read: nothing to import"});
        return report;
    }
    staged.commit();
    report.written = true;
    return report;
}

}  // namespace arbiter::ddnet
