// The web page's assets (web/dist, built by Vite) served from a directory: transport-free, so
// http_server.cc only routes to it. `/` and client-side routes (a last segment without a dot)
// answer index.html; everything else is a file under the root or 404. Paths are checked
// segment by segment (no "..", no dot files, no backslash) and the resolved file must stay under
// the root after symlinks; a file larger than kMaxStaticFileBytes is refused.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "server/http_types.h"

namespace agentstream::server {

// One asset is read whole into the response; the built page's largest file is a few hundred KiB.
inline constexpr std::size_t kMaxStaticFileBytes = std::size_t{8} << 20;

// True for a request the web page answers: GET, not the API (/v1/...), /ws, /healthz, /metrics
// or /mcp.
bool IsStaticRequest(std::string_view method, std::string_view path);

// The content type for a file name by its extension (application/octet-stream when unknown).
std::string ContentTypeFor(std::string_view file_name);

// Serves `path` (already percent-decoded) from `root`. `if_none_match` is the request's
// If-None-Match header ("" when absent): a matching ETag answers 304 with no body. Hashed assets
// (under /assets/) are cached for a year as immutable; index.html is revalidated every time.
// An empty or missing root answers 404 telling how to build the page. Every answer forbids
// framing by other sites (X-Frame-Options, CSP frame-ancestors) and sending the page's URL as a
// Referer (Referrer-Policy: no-referrer).
HttpResponse ServeStatic(const std::string& root, std::string_view path,
                         std::string_view if_none_match);

// The default --web-root for a binary at `exe_path`, the first with an index.html of:
// `../share/agentstream/web` from the binary's directory (an installed layout: PREFIX/bin and
// PREFIX/share, as `cmake --install` and the Debian package lay it out), `web/` beside the
// binary, else the first `web/dist` found walking up from the binary's directory (a build tree
// inside the source tree). "" when none exists.
std::string DefaultWebRoot(const std::string& exe_path);

}  // namespace agentstream::server
