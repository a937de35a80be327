#include "server/history/link_noise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gdrbench::server::history {
namespace {

// "GLN1", window (u32), links (u64), then per link src (i64), dst (i64),
// readings (u8), readings x f32; little-endian (every platform the server
// builds for).
constexpr char kMagic[4] = {'G', 'L', 'N', '1'};

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
bool Get(std::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

double MedianOf(std::vector<float>& v) {
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + n / 2, v.end());
  double hi = v[n / 2];
  if (n % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + n / 2);
  return (lo + hi) / 2;
}

// Summarize's work on `r`, which it reorders.
LinkSummary SummarizeInPlace(std::vector<float>& r) {
  LinkSummary s;
  s.history = static_cast<uint32_t>(r.size());
  if (r.empty()) return s;
  s.median = MedianOf(r);
  if (r.size() < 2 || !(s.median > 0)) return s;
  for (float& x : r) x = static_cast<float>(std::fabs(x - s.median));
  s.noise = 1.4826 * MedianOf(r) / s.median;
  return s;
}

}  // namespace

absl::Status ValidateNoisePolicy(const NoisePolicy& p) {
  if (!std::isfinite(p.k) || p.k < 0) {
    return absl::InvalidArgumentError(absl::StrCat("noise k: expected a number >= 0, got ", p.k));
  }
  if (p.window < 1 || p.window > kMaxNoiseWindow) {
    return absl::InvalidArgumentError(
        absl::StrCat("noise window: expected 1 to ", kMaxNoiseWindow, " runs, got ", p.window));
  }
  if (p.min_history < 1 || p.min_history > p.window) {
    return absl::InvalidArgumentError(absl::StrCat("minimum history: expected 1 to the window (", p.window,
                                                   ") runs, got ", p.min_history));
  }
  return absl::OkStatus();
}

LinkSummary Summarize(std::vector<float> r) { return SummarizeInPlace(r); }

double Threshold(const LinkSummary& s, double tolerance, const NoisePolicy& p) {
  if (s.history < p.min_history) return tolerance;
  return std::max(tolerance, p.k * s.noise);
}

absl::StatusOr<LinkNoiseTable> LinkNoiseTable::Decode(std::string_view in, uint32_t window) {
  auto lost = [](const char* what) {
    return absl::DataLossError(absl::StrCat("the stored link noise does not read back (", what, ")"));
  };
  if (in.size() < 4 || std::memcmp(in.data(), kMagic, 4) != 0) return lost("no GLN1 header");
  in.remove_prefix(4);
  uint32_t stored_window = 0;
  uint64_t n = 0;
  if (!Get(&in, &stored_window) || !Get(&in, &n)) return lost("header");
  if (stored_window < 1 || stored_window > kMaxNoiseWindow || n > in.size() / 17) return lost("header values");
  LinkNoiseTable t(window);
  t.keys_.reserve(n);
  t.filled_.reserve(n);
  t.values_.reserve(n * window);
  std::vector<float> r;
  for (uint64_t i = 0; i < n; ++i) {
    Key k;
    uint8_t filled = 0;
    if (!Get(&in, &k.first) || !Get(&in, &k.second) || !Get(&in, &filled) || filled > stored_window) {
      return lost("link");
    }
    if (!t.keys_.empty() && !(t.keys_.back() < k)) return lost("links out of order");
    r.resize(filled);
    for (float& x : r) {
      if (!Get(&in, &x) || !std::isfinite(x)) return lost("reading");
    }
    const size_t keep = std::min<size_t>(filled, window);
    t.keys_.push_back(k);
    t.filled_.push_back(static_cast<uint8_t>(keep));
    const size_t at = t.values_.size();
    t.values_.resize(at + window, 0.0f);
    std::copy(r.end() - keep, r.end(), t.values_.begin() + at);
  }
  if (!in.empty()) return lost("trailing bytes");
  t.Summarize();
  return t;
}

namespace {

// The encoding's header, then `links` links put by PutLink.
void PutHeader(std::string* out, uint32_t window, uint64_t links) {
  out->append(kMagic, 4);
  Put<uint32_t>(out, window);
  Put<uint64_t>(out, links);
}

void PutLink(std::string* out, LinkNoiseTable::Key k, const float* v, uint8_t n) {
  Put(out, k.first);
  Put(out, k.second);
  Put<uint8_t>(out, n);
  out->append(reinterpret_cast<const char*>(v), n * sizeof(float));
}

}  // namespace

std::string LinkNoiseTable::Encode() const {
  std::string out;
  out.reserve(16 + keys_.size() * (17 + window_ * sizeof(float)));
  PutHeader(&out, window_, keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) PutLink(&out, keys_[i], &values_[i * window_], filled_[i]);
  return out;
}

int LinkNoiseTable::Index(Key link) const {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), link);
  if (it == keys_.end() || *it != link) return -1;
  return static_cast<int>(it - keys_.begin());
}

std::vector<float> LinkNoiseTable::Window(Key link) const {
  const int i = Index(link);
  if (i < 0) return {};
  const float* v = &values_[size_t(i) * window_];
  return std::vector<float>(v, v + filled_[i]);
}

LinkSummary LinkNoiseTable::Find(Key link) const {
  const int i = Index(link);
  return i < 0 ? LinkSummary{} : summaries_[i];
}

void LinkNoiseTable::Summarize() {
  summaries_.resize(keys_.size());
  std::vector<float> r;  // reused: a link's readings, reordered by the medians
  for (size_t i = 0; i < keys_.size(); ++i) {
    const float* v = &values_[i * window_];
    r.assign(v, v + filled_[i]);
    summaries_[i] = SummarizeInPlace(r);
  }
}

void LinkNoiseTable::Add(Key link, float gbps) { pending_.push_back({link, gbps}); }

template <typename Emit>
void LinkNoiseTable::Merge(Emit emit) {
  // Stable: two readings of one link keep their order (the later is newer).
  // Cells arrive in link order as a rule: then there is nothing to sort.
  const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(pending_.begin(), pending_.end(), by_key)) {
    std::stable_sort(pending_.begin(), pending_.end(), by_key);
  }
  std::vector<float> w;  // reused: one link's window
  w.reserve(window_ + 1);
  size_t i = 0, p = 0;
  while (i < keys_.size() || p < pending_.size()) {
    const bool take_old = p == pending_.size() || (i < keys_.size() && keys_[i] < pending_[p].first);
    const Key k = take_old ? keys_[i] : pending_[p].first;
    w.clear();
    if (i < keys_.size() && keys_[i] == k) {
      w.assign(&values_[i * window_], &values_[i * window_] + filled_[i]);
      ++i;
    }
    for (; p < pending_.size() && pending_[p].first == k; ++p) {
      w.push_back(pending_[p].second);
      if (w.size() > window_) w.erase(w.begin());
    }
    emit(k, w.data(), static_cast<uint8_t>(w.size()));
  }
}

void LinkNoiseTable::Settle() {
  if (pending_.empty()) return;
  std::vector<Key> keys;
  std::vector<uint8_t> filled;
  std::vector<float> values;
  keys.reserve(keys_.size() + pending_.size());
  filled.reserve(keys_.size() + pending_.size());
  values.reserve((keys_.size() + pending_.size()) * window_);
  Merge([&](Key k, const float* v, uint8_t n) {
    keys.push_back(k);
    filled.push_back(n);
    const size_t at = values.size();
    values.resize(at + window_, 0.0f);
    std::copy(v, v + n, values.begin() + at);
  });
  keys_ = std::move(keys);
  filled_ = std::move(filled);
  values_ = std::move(values);
  pending_.clear();
  Summarize();
}

std::string LinkNoiseTable::EncodeWithPending() {
  if (pending_.empty()) return Encode();
  std::string out;
  out.reserve(16 + (keys_.size() + pending_.size()) * 17 +
              (keys_.size() * window_ + pending_.size()) * sizeof(float));
  PutHeader(&out, window_, 0);
  uint64_t links = 0;
  Merge([&](Key k, const float* v, uint8_t n) {
    PutLink(&out, k, v, n);
    ++links;
  });
  std::memcpy(out.data() + 8, &links, sizeof links);  // the header's count, after magic and window
  return out;
}

}  // namespace gdrbench::server::history
