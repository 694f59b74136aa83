#include "arbiter/tools/match_writer.hpp"

#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <system_error>

namespace arbiter::tools {

namespace {
std::atomic<uint64_t> staged_counter{0};
}

StagedFile::StagedFile(std::filesystem::path destination) : destination_(std::move(destination)) {
    if (destination_.filename().empty())
        throw std::runtime_error(destination_.string() + ": not a file name");
    temporary_ = destination_;
    temporary_ +=
        ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(staged_counter.fetch_add(1));
}

StagedFile::~StagedFile() {
    if (committed_) return;
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
}

void StagedFile::commit() {
    std::error_code error;
    std::filesystem::rename(temporary_, destination_, error);
    if (error)
        throw std::runtime_error(destination_.string() + ": cannot move " +
                                 temporary_.filename().string() +
                                 " into place: " + error.message());
    committed_ = true;
}

StagedEventFile::StagedEventFile(const std::filesystem::path& destination)
    : staged_(destination), writer_(std::make_unique<host::EventFileWriter>(staged_.temporary())) {}

void StagedEventFile::write(std::span<const uint8_t> batch) {
    writer_->write(batch);
    ++batches_;
    bytes_ += host::kRecordHeaderSize + batch.size();
}

void StagedEventFile::commit() {
    writer_->close();
    staged_.commit();
}

MatchStream::MatchStream(StagedEventFile& file, std::string relay_id, uint64_t match_id,
                         size_t batch_events)
    : file_(file),
      builder_(std::move(relay_id), match_id),
      batch_events_(batch_events == 0 ? 1 : batch_events) {}

void MatchStream::check_order(int64_t t_us) {
    if (t_us < last_us_)
        throw std::logic_error("event at " + std::to_string(t_us) + " us after one at " +
                               std::to_string(last_us_) +
                               " us: a match's events must be written in relay-time order");
    last_us_ = t_us;
}

void MatchStream::flush() {
    if (builder_.event_count() == 0) return;
    auto bytes = builder_.finish();
    file_.write(bytes);
}

std::filesystem::path default_truth_path(const std::filesystem::path& match_file) {
    std::filesystem::path truth = match_file;
    if (truth.extension() == ".arbev") truth.replace_extension();
    truth += ".truth.json";
    return truth;
}

}  // namespace arbiter::tools
