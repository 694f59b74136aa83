// The framing of a request to the review page, checked on the head's own bytes before
// any parser reads it. Where two readers of one request could disagree on where it ends
// (a proxy in front, the parser behind), the request is refused and the connection
// closed (RFC 9112 6.3, 11.2): a transfer coding other than chunked, chunked not last,
// Content-Length with Transfer-Encoding, Content-Length twice or not a number, a header
// line folded onto the one before (obs-fold), a CR or LF on its own, a control character
// in a field, space before a field's colon, no Host or two of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace arbiter::host::review_page {

struct HeadProblem {
    int status = 400;  // 400, or 501 for a transfer coding this server does not implement
    std::string why;   // fit to send back
};

// `head` is a request's start line and fields through the blank line that ends them
// ("...\r\n\r\n"). nullopt when its framing is unambiguous.
std::optional<HeadProblem> check_request_head(std::string_view head);

}  // namespace arbiter::host::review_page
