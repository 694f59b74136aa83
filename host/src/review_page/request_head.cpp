#include "review_page/request_head.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::review_page {

namespace {

// RFC 9110 5.6.2: the characters of a field name.
bool is_token_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

HeadProblem bad(std::string why) {
    return {400, std::move(why)};
}

}  // namespace

std::optional<HeadProblem> check_request_head(std::string_view head) {
    // Lines end in CRLF and nowhere else: a lone CR or LF is a line end to some readers and
    // none to others.
    for (size_t i = 0; i < head.size(); ++i) {
        if (head[i] == '\r' && (i + 1 == head.size() || head[i + 1] != '\n'))
            return bad("a CR not followed by LF");
        if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) return bad("an LF without a CR");
    }
    if (head.size() < 4 || head.substr(head.size() - 4) != "\r\n\r\n")
        return bad("the head does not end with an empty line");
    head.remove_suffix(2);  // each line now ends in its own CRLF

    std::vector<std::string_view> lines;
    for (size_t start = 0; start < head.size();) {
        const size_t end = head.find("\r\n", start);
        lines.push_back(head.substr(start, end - start));
        start = end + 2;
    }
    const std::string_view start_line = lines.front();
    for (const char c : start_line)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
            return bad("a control character in the request line");
    const size_t first_space = start_line.find(' '), last_space = start_line.rfind(' ');
    if (first_space == std::string_view::npos || first_space == last_space ||
        start_line.find(' ', first_space + 1) != last_space)
        return bad("the request line is not METHOD TARGET VERSION");
    const std::string_view version = start_line.substr(last_space + 1);
    if (version != "HTTP/1.1" && version != "HTTP/1.0")
        return bad("the version is not HTTP/1.1 or HTTP/1.0");

    int content_lengths = 0, hosts = 0;
    std::string codings;  // every Transfer-Encoding field's value, comma-joined
    bool has_transfer_encoding = false;
    for (size_t i = 1; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        if (line.empty()) return bad("an empty line inside the head");
        if (line.front() == ' ' || line.front() == '\t')
            return bad("a field folded onto the line before (obs-fold)");
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) return bad("a field line without a name");
        const std::string_view name = line.substr(0, colon);
        if (!std::all_of(name.begin(), name.end(), is_token_char))
            return bad("a field name with a character a name cannot hold (" +
                       escape_for_message(name, 40) + ")");
        const std::string_view value = trim(line.substr(colon + 1));
        for (const char c : value)
            if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F)
                return bad("a control character in the field " + escape_for_message(name, 40));
        const std::string field = lower(name);
        if (field == "content-length") {
            if (++content_lengths > 1) return bad("Content-Length more than once");
            if (value.empty() || value.size() > 18 ||
                !std::all_of(value.begin(), value.end(),
                             [](char c) { return c >= '0' && c <= '9'; }))
                return bad("a Content-Length that is not one number");
        } else if (field == "transfer-encoding") {
            has_transfer_encoding = true;
            codings += (codings.empty() ? "" : ",") + lower(value);
        } else if (field == "host") {
            ++hosts;
        }
    }
    if (version == "HTTP/1.1" && hosts != 1) return bad("an HTTP/1.1 request needs one Host");
    if (hosts > 1) return bad("Host more than once");
    if (!has_transfer_encoding) return std::nullopt;
    if (version == "HTTP/1.0") return bad("Transfer-Encoding in an HTTP/1.0 request");
    if (content_lengths > 0) return bad("both Content-Length and Transfer-Encoding");
    // RFC 9112 6.1: chunked must come last, or nobody can tell where the body ends; codings
    // before it would be ours to undo, and this server undoes none.
    std::vector<std::string_view> list;
    std::string_view rest = codings;
    for (;;) {
        const size_t comma = rest.find(',');
        list.push_back(trim(rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    if (list.back() != "chunked")
        return bad("a Transfer-Encoding that does not end in chunked (" +
                   escape_for_message(codings, 60) + ")");
    if (list.size() > 1)
        return HeadProblem{501, "a transfer coding other than chunked (" +
                                    escape_for_message(codings, 60) + ")"};
    return std::nullopt;
}

}  // namespace arbiter::host::review_page
