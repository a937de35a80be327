/* The peer of gdrbench-server's HTTP front in bench/http_front.sh (issue 31:
 * "cpp-httplib made to do this, or an event-driven library such as
 * libmicrohttpd: measure both"). A minimal libmicrohttpd 0.9.75 server (Debian
 * 12's) set up as that rules ask, as far as its options go:
 *   - epoll in one internal thread (no thread per connection);
 *   - at most 512 connections, 64 per client address (the server's limits);
 *   - MHD_OPTION_CONNECTION_TIMEOUT 10 s: libmicrohttpd's only deadline, reset
 *     by any byte received (an inactivity timeout);
 *   - the request line and headers within the connection's memory pool
 *     (MHD_OPTION_CONNECTION_MEMORY_LIMIT 64 KiB: larger is refused);
 *   - GET /healthz: 200 "ok"; POST /api/v1/runs: the bearer token and a
 *     Content-Length over 256 MiB checked in the first call, before any body
 *     byte is read (401 or 413 at once); with it, the body is read and
 *     discarded (it does no parsing: its 201 costs nothing).
 * Not part of gdrbench: built and run by bench/http_front.sh only.
 *   mhd_probe PORT TOKEN      (prints "listening PORT", runs until SIGTERM)
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* token;
static volatile sig_atomic_t stop;

static void on_term(int sig) {
  (void)sig;
  stop = 1;
}

static enum MHD_Result reply(struct MHD_Connection* c, unsigned code, const char* text) {
  struct MHD_Response* r = MHD_create_response_from_buffer(strlen(text), (void*)text, MHD_RESPMEM_PERSISTENT);
  enum MHD_Result ret = MHD_queue_response(c, code, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result handle(void* cls, struct MHD_Connection* c, const char* url, const char* method,
                              const char* version, const char* upload_data, size_t* upload_data_size,
                              void** state) {
  (void)cls;
  (void)version;
  (void)upload_data;
  static int first_call_marker;
  if (strcmp(method, "GET") == 0 && strcmp(url, "/healthz") == 0) return reply(c, 200, "ok\n");
  if (strcmp(method, "POST") != 0 || strcmp(url, "/api/v1/runs") != 0) return reply(c, 404, "not found\n");
  if (*state == NULL) {  /* the first call: headers only, no body byte read yet */
    const char* auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    char want[512];
    snprintf(want, sizeof want, "Bearer %s", token);
    if (auth == NULL || strcmp(auth, want) != 0) return reply(c, 401, "no token\n");
    /* The server's upload limit (256 MiB), refused before the body as its gate does. */
    const char* length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (length != NULL && strtoull(length, NULL, 10) > (256ull << 20)) return reply(c, 413, "too large\n");
    *state = &first_call_marker;
    return MHD_YES;
  }
  if (*upload_data_size != 0) {
    *upload_data_size = 0; /* consumed (discarded) */
    return MHD_YES;
  }
  return reply(c, 201, "stored\n");
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: mhd_probe PORT TOKEN\n");
    return 2;
  }
  token = argv[2];
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  struct MHD_Daemon* d = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, (uint16_t)atoi(argv[1]), NULL, NULL, handle, NULL,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)512, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)64,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10),
      MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)4096, MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "mhd_probe: cannot start on port %s\n", argv[1]);
    return 1;
  }
  printf("listening %s\n", argv[1]);
  fflush(stdout);
  while (!stop) pause();
  MHD_stop_daemon(d);
  return 0;
}
