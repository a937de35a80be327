#include "server/api/http_json.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::server::api {
namespace {

using google::protobuf::FieldDescriptor;

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          absl::StrAppend(&out, "\\u00", c < 0x10 ? "0" : "", absl::Hex(c));
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

}  // namespace

absl::Status FieldsToMessage(const std::multimap<std::string, std::string>& fields,
                             google::protobuf::Message* msg) {
  const auto* d = msg->GetDescriptor();
  std::vector<std::string> parts;
  std::vector<std::string> known;
  for (int i = 0; i < d->field_count(); ++i) known.push_back(d->field(i)->name());
  std::set<std::string> seen;
  for (const auto& [name, value] : fields) {
    const FieldDescriptor* f = d->FindFieldByName(name);
    if (f == nullptr) f = d->FindFieldByCamelcaseName(name);
    if (f == nullptr || f->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter '", name.substr(0, 40),
                                                     "' (expected: ", absl::StrJoin(known, ", "), ")"));
    }
    if (!seen.insert(f->name()).second) {
      return absl::InvalidArgumentError(absl::StrCat("parameter '", name, "' given twice"));
    }
    std::string v;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(absl::StrCat("parameter '", name, "': '", value.substr(0, 40),
                                                       "' is not true or false"));
      }
      v = value;
    } else {
      v = JsonString(value);  // numbers, enums and timestamps are accepted as strings
    }
    parts.push_back(absl::StrCat(JsonString(f->json_name()), ":", v));
  }
  std::string json = absl::StrCat("{", absl::StrJoin(parts, ","), "}");
  google::protobuf::util::JsonParseOptions o;
  auto st = google::protobuf::util::JsonStringToMessage(json, msg, o);
  if (!st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("parameters do not fit ", d->name(), ": ", std::string(st.message())));
  }
  return absl::OkStatus();
}

namespace {

// The deepest nesting of arrays and objects in `json` (strings skipped).
// No message of the API nests deeper than a few levels; protobuf's parser
// accepted arrays nested 100,000 deep inside a repeated string field.
int JsonDepth(const std::string& json) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::Status JsonToMessage(const std::string& json, google::protobuf::Message* msg) {
  if (const int depth = JsonDepth(json); depth > kMaxJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat("the body is not a JSON ", msg->GetDescriptor()->full_name(),
                                                   ": arrays and objects nest ", depth, " deep, more than ",
                                                   kMaxJsonDepth));
  }
  auto st = google::protobuf::util::JsonStringToMessage(json, msg);
  if (!st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the body is not a JSON ", msg->GetDescriptor()->full_name(), ": ", std::string(st.message())));
  }
  return absl::OkStatus();
}

std::string MessageToJson(const google::protobuf::Message& msg) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  (void)google::protobuf::util::MessageToJsonString(msg, &out, o);
  return out;
}

std::string ListToJson(const google::protobuf::Message& msg) {
  std::string out = MessageToJson(msg);
  if (out.size() < 2 || out.back() != '}') return out;
  const google::protobuf::Descriptor* d = msg.GetDescriptor();
  const google::protobuf::Reflection* refl = msg.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (!f->is_repeated() || f->is_map() || refl->FieldSize(msg, f) != 0) continue;
    const bool empty_object = out == "{}";
    out.insert(out.size() - 1, absl::StrCat(empty_object ? "" : ",", "\"", f->json_name(), "\":[]"));
  }
  return out;
}

int HttpStatus(absl::StatusCode code) {
  // https://github.com/googleapis/googleapis/blob/master/google/rpc/code.proto
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kFailedPrecondition: return 400;
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists: return 409;
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kCancelled: return 499;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

std::string ErrorJson(const absl::Status& st) { return ErrorJson(st, HttpStatus(st.code())); }

std::string ErrorJson(const absl::Status& st, int http_status) {
  return absl::StrCat("{\"error\":{\"code\":", http_status, ",\"status\":",
                      JsonString(absl::StatusCodeToString(st.code())), ",\"message\":",
                      JsonString(std::string(st.message())), "}}");
}

}  // namespace gdrbench::server::api
