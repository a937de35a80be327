// The HTTP side's conversions: protobuf's JSON mapping (json_util) for
// bodies and responses, query parameters and path segments into request
// messages (by field name, snake_case or lowerCamelCase, typed by the
// field), and absl status codes to HTTP statuses with a JSON error body in
// the shape Google's APIs use: {"error": {"code", "status", "message"}}.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace gdrbench::server::api {

// INVALID_ARGUMENT naming the parameter for an unknown name or a value that
// does not parse as the field's type.
absl::Status FieldsToMessage(const std::multimap<std::string, std::string>& fields,
                             google::protobuf::Message* msg);
// Arrays and objects nested deeper than this are refused before parsing.
inline constexpr int kMaxJsonDepth = 32;
// INVALID_ARGUMENT with the parser's reason.
absl::Status JsonToMessage(const std::string& json, google::protobuf::Message* msg);
std::string MessageToJson(const google::protobuf::Message& msg);
// As MessageToJson, but a list response's empty top-level lists are printed
// as [] ({"runs": []}, not the {} proto3 JSON prints for a message whose
// fields all have their default values), so a client can read `runs` always.
std::string ListToJson(const google::protobuf::Message& msg);

int HttpStatus(absl::StatusCode code);
std::string ErrorJson(const absl::Status& status);
// The same body with an HTTP status the code does not map to (408, 413, 431).
std::string ErrorJson(const absl::Status& status, int http_status);

}  // namespace gdrbench::server::api
