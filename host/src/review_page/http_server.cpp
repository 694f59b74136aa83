// Boost.Beast rather than the hand-written HTTP of /metrics: this page parses request
// bodies, keeps connections alive and serves several pages, where a well-kept parser
// (bounded headers and bodies, chunked encoding, pipelining) is worth more than our own.
// Beast comes with the Boost already used for loading plugins: nothing new to install.
#include "review_page/http_server.hpp"

#include <atomic>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>
#include <boost/beast.hpp>

namespace arbiter::host::review_page {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kMaxHeaderBytes = 8 * 1024;
constexpr size_t kMaxBodyBytes = 256 * 1024;  // a note of 64 KiB, %-escaped
constexpr std::chrono::seconds kRequestTimeout{10};
constexpr size_t kMaxConnections = 64;

// No script, no frame, nothing from elsewhere: the page is HTML, one style sheet and
// inline SVG, and forms that post to itself.
constexpr const char* kPolicy =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'";

}  // namespace

struct HttpServer::Impl {
    // Declared before the io_context: the connections it still holds when it goes touch them.
    std::unique_ptr<ReviewSite> site;
    std::atomic<size_t> connections{0};
    asio::io_context io{1};
    tcp::acceptor acceptor{io};
    std::thread thread;

    class Connection : public std::enable_shared_from_this<Connection> {
      public:
        Connection(Impl& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {
            beast::error_code ignored;
            const auto remote = stream_.socket().remote_endpoint(ignored);
            peer_ = ignored ? std::string("?")
                            : remote.address().to_string() + ":" + std::to_string(remote.port());
        }
        ~Connection() { --server_.connections; }

        void read() {
            parser_.emplace();
            parser_->header_limit(kMaxHeaderBytes);
            parser_->body_limit(kMaxBodyBytes);
            stream_.expires_after(kRequestTimeout);
            http::async_read(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code error, size_t) {
                                 self->on_read(error);
                             });
        }

      private:
        void on_read(beast::error_code error) {
            if (error == http::error::end_of_stream || error == beast::error::timeout ||
                error == asio::error::connection_reset || error == asio::error::operation_aborted)
                return close();
            if (error) {
                // Malformed or too large: say so once, then hang up.
                Response response;
                response.status =
                    error == http::error::body_limit || error == http::error::header_limit ? 413
                                                                                           : 400;
                response.content_type = "text/plain; charset=utf-8";
                response.body = "bad request: " + error.message() + "\n";
                return send(response, false, 11);
            }
            const auto& message = parser_->get();
            Request request;
            request.method = std::string(message.method_string());
            request.target = std::string(message.target());
            request.cookie = std::string(message[http::field::cookie]);
            request.content_type = std::string(message[http::field::content_type]);
            request.body = message.body();
            request.peer = peer_;
            const Response response = server_.site->handle(request);
            send(response, message.keep_alive(), message.version());
        }

        void send(const Response& response, bool keep_alive, unsigned version) {
            auto reply = std::make_shared<http::response<http::string_body>>(
                static_cast<http::status>(response.status), version);
            reply->set(http::field::server, "arbiter");
            reply->set(http::field::content_type, response.content_type);
            reply->set(http::field::cache_control, "no-store");
            reply->set("Content-Security-Policy", kPolicy);
            reply->set("X-Content-Type-Options", "nosniff");
            reply->set("X-Frame-Options", "DENY");
            reply->set("Referrer-Policy", "no-referrer");
            for (const auto& [name, value] : response.headers)
                reply->insert(name, value);
            reply->body() = response.body;
            reply->keep_alive(keep_alive);
            reply->prepare_payload();
            stream_.expires_after(kRequestTimeout);
            http::async_write(
                stream_, *reply,
                [self = shared_from_this(), reply, keep_alive](beast::error_code error, size_t) {
                    if (error || !keep_alive) return self->close();
                    self->read();
                });
        }

        void close() {
            beast::error_code ignored;
            stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        }

        Impl& server_;
        beast::tcp_stream stream_;
        beast::flat_buffer buffer_;
        std::optional<http::request_parser<http::string_body>> parser_;
        std::string peer_;
    };

    void accept() {
        acceptor.async_accept([this](beast::error_code error, tcp::socket socket) {
            if (error == asio::error::operation_aborted) return;
            if (!error) {
                if (connections.load() >= kMaxConnections) {
                    // Over the cap: closed at once, so that idle sockets cannot pile up.
                    beast::error_code ignored;
                    socket.close(ignored);
                } else {
                    ++connections;
                    std::make_shared<Connection>(*this, std::move(socket))->read();
                }
            } else {
                spdlog::warn("review page: accept failed: {}", error.message());
            }
            accept();
        });
    }
};

HttpServer::HttpServer(int listen_fd, std::unique_ptr<ReviewSite> site)
    : impl_(std::make_unique<Impl>()) {
    impl_->site = std::move(site);
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &length);
    impl_->acceptor.assign(address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), listen_fd);
    impl_->accept();
    impl_->thread = std::thread([impl = impl_.get()] {
        for (;;) {
            try {
                impl->io.run();
                return;
            } catch (const std::exception& error) {
                // A handler that threw: logged, and the page goes on serving.
                spdlog::error("review page: {}", error.what());
            }
        }
    });
}

HttpServer::~HttpServer() {
    asio::post(impl_->io, [impl = impl_.get()] {
        beast::error_code ignored;
        impl->acceptor.close(ignored);
        impl->io.stop();
    });
    impl_->thread.join();
}

}  // namespace arbiter::host::review_page
