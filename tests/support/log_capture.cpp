#include "support/log_capture.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace arbiter::test {

LogCapture::LogCapture()
    : stream_(std::make_shared<std::ostringstream>()), previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*stream_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_pattern("[%l] %v");
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

LogCapture::~LogCapture() {
    spdlog::set_default_logger(previous_);
}

std::string LogCapture::text() const {
    spdlog::default_logger()->flush();
    return stream_->str();
}

}  // namespace arbiter::test
