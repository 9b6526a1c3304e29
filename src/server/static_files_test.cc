#include "server/static_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "testing/temp_dir.h"

namespace agentstream::server {
namespace {

namespace fs = std::filesystem;

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = dir_.path();
    root_ = base_ / "dist";
    fs::create_directories(root_ / "assets");
    Write(root_ / "index.html", "<!doctype html><title>page</title>");
    Write(root_ / "assets" / "app-abc123.js", "console.log(1)");
    Write(root_ / ".secret", "hidden");
    Write(base_ / "outside.txt", "outside");
  }
  static void Write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  const test_support::TempDir dir_{"static-files"};
  fs::path base_;
  fs::path root_;
};

TEST_F(StaticFilesTest, RootAndClientRoutesServeIndexWithRevalidation) {
  for (const char* path : {"/", "/agents/ses_1", "/index.html"}) {
    const HttpResponse r = ServeStatic(root_.string(), path, "");
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8") << path;
    EXPECT_NE(r.body.find("<title>page</title>"), std::string::npos) << path;
  }
  const HttpResponse r = ServeStatic(root_.string(), "/", "");
  bool no_cache = false;
  for (const auto& [name, value] : r.headers)
    if (name == "Cache-Control") no_cache = value == "no-cache";
  EXPECT_TRUE(no_cache);
}

// The installable page (docs/web.md): the service worker at /sw.js is revalidated on every
// load (a browser checks it for a new build) and served as JavaScript, or the browser refuses to
// register it; the manifest has its own type.
TEST_F(StaticFilesTest, TheServiceWorkerAndManifestAreRevalidatedWithTheirTypes) {
  Write(root_ / "sw.js", "self.addEventListener('fetch', () => {});");
  Write(root_ / "manifest.webmanifest", R"({"name":"agentstream"})");
  const std::map<std::string, std::string> types{
      {"/sw.js", "text/javascript; charset=utf-8"},
      {"/manifest.webmanifest", "application/manifest+json"}};
  for (const auto& [path, type] : types) {
    const HttpResponse r = ServeStatic(root_.string(), path, "");
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.content_type, type) << path;
    std::map<std::string, std::string> headers(r.headers.begin(), r.headers.end());
    EXPECT_EQ(headers["Cache-Control"], "no-cache") << path;
  }
}

// Another site may not frame the page (its buttons answer permissions), and a page opened as
// /?token=... never sends its URL on as a Referer.
TEST_F(StaticFilesTest, ThePageCannotBeFramedAndSendsNoReferrer) {
  for (const char* path : {"/", "/assets/app-abc123.js", "/missing.js"}) {
    const HttpResponse r = ServeStatic(root_.string(), path, "");
    std::map<std::string, std::string> headers(r.headers.begin(), r.headers.end());
    EXPECT_EQ(headers["X-Frame-Options"], "DENY") << path;
    EXPECT_EQ(headers["Content-Security-Policy"], "frame-ancestors 'none'") << path;
    EXPECT_EQ(headers["Referrer-Policy"], "no-referrer") << path;
  }
}

TEST_F(StaticFilesTest, HashedAssetsAreImmutableAndAnswer304ForTheirETag) {
  const HttpResponse r = ServeStatic(root_.string(), "/assets/app-abc123.js", "");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(r.body, "console.log(1)");
  std::string etag;
  std::string cache;
  for (const auto& [name, value] : r.headers) {
    if (name == "ETag") etag = value;
    if (name == "Cache-Control") cache = value;
  }
  EXPECT_EQ(cache, "public, max-age=31536000, immutable");
  ASSERT_FALSE(etag.empty());
  const HttpResponse again = ServeStatic(root_.string(), "/assets/app-abc123.js", etag);
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(ServeStatic(root_.string(), "/assets/app-abc123.js", "\"other\"").status, 200);
}

TEST_F(StaticFilesTest, RefusesTraversalHiddenFilesAndEscapingSymlinks) {
  EXPECT_EQ(ServeStatic(root_.string(), "/../outside.txt", "").status, 404);
  EXPECT_EQ(ServeStatic(root_.string(), "/assets/../../outside.txt", "").status, 404);
  EXPECT_EQ(ServeStatic(root_.string(), "/.secret", "").status, 404);
  EXPECT_EQ(ServeStatic(root_.string(), "/a\\..\\outside.txt", "").status, 404);
  EXPECT_EQ(ServeStatic(root_.string(), "/missing.js", "").status, 404);
  fs::create_symlink(base_ / "outside.txt", root_ / "link.txt");
  EXPECT_EQ(ServeStatic(root_.string(), "/link.txt", "").status, 404);
}

TEST_F(StaticFilesTest, RefusesFilesOverTheBound) {
  {
    std::ofstream out(root_ / "big.bin", std::ios::binary);
    out.seekp(static_cast<std::streamoff>(kMaxStaticFileBytes));
    out.put('x');
  }
  EXPECT_EQ(ServeStatic(root_.string(), "/big.bin", "").status, 413);
}

TEST_F(StaticFilesTest, NoRootExplainsHowToBuild) {
  const HttpResponse r = ServeStatic("", "/", "");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("npm run build"), std::string::npos);
}

TEST(StaticFiles, RoutesOnlyPageRequests) {
  EXPECT_TRUE(IsStaticRequest("GET", "/"));
  EXPECT_TRUE(IsStaticRequest("GET", "/assets/x.js"));
  EXPECT_FALSE(IsStaticRequest("POST", "/"));
  EXPECT_FALSE(IsStaticRequest("GET", "/v1/agents"));
  EXPECT_FALSE(IsStaticRequest("GET", "/v1"));
  EXPECT_FALSE(IsStaticRequest("GET", "/ws"));
  EXPECT_FALSE(IsStaticRequest("GET", "/healthz"));
  EXPECT_FALSE(IsStaticRequest("GET", "/metrics"));
  EXPECT_FALSE(IsStaticRequest("GET", "/mcp"));
  EXPECT_EQ(ContentTypeFor("a.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("a.unknown"), "application/octet-stream");
}

TEST(StaticFiles, DefaultWebRootFindsTheSourceTreeDist) {
  const test_support::TempDir dir("static-files-root");
  const fs::path base = dir.path();
  fs::create_directories(base / "web" / "dist");
  fs::create_directories(base / "build" / "x" / "src" / "cli");
  std::ofstream(base / "web" / "dist" / "index.html") << "x";
  std::ofstream(base / "build" / "x" / "src" / "cli" / "agentstream") << "";
  EXPECT_EQ(DefaultWebRoot((base / "build" / "x" / "src" / "cli" / "agentstream").string()),
            (fs::canonical(base) / "web" / "dist").string());
}

TEST(StaticFiles, DefaultWebRootFindsTheInstalledPageFirst) {
  const test_support::TempDir dir("static-files-installed");
  const fs::path prefix = dir.path();
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "share" / "agentstream" / "web");
  std::ofstream(prefix / "bin" / "agentstream") << "";
  const std::string exe = (prefix / "bin" / "agentstream").string();
  EXPECT_EQ(DefaultWebRoot(exe), "");  // no index.html yet
  // A web/dist above the prefix (the binary installed inside a source tree) loses to share/.
  fs::create_directories(prefix / "web" / "dist");
  std::ofstream(prefix / "web" / "dist" / "index.html") << "x";
  std::ofstream(prefix / "share" / "agentstream" / "web" / "index.html") << "x";
  EXPECT_EQ(DefaultWebRoot(exe),
            (fs::canonical(prefix) / "share" / "agentstream" / "web").string());
}

}  // namespace
}  // namespace agentstream::server
