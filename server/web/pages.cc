#include "server/web/pages.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "report/report_util.h"

namespace gdrbench::server::web {
namespace {

using report::HtmlEscape;

const std::vector<Page>& Pages() {
  static const std::vector<Page> pages = {
      {"runs", "Runs", {"app.js", "runs.js"}},
      {"run", "Run", {"matrix_data.js", "heatmap.js", "app.js", "run.js"}},
      {"sweep", "Sweep", {"app.js", "sweep.js"}},
      {"live", "Live run", {"matrix_data.js", "app.js", "live.js"}},
      {"node", "Node", {"vendor/chart.min.js", "app.js", "history.js"}},
      {"link", "Link", {"vendor/chart.min.js", "app.js", "history.js"}},
      {"compare", "Compare runs", {"matrix_data.js", "heatmap.js", "app.js", "compare.js"}},
      {"capacity", "Capacity", {"vendor/chart.min.js", "app.js", "capacity.js"}},
  };
  return pages;
}

std::string Head(const std::string& title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<title>",
      HtmlEscape(title), " \xc2\xb7 gdrbench</title><link rel=\"stylesheet\" href=\"/ui/assets/style.css?v=", kVersion,
      "\"></head>\n");
}

}  // namespace

const Page* FindPage(const std::string& path) {
  std::string name = path;
  if (absl::StartsWith(name, "runs/")) name = "run";
  if (absl::StartsWith(name, "sweeps/")) name = "sweep";
  if (absl::StartsWith(name, "live/")) name = "live";
  for (const auto& p : Pages()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string RenderPage(const Page& page, const api::Principal& who, bool open) {
  const char* role = who.role == api::Role::kWrite ? "write" : "read";
  std::string out = Head(page.title);
  absl::StrAppend(&out, "<body data-page=\"", page.name, "\" data-user=\"", HtmlEscape(who.name), "\" data-role=\"",
                  role, "\">\n<header class=\"top\"><a class=\"brand\" href=\"/ui/runs\">gdrbench</a><nav>"
                  "<a href=\"/ui/runs\">Runs</a><a href=\"/ui/compare\">Compare</a>"
                  "<a href=\"/ui/capacity\">Capacity</a></nav><span class=\"who\">",
                  HtmlEscape(who.name), " (", role, ")");
  if (!open) {
    out += "<form method=\"post\" action=\"/ui/logout\"><button type=\"submit\">log out</button></form>";
  }
  out += "</span></header>\n<main id=\"main\"><p class=\"muted\">loading\xe2\x80\xa6</p></main>\n";
  for (const auto& s : page.scripts) {
    absl::StrAppend(&out, "<script src=\"/ui/assets/", s, "?v=", kVersion, "\"></script>\n");
  }
  out += "</body></html>\n";
  return out;
}

std::string RenderLogin(const std::string& next, const std::string& error) {
  std::string out = Head("Log in");
  absl::StrAppend(&out,
                  "<body data-page=\"login\">\n<header class=\"top\"><span class=\"brand\">gdrbench</span></header>\n"
                  "<main id=\"main\" class=\"login\"><h1>Log in</h1>\n<p>This page needs a gdrbench-server token "
                  "(a <code>read</code> or <code>write</code> line of the server's <code>--tokens</code> file).</p>\n",
                  error.empty() ? "" : absl::StrCat("<p class=\"error\" role=\"alert\">", HtmlEscape(error), "</p>\n"),
                  "<form method=\"post\" action=\"/ui/login\"><input type=\"hidden\" name=\"next\" value=\"",
                  HtmlEscape(SafeNext(next)),
                  "\"><label>token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" "
                  "required autofocus></label> <button type=\"submit\">log in</button></form>\n"
                  "<p class=\"muted\">The token is kept in an HttpOnly cookie of this site for 30 days.</p>\n"
                  "</main></body></html>\n");
  return out;
}

std::string SafeNext(const std::string& next) {
  // Only a path of ours: no scheme, no "//host", no backslash tricks.
  if (!absl::StartsWith(next, "/ui/") || absl::StrContains(next, "//") || absl::StrContains(next, "\\") ||
      absl::StartsWith(next, "/ui/login") || absl::StartsWith(next, "/ui/logout")) {
    return "/ui/runs";
  }
  for (char c : next) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) return "/ui/runs";
  }
  return next;
}

}  // namespace gdrbench::server::web
