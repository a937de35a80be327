#include "report/run_chunks.h"

#include <algorithm>
#include <vector>

namespace gdrbench::report {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Copies one field of `from` into `to` (same message type).
void CopyField(const Message& from, const FieldDescriptor* f, Message* to) {
  const Reflection* r = from.GetReflection();
  if (f->is_repeated()) {
    for (int k = 0; k < r->FieldSize(from, f); ++k) {
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32: r->AddInt32(to, f, r->GetRepeatedInt32(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_INT64: r->AddInt64(to, f, r->GetRepeatedInt64(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_UINT32: r->AddUInt32(to, f, r->GetRepeatedUInt32(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_UINT64: r->AddUInt64(to, f, r->GetRepeatedUInt64(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_DOUBLE: r->AddDouble(to, f, r->GetRepeatedDouble(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_FLOAT: r->AddFloat(to, f, r->GetRepeatedFloat(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_BOOL: r->AddBool(to, f, r->GetRepeatedBool(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_ENUM: r->AddEnumValue(to, f, r->GetRepeatedEnumValue(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_STRING: r->AddString(to, f, r->GetRepeatedString(from, f, k)); break;
        case FieldDescriptor::CPPTYPE_MESSAGE: r->AddMessage(to, f)->CopyFrom(r->GetRepeatedMessage(from, f, k)); break;
      }
    }
    return;
  }
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: r->SetInt32(to, f, r->GetInt32(from, f)); break;
    case FieldDescriptor::CPPTYPE_INT64: r->SetInt64(to, f, r->GetInt64(from, f)); break;
    case FieldDescriptor::CPPTYPE_UINT32: r->SetUInt32(to, f, r->GetUInt32(from, f)); break;
    case FieldDescriptor::CPPTYPE_UINT64: r->SetUInt64(to, f, r->GetUInt64(from, f)); break;
    case FieldDescriptor::CPPTYPE_DOUBLE: r->SetDouble(to, f, r->GetDouble(from, f)); break;
    case FieldDescriptor::CPPTYPE_FLOAT: r->SetFloat(to, f, r->GetFloat(from, f)); break;
    case FieldDescriptor::CPPTYPE_BOOL: r->SetBool(to, f, r->GetBool(from, f)); break;
    case FieldDescriptor::CPPTYPE_ENUM: r->SetEnumValue(to, f, r->GetEnumValue(from, f)); break;
    case FieldDescriptor::CPPTYPE_STRING: r->SetString(to, f, r->GetString(from, f)); break;
    case FieldDescriptor::CPPTYPE_MESSAGE: r->MutableMessage(to, f)->CopyFrom(r->GetMessage(from, f)); break;
  }
}

}  // namespace

v1::Run RunHeader(const v1::Run& run) {
  // Field by field around the bulky ones (CopyFrom then Clear would copy
  // gigabytes first); by reflection, so a field added to Run later is kept.
  v1::Run h;
  std::vector<const FieldDescriptor*> fields;
  run.GetReflection()->ListFields(run, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->number() == v1::Run::kPairsFieldNumber || f->number() == v1::Run::kMatricesFieldNumber) {
      continue;
    }
    CopyField(run, f, &h);
  }
  for (const auto& m : run.matrices()) {
    v1::BandwidthMatrix* hm = h.add_matrices();
    std::vector<const FieldDescriptor*> mf;
    m.GetReflection()->ListFields(m, &mf);
    for (const FieldDescriptor* f : mf) {
      if (f->number() != v1::BandwidthMatrix::kCellsFieldNumber) CopyField(m, f, hm);
    }
  }
  return h;
}

absl::Status ForEachRunChunk(const v1::Run& run, const ChunkSizes& sizes,
                             const std::function<absl::Status(const v1::RunChunk&)>& fn) {
  v1::RunChunk chunk;
  *chunk.mutable_header() = RunHeader(run);
  if (absl::Status st = fn(chunk); !st.ok()) return st;
  for (const auto& m : run.matrices()) {
    for (int i = 0; i < m.cells_size(); i += static_cast<int>(sizes.cells)) {
      chunk.Clear();
      v1::MatrixCells* c = chunk.mutable_cells();
      c->set_rail(m.rail());
      c->set_size_bytes(m.size_bytes());
      if (m.has_dst_rail()) c->set_dst_rail(m.dst_rail());
      const int end = std::min(m.cells_size(), i + static_cast<int>(sizes.cells));
      c->mutable_cells()->Reserve(end - i);
      for (int k = i; k < end; ++k) *c->add_cells() = m.cells(k);
      if (absl::Status st = fn(chunk); !st.ok()) return st;
    }
  }
  for (int i = 0; i < run.pairs_size(); i += static_cast<int>(sizes.pairs)) {
    chunk.Clear();
    v1::PairChunk* p = chunk.mutable_pairs();
    const int end = std::min(run.pairs_size(), i + static_cast<int>(sizes.pairs));
    for (int k = i; k < end; ++k) *p->add_pairs() = run.pairs(k);
    if (absl::Status st = fn(chunk); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::report
