// A file compiled into a binary by gdrbench_embed (cmake/Gdrbench.cmake):
// its path relative to the folder it was embedded from, and its text.
#pragma once

#include <string_view>
#include <vector>

namespace gdrbench {

struct EmbeddedFile {
  std::string_view path;  // "heatmap.js", "pages/run.html"
  std::string_view data;
};

// The first file of `files` whose path is `path`; nullptr when none.
inline const EmbeddedFile* FindEmbedded(const std::vector<EmbeddedFile>& files, std::string_view path) {
  for (const auto& f : files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

}  // namespace gdrbench
