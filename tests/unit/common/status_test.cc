#include "common/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace gdrbench {
namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  GDR_ASSIGN_OR_RETURN(int h, Half(x));
  GDR_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

absl::Status CheckEven(int x) {
  GDR_RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

TEST(StatusMacros, PropagateTheFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_FALSE(CheckEven(3).ok());
}

TEST(ErrnoToStatus, MapsCodesAndNamesTheCall) {
  auto st = ErrnoToStatus(EOPNOTSUPP, "ibv_reg_dmabuf_mr(rxe0, 4096 B)");
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("ibv_reg_dmabuf_mr(rxe0, 4096 B)"), absl::string_view::npos);
  EXPECT_NE(st.message().find("errno 95"), absl::string_view::npos);
  EXPECT_EQ(ErrnoToStatus(ENOMEM, "x").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoToStatus(ENOENT, "x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoToStatus(EPERM, "x").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoToStatus(ETIMEDOUT, "x").code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(ErrnoToStatus(0, "x").code(), absl::StatusCode::kUnknown);
}

}  // namespace
}  // namespace gdrbench
