# Every dependency is a Debian 12 package (see deploy/install-deps); nothing is
# downloaded at build time.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(absl REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  set_target_properties(CLI11::CLI11 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${CLI11_INCLUDE_DIR})
endif()
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(RDMACM REQUIRED IMPORTED_TARGET librdmacm)

# CUDA: only cuda.h at build time; libcuda is dlopen'ed at run time, so the
# project builds and runs on machines without the toolkit or a GPU.
find_path(CUDA_DRIVER_INCLUDE_DIR cuda.h
  HINTS ${CUDAToolkit_ROOT}/include $ENV{CUDA_HOME}/include /usr/local/cuda/include)
if(CUDA_DRIVER_INCLUDE_DIR)
  message(STATUS "gdrbench: cuda.h found in ${CUDA_DRIVER_INCLUDE_DIR}: GPU buffers enabled")
  set(GDRBENCH_HAVE_CUDA_H ON)
else()
  message(STATUS "gdrbench: cuda.h not found: GPU support compiled out")
  set(GDRBENCH_HAVE_CUDA_H OFF)
endif()

if(GDRBENCH_WITH_SERVICES)
  find_package(Protobuf REQUIRED)
  find_package(gRPC CONFIG REQUIRED)
  find_package(yaml-cpp REQUIRED)
  find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
  # gdrbench-server: the store's two backends and the HTTP/JSON server.
  pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
  pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
  pkg_check_modules(CPPHTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
  # POST /api/v1/runs streamed into the ingest (server/api/run_json_stream.h): a push JSON parser
  pkg_check_modules(YAJL REQUIRED IMPORTED_TARGET yajl)
endif()

if(GDRBENCH_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
