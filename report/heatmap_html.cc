#include "report/heatmap_html.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "report/matrix_blob.h"
#include "report/report_util.h"

namespace gdrbench::report {

std::string EmbeddedHeatmap(const v1::BandwidthMatrix& m, const HeatmapHtmlOptions& o) {
  const std::string id = HtmlEscape(o.id);
  // Base64 has no '<', so the data cannot end the <script> element early.
  return absl::StrCat("<div class=\"gdr-heatmap\" data-blob=\"", id, "\"",
                      o.reference_fleet ? " data-reference=\"fleet\"" : "", "></div>\n",
                      "<script type=\"application/octet-stream\" id=\"", id, "\">",
                      absl::Base64Escape(EncodeMatrix(m)), "</script>\n");
}

std::string HeatmapScriptsHtml() {
  std::string out =
      "<noscript><p class=\"muted\">The heatmaps are drawn by JavaScript, which is off here: "
      "pairs.csv and summary.md hold every value.</p></noscript>\n<script>\n";
  for (const auto& f : embedded::HeatmapScripts()) {
    out.append(f.data);
    out += "\n";
  }
  out += "window.gdrViews = GdrHeatmap.mountEmbedded();\n</script>\n";
  return out;
}

}  // namespace gdrbench::report
