// Captures what the host logs (through spdlog's default logger) for the life of the
// object, so that a test can check that a failure was logged, and with what.
#pragma once

#include <memory>
#include <sstream>
#include <string>

namespace spdlog {
class logger;
}

namespace arbiter::test {

class LogCapture {
  public:
    LogCapture();
    ~LogCapture();
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    std::string text() const;

  private:
    std::shared_ptr<std::ostringstream> stream_;
    std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace arbiter::test
