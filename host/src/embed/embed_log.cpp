#include "embed/embed_log.hpp"

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/config.hpp"

namespace arbiter::host::embed {

namespace {

int32_t level_code(spdlog::level::level_enum level) {
    switch (level) {
        case spdlog::level::trace:
            return ARBITER_LOG_TRACE;
        case spdlog::level::debug:
            return ARBITER_LOG_DEBUG;
        case spdlog::level::info:
            return ARBITER_LOG_INFO;
        case spdlog::level::warn:
            return ARBITER_LOG_WARN;
        default:
            return ARBITER_LOG_ERROR;
    }
}

// The recursive mutex lets a callback replace itself (set_log_callback from inside it)
// without deadlocking; the sink's lock also means that once set_log_callback returns,
// no call of the old callback is still starting.
class CallbackOrStderrSink : public spdlog::sinks::base_sink<std::recursive_mutex> {
  public:
    void set_callback(arbiter_log_callback callback, void* user_data) {
        std::lock_guard lock(mutex_);
        callback_ = callback;
        user_data_ = user_data;
    }

  protected:
    void sink_it_(const spdlog::details::log_msg& message) override {
        std::string text(message.payload.data(), message.payload.size());
        if (callback_) {
            callback_(user_data_, level_code(message.level), text.c_str());
            return;
        }
        std::fprintf(stderr, "[arbiter] [%s] %s\n",
                     spdlog::level::to_string_view(message.level).data(), text.c_str());
    }
    void flush_() override { std::fflush(stderr); }

  private:
    arbiter_log_callback callback_ = nullptr;
    void* user_data_ = nullptr;
};

std::shared_ptr<CallbackOrStderrSink>& the_sink() {
    static auto sink = std::make_shared<CallbackOrStderrSink>();
    return sink;
}

}  // namespace

void install_logger() {
    static std::once_flag once;
    std::call_once(once, [] {
        auto logger = std::make_shared<spdlog::logger>("arbiter-host", the_sink());
        logger->set_level(spdlog::level::info);
        spdlog::set_default_logger(logger);
    });
}

void set_log_callback(arbiter_log_callback callback, void* user_data) {
    install_logger();
    the_sink()->set_callback(callback, user_data);
}

void set_log_level(const std::string& level) {
    install_logger();
    if (is_log_level(level)) spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace arbiter::host::embed
