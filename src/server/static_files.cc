#include "server/static_files.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

namespace agentstream::server {

namespace fs = std::filesystem;

namespace {

HttpResponse TextResponse(int status, const std::string& code, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = R"({"error":{"code":")" + code + R"(","message":")" + message + R"("}})";
  return response;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Splits the decoded path into safe segments. False when any segment could leave the root or
// name a hidden file.
bool SafeSegments(std::string_view path, std::string* relative) {
  relative->clear();
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (!segment.empty()) {
      if (segment.front() == '.' || segment.find('\\') != std::string_view::npos ||
          segment.find('\0') != std::string_view::npos)
        return false;
      if (!relative->empty()) relative->push_back('/');
      relative->append(segment);
    }
    start = end + 1;
  }
  return true;
}

// Weak validator from size and modification time: cheap, and changes whenever a build rewrites
// the file.
std::string ETagOf(std::uintmax_t size, fs::file_time_type mtime) {
  const auto ticks = mtime.time_since_epoch().count();
  std::array<char, 64> buf{};
  const int n = std::snprintf(buf.data(), buf.size(), "\"%jx-%llx\"", size,
                              static_cast<unsigned long long>(ticks));
  return std::string(buf.data(), static_cast<std::size_t>(n));
}

}  // namespace

bool IsStaticRequest(std::string_view method, std::string_view path) {
  if (method != "GET") return false;
  if (path == "/v1" || path.starts_with("/v1/")) return false;
  return path != "/ws" && path != "/healthz" && path != "/metrics" && path != "/mcp";
}

std::string ContentTypeFor(std::string_view file_name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kTypes{{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".ico", "image/x-icon"},
      {".webp", "image/webp"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
      {".webmanifest", "application/manifest+json"},
  }};
  for (const auto& [ext, type] : kTypes)
    if (EndsWith(file_name, ext)) return std::string(type);
  return "application/octet-stream";
}

namespace {

HttpResponse ServeFile(const std::string& root, std::string_view path,
                       std::string_view if_none_match) {
  std::string relative;
  if (!SafeSegments(path, &relative)) return TextResponse(404, "not_found", "no such file");
  if (root.empty())
    return TextResponse(404, "not_found",
                        "the web page is not built: run npm ci && npm run build in web/, or pass "
                        "--web-root");
  // `/` and client routes (no extension in the last segment) are the single page.
  const std::size_t last_slash = relative.rfind('/');
  const std::string_view last =
      last_slash == std::string::npos ? relative : std::string_view(relative).substr(last_slash);
  const bool page = relative.empty() || last.find('.') == std::string_view::npos;
  if (page) relative = "index.html";

  std::error_code ec;
  const fs::path base = fs::canonical(root, ec);
  if (ec) return TextResponse(404, "not_found", "the web root does not exist");
  const fs::path file = fs::canonical(base / relative, ec);
  if (ec || !fs::is_regular_file(file, ec)) return TextResponse(404, "not_found", "no such file");
  // A symlink inside the root must not lead out of it.
  const auto [root_end, unused] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (root_end != base.end()) return TextResponse(404, "not_found", "no such file");
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec) return TextResponse(404, "not_found", "no such file");
  if (size > kMaxStaticFileBytes) return TextResponse(413, "too_large", "file larger than 8 MiB");
  const fs::file_time_type mtime = fs::last_write_time(file, ec);
  if (ec) return TextResponse(404, "not_found", "no such file");

  HttpResponse response;
  const std::string etag = ETagOf(size, mtime);
  response.headers.emplace_back("ETag", etag);
  // Vite names files under assets/ by content hash; anything else may change between builds.
  response.headers.emplace_back("Cache-Control", relative.starts_with("assets/")
                                                     ? "public, max-age=31536000, immutable"
                                                     : "no-cache");
  response.content_type = ContentTypeFor(file.filename().string());
  if (!if_none_match.empty() && if_none_match.find(etag) != std::string_view::npos) {
    response.status = 304;
    return response;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return TextResponse(404, "not_found", "no such file");
  response.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (response.body.size() > kMaxStaticFileBytes)
    return TextResponse(413, "too_large", "file larger than 8 MiB");
  return response;
}

}  // namespace

HttpResponse ServeStatic(const std::string& root, std::string_view path,
                         std::string_view if_none_match) {
  HttpResponse response = ServeFile(root, path, if_none_match);
  // No other site may frame the page (clickjacking its buttons), and the page's URL, which may
  // hold ?token=, is never sent on as a Referer.
  response.headers.emplace_back("X-Frame-Options", "DENY");
  response.headers.emplace_back("Content-Security-Policy", "frame-ancestors 'none'");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
  return response;
}

std::string DefaultWebRoot(const std::string& exe_path) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(exe_path, ec).parent_path();
  if (ec || dir.empty()) return "";
  if (const fs::path installed = dir.parent_path() / "share" / "agentstream" / "web";
      fs::is_regular_file(installed / "index.html", ec))
    return installed.string();
  if (fs::is_regular_file(dir / "web" / "index.html", ec)) return (dir / "web").string();
  // A build directory is at most a few levels under the source tree (build/NAME/src/cli).
  constexpr int kMaxLevels = 6;
  for (int i = 0; i < kMaxLevels && !dir.empty(); ++i) {
    if (fs::is_regular_file(dir / "web" / "dist" / "index.html", ec))
      return (dir / "web" / "dist").string();
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

}  // namespace agentstream::server
