#include "controller/analysis/matrix.h"

#include <algorithm>
#include <cstdint>

namespace gdrbench::controller::analysis {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kNone: return "";
    case Verdict::kPass: return "pass";
    case Verdict::kLow: return "low";
    case Verdict::kFail: return "fail";
  }
  return "";
}

MatrixSet::MatrixSet(std::vector<std::string> nodes, bool bidirectional)
    : bidirectional_(bidirectional), nodes_(std::move(nodes)) {
  for (uint32_t i = 0; i < nodes_.size(); ++i) index_.emplace(nodes_[i], i);
}

int MatrixSet::NodeIndex(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : static_cast<int>(it->second);
}

Matrix& MatrixSet::Get(uint32_t rail, uint32_t dst_rail, uint64_t size) {
  auto [it, inserted] = m_.try_emplace(Key{rail, dst_rail, size});
  if (inserted) {
    it->second.rail = rail;
    if (dst_rail != rail) it->second.dst_rail = dst_rail;
    it->second.size_bytes = size;
    it->second.n = static_cast<uint32_t>(nodes_.size());
    it->second.cells.resize(nodes_.size() * nodes_.size());
  }
  return it->second;
}

void MatrixSet::Add(const v1::PairResult& r) {
  auto s = index_.find(r.src().node());
  auto d = index_.find(r.dst().node());
  if (s == index_.end() || d == index_.end()) {
    ++unknown_;
    return;
  }
  Add(r, s->second, d->second);
}

void Measured(const v1::PairResult& r, MeasuredTest* out) {
  out->rail = r.rail();
  out->dst_rail = DstRail(r);
  out->status = r.status();
  out->reason = r.reason();
  out->expected_gbps = r.expected_gbps();
  auto rates = [](const auto& from, std::vector<MeasuredTest::Rate>* to) {
    to->clear();
    for (const auto& sz : from) to->push_back({sz.size_bytes(), sz.bw_avg_gbps()});
  };
  rates(r.sizes(), &out->sizes);
  rates(r.reverse_sizes(), &out->reverse_sizes);
}

void MatrixSet::Add(const v1::PairResult& r, uint32_t src, uint32_t dst) {
  Measured(r, &scratch_);
  Add(scratch_, src, dst);
}

void MatrixSet::Add(const MeasuredTest& r, uint32_t src, uint32_t dst) {
  if (src >= nodes_.size() || dst >= nodes_.size()) {
    ++unknown_;
    return;
  }
  const float expected = static_cast<float>(r.expected_gbps);
  const uint32_t dst_rail = r.dst_rail;
  auto put = [&](Matrix& m, uint32_t a, uint32_t b, float gbps, v1::ResultStatus st,
                 std::string_view reason) {
    Cell& c = m.at(a, b);
    c.gbps = gbps;
    c.expected_gbps = expected;
    c.status = st;
    if (st != v1::RESULT_STATUS_OK) {
      m.reasons[a * m.n + b] = reason;
    } else if (!m.reasons.empty()) {
      m.reasons.erase(a * m.n + b);  // a retest replaced a failed or low cell
    }
    // A failed bidirectional test fails both directions.
    if (bidirectional_ && st != v1::RESULT_STATUS_OK) {
      m.at(b, a) = c;
      m.reasons[b * m.n + a] = reason;
    }
  };
  if (r.status == v1::RESULT_STATUS_OK && !r.sizes.empty()) {
    for (const auto& sz : r.sizes) {
      Matrix& m = Get(r.rail, dst_rail, sz.size_bytes);
      put(m, src, dst, static_cast<float>(sz.bw_avg_gbps), v1::RESULT_STATUS_OK, "");
    }
    // The target's direction of a bidirectional test.
    for (const auto& sz : r.reverse_sizes) {
      Matrix& m = Get(r.rail, dst_rail, sz.size_bytes);
      Cell& c = m.at(dst, src);
      c.gbps = static_cast<float>(sz.bw_avg_gbps);
      c.expected_gbps = expected;
      c.status = v1::RESULT_STATUS_OK;
      if (!m.reasons.empty()) m.reasons.erase(dst * m.n + src);
    }
    return;
  }
  // A failed test has no (trustworthy) sizes: mark the cell in every matrix
  // of its lane; a matrix created later picks it up through the sizes known.
  std::vector<uint64_t> sizes;
  for (const auto& [key, m] : m_) {
    if (key.rail == r.rail && key.dst_rail == dst_rail) sizes.push_back(key.size);
  }
  for (const auto& sz : r.sizes) sizes.push_back(sz.size_bytes);
  if (sizes.empty()) sizes.push_back(0);  // placeholder size until real ones appear
  const std::string_view reason = r.reason.empty() ? std::string_view("failed") : r.reason;
  v1::ResultStatus st = r.status == v1::RESULT_STATUS_OK ? v1::RESULT_STATUS_FAILED : r.status;
  for (uint64_t size : sizes) put(Get(r.rail, dst_rail, size), src, dst, 0, st, reason);
  pending_failures_hint_ = true;
}

std::vector<Matrix*> MatrixSet::matrices() {
  MergePlaceholders();
  std::vector<Matrix*> out;
  for (auto& [k, m] : m_) out.push_back(&m);
  return out;
}

std::vector<const Matrix*> MatrixSet::matrices() const {
  std::vector<const Matrix*> out;
  for (const auto& [k, m] : m_) out.push_back(&m);
  return out;
}

std::vector<Matrix*> MatrixSet::VerdictMatrices() {
  MergePlaceholders();
  std::map<std::pair<uint32_t, uint32_t>, Matrix*> best;
  for (auto& [k, m] : m_) best[{k.rail, k.dst_rail}] = &m;  // ordered by size: the last wins
  std::vector<Matrix*> out;
  for (auto& [lane, m] : best) out.push_back(m);
  return out;
}

std::vector<const Matrix*> MatrixSet::VerdictMatrices() const {
  std::map<std::pair<uint32_t, uint32_t>, const Matrix*> best;
  for (const auto& [k, m] : m_) best[{k.rail, k.dst_rail}] = &m;
  std::vector<const Matrix*> out;
  for (auto& [lane, m] : best) out.push_back(m);
  return out;
}

// Failures recorded before any size of their rail was known sit in a
// size-0 placeholder; copy them into the real matrices of the lane and drop
// the placeholder (unless the lane never had a successful test).
void MatrixSet::MergePlaceholders() {
  if (!pending_failures_hint_) return;
  pending_failures_hint_ = false;
  for (auto it = m_.begin(); it != m_.end();) {
    if (it->first.size != 0) {
      ++it;
      continue;
    }
    const Key lane = it->first;
    bool has_real = false;
    for (auto& [k, m] : m_) {
      if (k.rail != lane.rail || k.dst_rail != lane.dst_rail || k.size == 0) continue;
      has_real = true;
      for (size_t i = 0; i < m.cells.size(); ++i) {
        const Cell& p = it->second.cells[i];
        if (p.present() && !m.cells[i].present()) {
          m.cells[i] = p;
          m.reasons[static_cast<uint32_t>(i)] = it->second.reasons[static_cast<uint32_t>(i)];
        }
      }
    }
    it = has_real ? m_.erase(it) : std::next(it);
  }
}

v1::AxisStats Stats(const std::vector<float>& values, uint32_t bad, uint32_t low) {
  v1::AxisStats s;
  s.set_ok_cells(static_cast<uint32_t>(values.size()));
  s.set_bad_cells(bad);
  s.set_low_cells(low);
  if (values.empty()) return s;
  std::vector<float> v = values;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (float x : v) sum += x;
  s.set_min_gbps(v.front());
  s.set_max_gbps(v.back());
  s.set_mean_gbps(sum / v.size());
  s.set_median_gbps(v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2.0);
  return s;
}

void FillStats(const Matrix& m, const std::vector<std::string>& nodes, v1::BandwidthMatrix* out) {
  std::vector<float> all, row, col;
  uint32_t all_bad = 0, all_low = 0;
  for (uint32_t i = 0; i < m.n; ++i) {
    row.clear();
    col.clear();
    uint32_t rb = 0, rl = 0, cb = 0, cl = 0;
    for (uint32_t j = 0; j < m.n; ++j) {
      const Cell& a = m.at(i, j);
      if (a.present()) {
        if (a.status == v1::RESULT_STATUS_OK) row.push_back(a.gbps); else ++rb;
        rl += a.verdict == Verdict::kLow;
      }
      const Cell& b = m.at(j, i);
      if (b.present()) {
        if (b.status == v1::RESULT_STATUS_OK) col.push_back(b.gbps); else ++cb;
        cl += b.verdict == Verdict::kLow;
      }
    }
    all.insert(all.end(), row.begin(), row.end());
    all_bad += rb;
    all_low += rl;
    auto r = Stats(row, rb, rl);
    r.set_node(nodes[i]);
    *out->add_rows() = r;
    auto c = Stats(col, cb, cl);
    c.set_node(nodes[i]);
    *out->add_cols() = c;
  }
  *out->mutable_fleet() = Stats(all, all_bad, all_low);
}

bool AppendCells(const Matrix& m, size_t* cursor, size_t max_cells,
                 google::protobuf::RepeatedPtrField<v1::MatrixCell>* out) {
  const size_t total = size_t{m.n} * m.n;
  size_t added = 0;
  size_t k = *cursor;
  for (; k < total && added < max_cells; ++k) {
    const Cell& c = m.cells[k];
    if (!c.present()) continue;
    const uint32_t i = static_cast<uint32_t>(k / m.n), j = static_cast<uint32_t>(k % m.n);
    auto* pc = out->Add();
    pc->set_src(i);
    pc->set_dst(j);
    pc->set_status(c.status);
    pc->set_bw_avg_gbps(c.gbps);
    pc->set_verdict(VerdictName(c.verdict));
    pc->set_expected_gbps(c.expected_gbps);
    pc->set_baseline_gbps(c.baseline_gbps);
    if (m.retested.count(i * m.n + j)) pc->set_retested(true);
    auto it = m.reasons.find(i * m.n + j);
    if (it != m.reasons.end()) pc->set_reason(it->second);
    ++added;
  }
  // Past the last present cell: done, so no empty chunk follows a full one.
  while (k < total && !m.cells[k].present()) ++k;
  *cursor = k;
  return k < total;
}

size_t PresentCells(const Matrix& m) {
  size_t n = 0;
  for (const Cell& c : m.cells) n += c.present();
  return n;
}

v1::BandwidthMatrix ToProto(const Matrix& m, const std::vector<std::string>& nodes, bool with_cells) {
  v1::BandwidthMatrix out;
  out.set_rail(m.rail);
  if (m.cross_rail()) out.set_dst_rail(m.target_rail());
  out.set_size_bytes(m.size_bytes);
  for (const auto& n : nodes) out.add_nodes(n);
  if (with_cells) {
    size_t cursor = 0;
    AppendCells(m, &cursor, SIZE_MAX, out.mutable_cells());
  }
  FillStats(m, nodes, &out);
  return out;
}

}  // namespace gdrbench::controller::analysis
