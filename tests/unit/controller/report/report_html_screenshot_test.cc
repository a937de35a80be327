// Opens report.html in headless Chromium, takes a screenshot and checks it
// shows the heatmap: the PNG decodes (zlib, via protobuf's dependency-free
// path is not available, so we use the system `python3` with zlib) and holds
// many non-white pixels in the heatmap's green-to-red hues.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "controller/report/report.h"
#include "report_fixture.h"

namespace gdrbench::controller::report {
namespace {

std::string Chromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(c)) return c;
  }
  return "";
}

TEST(ReportHtml, HeadlessChromiumScreenshotShowsTheHeatmap) {
  const std::string chromium = Chromium();
  ASSERT_FALSE(chromium.empty()) << "chromium is not installed: run deploy/install-deps";
  const std::string dir = ::testing::TempDir() + "/report_html_" + std::to_string(::getpid());
  auto files = WriteReports(SampleRun(), dir);
  ASSERT_TRUE(files.ok()) << files.status();
  const std::string png = dir + "/shot.png";
  const std::string cmd =
      chromium + " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars"
      " --user-data-dir=" + dir + "/profile --window-size=1000,1400 --screenshot=" + png +
      " file://" + dir + "/report.html > " + dir + "/chromium.log 2>&1";
  int rc = std::system(cmd.c_str());
  ASSERT_EQ(rc, 0) << "chromium failed; see " << dir << "/chromium.log";
  ASSERT_TRUE(std::filesystem::exists(png));
  ASSERT_GT(std::filesystem::file_size(png), 2000u);
  // Count the heatmap's coloured pixels with a tiny PNG decoder in Python
  // (zlib + RGB(A) filters): green cells (pass) and the red one (the low link).
  const std::string script = dir + "/count.py";
  std::ofstream(script) << R"PY(
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos+8]); body = data[pos+8:pos+8+n]; pos += 12 + n
    if kind == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT': idat += body
bpp = {2: 3, 6: 4}[ctype]
raw, stride = zlib.decompress(idat), w * bpp
prev, green, red, nonwhite = bytearray(stride), 0, 0, 0
for y in range(h):
    f, line = raw[y*(stride+1)], bytearray(raw[y*(stride+1)+1:(y+1)*(stride+1)])
    for i in range(stride):
        a = line[i-bpp] if i >= bpp else 0; b = prev[i]; c = prev[i-bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p-a), abs(p-b), abs(p-c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x+1], line[x+2]
        if (r, g, bl) != (255, 255, 255): nonwhite += 1
        if g > 100 and g > r + 40 and g > bl + 40: green += 1
        if r > 150 and r > g + 60 and r > bl + 60: red += 1
    prev = line
print(nonwhite, green, red)
)PY";
  const std::string out = dir + "/count.txt";
  ASSERT_EQ(std::system(("python3 " + script + " " + png + " > " + out).c_str()), 0);
  long nonwhite = 0, green = 0, red = 0;
  std::ifstream(out) >> nonwhite >> green >> red;
  // 11 measured cells of 43x43 px: ten green, one red (and the red FAIL badge).
  EXPECT_GT(nonwhite, 20000) << "the page looks blank";
  EXPECT_GT(green, 10 * 1000) << "no green heatmap cells";
  EXPECT_GT(red, 1000) << "the low link's red cell is missing";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gdrbench::controller::report
