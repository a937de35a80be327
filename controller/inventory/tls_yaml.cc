// The inventory's tls: section: how the controller reaches its agents. Each
// file's place in the inventory is kept with it, so that a file that cannot
// be read is reported at the inventory line that named it, not as a flag the
// operator never gave.
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/inventory/yaml_fields.h"

namespace gdrbench::controller::inventory {

absl::StatusOr<rpc::ClientTlsConfig> GetTls(const Ctx& ctx, const YAML::Node& t) {
  GDR_RETURN_IF_ERROR(CheckKeys(ctx, t, "tls", {"ca", "cert", "key", "server_name", "insecure"}));
  rpc::ClientTlsConfig tls;
  struct File {
    const char* key;
    std::string* path;
    std::string* from;
  };
  for (const File& f : {File{"ca", &tls.ca_file, &tls.ca_from}, File{"cert", &tls.cert_file, &tls.cert_from},
                        File{"key", &tls.key_file, &tls.key_from}}) {
    if (!t[f.key]) continue;
    const std::string field = absl::StrCat("tls.", f.key);
    GDR_ASSIGN_OR_RETURN(*f.path, GetString(ctx, t[f.key], field));
    *f.from = absl::StrCat(ctx.Where(t[f.key]), ": ", field);
  }
  if (t["server_name"]) {
    GDR_ASSIGN_OR_RETURN(tls.server_name, GetString(ctx, t["server_name"], "tls.server_name"));
  }
  if (t["insecure"]) {
    GDR_ASSIGN_OR_RETURN(tls.insecure, GetBool(ctx, t["insecure"], "tls.insecure"));
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return ctx.Error(t, "tls", "cert and key must be given together");
  }
  if (tls.insecure && !(tls.ca_file.empty() && tls.cert_file.empty())) {
    return ctx.Error(t["insecure"], "tls.insecure", "plaintext contradicts tls.ca / tls.cert / tls.key: drop one");
  }
  return tls;
}

}  // namespace gdrbench::controller::inventory
