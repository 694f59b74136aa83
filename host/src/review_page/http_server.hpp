// The review page's HTTP transport: Boost.Beast on a thread of its own, so that a slow
// browser or a slow store query never holds the event thread. It bounds what a client may
// send (headers 8 KiB, a body 256 KiB, 10 s to send a request or take an answer's next
// bytes, 64 connections at once, the one that held things up longest closed to make room),
// refuses a request whose framing is ambiguous (request_head.hpp) and adds the security
// headers to every answer; what to answer is ReviewSite's.
#pragma once

#include <memory>
#include <string>

#include "review_page/site.hpp"

namespace arbiter::host::review_page {

class HttpServer {
  public:
    // Serves `site` on the listening socket `listen_fd` (taken over) until destroyed.
    HttpServer(int listen_fd, std::unique_ptr<ReviewSite> site);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace arbiter::host::review_page
