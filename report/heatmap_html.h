// The canvas heatmap (web/heatmap.js, web/matrix_data.js) inside a
// self-contained HTML page such as the sweep's report.html: each matrix is
// embedded once as base64 of its binary form (matrix_blob.h) next to an
// empty <div>, and the scripts, inlined once at the end of the page, draw
// every such div (the first at once, the others as they scroll into view).
// gdrbench-server's dashboard serves the same two scripts.
#pragma once

#include <string>
#include <vector>

#include "common/embedded_file.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::embedded {
// matrix_data.js and heatmap.js (compiled in by gdrbench_embed).
const std::vector<EmbeddedFile>& HeatmapScripts();
}  // namespace gdrbench::embedded

namespace gdrbench::report {

struct HeatmapHtmlOptions {
  std::string id;             // unique in the page: "m-r0-1048576"
  bool reference_fleet = false;  // colour Gb/s against the fleet's best, not the link rate
};

// The placeholder <div> and the matrix data for one heatmap.
std::string EmbeddedHeatmap(const v1::BandwidthMatrix& m, const HeatmapHtmlOptions& options);

// <noscript> note and the scripts that draw every embedded heatmap; once per
// page, after the last EmbeddedHeatmap.
std::string HeatmapScriptsHtml();

}  // namespace gdrbench::report
