// Boost.Beast rather than the hand-written HTTP of /metrics: this page parses request
// bodies, keeps connections alive and serves several pages, where a well-kept parser
// (bounded headers and bodies, chunked encoding, pipelining) is worth more than our own.
// Only the head's framing is checked first on its bytes (request_head.hpp): Beast is
// lenient where two readers of a request could disagree.
// Beast comes with the Boost already used for loading plugins: nothing new to install.
#include "review_page/http_server.hpp"

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include "review_page/request_head.hpp"

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
    class Connection;
    std::unique_ptr<ReviewSite> site;
    // The live connections, all touched on the page's one thread only.
    std::set<Connection*> connections;
    uint64_t accept_failures = 0;
    asio::io_context io{1};
    tcp::acceptor acceptor{io};
    asio::steady_timer accept_retry{io};
    std::thread thread;

    class Connection : public std::enable_shared_from_this<Connection> {
      public:
        Connection(Impl& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {
            beast::error_code ignored;
            const auto remote = stream_.socket().remote_endpoint(ignored);
            peer_ = ignored ? std::string("?")
                            : remote.address().to_string() + ":" + std::to_string(remote.port());
            server_.connections.insert(this);
        }
        ~Connection() { server_.connections.erase(this); }

        // Since when the client has held things up: waiting for (the rest of) a request, or
        // for it to read the answer's next bytes (the last time a write made progress).
        std::chrono::steady_clock::time_point stalled_since() const { return stalled_since_; }
        // Makes room for a newer connection: its pending read or write ends and it closes.
        void evict() {
            beast::error_code ignored;
            stream_.socket().close(ignored);
        }

        // The head first, with its bytes checked (request_head.hpp), then the parser on it.
        void read() {
            stalled_since_ = std::chrono::steady_clock::now();
            stream_.expires_after(kRequestTimeout);
            searched_ = 0;
            read_head();
        }

      private:
        static bool is_hang_up(beast::error_code error) {
            return error == asio::error::eof || error == http::error::end_of_stream ||
                   error == beast::error::timeout || error == asio::error::connection_reset ||
                   error == asio::error::operation_aborted || error == asio::error::bad_descriptor;
        }

        // Reads until the buffer holds a whole head (it may already: pipelined requests).
        void read_head() {
            const std::string_view have(static_cast<const char*>(buffer_.data().data()),
                                        buffer_.size());
            const size_t end = have.find("\r\n\r\n", searched_);
            if (end != std::string_view::npos && end + 4 <= kMaxHeaderBytes)
                return on_head(have.substr(0, end + 4));
            if (have.size() >= kMaxHeaderBytes) return refuse(413, "the request head is over 8 KiB");
            searched_ = have.size() < 3 ? 0 : have.size() - 3;
            stream_.async_read_some(
                buffer_.prepare(kMaxHeaderBytes - have.size()),
                [self = shared_from_this()](beast::error_code error, size_t n) {
                    if (is_hang_up(error)) return self->close();
                    if (error) return self->refuse(400, error.message());
                    self->buffer_.commit(n);
                    self->read_head();
                });
        }

        void on_head(std::string_view head) {
            if (const auto problem = check_request_head(head))
                return refuse(problem->status, problem->why);
            parser_.emplace();
            parser_->header_limit(kMaxHeaderBytes);
            parser_->body_limit(kMaxBodyBytes);
            http::async_read(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code error, size_t) {
                                 self->on_read(error);
                             });
        }

        // Says what was wrong once, then hangs up: after a request whose framing is in
        // doubt, nothing more on the connection can be read as a request.
        void refuse(int status, const std::string& why) {
            Response response;
            response.status = status;
            response.content_type = "text/plain; charset=utf-8";
            response.body = "bad request: " + why + "\n";
            send(response, false, 11);
        }

        void on_read(beast::error_code error) {
            if (is_hang_up(error)) return close();
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
            std::ostringstream serialized;
            serialized << *reply;
            outgoing_ = std::move(serialized).str();
            written_ = 0;
            write(keep_alive);
        }

        // The answer a piece at a time, so that each piece's progress is seen: a client that
        // does not read is stalled like one that does not send, and makes room the same way.
        void write(bool keep_alive) {
            stalled_since_ = std::chrono::steady_clock::now();
            if (written_ == outgoing_.size()) {
                outgoing_.clear();
                return keep_alive ? read() : close();
            }
            stream_.expires_after(kRequestTimeout);
            stream_.async_write_some(
                asio::buffer(outgoing_.data() + written_, outgoing_.size() - written_),
                [self = shared_from_this(), keep_alive](beast::error_code error, size_t n) {
                    if (error) return self->close();
                    self->written_ += n;
                    self->write(keep_alive);
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
        size_t searched_ = 0;   // how much of buffer_ holds no head's end
        std::string outgoing_;  // the answer being written
        size_t written_ = 0;    // how much of it
        std::chrono::steady_clock::time_point stalled_since_;
    };

    // At the cap, the connection that has held things up longest makes room, whether it is
    // not sending its request or not reading its answer: holding 64 idle, dribbling or
    // unread sockets cannot keep a reviewer out. (Answers are made on this thread, so no
    // connection is ever caught between the two.)
    bool make_room() {
        Connection* oldest = nullptr;
        for (Connection* c : connections)
            if (!oldest || c->stalled_since() < oldest->stalled_since()) oldest = c;
        if (!oldest) return false;
        oldest->evict();
        return true;
    }

    void accept() {
        acceptor.async_accept([this](beast::error_code error, tcp::socket socket) {
            if (error == asio::error::operation_aborted) return;
            if (error) {
                // Out of descriptors, say: the pending connection stays queued, so accepting
                // again at once would spin. Wait a little; log the first failure and then
                // every power of two.
                if (++accept_failures == 1 || (accept_failures & (accept_failures - 1)) == 0)
                    spdlog::warn("review page: accept failed ({} time(s)): {}", accept_failures,
                                 error.message());
                accept_retry.expires_after(std::chrono::milliseconds(100));
                accept_retry.async_wait([this](beast::error_code waited) {
                    if (!waited) accept();
                });
                return;
            }
            if (connections.size() >= kMaxConnections && !make_room()) {
                beast::error_code ignored;
                socket.close(ignored);
            } else {
                std::make_shared<Connection>(*this, std::move(socket))->read();
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
    beast::error_code assigned;
    if (::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        impl_->acceptor.assign(address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), listen_fd,
                               assigned)) {
        ::close(listen_fd);
        throw std::runtime_error("the review page cannot use its socket: " +
                                 (assigned ? assigned.message() : std::string(std::strerror(errno))));
    }
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
        impl->accept_retry.cancel();
        impl->io.stop();
    });
    impl_->thread.join();
}

}  // namespace arbiter::host::review_page
