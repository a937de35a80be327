// The dashboard's HTML: one shell per page (the header, an empty <main>, and
// the page's scripts, which read /api/v1 and /ui/data with the session
// cookie) and the login page. No data is rendered into the HTML except who
// is logged in; every script is a file (the pages run under a
// Content-Security-Policy without inline scripts).
// Thread safety: pure.
#pragma once

#include <string>
#include <vector>

#include "server/api/auth.h"

namespace gdrbench::server::web {

struct Page {
  std::string name;                  // "runs", "run", ...: <body data-page>
  std::string title;
  std::vector<std::string> scripts;  // asset paths under /ui/assets/
};

// The page of a /ui/ path ("runs", "runs/ID", "node", ...); nullptr if none.
const Page* FindPage(const std::string& path);

// `open`: the server has no tokens (anyone may write; no logout).
std::string RenderPage(const Page& page, const api::Principal& who, bool open);

// The login form; `next` is where to go after it (a /ui/ path), `error`
// a sentence shown above the form ("" for none).
std::string RenderLogin(const std::string& next, const std::string& error);

// A safe redirect target: `next` if it is a path under /ui/ of this
// server, else "/ui/runs".
std::string SafeNext(const std::string& next);

}  // namespace gdrbench::server::web
